/**
 * Starting, watching and stopping an agent process through its detached supervisor
 * (protocol.md Agent: stop = SIGTERM to the process group, SIGKILL after 10 s; only then is the run cancelled).
 * On Windows each launch runs in a Job Object of its own (windows-job.ts) and stopping it ends the whole job.
 */
import { spawn, execFileSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { basename, join } from "node:path";
import { constants as osConstants } from "node:os";
import { engineDir } from "../common/paths.js";
import { procCmdline, procTable, sameGroup, sameProcessStart } from "../common/proc.js";
import type { Lang } from "../i18n/messages.js";
import { stopGraceMs } from "../kernel/limits.js";
import { readRegular, writeFileDurable } from "./files.js";
import { stopRequestFile } from "./windows-job.js";
import type { SandboxNetwork } from "./sandbox-network.js";

/**
 * How a launch ended (`exit.json`). `setupFailed`: a sandboxed launch that bwrap ended before the agent's program ran
 * (bwrap's status never said `exit-code`; supervisor-main.ts), so nothing of the agent ran.
 */
export interface Exit { code: number | null; signal: string | null; error: string | null; setupFailed?: boolean }

/**
 * The exit code of a launch as a shell gives it: its own, or 128 + the signal's number when a signal ended it (139 for
 * SIGSEGV), so that a plugin's reading says which (round 39, F39a-3: every signal read as 128); 128 when neither is known.
 */
export function shellCode(exit: Exit): number {
  if (exit.code !== null) return exit.code;
  const n = exit.signal ? (osConstants.signals as Record<string, number | undefined>)[exit.signal] : undefined;
  return 128 + (n ?? 0);
}

/** The compiled supervisor script (the worker always runs the compiled one, also under tsx). */
export const supervisorScript = join(engineDir, "dist", "src", "worker", "supervisor-main.js");

/**
 * What the supervisor starts (supervisor-main.ts). It reaches the supervisor over its stdin, never through a file:
 * `spec.json` in the launch folder keeps `argv`, `cwd`, `sandboxed` and the *names* of the environment variables.
 */
export interface LaunchSpec {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /** `argv` starts bubblewrap with `--json-status-fd 3` (sandbox.ts): the agent's process group is the one bwrap reports. */
  sandboxed: boolean;
  /** The language of what the supervisor itself writes into `exit.json` (Windows: why the Job Object failed). */
  lang?: Lang;
  /**
   * Sandboxed: the real paths bwrap binds by descriptor (sandbox.ts `SandboxLaunch.sources`), checked by the worker.
   * The supervisor opens each (`openBindSource`), refuses the launch when one is no longer the folder checked, and
   * gives them to bwrap as descriptors `firstBindFd`, `firstBindFd + 1`, …, closing its own copies after the spawn.
   */
  bindSources?: string[];
  /** Sandboxed: the agent's network of its own (sandbox-network.ts), which the supervisor joins pasta to (`attach`). */
  network?: SandboxNetwork;
}

/**
 * Starts `argv` under a detached supervisor in `dir`; returns once the supervisor has started it. On Windows
 * `argv[0]` must be what the launch rules resolved (an absolute `.exe`/`.com`: src/sdk/launch.ts `launchArgv`).
 */
export async function startSupervised(dir: string, argv: string[], cwd: string, env: Record<string, string>, sandboxed = false, lang: Lang = "en", bindSources: string[] = [], network?: SandboxNetwork): Promise<void> {
  const spec: LaunchSpec = { argv, cwd, env, sandboxed, lang, bindSources, ...(network ? { network } : {}) };
  writeFileDurable(join(dir, "spec.json"), JSON.stringify({ argv, cwd, env: Object.keys(env).sort(), sandboxed }));
  const sup = spawn(process.execPath, [supervisorScript, dir], { detached: true, stdio: ["pipe", "ignore", "ignore"], cwd: dir, env: { PATH: process.env.PATH ?? "" } });
  // A supervisor that cannot be started (EMFILE, EAGAIN) leaves no pid.json: the watch reports "did not start".
  sup.on("error", () => {});
  // A supervisor that died at once closes its stdin: the write fails, and its missing pid.json tells the worker.
  sup.stdin!.on("error", () => {});
  sup.stdin!.end(JSON.stringify(spec));
  sup.unref();
  for (let i = 0; i < 400 && !existsSync(join(dir, "pid.json")) && !existsSync(join(dir, "exit.json")); i++) await sleep(25);
}

export function readExit(dir: string): Exit | null {
  try {
    return JSON.parse(readRegular(join(dir, "exit.json"))) as Exit;
  } catch {
    return null;
  }
}

/**
 * The supervisors of a run's launches that still run (`<runDir>/<n>/pid.json` without `exit.json`): the processes the
 * run's own are found under (the agent, its sandbox and everything they start), for its tools socket (peer.ts). On
 * Linux a pid whose command line is not this supervisor's (a pid used again) is left out.
 */
export function launchSupervisors(runDir: string): number[] {
  let names: string[];
  try {
    names = readdirSync(runDir).filter((n) => /^\d+$/.test(n));
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const n of names) {
    const dir = join(runDir, n);
    const pid = readPids(dir)?.supervisor;
    if (typeof pid !== "number" || !Number.isInteger(pid) || pid <= 0 || readExit(dir) !== null) continue;
    if (process.platform === "linux" && !isSupervisor(pid)) continue;
    out.push(pid);
  }
  return out;
}

/** Whether process `pid` runs a supervisor script (Linux /proc; this engine's or, after a move, another's). */
function isSupervisor(pid: number): boolean {
  return procCmdline(pid)?.some((a) => a.endsWith(basename(supervisorScript))) ?? false;
}

/**
 * What `pid.json` holds: the supervisor's pid, the agent's process group (on Windows the job host's pid), and on Linux
 * the group leader's start time (`ProcStat.start`; "" where unknown: no /proc, a record written before it was kept).
 */
export interface LaunchPids { supervisor: number; pgid: number; start: string }

export function readPids(dir: string): LaunchPids | null {
  try {
    const p = JSON.parse(readRegular(join(dir, "pid.json"))) as Partial<LaunchPids>;
    return { supervisor: p.supervisor!, pgid: p.pgid!, start: typeof p.start === "string" ? p.start : "" };
  } catch {
    return null;
  }
}

/**
 * Whether the agent of a launch may still run: on Unix, whether a process of its group is there; on Windows, whether
 * its supervisor is (the PowerShell that holds the launch's Job Object is the supervisor's child and dies with it, and
 * the job's processes with that).
 */
export function launchAlive(pids: LaunchPids): boolean {
  return process.platform === "win32" ? processAlive(pids.supervisor) : groupAlive(pids.pgid, pids.start);
}

/**
 * Whether any process of the group is still there. With the leader's start time (`pid.json`'s `start`), a group that
 * took the number after the recorded one ended is not it (proc.ts `sameGroup`).
 */
export function groupAlive(pgid: number, start = ""): boolean {
  if (!sameGroup(pgid, start)) return false;
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Stops the agent's whole process group: SIGTERM, then SIGKILL after `graceMs` (10 s). Descendants that left the
 * group (a new session or group of their own) and are found through their parents get the same signals.
 * Resolves when no process of the group, and none of those descendants, is left.
 */
export async function stopGroup(dir: string, graceMs = stopGraceMs): Promise<void> {
  if (process.platform === "win32") return stopJob(dir, graceMs);
  const pids = readPids(dir);
  if (!pids) return;
  // Never a group that took the number after this one ended (proc.ts sameGroup): it would be a stranger's.
  const alive = () => groupAlive(pids.pgid, pids.start);
  const signal = (s: NodeJS.Signals) => {
    if (!sameGroup(pids.pgid, pids.start)) return;
    try {
      process.kill(-pids.pgid, s);
    } catch {
      // already gone
    }
  };
  // Descendants that left the group (setsid: Claude Code's tool shells, for one) get the same signals; they are
  // found by parent id while their parents in the group still live.
  const escaped = new Map<number, string>();
  /** Adds the escaped descendants found now; returns the ones not seen before. */
  const look = (): Map<number, string> => {
    const found = new Map<number, string>();
    if (!sameGroup(pids.pgid, pids.start)) return found;
    for (const p of escapedDescendants(pids.pgid)) if (!escaped.has(p.pid)) found.set(p.pid, p.start);
    for (const [pid, start] of found) escaped.set(pid, start);
    return found;
  };
  const signalEscaped = (s: NodeJS.Signals, which: Map<number, string> = escaped) => {
    for (const [pid, start] of which) {
      if (!sameProcess(pid, start)) continue;
      try {
        process.kill(pid, s);
      } catch {
        // already gone
      }
    }
  };
  const escapedAlive = () => [...escaped].some(([pid, start]) => sameProcess(pid, start));
  look();
  signal("SIGTERM");
  signalEscaped("SIGTERM");
  const deadline = Date.now() + graceMs;
  while ((alive() || escapedAlive()) && Date.now() < deadline) {
    await sleep(100);
    if (alive()) signalEscaped("SIGTERM", look()); // forked meanwhile: signalled once, like the rest
  }
  if (alive()) signal("SIGKILL");
  signalEscaped("SIGKILL");
  while (alive() || escapedAlive()) await sleep(50);
}

/**
 * Windows: stops a launch's whole Job Object. Asks windows-job.ps1 through its stop file (it ends the job and exits
 * once no process of it is left, and the supervisor then writes `exit.json`); if it has not within `graceMs`, ends
 * that PowerShell process, whose job handle closes, so Windows ends the job's processes (KILL_ON_JOB_CLOSE). Resolves
 * when `exit.json` is there or the supervisor is gone (which takes the PowerShell and its job with it).
 */
export async function stopJob(dir: string, graceMs = stopGraceMs): Promise<void> {
  const pids = readPids(dir);
  if (!pids) return;
  const running = () => readExit(dir) === null && processAlive(pids.supervisor);
  if (!running()) return;
  writeFileDurable(join(dir, stopRequestFile), "");
  const deadline = Date.now() + graceMs;
  while (running() && Date.now() < deadline) await sleep(100);
  // While the supervisor lives and has written no exit, the PowerShell is its unreaped child: its pid is not reused.
  if (running()) {
    try {
      process.kill(pids.pgid);
    } catch {
      // already gone
    }
  }
  while (running()) await sleep(50);
}

/** One process of the process table: ids, and its start time as the system gives it (to tell a reused pid). */
interface Proc { pid: number; ppid: number; pgid: number; start: string }

/** The process table: Linux /proc; elsewhere `ps`; [] where neither works (Windows has no process groups). */
function processTable(): Proc[] {
  if (process.platform === "linux") return procTable();
  if (process.platform === "win32") return [];
  try {
    const text = execFileSync("ps", ["-A", "-o", "pid=,ppid=,pgid=,lstart="], { encoding: "utf8" });
    return text.split("\n").map((l) => l.trim().split(/\s+/)).filter((f) => f.length >= 3)
      .map((f) => ({ pid: Number(f[0]), ppid: Number(f[1]), pgid: Number(f[2]), start: f.slice(3).join(" ") }));
  } catch {
    return [];
  }
}

/** Whether `pid` is still the process that started at `start` (a pid can be reused). */
function sameProcess(pid: number, start: string): boolean {
  if (process.platform === "linux") return sameProcessStart(pid, start);
  return processAlive(pid);
}

/** Descendants of the processes of group `pgid` that are in another group. */
export function escapedDescendants(pgid: number): Proc[] {
  const table = processTable();
  const inside = new Set(table.filter((p) => p.pgid === pgid).map((p) => p.pid));
  if (inside.size === 0) return [];
  const found = new Set<number>(inside);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of table) {
      if (!found.has(p.pid) && found.has(p.ppid)) {
        found.add(p.pid);
        grew = true;
      }
    }
  }
  return table.filter((p) => found.has(p.pid) && !inside.has(p.pid));
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
