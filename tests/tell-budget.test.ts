/** POST /v1/tell and elsewhere tasks; budgets that pause a rule (issue 3). */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Clock, K } from "./clock.js";
import { baseRules, hubFixture } from "./helpers.js";

const elsewhereRules = {
  ...baseRules,
  elsewhere: [
    { name: "weekly", source: "shop", to: "bot", cron: "0 6 * * 0", where: "the Claude app", cwd: "/tmp", prompt: "Go on from the answer." },
    { name: "nocwd", to: "bot", where: "somewhere" },
    { name: "other-worker", to: "bot2", cwd: "/tmp", skill: "x" },
  ],
};

test("tell: an fyi notice once per key; a source speaks for itself only", () => {
  const k = new Clock(elsewhereRules, "2026-11-02T08:00:00Z");
  const a = k.commit({ kind: "tell", keyHash: K.source, body: { key: "weekly-44", text: "report is ready" } });
  assert.deepEqual(a.body, { card: 1, duplicate: false });
  const b = k.commit({ kind: "tell", keyHash: K.source, body: { key: "weekly-44", text: "again" } });
  assert.deepEqual(b.body, { card: 1, duplicate: true });
  const card = k.state().recentCards[0];
  assert.deepEqual([card.kind, card.fyi, card.state, card.title, card.text], ["notice", true, "closed", "Shop", "report is ready"]);
  const task = k.commit({ kind: "tell", keyHash: K.source, body: { task: "weekly", key: "x", text: "t" } });
  assert.equal(task.status, 403);
  const noKey = k.commit({ kind: "tell", keyHash: K.source, body: { text: "t" } });
  assert.deepEqual([noKey.status, noKey.body], [400, { error: "key: required" }]);
  k.close();
});

test("tell from a worker: only for its own tasks; ask needs cwd; the answer wakes the task's agent in its folder", () => {
  const k = new Clock(elsewhereRules, "2026-11-02T08:00:00Z");
  const ask = { title: "Delete old branches?", text: "12 branches", options: ["yes", "no"], key: "branches" };
  assert.equal(k.commit({ kind: "tell", keyHash: K.worker, body: { task: "nocwd", ask } }).status, 400);
  assert.equal(k.commit({ kind: "tell", keyHash: K.worker, body: { task: "other-worker", key: "k", text: "t" } }).status, 403);
  assert.equal(k.commit({ kind: "tell", keyHash: K.worker, body: { task: "missing", key: "k", text: "t" } }).status, 404);
  assert.equal(k.commit({ kind: "tell", keyHash: K.worker, body: { key: "k", text: "t" } }).status, 400);
  const r = k.commit({ kind: "tell", keyHash: K.worker, body: { task: "weekly", ask } });
  assert.deepEqual(r.body, { card: 1, duplicate: false });
  assert.deepEqual(k.commit({ kind: "tell", keyHash: K.worker, body: { task: "weekly", ask } }).body, { card: 1, duplicate: true });
  k.commit({ kind: "answer", keyHash: K.owner, card: 1, choice: 0, text: null, by: null, ref: null });
  const job = k.claim("c1").job!;
  assert.equal(job.rule.name, "weekly");
  assert.equal(job.rule.cwd, "/tmp");
  assert.equal(job.rule.prompt, "Go on from the answer.");
  assert.equal(job.session, null, "never the task's own session");
  assert.deepEqual(job.context.answers.map((a) => [a.card, a.choice]), [[1, 0]]);
  k.result(job.run, { outcome: "done" });
  assert.equal(k.state().recentCards.find((c) => c.id === 1)!.result, "Done");
  k.close();
});

const budgetRules = {
  ...baseRules,
  rules: [{ ...baseRules.rules[0], budget: { cost: 1, per: "day" } }],
};

