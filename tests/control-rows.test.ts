/**
 * The owner's controls and cron schedules on the real kernel and a real SQLite file, with the clock in the test's
 * hands (protocol.md 来源: 定时; 本人: 暂停、恢复、立即运行): how a schedule follows edits of rules.json, what a
 * cron time and a manual run record, and how pauses with and without `until` end.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Clock, K } from "./clock.js";
import { baseRules } from "./helpers.js";

const cronRules = (expr: string, extra: Record<string, unknown> = {}) => ({
  ...baseRules, ...extra,
  rules: [...baseRules.rules, { name: "daily", when: { cron: expr }, to: "bot" }],
});

const cron = (k: Clock, name = "daily") => k.store.view.get("crons", name);
const dues = (k: Clock, kind: string) => k.store.view.where("due", "1 ORDER BY key").map(({ row }) => row)
  .filter((d) => d.kind === kind).map((d) => [d.ref, new Date(d.at).toISOString()]);
const events = (k: Clock) => k.store.view.where("events", "1 ORDER BY key").map(({ row }) => row);

test("a cron schedule follows rules.json: kept when unchanged, recomputed for a new expression or zone, gone with the cron", () => {
  const k = new Clock(cronRules("0 9 * * *"), "2026-11-02T08:00:00Z");
  assert.deepEqual(dues(k, "cron"), [["daily", "2026-11-02T09:00:00.000Z"]]);
  k.advance("2026-11-02T09:30:00Z");
  assert.deepEqual(cron(k), { rule: "daily", expr: "0 9 * * *", tz: "UTC", next: Date.parse("2026-11-03T09:00:00Z"), skippedAt: null, lastAt: Date.parse("2026-11-02T09:00:00Z") });
  // an edit elsewhere in rules.json: the schedule row is not written again
  const before = k.store.seq;
  k.loadRules(cronRules("0 9 * * *", { askFirst: ["drop tables"] }));
  assert.equal(k.store.seq, before + 1);
  const fact = k.store.factsAfter(before, 1)[0]!;
  assert.deepEqual(fact.changes.filter(([table]) => table === "crons" || table === "due"), []);
  // a new expression: the next time is computed again from now; the last run is kept
  k.loadRules(cronRules("0 10 * * *"));
  assert.deepEqual(cron(k), { rule: "daily", expr: "0 10 * * *", tz: "UTC", next: Date.parse("2026-11-02T10:00:00Z"), skippedAt: null, lastAt: Date.parse("2026-11-02T09:00:00Z") });
  assert.deepEqual(dues(k, "cron"), [["daily", "2026-11-02T10:00:00.000Z"]]);
  // a new time zone: 10:00 in Shanghai is 02:00 UTC
  k.loadRules(cronRules("0 10 * * *", { timezone: "Asia/Shanghai" }));
  assert.deepEqual([cron(k)!.tz, cron(k)!.next], ["Asia/Shanghai", Date.parse("2026-11-03T02:00:00Z")]);
  assert.deepEqual(dues(k, "cron"), [["daily", "2026-11-03T02:00:00.000Z"]]);
  // no longer a cron rule: its row and its deadline go
  k.loadRules({ ...baseRules, rules: [...baseRules.rules, { name: "daily", when: { source: "shop", types: ["x.*"] }, to: "bot" }] });
  assert.equal(cron(k), undefined);
  assert.deepEqual(dues(k, "cron"), []);
  k.advance("2026-11-04T12:00:00Z");
  assert.deepEqual(events(k).map((e) => e.sid), ["cron:2026-11-02T09:00:00.000Z"]);
  k.close();
});

test("a cron rule removed from rules.json loses its schedule; other cron rules keep theirs", () => {
  const k = new Clock({ ...cronRules("0 9 * * *"), rules: [...cronRules("0 9 * * *").rules, { name: "hourly", when: { cron: "0 * * * *" }, to: "bot" }] }, "2026-11-02T08:30:00Z");
  assert.deepEqual(dues(k, "cron"), [["daily", "2026-11-02T09:00:00.000Z"], ["hourly", "2026-11-02T09:00:00.000Z"]]);
  k.loadRules({ ...baseRules, rules: [...baseRules.rules, { name: "hourly", when: { cron: "0 * * * *" }, to: "bot" }] });
  assert.deepEqual(dues(k, "cron"), [["hourly", "2026-11-02T09:00:00.000Z"]]);
  assert.equal(cron(k, "daily"), undefined);
  assert.equal(cron(k, "hourly")!.next, Date.parse("2026-11-02T09:00:00Z"));
  k.close();
});

test("a skipped time is kept across an edit of the expression, and a resume schedules from now", () => {
  const k = new Clock(cronRules("0 * * * *"), "2026-11-02T08:30:00Z");
  k.commit({ kind: "pause", keyHash: K.owner, rule: "daily", reason: null, until: null });
  k.advance("2026-11-02T10:30:00Z");
  assert.deepEqual([cron(k)!.skippedAt, cron(k)!.skippedCount], [Date.parse("2026-11-02T10:00:00Z"), 2]);
  k.loadRules(cronRules("30 * * * *"));
  assert.deepEqual([cron(k)!.skippedAt, cron(k)!.skippedCount, cron(k)!.next, cron(k)!.lastAt], [Date.parse("2026-11-02T10:00:00Z"), 2, Date.parse("2026-11-02T11:30:00Z"), null]);
  k.now = Date.parse("2026-11-02T10:45:00Z");
  k.commit({ kind: "resume", keyHash: K.owner, rule: "daily" });
  assert.deepEqual(dues(k, "cron"), [["daily", "2026-11-02T11:30:00.000Z"]]);
  k.advance("2026-11-02T11:30:00Z");
  const [ev] = events(k);
  assert.deepEqual([ev!.source, ev!.sid, ev!.type, ev!.subject, ev!.summary, ev!.detail, ev!.hops, ev!.routed, ev!.internal], [
    "schedule", "cron:2026-11-02T11:30:00.000Z", "schedule.cron", null, "daily", null, 0, ["daily"], "cron",
  ]);
  const job = k.claim("c1").job!;
  assert.deepEqual([k.run(job.run).rule, k.run(job.run).lane, k.run(job.run).manual, k.run(job.run).events], ["daily", "", false, [ev!.id]]);
  k.close();
});

test("a manual run of a per-subject rule goes to the subject's lane and records who asked", () => {
  const k = new Clock(baseRules, "2026-11-02T08:00:00Z");
  const r = k.commit({ kind: "runNow", keyHash: K.owner, rule: "per-subject", subject: "#9", reason: null });
  assert.deepEqual(r.body, { event: 1, run: 1 });
  const [ev] = events(k);
  assert.deepEqual([ev!.source, ev!.sid, ev!.type, ev!.subject, ev!.summary, ev!.detail, ev!.routed, ev!.internal], [
    "crm", "manual:2026-11-02T08:00:00.000Z", "run.manual", "#9", "owner 手动运行", null, ["per-subject"], "manual",
  ]);
  assert.deepEqual([k.run(1).lane, k.run(1).manual, k.run(1).state], ["#9", true, "queued"]);
  const again = k.commit({ kind: "runNow", keyHash: K.owner, rule: "per-subject", subject: "#10", reason: null });
  assert.deepEqual(again.body, { event: 2, run: 2 });
  assert.equal(events(k)[1]!.sid, "manual:2026-11-02T08:00:00.000Z#2", "the same second gets a free id");
  k.close();
});

test("pause until: must be later than now; a pause without until ends the earlier until; a later until moves it", () => {
  const k = new Clock(baseRules, "2026-11-02T08:00:00Z");
  const pause = (until: string | null, reason: string | null = null) => k.commit({ kind: "pause", keyHash: K.owner, rule: "alerts", reason, until });
  assert.equal(pause("2026-11-02T08:00:00Z").status, 400, "until now is not later than now");
  assert.deepEqual(pause("2026-11-02T08:00:00.001Z").body, {
    changed: true, rule: "alerts", paused: { by: "owner", reason: null, since: "2026-11-02T08:00:00.000Z", until: "2026-11-02T08:00:00.001Z" },
  });
  pause("2026-11-02T09:00:00Z");
  assert.deepEqual(dues(k, "pause"), [["alerts", "2026-11-02T09:00:00.000Z"]]);
  const open = pause(null, "until I say so");
  assert.deepEqual((open.body as any).paused, { by: "owner", reason: "until I say so", since: "2026-11-02T08:00:00.000Z", until: null });
  assert.deepEqual(dues(k, "pause"), []);
  k.advance("2026-11-02T12:00:00Z");
  assert.equal(k.state().pauses.length, 1, "no longer ends at 09:00");
  pause("2026-11-02T13:00:00Z", "until I say so");
  const reworded = pause("2026-11-02T13:00:00Z", "reworded");
  assert.deepEqual(reworded.facts[0]!.changes.map(([table]) => table), ["pauses"], "the same until: its deadline is not written again");
  pause("2026-11-02T14:00:00Z", "until I say so");
  assert.deepEqual(dues(k, "pause"), [["alerts", "2026-11-02T14:00:00.000Z"]]);
  k.advance("2026-11-02T13:30:00Z");
  assert.equal(k.state().pauses.length, 1, "moved to 14:00");
  k.advance("2026-11-02T14:00:00Z");
  assert.deepEqual(k.state().pauses, []);
  k.close();
});

test("resuming by hand ends the pause's deadline too; a rule that is not paused answers unchanged", () => {
  const k = new Clock(baseRules, "2026-11-02T08:00:00Z");
  k.commit({ kind: "pause", keyHash: K.owner, rule: "alerts", reason: null, until: "2026-11-02T09:00:00Z" });
  const r = k.commit({ kind: "resume", keyHash: K.owner, rule: "alerts" });
  assert.deepEqual([r.status, r.body, r.wake], [200, { changed: true, rule: "alerts" }, { workers: true, channels: [] }], "waiting workers are woken");
  assert.deepEqual(dues(k, "pause"), []);
  const again = k.commit({ kind: "resume", keyHash: K.owner, rule: "alerts" });
  assert.deepEqual([again.status, again.body, again.facts], [200, { changed: false, rule: "alerts" }, []]);
  k.close();
});

/** A hub whose rule "alerts" (budget $1 a day) was just paused by its budget, with its budget card open. */
function pausedByBudget(): Clock {
  const k = new Clock({ ...baseRules, rules: [{ ...baseRules.rules[0], budget: { cost: 1, per: "day" } }] }, "2026-11-02T08:00:00Z");
  k.event("e1");
  const j = k.claim("c1").job!;
  k.result(j.run, { outcome: "done", usage: { cost: 2 } });
  return k;
}

