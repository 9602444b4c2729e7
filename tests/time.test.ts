/**
 * The failure table and the due table walked through time with an injected clock (protocol.md 失败时会怎样,
 * 来源: 定时, 暂停、恢复、立即运行), on the real kernel and a real SQLite file.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Clock, K, written } from "./clock.js";
import { baseRules } from "./helpers.js";
import type { PauseAnswer } from "../src/protocol/responses.js";
import { ruleStartsPerWindowMax, ruleStartsWindowMs } from "../src/kernel/limits.js";

const min = 60_000;

test("a failing run retries after 5 min doubling to 1 h; card at the 3rd failure; cancelled with a notice at the 10th", () => {
  const k = new Clock(baseRules, "2026-11-02T08:00:00Z");
  k.event("e1");
  const waits: number[] = [];
  for (let i = 1; i <= 10; i++) {
    const job = k.claim(`c${i}`).job!;
    assert.equal(job.attempt, i);
    k.result(job.run, { outcome: "failed", error: `boom ${i}` });
    const r = k.run(1);
    if (i < 10) {
      assert.equal(r.state, "waiting");
      waits.push((Date.parse(r.readyAt) - k.now) / min);
      assert.equal(k.claim(`early${i}`).job, null, "not before its time");
      k.advance(r.readyAt);
    }
    const cards = k.state().cards.map((c) => c.title).filter((x) => !x.startsWith("Worker"));
    if (i < 3) assert.deepEqual(cards, []);
    if (i >= 3 && i < 10) assert.deepEqual(cards, ['"alerts" failed 3 times in a row'], "one card from the 3rd failure on");
  }
  assert.deepEqual(waits, [5, 10, 20, 40, 60, 60, 60, 60, 60]);
  const s = k.state();
  assert.equal(k.run(1).state, "cancelled");
  assert.deepEqual(s.cards.map((c) => c.title).filter((x) => !x.startsWith("Worker")), ['"alerts" failed 10 times in a row; no more retries']);
  assert.equal(s.recentCards.find((c) => c.title.startsWith('"alerts" failed 3'))!.result, "Stopped", "the will-retry card closes when the run stops");
  k.close();
});

test("the will-retry card closes when the run finally succeeds", () => {
  const k = new Clock(baseRules, "2026-11-02T08:00:00Z");
  k.event("e1");
  for (let i = 1; i <= 3; i++) {
    const job = k.claim(`c${i}`).job!;
    k.result(job.run, { outcome: "failed", error: "x" });
    k.advance(k.run(1).readyAt);
  }
  const titles = () => k.state().cards.map((c) => c.title).filter((x) => !x.startsWith("Worker"));
  assert.equal(titles().length, 1);
  const job = k.claim("c4").job!;
  k.result(job.run, { outcome: "done" });
  assert.deepEqual(titles(), []);
  assert.equal(k.run(1).failures, 0);
  k.close();
});

test("events while a run runs form a new run; if the run fails they join its retry", () => {
  const k = new Clock(baseRules, "2026-11-02T08:00:00Z");
  k.event("e1");
  const job = k.claim("c1").job!;
  k.event("e2");
  assert.equal(k.run(2).state, "queued", "a new run while the first is running");
  k.result(job.run, { outcome: "failed", error: "x" });
  assert.equal(k.run(2).state, "cancelled");
  assert.equal(k.run(2).mergedInto, 1);
  assert.deepEqual(k.run(1).events, 2);
  k.event("e3");
  assert.equal(k.run(1).events, 3, "events during the retry wait join it");
  k.close();
});

test("a retry continues the session the failed attempt reported", () => {
  const k = new Clock(baseRules, "2026-11-02T08:00:00Z");
  k.event("e1");
  const job = k.claim("c1").job!;
  k.commit({ kind: "started", run: job.run, token: job.token, session: "sess-1", link: null });
  k.result(job.run, { outcome: "failed", error: "broke halfway", session: "sess-1" });
  k.advance(k.run(1).readyAt);
  assert.equal(k.claim("c2").job!.session, "sess-1");
  k.close();
});

test("a worker silent about a run for 5 min makes it uncertain: group released, one card; a late result still counts", () => {
  const k = new Clock(baseRules, "2026-11-02T08:00:00Z");
  k.event("e1");
  const job = k.claim("c1").job!;
  k.minutes(4);
  k.event("e2");
  assert.equal(k.claim("c2").job, null, "the group is busy");
  k.minutes(1.5);
  assert.equal(k.run(1).state, "uncertain");
  assert.deepEqual(k.state().cards.map((c) => c.title), ["Run 1 (alerts) is uncertain"]);
  const second = k.claim("c3").job!;
  assert.equal(second.run, 2, "the group was released");
  const r = k.commit({ kind: "result", run: 1, token: job.token, result: { outcome: "done", summary: "late" } as never, hash: "late" });
  assert.equal(r.status, 200);
  assert.equal(k.run(1).state, "done");
  assert.deepEqual(k.state().cards.filter((c) => c.title.includes("uncertain")), [], "the late result closes the uncertain card");
  k.close();
});

test("a heartbeat naming the run brings an uncertain run back and closes its card", () => {
  const k = new Clock(baseRules, "2026-11-02T08:00:00Z");
  k.event("e1");
  k.claim("c1");
  k.minutes(6);
  assert.equal(k.run(1).state, "uncertain");
  k.heartbeat([1]);
  assert.equal(k.run(1).state, "claimed");
  assert.deepEqual(k.state().cards, []);
  k.close();
});

test("an uncertain run whose lane was taken meanwhile stays uncertain when its worker reports it (one active run per lane)", () => {
  const k = new Clock(baseRules, "2026-11-02T08:00:00Z");
  k.event("e1");
  const a = k.claim("c1").job!;
  k.minutes(6);
  assert.equal(k.run(1).state, "uncertain");
  k.event("e2");
  const b = k.claim("c2").job!;
  assert.equal(b.run, 2);
  k.heartbeat([1, 2]);
  assert.equal(k.run(1).state, "uncertain");
  assert.equal(k.run(2).state, "claimed");
  k.commit({ kind: "started", run: 1, token: a.token, session: null, link: null });
  assert.equal(k.run(1).state, "uncertain");
  k.result(1, { outcome: "done" });
  assert.equal(k.run(1).state, "done", "its result still counts");
  assert.equal(k.run(2).state, "claimed");
  k.close();
});

test("heartbeats keep a run's lease; they are written at most once a minute", () => {
  const k = new Clock(baseRules, "2026-11-02T08:00:00Z");
  k.event("e1");
  k.claim("c1");
  for (let i = 0; i < 12; i++) {
    const before = k.seq();
    k.heartbeat([1]);
    k.now += 30_000;
    k.heartbeat([1]);
    assert.ok(k.seq() - before <= 1, "two heartbeats in a minute write one fact at most");
    k.minutes(0.5);
  }
  assert.equal(k.run(1).state, "claimed");
  k.close();
});

test("a worker unseen for 10 min gets one card, which closes when it returns", () => {
  const k = new Clock(baseRules, "2026-11-02T08:00:00Z");
  k.heartbeat([]);
  k.minutes(9);
  assert.deepEqual(k.state().cards, []);
  k.minutes(2);
  assert.deepEqual(k.state().cards.map((c) => c.title), ["Worker w1 has not been seen for 10 minutes"]);
  k.minutes(60);
  assert.equal(k.state().cards.length, 1, "one card, not one per check");
  k.heartbeat([]);
  assert.deepEqual(k.state().cards, []);
  k.close();
});

test("later: a timer of the lane wakes a run with it in context, on the session that set it; a key moves or cancels it", () => {
  const k = new Clock(baseRules, "2026-11-02T08:00:00Z");
  k.event("e1");
  let job = k.claim("c1").job!;
  k.commit({ kind: "started", run: job.run, token: job.token, session: "s-later", link: null });
  k.result(job.run, {
    outcome: "done", session: "s-later",
    later: [{ key: "recheck", at: "2026-11-02T09:00:00Z", about: "look again" }, { key: "gone", at: "2026-11-02T08:30:00Z" }],
  });
  k.event("e2");
  job = k.claim("c2").job!;
  assert.deepEqual(job.context.waiting.map((w) => w.key), ["gone", "recheck"]);
  k.result(job.run, { outcome: "done", later: [{ key: "recheck", at: "2026-11-02T10:00:00Z", about: "moved" }, { key: "gone", cancel: true }] });
  k.advance("2026-11-02T09:30:00Z");
  assert.equal(k.claim("c3").job, null, "the moved timer is not due yet; the cancelled one never fires");
  k.advance("2026-11-02T10:00:00Z");
  job = k.claim("c4").job!;
  assert.deepEqual(job.context.timers.map((x) => [x.key, x.about]), [["recheck", "moved"]]);
  assert.equal(job.session, null, "the run that moved the timer reported no session");
  assert.deepEqual(job.context.events, [], "a timer is not an event of the source");
  k.close();
});

const cronRules = (expr: string, timezone = "UTC") => ({
  ...baseRules, timezone,
  rules: [{ name: "daily", when: { cron: expr }, to: "bot" }],
});

/** The cron times that ran: the source ids of the schedule's events, as the stream shows them recorded. */
function cronRuns(k: Clock): string[] {
  const events = new Map(written({ facts: k.stream() }, "events").map((e) => [e!.id, e!]));
  return [...events.values()].filter((e) => e.source === "schedule").map((e) => e.sid);
}