test("a run that takes its rule past the budget pauses it (by budget) with one ask; claimed runs finish", () => {
  const k = new Clock(budgetRules, "2026-11-02T08:00:00Z");
  k.event("e1");
  const j1 = k.claim("c1").job!;
  k.result(j1.run, { outcome: "done", usage: { cost: 0.6 } });
  assert.deepEqual(k.state().pauses, []);
  k.event("e2");
  const j2 = k.claim("c2").job!;
  const r = k.result(j2.run, { outcome: "done", usage: { cost: 0.5, input: 100, output: 20 } });
  assert.deepEqual(r.facts.map((f) => f.kind), ["result", "pauseRule"]);
  const s = k.state();
  assert.deepEqual(s.pauses.map((p) => [p.name, p.by]), [["alerts", "budget"]]);
  assert.equal(s.cards.length, 1);
  assert.equal(s.cards[0].title, '"alerts" used up today\'s budget and is paused');
  assert.deepEqual(s.cards[0].options, ["Resume for the rest of this period", "Keep paused"]);
  k.event("e3");
  assert.equal(k.claim("c3").job, null, "paused by budget");
  // resume for the rest of the day: more spending does not pause it again today
  k.commit({ kind: "answer", keyHash: K.owner, card: s.cards[0].id, choice: 0, text: null, by: null, ref: null });
  assert.deepEqual(k.state().pauses, []);
  assert.equal(k.claim("c4").job, null, "the event that came while paused is not made up");
  k.event("e3b");
  const j3 = k.claim("c4b").job!;
  k.result(j3.run, { outcome: "done", usage: { cost: 5 } });
  assert.deepEqual(k.state().pauses, []);
  // the next day the budget counts again
  k.advance("2026-11-03T08:00:00Z");
  k.event("e4");
  const j4 = k.claim("c5").job!;
  k.result(j4.run, { outcome: "done", usage: { cost: 1.5 } });
  assert.deepEqual(k.state().pauses.map((p) => p.by), ["budget"]);
  k.close();
});

test("resuming a budget pause by hand resumes it for the rest of the period and closes the card", () => {
  const k = new Clock(budgetRules, "2026-11-02T08:00:00Z");
  k.event("e1");
  const j = k.claim("c1").job!;
  k.result(j.run, { outcome: "done", usage: { cost: 2 } });
  assert.equal(k.state().cards.length, 1);
  k.commit({ kind: "resume", keyHash: K.owner, rule: "alerts" });
  assert.deepEqual(k.state().cards, []);
  assert.equal(k.state().recentCards[0].result, "Resumed; no budget pause again this period");
  k.event("e2");
  const j2 = k.claim("c2").job!;
  k.result(j2.run, { outcome: "done", usage: { cost: 2 } });
  assert.deepEqual(k.state().pauses, [], "no second budget pause in the same period");
  k.close();
});

test("keep paused closes the budget card and leaves the pause", () => {
  const k = new Clock(budgetRules, "2026-11-02T08:00:00Z");
  k.event("e1");
  const j = k.claim("c1").job!;
  k.result(j.run, { outcome: "done", usage: { cost: 2 } });
  const card = k.state().cards[0];
  k.commit({ kind: "answer", keyHash: K.owner, card: card.id, choice: 1, text: null, by: null, ref: null });
  assert.equal(k.state().pauses.length, 1);
  assert.equal(k.state().recentCards[0].result, "Kept paused");
  k.close();
});

/** A hub whose rule "alerts" ($1 a day) went past its budget at 08:00 on 2026-11-02: paused by budget, its card open. */
function overBudget(): { k: Clock; card: number } {
  const k = new Clock(budgetRules, "2026-11-02T08:00:00Z");
  k.event("e1");
  const j = k.claim("c1").job!;
  k.result(j.run, { outcome: "done", usage: { cost: 2 } });
  return { k, card: k.state().cards[0].id };
}

