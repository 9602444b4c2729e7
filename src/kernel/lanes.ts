/**
 * Events into lanes into runs (protocol.md 规则, 来源, 事项): recording an event once per source and id,
 * matching rules, and queueing or merging runs per lane.
 */
import type { Ctx } from "./context.js";
import { anyGlob, anySource, type RuleDef, type Rules } from "./rules.js";
import { hopsMax } from "./limits.js";
import type { EventRow, LaneRow, RunRow, TimerFire } from "./types.js";
import { laneKey } from "./tables.js";
import { intentHit, type IntentTable } from "./intents.js";
import { own } from "./own.js";
import { moveRun } from "./run-state.js";

/** An event to record: an `events` row without what `recordEvent` gives it (its id, time and empty routing). */
export type NewEvent = Pick<EventRow, "source" | "sid" | "type" | "subject" | "summary" | "detail" | "link" | "hops" | "internal" | "texts">;

/**
 * What a receipt event's id starts with in its source (the receipt's `id` after it), as a timer's starts with
 * `later:` (issue 26 round 27, F27a-3: a run's events never take a source's own id). The runs it starts see the id
 * the receipt gave (`contextEventId`): scripts that emit an id and read it back keep working.
 */
export const receiptEventPrefix = "receipt:";

/** The id an event has in a run's context: its id in the source, a receipt event's without `receiptEventPrefix`. */
export function contextEventId(e: Pick<EventRow, "sid" | "internal">): string {
  return e.internal === "receipt" && e.sid.startsWith(receiptEventPrefix) ? e.sid.slice(receiptEventPrefix.length) : e.sid;
}

/** Finds an event by source and the source's id, in this decision's writes or the view. */
export function findEvent(c: Ctx, source: string, sid: string): EventRow | undefined {
  const mine = c.createdEvents.get(`${source}\u0000${sid}`);
  if (mine !== undefined) return c.tx.get("events", mine);
  const hit = c.view.eventBySourceId(source, sid);
  return hit ? c.tx.get("events", hit.id) : undefined;
}

/**
 * An id that is unique within `source` for an event the hub makes itself: `base`, or `base#2`, `base#3`, …
 * when taken (protocol.md 日志与确定性: internal events never overwrite a source's events).
 */
export function freeEventId(c: Ctx, source: string, base: string): string {
  if (!findEvent(c, source, base)) return base;
  for (let i = 2; ; i++) if (!findEvent(c, source, `${base}#${i}`)) return `${base}#${i}`;
}

/** Records a new event (the caller checked it is not a duplicate). Routing is separate. */
export function recordEvent(c: Ctx, e: NewEvent): EventRow {
  const id = c.nextId("event");
  const row: EventRow = { id, ...e, at: c.now, routed: [], paused: [], unrouted: false };
  c.tx.put("events", id, row);
  c.createdEvents.set(`${e.source}\u0000${e.sid}`, id);
  c.count({ events: 1 });
  return row;
}

/** The lane an event of `rule` goes to: the subject for `parallel` rules, else "" (protocol.md 事项). */
export function laneOf(rule: RuleDef, subject: string | null): string {
  return rule.parallel !== null ? subject ?? "" : "";
}

/** Whether `rule` is paused now (in this decision's writes or the view). */
export function isPaused(c: Ctx, rule: string): boolean {
  return c.tx.get("pauses", rule) !== undefined;
}

/** Per rules object: each source's rules with the rules of any source merged in, and the rules of any source alone. */
interface RuleIndex { bySource: Map<string, RuleDef[]>; any: RuleDef[] }
const rulesBySource = new WeakMap<Rules, RuleIndex>();

/**
 * The rules that may take an event of `source`, in the order of the file: the source's own rules and the rules of any
 * source (`anySource`: an intent and no source), from an index built once per rules object (the view keeps one per
 * rules version): routing an event reads only these, however many others the file has. A source no rule names gets
 * the rules of any source alone.
 */
export function rulesOf(rules: Rules, source: string): RuleDef[] {
  let index = rulesBySource.get(rules);
  if (!index) {
    const bySource = new Map<string, RuleDef[]>();
    const any: RuleDef[] = [];
    for (const rule of rules.rules) {
      if (anySource(rule)) {
        any.push(rule);
        for (const list of bySource.values()) list.push(rule);
        continue;
      }
      const list = bySource.get(rule.source);
      if (list) list.push(rule);
      else bySource.set(rule.source, [...any, rule]);
    }
    index = { bySource, any };
    rulesBySource.set(rules, index);
  }
  return index.bySource.get(source) ?? index.any;
}

