/**
 * The due table one deadline at a time (protocol.md 失败时会怎样, issue 14): each deadline is its own `tick`, a tick
 * whose handler breaks an invariant answers 500 and writes nothing, `dueFailed` moves it on with a growing wait and
 * makes one card at the 3rd failure in a row, and a success closes that card. The real kernel on a real SQLite file
 * with the clock in the test's hands; broken rows are hand-made facts in the log (sim/simulation.ts appendRawFact). What
 * the tests read is what the hub's timer is told (`dueKeys`, `nextDeadline`), the decisions, the cards and the stream.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Clock, K, written } from "./clock.js";
import { baseRules } from "./helpers.js";
import { deadlineRetryDelayMs } from "../src/kernel/due-steps.js";
import { assert as invariant, InvariantError } from "../src/kernel/assert.js";
import type { DueRow } from "../src/kernel/types.js";

const start = "2026-11-02T08:00:00Z";
const t0 = Date.parse(start);
const broken = (k: Clock, row: DueRow) => k.appendRaw("corrupt", [["due", `${row.kind}:${row.ref}`, row]]);
/** When the hub's timer fires next and the deadlines due then, or null when it has none. */
function timer(k: Clock): [number, string[]] | null {
  const at = k.nextDeadline();
  return at === null ? null : [at, k.dueKeys(at)];
}
/** Every card the stream shows written, by id and in order: [id, system, key] (what the owner's state does not show). */
const streamedCards = (k: Clock) => written({ facts: k.stream() }, "cards").map((c) => [c!.id, c!.system, c!.key]);

test("the test clock fails a test at once when a deadline answers 500, unless the test breaks deadlines on purpose", () => {
  const k = new Clock(baseRules, start);
  broken(k, { at: t0 + 1000, kind: "retry", ref: "999" });
  assert.throws(() => k.advance(t0 + 60_000), {
    message: 'the deadline "retry:999" answered 500 at 2026-11-02T08:00:01.000Z: {"error":"internal error: invariant retry-deadline-names-waiting-run"} '
      + "(a test that breaks deadlines on purpose makes its Clock with failingTicks)",
  });
  k.close();
  const expecting = new Clock(baseRules, start, { failingTicks: true });
  broken(expecting, { at: t0 + 1000, kind: "retry", ref: "999" });
  expecting.advance(t0 + 60_000);
  assert.deepEqual(expecting.stream().filter((f) => f.kind === "dueFailed").length, 4, "reported back as the hub does: at 1, 6, 16 and 36 s");
  expecting.close();
});

test("assert throws an InvariantError naming the invariant when its condition is falsy, and nothing otherwise", () => {
  assert.doesNotThrow(() => invariant(1, "x"));
  for (const falsy of [false, 0, "", null, undefined]) {
    assert.throws(() => invariant(falsy, "run-has-claim"), (e: unknown) => {
      assert.ok(e instanceof InvariantError);
      assert.deepEqual([e.name, e.message, e.invariant], ["InvariantError", "invariant run-has-claim", "run-has-claim"]);
      return true;
    });
  }
});

test("the wait after a deadline's n-th failure: 5 s doubling, at most 1 h", () => {
  assert.deepEqual([1, 2, 3, 4, 10, 11, 12, 40, 2000].map((n) => deadlineRetryDelayMs(n) / 1000), [5, 10, 20, 40, 2560, 3600, 3600, 3600, 3600]);
});

test("a deadline naming a run that does not exist fails alone, writing nothing; the later due at the same time fires", () => {
  const k = new Clock(baseRules, start, { failingTicks: true });
  k.event("e1");
  const job = k.claim("c1").job!;
  k.result(job.run, { outcome: "done", later: [{ key: "t", at: new Date(t0 + 60_000).toISOString() }] });
  broken(k, { at: t0 + 60_000, kind: "retry", ref: "999" });
  k.now = t0 + 60_000;
  assert.deepEqual(k.dueKeys(k.now, 10), ["later:alerts\u0000\u0000t", "retry:999"], "earliest first, then by key");
  const seq = k.seq();
  const bad = k.commit({ kind: "tick", due: "retry:999" });
  assert.deepEqual([bad.status, bad.body, bad.committed, k.seq()], [500, { error: "internal error: invariant retry-deadline-names-waiting-run" }, [], seq]);
  assert.ok(bad.failure instanceof InvariantError);
  const good = k.commit({ kind: "tick", due: "later:alerts\u0000\u0000t" });
  assert.deepEqual([good.status, good.body, good.committed.map((f) => f.kind)], [200, { ok: true }, ["tick"]]);
  assert.deepEqual([k.dueKeys(k.now), k.dueKeys(k.now - 1)], [["retry:999"], []], "untouched until its failure is reported: still due at its time");
  assert.equal(k.run(2).state, "queued");
  assert.deepEqual(k.claim("c2").job!.context.timers.map((x) => x.key), ["t"], "the timer woke a run");
  k.close();
});

