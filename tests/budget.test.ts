/**
 * Budgets to the letter (issue 3; README "Time, failures and control"): what is stored per rule and period, the exact
 * limits, the card's words, two budgeted rules side by side, and "resume for the rest of this period" ending with it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Clock, K } from "./clock.js";
import { baseRules } from "./helpers.js";
import { shown } from "../src/i18n/messages.js";

const day = Date.parse("2026-11-02T00:00:00Z");
const nextDay = Date.parse("2026-11-03T00:00:00Z");

function rulesWith(budget: object, second: object | null = null) {
  return {
    ...baseRules,
    rules: [
      { ...baseRules.rules[0], budget },
      ...(second ? [{ name: "alerts-b", when: { source: "shop", types: ["page.*"] }, to: "bot", budget: second }] : []),
    ],
  };
}

/** One event of `type`, claimed and finished with `usage`; returns the result's decision. */
function spend(k: Clock, id: string, usage: object, type = "alert.x") {
  k.event(id, { type });
  const job = k.claim(`c-${id}`).job!;
  return k.result(job.run, { outcome: "done", usage });
}

const spendRows = (d: { facts: { changes: unknown[][] }[] }) => d.facts.flatMap((f) => f.changes).filter((c) => c[0] === "spend");

test("usage is summed per rule and day under its own key; a tokens budget pauses at exactly its limit", () => {
  const k = new Clock(rulesWith({ tokens: 1000, per: "day" }), "2026-11-02T08:00:00Z");
  const first = spend(k, "e1", { input: 600, output: 300, cost: 0.25 });
  assert.deepEqual(spendRows(first), [["spend", `alerts\u0000${day}`, { rule: "alerts", start: day, end: nextDay, cost: 0.25, tokens: 900, rounds: 1 }]]);
  assert.deepEqual(k.state().pauses, []);
  const second = spend(k, "e2", { input: 60, output: 40 });
  assert.deepEqual(spendRows(second), [["spend", `alerts\u0000${day}`, { rule: "alerts", start: day, end: nextDay, cost: 0.25, tokens: 1000, rounds: 2 }]]);
  assert.deepEqual(second.facts.map((f) => f.kind), ["result", "pauseRule"]);
  const [card] = k.state().cards;
  assert.deepEqual([card.kind, card.title, card.options, card.recommend, card.lane, card.about], [
    "ask", '"alerts" used up today\'s budget and is paused', ["Resume for the rest of this period", "Keep paused"], 1, "", `alerts\u0000${nextDay}`,
  ]);
  // The period's end is a time each client says in its reader's zone; the hub's words say it in the rules' zone, and
  // what to do is the card's own option, not a command (issue 30).
  assert.equal(card.text, "Used 1000 tokens of 1000 tokens. Runs already claimed finish normally. This period ends 2026-11-03 00:00 (UTC time). To let the rule run again before then, choose “Resume for the rest of this period”.");
  assert.deepEqual(card.texts?.text?.params.until, { code: "time.at", params: { at: "2026-11-03T00:00:00.000Z", time: "2026-11-03 00:00", zone: "UTC" } });
  assert.equal(shown("en", card.texts?.text ?? {}, "", "Asia/Shanghai"), "Used 1000 tokens of 1000 tokens. Runs already claimed finish normally. This period ends 2026-11-03 08:00 (Asia/Shanghai time). To let the rule run again before then, choose “Resume for the rest of this period”.");
  // A card made before keeps its words: `budget.text` with its UTC time, as written then.
  assert.equal(shown("en", { code: "budget.text", params: { used: "$1.00", limit: "$1", until: "2026-11-03T00:00:00.000Z" } }, "", "Asia/Shanghai"),
    "Used $1.00 of $1. Runs already claimed finish normally. This period ends at 2026-11-03T00:00:00.000Z. Resuming with agent-autoloop resume also resumes it for the rest of the period.");
  assert.equal(shown("zh", card.texts?.text ?? {}, "", "America/New_York"), "已用 1000 个词元，预算 1000 个词元。已经领走的这一轮照常做完。这个周期到 2026-11-02 19:00（America/New_York 时间）结束。想在那之前让规则接着运行，选「这个周期内恢复（不再因预算暂停）」。");
  // The unit is a text of its own (issue 27 #2): a Chinese client shows 词元, not the English word.
  assert.match(shown("zh", card.texts?.text ?? {}, card.text), /^已用 1000 个词元，预算 1000 个词元。/);
  // Its key, as the decision's fact writes it: one budget card per rule and period, found again by it (resume).
  const written = second.facts.flatMap((f) => f.changes).filter(([table, id]) => table === "cards" && id === card.id);
  assert.deepEqual(written.map(([, , row]) => (row as { key: string }).key), [`budget:alerts:${day}`]);
  k.close();
});

