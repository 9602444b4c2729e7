/**
 * The built-in `codex` agent (plugins.md Agent 插件): `codex exec --json` with stdin closed (the supervisor gives it
 * none), `--skip-git-repo-check`, the sandbox from `access` (read → read-only, edit → workspace-write, full →
 * danger-full-access), `-m` for the model and `model_reasoning_effort` for the effort; `codex exec resume <thread>`
 * continues a session (it takes no `-s`, so the sandbox goes in as `-c sandbox_mode=…`). Inside the worker's sandbox
 * where Codex cannot make its own (`turn.sandbox` `closed`: the worker runs as root) every command Codex sandboxes
 * fails ("bwrap: setting up uid map: Operation not permitted"), so there it gets `danger-full-access` and the worker's
 * sandbox alone holds the folders (the cwd read-only for `read`).
 * Codex reports token usage cumulatively over the thread, so it is given as `sessionUsage`; the worker turns it into
 * this launch's figures from its ledger. Codex reports no cost.
 */
import { codexState, findProgram, jsonLine, jsonLines as lines, stepText, tail, type AgentPlugin, type AgentRead, type TranscriptStep, type Turn } from "agent-autoloop/sdk";

const sandbox = { read: "read-only", edit: "workspace-write", full: "danger-full-access" } as const;


/** Codex wraps API errors as JSON text inside `message`: take the inner message when there is one. */
function message(m: unknown): string {
  if (typeof m !== "string") return "Codex reported an error";
  try {
    const inner = JSON.parse(m) as { error?: { message?: string } };
    return inner.error?.message ?? m;
  } catch {
    return m;
  }
}

/** How long Codex lets one call of the tools server take, in seconds: the bridge bounds each call itself (approval wait, tool timeout). */
const toolTimeoutSeconds = 2 * 60 * 60;
/**
 * How long Codex waits for the tools server's handshake and tool list, in seconds (its default is 10): the first list
 * may ask plugins for theirs (tools/list, up to 10 s each) or start an MCP plugin.
 */
const toolsStartupSeconds = 60;

/**
 * The tools the rule offers (issue 16): the run's MCP server as `mcp_servers.<server>` settings on the command line
 * (only the relay's command: no secret), its tools approved in advance (`codex exec` never asks, and refuses a call
 * that needs approval: the hub's approvals decide each call) and a timeout longer than the bridge's own. Codex 0.171.0
 * offers them as the namespace `mcp__agent_autoloop`, each character outside `A-Z a-z 0-9 _` of `<plugin>.<tool>`
 * turned into `_` (`hello-python.greet` becomes `hello_python_greet`), and calls the server with the tool's own name.
 * The server is `required`, so a turn waits for it to start.
 */
function toolFlags(turn: Turn): string[] {
  if (!turn.tools) return [];
  const [command, ...args] = turn.tools.command;
  const key = `mcp_servers.${turn.tools.server}`;
  // JSON strings and arrays of strings are TOML values too.
  return [
    "-c", `${key}.command=${JSON.stringify(command)}`, "-c", `${key}.args=${JSON.stringify(args)}`,
    "-c", `${key}.default_tools_approval_mode="approve"`, "-c", `${key}.tool_timeout_sec=${toolTimeoutSeconds}`,
    "-c", `${key}.startup_timeout_sec=${toolsStartupSeconds}`,
    // Required: Codex gives an optional MCP server 1 s to start before a turn and otherwise leaves its tools out of
    // that turn silently (then answers a call of them "unsupported call"); seen on a loaded machine, where the relay
    // took longer. A required server is waited for (up to the startup timeout) and its failure fails the turn.
    "-c", `${key}.required=true`,
  ];
}

/**
 * The transcript steps of one `codex exec --json` line (issue 30; Codex 0.171.0): an item started — a shell command
 * or an MCP tool call (`<server>.<tool>`, its arguments as JSON) — or completed: the agent's message, its reasoning, a
 * command's output and exit code, a tool call's result or error; a failed turn or an error line as an error.
 */
