/**
 * The agent plugin contract (plugins.md Agent 插件): what the worker hands a plugin (`Turn`), what the plugin gives
 * back (`AgentPlugin`, `AgentRead`), and small helpers agent plugins share (`findProgram`, `tail`, `substitute`,
 * `jsonLines`; starting a program on Windows: launch.ts). Part of the plugin SDK (`agent-autoloop/sdk`); the worker uses the same definitions.
 */
import { accessSync, closeSync, constants, existsSync, lstatSync, openSync, readSync, realpathSync, statSync } from "node:fs";
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import type { Job as WireJob } from "../protocol/responses.js";
import type { TranscriptEntry } from "../protocol/schema.js";
import { findWindowsProgram, windowsFiles } from "./launch.js";

/**
 * The job a worker claims for a run (protocol.md Job). A plugin never gets it whole (the run token stays with the
 * worker): `command` gets a `Turn` made from it, and the agent reads the job's context from `Turn.contextFile`
 * (`{ run, attempt, rule, ...context }`, also named by `AGENT_AUTOLOOP_CONTEXT` in the agent's environment).
 */
export type Job = WireJob;

/** One launch of an agent, as the worker hands it to a plugin's `command`. */
export interface Turn {
  /** The prompt of this launch (the run's prompt, or the receipt-rewrite request). */
  prompt: string;
  /** The session the hub suggested for this run (null = new). */
  session: string | null;
  /** The session to continue in this launch (null = start a new one). */
  resume: string | null;
  cwd: string;
  access: "read" | "edit" | "full";
  model: string | null;
  effort: string | null;
  /** The rule's `command` (for `command` and `acp`), or null. */
  command: string[] | null;
  /** The program to start instead of the one found on PATH (agents.<id>.program), or null. */
  program: string | null;
  /** The context file (JSON data of this run). */
  contextFile: string;
  /** The folder of this run's files; restricted CLIs must be allowed to read it. */
  folder: string;
  /**
   * The tools the rule offers its agent (issue 16), as one stdio MCP server to configure into the CLI, or null when
   * the rule offers none. Its tools are named `<plugin>.<tool>`; each call is decided by the hub (rules.json
   * `approvals`) and run by the worker's tool host, so the CLI should let them through without asking.
   */
  tools?: ToolsOffer | null;
  /**
   * The worker's sandbox around this launch (src/worker/sandbox.ts): `none` — the agent runs without one (`"sandbox":
   * false`, or no bubblewrap here); `nestable` — inside one, where the CLI can still make its own (a user namespace
   * inside ours: the worker runs as an ordinary user); `closed` — inside one where it cannot (the worker runs as root,
   * and the sandbox drops every capability, so a user namespace inside it cannot map its ids: bubblewrap there says
   * "setting up uid map: Operation not permitted"). In a `closed` sandbox a CLI that sandboxes its commands itself
   * must leave that to the worker's, which holds the same folders (`cwd` writable for `edit` and `full`, read-only for
   * `read`). Absent (an older worker): as `none`.
   */
  sandbox?: "none" | "nestable" | "closed";
}

/**
 * The MCP server of a run's tools (issue 16): `server` is the name to give it in the CLI's configuration (Claude Code
 * calls its tools `mcp__<server>__<tool>`), `command` the program and arguments that start it (a relay to the worker
 * over a socket of the run; no secret in them). The same command is in the agent's environment as
 * `AGENT_AUTOLOOP_TOOLS_MCP`, as a JSON array.
 */
export interface ToolsOffer {
  server: string;
  command: string[];
}

/** The name the worker gives a run's tools server: `agent-autoloop` (Codex shows it as `mcp__agent_autoloop`). */
export const toolsServerName = "agent-autoloop";

/** The agent's environment variable holding the tools server's command as a JSON array, when its rule offers tools. */
export const toolsMcpVariable = "AGENT_AUTOLOOP_TOOLS_MCP";

/** Tokens (`input`, `output`, `cached`) and money (`cost`, in US dollars) an agent reported using (protocol.md 用量). */
export interface Usage { input?: number; output?: number; cached?: number; cost?: number }

/** What a plugin reads from the output so far (`code` is null while the process runs). */
export interface AgentRead {
  text?: string;
  session?: string;
  usage?: Usage;
  sessionUsage?: Usage;
  error?: string;
  finished?: boolean;
  started?: boolean;
}

