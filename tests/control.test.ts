/**
 * The owner's controls and cron schedules (protocol.md 来源: 定时; 本人: 暂停、恢复、立即运行): how a schedule follows
 * edits of rules.json, what a cron time and a manual run record, how pauses with and without `until` end; on the real
 * kernel and a real SQLite file with the clock in the test's hands, then over real HTTP (exact status codes and texts).
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Clock, K, written } from "./clock.js";
import { baseRules, hubFixture, type Fixture } from "./helpers.js";
import type { PauseAnswer, RunNowAnswer } from "../src/protocol/responses.js";

const cronRules = (expr: string, extra: Record<string, unknown> = {}) => ({
  ...baseRules, ...extra,
  rules: [...baseRules.rules, { name: "daily", when: { cron: expr }, to: "bot" }],
});

/** A rule's schedule as the owner's state shows it: [cron, time zone, next time, last skipped time, skipped count]. */
function schedule(k: Clock, name = "daily") {
  const s = k.state();
  const line = s.lines.find((l) => l.name === name)!;
  return [line.cron, s.timezone, line.nextAt, line.skippedAt, line.skippedCount];
}

/** When the hub's timer fires next and the deadlines due then, or null when it has none. */
function timer(k: Clock): [string, string[]] | null {
  const at = k.nextDeadline();
  return at === null ? null : [new Date(at).toISOString(), k.dueKeys(at)];
}

test("a cron schedule follows rules.json: kept when unchanged, recomputed for a new expression or zone, gone with the cron", () => {
  const k = new Clock(cronRules("0 9 * * *"), "2026-11-02T08:00:00Z");
  assert.deepEqual(schedule(k), ["0 9 * * *", "UTC", "2026-11-02T09:00:00.000Z", null, 0]);
  assert.deepEqual(timer(k), ["2026-11-02T09:00:00.000Z", ["cron:daily"]]);
  k.advance("2026-11-02T09:30:00Z");
  assert.deepEqual(schedule(k), ["0 9 * * *", "UTC", "2026-11-03T09:00:00.000Z", null, 0]);
  // an edit elsewhere in rules.json: the stream shows one fact, which writes neither the schedule nor its deadline
  const before = k.seq();
  k.loadRules(cronRules("0 9 * * *", { askFirst: ["drop tables"] }));
  const facts = k.stream(before);
  assert.equal(facts.length, 1);
  assert.deepEqual(facts[0]!.changes.filter(([table]) => table === "crons" || table === "due"), []);
  // a new expression: the next time is computed again from now (the last time that ran is kept: see below)
  k.loadRules(cronRules("0 10 * * *"));
  assert.deepEqual(schedule(k), ["0 10 * * *", "UTC", "2026-11-02T10:00:00.000Z", null, 0]);
  assert.deepEqual(timer(k), ["2026-11-02T10:00:00.000Z", ["cron:daily"]]);
  // a new time zone: 10:00 in Shanghai is 02:00 UTC
  k.loadRules(cronRules("0 10 * * *", { timezone: "Asia/Shanghai" }));
  assert.deepEqual(schedule(k), ["0 10 * * *", "Asia/Shanghai", "2026-11-03T02:00:00.000Z", null, 0]);
  assert.deepEqual(timer(k), ["2026-11-03T02:00:00.000Z", ["cron:daily"]]);
  // no longer a cron rule: its schedule and its deadline go
  k.loadRules({ ...baseRules, rules: [...baseRules.rules, { name: "daily", when: { source: "shop", types: ["x.*"] }, to: "bot" }] });
  assert.deepEqual(schedule(k), [null, "UTC", null, null, 0]);
  assert.equal(timer(k), null);
  k.advance("2026-11-04T12:00:00Z");
  assert.equal(k.state().totals.events, 1);
  assert.deepEqual(k.claim("c1").job!.context.events.map((e) => e.id), ["cron:2026-11-02T09:00:00.000Z"], "only the 09:00 that ran");
  k.close();
});

test("a cron rule removed from rules.json loses its schedule; other cron rules keep theirs", () => {
  const k = new Clock({ ...cronRules("0 9 * * *"), rules: [...cronRules("0 9 * * *").rules, { name: "hourly", when: { cron: "0 * * * *" }, to: "bot" }] }, "2026-11-02T08:30:00Z");
  assert.deepEqual(timer(k), ["2026-11-02T09:00:00.000Z", ["cron:daily", "cron:hourly"]]);
  k.loadRules({ ...baseRules, rules: [...baseRules.rules, { name: "hourly", when: { cron: "0 * * * *" }, to: "bot" }] });
  assert.deepEqual(timer(k), ["2026-11-02T09:00:00.000Z", ["cron:hourly"]]);
  assert.deepEqual(schedule(k, "hourly"), ["0 * * * *", "UTC", "2026-11-02T09:00:00.000Z", null, 0]);
  k.advance("2026-11-02T09:00:00Z");
  assert.deepEqual(k.state().runs.map((r) => r.rule), ["hourly"], "daily does not run");
  k.close();
});

