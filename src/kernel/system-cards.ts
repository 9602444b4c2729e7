/**
 * The keys of hub alert cards (`CardRow.system`), built here alone. A key keeps one open card per cause (the dedup key
 * of protocol.md 回执: an equal key while one is open makes no second card), and finds the card again to close it.
 * These keys are stored in cards and facts: they never change shape. Alerts of a run's failures (`failing`,
 * `gaveUp`) and of a removed rule (`ruleGone`) have no key: their title and text make them unique.
 */
import type { SystemKind } from "./types.js";

/** The key of each hub alert that has one, from what it is about. */
export const systemCardKey = {
  /** rules.json is broken or missing: one card at a time, whatever the error. */
  rulesError: () => "rules-error",
  /** The deadline with due-table key `due` keeps failing. */
  deadlineFailing: (due: string) => `deadline:${due}`,
  /** Worker `worker` went silent. */
  offline: (worker: string) => `offline:${worker}`,
  /** Run `run`'s lease ran out. */
  uncertain: (run: number) => `uncertain:${run}`,
  /** Event `sid` of `source` went past the hop limit. */
  hops: (source: string, sid: string) => `hops:${source}:${sid}`,
  /** Rule `rule` went past its budget in the period that starts at `periodStart` (ms). */
  budget: (rule: string, periodStart: number) => `budget:${rule}:${periodStart}`,
  /** Rule `rule` started runs too fast and was paused at `at` (ms; issue 26). */
  tooFast: (rule: string, at: number) => `too-fast:${rule}:${at}`,
  /** A late wake-up skipped cron times from `firstIso` on (an fyi notice, sent once per rule and key). */
  cronMissed: (firstIso: string) => `missed:${firstIso}`,
} satisfies Partial<Record<SystemKind, (...args: never[]) => string>>;

/**
 * A budget card's `about`: the rule and the end of the period it asks about (ms), NUL-joined. The owner sees `about`,
 * and an answer reads the rule and the period back from it (`budgetAbout`).
 */
export function budgetAbout(rule: string, periodEnd: number): string {
  return `${rule}\u0000${periodEnd}`;
}

/** The rule and period end (ms) of a budget card's `about` (see `budgetAbout`; rule names hold no control character). */
export function readBudgetAbout(about: string): { rule: string; periodEnd: number } {
  const [rule, end] = about.split("\u0000") as [string, string];
  return { rule, periodEnd: Number(end) };
}
