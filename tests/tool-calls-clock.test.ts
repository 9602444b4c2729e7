/**
 * Tool calls through time (issue 16): the kernel's decisions with the clock in the test's hands (tests/clock.ts: a
 * real SQLite store, the real decide and evolve, the due table run as the hub's timer runs it). A parked call's
 * deadline to the millisecond, the parked-calls and calls-per-run limits, and the day a call is counted in.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Clock, K } from "./clock.js";
import { callBody, toolRules } from "./tool-calls-helpers.js";
import { callResultOf } from "../src/kernel/tool-calls.js";
import { toolCallsPerRunMax, toolParkedCallsMax } from "../src/kernel/limits.js";
import type { Change, ToolCallRow } from "../src/kernel/types.js";
import type { ToolCallDecision } from "../src/protocol/responses.js";

/** The owner's call of `tool`, allowed: its id. */
function ownerCall(k: Clock, tool = "jobs.run"): number {
  const d = k.commit({ kind: "ownerToolCall", keyHash: K.owner, body: callBody(tool) });
  assert.equal(d.status, 200, JSON.stringify(d.body));
  return (d.body as ToolCallDecision).call;
}

/** Parks the owner's call `call` as task `task` with a deadline `timeoutMs` from now: the answer's status. */
function park(k: Clock, call: number, task: string, timeoutMs: number): number {
  return k.commit({ kind: "ownerToolOutcome", keyHash: K.owner, call, body: { status: "parked", durationMs: 1, taskId: task, timeoutMs } }).status;
}

const callback = (k: Clock, task: string) => k.commit({ kind: "toolCallback", task, body: { status: "success", result: { n: 1 } } });

test("a parked call's deadline, to the millisecond: a callback 1 ms before it completes the call, one at it is too late (410) even before the timer ran", () => {
  const k = new Clock(toolRules([], []), "2030-01-01T10:00:00Z");
  try {
    const early = ownerCall(k);
    assert.equal(park(k, early, "early-task-000000001", 5000), 200);
    const late = ownerCall(k);
    assert.equal(park(k, late, "late-task-0000000001", 5000), 200);
    k.now += 4999;
    assert.deepEqual([callback(k, "early-task-000000001").status, callback(k, "early-task-000000001").status], [200, 404], "in time, then completed");
    k.now += 1; // exactly the deadline; the timer has not run
    const d = callback(k, "late-task-0000000001");
    assert.deepEqual([d.status, d.body, d.facts], [410, { error: "this task's deadline has passed: the call already failed with a timeout" }, []]);
    // The timer records the timeout; the task stays too late.
    k.tick();
    assert.equal(callback(k, "late-task-0000000001").status, 410);
    assert.deepEqual(k.state().toolCalls, [{ plugin: "jobs", status: "ok", count: 1 }, { plugin: "jobs", status: "timeout", count: 1 }]);
  } finally {
    k.close();
  }
});

test("a parked call's result reads pending until its deadline and timeout from the deadline on, before any timer", () => {
  const row = { status: "parked", deadline: 10_000, result: null } as unknown as ToolCallRow;
  assert.deepEqual([callResultOf(row, 9_999), callResultOf(row, 10_000), callResultOf(row, 10_001)], [{ status: "pending" }, { status: "timeout" }, { status: "timeout" }]);
  assert.equal(callResultOf({ ...row, deadline: null }, 0), null, "never parked: no result to wait for");
  assert.deepEqual(callResultOf({ ...row, status: "ok", result: { status: "ok", result: 5 } }, 20_000), { status: "ok", result: 5 });
});

test("at most toolParkedCallsMax calls are parked at once: one more is refused (429, nothing written) until one ends", () => {
  const k = new Clock(toolRules([], []), "2030-01-01T10:00:00Z");
  try {
    // As if toolParkedCallsMax - 1 were parked already (parking that many through the kernel would take long).
    k.appendRaw("test", [["meta", "toolCalls", { parked: toolParkedCallsMax - 1 }]]);
    const first = ownerCall(k);
    assert.equal(park(k, first, "limit-task-000000001", 60_000), 200);
    const second = ownerCall(k);
    const seq = k.seq();
    const refused = k.commit({ kind: "ownerToolOutcome", keyHash: K.owner, call: second, body: { status: "parked", durationMs: 1, taskId: "limit-task-000000002", timeoutMs: 60_000 } });
    assert.deepEqual([refused.status, refused.body, k.seq()], [429, { error: `${toolParkedCallsMax} async calls are waiting for their callbacks already; let some finish first` }, seq]);
    assert.equal(callback(k, "limit-task-000000001").status, 200);
    assert.equal(park(k, second, "limit-task-000000002", 60_000), 200, "room again once one ended");
    // A timed-out call makes room too.
    k.minutes(2);
    const third = ownerCall(k);
    assert.equal(park(k, third, "limit-task-000000003", 60_000), 200);
  } finally {
    k.close();
  }
});

test("status counts a call on the day it ended, in the rules' time zone: yesterday's calls are not today's", () => {
  const k = new Clock({ ...toolRules([], []), timezone: "Asia/Shanghai" }, "2030-01-01T15:50:00Z"); // 23:50 in Shanghai
  try {
    const end = (status: "ok" | "error") => k.commit({ kind: "ownerToolOutcome", keyHash: K.owner, call: ownerCall(k), body: { status, durationMs: 3 } });
    end("ok");
    end("error");
    assert.deepEqual(k.state().toolCalls, [{ plugin: "jobs", status: "error", count: 1 }, { plugin: "jobs", status: "ok", count: 1 }]);
    k.minutes(20); // 00:10 the next day in Shanghai
    assert.deepEqual(k.state().toolCalls, [], "a new day");
    end("ok");
    end("ok");
    assert.deepEqual(k.state().toolCalls, [{ plugin: "jobs", status: "ok", count: 2 }]);
  } finally {
    k.close();
  }
});

test("a run makes at most toolCallsPerRunMax tool calls: the next is refused (429, nothing written); another run is not affected", () => {
  const k = new Clock(toolRules([], ["jobs.*"]), "2030-01-01T10:00:00Z");
  try {
    const run = k.claimed("e1", null, { subject: "s1" });
    const call = (r: number) => k.commit({ kind: "toolCall", run: r, token: k.token(r), body: callBody("jobs.run"), plugin: { builtIn: true, kind: "sync", disableModelInvocation: false } });
    // As if the run had made toolCallsPerRunMax - 1 calls already (making them through the kernel would take long).
    k.appendRaw("test", Array.from({ length: toolCallsPerRunMax - 1 }, (_, i) => ["calls", 1000 + i, { id: 1000 + i, run }] as Change));
    assert.equal(call(run).status, 200, "the last one allowed");
    const seq = k.seq();
    const refused = call(run);
    assert.deepEqual([refused.status, refused.body, k.seq()], [429, { error: `run ${run} made ${toolCallsPerRunMax} tool calls already: no more are accepted` }, seq]);
    const other = k.claimed("e2", null, { subject: "s2" });
    assert.equal(call(other).status, 200);
  } finally {
    k.close();
  }
});
