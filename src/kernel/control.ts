/**
 * Time and the owner's controls (protocol.md 来源: 定时; 本人: 暂停、恢复、立即运行): cron times from the due
 * table, pauses with `until`, and manual runs. Paused cron rules skip their times without making them up; paused
 * event rules take no events; a paused rule dispatches nothing, manual runs included.
 */
import type { Ctx } from "./context.js";
import type { RuleDef } from "./rules.js";
import type { PauseRow } from "./types.js";
import { enqueue, freeEventId, laneOf, recordEvent } from "./lanes.js";
import { cronTimes } from "./cron.js";
import { resumeBudgetPause } from "./budget.js";
import { ratePauseBy, resumeRatePause } from "./rate.js";
import { createCard } from "./cards.js";
import { cronSkippedCountMax } from "./limits.js";
import { fixedRefusal, worded, type Worded } from "../i18n/messages.js";
import type { Pause, PauseAnswer, ResumeAnswer, RunNowAnswer } from "../protocol/responses.js";
import { isReply, ok, refuse as err, type Refusal, type Reply } from "./reply.js";
import { resume } from "./schedule.js";
import { systemCardKey } from "./system-cards.js";
import { assert } from "./assert.js";

/** Event type of a cron time and of a manual run (protocol.md 立即运行: `run.manual`). */
export const cronEventType = "schedule.cron";
export const manualEventType = "run.manual";

/**
 * A cron time came due (`dueAt`, possibly long ago after downtime): one run for the latest missed time, or a skip
 * when the rule is paused; then the next time after now. Times before the latest that a late wake-up skips are
 * counted on the row and told in one fyi card per wake-up (not per missed time); a paused rule's skips get no card.
 */
export function cronDue(c: Ctx, ruleName: string, dueAt: number): void {
  const rule = c.rule(ruleName);
  const row = c.tx.get("crons", ruleName);
  if (!rule || rule.cron === null || !row) return;
  const times = cronTimes(rule.cron, c.rules.timezone);
  const at = times.latest(dueAt, c.now);
  const paused = c.tx.get("pauses", rule.name) !== undefined;
  // A paused rule skips `at` too; a running one runs it.
  const skipped = times.skipped(dueAt, paused ? at + 1 : at, cronSkippedCountMax);
  if (skipped.last !== null) {
    // A paused rule's skips add up while no time runs between them (a row from before the count was kept had one);
    // the skips of a late wake-up that runs its latest time are an outage of their own.
    // Stryker disable next-line EqualityOperator: a time either ran or was skipped, so lastAt never equals skippedAt
    const earlier = paused && row.skippedAt !== null && (row.lastAt === null || row.lastAt < row.skippedAt) ? row.skippedCount ?? 1 : 0;
    row.skippedCount = Math.min(earlier + skipped.count, cronSkippedCountMax);
    row.skippedAt = skipped.last;
    if (!paused) missedNotice(c, rule, dueAt, skipped.last, skipped.count, at);
  }
  if (!paused) {
    fire(c, rule, `cron:${c.iso(at)}`, cronEventType, null, rule.name, null, false);
    row.lastAt = at;
  }
  row.next = times.next(c.now);
  c.tx.put("crons", rule.name, row);
  if (row.next !== null) c.due("cron", rule.name, row.next);
}

/** The fyi card of one late wake-up that skipped `count` cron times of `rule`, `first` to `last`, and ran `ran`. */
function missedNotice(c: Ctx, rule: RuleDef, first: number, last: number, count: number, ran: number): void {
  createCard(c, {
    kind: "notice", fyi: true, system: "cronMissed", rule, lane: "", run: null, fyiScope: "cron", key: systemCardKey.cronMissed(c.iso(first)),
    title: c.worded("card.cronMissed.title", { rule: rule.name, n: count < cronSkippedCountMax ? count : `${count}+` }),
    text: c.worded("card.cronMissed.text", { first: c.iso(first), last: c.iso(last), ran: c.iso(ran) }),
  });
}