test("a cron rule runs at its times; after downtime only the latest missed time runs", () => {
  const k = new Clock(cronRules("0 9 * * *"), "2026-11-02T08:00:00Z");
  k.advance("2026-11-02T09:00:00Z");
  assert.deepEqual(cronRuns(k), ["cron:2026-11-02T09:00:00.000Z"]);
  k.sleepUntil("2026-11-05T12:00:00Z"); // asleep across three 09:00s
  assert.deepEqual(cronRuns(k), ["cron:2026-11-02T09:00:00.000Z", "cron:2026-11-05T09:00:00.000Z"]);
  assert.equal(k.state().lines[0].nextAt, "2026-11-06T09:00:00.000Z");
  k.close();
});

const line = (k: Clock) => k.state().lines[0];
const fyiCards = (k: Clock) => k.state().recentCards.filter((c) => c.fyi).map((c) => [c.rule, c.title, c.text]).reverse();

test("cron times missed while the hub was down show: skippedAt and the count on the rule, one fyi card per outage", () => {
  const k = new Clock(cronRules("0 9 * * *"), "2026-11-02T08:00:00Z");
  k.advance("2026-11-02T09:00:00Z");
  assert.deepEqual([line(k).skippedAt, line(k).skippedCount], [null, 0]);
  k.sleepUntil("2026-11-05T12:00:00Z"); // asleep across 11-03 and 11-04 09:00; 11-05 09:00 is made up
  assert.deepEqual(cronRuns(k), ["cron:2026-11-02T09:00:00.000Z", "cron:2026-11-05T09:00:00.000Z"]);
  assert.deepEqual([line(k).skippedAt, line(k).skippedCount], ["2026-11-04T09:00:00.000Z", 2]);
  const outage1 = ["daily", '"daily": 2 missed cron time(s) while the hub was down',
    "First missed: 2026-11-03T09:00:00.000Z. Last missed: 2026-11-04T09:00:00.000Z. Only the latest time, 2026-11-05T09:00:00.000Z, ran when the hub was back."];
  assert.deepEqual(fyiCards(k), [outage1]);
  const card = k.state().recentCards.find((c) => c.fyi)!;
  assert.deepEqual([card.lane, card.run, card.state], ["", null, "closed"]);
  // What the stream shows the hub wrote: the card's kind and key, and the key kept (never deleted) so it is sent once.
  const log = k.stream().flatMap((f) => f.changes);
  const made = log.filter(([table, id]) => table === "cards" && id === card.id).map(([, , row]) => row as { system: string; key: string });
  assert.deepEqual(made.map((c) => [c.system, c.key]), [["cronMissed", "missed:2026-11-03T09:00:00.000Z"]]);
  const sent = "daily\u0000\u0000fyi:cron:s:missed:2026-11-03T09:00:00.000Z";
  assert.deepEqual(log.filter(([table, key]) => table === "cardkeys" && key === sent).map(([, , row]) => row), [{ card: card.id }], "its key is kept: sent once");
  // on time, or late within the same period: nothing missed, no card; the last outage still shows
  k.advance("2026-11-06T09:00:00Z");
  k.sleepUntil("2026-11-07T09:30:00Z");
  assert.equal(cronRuns(k).length, 4);
  assert.deepEqual([line(k).skippedAt, line(k).skippedCount], ["2026-11-04T09:00:00.000Z", 2]);
  assert.deepEqual(fyiCards(k), [outage1]);
  // a second outage counts on its own and has its own card
  k.sleepUntil("2026-11-09T10:00:00Z");
  assert.deepEqual([line(k).skippedAt, line(k).skippedCount], ["2026-11-08T09:00:00.000Z", 1]);
  assert.deepEqual(fyiCards(k), [outage1, ["daily", '"daily": 1 missed cron time(s) while the hub was down',
    "First missed: 2026-11-08T09:00:00.000Z. Last missed: 2026-11-08T09:00:00.000Z. Only the latest time, 2026-11-09T09:00:00.000Z, ran when the hub was back."]]);
  k.close();
});