export function codexSteps(line: string): TranscriptStep[] {
  const l = jsonLine(line);
  if (!l) return [];
  if (l.type === "turn.failed" || l.type === "error") return [{ kind: "final", text: message(l.error?.message ?? l.message), error: true }];
  const item = l.item as Record<string, any> | undefined; // eslint-disable-line @typescript-eslint/no-explicit-any
  if (!item || (l.type !== "item.started" && l.type !== "item.completed")) return [];
  const id = stepText(item.id ?? "");
  if (l.type === "item.started") {
    if (item.type === "command_execution") return [{ kind: "tool", tool: "shell", id, input: stepText(item.command ?? "") }];
    if (item.type === "mcp_tool_call") return [{ kind: "tool", tool: `${stepText(item.server)}.${stepText(item.tool)}`, id, input: stepText(item.arguments ?? {}) }];
    return [];
  }
  switch (item.type) {
    case "agent_message": return [{ kind: "message", text: stepText(item.text ?? "") }];
    case "reasoning": return [{ kind: "thinking", text: stepText(item.text ?? "") }];
    case "command_execution":
      return [{ kind: "toolResult", id, text: stepText(item.aggregated_output ?? ""), ...(item.exit_code !== 0 ? { error: true } : {}) }];
    case "mcp_tool_call": {
      const content = item.result?.content;
      const text = item.error ? stepText(item.error.message ?? item.error) : Array.isArray(content) ? content.map((c: { text?: string }) => c.text ?? stepText(c)).join("\n") : stepText(item.result ?? "");
      return [{ kind: "toolResult", id, text, ...(item.error || item.status === "failed" ? { error: true } : {}) }];
    }
    case "error": return [{ kind: "stderr", text: stepText(item.message ?? "") }];
    default: return [];
  }
}

const plugin: AgentPlugin = {
  passEnv: ["OPENAI_*", "CODEX_*"],
  // Codex's state (issue 26): CODEX_HOME, else ~/.codex; config.toml, AGENTS.md and its code folders read-only
  // (round 10, `codexState`).
  state: codexState,
  command(turn) {
    const common = [
      "--json", "--skip-git-repo-check",
      ...(turn.model ? ["-m", turn.model] : []),
      ...(turn.effort ? ["-c", `model_reasoning_effort="${turn.effort}"`] : []),
      ...toolFlags(turn),
    ];
    const program = turn.program ?? "codex";
    const mode = turn.sandbox === "closed" ? sandbox.full : sandbox[turn.access];
    if (turn.resume) return [program, "exec", "resume", ...common, "-c", `sandbox_mode="${mode}"`, "--", turn.resume, turn.prompt];
    return [program, "exec", ...common, "-s", mode, "--", turn.prompt];
  },
  transcript: codexSteps,
  read(stdout, code, stderr) {
    const all = lines(stdout);
    const thread = all.find((l) => l.type === "thread.started");
    const session = thread?.thread_id as string | undefined;
    const out: AgentRead = { started: thread !== undefined, ...(session ? { session } : {}) };
    const messages = all.filter((l) => l.type === "item.completed" && l.item?.type === "agent_message");
    const done = [...all].reverse().find((l) => l.type === "turn.completed");
    const failed = [...all].reverse().find((l) => l.type === "turn.failed" || l.type === "error");
    if (done) {
      out.finished = true;
      const u = done.usage ?? {};
      out.sessionUsage = { input: u.input_tokens ?? 0, output: u.output_tokens ?? 0, cached: u.cached_input_tokens ?? 0 };
      out.text = (messages.at(-1)?.item?.text as string | undefined) ?? "";
    } else if (failed) {
      out.finished = true;
      out.error = message(failed.error?.message ?? failed.message);
    }
    if (code !== null && !done && !out.error) out.error = tail(stderr.split("\n\nStack backtrace:")[0] ?? "", 1000) || `codex exited with code ${code}`;
    if (code !== null && code !== 0 && done) out.error = `codex exited with code ${code}`;
    return out;
  },
  check() {
    return findProgram("codex") ? null : "Codex is not on PATH: npm install -g @openai/codex, then log in with `codex login` (or set OPENAI_API_KEY), or set the agent's \"program\"";
  },
};

export default plugin;
