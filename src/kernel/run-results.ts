/**
 * A run's result (protocol.md 交回执): the outcome and the receipt applied in one step — cards asked, noticed and
 * resolved within the run's scope, `later` timers, events the rule may emit — and the usage reported.
 */
import type { Ctx } from "./context.js";
import { anyGlob, templateTied, type RuleDef } from "./rules.js";
import { closeCard, createCard } from "./cards.js";
import { findEvent, receiptEventPrefix, recordEvent, routeEvent } from "./lanes.js";
import type { RunRow, TimerRow, UsageSum } from "./types.js";
import { timerKey } from "./tables.js";
import type { Result } from "../protocol/schema.js";
import type { Rejected } from "../protocol/responses.js";
import { tooDeepNotice } from "./notices.js";
import { mayStart } from "./rate.js";
import type { IntentTable } from "./intents.js";
import { fixedText } from "../i18n/messages.js";
import { laterRenewMinMs } from "./limits.js";
import { endRun, failRun } from "./run-end.js";

/**
 * POST /v1/runs/:id/result after the token check: applies the outcome and the receipt in one step.
 * `failed` keeps only `notice`; a run the owner stopped ends `cancelled` when it reports `failed` or `cancelled`.
 * @returns the `rejected` list of receipt items outside this run's scope.
 */
export function applyResult(c: Ctx, run: RunRow, result: Result, intents: IntentTable = {}): Rejected[] {
  addUsage(run, result.usage);
  if (result.session) {
    run.session = result.session;
  }
  if (result.summary !== undefined) run.summary = result.summary;
  if (result.error !== undefined) run.error = result.error;
  const rule = c.rule(run.rule);
  const rejected: Rejected[] = [];
  // The worker's own notices first, whatever the outcome and `tell`: the owner hears what its checks found.
  for (const n of result.workerNotice ?? []) {
    createCard(c, { kind: "notice", fyi: n.fyi === true, title: n.title, text: n.text, key: n.key ?? null, rule: rule ?? null, lane: run.lane, run: run.id, system: "worker" });
  }
  const stopping = run.stopRequested;
  if (result.outcome === "cancelled" || (result.outcome === "failed" && stopping)) {
    endRun(c, run, "cancelled");
    return rejected;
  }
  if (result.outcome === "failed") {
    if (rule && rule.tell !== "never") for (const n of result.notice ?? []) notice(c, run, rule, n, rejected);
    if (!rule) {
      endRun(c, run, "cancelled");
      return rejected;
    }
    failRun(c, run, result.error ?? result.summary ?? "failed");
    return rejected;
  }
  run.failures = 0;
  let madeCard = false;
  const count = (id: number | null) => { if (id !== null) madeCard = true; };
  const r = rule ?? null;
  for (const a of result.ask ?? []) {
    count(templated(rule, a.card, rejected, (template) => createCard(c, { kind: "ask", title: a.title, text: a.text, options: a.options, recommend: a.recommend ?? null, about: a.about ?? null, key: a.key ?? null, rule: r, lane: run.lane, run: run.id, template })));
  }
  if (!rule || rule.tell !== "never") for (const n of result.notice ?? []) count(notice(c, run, r, n, rejected));
  for (const res of result.resolve ?? []) {
    const why = resolveInScope(c, run, rule, res.card);
    if (why) rejected.push({ card: res.card, reason: why });
    else closeCard(c, res.card, res.reason ? c.msg("result.notNeededWhy", { reason: res.reason }) : c.msg("result.notNeeded"));
  }
  for (const l of result.later ?? []) later(c, run, l);
  for (const e of result.events ?? []) {
    const why = emit(c, run, rule, e, intents);
    if (why) rejected.push({ event: e.id, reason: why });
  }
  if (rule?.tell === "always" && result.outcome === "done" && !madeCard) {
    createCard(c, { kind: "notice", fyi: true, title: c.worded("card.done.title", { rule: rule.name }), text: result.summary ?? "", rule, lane: run.lane, run: run.id });
  }
  endRun(c, run, result.outcome);
  return rejected;
}

/**
 * Makes a receipt item's card with `make`, given the card template `ref` it names only when the run's rule is tied to
 * its plugin (rules.ts `templateTied`); a card made without it is named in `rejected`. @returns the card's id, or null.
 */
function templated(rule: RuleDef | null | undefined, ref: string | undefined, rejected: Rejected[], make: (template: string | undefined) => number | null): number | null {
  const template = ref !== undefined && templateTied(rule ?? undefined, ref) ? ref : undefined;
  const id = make(template);
  if (id !== null && template !== ref) rejected.push({ card: id, reason: fixedText("rejected.template", { template: ref ?? "" }) });
  return id;
}

