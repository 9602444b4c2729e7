/**
 * The built-in `acp` agent: its permission rules (real folders and links), the bridge process (plugins/acp/client.ts,
 * compiled) talking to a stand-in agent that replays real ACP transcripts (claude-agent-acp 0.49.0 and codex-acp
 * 0.16.0, tests/fixtures/acp) and transcripts constructed for the failure paths, what `read` makes of its output,
 * and whole hub runs with the real claude-agent-acp adapter against the fake model server.
 */
import { test, describe, before, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import plugin, { bridgeScript } from "../plugins/acp/agent.js";
import { choosePermission, insideFolder, physicalPath } from "../plugins/acp/permission.js";
import { TurnLog } from "../plugins/acp/turn.js";
import { engine, tempDir, hubFixture, baseRules, until, type Fixture } from "./helpers.js";
import { receiptMessage, startFakeModel, type FakeModel } from "./fake-model.js";
import { agentsMissing, pointAgentsAt } from "./real-agents.js";
import { Worker } from "../src/worker/worker.js";
import { groupAlive, startSupervised, stopGroup } from "../src/worker/supervise.js";

const fixtures = join(engine, "tests", "fixtures", "acp");
const replayAgent = join(fixtures, "replay-agent.mjs");
const claudeTranscript = join(fixtures, "acp-claude-agent-acp.transcript.jsonl");
const codexTranscript = join(fixtures, "acp-zed-codex-acp.transcript.jsonl");
const claudeSession = "c7722bb4-412a-4003-ab16-5a4fe062f4d6";
const codexSession = "01a22965-50d4-7902-8bcf-06763044f845";
const options = [
  { kind: "allow_always", name: "Always Allow", optionId: "allow_always" },
  { kind: "allow_once", name: "Allow", optionId: "allow" },
  { kind: "reject_once", name: "Reject", optionId: "reject" },
];

describe("permissions per access", () => {
  test("read allows reads and searches only; full allows everything; only one-time options are chosen", () => {
    const dir = realpathSync(tempDir("aa-acp-perm-"));
    assert.deepEqual(choosePermission("read", dir, { kind: "read", locations: [{ path: "/etc/hosts" }] }, options).outcome, { outcome: "selected", optionId: "allow" });
    assert.deepEqual(choosePermission("read", dir, { kind: "search" }, options).outcome, { outcome: "selected", optionId: "allow" });
    assert.deepEqual(choosePermission("read", dir, { kind: "edit", locations: [{ path: join(dir, "a.txt") }] }, options).outcome, { outcome: "selected", optionId: "reject" });
    assert.deepEqual(choosePermission("read", dir, { kind: "execute" }, options).outcome, { outcome: "selected", optionId: "reject" });
    assert.deepEqual(choosePermission("edit", dir, { kind: "execute" }, options).outcome, { outcome: "selected", optionId: "reject" });
    assert.deepEqual(choosePermission("edit", dir, {}, options), { outcome: { outcome: "selected", optionId: "reject" }, decision: "reject", why: "access edit does not allow other" });
    const full = choosePermission("full", dir, { kind: "execute", title: "rm -rf /" }, options);
    assert.deepEqual(full, { outcome: { outcome: "selected", optionId: "allow" }, decision: "allow", why: "access full allows every request" });
  });

  test("a call of the run's tools server is allowed whatever the access; another server's tool or one named like it is not", () => {
    const dir = realpathSync(tempDir("aa-acp-perm-"));
    const ours = choosePermission("read", dir, { kind: "other", title: "mcp__agent-autoloop__hello-python_greet" }, options, "agent-autoloop");
    assert.deepEqual(ours, { outcome: { outcome: "selected", optionId: "allow" }, decision: "allow", why: "a tool the rule offers (server agent-autoloop): the hub's approvals decide its calls" });
    assert.equal(choosePermission("read", dir, { kind: "other", title: "mcp__agent-autoloop__hello-python_greet" }, options).decision, "reject", "no tools offered");
    assert.equal(choosePermission("read", dir, { kind: "other", title: "mcp__other__greet" }, options, "agent-autoloop").decision, "reject");
    assert.equal(choosePermission("read", dir, { kind: "other", title: "mcp__agent-autoloop-evil__greet" }, options, "agent-autoloop").decision, "reject");
  });

  test("edit allows edits inside the working folder, following links; a dangling link counts as outside", () => {
    const base = realpathSync(tempDir("aa-acp-links-"));
    const dir = join(base, "work");
    const outside = join(base, "outside");
    mkdirSync(join(dir, "sub"), { recursive: true });
    mkdirSync(outside);
    symlinkSync(outside, join(dir, "to-outside"));
    symlinkSync(join(dir, "sub"), join(dir, "to-sub"));
    symlinkSync(join(base, "missing"), join(dir, "dangling"));
    const edit = (path: string) => choosePermission("edit", dir, { kind: "edit", locations: [{ path }] }, options);
    assert.equal(edit(join(dir, "new.txt")).decision, "allow", "a new file inside");
    assert.equal(edit(join(dir, "sub", "deeper", "new.txt")).decision, "allow", "a new file in new folders inside");
    assert.equal(edit(join(dir, "to-sub", "x.txt")).decision, "allow", "a link to a folder inside");
    assert.deepEqual(edit(join(dir, "to-outside", "x.txt")), { outcome: { outcome: "selected", optionId: "reject" }, decision: "reject", why: `${join(dir, "to-outside", "x.txt")} is outside the working folder` });
    assert.equal(edit(join(dir, "dangling")).decision, "reject", "a link whose target does not exist");
    assert.equal(edit(join(dir, "dangling", "x.txt")).decision, "reject");
    assert.equal(edit(join(dir, "..", "outside", "x.txt")).decision, "reject");
    assert.equal(edit(join(dir, "to-sub", "..", "..", "outside", "x.txt")).decision, "reject", "`..` after a link goes up from the link's target");
    assert.equal(edit("/etc/passwd").decision, "reject");
    assert.equal(choosePermission("edit", dir, { kind: "edit", locations: [{ path: join(dir, "a") }, { path: "/tmp/b" }] }, options).decision, "reject", "every location must be inside");
    assert.equal(choosePermission("edit", dir, { kind: "edit" }, options).decision, "reject", "an edit that names no location");
    assert.equal(choosePermission("edit", dir, { kind: "delete", locations: [{ path: join(dir, "sub") }] }, options).decision, "allow");
    assert.equal(physicalPath(join(dir, "to-sub", "..", "to-outside"), dir), outside);
    assert.equal(insideFolder(dir, dir), true, "the folder itself");
    assert.equal(insideFolder(base + "/work-other/x", dir), false, "a sibling whose name starts the same");
  });

  test("no one-time option of the needed kind: the request is cancelled, never answered with allow_always", () => {
    const always = [{ kind: "allow_always", name: "Always", optionId: "always" }, { kind: "reject_always", name: "Never", optionId: "never" }];
    assert.deepEqual(choosePermission("full", "/w", { kind: "execute" }, always).outcome, { outcome: "cancelled" });
    assert.deepEqual(choosePermission("read", "/w", { kind: "execute" }, always).outcome, { outcome: "cancelled" });
    assert.deepEqual(choosePermission("read", "/w", { kind: "execute" }, [{ kind: "reject_once", name: "Cancel", optionId: "cancel" }]).outcome, { outcome: "selected", optionId: "cancel" });
  });
});

describe("the turn's reply and cost from session updates", () => {
  /** The `session/update` params of one agent process of a transcript, and where its first prompt was sent. */
  function updates(file: string, processIndex: number) {
    const out: { update: Parameters<TurnLog["update"]>[0]; afterPrompt: boolean }[] = [];
    let proc = 0;
    let prompted = false;
    for (const line of readFileSync(file, "utf8").split("\n").filter(Boolean)) {
      const e = JSON.parse(line) as { dir: string; msg: RpcMessage & { params?: { update?: Parameters<TurnLog["update"]>[0] } } };
      if (e.dir === "exit") proc++;
      if (proc !== processIndex) continue;
      if (e.dir === "->agent" && e.msg.method === "session/prompt") {
        if (prompted) break; // one prompt per launch
        prompted = true;
      }
      if (e.dir === "<-agent" && e.msg.method === "session/update") out.push({ update: e.msg.params?.update, afterPrompt: prompted });
    }
    return out;
  }
  function replay(file: string, processIndex: number): TurnLog {
    const log = new TurnLog();
    let begun = false;
    for (const u of updates(file, processIndex)) {
      if (u.afterPrompt && !begun) {
        log.beginPrompt();
        begun = true;
      }
      log.update(u.update);
    }
    return log;
  }

  test("claude-agent-acp: messages by messageId, the cost of the turn", () => {
    const log = replay(claudeTranscript, 0);
    assert.equal(log.reply(), "ACP claude-agent-acp ZETA");
    assert.equal(log.cost(), 0.0031547500000000004);
  });

  test("a loaded session: the replayed history is not the reply", () => {
    const codex = replay(codexTranscript, 1);
    assert.equal(codex.reply(), "after load");
    assert.equal(codex.cost(), undefined, "codex-acp reports no cost");
    const claude = replay(claudeTranscript, 1);
    assert.equal(claude.reply(), "TOOL_RESULT_SEEN: (Bash completed with no output)");
    assert.equal(claude.cost(), 0.006309500000000001);
    const onlyHistory = new TurnLog();
    for (const u of updates(codexTranscript, 1).filter((x) => !x.afterPrompt)) onlyHistory.update(u.update);
    onlyHistory.beginPrompt();
    assert.equal(onlyHistory.reply(), null);
  });

  test("without messageIds a thought, a tool call or a finished tool update ends a message", () => {
    const log = new TurnLog();
    log.beginPrompt();
    const say = (text: string) => log.update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } });
    say("Looking");
    say(" around.");
    log.update({ sessionUpdate: "tool_call", toolCallId: "t1", title: "ls", kind: "execute", status: "pending" });
    say("Half");
    log.update({ sessionUpdate: "tool_call_update", toolCallId: "t1", status: "in_progress" });
    say(" way");
    assert.equal(log.reply(), "Half way", "an update still in progress is no boundary");
    log.update({ sessionUpdate: "tool_call_update", toolCallId: "t1", status: "completed", locations: [{ path: "/w/a" }] });
    say("Done: ");
    log.update({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "hm" } });
    say("final");
    assert.equal(log.reply(), "final");
    assert.deepEqual(log.toolFacts("t1"), { kind: "execute", title: "ls", locations: [{ path: "/w/a" }] });
    assert.deepEqual(log.toolFacts("nope"), {});
    log.update(null);
    log.update({ sessionUpdate: "agent_message_chunk", content: { type: "image", data: "…" } });
    log.update({ sessionUpdate: "usage_update", cost: { amount: 0.5, currency: "EUR" } });
    assert.equal(log.cost(), undefined, "only USD counts");
    log.update({ sessionUpdate: "tool_call_update", toolCallId: "t1", status: "failed" });
    say("   ");
    assert.equal(log.reply(), null, "a last message of only whitespace is no reply");
  });
});

