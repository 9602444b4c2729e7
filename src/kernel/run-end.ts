/**
 * The end of runs (protocol.md 失败时会怎样): a run ends (its place freed, its cards settled), a failed attempt waits
 * for a retry or gives up, the owner stops one, and the deadlines of runs come due: a lease that ran out, a retry
 * wait that ended, a `later` timer; runs of rules that are gone are cancelled.
 */
import type { Ctx } from "./context.js";
import { failuresBeforeCancel, failuresBeforeCard, retryDelayFirstMs, retryDelayMaxMs } from "./limits.js";
import { closeCard, createCard, saveCard } from "./cards.js";
import { enqueue, getLane, putLane, recordEvent } from "./lanes.js";
import type { RunOutcome, RunRow } from "./types.js";
import { moveRun } from "./run-state.js";
import { systemCardKey } from "./system-cards.js";
import { endLostCalls } from "./tool-calls.js";
import { assert } from "./assert.js";
import { backoffMs } from "./backoff.js";
import { runPendingStates } from "./states.js";
import { backFromUncertain, dropSessions, release } from "./run-place.js";

/** Ends a run: frees its lane and group, closes its "will retry" card, marks answered cards executed. */
export function endRun(c: Ctx, run: RunRow, state: RunOutcome): void {
  backFromUncertain(c, run);
  endLostCalls(c, run.id);
  moveRun(run, state);
  run.outcome = state;
  run.endedAt = c.now;
  release(c, run);
  c.undue("lease", run.id);
  c.undue("retry", run.id);
  dropSessions(c, run);
  if (run.attempt > 0) { // a run that was ever claimed (a claimed, running or stopping run always was)
    const lane = getLane(c, run.rule, run.lane);
    lane.last = { run: run.id, session: run.session ?? run.job?.session ?? null, agent: run.agent, stopped: state === "cancelled" };
    putLane(c, lane);
  }
  if (run.retryCard !== null) closeCard(c, run.retryCard, state === "cancelled" ? c.msg("result.cancelled") : c.msg("result.notNeeded"));
  if (state !== "cancelled") {
    for (const id of run.answers) {
      const card = c.tx.get("cards", id);
      if (card && card.state === "answered") {
        card.result = c.msg("result.executed");
        const from = card.state;
        card.state = "closed";
        card.closedAt = c.now;
        saveCard(c, card, from);
      }
    }
  }
  c.tx.put("runs", run.id, run);
}

/** Retry delay after the n-th consecutive failure: 5 min doubling, at most 1 h (protocol.md 失败时会怎样). */
export function retryDelayMs(failures: number): number {
  return backoffMs(failures, retryDelayFirstMs, retryDelayMaxMs);
}

/** A failed attempt: retry later on the same session, card at the 3rd, cancel at the 10th. */
export function failRun(c: Ctx, run: RunRow, error: string): void {
  // The attempt is over, whether it is retried or not: its calls still without an outcome will get none.
  endLostCalls(c, run.id);
  run.failures += 1;
  run.error = error;
  backFromUncertain(c, run);
  const rule = c.rule(run.rule);
  if (run.failures >= failuresBeforeCancel) {
    createCard(c, {
      kind: "notice", title: c.worded("card.gaveUp.title", { rule: run.rule, n: run.failures }),
      text: c.worded("card.gaveUp.text", { run: run.id, error }), rule: rule ?? null, lane: run.lane, run: run.id, system: "gaveUp",
    });
    endRun(c, run, "cancelled");
    return;
  }
  release(c, run);
  c.undue("lease", run.id);
  const s = run.session ?? run.job?.session ?? null;
  dropSessions(c, run);
  if (s) run.sessionHint = { session: s, agent: run.agent };
  moveRun(run, "waiting");
  run.claim = null;
  run.readyAt = c.now + retryDelayMs(run.failures);
  c.due("retry", run.id, run.readyAt);
  // Work that arrived for the lane while this run was running joins the retry (protocol.md 失败时会怎样).
  const lane = getLane(c, run.rule, run.lane);
  if (lane.queued !== null) { // never this run: it was active, and a lane's active run is never its queued one
    const newer = c.tx.get("runs", lane.queued);
    if (newer && newer.state === "queued") {
      run.events.push(...newer.events);
      run.answers.push(...newer.answers);
      run.timers.push(...newer.timers);
      run.manual ||= newer.manual;
      run.hops = Math.max(run.hops, newer.hops);
      moveRun(newer, "cancelled");
      newer.outcome = "cancelled";
      newer.endedAt = c.now;
      newer.mergedInto = run.id;
      c.tx.put("runs", newer.id, newer);
    }
  }
  lane.queued = run.id;
  putLane(c, lane);
  if (run.failures === failuresBeforeCard) {
    run.retryCard = createCard(c, {
      kind: "notice", title: c.worded("card.failing.title", { rule: run.rule, n: run.failures }),
      text: c.worded("card.failing.text", { run: run.id, error }),
      rule: rule ?? null, lane: run.lane, run: run.id, system: "failing",
    });
  }
  c.tx.put("runs", run.id, run);
}

