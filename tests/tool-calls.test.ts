/**
 * Tool calls through the hub (issue 16, TOOL-CALLS plan): a real hub over HTTP on 127.0.0.1, a real SQLite file. A
 * run's tool calls are decided by rules.json's approvals (exact plugin+tool, then plugin, then auto;
 * allow_session_keys; disable_model_invocation; the first call of a plugin that is not built in asks once, trusted by
 * plugin name and manifest digest), a `prompt` is an ask card whose answer decides the held call or, after the hold,
 * the next call of the tool in that session and wakes the lane; outcomes, parked async calls and their callbacks are
 * facts. Every answer is checked against its published shape (the fixture's `checkAnswer`).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { baseRules, hubFixture, until, type Fixture } from "./helpers.js";
import { toolArgsDigest, toolArgsPreview } from "../src/protocol/tool-calls.js";
import { HubClient, HubError } from "../src/protocol/client.js";
import { timeline } from "../src/cli/why.js";
import type { Job, OwnerCard, ToolCallDecision } from "../src/protocol/responses.js";
import type { ToolCallBody } from "../src/protocol/schema.js";

const digestA = "a".repeat(64);
const digestB = "b".repeat(64);
const args = { name: "Ada" };

/** Rules whose rule `alerts` offers `tools`, one run per subject, with these approvals and hold. */
function toolRules(approvals: unknown[], tools: string[], approvalWaitSeconds?: number) {
  return {
    ...baseRules,
    approvals,
    ...(approvalWaitSeconds === undefined ? {} : { approvalWaitSeconds }),
    rules: [{ ...baseRules.rules[0], parallel: 10, tools }, baseRules.rules[1]],
  };
}

/** A call body for `tool`: the arguments' digest and preview as the bridge sends them, manifest A, not built in. */
function callBody(tool: string, o: Partial<ToolCallBody> = {}): ToolCallBody {
  return { tool, argsDigest: toolArgsDigest(args), preview: toolArgsPreview(args), manifestDigest: digestA, builtIn: false, disableModelInvocation: false, ...o };
}

let claims = 0;
/** Posts an `alert.x` event with `subject` and claims its run as worker w1: the job, with its token. */
async function runOf(f: Fixture, subject: string): Promise<Job> {
  claims += 1;
  const posted = await f.call("POST", "/v1/events", f.keys.source, { id: `e${claims}-${subject}`, type: "alert.x", subject });
  assert.equal(posted.status, 200, JSON.stringify(posted.body));
  const job = (await f.call("GET", `/v1/work?claim=c${claims}`, f.keys.worker)).body.job as Job | null;
  assert.ok(job, "a job to claim");
  return job;
}

