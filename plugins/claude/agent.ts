/**
 * The built-in `claude` agent (plugins.md Agent 插件): Claude Code in print mode with stream-json output.
 * `access` becomes the permission mode (read → plan, edit → acceptEdits, full → bypassPermissions); `model` and
 * `effort` are passed on; `--resume <session>` continues a session. A run has started once Claude Code printed its
 * `system/init` line (a session it refuses, for example one that does not exist or whose files were deleted, prints
 * none: only an error `result` line, so the worker starts a new session). The `result` line is the last message.
 *
 * Usage of one launch: tokens from the result's `usage` (input counts cache writes and reads too; `cached` is the
 * reads) and cost from `model_usage_since_last_result` (this launch only; `total_cost_usd` is cumulative over a
 * resumed session, as observed with Claude Code 2.1.332, so it is given as `sessionUsage` only when the per-launch
 * figure is missing).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { claudeCodeState, claudeLaunchEnv, findProgram, jsonLine, jsonLines as lines, stepText, tail, type AgentPlugin, type AgentRead, type TranscriptStep, type Turn } from "agent-autoloop/sdk";

const permissionMode = { read: "plan", edit: "acceptEdits", full: "bypassPermissions" } as const;

interface ResultLine {
  type: "result"; is_error?: boolean; result?: string; errors?: string[]; session_id?: string; total_cost_usd?: number;
  usage?: { input_tokens?: number; output_tokens?: number; cache_read_input_tokens?: number; cache_creation_input_tokens?: number };
  model_usage_since_last_result?: Record<string, { costUSD?: number }>;
}


/**
 * The tools the rule offers (issue 16): the run's MCP server in a config file in the run's folder (it holds only the
 * relay's command, no secret), and `--allowedTools mcp__<server>` so that print mode does not refuse them for want of
 * a permission prompt: the hub's approvals decide each call. Claude Code names them `mcp__<server>__<tool>`, with each
 * character outside `A-Z a-z 0-9 _ -` of `<plugin>.<tool>` turned into `_` (2.1.332: `hello-python.greet` becomes
 * `mcp__agent-autoloop__hello-python_greet`), and calls the server with the tool's own name.
 */
function toolFlags(turn: Turn): string[] {
  if (!turn.tools) return [];
  const file = join(turn.folder, "mcp.json");
  const [command, ...args] = turn.tools.command;
  writeFileSync(file, JSON.stringify({ mcpServers: { [turn.tools.server]: { type: "stdio", command, args } } }), { mode: 0o600 });
  return ["--mcp-config", file, "--allowedTools", `mcp__${turn.tools.server}`];
}

/**
 * The transcript steps of one stream-json line (issue 30): an `assistant` message's text, thinking and `tool_use`
 * blocks (the tool's name as Claude Code calls it, its input as JSON), a `user` message's `tool_result` blocks, and
 * the `result` line as the last message (or the error). Other lines (`system`, stream events) show nothing.
 */
export function claudeSteps(line: string): TranscriptStep[] {
  const l = jsonLine(line);
  if (!l) return [];
  if (l.type === "result") return [{ kind: "final", text: stepText(l.result ?? (l.errors as unknown[] | undefined)?.join("\n") ?? ""), ...(l.is_error ? { error: true } : {}) }];
  const content = l.message?.content;
  if ((l.type !== "assistant" && l.type !== "user") || !Array.isArray(content)) return [];
  const out: TranscriptStep[] = [];
  for (const b of content as Record<string, unknown>[]) {
    if (b.type === "text" && typeof b.text === "string") out.push({ kind: "message", text: b.text });
    else if (b.type === "thinking" && typeof b.thinking === "string") out.push({ kind: "thinking", text: b.thinking });
    else if (b.type === "tool_use") out.push({ kind: "tool", tool: stepText(b.name), id: stepText(b.id), input: stepText(b.input ?? {}) });
    else if (b.type === "tool_result") {
      const c = b.content;
      const text = Array.isArray(c) ? c.map((x: { type?: string; text?: string }) => (x.type === "text" ? x.text ?? "" : stepText(x))).join("\n") : stepText(c ?? "");
      out.push({ kind: "toolResult", id: stepText(b.tool_use_id), text, ...(b.is_error ? { error: true } : {}) });
    }
  }
  return out;
}