test("cron times skipped while paused are counted one after another, asleep or not, without a card; a run starts a new count", () => {
  const k = new Clock(cronRules("0 * * * *"), "2026-11-02T08:30:00Z");
  k.commit({ kind: "pause", keyHash: K.owner, rule: "daily", reason: null, until: null });
  k.advance("2026-11-02T10:30:00Z");
  assert.deepEqual([line(k).skippedAt, line(k).skippedCount], ["2026-11-02T10:00:00.000Z", 2]);
  k.sleepUntil("2026-11-02T13:30:00Z"); // asleep while paused: 11:00, 12:00 and 13:00 are skipped too
  assert.deepEqual([line(k).skippedAt, line(k).skippedCount], ["2026-11-02T13:00:00.000Z", 5]);
  assert.deepEqual(fyiCards(k), [], "the owner paused it: no card");
  k.commit({ kind: "resume", keyHash: K.owner, rule: "daily" });
  k.sleepUntil("2026-11-02T16:30:00Z"); // an outage right after the resume: 14:00 and 15:00 missed, 16:00 runs
  assert.deepEqual(cronRuns(k), ["cron:2026-11-02T16:00:00.000Z"]);
  assert.deepEqual([line(k).skippedAt, line(k).skippedCount], ["2026-11-02T15:00:00.000Z", 2], "an outage counts on its own");
  assert.deepEqual(fyiCards(k).map((c) => c[1]), ['"daily": 2 missed cron time(s) while the hub was down']);
  k.commit({ kind: "pause", keyHash: K.owner, rule: "daily", reason: null, until: null });
  k.advance("2026-11-02T17:00:00Z");
  assert.deepEqual([line(k).skippedAt, line(k).skippedCount], ["2026-11-02T17:00:00.000Z", 1], "a new count after a time that ran");
  k.advance("2026-11-02T18:00:00Z");
  assert.deepEqual([line(k).skippedAt, line(k).skippedCount], ["2026-11-02T18:00:00.000Z", 2], "which adds up while paused");
  k.close();
});

