/**
 * Tool calls through time (issue 16): the kernel's decisions with the clock in the test's hands (tests/clock.ts: a
 * real SQLite store, the real decide and evolve, the due table run as the hub's timer runs it). A parked call's
 * deadline to the millisecond, the parked-calls and calls-per-run limits, and the day a call is counted in.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Clock, K } from "./clock.js";
import { callBody, factRows, toolRules } from "./tool-calls-helpers.js";
import { callResultOf } from "../src/kernel/tool-calls.js";
import { toolApprovalsOpenPerRunMax, toolCallOutcomeWaitMs, toolCallsPerRunMax, toolParkedCallsMax } from "../src/kernel/limits.js";
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

/** A callback on the legacy path (no key): the plugin jobs opts in to it with `legacy_callbacks` (hostile round 37, F37b-3). */
const callback = (k: Clock, task: string) => k.commit({ kind: "toolCallback", task, key: null, body: { status: "success", result: { n: 1 } } });
const legacyRules = toolRules([{ plugin: "jobs", mode: "auto", legacy_callbacks: true }], []);

test("a parked call's deadline, to the millisecond: a callback 1 ms before it completes the call, one at it is too late (410) even before the timer ran", () => {
  const k = new Clock(legacyRules, "2030-01-01T10:00:00Z");
  try {
    const early = ownerCall(k);
    assert.equal(park(k, early, "early-task-000000001", 5000), 200);
    const late = ownerCall(k);
    assert.equal(park(k, late, "late-task-0000000001", 5000), 200);
    k.now += 4999;
    assert.deepEqual([callback(k, "early-task-000000001").status, callback(k, "early-task-000000001").status], [200, 410], "in time, then ended (issue 34: 410)");
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
  const k = new Clock(legacyRules, "2030-01-01T10:00:00Z");
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
    const call = (r: number) => k.commit({ kind: "toolCall", run: r, token: k.token(r), body: callBody("jobs.run"), plugin: { builtIn: true, kind: "sync", disableModelInvocation: false, http: null } });
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

test("a run holds at most toolApprovalsOpenPerRunMax approval cards open: the next call that would ask is denied, saying so; an answer makes room (issue 26 round 6, F9)", () => {
  const k = new Clock(toolRules([], ["jobs.*"], 60), "2030-01-01T10:00:00Z");
  try {
    const run = k.claimed("e1", null, { subject: "s1" });
    // The reported case: 30 calls of distinct arguments at once, a plugin not built in (its first use asks).
    const call = (n: number) => k.commit({
      kind: "toolCall", run, token: k.token(run), body: callBody("jobs.run", { argsDigest: String(n).padStart(64, "0") }),
      plugin: { builtIn: false, kind: "sync", disableModelInvocation: false, http: null },
    }).body as ToolCallDecision;
    const decisions = Array.from({ length: 30 }, (_, i) => call(i));
    assert.deepEqual(decisions.map((d) => d.decision), [...Array(toolApprovalsOpenPerRunMax).fill("prompt"), ...Array(30 - toolApprovalsOpenPerRunMax).fill("deny")]);
    assert.equal(decisions[toolApprovalsOpenPerRunMax]!.reason, `run ${run} already has ${toolApprovalsOpenPerRunMax} tool approval cards waiting for an answer (limit ${toolApprovalsOpenPerRunMax}): answer them before calling again`);
    assert.equal(k.state().cards.filter((c) => c.state === "open").length, toolApprovalsOpenPerRunMax);
    // Another run asks on its own count.
    const other = k.claimed("e2", null, { subject: "s2" });
    const d = k.commit({ kind: "toolCall", run: other, token: k.token(other), body: callBody("jobs.run"), plugin: { builtIn: false, kind: "sync", disableModelInvocation: false, http: null } }).body as ToolCallDecision;
    assert.equal(d.decision, "prompt");
    // The owner answers one card of the first run: its next call asks again.
    const card = decisions[0]!.card!;
    assert.equal(k.commit({ kind: "answer", keyHash: K.owner, card, choice: 2, text: null, by: null, ref: null }).status, 200);
    assert.equal(call(100).decision, "prompt");
  } finally {
    k.close();
  }
});

test("an allowed call whose outcome never comes (its worker restarted) ends error, worker lost, when its run ends or its wait passes (issue 26, finding 10)", () => {
  const k = new Clock(toolRules([], ["jobs.*"]), "2030-01-01T10:00:00Z");
  try {
    const known = { builtIn: true, kind: "sync", disableModelInvocation: false, http: null } as const;
    const agentCall = (run: number) => {
      const d = k.commit({ kind: "toolCall", run, token: k.token(run), body: callBody("jobs.run"), plugin: known });
      assert.equal((d.body as ToolCallDecision).decision, "allow");
      return (d.body as ToolCallDecision).call;
    };
    const rows = () => factRows(k.stream(), "calls");
    const end = (id: number) => {
      const r = rows().get(id)!;
      return [r.status, r.reason, r.reported, r.endedAt === null ? null : r.endedAt - Date.parse("2030-01-01T10:00:00Z")];
    };
    // The reported case: the worker restarted while a call ran; its run ended (here: done) without the call's outcome.
    const done = k.claimed("e1", "s-1", { subject: "a" });
    const lost = agentCall(done);
    // Varied: a call of the same run whose outcome came, and a parked one, are left as they are.
    const reported = agentCall(done);
    k.commit({ kind: "toolOutcome", run: done, token: k.token(done), call: reported, body: { status: "ok", durationMs: 5 } });
    const parked = agentCall(done);
    k.commit({ kind: "toolOutcome", run: done, token: k.token(done), call: parked, body: { status: "parked", durationMs: 5, taskId: "parked-task-00000001", timeoutMs: 600_000 } });
    k.now += 1000;
    k.result(done, { outcome: "done", summary: "ok" });
    assert.deepEqual(end(lost), ["error", `worker lost: run ${done} ended before the call's outcome came`, null, 1000]);
    assert.deepEqual([end(reported)[0], end(parked)[0]], ["ok", "parked"]);
    // A report that comes after is refused: the call already ended.
    const late = k.commit({ kind: "toolOutcome", run: done, token: k.token(done), call: lost, body: { status: "ok", durationMs: 1 } });
    assert.deepEqual([late.status, late.body], [409, { error: `tool call ${lost} already ended as error` }]);
    // Varied: a run that failed and waits for its retry (the attempt is over); a run the owner cancelled while its
    // lease had run out (uncertain).
    const failed = k.claimed("e2", "s-2", { subject: "b" });
    const lost2 = agentCall(failed);
    k.result(failed, { outcome: "failed", error: "the agent crashed" });
    assert.equal(k.run(failed).state, "waiting");
    assert.deepEqual(end(lost2), ["error", `worker lost: run ${failed} ended before the call's outcome came`, null, 1000]);
    const cancelled = k.claimed("e3", "s-3", { subject: "c" });
    const lost3 = agentCall(cancelled);
    k.now += 6 * 60_000;
    k.tick(); // its lease runs out: uncertain, still one whose calls may report
    assert.equal(k.run(cancelled).state, "uncertain");
    assert.equal(end(lost3)[0], "allowed");
    k.commit({ kind: "cancel", keyHash: K.owner, run: cancelled });
    assert.deepEqual(end(lost3), ["error", `worker lost: run ${cancelled} ended before the call's outcome came`, null, 1000 + 6 * 60_000]);
    // Varied: the run goes on (its worker came back) but the call's outcome never comes; and the owner's own call,
    // which has no run: each ends when `toolCallOutcomeWaitMs` has passed since it was allowed, not a millisecond before.
    const going = k.claimed("e4", "s-4", { subject: "d" });
    const lost4 = agentCall(going);
    const own = ownerCall(k);
    const allowedAt = k.now;
    k.advance(allowedAt + toolCallOutcomeWaitMs - 1);
    assert.deepEqual([end(lost4)[0], end(own)[0]], ["allowed", "allowed"]);
    k.advance(allowedAt + toolCallOutcomeWaitMs);
    const waited = `worker lost: no outcome came within ${toolCallOutcomeWaitMs / 60_000} minutes of the call being allowed`;
    assert.deepEqual(end(lost4), ["error", waited, null, allowedAt + toolCallOutcomeWaitMs - Date.parse("2030-01-01T10:00:00Z")]);
    assert.deepEqual(end(own), ["error", waited, null, allowedAt + toolCallOutcomeWaitMs - Date.parse("2030-01-01T10:00:00Z")]);
    // A call whose outcome came leaves no deadline behind; the lost ones are counted as errors (the parked call's own
    // deadline passed meanwhile: a timeout).
    assert.deepEqual(k.dueKeys(Number.MAX_SAFE_INTEGER).filter((d) => d.startsWith("toolLost")), []);
    assert.deepEqual(k.state().toolCalls, [{ plugin: "jobs", status: "error", count: 5 }, { plugin: "jobs", status: "ok", count: 1 }, { plugin: "jobs", status: "timeout", count: 1 }]);
  } finally {
    k.close();
  }
});
