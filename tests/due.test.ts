/**
 * The due table one deadline at a time (protocol.md 失败时会怎样, issue 14): each deadline is its own `tick`, a tick
 * whose handler breaks an invariant answers 500 and writes nothing, `dueFailed` moves it on with a growing wait and
 * makes one card at the 3rd failure in a row, and a success closes that card. The real kernel on a real SQLite file
 * with the clock in the test's hands; broken rows are hand-made facts in the log (sim/simulation.ts appendRawFact).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Clock, K } from "./clock.js";
import { baseRules } from "./helpers.js";
import { appendRawFact } from "../sim/simulation.js";
import { deadlineRetryDelayMs, dueKeys, nextOfferAt } from "../src/kernel/decide.js";
import { assert as invariant, InvariantError } from "../src/kernel/assert.js";
import type { DueRow } from "../src/kernel/types.js";

const start = "2026-11-02T08:00:00Z";
const t0 = Date.parse(start);
const broken = (k: Clock, row: DueRow) => appendRawFact(k.store, "corrupt", [["due", `${row.kind}:${row.ref}`, row]], k.now);
const due = (k: Clock, key: string) => k.store.view.get("due", key);
const cards = (k: Clock) => k.store.view.where("cards", "1 ORDER BY key").map(({ row }) => row);
const lastSeq = (k: Clock) => (k.store.db.prepare(`SELECT MAX(seq) AS s FROM facts`).get() as { s: number }).s;

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
  const k = new Clock(baseRules, start);
  k.event("e1");
  const job = k.claim("c1").job!;
  k.result(job.run, { outcome: "done", later: [{ key: "t", at: new Date(t0 + 60_000).toISOString() }] });
  broken(k, { at: t0 + 60_000, kind: "retry", ref: "999" });
  k.now = t0 + 60_000;
  assert.deepEqual(dueKeys(k.store.view, k.now, 10), ["later:alerts\u0000\u0000t", "retry:999"], "earliest first, then by key");
  const seq = lastSeq(k);
  const bad = k.commit({ kind: "tick", due: "retry:999" });
  assert.deepEqual([bad.status, bad.body, bad.committed, lastSeq(k)], [500, { error: "internal error: invariant retry-deadline-names-waiting-run" }, [], seq]);
  assert.ok(bad.failure instanceof InvariantError);
  const good = k.commit({ kind: "tick", due: "later:alerts\u0000\u0000t" });
  assert.deepEqual([good.status, good.body, good.committed.map((f) => f.kind)], [200, { ok: true }, ["tick"]]);
  assert.deepEqual([k.run(2).state, k.run(2).timers.map((x) => x.key)], ["queued", ["t"]]);
  assert.deepEqual(due(k, "retry:999"), { at: t0 + 60_000, kind: "retry", ref: "999" }, "untouched until its failure is reported");
  k.close();
});

test("a failing deadline is tried again after 5 s, 10 s, 20 s … at most every hour; the 3rd failure in a row makes one card naming it, once", () => {
  const k = new Clock(baseRules, start);
  broken(k, { at: t0 + 1000, kind: "retry", ref: "999" });
  const gaps: number[] = [];
  for (let i = 1; i <= 12; i++) {
    k.now = due(k, "retry:999")!.at;
    const [d] = k.tick();
    assert.equal(d!.status, 500);
    const row = due(k, "retry:999")!;
    assert.deepEqual(row.failing, { dueAt: t0 + 1000, failures: i, error: "invariant retry-deadline-names-waiting-run" });
    assert.deepEqual([row.kind, row.ref], ["retry", "999"]);
    gaps.push((row.at - k.now) / 1000);
    if (i === 2) assert.deepEqual(cards(k), []);
    if (i === 3) {
      const c = cards(k);
      assert.deepEqual(c.map((x) => [x.kind, x.state, x.system, x.key, x.title, x.channels]), [
        ["notice", "open", "deadlineFailing", "deadline:retry:999", "Deadline retry 999 failed 3 times in a row", ["ch1", "ch2"]],
      ]);
      assert.equal(c[0]!.text, "It came due at 2026-11-02T08:00:01.000Z. Last error: invariant retry-deadline-names-waiting-run\n"
        + "It keeps being retried (from 5 s, doubling, at most every hour); other deadlines go on. This card closes when it succeeds. The hub's output has each failure in detail.");
      k.commit({ kind: "resolve", keyHash: K.owner, card: c[0]!.id, reason: null }); // the owner closes it: not asked again
    }
  }
  assert.deepEqual(gaps, [5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 3600, 3600]);
  assert.deepEqual(cards(k).map((c) => c.state), ["closed"], "one card per run of failures, not one per failure");
  assert.deepEqual(k.store.factsAfter(0, 1e6).filter((f) => f.kind === "dueFailed").length, 12);
  k.close();
});

test("a deadline that failed and then succeeds closes its card; so does one set anew that succeeds", () => {
  const k = new Clock(baseRules, start);
  // w2 was never seen: its offline deadline names no worker row.
  broken(k, { at: t0 + 1000, kind: "offline", ref: "w2" });
  for (let i = 0; i < 3; i++) {
    k.now = due(k, "offline:w2")!.at;
    assert.equal(k.tick()[0]!.status, 500);
  }
  assert.deepEqual(due(k, "offline:w2")!.failing?.error, "invariant offline-deadline-names-seen-worker");
  assert.deepEqual(cards(k).map((c) => [c.title, c.state]), [["Deadline offline w2 failed 3 times in a row", "open"]]);
  k.heartbeat([], K.worker2); // the worker shows up: its offline deadline is set anew, 10 min on
  assert.deepEqual(due(k, "offline:w2"), { at: k.now + 10 * 60_000, kind: "offline", ref: "w2" });
  k.minutes(10);
  assert.deepEqual(cards(k).map((c) => [c.title, c.state, c.result]), [
    ["Deadline offline w2 failed 3 times in a row", "closed", "No longer needed"],
    ["Worker w2 has not been seen for 10 minutes", "open", null],
  ]);
  k.close();
});

test("a cron deadline that failed runs for the time it first came due, not for the time of its retry", () => {
  const rules = { ...baseRules, rules: [...baseRules.rules, { name: "hourly", when: { cron: "0 * * * *" }, to: "bot" }] };
  const k = new Clock(rules, "2026-11-02T08:30:00Z");
  assert.deepEqual(due(k, "cron:hourly"), { at: Date.parse("2026-11-02T09:00:00Z"), kind: "cron", ref: "hourly" });
  k.now = Date.parse("2026-11-02T09:00:00Z");
  assert.deepEqual(k.commit({ kind: "dueFailed", due: "cron:hourly", error: "disk" }).body, { ok: true, changed: true });
  k.now = Date.parse("2026-11-02T10:20:00Z");
  k.tick();
  assert.deepEqual(k.store.view.where("events", "1").map(({ row }) => row.sid), ["cron:2026-11-02T10:00:00.000Z"]);
  assert.deepEqual(due(k, "cron:hourly"), { at: Date.parse("2026-11-02T11:00:00Z"), kind: "cron", ref: "hourly" });
  k.close();
});

test("the card names a deadline as a person reads it: a later timer's rule and key without the NULs of its key", () => {
  const k = new Clock(baseRules, start);
  k.event("e1");
  k.result(k.claim("c1").job!.run, { outcome: "done", later: [{ key: "recheck", at: new Date(t0 + 60_000).toISOString() }] });
  const key = "later:alerts\u0000\u0000recheck"; // rule, lane (none: the rule does not split lanes), key
  for (let i = 0; i < 3; i++) {
    k.now = due(k, key)!.at;
    k.commit({ kind: "dueFailed", due: key, error: "disk" });
  }
  assert.deepEqual(cards(k).map((c) => c.title), ["Deadline later alerts · recheck failed 3 times in a row"]);
  k.close();
});

test("a deadline of a kind nobody knows fails with due-kind-known", () => {
  const k = new Clock(baseRules, start);
  broken(k, { at: t0, kind: "bogus" as DueRow["kind"], ref: "x" }); // deliberately not a DueKind
  const [d] = k.tick();
  assert.deepEqual([d!.status, d!.body], [500, { error: "internal error: invariant due-kind-known" }]);
  assert.equal(due(k, "bogus:x")!.failing?.failures, 1);
  k.close();
});

test("a tick or a failure report for a deadline that is gone or not due yet changes nothing", () => {
  const k = new Clock(baseRules, start);
  k.event("e1");
  const job = k.claim("c1").job!;
  k.result(job.run, { outcome: "done", later: [{ key: "t", at: new Date(t0 + 60_000).toISOString() }] });
  const key = "later:alerts\u0000\u0000t";
  const seq = lastSeq(k);
  assert.deepEqual(k.commit({ kind: "tick", due: key }).body, { ok: true });
  assert.deepEqual(k.commit({ kind: "dueFailed", due: key, error: "e" }).body, { ok: true, changed: false });
  assert.deepEqual(k.commit({ kind: "dueFailed", due: "later:gone", error: "e" }).body, { ok: true, changed: false });
  assert.deepEqual([lastSeq(k), due(k, key)?.at], [seq, t0 + 60_000]);
  k.now = t0 + 60_000;
  assert.deepEqual(k.commit({ kind: "dueFailed", due: key, error: "e" }).body, { ok: true, changed: true }, "at its time it counts");
  k.close();
});

test("dueKeys takes at most `limit` keys at or before now; nextOfferAt looks only after the time given", () => {
  const k = new Clock(baseRules, start);
  for (const [ref, at] of [["b", t0 + 2], ["a", t0 + 2], ["c", t0 + 1], ["d", t0 + 3]] as const) broken(k, { at, kind: "bogus" as DueRow["kind"], ref });
  assert.deepEqual(dueKeys(k.store.view, t0 + 2, 10), ["bogus:c", "bogus:a", "bogus:b"]);
  assert.deepEqual(dueKeys(k.store.view, t0 + 2, 2), ["bogus:c", "bogus:a"]);
  k.commit({ kind: "rulesError", error: "x", missing: false }); // a card for ch1 and ch2, offerable now
  k.now += 1000;
  k.commit({ kind: "cardsNext", keyHash: K.channel }); // ch1's offer is leased for a minute
  assert.deepEqual([nextOfferAt(k.store.view), nextOfferAt(k.store.view, t0), nextOfferAt(k.store.view, t0 + 61_000)], [t0, t0 + 61_000, null]);
  k.close();
});