test("a cost budget pauses at exactly its limit; with both limits the card names both", () => {
  const k = new Clock(rulesWith({ cost: 1, tokens: 5000, per: "day" }), "2026-11-02T08:00:00Z");
  spend(k, "e1", { cost: 0.5, input: 4 });
  assert.deepEqual(k.state().pauses, []);
  spend(k, "e2", { cost: 0.5, output: 6 });
  assert.deepEqual(k.state().pauses.map((p) => [p.name, p.by, p.reason, p.until]), [["alerts", "budget", "超出预算", null]]);
  assert.match(k.state().cards[0].text, /^Used \$1\.00 · 10 tokens of \$1 · 5000 tokens\. /);
  assert.match(shown("zh", k.state().cards[0].texts?.text ?? {}, ""), /^已用 \$1\.00 · 10 个词元，预算 \$1 · 5000 个词元。/);
  k.close();
});

test("a week's budget: its own title and period, Monday to Monday", () => {
  const k = new Clock(rulesWith({ cost: 1, per: "week" }), "2026-11-04T08:00:00Z");
  const d = spend(k, "e1", { cost: 1 });
  const monday = Date.parse("2026-11-02T00:00:00Z");
  const nextMonday = Date.parse("2026-11-09T00:00:00Z");
  assert.deepEqual(spendRows(d), [["spend", `alerts\u0000${monday}`, { rule: "alerts", start: monday, end: nextMonday, cost: 1, tokens: 0, rounds: 1 }]]);
  const [card] = k.state().cards;
  assert.equal(card.title, '"alerts" used up this week\'s budget and is paused');
  assert.equal(card.text, "Used $1.00 of $1. Runs already claimed finish normally. This period ends 2026-11-09 00:00 (UTC time). To let the rule run again before then, choose “Resume for the rest of this period”.");
  k.close();
});

test("each day and each rule counts on its own; resuming one rule's budget does not excuse another", () => {
  const k = new Clock(rulesWith({ cost: 1, per: "day" }, { cost: 1, per: "day" }), "2026-11-02T08:00:00Z");
  spend(k, "e1", { cost: 0.6 });
  k.advance(nextDay + 8 * 3600_000);
  spend(k, "e2", { cost: 0.6 });
  assert.deepEqual(k.state().pauses, [], "0.6 yesterday and 0.6 today are under a daily 1");
  spend(k, "e3", { cost: 0.6 });
  const [a] = k.state().cards;
  k.commit({ kind: "answer", keyHash: K.owner, card: a.id, choice: 0, text: null, by: null, ref: null });
  assert.deepEqual(k.state().pauses, []);
  spend(k, "p1", { cost: 2 }, "page.x");
  assert.deepEqual(k.state().pauses.map((p) => [p.name, p.by]), [["alerts-b", "budget"]], "alerts-b was not excused by alerts' answer");
  k.close();
});

test("resume for the rest of the period ends with the period, to the millisecond", () => {
  const k = new Clock(rulesWith({ cost: 1, per: "day" }), "2026-11-02T08:00:00Z");
  spend(k, "e1", { cost: 1 });
  k.commit({ kind: "answer", keyHash: K.owner, card: k.state().cards[0].id, choice: 0, text: null, by: null, ref: null });
  k.advance(nextDay - 1);
  spend(k, "e2", { cost: 5 });
  assert.deepEqual(k.state().pauses, [], "still the resumed period");
  k.advance(nextDay);
  spend(k, "e3", { cost: 1 });
  assert.deepEqual(k.state().pauses.map((p) => p.by), ["budget"], "a new period: the budget pauses again");
  k.close();
});