/**
 * Matches an event against the event rules and queues it into each matching rule's lane; a run's event (`byRun`: by
 * default a receipt's) only into the rules that name its source (not those of any source: an intent and no source).
 * Paused rules are listed in `paused` and take nothing; an event deeper than the hop limit is kept, not dispatched.
 * A run the event would start (its lane has none queued) is first offered to `mayStart`, which may pause the rule
 * instead (rate.ts: a rule starting runs too fast); then the rule is listed in `paused` too.
 * @returns the updated event row.
 */
export function routeEvent(
  c: Ctx, ev: EventRow, onTooDeep: (ev: EventRow) => void, intents: IntentTable = {}, mayStart: (rule: RuleDef) => boolean = () => true,
  byRun = ev.internal === "receipt",
): EventRow {
  if (ev.hops > hopsMax) {
    ev.tooDeep = true;
    c.tx.put("events", ev.id, ev);
    onTooDeep(ev);
    return ev;
  }
  for (const rule of rulesOf(c.rules, ev.source)) {
    if (rule.cron !== null || !anyGlob(rule.types, ev.type)) continue;
    // A run's event (a receipt's, or one its tool call posted) is taken only by rules that name its source: a rule of
    // any source would let an agent choose what another rule's workflow does with tools its own rule is not offered
    // (issue 26 round 52, F52-1).
    if (byRun && anySource(rule)) continue;
    // A rule with `when.intent` takes only events that hit that intent; an intent not loaded now matches nothing.
    if (rule.intent !== undefined && !intentHit(own(intents, rule.intent) ?? [], ev.summary, ev.detail)) continue;
    const lane = laneOf(rule, ev.subject);
    if (isPaused(c, rule.name) || (getLane(c, rule.name, lane).queued === null && !mayStart(rule))) {
      ev.paused.push(rule.name);
      continue;
    }
    ev.routed.push(rule.name);
    enqueue(c, rule, lane, { events: [ev.id], hops: ev.hops });
  }
  ev.unrouted = ev.routed.length === 0 && ev.paused.length === 0;
  if (ev.unrouted) c.count({ unrouted: 1 });
  c.tx.put("events", ev.id, ev);
  return ev;
}

/** Work that `enqueue` adds to a lane's queued run: events, answered cards, timers, a manual run, its depth. */
export interface Enqueue {
  events?: number[];
  answers?: number[];
  timers?: TimerFire[];
  manual?: boolean;
  hops: number;
  /** The session this work should continue (the run that asked or set the timer), with its agent. */
  sessionHint?: { session: string; agent: string | null } | null;
}

/** A lane's row, or an empty lane (nothing queued, nothing active, no last run) when it has none yet. */
export function getLane(c: Ctx, rule: string, lane: string): LaneRow {
  return c.tx.get("lanes", laneKey(rule, lane)) ?? { rule, lane, queued: null, active: null, last: null };
}

/** Writes a lane's row. */
export function putLane(c: Ctx, lane: LaneRow): void {
  c.tx.put("lanes", laneKey(lane.rule, lane.lane), lane);
}

/**
 * Adds work to the lane's queued run, or queues a new run when the lane has none (protocol.md 事项:
 * events for a lane with a queued or retry-waiting run merge into it; a running run does not take more).
 * @returns the run id.
 */
export function enqueue(c: Ctx, rule: RuleDef, laneName: string, add: Enqueue): number {
  const lane = getLane(c, rule.name, laneName);
  let run: RunRow | undefined = lane.queued !== null ? c.tx.get("runs", lane.queued) : undefined;
  if (!run) {
    const id = c.nextId("run");
    run = {
      id, rule: rule.name, lane: laneName, group: rule.group, state: "queued",
      events: [], answers: [], timers: [], manual: false, hops: 0,
      attempt: 0, failures: 0, claims: 0, claim: null, worker: null, agent: null, job: null,
      session: null, sessionHint: null, link: null,
      createdAt: c.now, claimedAt: null, startedAt: null, endedAt: null, readyAt: c.now, seenAt: null,
      outcome: null, summary: null, error: null, usage: null, usageReported: { tokens: false, cost: false },
      results: {}, retryCard: null, stopRequested: false, mergedInto: null,
    };
    lane.queued = id;
    putLane(c, lane);
    c.count({ runs: 1 });
  }
  run.events.push(...(add.events ?? []));
  run.answers.push(...(add.answers ?? []));
  run.timers.push(...(add.timers ?? []));
  run.hops = Math.max(run.hops, add.hops);
  if (add.sessionHint && !run.sessionHint) run.sessionHint = add.sessionHint;
  if (add.manual) {
    run.manual = true;
    if (run.state === "waiting") {
      // A manual run cancels the retry wait of the queued run it joins (protocol.md 立即运行).
      moveRun(run, "queued");
      run.readyAt = c.now;
      c.undue("retry", run.id);
    }
  }
  c.tx.put("runs", run.id, run);
  c.wake.workers = true;
  return run.id;
}