/** A JSON-RPC message as a transcript or the bridge's log holds it. */
interface RpcMessage { jsonrpc?: string; id?: number | string; method?: string; params?: unknown; result?: unknown }

interface BridgeRun { stdout: string; stderr: string; code: number | null; sent: RpcMessage[]; dir: string }

/** Runs the compiled bridge against the replay agent on `transcript`'s process `index`. */
async function bridge(transcript: string, index: number, o: { access?: string; resume?: string; skip?: string[]; prompt?: string; agent?: string[]; tools?: string } = {}): Promise<BridgeRun> {
  const dir = tempDir("aa-acp-bridge-");
  const promptFile = join(dir, "prompt.txt");
  writeFileSync(promptFile, o.prompt ?? "Hi REPLY_WITH:ACP");
  const log = join(dir, "sent.jsonl");
  writeFileSync(log, "");
  const args = [
    bridgeScript, "--access", o.access ?? "edit", "--prompt-file", promptFile, ...(o.resume ? ["--resume", o.resume] : []),
    ...(o.tools ? ["--tools", o.tools] : []), "--", ...(o.agent ?? [process.execPath, replayAgent, transcript, String(index), log, ...(o.skip ?? []).flatMap((s) => ["--skip", s])]),
  ];
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: dir, timeout: 20_000 }, (err, stdout, stderr) => {
      const code = err ? ((err as { code?: number }).code ?? null) : 0;
      resolve({ stdout, stderr, code: typeof code === "number" ? code : null, sent: readFileSync(log, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as RpcMessage), dir });
    });
  });
}