test("resume by hand answers only this rule's open budget card, whatever other cards are open", () => {
  const k = new Clock(rulesWith({ cost: 1, per: "day" }, { cost: 1, per: "day" }), "2026-11-02T08:00:00Z");
  k.event("q1");
  const asking = k.claim("cq").job!;
  // an ordinary question whose `about` happens to look like a budget card's
  k.result(asking.run, { outcome: "done", ask: [{ title: "Which?", options: ["a", "b"], about: `alerts\u0000${nextDay}` }] });
  spend(k, "p1", { cost: 1 }, "page.x");
  spend(k, "e1", { cost: 1 });
  assert.deepEqual(k.state().cards.map((c) => c.title), ["Which?", '"alerts-b" used up today\'s budget and is paused', '"alerts" used up today\'s budget and is paused']);
  k.commit({ kind: "resume", keyHash: K.owner, rule: "alerts" });
  assert.deepEqual(k.state().cards.map((c) => c.title), ["Which?", '"alerts-b" used up today\'s budget and is paused']);
  assert.deepEqual(k.state().pauses.map((p) => p.name), ["alerts-b"]);
  k.close();
});

test("resume on the budget card leaves a pause the owner set since", () => {
  const k = new Clock(rulesWith({ cost: 1, per: "day" }), "2026-11-02T08:00:00Z");
  spend(k, "e1", { cost: 1 });
  const card = k.state().cards[0];
  // the owner limits the pause to an hour; it ends; then the owner pauses the rule again, by hand
  k.commit({ kind: "pause", keyHash: K.owner, rule: "alerts", reason: null, until: new Date(k.now + 3600_000).toISOString() });
  k.advance(k.now + 2 * 3600_000);
  assert.deepEqual(k.state().pauses, []);
  k.commit({ kind: "pause", keyHash: K.owner, rule: "alerts", reason: "deploy", until: null });
  k.commit({ kind: "answer", keyHash: K.owner, card: card.id, choice: 0, text: null, by: null, ref: null });
  assert.deepEqual(k.state().pauses.map((p) => [p.name, p.by, p.reason]), [["alerts", "owner", "deploy"]]);
  assert.equal(k.state().recentCards[0].result, "Resumed; no budget pause again this period");
  k.close();
});

test("a budget card still open under a pause the owner set (as hubs before resume answered it left it): resume on it leaves that pause", () => {
  const k = new Clock(rulesWith({ cost: 1, per: "day" }), "2026-11-02T08:00:00Z");
  spend(k, "e1", { cost: 1 });
  const card = k.state().cards[0];
  // Today a budget card is open only while its budget pause stands; an older hub's log can hold the card open under
  // the owner's own pause (its resume by hand did not answer the card): written here as that log would have it.
  k.appendRaw("pauseRule", [["pauses", "alerts", { by: "owner", reason: "deploy", since: k.now, until: null }]]);
  const d = k.commit({ kind: "answer", keyHash: K.owner, card: card.id, choice: 0, text: null, by: null, ref: null });
  assert.equal(d.status, 200);
  assert.deepEqual(k.state().pauses.map((p) => [p.name, p.by, p.reason]), [["alerts", "owner", "deploy"]]);
  assert.deepEqual(d.facts.flatMap((f) => f.changes).filter((c) => c[0] === "spend"), [["spend", "ok\u0000alerts", { rule: "alerts", until: nextDay }]]);
  assert.equal(k.state().recentCards[0].result, "Resumed; no budget pause again this period");
  k.close();
});

