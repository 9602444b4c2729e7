/** The built-in claude plugin over Claude Code's real output (samples recorded with Claude Code 2.1.332). */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import plugin from "../plugins/claude/agent.js";
import { engine, tempDir } from "./helpers.js";

const sample = (name: string) => readFileSync(join(engine, "tests", "fixtures", "claude", name), "utf8");
const turn = { prompt: "do it", session: null, resume: null, cwd: "/w", access: "edit" as const, model: null, effort: null, command: null, program: null, contextFile: "/r/context.json", folder: "/r" };

test("the command line: print mode, stream-json, permission mode per access, resume, model, effort", () => {
  assert.deepEqual(plugin.command(turn), ["claude", "-p", "do it", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits", "--add-dir", "/r"]);
  assert.deepEqual(plugin.command({ ...turn, access: "read", resume: "s-1", model: "opus", effort: "high", program: "/opt/claude" }),
    ["/opt/claude", "-p", "do it", "--output-format", "stream-json", "--verbose", "--permission-mode", "plan", "--add-dir", "/r", "--resume", "s-1", "--model", "opus", "--effort", "high"]);
  assert.equal(plugin.command({ ...turn, access: "full" })[7], "bypassPermissions");
});

test("the rule's tools: an MCP config in the run's folder naming only the relay, its tools allowed in advance, MCP connected before the first turn", () => {
  const folder = tempDir("aa-claude-tools-");
  const tools = { server: "agent-autoloop", command: ["/usr/bin/node", "/e/bin/agent-autoloop.js", "tools", "mcp", "--socket", `${folder}/tools.sock`, "--lang", "en"] };
  const argv = plugin.command({ ...turn, folder, tools });
  assert.deepEqual(argv.slice(10), ["--mcp-config", join(folder, "mcp.json"), "--allowedTools", "mcp__agent-autoloop"]);
  assert.deepEqual(JSON.parse(readFileSync(join(folder, "mcp.json"), "utf8")), {
    mcpServers: { "agent-autoloop": { type: "stdio", command: "/usr/bin/node", args: ["/e/bin/agent-autoloop.js", "tools", "mcp", "--socket", `${folder}/tools.sock`, "--lang", "en"] } },
  });
  assert.equal(statSync(join(folder, "mcp.json")).mode & 0o777, 0o600);
  // Auto memory off in every launch (issue 26 round 10: any run could write the memory another rule's run reads).
  assert.deepEqual(plugin.env!({ ...turn, folder, tools }), { CLAUDE_CODE_DISABLE_AUTO_MEMORY: "1", MCP_CONNECTION_NONBLOCKING: "0" });
  assert.deepEqual(plugin.env!(turn), { CLAUDE_CODE_DISABLE_AUTO_MEMORY: "1" });
  assert.equal(plugin.command(turn).includes("--mcp-config"), false, "no tools, no MCP config");
});

test("a finished run: last message, session, per-launch usage and cost", () => {
  const r = plugin.read(sample("claude-stream-json-1.jsonl"), 0, "")!;
  assert.equal(r.started, true);
  assert.equal(r.finished, true);
  assert.equal(r.session, "9f9c3115-ca65-4aac-bec9-db8cc5660de1");
  assert.equal(r.text, "Streamed answer ALPHA");
  assert.deepEqual(r.usage, { input: 235, output: 89, cached: 67, cost: 0.0025104 });
  assert.equal(r.error, undefined);
});

test("a resumed run reports this launch's usage, not the session's total", () => {
  const r = plugin.read(sample("claude-stream-json-resume.jsonl"), 0, "")!;
  assert.equal(r.text, "Resumed answer BETA");
  assert.deepEqual(r.usage, { input: 123 + 45 + 67, output: 89, cached: 67, cost: 0.0025104 });
  assert.equal(r.sessionUsage, undefined, "total_cost_usd (0.0050208, cumulative) is not used");
});

test("output still being written: started, no last message yet", () => {
  const full = sample("claude-stream-json-1.jsonl");
  const cut = full.slice(0, full.indexOf("\n") + 1) + full.slice(full.indexOf("\n") + 1, full.indexOf("\n") + 40);
  const r = plugin.read(cut, null, "")!;
  assert.deepEqual([r.started, r.finished, r.text], [true, undefined, undefined]);
  assert.equal(r.session, "9f9c3115-ca65-4aac-bec9-db8cc5660de1");
  const partial = plugin.read(sample("claude-stream-json-partial.jsonl"), null, "")!;
  assert.equal(partial.started, true);
});

test("an unknown session is refused before starting: not started, so the worker opens a new session", () => {
  const r = plugin.read("", 1, sample("claude-resume-unknown.stderr"))!;
  assert.equal(r.started, false);
  assert.match(r.error!, /^No conversation found with session ID: /);
});

test("a resumed session whose files were deleted is refused: Claude Code 2.1.332 prints a result line but no init, so it is not started", () => {
  // recorded from the real CLI in stream-json mode: a `result` with is_error, num_turns 0 and `errors`, exit code 1
  const r = plugin.read(sample("claude-stream-json-resume-deleted.jsonl"), 1, sample("claude-stream-json-resume-deleted.stderr"))!;
  assert.equal(r.started, false);
  assert.equal(r.text, undefined);
  assert.match(r.error!, /^No conversation found with session ID: [0-9a-f-]{36}$/);
});

test("API errors and a missing login are errors with Claude Code's own words", () => {
  const e400 = plugin.read(sample("claude-json-error-400.stdout"), 1, "")!;
  assert.equal(e400.error, "API Error: 400 fake failure 400");
  assert.equal(e400.text, undefined);
  const login = plugin.read(sample("claude-no-api-key.stdout"), 1, "")!;
  assert.equal(login.error, "Not logged in · Please run /login");
});
