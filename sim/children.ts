/**
 * Every process a script starts ends with the script (issue 33). `npm run benchmark`, `npm run history` and the crash
 * test start real hubs, and those hubs start agents under detached supervisors (their own process groups, by design:
 * a run outlives a worker restart). A script that is interrupted — SIGINT (Ctrl-C), SIGTERM (`timeout`, `kill`),
 * SIGHUP (its terminal closed), or a process of its job gone (npm or the shell that ran it killed) — must not leave
 * them running: a hub whose log pipe closed was found at 85 % of a core half an hour after such an interruption.
 *
 * `scratchRoot(prefix)` gives the script one temporary folder and points `TMPDIR` at it, so every home the script (or
 * a module it calls) makes with `mkdtemp(tmpdir())` is inside it. On interruption the script kills the children it
 * tracked (`endWithScript`), then every run's process group recorded in a `pid.json` under the root (the supervisor
 * writes one per run), removes the root and exits with 128 + the signal's number (129 for a job gone). On a normal
 * exit it kills the tracked children still running. Linux reads the job's processes from /proc; elsewhere only the
 * script's parent is watched.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { constants, tmpdir } from "node:os";
import { join } from "node:path";
import { processAlive } from "../src/worker/supervise.js";

/** How often the script looks whether a process of its job is gone (ms). */
const jobWatchIntervalMs = 500;

const tracked = new Set<ChildProcess>();
const roots: string[] = [];
let installed = false;

/** Kills a process group, or does nothing when it is gone. */
function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    // already gone
  }
}

/** The process groups of the runs whose supervisors wrote `pid.json` somewhere under `dir`. */
function runGroupsUnder(dir: string, found: number[] = [], depth = 0): number[] {
  if (depth > 8) return found;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return found;
  }
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isDirectory()) runGroupsUnder(path, found, depth + 1);
    else if (e.name === "pid.json") {
      try {
        const { pgid } = JSON.parse(readFileSync(path, "utf8")) as { pgid?: unknown };
        if (typeof pgid === "number" && Number.isInteger(pgid) && pgid > 1) found.push(pgid);
      } catch {
        // half written or not ours: nothing to kill
      }
    }
  }
  return found;
}

/** Kills every tracked child (synchronous: also safe in an `exit` handler). */
function killTracked(): void {
  for (const child of tracked) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
}

/** Kills everything the script started and removes its scratch roots; then exits with `code`. */
function endEverything(code: number): never {
  const pids = [...tracked].map((c) => c.pid).filter((p): p is number => p !== undefined);
  killTracked();
  for (const root of roots) removeSettled(root, pids);
  process.exit(code);
}

/**
 * How many times `removeSettled` removes a root that a dying process made again, and how long it waits between (ms):
 * up to 10 s, for a hub on a loaded machine (a full test run beside other work left a root after 2 s).
 */
const settleTries = 100;
const settleWaitMs = 100;

/**
 * Whether a process of `pids` (this script's children: a killed one is a zombie until the event loop reaps it, which
 * writes nothing, so it counts as gone — Linux /proc) or a process group of `groups` is still there.
 */
function anyAlive(pids: readonly number[], groups: readonly number[]): boolean {
  const running = (pid: number) => {
    try {
      return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0] !== "Z";
    } catch {
      return false;
    }
  };
  const group = (g: number) => {
    try {
      process.kill(-g, 0);
      return true;
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === "EPERM";
    }
  };
  return pids.some(running) || groups.some(group);
}

/**
 * Removes `root` once the processes killed in it have stopped writing there. A signal is delivered asynchronously:
 * a hub interrupted with the job (Ctrl-C reaches the whole process group) may still write — a `mkdir -p` of a run's
 * folder makes the root again — after a first removal; such a root was found left in a full test run at load 10.
 * So: kill the runs' groups, remove (retrying a folder filled meanwhile), wait, and again while it came back or a
 * process killed (`pids`, the runs' groups) is still there to write.
 */
function removeSettled(root: string, pids: readonly number[]): void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const groups = new Set<number>();
  for (let i = 0; i < settleTries; i++) {
    for (const pgid of runGroupsUnder(root)) {
      groups.add(pgid);
      killGroup(pgid);
    }
    try {
      rmSync(root, { recursive: true, force: true, maxRetries: 3, retryDelay: 20 });
    } catch {
      // filled again while being removed: the next try
    }
    Atomics.wait(pause, 0, 0, settleWaitMs);
    if (!existsSync(root) && !anyAlive(pids, [...groups])) return;
  }
}

/** The ppid and process group of a process (Linux /proc), or null when it is gone or unreadable. */
function statOf(pid: number): { ppid: number; pgid: number } | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return { ppid: Number(fields[1]), pgid: Number(fields[2]) };
  } catch {
    return null;
  }
}

/**
 * The processes of this script's job: its ancestors in its own process group (npm, the shell npm ran, tsx), or just
 * its parent where /proc cannot tell.
 */
function jobAncestors(): number[] {
  const self = statOf(process.pid);
  if (!self) return [process.ppid];
  const found: number[] = [];
  for (let pid = self.ppid; pid > 1;) {
    const s = statOf(pid);
    if (!s || s.pgid !== self.pgid) break;
    found.push(pid);
    pid = s.ppid;
  }
  return found.length ? found : [process.ppid];
}

function install(): void {
  if (installed) return;
  installed = true;
  process.on("exit", killTracked);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => endEverything(128 + constants.signals[signal]));
  }
  const job = jobAncestors();
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent || job.some((pid) => !processAlive(pid))) endEverything(128 + constants.signals.SIGHUP);
  }, jobWatchIntervalMs).unref();
}

/** Tracks a child process: it is killed when the script is interrupted or exits. @returns the child. */
export function endWithScript<T extends ChildProcess>(child: T): T {
  install();
  tracked.add(child);
  child.once("exit", () => tracked.delete(child));
  return child;
}

/**
 * Makes the script's scratch folder under the system's temporary folder and sets `TMPDIR` to it, so that later
 * `tmpdir()` calls of this process and of the processes it starts land inside; removed when the script is
 * interrupted (see the module comment), and by `removeScratchRoots` at its normal end.
 * @returns the folder.
 */
export function scratchRoot(prefix: string): string {
  install();
  const root = mkdtempSync(join(tmpdir(), prefix));
  roots.push(root);
  process.env.TMPDIR = root;
  return root;
}

/** Removes the scratch roots at a script's normal end (what is left in them: homes a failed step kept). */
export function removeScratchRoots(): void {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
}