function fire(c: Ctx, rule: RuleDef, baseId: string, type: string, subject: string | null, summary: string | Worded, detail: string | null, manual: boolean) {
  const ev = recordEvent(c, {
    source: rule.source, sid: freeEventId(c, rule.source, baseId), type, subject, summary: typeof summary === "string" ? summary : summary.words, detail, link: null, hops: 0,
    internal: manual ? "manual" : "cron",
    // Stryker disable next-line ConditionalExpression: equivalent for the decisions — rows are kept as JSON, and only clients read `texts`
    ...(typeof summary === "string" ? {} : { texts: { summary: summary.text } }),
  });
  ev.routed = [rule.name];
  c.tx.put("events", ev.id, ev);
  const run = enqueue(c, rule, laneOf(rule, subject), { events: [ev.id], hops: 0, manual });
  return { event: ev.id, run };
}


/** Finds a rule for a control request: 404 with the protocol's text, 400 for an elsewhere task. */
function target(c: Ctx, name: string): RuleDef | Refusal {
  const rule = c.rules.rules.find((r) => r.name === name);
  if (rule) return rule;
  if (c.rules.elsewhere.some((e) => e.name === name)) return err(400, c.say("control.elsewhere", { name }));
  return err(404, fixedRefusal("notFound.rule", { name }));
}


function pauseView(c: Ctx, p: PauseRow): Pause {
  return { by: p.by, reason: p.reason, since: c.iso(p.since), until: p.until === null ? null : c.iso(p.until) };
}

/** POST /v1/rules/:name/pause. A repeated pause keeps `since` and writes nothing when nothing changed. */
export function pauseRule(c: Ctx, name: string, by: string, reason: string | null, until: number | null): Reply<PauseAnswer> {
  const rule = target(c, name);
  if (isReply(rule)) return rule;
  if (until !== null && until <= c.now) return err(400, c.say("control.untilPast"));
  const old = c.tx.get("pauses", name);
  const next: PauseRow = { by: old?.by ?? by, reason, since: old?.since ?? c.now, until };
  if (old && old.reason === reason && old.until === until) return ok({ changed: false, rule: name, paused: pauseView(c, old) });
  c.tx.put("pauses", name, next);
  if (until !== null) c.due("pause", name, until);
  else c.undue("pause", name);
  return ok({ changed: true, rule: name, paused: pauseView(c, next) });
}

/** POST /v1/rules/:name/resume. Works for a paused rule that was since removed from rules.json. */
export function resumeRule(c: Ctx, name: string): Reply<ResumeAnswer> {
  const paused = c.tx.get("pauses", name);
  if (!paused) {
    const rule = target(c, name);
    if (isReply(rule)) return rule;
    return ok({ changed: false, rule: name });
  }
  endPause(c, name, paused);
  return ok({ changed: true, rule: name });
}

/**
 * Ends a pause by hand or at its `until`; a budget pause resumes for the rest of its period (budget.ts); a pause for
 * starting runs too fast resumes with a new window and closes its card (rate.ts).
 */
function endPause(c: Ctx, name: string, pause: PauseRow): void {
  if (pause.by === "budget") resumeBudgetPause(c, name, pause);
  else if (pause.by === ratePauseBy) resumeRatePause(c, name);
  else resume(c, name);
}

/**
 * A pause's `until` came: the rule resumes (a `tick` fact). The deadline is set only with an `until` and is moved
 * or removed with it (pauseRule, resume), so when it comes due the pause is there and its `until` has come.
 */
export function pauseDue(c: Ctx, name: string): void {
  const pause = c.tx.get("pauses", name);
  assert(pause, "pause-deadline-names-paused-rule");
  endPause(c, name, pause);
}

/** POST /v1/rules/:name/run: a `run.manual` event through normal dispatch; refused while the rule is paused. */
export function runNow(c: Ctx, name: string, by: string, subject: string | null, reason: string | null): Reply<RunNowAnswer> {
  const rule = target(c, name);
  if (isReply(rule)) return rule;
  if (c.tx.get("pauses", name)) return err(409, fixedRefusal("control.paused", { name }));
  const out = fire(c, rule, `manual:${c.iso(c.now)}`, manualEventType, subject, worded("zh", "control.manualSummary", { name: by }), reason, true);
  return ok({ event: out.event, run: out.run });
}