test("each approval path: exact tool, plugin, default, allow_session_keys, disable_model_invocation, not offered, first use, the owner's own calls", async () => {
  const f = await hubFixture(toolRules([
    { plugin: "hello-python", tool: "hello-python.greet", mode: "prompt", allow_session_keys: ["alerts:ok-*"] },
    { plugin: "dangerous", mode: "deny" },
    { plugin: "search", mode: "auto" },
  ], ["hello-python.greet", "search.*", "dangerous.*", "builtin.*", "secret.*"]));
  try {
    const client = new HubClient(f.url, null);
    const job = await runOf(f, "s1");
    assert.deepEqual([job.tools, job.sessionKey], [["hello-python.greet", "search.*", "dangerous.*", "builtin.*", "secret.*"], "alerts:s1"]);
    const call = (b: ToolCallBody) => client.toolCall(job.run, job.token, b);
    assert.deepEqual(await call(callBody("builtin.x", { builtIn: true })), { call: 1, decision: "allow" }, "no entry: auto");
    assert.deepEqual(await call(callBody("search.find", { builtIn: true })), { call: 2, decision: "allow" }, "the plugin's entry: auto");
    assert.deepEqual(await call(callBody("dangerous.rm", { builtIn: true })), { call: 3, decision: "deny", reason: "approvals[1] of rules.json denies dangerous.rm" });
    assert.deepEqual(await call(callBody("secret.wipe", { builtIn: true, disableModelInvocation: true })), {
      call: 4, decision: "deny", reason: "secret.wipe is hidden from agents (disable_model_invocation = true in its manifest)",
    });
    assert.deepEqual(await call(callBody("other.tool", { builtIn: true })), { call: 5, decision: "deny", reason: "rule alerts does not offer other.tool (see its \"tools\" in rules.json)" });
    const exact = await call(callBody("hello-python.greet", { builtIn: true }));
    assert.deepEqual([exact.decision, exact.card], ["prompt", 1], "the tool's entry: prompt, with a card");
    const first = await call(callBody("search.find"));
    assert.deepEqual([first.decision, first.card], ["prompt", 2], "the first call of a plugin that is not built in asks, even under auto");

    // allow_session_keys: the session `alerts:ok-1` needs no approval for the built-in tool; not built in, its first use still asks.
    const ok = await runOf(f, "ok-1");
    assert.deepEqual(await client.toolCall(ok.run, ok.token, callBody("hello-python.greet", { builtIn: true })), { call: 8, decision: "allow" });
    assert.equal((await client.toolCall(ok.run, ok.token, callBody("hello-python.greet"))).decision, "prompt");

    // The owner: never prompted, `deny` still refuses, disable_model_invocation does not hide a tool from the owner.
    const owner = new HubClient(f.url, f.keys.owner);
    assert.deepEqual(await owner.ownerToolCall(callBody("hello-python.greet")), { call: 10, decision: "allow" });
    assert.deepEqual(await owner.ownerToolCall(callBody("dangerous.rm")), { call: 11, decision: "deny", reason: "approvals[1] of rules.json denies dangerous.rm" });
    assert.deepEqual(await owner.ownerToolCall(callBody("secret.wipe", { disableModelInvocation: true })), { call: 12, decision: "allow" });

    // The calls are facts, with the session key, the caller, the digest and the decision: never the arguments.
    const row = f.running.hub.store.view.get("calls", 6)!;
    assert.deepEqual({ ...row, at: 0 }, {
      id: 6, run: job.run, caller: "agent", by: "bot", plugin: "hello-python", tool: "hello-python.greet", sessionKey: "alerts:s1",
      argsDigest: toolArgsDigest(args), manifestDigest: digestA, builtIn: true, decision: "prompt", why: "tool", approval: 0, reason: null,
      card: 1, waitUntil: row.at + 60_000, status: "asking", durationMs: null, at: 0, endedAt: null, deadline: null, result: null, reported: null,
    });
    assert.equal(f.running.hub.store.view.get("calls", 10)!.sessionKey, "owner:owner");
    const card = (await f.state()).cards.find((c: OwnerCard) => c.id === 1)!;
    assert.deepEqual([card.title, card.options, card.run, card.lane], ["Allow hello-python.greet?", ["allow once", "always allow", "deny"], job.run, "s1"]);
    assert.equal(card.text, `Run ${job.run} (session alerts:s1) wants to call tool hello-python.greet.\nArguments: {"name":"Ada"}\napprovals[0] of rules.json asks you before each call.`);
    const second = (await f.state()).cards.find((c: OwnerCard) => c.id === 2)!;
    assert.match(second.text, new RegExp(`This is an agent's first call of plugin search \\(manifest sha256 ${digestA}\\)`));

    // `why` shows the run's calls.
    const lines = timeline(job.run, (await owner.why(job.run)).facts).map((l) => l.slice(16));
    assert.deepEqual(lines.filter((l) => l.includes("tool ")), [
      "tool builtin.x (alerts:s1): allow",
      "tool search.find (alerts:s1): allow",
      "tool dangerous.rm (alerts:s1): denied — approvals[1] of rules.json denies dangerous.rm",
      "tool secret.wipe (alerts:s1): denied — secret.wipe is hidden from agents (disable_model_invocation = true in its manifest)",
      "tool other.tool (alerts:s1): denied — rule alerts does not offer other.tool (see its \"tools\" in rules.json)",
      "tool hello-python.greet (alerts:s1): asks the owner on card 1",
      "tool search.find (alerts:s1): asks the owner on card 2",
    ]);
  } finally {
    await f.close();
  }
});
