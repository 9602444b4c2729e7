/**
 * A rule that starts runs too fast (issue 26: a workflow whose HTTP tool posted the event its own rule takes ran 100
 * times in 15 s). The runs an event starts are counted per rule in a window of `ruleStartsWindowMs` from its first;
 * one more than the rule's limit (`ruleStartsMax`: its rules.json `startsPerMinute`, else `ruleStartsPerWindowMax`)
 * is not started: the rule is paused (in the event's fact, `by: "rate"`) and the owner gets an ask card, "resume" or
 * "keep paused". Work an event merges into a run already queued starts nothing and
 * is not counted; manual runs, cron times and `later` timers are not counted either (the owner's own, or one a minute
 * at most: a timer renewed by the run it woke comes due `laterRenewMinMs` after at the soonest). Resuming — the card's answer, or `resume <rule>` — starts a new window.
 */
import type { Ctx } from "./context.js";
import type { CardRow, PauseRow, RuleStartsRow } from "./types.js";
import { ruleStartsMax, type RuleDef } from "./rules.js";
import { closeCard, createCard } from "./cards.js";
import { resume } from "./schedule.js";
import { ruleStartsWindowMs } from "./limits.js";
import { systemCardKey } from "./system-cards.js";
import { fixedText } from "../i18n/messages.js";

/** Who a rule's pause for starting runs too fast is by (`PauseRow.by`). */
export const ratePauseBy = "rate";

/**
 * Counts a run an event of `rule` is about to start. Within the limit: true. One over it: the rule is paused and the
 * owner asked, and false (the event is recorded as not taken by the paused rule).
 */
export function mayStart(c: Ctx, rule: RuleDef): boolean {
  const row = c.tx.get("starts", rule.name);
  const next: RuleStartsRow = row && c.now - row.since < ruleStartsWindowMs ? { ...row, count: row.count + 1 } : { rule: rule.name, since: c.now, count: 1 };
  const max = ruleStartsMax(rule);
  if (next.count <= max) {
    c.tx.put("starts", rule.name, next);
    return true;
  }
  // A paused rule's events are not routed to it (lanes.ts), so it was not paused: no pause deadline to take off.
  c.tx.put("pauses", rule.name, { by: ratePauseBy, reason: fixedText("rate.reason"), since: c.now, until: null } satisfies PauseRow);
  c.tx.del("starts", rule.name);
  createCard(c, {
    kind: "ask", key: systemCardKey.tooFast(rule.name, c.now), system: "tooFast", rule: null, lane: "", run: null,
    title: c.worded("rate.title", { rule: rule.name }),
    text: c.worded("rate.text", { count: max, seconds: ruleStartsWindowMs / 1000 }),
    options: [c.worded("rate.resume"), c.worded("rate.keep")], recommend: 1, about: rule.name,
  });
  return false;
}

/** The open card that asks about rule `name`'s pause for starting runs too fast, if any (its `about` is the rule). */
function openRateCard(c: Ctx, name: string): CardRow | undefined {
  return c.view.cardsIn("open").find((card) => card.system === "tooFast" && card.about === name);
}

/**
 * Ends a pause for starting runs too fast (`resume <rule>`, or an `until` the owner gave it since): the rule resumes
 * with a new window, and the card that asked is closed as answered so.
 */
export function resumeRatePause(c: Ctx, name: string): void {
  c.tx.del("starts", name);
  resume(c, name);
  const card = openRateCard(c, name);
  if (card) closeCard(c, card.id, c.msg("rate.resumed"));
}

/**
 * The owner answered a too-fast card `by` name (the caller checked the answer is the first and valid): 0 resumes the
 * rule (a new window), 1 keeps it paused; the card is closed either way.
 */
export function answerRateCard(c: Ctx, card: CardRow, choice: number | null, by: string): void {
  card.choice = choice;
  card.by = by;
  card.answeredAt = c.now;
  c.tx.put("cards", card.id, card);
  const rule = card.about ?? "";
  if (choice === 0 && c.tx.get("pauses", rule)?.by === ratePauseBy) {
    c.tx.del("starts", rule);
    resume(c, rule);
  }
  closeCard(c, card.id, c.msg(choice === 0 ? "rate.resumed" : "rate.kept"));
}