/** A receipt's notice as a card, its template only when the rule uses its plugin (`templated`). */
function notice(c: Ctx, run: RunRow, rule: RuleDef | null, n: NonNullable<Result["notice"]>[number], rejected: Rejected[]): number | null {
  return templated(rule, n.card, rejected, (template) => createCard(c, { kind: "notice", fyi: n.fyi === true, title: n.title, text: n.text, key: n.key ?? null, rule, lane: run.lane, run: run.id, template }));
}

/**
 * Why a receipt may not resolve a card: same source, same group, created before this run's claim, still open, made by
 * an agent or a source — never one of the hub's or a worker's own (`system`: what they warn of may be the agent's
 * doing; issue 26 round 23, F23-2).
 */
function resolveInScope(c: Ctx, run: RunRow, rule: RuleDef | undefined, id: number): string | null {
  const card = c.tx.get("cards", id);
  if (!card) return fixedText("rejected.noCard", { id });
  if (card.system !== null) return fixedText("rejected.hubCard", { id });
  if (!rule || card.source !== rule.source || card.group !== rule.group || card.at > (run.claimedAt ?? 0) || card.run === run.id) {
    return fixedText("rejected.scope");
  }
  if (card.state !== "open") return fixedText("rejected.closed");
  return null;
}

/** `later`: sets, moves or cancels a timer of the lane (protocol.md 回执). */
function later(c: Ctx, run: RunRow, l: NonNullable<Result["later"]>[number]): void {
  const key = timerKey(run.rule, run.lane, l.key);
  if ("cancel" in l) { // a timer that is not there: nothing to remove
    c.tx.del("timers", key);
    c.undue("later", key);
    return;
  }
  // A run a timer woke renews it a minute ahead at the soonest (`laterRenewMinMs`: a loop no other brake stops).
  const at = run.timers.length > 0 ? Math.max(Date.parse(l.at), c.now + laterRenewMinMs) : Date.parse(l.at);
  const row: TimerRow = { rule: run.rule, lane: run.lane, key: l.key, at, about: l.about ?? null, run: run.id, hops: run.hops };
  c.tx.put("timers", key, row);
  c.due("later", key, at);
}

/**
 * A receipt event: source fixed by the rule's `emits`, hops one more than the run's deepest event; routed with the
 * intents loaded now, as a posted event is. Its id is the receipt's under `receiptEventPrefix`: a run's events and the
 * source's own never share an id (issue 26 round 27, F27a-3: a run emitted the id of the push webhook its own commit
 * would bring, and that push came back a duplicate and was never taken). Runs still share theirs: the same id sent
 * again, by a retry or another run, is the same event.
 */
function emit(c: Ctx, run: RunRow, rule: RuleDef | undefined, e: NonNullable<Result["events"]>[number], intents: IntentTable): string | null {
  if (!rule?.emits) return fixedText("rejected.noEmits");
  if (!anyGlob(rule.emits.types, e.type)) return fixedText("rejected.type", { type: e.type });
  const source = rule.emits.source;
  const sid = `${receiptEventPrefix}${e.id}`;
  // The same id from a run again is the same event; one the source took first (posted before sources were refused
  // the prefix: round 29, F29a-5) is said, never dropped in silence.
  const had = findEvent(c, source, sid);
  if (had) return had.internal === "receipt" ? null : fixedText("rejected.idTaken", { id: e.id });
  const ev = recordEvent(c, {
    source, sid, type: e.type, subject: e.subject ?? null, summary: e.summary ?? null, detail: e.detail ?? null,
    link: e.link ?? null, hops: run.hops + 1, internal: "receipt",
  });
  routeEvent(c, ev, (deep) => tooDeepNotice(c, deep), intents, (r) => mayStart(c, r));
  return null;
}

/** Adds an attempt's reported usage to the run's sums, and notes which kinds were reported. */
function addUsage(run: RunRow, usage: Result["usage"]): void {
  if (!usage) return;
  const sum: UsageSum = run.usage ?? {};
  for (const k of ["input", "output", "cached", "cost"] as const) {
    const v = usage[k];
    if (typeof v === "number") sum[k] = (sum[k] ?? 0) + v;
  }
  run.usage = sum;
  if (usage.input !== undefined || usage.output !== undefined || usage.cached !== undefined) run.usageReported.tokens = true;
  if (usage.cost !== undefined) run.usageReported.cost = true;
}
