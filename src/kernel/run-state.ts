/**
 * The states of a run and the only ways between them (protocol.md Agent：领活、干活、交回执, 失败时会怎样). Every change
 * of `RunRow.state` goes through `moveRun`; a move the table does not list is a kernel bug and fails its `assert`.
 *
 *   queued    → claimed (a worker took it) · cancelled (stopped, rule gone, merged into a retry)
 *   waiting   → queued (its retry wait ended, or a manual run joined it) · cancelled
 *   claimed   → running (started) · stopping (the owner stops it) · uncertain (lease ran out) · waiting (failed,
 *               retried later) · done · nothing · cancelled
 *   running   → the same but running
 *   stopping  → done · nothing · cancelled (a run being stopped is never retried, and its lease ends it cancelled)
 *   uncertain → claimed · running (its worker reported it again) · waiting · done · nothing · cancelled
 *   done, nothing, cancelled: ended, never left.
 */
import type { RunOutcome, RunRow, RunState } from "./types.js";
import { assert } from "./assert.js";

/** The states a run may move to from each state that has not ended (see above). */
export const runMoves: Readonly<Record<Exclude<RunState, RunOutcome>, readonly RunState[]>> = {
  queued: ["claimed", "cancelled"],
  waiting: ["queued", "cancelled"],
  claimed: ["running", "stopping", "uncertain", "waiting", "done", "nothing", "cancelled"],
  running: ["stopping", "uncertain", "waiting", "done", "nothing", "cancelled"],
  stopping: ["done", "nothing", "cancelled"],
  uncertain: ["claimed", "running", "waiting", "done", "nothing", "cancelled"],
};

/** Whether a run may move from `from` to `to`. */
export function runMayMove(from: RunState, to: RunState): boolean {
  return Object.hasOwn(runMoves, from) && runMoves[from as keyof typeof runMoves].includes(to);
}

/**
 * Moves `run` to `to` (in memory: the caller writes the row).
 * @throws InvariantError `run-move-allowed` when the table has no such move.
 */
export function moveRun(run: RunRow, to: RunState): void {
  assert(runMayMove(run.state, to), "run-move-allowed");
  run.state = to;
}
