/**
 * The built-in `dsh` agent (plugins.md Agent 插件, the DeepSeek Harness paragraph): `dsh headless --json`, 0.2.2 or
 * newer. NOT TESTED AGAINST THE REAL CLI: dsh 0.2.2 is not on the npm registry this project can reach (it has 0.1.x
 * only), so this follows DSH's documentation and is tested on output constructed from it (tests/dsh-plugin.test.ts).
 *
 * One launch runs one task and prints one JSON event per line. The `session` event names the session (a later
 * launch continues it with `--session-id`); each `step_end` carries that step's tokens (`inputTokens`,
 * `outputTokens`, `cacheReadTokens`), summed here into this launch's usage; only the `final` event says the run is
 * over (a turn can end while background work may start another), and it carries the answer and why the last turn
 * ended. `access` becomes `--permission-mode` on every launch (read → read-only, edit → workspace-write, full →
 * danger-full-access: a resumed session would otherwise keep the mode it was saved with), and `--approval-policy
 * never` refuses calls that would wait for a person. `model` and `effort` do not apply (DSH uses its own settings).
 * DSH reports tokens, no cost; it has no desktop session link.
 */
import { execFileSync } from "node:child_process";
import { findProgram, jsonLines, launchArgv, programWritable, tail, type AgentPlugin, type AgentRead, type Usage } from "agent-autoloop/sdk";

const permissionMode = { read: "read-only", edit: "workspace-write", full: "danger-full-access" } as const;

/** The oldest dsh with `dsh headless --json` as this plugin uses it. */
export const dshMinVersion = [0, 2, 2] as const;

/** How to install a dsh that works (plugins.md: npm's `latest` is still 0.1.x; the three packages need their scripts). */
export const dshInstall = "npm install -g @deepseek-ai/dsh@next --allow-scripts=koffi,node-pty,@deepseek-ai/dsh-subprocess-local";

/** The final reasons that mean the task was done (DSH exits 0 for `completed`). */
const doneReasons = new Set(["completed", "complete", "end_turn", "done"]);

const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0);

/** The session id of a `session` event (the field name is not pinned down by what could be checked). */
function sessionOf(e: Record<string, unknown>): string | undefined {
  for (const k of ["sessionId", "session_id", "id", "session"]) if (typeof e[k] === "string" && e[k]) return e[k] as string;
  return undefined;
}

/** The tokens of one `step_end` event: its `usage` object, or the event itself. */
function stepTokens(e: Record<string, unknown>): Usage {
  const u = (e.usage && typeof e.usage === "object" ? e.usage : e) as Record<string, unknown>;
  return { input: num(u.inputTokens), output: num(u.outputTokens), cached: num(u.cacheReadTokens) };
}

function textOf(e: Record<string, unknown>): string | undefined {
  for (const k of ["text", "answer", "output", "result"]) if (typeof e[k] === "string") return e[k] as string;
  return undefined;
}

function errorOf(e: Record<string, unknown>): string {
  const err = e.error as { message?: unknown; code?: unknown } | string | undefined;
  if (typeof err === "string") return err;
  if (err && typeof err.message === "string") return typeof err.code === "string" ? `${err.code}: ${err.message}` : err.message;
  return typeof e.message === "string" ? e.message : "DSH reported an error";
}

/** `[major, minor, patch]` of the first version number in `text`, or null. */
export function parseVersion(text: string): [number, number, number] | null {
  const m = /(\d+)\.(\d+)\.(\d+)/.exec(text);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
}

/** Whether version `v` is at least `min` (pre-releases of 0.2.2, such as 0.2.2-rc.1, count as 0.2.2). */
export function atLeast(v: readonly number[], min: readonly number[]): boolean {
  for (let i = 0; i < 3; i++) if ((v[i] ?? 0) !== (min[i] ?? 0)) return (v[i] ?? 0) > (min[i] ?? 0);
  return true;
}

const plugin: AgentPlugin = {
  passEnv: ["DEEPSEEK_*", "DSH_*"],
  // DSH's state (issue 26): ~/.dsh (credentials, sessions), as its documentation places them.
  state: () => ({ folders: ["~/.dsh"] }),
  command(turn) {
    // A prompt that starts with "-" would be read as an option: a leading newline changes nothing for the model.
    const prompt = turn.prompt.startsWith("-") ? `\n${turn.prompt}` : turn.prompt;
    return [
      turn.program ?? "dsh", "headless", "--json",
      "--permission-mode", permissionMode[turn.access], "--approval-policy", "never",
      ...(turn.resume ? ["--session-id", turn.resume] : []),
      prompt,
    ];
  },
  read(stdout, code, stderr) {
    const events = jsonLines(stdout);
    const session = events.map((e) => (e.type === "session" ? sessionOf(e) : undefined)).find((s) => s !== undefined);
    const out: AgentRead = { started: session !== undefined, ...(session ? { session } : {}) };
    const steps = events.filter((e) => e.type === "step_end");
    if (steps.length > 0) {
      const usage: Usage = { input: 0, output: 0, cached: 0 };
      for (const s of steps) {
        const t = stepTokens(s);
        usage.input! += t.input!;
        usage.output! += t.output!;
        usage.cached! += t.cached!;
      }
      out.usage = usage;
    }
    const final = events.find((e) => e.type === "final");
    const error = events.find((e) => e.type === "error");
    if (final) {
      out.finished = true;
      const reason = typeof final.reason === "string" ? final.reason : null;
      const text = textOf(final);
      if (error) out.error = errorOf(error);
      else if (reason !== null && !doneReasons.has(reason)) out.error = `DSH did not finish the task: ${reason}`;
      else if (text === undefined || !text.trim()) out.error = "DSH finished without an answer";
      else out.text = text;
    } else if (error && code !== null) {
      out.error = errorOf(error);
    }
    if (code !== null && !out.error && !final) out.error = tail(stderr, 1000) || `dsh exited with code ${code} before its final event`;
    if (code !== null && code !== 0 && out.text !== undefined) {
      delete out.text;
      out.error = tail(stderr, 1000) || `dsh exited with code ${code}`;
    }
    return out;
  },
  check(agent) {
    const program = findProgram(agent?.program ?? "dsh");
    if (!program) return `DeepSeek Harness (dsh 0.2.2 or newer) is not on PATH: ${dshInstall}, or set the agent's "program"`;
    // doctor runs this outside every sandbox: a program this user (and so an agent) could have written is not run, and
    // its version is not checked (doctor's line for the program says so; issue 26 round 2 #8).
    if (programWritable(program) !== null) return null;
    // Windows: npm's dsh.cmd runs as node + its JS entry (the SDK's launchArgv); elsewhere the program as found.
    const run = launchArgv([program, "--version"]);
    if ("error" in run) return run.error;
    let version: [number, number, number] | null = null;
    try {
      version = parseVersion(execFileSync(run.argv[0]!, run.argv.slice(1), { encoding: "utf8", timeout: 10_000, stdio: ["ignore", "pipe", "ignore"] }));
    } catch {
      version = null;
    }
    if (!version) return `could not read the version of ${program} (dsh --version); this plugin needs 0.2.2 or newer: ${dshInstall}`;
    if (!atLeast(version, dshMinVersion)) return `dsh ${version.join(".")} is too old (needs 0.2.2 or newer for dsh headless --json): ${dshInstall}`;
    return null;
  },
};

export default plugin;