test("a failing deadline is tried again after 5 s, 10 s, 20 s … at most every hour; the 3rd failure in a row makes one card naming it, once", () => {
  const k = new Clock(baseRules, start, { failingTicks: true });
  broken(k, { at: t0 + 1000, kind: "retry", ref: "999" });
  const gaps: number[] = [];
  for (let i = 1; i <= 12; i++) {
    k.now = k.nextDeadline()!;
    const [d, ...more] = k.tick();
    assert.deepEqual([d!.status, d!.body, more], [500, { error: "internal error: invariant retry-deadline-names-waiting-run" }, []]);
    const [at, keys] = timer(k)!;
    assert.deepEqual(keys, ["retry:999"], "the same deadline, moved on");
    gaps.push((at - k.now) / 1000);
    if (i === 2) assert.deepEqual(k.cards(), []);
    if (i === 3) {
      const c = k.cards();
      assert.deepEqual(c.map((x) => [x.kind, x.state, x.title, x.channels]), [
        ["notice", "open", "Deadline retry 999 failed 3 times in a row", ["ch1", "ch2"]],
      ]);
      assert.equal(c[0]!.text, "It came due at 2026-11-02T08:00:01.000Z. Last error: invariant retry-deadline-names-waiting-run\n"
        + "It keeps being retried (from 5 s, doubling, at most every hour); other deadlines go on. This card closes when it succeeds. The hub's output has each failure in detail.");
      assert.deepEqual(streamedCards(k), [[c[0]!.id, "deadlineFailing", "deadline:retry:999"]]);
      k.commit({ kind: "resolve", keyHash: K.owner, card: c[0]!.id, reason: null }); // the owner closes it: not asked again
    }
  }
  // Each wait is the retry delay of the failures in a row so far: the deadline counts them.
  assert.deepEqual(gaps, [5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 3600, 3600]);
  assert.deepEqual(k.cards().map((c) => c.state), ["closed"], "one card per run of failures, not one per failure");
  assert.deepEqual(k.stream().filter((f) => f.kind === "dueFailed").length, 12);
  k.close();
});

test("a deadline that failed and then succeeds closes its card; so does one set anew that succeeds", () => {
  const k = new Clock(baseRules, start, { failingTicks: true });
  // w2 was never seen: its offline deadline names no worker row.
  broken(k, { at: t0 + 1000, kind: "offline", ref: "w2" });
  for (let i = 0; i < 3; i++) {
    k.now = k.nextDeadline()!;
    assert.equal(k.tick()[0]!.status, 500);
  }
  assert.deepEqual(k.cards().map((c) => [c.title, c.state, c.text.split("\n")[0]]), [
    ["Deadline offline w2 failed 3 times in a row", "open", "It came due at 2026-11-02T08:00:01.000Z. Last error: invariant offline-deadline-names-seen-worker"],
  ]);
  k.heartbeat([], K.worker2); // the worker shows up: its offline deadline is set anew, 10 min on
  assert.deepEqual(timer(k), [k.now + 10 * 60_000, ["offline:w2"]]);
  k.minutes(10);
  assert.deepEqual(k.cards().map((c) => [c.title, c.state, c.result]), [
    ["Deadline offline w2 failed 3 times in a row", "closed", "No longer needed"],
    ["Worker w2 has not been seen for 10 minutes", "open", null],
  ]);
  k.close();
});

test("a cron deadline that failed runs for the time it first came due, not for the time of its retry", () => {
  const rules = { ...baseRules, rules: [...baseRules.rules, { name: "hourly", when: { cron: "0 * * * *" }, to: "bot" }] };
  const k = new Clock(rules, "2026-11-02T08:30:00Z");
  assert.deepEqual(timer(k), [Date.parse("2026-11-02T09:00:00Z"), ["cron:hourly"]]);
  k.now = Date.parse("2026-11-02T09:00:00Z");
  assert.deepEqual(k.commit({ kind: "dueFailed", due: "cron:hourly", error: "disk" }).body, { ok: true, changed: true });
  k.now = Date.parse("2026-11-02T10:20:00Z");
  const fired = k.tick().flatMap((d) => written(d, "events"));
  assert.deepEqual(fired.map((e) => e!.sid), ["cron:2026-11-02T10:00:00.000Z"]);
  assert.equal(k.state().totals.events, 1);
  assert.deepEqual(timer(k), [Date.parse("2026-11-02T11:00:00Z"), ["cron:hourly"]]);
  k.close();
});