test("missed cron times are counted up to 1000; the last missed time is exact beyond that", () => {
  const k = new Clock(cronRules("* * * * *"), "2026-11-02T00:00:30Z");
  k.sleepUntil("2026-11-03T01:00:30Z"); // 00:01 on 11-02 to 00:59 on 11-03 missed (1499), 01:00 runs
  assert.deepEqual(cronRuns(k), ["cron:2026-11-03T01:00:00.000Z"]);
  assert.deepEqual([line(k).skippedAt, line(k).skippedCount], ["2026-11-03T00:59:00.000Z", 1000]);
  assert.deepEqual(fyiCards(k).map((c) => c[1]), ['"daily": 1000+ missed cron time(s) while the hub was down']);
  k.sleepUntil("2026-11-03T01:02:30Z");
  assert.deepEqual([line(k).skippedAt, line(k).skippedCount], ["2026-11-03T01:01:00.000Z", 1]);
  k.close();
});

test("daylight saving in America/New_York: a missing time is skipped, a repeated time runs once", () => {
  const spring = new Clock(cronRules("30 2 * * *", "America/New_York"), "2026-03-07T12:00:00Z");
  spring.advance("2026-03-10T12:00:00Z");
  assert.deepEqual(cronRuns(spring), ["cron:2026-03-09T06:30:00.000Z", "cron:2026-03-10T06:30:00.000Z"], "02:30 on 2026-03-08 does not exist");
  spring.close();
  const fall = new Clock(cronRules("30 1 * * *", "America/New_York"), "2026-10-31T12:00:00Z");
  fall.advance("2026-11-02T12:00:00Z");
  assert.deepEqual(cronRuns(fall), ["cron:2026-11-01T05:30:00.000Z", "cron:2026-11-02T06:30:00.000Z"], "01:30 on 2026-11-01 runs once");
  fall.close();
  const hourly = new Clock(cronRules("0 * * * *", "America/New_York"), "2026-11-01T03:30:00Z");
  hourly.advance("2026-11-01T08:30:00Z");
  assert.deepEqual(cronRuns(hourly), [
    "cron:2026-11-01T04:00:00.000Z", // 00:00 EDT
    "cron:2026-11-01T05:00:00.000Z", // 01:00 EDT; 01:00 EST (06:00Z) is the same wall-clock time again
    "cron:2026-11-01T07:00:00.000Z", // 02:00 EST
    "cron:2026-11-01T08:00:00.000Z", // 03:00 EST
  ]);
  hourly.close();
});