test("a skipped time is kept across an edit of the expression, and a resume schedules from now", () => {
  const k = new Clock(cronRules("0 * * * *"), "2026-11-02T08:30:00Z");
  k.commit({ kind: "pause", keyHash: K.owner, rule: "daily", reason: null, until: null });
  k.advance("2026-11-02T10:30:00Z");
  assert.deepEqual(schedule(k), ["0 * * * *", "UTC", "2026-11-02T11:00:00.000Z", "2026-11-02T10:00:00.000Z", 2]);
  k.loadRules(cronRules("30 * * * *"));
  assert.deepEqual(schedule(k), ["30 * * * *", "UTC", "2026-11-02T11:30:00.000Z", "2026-11-02T10:00:00.000Z", 2]);
  k.now = Date.parse("2026-11-02T10:45:00Z");
  k.commit({ kind: "resume", keyHash: K.owner, rule: "daily" });
  assert.deepEqual(timer(k), ["2026-11-02T11:30:00.000Z", ["cron:daily"]]);
  k.now = Date.parse("2026-11-02T11:30:00Z");
  const [fired] = k.tick();
  const [ev] = written(fired!, "events");
  assert.deepEqual([ev!.source, ev!.sid, ev!.type, ev!.subject, ev!.summary, ev!.detail, ev!.hops, ev!.routed, ev!.internal], [
    "schedule", "cron:2026-11-02T11:30:00.000Z", "schedule.cron", null, "daily", null, 0, ["daily"], "cron",
  ]);
  const job = k.claim("c1").job!;
  assert.deepEqual([job.rule.name, k.run(job.run).lane, k.run(job.run).manual, job.context.events.map((e) => [e.id, e.source, e.type, e.summary])], [
    "daily", "", false, [["cron:2026-11-02T11:30:00.000Z", "schedule", "schedule.cron", "daily"]],
  ]);
  k.close();
});

test("the last cron time that ran is kept across an edit of the expression: a skip after it starts a new count", () => {
  // Paused from 08:30: 09:00 is skipped. Resumed, 10:00 runs. The expression changes; paused again, 10:30 is skipped:
  // a new count, since a time ran after the last skip.
  const ran = new Clock(cronRules("0 * * * *"), "2026-11-02T08:30:00Z");
  ran.commit({ kind: "pause", keyHash: K.owner, rule: "daily", reason: null, until: null });
  ran.advance("2026-11-02T09:30:00Z");
  ran.commit({ kind: "resume", keyHash: K.owner, rule: "daily" });
  ran.advance("2026-11-02T10:00:00Z");
  assert.deepEqual(ran.state().runs.map((r) => r.rule), ["daily"]);
  ran.loadRules(cronRules("30 * * * *"));
  assert.deepEqual(schedule(ran), ["30 * * * *", "UTC", "2026-11-02T10:30:00.000Z", "2026-11-02T09:00:00.000Z", 1]);
  ran.commit({ kind: "pause", keyHash: K.owner, rule: "daily", reason: null, until: null });
  ran.advance("2026-11-02T10:30:00Z");
  assert.deepEqual(schedule(ran), ["30 * * * *", "UTC", "2026-11-02T11:30:00.000Z", "2026-11-02T10:30:00.000Z", 1]);
  ran.close();
  // Never ran: the skips before the edit and after it are one count.
  const never = new Clock(cronRules("0 * * * *"), "2026-11-02T08:30:00Z");
  never.commit({ kind: "pause", keyHash: K.owner, rule: "daily", reason: null, until: null });
  never.advance("2026-11-02T10:30:00Z");
  never.loadRules(cronRules("30 * * * *"));
  never.advance("2026-11-02T11:30:00Z");
  assert.deepEqual(schedule(never), ["30 * * * *", "UTC", "2026-11-02T12:30:00.000Z", "2026-11-02T11:30:00.000Z", 3]);
  never.close();
});