/**
 * One step of what the agent did (issue 30), as a plugin maps it from a line of its CLI's output (`AgentPlugin.transcript`):
 * the kinds and fields of the protocol's `TranscriptEntry` but its time, attempt and launch, which the worker adds.
 * Texts may be of any length: the worker removes the run's secrets and control characters and cuts them.
 */
export type TranscriptStep = Omit<TranscriptEntry, "at" | "attempt" | "launch">;

/** The parts of an agent's rules.json entry a plugin's `check` may look at. */
export interface AgentSetup { program: string | null; command: string[] | null }

/** An agent plugin (an agent.ts's default export): how to start its CLI for a turn and how to read its output. */
export interface AgentPlugin {
  command(turn: Turn): string[];
  /**
   * Reads the output so far. `stdout` is the whole output up to 9 MiB; beyond that its first 1 MiB and last 8 MiB,
   * cut at line boundaries around one line saying how many bytes were left out (output.ts; stderr likewise with
   * 64 KiB + 1 MiB). Called in the worker's output thread, on a module loaded there: it must depend only on its
   * arguments, not on state kept by `command`.
   */
  read(stdout: string, code: number | null, stderr: string): AgentRead | undefined | null;
  link?(session: string): string | null;
  /**
   * Maps one line of the CLI's stdout (without its line end) to the steps of the run's transcript (issue 30): its
   * messages, tool calls and their results, the last message; [] (or null) for a line that says nothing to show.
   * Called in the worker's output thread for each line as it is written, so it must depend only on its argument.
   * Without it, each line of stdout and of stderr is a step of its own (`stdout`, `stderr`: a `command` agent); with
   * it, stderr goes into the transcript only as its tail when a launch fails.
   */
  transcript?(line: string): TranscriptStep[] | null | undefined;
  /**
   * Whether the plugin can run here: null when it can, else what to do next (`agent-autoloop doctor` prints it).
   * `agent` is the agent being checked (its `program` and `command` from rules.json); older callers pass nothing.
   * Doctor calls it outside the sandbox: it should look for what it needs, not run an agent's program or `command`
   * (issue 26). The built-in checks only look on PATH, except `dsh`'s, which runs `--version` of the dsh CLI (on
   * PATH, or the agent's `program`) to check its version — only when `programWritable` finds nothing this user could
   * change on the way (issue 26 round 2 #8): an agent runs as this user, so what it can write is never run here.
   */
  check?(agent?: AgentSetup): string | null | Promise<string | null>;
  /** Extra environment for the agent process (merged over the allowlisted environment). */
  env?(turn: Turn): Record<string, string>;
  /**
   * The worker's environment variables this plugin's CLI needs besides the base list (src/worker/env.ts): exact
   * names, or prefixes written `PREFIX_*` (Claude Code: `ANTHROPIC_*`, …). Nothing else of the worker's environment
   * reaches the agent, except what the agent's rules.json `env` names.
   */
  passEnv?: readonly string[];
  /**
   * Where the plugin's CLI keeps its own state (sessions, settings, credentials, logs): in the agent sandbox the file
   * system is read-only except the run's cwd, temporary folders, the agent's rules.json `writable` and these
   * (issue 26), so that an agent cannot change what the hub's user runs later (`~/.local`, `~/.npmrc`, shell
   * profiles, …). `~/` stands for the home of `env`, the agent's environment (whose variables the plugin may read:
   * `CODEX_HOME`). Folders are made (mode 0700) when missing; files are left out while they do not exist.
   * What the agent writes here the CLI reads at its next start, in a run of another rule too: the parts that make
   * it run commands or load code go in `readOnly` (issue 26 round 10; `claudeCodeState`, `codexState`).
   */
  state?(env: Readonly<Record<string, string>>): AgentState;
}