test("the card names a deadline as a person reads it: a later timer's rule and key without the NULs of its key", () => {
  const k = new Clock(baseRules, start);
  k.event("e1");
  k.result(k.claim("c1").job!.run, { outcome: "done", later: [{ key: "recheck", at: new Date(t0 + 60_000).toISOString() }] });
  const key = "later:alerts\u0000\u0000recheck"; // rule, lane (none: the rule does not split lanes), key
  for (let i = 0; i < 3; i++) {
    k.now = k.nextDeadline()!;
    assert.deepEqual(k.dueKeys(), [key]);
    k.commit({ kind: "dueFailed", due: key, error: "disk" });
  }
  assert.deepEqual(k.cards().map((c) => c.title), ["Deadline later alerts · recheck failed 3 times in a row"]);
  k.close();
});

test("a deadline of a kind nobody knows fails with due-kind-known", () => {
  const k = new Clock(baseRules, start, { failingTicks: true });
  broken(k, { at: t0, kind: "bogus" as DueRow["kind"], ref: "x" }); // deliberately not a DueKind
  const [d] = k.tick();
  assert.deepEqual([d!.status, d!.body], [500, { error: "internal error: invariant due-kind-known" }]);
  assert.deepEqual(timer(k), [t0 + deadlineRetryDelayMs(1), ["bogus:x"]], "its first failure was recorded: tried again after the first wait");
  k.close();
});

test("a tick or a failure report for a deadline that is gone or not due yet changes nothing", () => {
  const k = new Clock(baseRules, start);
  k.event("e1");
  const job = k.claim("c1").job!;
  k.result(job.run, { outcome: "done", later: [{ key: "t", at: new Date(t0 + 60_000).toISOString() }] });
  const key = "later:alerts\u0000\u0000t";
  const seq = k.seq();
  assert.deepEqual(k.commit({ kind: "tick", due: key }).body, { ok: true });
  assert.deepEqual(k.commit({ kind: "dueFailed", due: key, error: "e" }).body, { ok: true, changed: false });
  assert.deepEqual(k.commit({ kind: "dueFailed", due: "later:gone", error: "e" }).body, { ok: true, changed: false });
  assert.deepEqual([k.seq(), timer(k)], [seq, [t0 + 60_000, [key]]]);
  k.now = t0 + 60_000;
  assert.deepEqual(k.commit({ kind: "dueFailed", due: key, error: "e" }).body, { ok: true, changed: true }, "at its time it counts");
  k.close();
});

test("dueKeys takes at most `limit` keys at or before now; nextOfferAt looks only after the time given", () => {
  const k = new Clock(baseRules, start);
  for (const [ref, at] of [["b", t0 + 2], ["a", t0 + 2], ["c", t0 + 1], ["d", t0 + 3]] as const) broken(k, { at, kind: "bogus" as DueRow["kind"], ref });
  assert.deepEqual(k.dueKeys(t0 + 2, 10), ["bogus:c", "bogus:a", "bogus:b"]);
  assert.deepEqual(k.dueKeys(t0 + 2, 2), ["bogus:c", "bogus:a"]);
  k.commit({ kind: "rulesError", error: "x", missing: false }); // a card for ch1 and ch2, offerable now
  k.now += 1000;
  k.commit({ kind: "cardsNext", keyHash: K.channel }); // ch1's offer is leased for a minute
  assert.deepEqual([k.nextOfferAt(), k.nextOfferAt(t0), k.nextOfferAt(t0 + 61_000)], [t0, t0 + 61_000, null]);
  k.close();
});

test("issue 26 r27 F27a-1 (reported case: a run renewing its own timer one second ahead started 50 runs in 54 s): a timer set by a run a timer woke comes due a minute after at the soonest; one set by another run keeps its time", () => {
  const k = new Clock(baseRules, start);
  k.event("e1");
  const first = k.claim("c1").job!;
  // The event's run: its timer one second ahead keeps its time.
  k.result(first.run, { outcome: "done", later: [{ key: "t", at: new Date(t0 + 1000).toISOString() }] });
  assert.deepEqual(timer(k), [t0 + 1000, ["later:alerts\u0000\u0000t"]]);
  const woke: number[] = [];
  for (let i = 0; i < 3; i++) {
    const at = timer(k)![0];
    k.advance(at);
    woke.push(at - t0);
    const job = k.claim(`c${i + 2}`).job!;
    assert.deepEqual(job.context.timers.map((x) => x.key), ["t"]);
    k.result(job.run, { outcome: "done", later: [{ key: "t", at: new Date(k.now + 1000).toISOString() }] });
  }
  assert.deepEqual(woke, [1000, 61_000, 121_000], "renewed one second ahead, it came due a minute apart");
  assert.deepEqual(timer(k), [t0 + 181_000, ["later:alerts\u0000\u0000t"]]);
  k.close();
});