test("a manual run of a per-subject rule goes to the subject's lane and records who asked", () => {
  const k = new Clock(baseRules, "2026-11-02T08:00:00Z");
  const r = k.commit({ kind: "runNow", keyHash: K.owner, rule: "per-subject", subject: "#9", reason: null });
  assert.deepEqual(r.body, { event: 1, run: 1 });
  const [ev] = written(r, "events");
  assert.deepEqual([ev!.source, ev!.sid, ev!.type, ev!.subject, ev!.summary, ev!.detail, ev!.routed, ev!.internal], [
    "crm", "manual:2026-11-02T08:00:00.000Z", "run.manual", "#9", "owner 手动运行", null, ["per-subject"], "manual",
  ]);
  assert.deepEqual([k.run(1).lane, k.run(1).manual, k.run(1).state], ["#9", true, "queued"]);
  const again = k.commit({ kind: "runNow", keyHash: K.owner, rule: "per-subject", subject: "#10", reason: null });
  assert.deepEqual(again.body, { event: 2, run: 2 });
  assert.deepEqual(written(again, "events").map((e) => e!.sid), ["manual:2026-11-02T08:00:00.000Z#2"], "the same second gets a free id");
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
  assert.deepEqual(timer(k), ["2026-11-02T09:00:00.000Z", ["pause:alerts"]]);
  const open = pause(null, "until I say so");
  assert.deepEqual((open.body as PauseAnswer).paused, { by: "owner", reason: "until I say so", since: "2026-11-02T08:00:00.000Z", until: null });
  assert.equal(timer(k), null);
  k.advance("2026-11-02T12:00:00Z");
  assert.equal(k.state().pauses.length, 1, "no longer ends at 09:00");
  pause("2026-11-02T13:00:00Z", "until I say so");
  const reworded = pause("2026-11-02T13:00:00Z", "reworded");
  assert.deepEqual(reworded.facts[0]!.changes.map(([table]) => table), ["pauses"], "the same until: its deadline is not written again");
  pause("2026-11-02T14:00:00Z", "until I say so");
  assert.deepEqual(timer(k), ["2026-11-02T14:00:00.000Z", ["pause:alerts"]]);
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
  assert.equal(timer(k), null);
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
  assert.deepEqual((p.body as PauseAnswer).paused, { by: "budget", reason: "looking", since: "2026-11-02T08:00:00.000Z", until: null });
  k.close();
});

test("a resume that comes before the hub's timer handled a missed time does not make it up; other cron rules still do", () => {
  const rules = { ...cronRules("0 * * * *"), rules: [...cronRules("0 * * * *").rules, { name: "other", when: { cron: "0 * * * *" }, to: "bot2" }] };
  const k = new Clock(rules, "2026-11-02T08:30:00Z");
  k.commit({ kind: "pause", keyHash: K.owner, rule: "daily", reason: null, until: null });
  k.now = Date.parse("2026-11-02T10:30:00Z"); // asleep: nothing fired at 09:00 or 10:00
  k.commit({ kind: "resume", keyHash: K.owner, rule: "daily" });
  assert.deepEqual(k.state().lines.filter((l) => l.cron).map((l) => [l.name, l.nextAt]), [["daily", "2026-11-02T11:00:00.000Z"], ["other", "2026-11-02T09:00:00.000Z"]]);
  assert.deepEqual(k.dueKeys(), ["cron:other"], "only other's missed time is due now");
  const fired = k.tick().flatMap((d) => written(d, "events"));
  assert.deepEqual(fired.map((e) => [e!.summary, e!.sid]), [["other", "cron:2026-11-02T10:00:00.000Z"]]);
  assert.equal(k.state().totals.events, 1);
  k.close();
});

test("a worker counts as online for 3 minutes after its last recorded heartbeat", () => {
  const k = new Clock(baseRules, "2026-11-02T08:00:00Z");
  k.heartbeat([]);
  k.now += 3 * 60_000 - 1;
  assert.deepEqual(k.state().workers.map((w) => [w.name, w.online]), [["w1", true]]);
  k.now += 1;
  assert.deepEqual(k.state().workers.map((w) => [w.name, w.online]), [["w1", false]]);
  k.close();
});

test("resuming the owner's own pause ends it even while an earlier budget card is still open", () => {
  const k = pausedByBudget();
  k.commit({ kind: "pause", keyHash: K.owner, rule: "alerts", reason: null, until: "2026-11-02T09:00:00Z" });
  k.advance("2026-11-02T09:00:00Z");
  assert.deepEqual(k.state().pauses, []);
  k.commit({ kind: "pause", keyHash: K.owner, rule: "alerts", reason: "mine", until: null });
  assert.deepEqual(k.state().pauses.map((p) => p.by), ["owner"]);
  k.commit({ kind: "resume", keyHash: K.owner, rule: "alerts" });
  assert.deepEqual(k.state().pauses, []);
  k.close();
});