/**
 * POST /v1/runs/:id/cancel (owner): queued and waiting runs end at once; claimed and running ones are
 * stopped by their worker first; an uncertain one ends now and is cancelled if its worker comes back.
 * @returns whether anything changed.
 */
export function cancelRun(c: Ctx, run: RunRow): boolean {
  switch (run.state) {
    case "queued":
    case "waiting":
    case "uncertain":
      run.stopRequested = true;
      endRun(c, run, "cancelled");
      return true;
    case "claimed":
    case "running":
      moveRun(run, "stopping");
      run.stopRequested = true;
      c.tx.put("runs", run.id, run);
      c.wake.workers = true;
      return true;
    default:
      return false;
  }
}

/** A lease ran out: the worker has not reported the run for 5 minutes; free its group and tell the owner. */
export function leaseExpired(c: Ctx, runId: number): void {
  const run = c.tx.get("runs", runId);
  if (!run || !["claimed", "running", "stopping"].includes(run.state)) return;
  if (run.stopRequested) {
    endRun(c, run, "cancelled");
    return;
  }
  moveRun(run, "uncertain");
  release(c, run);
  c.tx.put("runs", run.id, run);
  // A run with a lease was claimed, so it has its worker.
  assert(run.worker !== null, "leased-run-has-worker");
  createCard(c, {
    kind: "notice", key: systemCardKey.uncertain(run.id), title: c.worded("card.uncertain.title", { run: run.id, rule: run.rule }),
    text: c.worded("card.uncertain.text", { worker: run.worker }), rule: null, lane: "", run: run.id, system: "uncertain",
  });
}

/** A retry wait ended: the run is queued again. */
export function retryDue(c: Ctx, runId: number): void {
  // A retry deadline is removed in the same step as its run leaves "waiting" (ended, or started by `run <rule>`).
  const run = c.tx.get("runs", runId);
  assert(run?.state === "waiting", "retry-deadline-names-waiting-run");
  moveRun(run, "queued");
  run.readyAt = c.now;
  c.tx.put("runs", run.id, run);
  c.wake.workers = true;
}

/** A `later` timer came due: its lane gets a run that continues the session of the run that set it. */
export function timerDue(c: Ctx, key: string): void {
  const tm = c.tx.get("timers", key);
  if (!tm) return;
  c.tx.del("timers", key);
  const rule = c.rule(tm.rule);
  if (!rule) return;
  const setter = tm.run !== null ? c.tx.get("runs", tm.run) : undefined;
  const session = setter?.session ?? null;
  const src = rule.source;
  const ev = recordEvent(c, {
    source: src, sid: `later:${tm.lane}:${tm.key}:${c.iso(tm.at)}`, type: "timer.due", subject: tm.lane || null,
    summary: tm.about, detail: null, link: null, hops: tm.hops, internal: "timer",
  });
  ev.routed = [rule.name];
  c.tx.put("events", ev.id, ev);
  enqueue(c, rule, tm.lane, {
    events: [ev.id], timers: [{ key: tm.key, about: tm.about, at: tm.at, run: tm.run }], hops: tm.hops,
    sessionHint: session ? { session, agent: setter?.agent ?? null } : null,
  });
}

/** Cancels unclaimed runs of rules that no longer exist, with a notice (protocol.md 失败时会怎样). */
export function cancelOrphans(c: Ctx, names: Set<string>): void {
  for (const row of c.view.runsIn(runPendingStates)) {
    if (names.has(row.rule)) continue;
    const run = c.tx.get("runs", row.id);
    assert(run, "orphaned-run-exists");
    createCard(c, {
      kind: "notice", title: c.worded("card.ruleGone.title", { rule: run.rule, run: run.id }), text: c.worded("card.ruleGone.text"),
      rule: null, lane: "", run: run.id, system: "ruleGone",
    });
    endRun(c, run, "cancelled");
  }
}