/** Writes a constructed transcript (agent processes separated by an "exit" entry). */
function transcript(...processes: object[][]): string {
  const file = join(tempDir("aa-acp-tr-"), "t.jsonl");
  writeFileSync(file, processes.map((p) => p.map((e) => JSON.stringify(e)).join("\n")).join('\n{"dir":"exit","msg":{}}\n') + "\n");
  return file;
}
const initialize = (caps: Record<string, unknown>) => [
  { dir: "->agent", msg: { jsonrpc: "2.0", id: 1, method: "initialize", params: {} } },
  { dir: "<-agent", msg: { jsonrpc: "2.0", id: 1, result: { protocolVersion: 1, agentCapabilities: caps, agentInfo: { name: "constructed", version: "0" } } } },
];
const update = (u: Record<string, unknown>) => ({ dir: "<-agent", msg: { jsonrpc: "2.0", method: "session/update", params: { sessionId: "s-1", update: u } } });
const promptTurn = (...agent: object[]) => [{ dir: "->agent", msg: { jsonrpc: "2.0", id: 3, method: "session/prompt", params: {} } }, ...agent];
const promptResult = (result: object) => ({ dir: "<-agent", msg: { jsonrpc: "2.0", id: 3, result } });
const newSession = [
  { dir: "->agent", msg: { jsonrpc: "2.0", id: 2, method: "session/new", params: {} } },
  { dir: "<-agent", msg: { jsonrpc: "2.0", id: 2, result: { sessionId: "s-1" } } },
];
const load = (answer: object) => [{ dir: "->agent", msg: { jsonrpc: "2.0", id: 2, method: "session/load", params: {} } }, { dir: "<-agent", msg: { jsonrpc: "2.0", id: 2, ...answer } }];
const read = (r: BridgeRun) => plugin.read(r.stdout, r.code, r.stderr)!;