test("a paused cron rule skips its times without making them up; resume goes on from the next time", () => {
  const k = new Clock(cronRules("0 * * * *"), "2026-11-02T08:30:00Z");
  const p = k.commit({ kind: "pause", keyHash: K.owner, rule: "daily", reason: "upstream down", until: null });
  assert.equal(p.facts[0]!.kind, "pauseRule");
  k.advance("2026-11-02T11:30:00Z");
  assert.deepEqual(cronRuns(k), []);
  assert.equal(k.state().lines[0].skippedAt, "2026-11-02T11:00:00.000Z");
  const r = k.commit({ kind: "resume", keyHash: K.owner, rule: "daily" });
  assert.equal(r.facts[0]!.kind, "resumeRule");
  assert.deepEqual(cronRuns(k), [], "nothing made up at resume");
  k.advance("2026-11-02T12:00:00Z");
  assert.deepEqual(cronRuns(k), ["cron:2026-11-02T12:00:00.000Z"]);
  k.close();
});

test("a paused event rule takes no events and does not make them up; paused lists them", () => {
  const k = new Clock(baseRules, "2026-11-02T08:00:00Z");
  k.commit({ kind: "pause", keyHash: K.owner, rule: "alerts", reason: null, until: null });
  const ev = k.event("during");
  assert.deepEqual(ev.body, { event: 1, duplicate: false, routed: [], paused: ["alerts"] });
  const s = k.state();
  assert.equal(s.totals.unrouted, 0, "a paused-skipped event is not unrouted");
  assert.deepEqual(s.skipped.map((e) => e.eventId), ["during"]);
  assert.deepEqual(s.pauses.map((x) => [x.name, x.by]), [["alerts", "owner"]]);
  assert.deepEqual(s.lines.find((l) => l.name === "alerts")!.paused!.by, "owner");
  k.commit({ kind: "resume", keyHash: K.owner, rule: "alerts" });
  assert.equal(k.claim("c1").job, null, "not made up after resume");
  k.close();
});

