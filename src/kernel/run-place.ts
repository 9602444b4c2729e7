/**
 * A run's place (protocol.md 规则: a group runs at most its limit at once, a lane one at a time): taking and freeing it
 * in the group and lane rows, whether an uncertain run may take its lane back, and the session rows that name a run.
 * Shared by the claims (runs.ts) and the ends (run-end.ts) of runs.
 */
import type { Ctx } from "./context.js";
import { closeCard, openAlert } from "./cards.js";
import { getLane, putLane } from "./lanes.js";
import type { GroupRow, RunRow } from "./types.js";
import { systemCardKey } from "./system-cards.js";

/** The limit of runs at once in a group: the largest `parallel` of its rules, else 1 (protocol.md 规则). */
export function groupLimit(c: Ctx, group: string): number {
  let limit = 1;
  for (const r of c.rules.rules) if (r.group === group && r.parallel !== null) limit = Math.max(limit, r.parallel);
  return limit;
}

/** The group row `name` (no row: no run of it holds a place). */
export function getGroup(c: Ctx, name: string): GroupRow {
  return c.tx.get("groups", name) ?? { name, active: [] };
}

/** Gives the run its place in its group and lane (a claim, or an uncertain run whose worker came back). */
export function occupy(c: Ctx, run: RunRow): void {
  // Only runs outside their group get here: queued ones, and uncertain ones that release() let go.
  const g = getGroup(c, run.group);
  g.active.push(run.id);
  c.tx.put("groups", g.name, g);
  const lane = getLane(c, run.rule, run.lane);
  lane.active = run.id;
  if (lane.queued === run.id) lane.queued = null;
  putLane(c, lane);
}

/** Frees the run's place in its group and lane (end, or uncertain). */
export function release(c: Ctx, run: RunRow): void {
  const g = getGroup(c, run.group);
  if (g.active.includes(run.id)) {
    g.active = g.active.filter((id) => id !== run.id);
    if (g.active.length === 0) c.tx.del("groups", g.name);
    else c.tx.put("groups", g.name, g);
  }
  // The lane is written even when it did not hold the run: every caller writes it in the same fact anyway.
  const lane = getLane(c, run.rule, run.lane);
  if (lane.active === run.id) lane.active = null;
  if (lane.queued === run.id) lane.queued = null;
  putLane(c, lane);
  c.wake.workers = true;
}

/**
 * Whether an uncertain run can take its lane back: only when no other run took the lane meanwhile (an uncertain
 * run itself released it). Otherwise it stays uncertain (outside its group's count) until its result arrives or
 * the owner stops it.
 */
export function laneFree(c: Ctx, run: RunRow): boolean {
  return getLane(c, run.rule, run.lane).active === null;
}

/** Drops the session rows that still name this run: the session it reported and the one its job was handed. */
export function dropSessions(c: Ctx, run: RunRow): void {
  for (const s of [run.session, run.job?.session]) {
    if (s && c.tx.get("sessions", s)?.run === run.id) c.tx.del("sessions", s);
  }
}

/** Closes the "uncertain" card of a run whose worker reported it again. */
export function backFromUncertain(c: Ctx, run: RunRow): void {
  const card = openAlert(c, systemCardKey.uncertain(run.id));
  if (card) closeCard(c, card.id, c.msg("result.notNeeded"));
}