describe("the bridge over recorded transcripts", () => {
  test("claude-agent-acp, a new session: the reply, the session, this launch's tokens and cost; ACP v1 with no client capabilities", async () => {
    const r = await bridge(claudeTranscript, 0);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(read(r), {
      started: true, finished: true, session: claudeSession, text: "ACP claude-agent-acp ZETA",
      usage: { input: 123 + 67 + 45, output: 89, cached: 67, cost: 0.0031547500000000004 },
    });
    assert.deepEqual(r.sent.map((m) => m.method), ["initialize", "session/new", "session/prompt"]);
    assert.deepEqual(r.sent[0].params, { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false }, clientInfo: { name: "agent-autoloop", version: "1" } });
    assert.deepEqual(r.sent[1].params, { cwd: realpathSync(r.dir), mcpServers: [] });
    assert.deepEqual(r.sent[2].params, { sessionId: claudeSession, prompt: [{ type: "text", text: "Hi REPLY_WITH:ACP" }] });
  });

  test("a permission request is answered per access with the one-time option; the reply is the last message", async () => {
    const edit = await bridge(claudeTranscript, 0, { access: "edit", skip: ["session/prompt=1"] });
    const answer = edit.sent.find((m) => m.id === 0 && m.method === undefined);
    assert.deepEqual(answer?.result, { outcome: { outcome: "selected", optionId: "reject" } });
    const permission = edit.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l)).find((l) => l.acp === "permission");
    assert.deepEqual(permission, { acp: "permission", tool: "touch created-acp.txt", kind: "execute", decision: "reject", option: "reject", why: "access edit does not allow execute" });
    assert.equal(read(edit).text, "TOOL_RESULT_SEEN: (Bash completed with no output)", "not 'Running the command.', the message before the tool");
    const full = await bridge(claudeTranscript, 0, { access: "full", skip: ["session/prompt=1"] });
    assert.deepEqual(full.sent.find((m) => m.id === 0 && m.method === undefined)?.result, { outcome: { outcome: "selected", optionId: "allow" } });
  });

  test("the rule's tools: an ACP stdio MCP server in session/new and session/load, with claude-agent-acp's option to wait for it", async () => {
    const tools = JSON.stringify({ server: "agent-autoloop", command: ["/usr/bin/node", "/engine/bin/agent-autoloop.js", "tools", "mcp", "--socket", "/run/agent/tools.sock", "--lang", "en"] });
    const server = { name: "agent-autoloop", command: "/usr/bin/node", args: ["/engine/bin/agent-autoloop.js", "tools", "mcp", "--socket", "/run/agent/tools.sock", "--lang", "en"], env: [] };
    const meta = { claudeCode: { options: { env: { MCP_CONNECTION_NONBLOCKING: "0" } } } };
    const fresh = await bridge(claudeTranscript, 0, { tools });
    assert.equal(fresh.code, 0, fresh.stderr);
    assert.deepEqual(fresh.sent[1].params, { cwd: realpathSync(fresh.dir), mcpServers: [server], _meta: meta });
    const loaded = await bridge(codexTranscript, 1, { resume: codexSession, tools });
    assert.deepEqual(loaded.sent[1].params, { sessionId: codexSession, cwd: realpathSync(loaded.dir), mcpServers: [server], _meta: meta });
    const bad = await bridge(claudeTranscript, 0, { tools: "{\"server\": 1}" });
    assert.deepEqual([bad.code, JSON.parse(bad.stdout)], [2, { acp: "failed", error: "acp bridge: unknown argument --tools {\"server\": 1}" }]);
  });

  test("a resumed session is loaded when the agent declares loadSession; the replayed history is not the reply", async () => {
    const codex = await bridge(codexTranscript, 1, { resume: codexSession });
    assert.equal(codex.code, 0, codex.stderr);
    assert.deepEqual(codex.sent.map((m) => m.method), ["initialize", "session/load", "session/prompt"]);
    assert.deepEqual(codex.sent[1].params, { sessionId: codexSession, cwd: realpathSync(codex.dir), mcpServers: [] });
    assert.deepEqual(read(codex), { started: true, finished: true, session: codexSession, text: "after load" });
    const claude = await bridge(claudeTranscript, 1, { resume: claudeSession, access: "read" });
    assert.deepEqual(read(claude), {
      started: true, finished: true, session: claudeSession, text: "TOOL_RESULT_SEEN: (Bash completed with no output)",
      usage: { input: 246 + 134 + 90, output: 178, cached: 134, cost: 0.006309500000000001 },
    });
    assert.deepEqual(claude.sent.find((m) => m.id === 0 && m.method === undefined)?.result, { outcome: { outcome: "selected", optionId: "reject" } }, "read does not allow execute");
  });

  test("codex-acp: messages without messageId, no usage", async () => {
    const r = await bridge(codexTranscript, 0, { skip: ["session/prompt=1"] });
    assert.deepEqual(read(r), {
      started: true, finished: true, session: codexSession,
      text: "TOOL_RESULT_SEEN: Chunk ID: 3711b0\nWall time: 0.0000 seconds\nProcess exited with code 1\nOriginal token count: 17\nOutput:\ntouch: cannot touch 'created-codex-acp.txt': Read-only file system\n",
    });
  });
});

