/**
 * Budgets (beyond the protocol; issue 3): a rule may set `budget: { cost, tokens, per }`. Reported usage is summed
 * per rule and period (day or week in the rule file's time zone) as it arrives. When a result takes the rule past
 * its budget, the hub pauses the rule (a `pauseRule` fact, `by: "budget"`) and asks the owner whether to resume for
 * the rest of the period. Runs already claimed finish normally. Tokens are input + output (cached tokens are
 * part of input as the CLIs report them, and are not added again).
 */
import type { Ctx } from "./context.js";
import type { RuleDef } from "./rules.js";
import type { BudgetOk, CardRow, PauseRow } from "./types.js";
import type { Usage } from "../protocol/schema.js";
import { periodOf } from "./period.js";
import { closeCard, createCard } from "./cards.js";
import { resume } from "./schedule.js";
import { fixedText, said, timeText, type SaidParam } from "../i18n/messages.js";
import { budgetOkKey, spendKey } from "./tables.js";
import { budgetAbout, readBudgetAbout, systemCardKey } from "./system-cards.js";

/** Adds one result's reported usage to the rule's current period and pauses the rule when it goes past its budget. */
export function countUsage(c: Ctx, rule: RuleDef, usage: Usage | undefined): void {
  if (!rule.budget || !usage) return;
  const { start, end } = periodOf(c.now, c.rules.timezone, rule.budget.per);
  const row = c.tx.get("spend", spendKey(rule.name, start)) ?? { rule: rule.name, start, end, cost: 0, tokens: 0, rounds: 0 };
  // Sums past the largest number would be Infinity, which JSON stores as null: keep the largest number instead.
  row.cost = Math.min(row.cost + (usage.cost ?? 0), Number.MAX_VALUE);
  row.tokens = Math.min(row.tokens + (usage.input ?? 0) + (usage.output ?? 0), Number.MAX_VALUE);
  row.rounds += 1;
  c.tx.put("spend", spendKey(rule.name, start), row);
  const over = (rule.budget.cost !== null && row.cost >= rule.budget.cost) || (rule.budget.tokens !== null && row.tokens >= rule.budget.tokens);
  if (!over || c.tx.get("pauses", rule.name)) return;
  const ok = c.tx.get("spend", budgetOkKey(rule.name));
  if (ok && ok.until > c.now) return;
  c.tx.mark("pauseRule");
  // No pause existed (checked above), so no pause deadline does either: nothing to take off the due table.
  c.tx.put("pauses", rule.name, { by: "budget", reason: fixedText("budget.reason"), since: c.now, until: null } satisfies PauseRow);
  const used = amounts(rule.budget, `$${row.cost.toFixed(2)}`, row.tokens);
  const limit = amounts(rule.budget, `$${rule.budget.cost}`, rule.budget.tokens ?? 0);
  createCard(c, {
    kind: "ask", key: systemCardKey.budget(rule.name, start), system: "budget", rule: null, lane: "", run: null,
    title: c.worded(rule.budget.per === "day" ? "budget.title.day" : "budget.title.week", { rule: rule.name }),
    // The period's end as a time each client says in its reader's zone (`time.at`), worded here in the rules' zone;
    // what to do in the card's own words: its option (issue 30). Cards made before keep `budget.text`.
    text: c.worded("budget.say", { used, limit, until: timeText(end, c.rules.timezone), resume: said("budget.resume") }),
    options: [c.worded("budget.resume"), c.worded("budget.keep")], recommend: 1,
    about: budgetAbout(rule.name, end),
  });
}

/**
 * What a budget card says was used or is the limit: the cost, the tokens (a text of its own, so a client words the
 * unit in its language: 词元 in Chinese; issue 27 #2), or both, for the limits the budget sets.
 */
function amounts(budget: NonNullable<RuleDef["budget"]>, cost: string, tokens: number): SaidParam {
  const counted = said("budget.tokens", { n: tokens });
  if (budget.cost === null) return counted;
  return budget.tokens === null ? cost : said("budget.costAndTokens", { cost, tokens: counted });
}

/**
 * The open budget card of a rule, if any. Read from the view: a rule's budget card is made only by a result and
 * closed only by its answer, a resolve or `resumeBudgetPause` of that rule, none of which comes before the one
 * caller in the same decision (a resume; a pause's `until`, one deadline per rule in a tick), so the view's open
 * cards are the decision's.
 */
function openBudgetCard(c: Ctx, rule: string): CardRow | undefined {
  // Every budget card carries its rule and period in `about` (countUsage).
  return c.view.cardsIn("open").find((card) => card.system === "budget" && readBudgetAbout(card.about as string).rule === rule);
}

/**
 * Ends a budget pause (`resume <rule>`, or an `until` the owner gave it), whatever became of its card (README
 * Budgets): the same as answering the card "resume": no budget pause again until the period the pause began in
 * ends. An open card is answered so; a card answered "Keep paused" or resolved stays as it is. A rule that has
 * no budget any more just resumes.
 */
export function resumeBudgetPause(c: Ctx, name: string, pause: PauseRow): void {
  const card = openBudgetCard(c, name);
  if (card) return budgetAnswered(c, card, 0);
  const budget = c.rule(name)?.budget;
  if (budget) c.tx.put("spend", budgetOkKey(name), { rule: name, until: periodOf(pause.since, c.rules.timezone, budget.per).end } satisfies BudgetOk);
  resume(c, name);
}

/**
 * The owner answered a budget card `by` name (the caller checked the answer is the first and valid): the answer is
 * recorded and the card closed; 0 resumes for the rest of the period (no budget pause again until it ends).
 */
export function answerBudgetCard(c: Ctx, card: CardRow, choice: number | null, by: string): void {
  card.choice = choice;
  card.by = by;
  card.answeredAt = c.now;
  c.tx.put("cards", card.id, card);
  budgetAnswered(c, card, choice);
}

/** Closes a budget card answered `choice`: 0 resumes for the rest of the period (no budget pause again until it ends). */
function budgetAnswered(c: Ctx, card: CardRow, choice: number | null): void {
  // Every budget card carries its rule and period in `about` (countUsage).
  const { rule: ruleName, periodEnd } = readBudgetAbout(card.about as string);
  if (choice === 0) {
    c.tx.put("spend", budgetOkKey(ruleName), { rule: ruleName, until: periodEnd } satisfies BudgetOk);
    if (c.tx.get("pauses", ruleName)?.by === "budget") resume(c, ruleName);
  }
  closeCard(c, card.id, c.msg(choice === 0 ? "budget.resumed" : "budget.kept"));
}