test("queued and retry-waiting runs stay queued while paused and go out after resume", () => {
  const k = new Clock(baseRules, "2026-11-02T08:00:00Z");
  k.event("e1");
  k.commit({ kind: "pause", keyHash: K.owner, rule: "alerts", reason: null, until: null });
  assert.equal(k.claim("c1").job, null);
  k.commit({ kind: "resume", keyHash: K.owner, rule: "alerts" });
  assert.equal(k.claim("c2").job!.run, 1);
  k.close();
});

test("pause until resumes by itself in a tick; a repeated pause keeps since and writes nothing when unchanged", () => {
  const k = new Clock(baseRules, "2026-11-02T08:00:00Z");
  const a = k.commit({ kind: "pause", keyHash: K.owner, rule: "alerts", reason: "r", until: "2026-11-02T10:00:00+01:00" });
  assert.deepEqual(a.body, { changed: true, rule: "alerts", paused: { by: "owner", reason: "r", since: "2026-11-02T08:00:00.000Z", until: "2026-11-02T09:00:00.000Z" } });
  k.minutes(10);
  const seq = k.seq();
  const same = k.commit({ kind: "pause", keyHash: K.owner, rule: "alerts", reason: "r", until: "2026-11-02T09:00:00Z" });
  assert.equal((same.body as PauseAnswer).changed, false);
  assert.equal(k.seq(), seq);
  const moved = k.commit({ kind: "pause", keyHash: K.owner, rule: "alerts", reason: "r2", until: "2026-11-02T09:30:00Z" });
  assert.equal((moved.body as PauseAnswer).paused.since, "2026-11-02T08:00:00.000Z");
  k.advance("2026-11-02T09:29:00Z");
  assert.equal(k.state().pauses.length, 1);
  k.advance("2026-11-02T09:30:00Z");
  assert.deepEqual(k.state().pauses, []);
  const last = k.stream(k.seq() - 1)[0]!;
  assert.equal(last.kind, "tick");
  const past = k.commit({ kind: "pause", keyHash: K.owner, rule: "alerts", reason: null, until: "2026-11-01T00:00:00Z" });
  assert.deepEqual([past.status, past.body], [400, { error: "until: must be later than now" }]);
  k.close();
});

test("run now: the protocol's texts for unknown, elsewhere and paused rules; a manual run joins the queued run and ends its retry wait", () => {
  const rules = { ...baseRules, elsewhere: [{ name: "weekly", to: "bot", cron: "0 6 * * 0", where: "an app" }] };
  const k = new Clock(rules, "2026-11-02T08:00:00Z");
  const unknown = k.commit({ kind: "runNow", keyHash: K.owner, rule: "nope", subject: null, reason: null });
  assert.deepEqual([unknown.status, unknown.body], [404, { error: "没有这条规则：nope" }]);
  const elsewhere = k.commit({ kind: "runNow", keyHash: K.owner, rule: "weekly", subject: null, reason: null });
  assert.equal(elsewhere.status, 400);
  k.event("e1");
  const job = k.claim("c1").job!;
  k.result(job.run, { outcome: "failed", error: "x" });
  assert.equal(k.run(1).state, "waiting");
  const manual = k.commit({ kind: "runNow", keyHash: K.owner, rule: "alerts", subject: "#1", reason: "look now" });
  assert.deepEqual(manual.body, { event: 2, run: 1 });
  assert.equal(k.run(1).state, "queued", "the retry wait is cancelled");
  assert.equal(k.run(1).manual, true);
  const again = k.claim("c2").job!;
  const ev = again.context.events.find((e) => e.type === "run.manual")!;
  assert.deepEqual([ev.source, ev.summary, ev.detail, ev.subject], ["shop", "owner 手动运行", "look now", "#1"]);
  k.commit({ kind: "pause", keyHash: K.owner, rule: "alerts", reason: null, until: null });
  const paused = k.commit({ kind: "runNow", keyHash: K.owner, rule: "alerts", subject: null, reason: null });
  assert.deepEqual([paused.status, paused.body], [409, { error: "规则「alerts」暂停中，先恢复再手动运行" }]);
  const unknownPause = k.commit({ kind: "pause", keyHash: K.owner, rule: "ghost", reason: null, until: null });
  assert.deepEqual(unknownPause.body, { error: "没有这条规则：ghost" });
  k.close();
});