test("a cron expression with no next time (30 February) leaves no deadline", () => {
  const k = new Clock(cronRules("0 9 * * *"), "2026-11-02T08:00:00Z");
  assert.deepEqual(timer(k), ["2026-11-02T09:00:00.000Z", ["cron:daily"]]);
  k.loadRules(cronRules("0 0 30 2 *"));
  assert.deepEqual(schedule(k), ["0 0 30 2 *", "UTC", null, null, 0]);
  assert.equal(timer(k), null);
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

let f: Fixture;
const httpRules = {
  ...baseRules,
  rules: [...baseRules.rules, { name: "巡检", when: { cron: "0 9 * * *" }, to: "bot" }],
  elsewhere: [{ name: "每周清理", to: "bot", cron: "0 6 * * 0", where: "Claude app" }],
};
const path = (name: string, action: string) => `/v1/rules/${encodeURIComponent(name)}/${action}`;

describe("over HTTP", () => {
  before(async () => {
    f = await hubFixture(httpRules);
  });
  after(async () => {
    await f.close();
  });

  test("pause, resume and run take URL-encoded names, empty bodies, and answer as specified", async () => {
    const p = await f.call("POST", path("巡检", "pause"), f.keys.owner, { reason: "上游在修", until: "2030-11-07T09:00:00+08:00" });
    assert.equal(p.status, 200);
    assert.deepEqual({ ...p.body, paused: { ...p.body.paused, since: "S" } }, {
      changed: true, rule: "巡检", paused: { by: "owner", reason: "上游在修", since: "S", until: "2030-11-07T01:00:00.000Z" },
    });
    const seq = f.seq();
    const same = await f.call("POST", path("巡检", "pause"), f.keys.owner, { reason: "上游在修", until: "2030-11-07T01:00:00Z" });
    assert.equal(same.body.changed, false);
    assert.equal(f.seq(), seq, "an unchanged pause writes no fact");
    const run = await f.call("POST", path("巡检", "run"), f.keys.owner, undefined, "");
    assert.deepEqual([run.status, run.body], [409, { error: "规则「巡检」暂停中，先恢复再手动运行" }]);
    const st = await f.state();
    assert.deepEqual(st.pauses.map((x) => x.name), ["巡检"]);
    assert.equal(st.lines.find((l) => l.name === "巡检")!.paused!.reason, "上游在修");
    const r = await f.call("POST", path("巡检", "resume"), f.keys.owner, undefined, "");
    assert.deepEqual([r.status, r.body], [200, { changed: true, rule: "巡检" }]);
    const again = await f.call("POST", path("巡检", "resume"), f.keys.owner, {});
    assert.deepEqual(again.body, { changed: false, rule: "巡检" });
    const now = await f.call("POST", path("alerts", "run"), f.keys.owner, { subject: "#12", reason: "看一眼" });
    assert.equal(now.status, 200);
    assert.deepEqual(Object.keys(now.body), ["event", "run"]);
    const st2 = await f.state();
    assert.equal(st2.runs.find((x) => x.id === (now.body as RunNowAnswer).run)!.manual, true);
  });

  test("refusals: unknown rule 404, elsewhere task 400, unknown field 400, bad until 400, not the owner 403", async () => {
    const seq = f.seq();
    const cases: [string, string | null, unknown, number, string | RegExp][] = [
      [path("nope", "pause"), f.keys.owner, {}, 404, "没有这条规则：nope"],
      [path("nope", "run"), f.keys.owner, {}, 404, "没有这条规则：nope"],
      [path("nope", "resume"), f.keys.owner, {}, 404, "没有这条规则：nope"],
      [path("每周清理", "run"), f.keys.owner, {}, 400, /elsewhere task/],
      [path("每周清理", "pause"), f.keys.owner, {}, 400, /elsewhere task/],
      [path("alerts", "pause"), f.keys.owner, { why: "x" }, 400, "why: unknown field"],
      [path("alerts", "run"), f.keys.owner, { subject: "has space" }, 400, /^subject: wrong format/],
      [path("alerts", "pause"), f.keys.owner, { until: "2030-11-07T09:00:00" }, 400, /^until: wrong format/],
      [path("alerts", "pause"), f.keys.owner, { until: "2030-02-30T09:00:00Z" }, 400, /^until: wrong format/],
      [path("alerts", "pause"), f.keys.owner, { until: "2001-01-01T00:00:00Z" }, 400, "until: must be later than now"],
      [path("alerts", "pause"), f.keys.worker, {}, 403, /owner/],
      [path("alerts", "run"), f.keys.source, {}, 403, /owner/],
    ];
    for (const [p, key, body, status, error] of cases) {
      const r = await f.call("POST", p, key, body);
      assert.equal(r.status, status, p);
      if (typeof error === "string") assert.equal(r.body.error, error, p);
      else assert.match(r.body.error, error, p);
    }
    assert.equal(f.seq(), seq);
  });
});
