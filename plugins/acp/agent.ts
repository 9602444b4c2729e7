/**
 * The built-in `acp` agent (protocol.md ACP 和 MCP; plugins.md Agent 插件): any agent that speaks the Agent Client
 * Protocol v1 over stdio, started from the rule's `command` (for example `["claude-agent-acp"]`; `program`, when set,
 * replaces its first word). Each launch is one process, the bridge (client.ts), which starts the agent in the same
 * process group, creates or continues the session, sends the prompt and prints JSON lines (lines.ts) that `read`
 * turns into the launch's outcome. The prompt goes to the bridge in a file in the run's folder, not on the command
 * line. `access` decides the permission requests the agent makes (permission.ts); `model` and `effort` do not
 * apply (set them in the agent itself).
 *
 * Outcome: started once the session exists or the launch ended without the agent refusing the old session (only an
 * explicit refusal opens a new one); the session id; the last agent text message of the turn as the reply, only
 * when the turn stopped with `end_turn`; usage of this launch (tokens from the prompt result's `usage`, cost from
 * the agent's `usage_update`).
 */
import { createHash } from "node:crypto";
import { existsSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { claudeCodeState, claudeLaunchEnv, codexState, jsonLine, jsonLines, tail, type AgentPlugin, type AgentRead, type TranscriptStep, type Usage } from "agent-autoloop/sdk";

/** This plugin's folder: `<engine>/dist/plugins/acp` when compiled, `<engine>/plugins/acp` when loaded from source. */
const here = dirname(fileURLToPath(import.meta.url));
/** The engine's folder, found from this file alone (a plugin imports nothing of the engine but the SDK). */
const engine = basename(dirname(dirname(here))) === "dist" ? join(here, "..", "..", "..") : join(here, "..", "..");
/** The compiled bridge (the worker runs the compiled one, also when the plugin itself is loaded from source). */
export const bridgeScript = join(engine, "dist", "plugins", "acp", "client.js");

const missingCommand = 'agent.command is required for use: acp (the ACP agent to start, for example ["claude-agent-acp"])';

function usageOf(u: unknown): Usage | undefined {
  if (!u || typeof u !== "object") return undefined;
  const out: Usage = {};
  for (const k of ["input", "output", "cached", "cost"] as const) {
    const v = (u as Record<string, unknown>)[k];
    if (typeof v === "number" && Number.isFinite(v) && v >= 0) out[k] = v;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * The transcript steps of one line of the bridge (issue 30): its `step` lines (the agent's messages, tool calls and
 * their results, from ACP's session updates), the turn's reply (`end`), and a failure.
 */
export function acpSteps(line: string): TranscriptStep[] {
  const l = jsonLine(line);
  if (l?.acp === "step" && l.step && typeof l.step === "object") return [l.step as TranscriptStep];
  if (l?.acp === "end") return [typeof l.text === "string" ? { kind: "final", text: l.text } : { kind: "final", text: String(l.stopReason), error: true }];
  if (l?.acp === "failed" || l?.acp === "refused") return [{ kind: "final", text: String(l.error), error: true }];
  return [];
}

const plugin: AgentPlugin = {
  // The state of the ACP adapters this project runs (issue 26): Claude Code's (claude-agent-acp, claude-code-acp) and
  // Codex's (codex-acp). Another agent behind ACP needs its folders in the agent's rules.json `writable`.
  // Their settings, hooks, memory and code folders read-only (round 10); what they source or run in a run the run's own
  // (round 12, F12-4); Claude Code's auto memory off, as for `claude`.
  state(env) {
    const claude = claudeCodeState(env);
    const codex = codexState(env);
    // Every part of both, the auto memory the check after a run looks at too (round 26, F26a-2: it was left out).
    return {
      folders: [...claude.folders!, ...codex.folders!], readOnly: [...claude.readOnly!, ...codex.readOnly!], writes: [...claude.writes!, ...codex.writes!],
      private: [...claude.private!, ...codex.private!], memory: [...(claude.memory ?? []), ...(codex.memory ?? [])],
    };
  },
  env: () => ({ ...claudeLaunchEnv }),
  command(turn) {
    if (!turn.command || turn.command.length === 0) throw new Error(missingCommand);
    const agent = [turn.program ?? turn.command[0]!, ...turn.command.slice(1)];
    const promptFile = join(turn.folder, `acp-prompt-${createHash("sha256").update(turn.prompt).digest("hex").slice(0, 16)}.txt`);
    writeFileSync(promptFile, turn.prompt, { mode: 0o600 });
    return [
      process.execPath, bridgeScript, "--access", turn.access, "--prompt-file", promptFile,
      ...(turn.resume ? ["--resume", turn.resume] : []),
      ...(turn.tools ? ["--tools", JSON.stringify(turn.tools)] : []), "--", ...agent,
    ];
  },
  transcript: acpSteps,
  read(stdout, code, stderr) {
    const all = jsonLines(stdout).filter((l) => typeof l.acp === "string");
    const refused = all.find((l) => l.acp === "refused");
    if (refused) return { started: false, finished: true, error: `the agent refused session ${String(refused.session)}: ${String(refused.error)}` };
    const session = all.filter((l) => l.acp === "session" && typeof l.session === "string").at(-1)?.session as string | undefined;
    const end = all.find((l) => l.acp === "end");
    const failed = all.find((l) => l.acp === "failed");
    const out: AgentRead = { started: session !== undefined || code !== null, ...(session ? { session } : {}) };
    if (end) {
      out.finished = true;
      const usage = usageOf(end.usage);
      if (usage) out.usage = usage;
      if (end.stopReason === "end_turn" && typeof end.text === "string") out.text = end.text;
      else {
        const refusedTool = all.filter((l) => l.acp === "permission" && l.decision === "reject").at(-1);
        out.error = end.stopReason === "end_turn"
          ? "the agent ended its turn without a text message"
          : `the agent stopped its turn: ${String(end.stopReason)}` + (refusedTool ? ` (after a refused permission request: ${String(refusedTool.tool)}: ${String(refusedTool.why)})` : "");
      }
    } else if (failed) {
      out.finished = true;
      out.error = String(failed.error);
      const usage = usageOf(failed.usage);
      if (usage) out.usage = usage;
    } else if (code !== null) {
      out.error = tail(stderr, 1000) || `the acp bridge exited with code ${code} and said nothing`;
    }
    return out;
  },
  check(agent) {
    if (!existsSync(bridgeScript)) return `the acp bridge is not built (${bridgeScript}): run npm run build in ${engine}`;
    if (agent && (!agent.command || agent.command.length === 0)) return missingCommand;
    return null;
  },
};

export default plugin;