test("a paused rule removed from rules.json can still be resumed", () => {
  const k = new Clock(baseRules, "2026-11-02T08:00:00Z");
  k.commit({ kind: "pause", keyHash: K.owner, rule: "alerts", reason: null, until: null });
  k.loadRules({ ...baseRules, rules: baseRules.rules.filter((r) => r.name !== "alerts") });
  const r = k.commit({ kind: "resume", keyHash: K.owner, rule: "alerts" });
  assert.deepEqual(r.body, { changed: true, rule: "alerts" });
  k.close();
});

test("hops: receipt events go one deeper; past 8 they are recorded, not dispatched, with one notice", () => {
  const rules = { ...baseRules, rules: [{ ...baseRules.rules[0], emits: { source: "shop", types: ["alert.*"] } }] };
  const k = new Clock(rules, "2026-11-02T08:00:00Z");
  k.event("deep", { hops: 7 });
  const job = k.claim("c1").job!;
  const first = k.result(job.run, { outcome: "done", events: [{ id: "child", type: "alert.child" }] });
  const child = written(first, "events").find((e) => e!.sid === "receipt:child")!;
  assert.equal(child.hops, 8);
  assert.deepEqual(child.routed, ["alerts"], "8 is still dispatched");
  const j2 = k.claim("c2").job!;
  assert.deepEqual(j2.context.events.map((e) => e.id), ["child"], "the run it starts sees the id the receipt gave");
  const second = k.result(j2.run, { outcome: "done", events: [{ id: "grandchild", type: "alert.gc" }] });
  const gc = written(second, "events").find((e) => e!.sid === "receipt:grandchild")!;
  assert.deepEqual([gc.hops, gc.routed, gc.tooDeep], [9, [], true]);
  assert.equal(k.claim("c3").job, null, "nothing took the grandchild");
  const direct = k.event("too-deep", { hops: 9 });
  assert.deepEqual(direct.body, { event: 4, duplicate: false, routed: [], paused: [] });
  k.event("too-deep", { hops: 9 });
  const notices = k.state().cards.filter((c) => c.title.startsWith("An event chain went past 8 hops"));
  assert.equal(notices.length, 2, "one notice per too-deep event; a duplicate adds none");
  assert.deepEqual(notices.map((c) => [c.kind, c.title, c.text, c.lane, c.rule]), [
    ["notice", "An event chain went past 8 hops and was not dispatched", "Event receipt:grandchild (alert.gc) from shop is at hop 9.", "", null],
    ["notice", "An event chain went past 8 hops and was not dispatched", "Event too-deep (alert.x) from shop is at hop 9.", "", null],
  ]);
  const stored = written({ facts: k.stream() }, "cards").filter((c) => notices.some((n) => n.id === c!.id));
  assert.deepEqual(stored.map((c) => [c!.id, c!.key, c!.system]), [
    [notices[0]!.id, "hops:shop:receipt:grandchild", "hops"], [notices[1]!.id, "hops:shop:too-deep", "hops"],
  ], "as the stream shows them written");
  k.close();
});