/** An agent plugin's state paths (`AgentPlugin.state`): absolute, or `~/…`. */
export interface AgentState {
  /** Writable in the sandbox; made (0700) when missing. */
  folders?: string[];
  /** Writable in the sandbox while they exist. */
  files?: string[];
  /**
   * The parts of the state the CLI reads as settings or code (settings with hooks or MCP servers, memory files, its
   * agents, commands and plugins folders): read-only in the sandbox, also inside a writable folder, so that what one
   * run writes is never run by a later run of another rule, with that rule's secrets (issue 26 round 10). A path
   * ending in `/` is a folder. One missing inside a writable state folder is made first, so that no run can create
   * it: a folder empty (0700), a `.json` file `{}`, any other file empty (0600). Each is kept read-only at its own
   * place, a link too (issue 26 round 11, F4: src/worker/state-steering.ts), with the scripts at a state folder's top
   * and those that the settings files among these name as commands.
   */
  readOnly?: string[];
  /**
   * What the CLI itself writes at the top of its state folders, as names (a folder ends in `/`; `*` stands for any
   * run of characters but `/`): when given, every other entry at the top of a state folder is read-only in the
   * sandbox too — a list of what may be written, so that no gap in reading the settings leaves a script they name
   * writable (issue 26 round 12, F12-3). A folder of these missing is made first (0700) when the state folder is
   * shown as a skeleton, where a new entry would stay in the sandbox. Without it, only `readOnly` and what
   * src/worker/state-steering.ts finds are kept.
   */
  writes?: string[];
  /**
   * What the CLI writes at the top of its state folders and then runs or sources during the same run, and needs in no
   * later run (names as in `writes`, folders only, no `*`: Claude Code's `shell-snapshots/` and `session-env/`, Codex's
   * `shell_snapshots/` and `tmp/`): each is an empty folder of the run's own in the sandbox (a tmpfs over it), so that
   * nothing one run writes there is run by another run, with that rule's secrets, or by the owner's own CLI (issue 26
   * round 12, F12-4). One missing is made first (0700) where the state folder is bound as it is; where the state
   * folder is a skeleton, or the entry is a link or not a folder, it is not bound at all.
   */
  private?: string[];
  /**
   * Folders inside the state folders (relative; `*` stands for any one name) whose files the CLI reads into its
   * prompt as standing instructions, and which lie inside an entry of `writes` (Claude Code's auto memory,
   * `projects/*\/memory/`): each file there is fingerprinted at launch, and after the run one new or changed is moved
   * aside and named in the run's notice (issue 26 round 13, F13-5: the owner's own CLI would read what a run wrote
   * there; src/worker/state-planted.ts). A state folder holding more than src/worker/state-planted.ts `stateLimits`
   * allows refuses the launch.
   */
  memory?: string[];
}

/**
 * Finds an executable on PATH (or returns a path with a folder as is when it exists); null when absent. On Windows
 * PATH is searched with PATHEXT, without regard to case (`findWindowsProgram`): `claude` finds npm's `claude.cmd`;
 * whether and how that file can be started is `launchArgv`'s to say.
 */
export function findProgram(name: string, path = process.env.PATH ?? ""): string | null {
  if (process.platform === "win32") return findWindowsProgram(name, { PATH: path, PATHEXT: process.env.PATHEXT }, windowsFiles, process.cwd());
  if (name.includes("/")) return existsSync(name) ? name : null;
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const f = join(dir, name);
    try {
      if (statSync(f).isFile()) return f;
    } catch {
      // not here
    }
  }
  return null;
}

/** How many bytes of a program's first line `programWritable` reads to find its interpreter (`#!`). */
export const shebangMaxBytes = 256;

/** Whether this process may write `path` (a folder: add, remove or rename entries in it). */
function mayWrite(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch (e) {
    // Only "no permission" (or a read-only file system) means no; anything else (ENOENT of a racing change) is unsure.
    const code = (e as NodeJS.ErrnoException).code;
    return !(code === "EACCES" || code === "EPERM" || code === "EROFS");
  }
}

/**
 * The first of `path` and the folders above it (up to `/`) that this user could change so that running `path` runs
 * something else, or null when none: the file itself writable, or a folder above it writable — except a sticky folder
 * (`/tmp`), where only the owner of an entry may rename or remove it, when this user does not own the entry below it.
 * `path` must be absolute; links are judged as the path names them (where the link is) and where they lead.
 */
function writableOnTheWay(path: string): string | null {
  for (let p = path, below: string | null = null; ; below = p, p = dirname(p)) {
    let st;
    try {
      st = lstatSync(p);
    } catch {
      return p;
    }
    if (mayWrite(p)) {
      if (below === null || !st.isDirectory()) return p;
      if (!(st.mode & 0o1000)) return p;
      const uid = process.getuid?.() ?? 0;
      try {
        if (uid === 0 || lstatSync(below).uid === uid) return p;
      } catch {
        return p;
      }
    }
    if (p === dirname(p)) return null;
  }
}