test("a usage too large to add pauses a budgeted rule and stays a number in its period's row", () => {
  const k = new Clock(rulesWith({ tokens: 1000, cost: 5, per: "day" }), "2026-11-02T08:00:00Z");
  const d = spend(k, "e1", { input: Number.MAX_VALUE, output: Number.MAX_VALUE, cost: Number.MAX_VALUE * 0.75 });
  // MAX_VALUE + MAX_VALUE is Infinity, which JSON stores as null: the row keeps the largest number instead.
  assert.deepEqual(spendRows(d), [["spend", `alerts\u0000${day}`, { rule: "alerts", start: day, end: nextDay, cost: Number.MAX_VALUE * 0.75, tokens: Number.MAX_VALUE, rounds: 1 }]]);
  assert.deepEqual(d.facts.map((f) => f.kind), ["result", "pauseRule"]);
  // Costs that add up past the largest number, under a tokens budget that is not reached: still a number.
  const m = new Clock(rulesWith({ tokens: 1e300, per: "day" }), "2026-11-02T08:00:00Z");
  spend(m, "e1", { input: 1, cost: Number.MAX_VALUE * 0.75 });
  const two = spend(m, "e2", { input: 1, cost: Number.MAX_VALUE * 0.75 });
  assert.deepEqual(spendRows(two), [["spend", `alerts\u0000${day}`, { rule: "alerts", start: day, end: nextDay, cost: Number.MAX_VALUE, tokens: 2, rounds: 2 }]]);
  assert.deepEqual(two.facts.map((f) => f.kind), ["result"]);
});

test("GET /v1/state shows each rule's budget and what its period counted; a new period starts from nothing", () => {
  // 2026-11-04 is a Wednesday: the week began on Monday 2026-11-02 and ends on Monday 2026-11-09 (UTC).
  const k = new Clock(rulesWith({ cost: 10, per: "week" }, { tokens: 5000, per: "day" }), "2026-11-04T08:00:00Z");
  spend(k, "e1", { input: 100, output: 20, cost: 0.25 });
  spend(k, "e2", { input: 1000, output: 200 }, "page.x");
  spend(k, "e3", { cost: 0.5 });
  k.event("e4");
  k.result(k.claim("c-e4").job!.run, { outcome: "done" });
  const budgets = () => k.state().lines.map((l) => [l.name, l.budget]);
  assert.deepEqual(budgets(), [
    ["alerts", { cost: 10, tokens: null, per: "week", spentCost: 0.75, spentTokens: 120, periodEnd: "2026-11-09T00:00:00.000Z" }],
    ["alerts-b", { cost: null, tokens: 5000, per: "day", spentCost: 0, spentTokens: 1200, periodEnd: "2026-11-05T00:00:00.000Z" }],
  ]);
  // A run that reported no usage is no spending of the budget; the rule's spending counts it apart.
  assert.deepEqual(k.state().lines[0]!.spending.today, { rounds: 3, tokens: 120, cost: 0.75, missingTokens: 2, missingCost: 1 });
  k.advance("2026-11-05T00:00:00Z");
  assert.deepEqual(budgets()[1], ["alerts-b", { cost: null, tokens: 5000, per: "day", spentCost: 0, spentTokens: 0, periodEnd: "2026-11-06T00:00:00.000Z" }]);
  assert.equal((budgets()[0]![1] as { spentCost: number }).spentCost, 0.75, "the week goes on");
  assert.deepEqual(new Clock(baseRules, "2026-11-04T08:00:00Z").state().lines.map((l) => l.budget), [null, null], "rules without a budget");
  k.close();
});

test("issue 26 r25 F25b-1 (reported case): a card link cannot answer a budget card — resuming lifts the pause for the rest of the period, a decision about later runs; the page says so and offers no button", async () => {
  const { cardLinkToken } = await import("../src/kernel/credentials.js");
  const k = new Clock(rulesWith({ cost: 1, per: "day" }), "2026-11-02T08:00:00Z");
  spend(k, "e1", { cost: 1 });
  const [card] = k.state().cards;
  assert.equal(card.title, '"alerts" used up today\'s budget and is paused');
  const token = cardLinkToken(k.env.master, card.id, Date.parse(card.at));
  for (const choice of [0, 1]) {
    const [d] = k.commitAll([{ kind: "linkAnswer", card: card.id, token, choice, text: null }]);
    assert.deepEqual([d!.status, d!.facts], [403, []], `choice ${choice}`);
    assert.match(JSON.stringify(d!.body), /a card link cannot answer it; answer in the console or with the CLI/);
  }
  assert.deepEqual(k.state().pauses.map((p) => p.name), ["alerts"]);
  assert.equal(k.state().cards[0].state, "open");
  const page = k.linkPage(card.id, token);
  assert.equal(page.status, 200);
  assert.match(page.html, /a card link cannot answer it; answer in the console or with the CLI/);
  assert.doesNotMatch(page.html, /<form|<button/);
  k.close();
});