test("an owner's pause over a budget pause keeps who paused it and since when", () => {
  const k = pausedByBudget();
  k.now += 60_000;
  const p = k.commit({ kind: "pause", keyHash: K.owner, rule: "alerts", reason: "looking", until: null });
  assert.deepEqual((p.body as any).paused, { by: "budget", reason: "looking", since: "2026-11-02T08:00:00.000Z", until: null });
  k.close();
});

test("a resume that comes before the hub's timer handled a missed time does not make it up; other cron rules still do", () => {
  const rules = { ...cronRules("0 * * * *"), rules: [...cronRules("0 * * * *").rules, { name: "other", when: { cron: "0 * * * *" }, to: "bot2" }] };
  const k = new Clock(rules, "2026-11-02T08:30:00Z");
  k.commit({ kind: "pause", keyHash: K.owner, rule: "daily", reason: null, until: null });
  k.now = Date.parse("2026-11-02T10:30:00Z"); // asleep: nothing fired at 09:00 or 10:00
  k.commit({ kind: "resume", keyHash: K.owner, rule: "daily" });
  assert.deepEqual(dues(k, "cron"), [["daily", "2026-11-02T11:00:00.000Z"], ["other", "2026-11-02T09:00:00.000Z"]]);
  k.tick();
  assert.deepEqual(events(k).map((e) => [e.summary, e.sid]), [["other", "cron:2026-11-02T10:00:00.000Z"]]);
  k.close();
});