/**
 * Whether this user — and so any agent, which runs as the hub's user — could have written what running the program
 * `file` would run (issue 26 round 2 #8: the hub and the CLI never execute a program an agent could have written;
 * `doctor` runs outside every sandbox). Checks the file as named and after its links (realpath), every folder above
 * each, and for a script its interpreter (`#!/path`, and `#!/usr/bin/env name` as found on `path`, the same way).
 * @returns the first path found that this user could change (the program is then not to be run), or null when none
 * could be: owned by another user (root) in folders only they write. Root can write everything, so for root the answer
 * is never null; on Windows, where write permission is not told this way, neither.
 */
export function programWritable(file: string, path = process.env.PATH ?? ""): string | null {
  if (process.platform === "win32") return file;
  if (!isAbsolute(file)) return file;
  const seen = new Set<string>();
  const todo = [file];
  while (todo.length > 0) {
    const f = todo.pop()!;
    if (seen.has(f)) continue;
    seen.add(f);
    let real: string;
    try {
      real = realpathSync.native(f);
    } catch {
      return f;
    }
    const found = writableOnTheWay(f) ?? (real === f ? null : writableOnTheWay(real));
    if (found !== null) return found;
    // Only a regular file is read for its `#!` line (a FIFO would be waited on): anything else is not to be run.
    try {
      if (!statSync(real).isFile()) return real;
    } catch {
      return real;
    }
    const interpreters = shebangOf(real, path);
    if (interpreters === "unsure") return real;
    todo.push(...interpreters);
  }
  return null;
}

/** The interpreters a script names on its `#!` line (`env` and what it finds on `path`), "unsure" when unclear. */
function shebangOf(file: string, path: string): string[] | "unsure" {
  const buf = Buffer.alloc(shebangMaxBytes);
  let n: number;
  try {
    const fd = openSync(file, "r");
    try {
      n = readSync(fd, buf, 0, buf.length, 0);
    } finally {
      closeSync(fd);
    }
  } catch {
    return "unsure";
  }
  const head = buf.subarray(0, n).toString("latin1");
  if (!head.startsWith("#!")) return [];
  const end = head.indexOf("\n");
  if (end < 0) return "unsure";
  const words = head.slice(2, end).trim().split(/[ \t]+/).filter(Boolean);
  if (words.length === 0 || !isAbsolute(words[0]!)) return "unsure";
  if (words[0]!.endsWith("/env")) {
    const name = words.slice(1).find((w) => !w.startsWith("-"));
    if (!name || name.includes("=")) return "unsure";
    const found = findProgram(name, path);
    return found && isAbsolute(found) ? [words[0]!, resolve(found)] : "unsure";
  }
  return [words[0]!];
}

/** The last `max` characters of a text (for error messages from stderr). */
export function tail(text: string, max = 2000): string {
  const t = text.trim();
  return t.length <= max ? t : "…" + t.slice(t.length - max);
}

/**
 * Replaces `{prompt}`, `{model}`, `{effort}`, `{cwd}`, `{context}` in each argument once: the inserted text is
 * never scanned again, so a prompt containing `{cwd}` or `$&` reaches the program unchanged (plugins.md).
 */
export function substitute(args: string[], values: Record<"prompt" | "model" | "effort" | "cwd" | "context", string>): string[] {
  return args.map((a) => a.replace(/\{(prompt|model|effort|cwd|context)\}/g, (_m, k: keyof typeof values) => values[k]));
}

/** A tool call's arguments (or result) as transcript text: strings as they are, anything else as JSON. */
export function stepText(v: unknown): string {
  if (typeof v === "string") return v;
  try {
    return JSON.stringify(v) ?? "";
  } catch {
    return String(v);
  }
}

/** The JSON object of one line of a JSON-lines output, or null when it is not one. */
export function jsonLine(line: string): Record<string, any> | null { // eslint-disable-line @typescript-eslint/no-explicit-any
  try {
    const v = JSON.parse(line) as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The JSON objects of a JSON-lines output so far; an unfinished last line and lines that are not JSON are skipped. */
export function jsonLines(stdout: string): Record<string, any>[] { // eslint-disable-line @typescript-eslint/no-explicit-any
  const out: Record<string, any>[] = []; // eslint-disable-line @typescript-eslint/no-explicit-any
  for (const line of stdout.split("\n")) {
    if (!line.trim()) continue;
    try {
      const v = JSON.parse(line) as unknown;
      if (v && typeof v === "object" && !Array.isArray(v)) out.push(v as Record<string, unknown>);
    } catch {
      // an unfinished line, or a line that is not JSON
    }
  }
  return out;
}
