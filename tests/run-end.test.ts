/**
 * How a run ends, row by row (protocol.md Agent：交回执, 失败时会怎样): which usage counts as reported, what a
 * receipt may resolve, and what ending a run leaves in its lane, sessions, deadlines and answered cards.
 * Pure: the Clock kernel on a real SQLite file.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Clock, K } from "./clock.js";
import { baseRules } from "./helpers.js";
import { laneKey } from "../src/kernel/tables.js";
import { hashKey } from "../src/kernel/credentials.js";

const start = "2026-11-02T08:00:00Z";
const lane = (k: Clock) => k.store.view.get("lanes", laneKey("alerts", ""))!;
const dues = (k: Clock) => k.store.view.where("due", "1").map(({ key }) => key);

test("usage counts as reported per kind: any token count for tokens, cost for cost", () => {
  const k = new Clock(baseRules, start);
  for (const [usage, reported] of [
    [{ input: 1 }, { tokens: true, cost: false }], [{ output: 1 }, { tokens: true, cost: false }], [{ cached: 1 }, { tokens: true, cost: false }],
    [{ cost: 0 }, { tokens: false, cost: true }], [{}, { tokens: false, cost: false }],
  ] as const) {
    const run = k.claimed(`u${JSON.stringify(usage)}`);
    k.result(run, { outcome: "done", usage });
    assert.deepEqual([k.run(run).usageReported, k.run(run).usage], [reported, usage], JSON.stringify(usage));
  }
  k.close();
});

test("ending a run frees its session, clears its deadlines, and records how the lane's last run ended", () => {
  const k = new Clock(baseRules, start);
  const run = k.claimed("e1", "s-1");
  assert.deepEqual(k.store.view.get("sessions", "s-1"), { run });
  assert.deepEqual(dues(k), [`lease:${run}`, "offline:w1"]);
  k.result(run, { outcome: "done" });
  assert.deepEqual(k.store.view.get("sessions", "s-1"), undefined);
  assert.deepEqual(dues(k), ["offline:w1"]);
  assert.deepEqual(lane(k).last, { run, session: "s-1", agent: "bot", stopped: false });
  const stopped = k.claimed("e2", "s-3");
  k.result(stopped, { outcome: "cancelled" });
  assert.deepEqual(lane(k).last, { run: stopped, session: "s-3", agent: "bot", stopped: true });
  // A run cancelled before any attempt leaves the lane's last run as it was.
  k.event("e3");
  const queued = k.state().runs.find((r: { state: string }) => r.state === "queued").id;
  k.commit({ kind: "cancel", keyHash: K.owner, run: queued });
  assert.deepEqual([k.run(queued).state, k.run(queued).stopRequested], ["cancelled", true]);
  assert.deepEqual(lane(k).last, { run: stopped, session: "s-3", agent: "bot", stopped: true });
  k.close();
});

test("a failing run's card closes as 'Stopped' when it is stopped and 'No longer needed' when it then succeeds", () => {
  for (const [outcome, result] of [["cancelled", "Stopped"], ["done", "No longer needed"]] as const) {
    const k = new Clock(baseRules, start);
    const run = k.claimed("f1");
    for (let i = 0; i < 3; i++) {
      k.result(run, { outcome: "failed", error: `boom ${i}` });
      k.advance(k.run(run).readyAt!);
      assert.equal(k.claim(`retry-${i}`).job!.run, run);
    }
    const card = k.run(run).retryCard!;
    assert.equal(k.store.view.get("cards", card)!.system, "failing");
    assert.deepEqual(dues(k).filter((d) => String(d).startsWith("retry")), []);
    k.result(run, { outcome });
    assert.deepEqual([k.store.view.get("cards", card)!.state, k.store.view.get("cards", card)!.result], ["closed", result], outcome);
    k.close();
  }
});

test("answers a run carried are 'Done' when it finishes, and stay answered when it is stopped", () => {
  for (const [outcome, state, result] of [["done", "closed", "Done"], ["nothing", "closed", "Done"], ["cancelled", "answered", null]] as const) {
    const k = new Clock(baseRules, start);
    const first = k.claimed("a1");
    k.result(first, { outcome: "done", ask: [{ title: "Q", options: ["a", "b"] }] });
    k.commit({ kind: "answer", keyHash: K.owner, card: 1, choice: 1, text: null, by: null, ref: null });
    const next = k.claim("c-next").job!.run;
    assert.deepEqual(k.run(next).answers, [1]);
    k.result(next, { outcome });
    const card = k.store.view.get("cards", 1)!;
    assert.deepEqual([card.state, card.result], [state, result], outcome);
    k.close();
  }
});

test("a receipt resolves only open cards of its rule's source and group made before its claim, and not its own", () => {
  const rules = {
    ...baseRules,
    rules: [
      baseRules.rules[0],
      { name: "crm-alerts", when: { source: "crm", types: ["ticket.*"] }, to: "bot2", group: "alerts" },
      { name: "shop-other", when: { source: "shop", types: ["other.*"] }, to: "bot2", group: "other" },
    ],
  };
  const k = new Clock(rules, start);
  k.commit({ kind: "keyNew", keyHash: null, local: true, keyKind: "source", name: "crm", newHash: hashKey("crm") });
  const first = k.claimed("r1");
  k.result(first, { outcome: "done", ask: [{ title: "A", options: ["x"] }, { title: "B", options: ["x"] }, { title: "C", options: ["x"] }] });
  k.commit({ kind: "resolve", keyHash: K.owner, card: 3, reason: null });
  for (const [keyHash, id, type] of [[hashKey("crm"), "t1", "ticket.x"], [K.source, "o1", "other.x"]] as const) {
    assert.equal(k.commit({ kind: "event", keyHash, event: { id, type } }).status, 200);
    const run = k.claim(`c-${id}`, K.worker2).job!.run;
    k.result(run, { outcome: "done", ask: [{ title: id, options: ["x"] }] });
  }
  const cards = (ids: number[]) => ids.map((id) => k.store.view.get("cards", id)!).map((c) => [c.source, c.group]);
  assert.deepEqual(cards([4, 5]), [["crm", "alerts"], ["shop", "other"]]);
  // Run 4 fails once with a notice, then its retry resolves that notice: a run does not resolve its own cards.
  const run = k.claimed("r2");
  k.result(run, { outcome: "failed", error: "x", notice: [{ title: "mine" }] });
  k.advance(k.run(run).readyAt!);
  assert.equal(k.claim("c-retry").job!.run, run);
  k.now += 1000;
  const d = k.result(run, {
    outcome: "done", ask: [{ title: "E", options: ["x"] }],
    resolve: [{ card: 1, reason: "fixed" }, { card: 99 }, { card: 3 }, { card: 4 }, { card: 5 }, { card: 6 }, { card: 7 }],
  });
  assert.deepEqual(d.body, { rejected: [
    { card: 99, reason: "没有这张卡片：99" }, { card: 3, reason: "这张卡片已经结案" },
    { card: 4, reason: "不在本轮核对范围" }, { card: 5, reason: "不在本轮核对范围" },
    { card: 6, reason: "不在本轮核对范围" }, { card: 7, reason: "不在本轮核对范围" },
  ] });
  const c1 = k.store.view.get("cards", 1)!;
  assert.deepEqual([c1.state, c1.result], ["closed", "No longer needed: fixed"]);
  // Another run's open card of the same rule, made before this claim: in scope.
  const third = k.claimed("r3");
  const d2 = k.result(third, { outcome: "done", resolve: [{ card: 2 }] });
  assert.deepEqual(d2.body, { rejected: [] });
  assert.equal(k.store.view.get("cards", 2)!.state, "closed");
  k.close();
});

test("a run stopped while it waits for its retry leaves no retry deadline behind", () => {
  const k = new Clock(baseRules, start);
  const run = k.claimed("w1");
  k.result(run, { outcome: "failed", error: "x" });
  assert.deepEqual([k.run(run).state, dues(k).includes(`retry:${run}`)], ["waiting", true]);
  k.commit({ kind: "cancel", keyHash: K.owner, run });
  assert.deepEqual([k.run(run).state, dues(k).includes(`retry:${run}`)], ["cancelled", false]);
  k.close();
});

test("a card made after a run was claimed is outside its receipt's scope; one made in the same millisecond is inside", () => {
  const rules = { ...baseRules, rules: [{ ...baseRules.rules[0], parallel: 2 }, baseRules.rules[1]] };
  const k = new Clock(rules, start);
  k.event("b1", { subject: "b" });
  k.result(k.claim("c-b1").job!.run, { outcome: "done", ask: [{ title: "same millisecond", options: ["x"] }] });
  k.event("a1", { subject: "a" });
  const a = k.claim("c-a1").job!.run;
  k.now += 1;
  k.event("b2", { subject: "b" });
  k.result(k.claim("c-b2").job!.run, { outcome: "done", ask: [{ title: "later", options: ["x"] }] });
  const d = k.result(a, { outcome: "done", resolve: [{ card: 1 }, { card: 2 }] });
  assert.deepEqual(d.body, { rejected: [{ card: 2, reason: "不在本轮核对范围" }] });
  assert.deepEqual([1, 2].map((id) => k.store.view.get("cards", id)!.state), ["closed", "open"]);
  k.close();
});

test("a failed attempt waits on its session, and work that came meanwhile joins it (manual, deepest hops)", () => {
  const k = new Clock(baseRules, start);
  const run = k.claimed("m1", "s-1");
  k.event("m2", { hops: 3 });
  assert.equal(k.commit({ kind: "runNow", keyHash: K.owner, rule: "alerts", subject: null, reason: null }).status, 200);
  const newer = lane(k).queued!;
  assert.deepEqual([k.run(newer).manual, k.run(newer).hops, k.run(run).manual, k.run(run).hops], [true, 3, false, 0]);
  k.result(run, { outcome: "failed", summary: "only a summary" });
  const r = k.run(run);
  assert.deepEqual(dues(k), ["offline:w1", `retry:${run}`], "the lease deadline went with the attempt");
  k.now = r.readyAt!;
  const [due] = k.tick();
  assert.deepEqual([k.run(run).state, due!.wake?.workers], ["queued", true], "a retry that comes due wakes the workers");
  assert.deepEqual([r.state, r.error, r.sessionHint, r.manual, r.hops, r.events.length], ["waiting", "only a summary", { session: "s-1", agent: "bot" }, true, 3, 3]);
  assert.deepEqual([k.run(newer).state, k.run(newer).outcome, k.run(newer).mergedInto, lane(k).queued], ["cancelled", "cancelled", run, run]);
  assert.deepEqual(k.store.view.get("sessions", "s-1"), undefined);
  k.close();
});

test("the tenth failure in a row gives up with a notice; a failure with neither error nor summary reads 'failed'", () => {
  const k = new Clock(baseRules, start);
  const run = k.claimed("g1");
  for (let i = 1; i <= 10; i++) {
    if (i > 1) {
      k.advance(k.run(run).readyAt!);
      assert.equal(k.claim(`g-${i}`).job!.run, run);
    }
    k.result(run, { outcome: "failed" });
  }
  const r = k.run(run);
  assert.deepEqual([r.state, r.error, r.failures], ["cancelled", "failed", 10]);
  const cards = k.state().cards.concat(k.state().recentCards).map((c: any) => [c.title, c.text]);
  const gaveUp = k.store.view.where("cards", "1").map(({ row }) => row).find((c) => c.system === "gaveUp")!;
  assert.deepEqual([gaveUp.title, gaveUp.text, gaveUp.run], ['"alerts" failed 10 times in a row; no more retries', `Run ${run} is now cancelled: failed`, run]);
  const failing = k.store.view.where("cards", "1").map(({ row }) => row).find((c) => c.system === "failing")!;
  assert.deepEqual([failing.title, failing.text.split("\n")[0]], ['"alerts" failed 3 times in a row', `Run ${run}: failed`]);
  assert.ok(cards.length >= 2);
  k.close();
});

test("a stopped run that reports failed ends cancelled; notices of a failed attempt follow the rule's tell", () => {
  const k = new Clock(baseRules, start);
  const run = k.claimed("s1");
  const stop = k.commit({ kind: "cancel", keyHash: K.owner, run });
  assert.deepEqual([k.run(run).stopRequested, stop.wake?.workers], [true, true]);
  assert.deepEqual(k.commit({ kind: "cancel", keyHash: K.owner, run }).body, { ok: true, changed: false, state: "stopping" }, "asked twice");
  k.result(run, { outcome: "failed", error: "killed" });
  assert.deepEqual([k.run(run).state, k.run(run).failures], ["cancelled", 0]);
  const gaveUp = k.claimed("s3");
  k.result(gaveUp, { outcome: "cancelled", ask: [{ title: "never asked", options: ["a"] }] });
  assert.deepEqual([k.run(gaveUp).state, k.store.view.where("cards", "1")], ["cancelled", []], "a cancelled receipt applies nothing");
  const queued = k.claimed("s2");
  k.result(queued, { outcome: "failed", error: "x", notice: [{ title: "heads up" }] });
  assert.deepEqual(k.store.view.where("cards", "1").map(({ row }) => row.title), ["heads up"]);
  k.close();
  const never = new Clock({ ...baseRules, rules: [{ ...baseRules.rules[0], tell: "never" }] }, start);
  const r = never.claimed("n1");
  never.result(r, { outcome: "failed", error: "x", notice: [{ title: "heads up" }] });
  assert.deepEqual(never.store.view.where("cards", "1"), []);
  never.close();
});

test("tell always: a done run with no card of its own gets one 'is done' notice with its summary", () => {
  const k = new Clock({ ...baseRules, rules: [{ ...baseRules.rules[0], tell: "always" }] }, start);
  k.result(k.claimed("t1"), { outcome: "done", summary: "all fixed" });
  k.result(k.claimed("t2"), { outcome: "done", ask: [{ title: "Q", options: ["a"] }] });
  k.result(k.claimed("t3"), { outcome: "nothing", summary: "nothing to do" });
  // Asking again what is still open makes no card, so the run gets its "is done" notice.
  k.result(k.claimed("t4"), { outcome: "done", summary: "asked again", ask: [{ title: "Q", options: ["a"] }] });
  k.result(k.claimed("t5"), { outcome: "done" });
  const cards = k.store.view.where("cards", "1").map(({ row }) => [row.title, row.text, row.fyi]);
  assert.deepEqual(cards, [
    ['"alerts" is done', "all fixed", true], ["Q", "", false], ['"alerts" is done', "asked again", true], ['"alerts" is done', "", true],
  ]);
  k.close();
});

test("a later timer can be cancelled; when it comes due its lane runs again on the session of the run that set it", () => {
  const k = new Clock(baseRules, start);
  const at = new Date(Date.parse(start) + 3_600_000).toISOString();
  const run = k.claimed("l1", "s-9");
  k.result(run, { outcome: "done", session: "s-9", later: [{ key: "check", at, about: "look again" }, { key: "gone", at }] });
  const second = k.claimed("l2");
  k.result(second, { outcome: "done", later: [{ key: "gone", cancel: true }] });
  assert.deepEqual(k.store.view.where("timers", "1").map(({ row }) => (row as { key: string }).key), ["check"]);
  assert.deepEqual(dues(k).filter((d) => String(d).startsWith("later")).length, 1);
  k.advance(Date.parse(at));
  const next = k.state().runs.find((r: { state: string }) => r.state === "queued");
  const row = k.run(next.id);
  assert.deepEqual([row.sessionHint, row.timers.map((t) => [t.key, t.about, t.run])], [{ session: "s-9", agent: "bot" }, [["check", "look again", run]]]);
  const ev = k.store.view.get("events", row.events[0]!)!;
  assert.deepEqual([ev.sid, ev.type, ev.routed, ev.summary], [`later::check:${at}`, "timer.due", ["alerts"], "look again"]);
  k.close();
});

test("a run not reported for five minutes becomes uncertain with a notice naming its worker", () => {
  const k = new Clock(baseRules, start);
  const run = k.claimed("x1");
  k.advance(k.now + 5 * 60_000);
  const card = k.store.view.where("cards", "1").map(({ row }) => row)[0]!;
  assert.deepEqual([k.run(run).state, card.system, card.key, card.title, card.text], [
    "uncertain", "uncertain", `uncertain:${run}`, `Run ${run} (alerts) is uncertain`,
    "Worker w1 has not reported this run for 5 minutes; its group is released. A later result is still accepted.",
  ]);
  k.close();
});

test("when a rule goes, its queued runs are cancelled with a notice; other rules' runs stay", () => {
  const k = new Clock(baseRules, start);
  k.event("o1");
  k.commit({ kind: "keyNew", keyHash: null, local: true, keyKind: "source", name: "crm", newHash: hashKey("crm") });
  k.commit({ kind: "event", keyHash: hashKey("crm"), event: { id: "t1", type: "ticket.x" } });
  k.loadRules({ ...baseRules, rules: [baseRules.rules[1]] });
  const runs = k.state().runs.map((r: { id: number; state: string; rule: string }) => [r.id, r.rule, r.state]).sort();
  assert.deepEqual(runs, [[1, "alerts", "cancelled"], [2, "per-subject", "queued"]]);
  const card = k.store.view.get("cards", 1)!;
  assert.deepEqual([card.system, card.title, card.run, card.rule, card.lane], ["ruleGone", 'Rule "alerts" is gone; run 1 is cancelled', 1, null, ""]);
  k.close();
});

test("a carried answer the owner already closed stays as the owner left it; a failed run of a rule that went ends cancelled", () => {
  const k = new Clock(baseRules, start);
  k.result(k.claimed("a1"), { outcome: "done", ask: [{ title: "Q", options: ["a", "b"] }] });
  k.commit({ kind: "answer", keyHash: K.owner, card: 1, choice: 0, text: null, by: null, ref: null });
  const next = k.claim("c-next").job!.run;
  k.commit({ kind: "resolve", keyHash: K.owner, card: 1, reason: "handled by hand" });
  k.result(next, { outcome: "done" });
  assert.equal(k.store.view.get("cards", 1)!.result, "No longer needed: handled by hand");
  const running = k.claimed("a2");
  k.loadRules({ ...baseRules, rules: [baseRules.rules[1]] });
  k.result(running, { outcome: "failed", error: "x" });
  assert.deepEqual([k.run(running).state, k.run(running).failures], ["cancelled", 0]);
  k.close();
});