test("a worker counts as online for 3 minutes after its last recorded heartbeat", () => {
  const k = new Clock(baseRules, "2026-11-02T08:00:00Z");
  k.heartbeat([]);
  k.now += 3 * 60_000 - 1;
  assert.deepEqual(k.state().workers.map((w: any) => [w.name, w.online]), [["w1", true]]);
  k.now += 1;
  assert.deepEqual(k.state().workers.map((w: any) => [w.name, w.online]), [["w1", false]]);
  k.close();
});

test("resuming the owner's own pause ends it even while an earlier budget card is still open", () => {
  const k = pausedByBudget();
  k.commit({ kind: "pause", keyHash: K.owner, rule: "alerts", reason: null, until: "2026-11-02T09:00:00Z" });
  k.advance("2026-11-02T09:00:00Z");
  assert.deepEqual(k.state().pauses, []);
  k.commit({ kind: "pause", keyHash: K.owner, rule: "alerts", reason: "mine", until: null });
  assert.deepEqual(k.state().pauses.map((p: any) => p.by), ["owner"]);
  k.commit({ kind: "resume", keyHash: K.owner, rule: "alerts" });
  assert.deepEqual(k.state().pauses, []);
  k.close();
});

test("a cron expression with no next time (30 February) leaves no deadline", () => {
  const k = new Clock(cronRules("0 9 * * *"), "2026-11-02T08:00:00Z");
  assert.deepEqual(dues(k, "cron"), [["daily", "2026-11-02T09:00:00.000Z"]]);
  k.loadRules(cronRules("0 0 30 2 *"));
  assert.deepEqual([cron(k)!.expr, cron(k)!.next], ["0 0 30 2 *", null]);
  assert.deepEqual(dues(k, "cron"), []);
  assert.equal(k.state().lines.find((l: any) => l.name === "daily").nextAt, null);
  k.close();
});

test("controls name the rule they refuse: not a rule (with or without elsewhere tasks), or an elsewhere task", () => {
  const plain = new Clock(baseRules, "2026-11-02T08:00:00Z");
  const none = plain.commit({ kind: "pause", keyHash: K.owner, rule: "ghost", reason: null, until: null });
  assert.deepEqual([none.status, none.body], [404, { error: "没有这条规则：ghost" }]);
  const wake = plain.commit({ kind: "cardsNext", keyHash: K.channel }).wake;
  assert.deepEqual(wake, { workers: false, channels: [] }, "a decision that gives workers nothing wakes none");
  plain.close();
  const k = new Clock({ ...baseRules, elsewhere: [{ name: "one", where: "app" }, { name: "two", where: "app" }] }, "2026-11-02T08:00:00Z");
  const task = k.commit({ kind: "resume", keyHash: K.owner, rule: "two" });
  assert.deepEqual([task.status, task.body], [400, { error: '"two" is an elsewhere task: the hub does not start it, so it cannot be paused, resumed or run' }]);
  k.close();
});