test("GET /v1/state pages runs 60 at a time with before", () => {
  const k = new Clock(baseRules, "2026-11-02T08:00:00Z");
  for (let i = 0; i < 70; i++) {
    k.event(`e${i}`);
    const job = k.claim(`c${i}`).job!;
    k.result(job.run, { outcome: "nothing" });
    k.now += 1000;
  }
  const first = k.state();
  assert.equal(first.runs.length, 60);
  assert.deepEqual([first.runs[0].id, first.runs[59].id, first.hasMore, first.nextBefore], [70, 11, true, 11]);
  const second = k.state(first.nextBefore);
  assert.deepEqual([second.runs.length, second.runs[0].id, second.runs[9].id, second.hasMore, second.nextBefore], [10, 10, 1, false, null]);
  assert.deepEqual(second.timers, [], "timers only on the first page");
  assert.equal(first.spending.today.rounds, 70);
  assert.equal(first.spending.today.missingTokens, 70, "no usage reported is counted as missing, not as zero");
  k.close();
});

test("GET /v1/state?rule=&state=&worker= pages the runs that match, looking through 2,000 run ids a page at most", () => {
  const pages = { name: "pages", when: { source: "shop", types: ["page.*"] }, to: "bot2" };
  // With `parallel`, each subject is a lane of its own: every event of alerts below is a run of its own.
  const k = new Clock({ ...baseRules, rules: [{ ...baseRules.rules[0], parallel: 2 }, pages] }, "2026-11-02T08:00:00Z");
  // Run 1 is the only one of rule pages (worker w2); then 2,049 runs of alerts, queued, every 7th one stopped.
  k.event("p1", { type: "page.x" });
  k.result(k.claim("c-p1", K.worker2).job!.run, { outcome: "done" });
  k.now += 1000;
  // In batches of ruleStartsPerWindowMax a window apart, so the rule is not paused for starting runs too fast.
  for (let from = 0; from < 2049; from += ruleStartsPerWindowMax) {
    const count = Math.min(ruleStartsPerWindowMax, 2049 - from);
    k.commitAll(Array.from({ length: count }, (_, i) => ({ kind: "event", keyHash: K.source, event: { id: `e${from + i + 2}`, type: "alert.x", subject: `s${from + i + 2}` } } as const)));
    k.now += ruleStartsWindowMs;
  }
  const sevens = Array.from({ length: 292 }, (_, j) => 2044 - 7 * j);
  k.commitAll(sevens.map((run) => ({ kind: "cancel", keyHash: K.owner, run } as const)));
  const ids = (s: { runs: { id: number }[] }) => s.runs.map((r) => r.id);
  const rule = { rule: "pages", state: null, worker: null };
  const first = k.state(null, rule);
  // Nothing in the newest 2,000 ids (2050 down to 51): an empty page that says where the next look goes on.
  assert.deepEqual([ids(first), first.nextBefore, first.hasMore, first.reachedAt], [[], 51, true, k.run(51).createdAt]);
  const second = k.state(first.nextBefore, rule);
  assert.deepEqual([ids(second), second.nextBefore, second.hasMore, second.reachedAt], [[1], null, false, k.run(1).createdAt]);
  assert.deepEqual(ids(k.state(51, { rule: null, state: null, worker: "w2" })), [1]);
  assert.deepEqual(ids(k.state(null, { rule: null, state: null, worker: "w1" })), []);
  // Full pages end at their last run, like unfiltered ones; every match comes once, newest first.
  const stopped = { rule: "alerts", state: "cancelled", worker: null } as const;
  const seen: number[][] = [];
  for (let before: number | null = null, i = 0; i === 0 || before !== null; i++) {
    const page = k.state(before, stopped);
    seen.push(ids(page));
    before = page.nextBefore;
  }
  assert.deepEqual(seen.map((p) => p.length), [60, 60, 60, 60, 52]);
  assert.deepEqual(seen.flat(), sevens);
  assert.deepEqual(ids(k.state(null, { rule: "nope", state: null, worker: null })), []);
  // The unfiltered page, the active runs and the sums are the same whatever the filter.
  const plain = k.state();
  assert.deepEqual([plain.runs.length, plain.nextBefore, plain.reachedAt], [60, 1991, k.run(1991).createdAt]);
  assert.deepEqual([first.active, first.spending, first.totals], [plain.active, plain.spending, plain.totals]);
  k.close();
});