describe("the bridge's failure paths (constructed transcripts)", () => {
  test("an error answer to session/load is a refusal whatever its code: not started, so the worker opens a new session", async () => {
    const t = transcript([...initialize({ loadSession: true }), ...load({ error: { code: -32603, message: "Internal error", data: { details: "no rollout found for thread id s-old" } } })]);
    const r = await bridge(t, 0, { resume: "s-old" });
    assert.equal(r.code, 1);
    assert.deepEqual(read(r), { started: false, finished: true, error: "the agent refused session s-old: Internal error: no rollout found for thread id s-old" });
  });

  test("an agent that can neither load nor resume refuses every old session; one that can only resume gets session/resume", async () => {
    const none = await bridge(transcript(initialize({})), 0, { resume: "s-old" });
    assert.deepEqual(read(none), { started: false, finished: true, error: "the agent refused session s-old: the agent can neither load nor resume a session (no loadSession, no sessionCapabilities.resume)" });
    assert.deepEqual(none.sent.map((m) => m.method), ["initialize"]);
    const t = transcript([
      ...initialize({ sessionCapabilities: { resume: {} } }),
      { dir: "->agent", msg: { jsonrpc: "2.0", id: 2, method: "session/resume", params: {} } },
      { dir: "<-agent", msg: { jsonrpc: "2.0", id: 2, result: {} } },
      ...promptTurn(update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Done: resumed" } }), promptResult({ stopReason: "end_turn" })),
    ]);
    const resumed = await bridge(t, 0, { resume: "s-old" });
    assert.deepEqual(resumed.sent.map((m) => m.method), ["initialize", "session/resume", "session/prompt"]);
    assert.deepEqual(read(resumed), { started: true, finished: true, session: "s-old", text: "Done: resumed" });
  });

  test("an error answer to session/new keeps the agent's details (claude-agent-acp as root without IS_SANDBOX=1)", async () => {
    const t = transcript([...initialize({}), { dir: "->agent", msg: { jsonrpc: "2.0", id: 2, method: "session/new", params: {} } },
      { dir: "<-agent", msg: { jsonrpc: "2.0", id: 2, error: { code: -32603, message: "Internal error", data: { details: "Claude Code process exited with code 1" } } } }]);
    const r = await bridge(t, 0);
    assert.equal(r.code, 1);
    assert.deepEqual(read(r), { started: true, finished: true, error: "the connection to the agent failed: Internal error: Claude Code process exited with code 1" });
  });

  test("thread_active_writer is 'not run' in the agent's own words, on the same session", async () => {
    const words = "Thread s-old is open in another Codex process; close it there first.";
    const t = transcript([...initialize({ loadSession: true }), ...load({ error: { code: -32603, message: words, data: { reason: "thread_active_writer" } } })]);
    const r = await bridge(t, 0, { resume: "s-old" });
    assert.deepEqual(read(r), { started: true, finished: true, error: words });
  });

  test("an agent that dies while loading, or does not start, stays on its session (started, not refused)", async () => {
    const died = await bridge(transcript([...initialize({ loadSession: true }), { dir: "->agent", msg: { jsonrpc: "2.0", id: 2, method: "session/load", params: {} } }, { dir: "die", code: 7 }]), 0, { resume: "s-old" });
    assert.deepEqual(read(died), { started: true, finished: true, error: "the agent exited (code 7) before its turn ended" });
const missing = await bridge("", 0, { resume: "s-old", agent: ["no-such-acp-agent-xyz"] });
    assert.equal(missing.code, 1);
    assert.deepEqual(read(missing), { started: true, finished: true, error: "could not start no-such-acp-agent-xyz: spawn no-such-acp-agent-xyz ENOENT" });
  });

  test("stopping the group ends an agent that ignores SIGTERM and its children (the agent runs in the bridge's group)", async () => {
    const dir = tempDir("aa-acp-stop-");
    const marker = `sleep ${986000 + Math.floor(Math.random() * 1000)}`;
    writeFileSync(join(dir, "prompt.txt"), "x");
    // An agent like codex-acp's wrapper: deaf to SIGTERM, never answers, and has a child of its own.
    const agent = `process.on("SIGTERM", () => {}); require("child_process").spawn("sh", ["-c", "${marker}"], { stdio: "ignore" }); setInterval(() => {}, 1000);`;
    mkdirSync(join(dir, "l"));
    await startSupervised(join(dir, "l"), [process.execPath, bridgeScript, "--access", "read", "--prompt-file", join(dir, "prompt.txt"), "--", process.execPath, "-e", agent], dir, { PATH: process.env.PATH! });
    await until(() => processes(`^${marker}`).length > 0, 10_000, "the agent's child");
    await stopGroup(join(dir, "l"), 500);
    assert.deepEqual(processes(marker), [], "the agent and its child are gone");
    assert.deepEqual(processes(join(dir, "prompt.txt")), [], "the bridge is gone");
  });

  test("a line that is not JSON fails the launch, with the line quoted", async () => {
    const t = transcript([...initialize({}), ...newSession, ...promptTurn({ dir: "<-raw", text: "Traceback: something broke" }, promptResult({ stopReason: "end_turn" }))]);
    const r = await bridge(t, 0);
    assert.deepEqual(read(r), { started: true, finished: true, session: "s-1", error: "the agent wrote a line that is not JSON: Traceback: something broke" });
  });

  test("only end_turn with a last text message is done", async () => {
    const noText = await bridge(transcript([...initialize({}), ...newSession, ...promptTurn(update({ sessionUpdate: "tool_call", toolCallId: "t", title: "x", kind: "read" }), promptResult({ stopReason: "end_turn" }))]), 0);
    assert.deepEqual(read(noText), { started: true, finished: true, session: "s-1", error: "the agent ended its turn without a text message" });
    const maxTokens = await bridge(transcript([...initialize({}), ...newSession, ...promptTurn(update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Half" } }), promptResult({ stopReason: "max_tokens" }))]), 0);
    assert.deepEqual(read(maxTokens), { started: true, finished: true, session: "s-1", error: "the agent stopped its turn: max_tokens" });
    const refusedThenCancelled = await bridge(transcript([...initialize({}), ...newSession, ...promptTurn(
      update({ sessionUpdate: "tool_call", toolCallId: "t9", title: "npm test", kind: "execute", status: "pending" }),
      { dir: "<-agent", msg: { jsonrpc: "2.0", id: 0, method: "session/request_permission", params: { sessionId: "s-1", toolCall: { toolCallId: "t9" }, options: [{ optionId: "cancel", name: "Cancel", kind: "reject_once" }] } } },
      { dir: "->agent", msg: { jsonrpc: "2.0", id: 0, result: {} } },
      promptResult({ stopReason: "cancelled" }),
    )]), 0, { access: "edit" });
    assert.deepEqual(refusedThenCancelled.sent.find((m) => m.id === 0 && !m.method)?.result, { outcome: { outcome: "selected", optionId: "cancel" } }, "a request carrying only the id is judged by the kind announced before");
    assert.deepEqual(read(refusedThenCancelled), { started: true, finished: true, session: "s-1", error: "the agent stopped its turn: cancelled (after a refused permission request: npm test: access edit does not allow execute)" });
  });
});

describe("the plugin's command line and reading", () => {
  test("the bridge runs the rule's command; the prompt goes in a file, not on the command line", () => {
    const folder = tempDir("aa-acp-cmd-");
    const turn = { prompt: "secret-ish prompt text", session: null, resume: null, cwd: "/w", access: "edit" as const, model: "m", effort: "high", command: ["claude-agent-acp", "--flag"], program: null, contextFile: join(folder, "context.json"), folder };
    const argv = plugin.command(turn);
    const promptFile = argv[5]!;
    assert.deepEqual(argv, [process.execPath, bridgeScript, "--access", "edit", "--prompt-file", promptFile, "--", "claude-agent-acp", "--flag"]);
    assert.equal(readFileSync(promptFile, "utf8"), "secret-ish prompt text");
    assert.ok(promptFile.startsWith(folder + "/acp-prompt-"));
    assert.ok(!argv.some((a) => a.includes("secret-ish")), "the prompt is not visible in process listings");
    assert.deepEqual(plugin.command({ ...turn, resume: "s-9", access: "full", program: "/opt/acp" }).slice(2),
      ["--access", "full", "--prompt-file", promptFile, "--resume", "s-9", "--", "/opt/acp", "--flag"]);
    const tools = { server: "agent-autoloop", command: ["/usr/bin/node", "/r.js", "/s.sock", "en"] };
    assert.deepEqual(plugin.command({ ...turn, tools }).slice(2), ["--access", "edit", "--prompt-file", promptFile, "--tools", JSON.stringify(tools), "--", "claude-agent-acp", "--flag"]);
    assert.throws(() => plugin.command({ ...turn, command: null }), /^Error: agent\.command is required for use: acp/);
  });

  test("read: output still being written, a bridge that died, a bad argument list", () => {
    assert.deepEqual(plugin.read("", null, ""), { started: false });
    assert.deepEqual(plugin.read('{"acp":"agent"}\n{"acp":"session","session":"s-2","via":"new"}\n{"acp":"pro', null, ""), { started: true, session: "s-2" });
    assert.deepEqual(plugin.read("", 1, "Error: Cannot find module '@agentclientprotocol/sdk'\n"), { started: true, error: "Error: Cannot find module '@agentclientprotocol/sdk'" });
    assert.deepEqual(plugin.read("", 137, ""), { started: true, error: "the acp bridge exited with code 137 and said nothing" });
    assert.deepEqual(plugin.read('{"acp":"failed","error":"acp bridge: --access read|edit|full is required"}\n', 2, ""), { started: true, finished: true, error: "acp bridge: --access read|edit|full is required" });
    assert.deepEqual(plugin.read('not json\n{"acp":"end","stopReason":"end_turn","text":"Done","usage":{"input":-1,"output":"x","cost":0.5}}\n', 0, ""), { started: true, finished: true, text: "Done", usage: { cost: 0.5 } });
  });

  test("check: the bridge must be built and the agent needs a command", () => {
    assert.equal(plugin.check!({ program: null, command: ["claude-agent-acp"] }), null);
    assert.equal(plugin.check!({ program: null, command: null }), 'agent.command is required for use: acp (the ACP agent to start, for example ["claude-agent-acp"])');
  });
});

/** Process ids whose command line contains `pattern`. */
function processes(pattern: string): string[] {
  try {
    return execFileSync("pgrep", ["-f", pattern], { encoding: "utf8" }).trim().split("\n").filter(Boolean);
  } catch {
    return [];
  }
}

const missing = agentsMissing(["claude-agent-acp"]);

describe("hub runs with the real claude-agent-acp adapter and the fake model", { skip: missing ?? false }, () => {
  let model: FakeModel;
  let f: Fixture | null = null;
  let worker: Worker | null = null;
  let work = "";
  before(async () => {
    model = await startFakeModel(() => ({ text: "Nothing to do: no script yet" }));
    pointAgentsAt(model.url, tempDir("aa-acp-agents-"));
  });
  after(async () => {
    await model.close();
  });
  afterEach(async () => {
    worker?.stop();
    worker = null;
    await f?.close();
    f = null;
  });

  /** A hub whose rule "alerts" runs claude-agent-acp through the acp plugin in a fresh folder, and a worker. */
  async function setup(access: "read" | "edit" | "full", rule: Record<string, unknown> = {}) {
    work = realpathSync(tempDir("aa-acp-work-"));
    const rules = {
      ...baseRules,
      // claude-agent-acp runs Claude Code: it needs Claude Code's variables, which an acp agent names itself
      agents: { ...baseRules.agents, bot: { worker: "w1", use: "acp", command: ["claude-agent-acp"], access, env: ["ANTHROPIC_*", "CLAUDE_*", "DISABLE_*", "IS_SANDBOX"] } },
      rules: [{ ...baseRules.rules[0], cwd: work, prompt: "ACP-TASK", ...rule }],
    };
    f = await hubFixture(rules);
    worker = new Worker({ url: f.url, key: f.keys.worker, name: "w1", capacity: 1, home: f.home, lang: "en" });
    void worker.run();
    return f;
  }
  const state = (fx: Fixture) => fx.state();
  /** Tokens the fake model served since `from` (an index into its ledger). */
  const servedSince = (from: number) => model.served.slice(from).reduce((s, x) => ({ input: s.input + x.input, output: s.output + x.output }), { input: 0, output: 0 });
  /** The bridge's lines of one launch of a run. */
  const bridgeLines = (fx: Fixture, run: string, launch: number) =>
    readFileSync(join(fx.home.worker, "runs", run, String(launch), "stdout"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));

  test("asks a question, gets the answer, resumes the same session and finishes; usage per launch matches the model's ledger", async () => {
    const ask = receiptMessage("Needs you: which fix?", { ask: [{ title: "Which fix?", text: "Two ways to fix it.", options: ["Fix it now", "Later"], recommend: 0, key: "fix" }] });
    model.setScript((t) => {
      if (t.toolResult !== null) return { text: `Done: the owner chose ${/"choice": 0/.test(t.toolResult) ? "Fix it now" : "something else"}` };
      const asked = t.allUser.split("ACP-TASK").length - 1;
      if (asked === 1) return { text: ask };
      // The second run continues the session (its history has the first prompt): read the context to see the answer.
      const context = /context is in (\S+\.json)/.exec(t.lastUser)?.[1] ?? "missing";
      return { tool: "Read", input: { file_path: context } };
    });
    const fx = await setup("edit");
    const before1 = model.served.length;
    await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
    const st1 = await until(async () => {
      const s = await state(fx);
      return s.runs[0]?.state === "done" && s;
    }, 60_000, "the asking run to finish");
    const run1 = st1.runs[0];
    assert.equal(run1.summary, "Needs you: which fix?");
    assert.match(run1.session!, /^[0-9a-f-]{36}$/);
    assert.equal(model.served.length - before1, 1);
    assert.deepEqual(run1.usage, { ...servedSince(before1), cached: 0, cost: 0.00135 }, "120 input and 30 output tokens at the price Claude Code uses for its default model");
    const card = st1.cards.find((c) => c.title === "Which fix?");
    assert.ok(card, JSON.stringify(st1.cards));

    const before2 = model.served.length;
    const answered = await fx.call("POST", `/v1/cards/${card.id}/answer`, fx.keys.owner, { choice: 0 });
    assert.equal(answered.status, 200, JSON.stringify(answered.body));
    const st2 = await until(async () => {
      const s = await state(fx);
      return s.runs[0]?.id === 2 && s.runs[0].state === "done" && s;
    }, 60_000, "the answered run to finish");
    const run2 = st2.runs[0];
    assert.equal(run2.summary, "Done: the owner chose Fix it now");
    assert.equal(run2.session, run1.session, "the same session");
    assert.equal(model.served.length - before2, 2, "the Read call and the last message");
    assert.deepEqual(run2.usage, { ...servedSince(before2), cached: 0, cost: 0.0027 });
    const lines = bridgeLines(fx, "2-1", 1);
    assert.deepEqual(lines.find((l) => l.acp === "session"), { acp: "session", session: run1.session, via: "load" });
    assert.equal(readdirSync(join(fx.home.worker, "runs", "2-1")).filter((n) => /^\d+$/.test(n)).length, 1, "one launch: the session was not refused");
  });

  test("permission requests are answered per access: an edit inside the folder yes, through a link outside no, a command no", async () => {
    let step = 0;
    const outside = realpathSync(tempDir("aa-acp-outside-"));
    model.setScript((t) => {
      if (t.lastUser.includes("ACP-TASK")) step = 0;
      step += 1;
      if (step === 1) return { tool: "Write", input: { file_path: join(work, "inside.txt"), content: "in" } };
      if (step === 2) return { tool: "Write", input: { file_path: join(work, "link-out", "outside.txt"), content: "out" } };
      if (step === 3) return { tool: "Bash", input: { command: "touch bash-made.txt", description: "make a file" } };
      return { text: "Done: tried three tools" };
    });
    const fx = await setup("edit");
    symlinkSync(outside, join(work, "link-out"));
    await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
    const st = await until(async () => {
      const s = await state(fx);
      return s.runs[0]?.state === "done" && s;
    }, 60_000, "the run to finish");
    assert.equal(st.runs[0].summary, "Done: tried three tools");
    assert.equal(readFileSync(join(work, "inside.txt"), "utf8"), "in");
    assert.equal(existsSync(join(outside, "outside.txt")), false);
    assert.equal(existsSync(join(work, "bash-made.txt")), false);
    const decisions = bridgeLines(fx, "1-1", 1).filter((l) => l.acp === "permission").map((l) => [l.kind, l.decision, l.option]);
    assert.deepEqual(decisions, [["edit", "allow", "allow"], ["edit", "reject", "reject"], ["execute", "reject", "reject"]]);
  });

  test("the rule's tools reach the agent as an MCP server of session/new; its calls are allowed whatever the access; the plugin's answer comes back", async () => {
    model.setScript((t) => {
      if (t.toolResult !== null) return { text: `Done: the tool said ${t.toolResult}` };
      return { tool: "mcp__agent-autoloop__hello-python_greet", input: { name: "Ada" } };
    });
    const fx = await setup("read", { tools: ["hello-python.greet"] });
    cpSync(join(engine, "examples", "tool-plugins", "hello-python"), join(fx.home.plugins, "hello-python"), { recursive: true });
    await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
    const card = await until(async () => (await state(fx)).cards.find((c) => c.title === "Allow hello-python.greet?"), 60_000, "the first-use card");
    assert.equal((await fx.call("POST", `/v1/cards/${card.id}/answer`, fx.keys.owner, { choice: 1 })).status, 200);
    const st = await until(async () => {
      const s = await state(fx);
      return s.runs[0]?.state === "done" && s;
    }, 60_000, "the run to finish");
    assert.equal(st.runs[0].summary, "Done: the tool said hello, Ada");
    const lines = bridgeLines(fx, "1-1", 1);
    assert.deepEqual(lines.filter((l) => l.acp === "permission").map((l) => [l.tool, l.decision, l.why]), [
      ["mcp__agent-autoloop__hello-python_greet", "allow", "a tool the rule offers (server agent-autoloop): the hub's approvals decide its calls"],
    ], "access read would refuse a tool of kind other");
  });

  test("a session that no longer exists opens a new one", async () => {
    model.setScript(() => ({ text: "Done: fine" }));
    const fx = await setup("read", { resume: true });
    await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
    const first = (await until(async () => {
      const s = await state(fx);
      return s.runs[0]?.state === "done" && s;
    }, 60_000, "the first run")).runs[0];
    // Claude keeps sessions under $HOME/.claude/projects: remove this one.
    const projects = join(process.env.HOME!, ".claude", "projects");
    const files = readdirSync(projects, { recursive: true, encoding: "utf8" }).filter((n) => n.includes(first.session!));
    assert.ok(files.length > 0);
    for (const n of files) rmSync(join(projects, n), { recursive: true, force: true });
    await fx.call("POST", "/v1/events", fx.keys.source, { id: "e2", type: "alert.x" });
    const second = (await until(async () => {
      const s = await state(fx);
      return s.runs[0]?.id === 2 && s.runs[0].state === "done" && s;
    }, 60_000, "the second run")).runs[0];
    assert.equal(second.summary, "Done: fine");
    assert.match(second.session!, /^[0-9a-f-]{36}$/);
    assert.notEqual(second.session, first.session);
    const refused = bridgeLines(fx, "2-1", 1);
    assert.equal(refused.at(-1).acp, "refused");
    assert.equal(refused.at(-1).session, first.session);
    assert.deepEqual(bridgeLines(fx, "2-1", 2).find((l) => l.acp === "session"), { acp: "session", session: second.session, via: "new" });
  });

  test("stopping a run in the middle of a tool leaves no process behind", async () => {
    const marker = `sleep ${987000 + Math.floor(Math.random() * 1000)}`;
    model.setScript((t) => (t.toolResult === null ? { tool: "Bash", input: { command: marker, description: "wait" } } : { text: "Done: slept" }));
    const fx = await setup("full");
    await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
    await until(() => processes(marker).length > 0, 60_000, "the tool to run");
    const pids = JSON.parse(readFileSync(join(fx.home.worker, "runs", "1-1", "1", "pid.json"), "utf8"));
    const r = await fx.call("POST", "/v1/runs/1/cancel", fx.keys.owner, {});
    assert.equal(r.body.state, "stopping");
    await until(async () => (await state(fx)).runs[0]?.state === "cancelled", 30_000, "the run to be cancelled");
    assert.deepEqual(processes(marker), [], "the tool's process is gone");
    assert.deepEqual(processes(join(fx.home.worker, "runs", "1-1")), [], "the bridge is gone");
    assert.equal(groupAlive(pids.pgid, pids.start), false, "the adapter and everything in its group are gone");
  });
});

test("issue 26 r26 F26a-2 (reported case: a planted Claude Code auto memory stayed after an acp run, caught after a claude one): the acp agent's state names the same memory folders as claude's and codex's", async () => {
  const { claudeCodeState, codexState } = await import("../src/sdk/cli-state.js");
  const env = { HOME: "/home/someone" };
  const state = plugin.state!(env);
  assert.deepEqual(state.memory, [...(claudeCodeState(env).memory ?? []), ...(codexState(env).memory ?? [])]);
  assert.ok((state.memory ?? []).length > 0);
});