const plugin: AgentPlugin = {
  // Claude Code's settings and credentials; IS_SANDBOX=1 lets it run bypassPermissions as root (README, acp).
  passEnv: ["ANTHROPIC_*", "CLAUDE_*", "DISABLE_*", "IS_SANDBOX"],
  command(turn) {
    return [
      turn.program ?? "claude", "-p", turn.prompt, "--output-format", "stream-json", "--verbose",
      "--permission-mode", permissionMode[turn.access],
      "--add-dir", turn.folder,
      ...(turn.resume ? ["--resume", turn.resume] : []),
      ...(turn.model ? ["--model", turn.model] : []),
      ...(turn.effort ? ["--effort", turn.effort] : []),
      ...toolFlags(turn),
    ];
  },
  // Claude Code's state (issue 26): ~/.claude (sessions, settings, credentials) and ~/.claude.json, or all of it in
  // CLAUDE_CONFIG_DIR; its settings, hooks, memory and code folders read-only (round 10, `claudeCodeState`).
  state: claudeCodeState,
  // With tools offered, Claude Code connects the tools server before its first turn (it may connect MCP servers in
  // the background, and a quick first turn would not find the tools yet).
  // Auto memory off (issue 26 round 10): Claude Code reads ~/.claude/projects/<cwd>/memory/MEMORY.md into the
  // prompt, and any run of Claude Code may write there for any cwd — another rule's run would follow it.
  env(turn): Record<string, string> {
    return { ...claudeLaunchEnv, ...(turn.tools ? { MCP_CONNECTION_NONBLOCKING: "0" } : {}) };
  },
  transcript: claudeSteps,
  read(stdout, code, stderr) {
    const all = lines(stdout);
    const init = all.find((l) => l.type === "system" && l.subtype === "init");
    const result = [...all].reverse().find((l) => l.type === "result") as ResultLine | undefined;
    const session = (result?.session_id ?? init?.session_id) as string | undefined;
    // Started once the session is open (the init line). A refused session prints no init: with a deleted or unknown
    // session, Claude Code 2.1.332 prints only a `result` with is_error and `errors` (or nothing at all).
    const out: AgentRead = { started: init !== undefined, ...(session ? { session } : {}) };
    if (result) {
      out.finished = true;
      const u = result.usage;
      if (u) {
        out.usage = {
          input: (u.input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0),
          output: u.output_tokens ?? 0,
          cached: u.cache_read_input_tokens ?? 0,
        };
      }
      const perLaunch = result.model_usage_since_last_result;
      if (perLaunch) out.usage = { ...out.usage, cost: Object.values(perLaunch).reduce((s, m) => s + (m.costUSD ?? 0), 0) };
      else if (typeof result.total_cost_usd === "number") out.sessionUsage = { cost: result.total_cost_usd };
      if (result.is_error) out.error = result.result ?? result.errors?.join("\n") ?? "Claude Code reported an error";
      else out.text = result.result ?? "";
    }
    if (code !== null && !result) out.error = tail(stderr, 1000) || `claude exited with code ${code} and no result`;
    if (code !== null && code !== 0 && result && !out.error) out.error = `claude exited with code ${code}`;
    return out;
  },
  check() {
    return findProgram("claude")
      ? null
      : "Claude Code is not on PATH: npm install -g @anthropic-ai/claude-code, run `claude` once to log in (or set ANTHROPIC_API_KEY), or set the agent's \"program\"";
  },
};

export default plugin;
