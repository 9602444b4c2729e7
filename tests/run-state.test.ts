/**
 * A run's states and the only moves between them (src/kernel/run-state.ts; protocol.md Agent：领活、干活、交回执,
 * 失败时会怎样): the whole table, and a decision that would make a move the table does not have fails its invariant
 * (500, nothing written) instead of leaving the run somewhere no step expects it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Clock, written } from "./clock.js";
import { baseRules } from "./helpers.js";
import { deadlineRetryDelayMs } from "../src/kernel/due-steps.js";
import { moveRun, runMayMove } from "../src/kernel/run-state.js";
import { InvariantError } from "../src/kernel/assert.js";
import { runLeaseMs } from "../src/kernel/limits.js";
import type { RunRow, RunState } from "../src/kernel/types.js";

const states: RunState[] = ["queued", "waiting", "claimed", "running", "stopping", "uncertain", "done", "nothing", "cancelled"];

/** The moves protocol.md describes, one line per state: where a run in it may go next. */
const moves: Record<RunState, RunState[]> = {
  queued: ["claimed", "cancelled"], // a worker claims it; the owner stops it, its rule goes, or a retry takes it in
  waiting: ["queued", "cancelled"], // its retry wait ends or a manual run joins it; the owner stops it or its rule goes
  claimed: ["running", "stopping", "uncertain", "waiting", "done", "nothing", "cancelled"],
  running: ["stopping", "uncertain", "waiting", "done", "nothing", "cancelled"], // never claimed again: it started
  stopping: ["done", "nothing", "cancelled"], // the owner stopped it: never retried, never uncertain
  uncertain: ["claimed", "running", "waiting", "done", "nothing", "cancelled"], // its worker reports it again, or its result comes
  done: [],
  nothing: [],
  cancelled: [],
};

test("the run-state table: exactly the moves the protocol describes, none out of an end state, none to the same state", () => {
  const allowed = states.flatMap((from) => states.filter((to) => runMayMove(from, to)).map((to) => `${from} → ${to}`));
  assert.deepEqual(allowed.sort(), states.flatMap((from) => moves[from].map((to) => `${from} → ${to}`)).sort());
  assert.equal(runMayMove("toString" as RunState, "queued"), false, "not a state: no move (an inherited name neither)");
});

test("moveRun changes the state along the table and throws run-move-allowed off it, leaving the run as it was", () => {
  const run = { state: "queued" } as RunRow;
  moveRun(run, "claimed");
  assert.equal(run.state, "claimed");
  for (const [from, to] of [["done", "queued"], ["cancelled", "cancelled"], ["stopping", "uncertain"], ["running", "claimed"]] as const) {
    const r = { state: from } as RunRow;
    assert.throws(() => moveRun(r, to), (e: unknown) => e instanceof InvariantError && e.invariant === "run-move-allowed");
    assert.equal(r.state, from);
  }
});

test("a stopping run that was never asked to stop (a damaged row) fails its lease deadline instead of becoming uncertain", () => {
  const k = new Clock(baseRules, "2026-11-02T08:00:00Z", { failingTicks: true });
  const run = k.claimed("e1");
  // A run is stopping only because the owner asked (stopRequested); this row says otherwise. (The row as the stream
  // last wrote it, damaged.)
  const row = written({ facts: k.stream() }, "runs").filter((r) => r?.id === run).at(-1)!;
  k.appendRaw("corrupt", [["runs", run, { ...row, state: "stopping", stopRequested: false }]]);
  const seq = k.seq();
  k.now += runLeaseMs;
  const [lease] = k.tick();
  assert.deepEqual([lease!.status, lease!.body], [500, { error: "internal error: invariant run-move-allowed" }]);
  assert.equal(k.run(run).state, "stopping");
  assert.deepEqual([k.nextDeadline(), k.dueKeys(k.now + deadlineRetryDelayMs(1))], [k.now + deadlineRetryDelayMs(1), [`lease:${run}`]], "its lease deadline failed once");
  assert.equal(k.seq(), seq + 1, "only the deadline's failure was written");
  k.close();
});