/** Runs one more event of "alerts" to its end with `cost`; returns the budget pauses and open budget cards after it. */
function spendAgain(k: Clock, id: string, cost: number) {
  k.event(id);
  const j = k.claim(`c-${id}`).job!;
  k.result(j.run, { outcome: "done", usage: { cost } });
  const s = k.state();
  return { pauses: s.pauses.map((p) => p.by), cards: s.cards.map((c) => c.title) };
}

test("resume after the budget card was answered 'Keep paused' or resolved still resumes for the rest of the period", () => {
  for (const close of ["keep", "resolve"] as const) {
    const { k, card } = overBudget();
    if (close === "keep") k.commit({ kind: "answer", keyHash: K.owner, card, choice: 1, text: null, by: null, ref: null });
    else k.commit({ kind: "resolve", keyHash: K.owner, card, reason: null });
    k.minutes(30);
    const r = k.commit({ kind: "resume", keyHash: K.owner, rule: "alerts" });
    assert.deepEqual([r.status, r.body], [200, { changed: true, rule: "alerts" }], close);
    assert.deepEqual(spendAgain(k, "e2", 5), { pauses: [], cards: [] }, `${close}: no budget pause again today`);
    k.advance("2026-11-03T00:00:00Z");
    assert.deepEqual(spendAgain(k, "e3", 1), { pauses: ["budget"], cards: ['"alerts" used up today\'s budget and is paused'] }, `${close}: the next day counts again`);
    k.close();
  }
});

test("a budget pause the owner gave an `until`: when it comes the rule resumes for the rest of the period and the card closes as resumed", () => {
  const { k, card } = overBudget();
  k.commit({ kind: "pause", keyHash: K.owner, rule: "alerts", reason: "after lunch", until: "2026-11-02T13:00:00Z" });
  k.advance("2026-11-02T13:00:00Z");
  const s = k.state();
  assert.deepEqual([s.pauses, s.cards.map((c) => c.title)], [[], ["Worker w1 has not been seen for 10 minutes"]]);
  assert.equal(s.recentCards.find((c) => c.id === card)!.result, "Resumed; no budget pause again this period");
  assert.deepEqual(spendAgain(k, "e2", 5), { pauses: [], cards: [] });
  k.close();
});

test("resuming the owner's own pause of a budgeted rule gives no exemption from its budget", () => {
  const k = new Clock(budgetRules, "2026-11-02T08:00:00Z");
  k.commit({ kind: "pause", keyHash: K.owner, rule: "alerts", reason: null, until: null });
  k.commit({ kind: "resume", keyHash: K.owner, rule: "alerts" });
  assert.deepEqual(spendAgain(k, "e1", 2), { pauses: ["budget"], cards: ['"alerts" used up today\'s budget and is paused'] });
  k.close();
});

test("resume of a budget pause whose rule no longer has a budget just resumes it", () => {
  const { k, card } = overBudget();
  k.commit({ kind: "answer", keyHash: K.owner, card, choice: 1, text: null, by: null, ref: null });
  k.loadRules(baseRules);
  k.commit({ kind: "resume", keyHash: K.owner, rule: "alerts" });
  assert.deepEqual(k.state().pauses, []);
  k.loadRules(budgetRules);
  assert.deepEqual(spendAgain(k, "e2", 5).pauses, ["budget"], "no exemption was recorded for a rule without a budget");
  k.close();
});

test("POST /v1/tell over HTTP and check of budgets", async () => {
  const f = await hubFixture(elsewhereRules);
  try {
    const r = await f.call("POST", "/v1/tell", f.keys.source, { key: "k1", text: "hello" });
    assert.deepEqual([r.status, r.body], [200, { card: 1, duplicate: false }]);
    const bad = await f.call("POST", "/v1/tell", f.keys.channel, { key: "k1", text: "hello" });
    assert.equal(bad.status, 403);
    const unknown = await f.call("POST", "/v1/tell", f.keys.source, { key: "k", text: "t", extra: 1 });
    assert.deepEqual([unknown.status, unknown.body], [400, { error: "extra: unknown field" }]);
  } finally {
    await f.close();
  }
});
