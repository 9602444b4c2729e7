/**
 * What both bubblewrap sandboxes (the agents': src/worker/sandbox.ts; the tool plugins': src/tools/sandbox.ts) share
 * (issue 26, second round).
 *
 * - `/proc` as container runtimes (runc) leave it: bubblewrap's `--proc` keeps /proc/sys writable, and a process run
 *   as root in the sandbox (no user namespace for an agent, uid 0 mapped to 0 for a plugin) could set
 *   /proc/sys/kernel/core_pattern, whose helper the kernel runs as full root outside every namespace (findings 1, 2).
 *   So /proc/sys, /proc/sysrq-trigger, /proc/irq, /proc/bus and /proc/fs are bound read-only, and the host-wide
 *   information files (kcore, keys, timer_list, …) and folders (acpi, asound, scsi) are masked: the files cannot be
 *   opened (a /dev/null bound without device access), the folders are empty.
 * - Binds by file descriptor (findings 3, 4, 5): a bind source checked by its path and handed to bwrap as a path is
 *   resolved again by bwrap, so whoever can write one of its parent folders swaps in a link between the check and the
 *   mount. `openBindSource` opens a checked real path once (O_PATH | O_NOFOLLOW: no device or FIFO is opened, a link
 *   in the last place is not followed), and keeps it only when the opened file is at that very path (its
 *   /proc/self/fd link) and not a link; bwrap then binds the open file (`--bind-fd`, `--ro-bind-fd`, bubblewrap 0.8).
 */
import { execFileSync } from "node:child_process";
import { closeSync, existsSync, fstatSync, openSync, readlinkSync, constants } from "node:fs";
import type { Readable } from "node:stream";

/** procfs paths bound read-only over themselves (runc's readonly paths). */
const procReadOnly = ["/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"];
/** procfs files replaced by /dev/null (runc's masked files; bound without device access, so opening them fails). */
const procMaskedFiles = ["/proc/keys", "/proc/timer_list", "/proc/kcore", "/proc/latency_stats", "/proc/sched_debug", "/proc/timer_stats"];
/** procfs folders replaced by an empty read-only tmpfs (runc's masked folders). */
const procMaskedDirs = ["/proc/acpi", "/proc/asound", "/proc/scsi"];

/**
 * bwrap arguments to put right after `--proc /proc`: the read-only binds and masks of the entries this computer's
 * /proc has (a mount over an entry the sandbox's /proc lacks would fail). The read-only binds take the host's procfs
 * entries: /proc/sys shows the sysctls of the namespaces of whoever reads them, so the sandbox still reads its own.
 */
export function procMaskArgs(exists: (path: string) => boolean = existsSync): string[] {
  return [
    ...procReadOnly.filter(exists).flatMap((p) => ["--ro-bind", p, p]),
    ...procMaskedFiles.filter(exists).flatMap((p) => ["--ro-bind", "/dev/null", p]),
    ...procMaskedDirs.filter(exists).flatMap((p) => ["--tmpfs", p, "--remount-ro", p]),
  ];
}

/** Linux's O_PATH (the same number on x86-64 and arm64; Node does not export it). */
export const oPath = 0o10000000;

/** Why a bind source could not be kept: it is gone, or it is not (any more) the file that was checked. */
export type BindSourceProblem = { why: "missing"; error: string } | { why: "changed"; now: string };

/**
 * Opens `path` (a real path, already checked) as the source of a bind: an O_PATH descriptor, kept only when the file
 * it opened is at `path` itself (not reached through a link swapped into a parent since the check) and is no link.
 * The caller passes the descriptor to bwrap and closes it after the spawn. Linux only.
 */
export function openBindSource(path: string): { fd: number } | BindSourceProblem {
  let fd: number;
  try {
    fd = openSync(path, oPath | constants.O_NOFOLLOW);
  } catch (e) {
    return { why: "missing", error: (e as NodeJS.ErrnoException).code ?? (e as Error).message };
  }
  let now: string;
  try {
    now = readlinkSync(`/proc/self/fd/${fd}`);
    if (now === path && !fstatSync(fd).isSymbolicLink()) return { fd };
    if (now === path) now = `${path} (a link)`;
  } catch (e) {
    now = (e as Error).message;
  }
  closeSync(fd);
  return { why: "changed", now };
}

/**
 * Opens every bind source of a launch with `openBindSource`, in order. @returns their descriptors, or the first path
 * that changed or is gone with why — the ones opened before it are closed then, so nothing leaks either way.
 */
export function openBindSources(paths: readonly string[]): { fds: number[] } | { path: string; problem: BindSourceProblem } {
  const fds: number[] = [];
  for (const path of paths) {
    const opened = openBindSource(path);
    if (!("fd" in opened)) {
      closeBindSources(fds);
      return { path, problem: opened };
    }
    fds.push(opened.fd);
  }
  return { fds };
}

/** Closes descriptors opened by `openBindSource` (ignoring ones already closed). */
export function closeBindSources(fds: readonly number[]): void {
  for (const fd of fds) {
    try {
      closeSync(fd);
    } catch {
      // closed already
    }
  }
}

/** How long `bwrap --help` may take, in ms. */
const bwrapHelpTimeoutMs = 10_000;
const bindFdSupport = new Map<string, boolean>();

/**
 * Whether the bubblewrap at `bwrap` binds by descriptor (`--bind-fd`, `--ro-bind-fd`: bubblewrap 0.8 or newer), from
 * its `--help` (once per path). Both sandboxes need it; an older one makes every sandboxed launch fail, never run
 * without the sandbox, and the probes (`doctor`, `plugins doctor`) say why.
 */
export function bwrapBindsByFd(bwrap: string): boolean {
  let known = bindFdSupport.get(bwrap);
  if (known === undefined) {
    try {
      known = execFileSync(bwrap, ["--help"], { encoding: "utf8", timeout: bwrapHelpTimeoutMs, stdio: ["ignore", "pipe", "pipe"] }).includes("--ro-bind-fd");
    } catch (e) {
      known = String((e as { stdout?: string }).stdout ?? "").includes("--ro-bind-fd");
    }
    bindFdSupport.set(bwrap, known);
  }
  return known;
}

/** What bwrap said on its status descriptor (`--json-status-fd`) so far. */
export interface BwrapStatus {
  /** The sandbox's first process (host pid namespace), once bwrap has cloned it; null before. */
  childPid: number | null;
  /** Whether bwrap said the program it started ended (`{"exit-code": …}`): the sandbox was set up, the program ran. */
  programRan: boolean;
  /** The exit code bwrap said the program ended with (128 + n for signal n), or null before. */
  exitCode: number | null;
}

/** How long to wait for bwrap's status pipe to close once bwrap has exited, in ms (it closes with bwrap). */
export const bwrapStatusCloseWaitMs = 2_000;

/**
 * Reads bwrap's status pipe (`--json-status-fd`, JSON lines): `{"child-pid": N, …}` once bwrap has cloned the sandbox's
 * first process (before the sandbox is set up), `{"exit-code": N}` only when the program it started there ends. No
 * process inside the sandbox holds the pipe (bwrap 0.8 measured: the program's descriptors leave it out), so the
 * program cannot write on it. `closed` resolves when the pipe closes, or `bwrapStatusCloseWaitMs` after `exited`.
 */
export function watchBwrapStatus(stream: Readable, exited: Promise<unknown>, onChildPid: (pid: number) => void = () => {}): { status: BwrapStatus; closed: Promise<void> } {
  const status: BwrapStatus = { childPid: null, programRan: false, exitCode: null };
  let rest = "";
  const take = (lines: string[]) => {
    for (const line of lines) {
      let said: { "child-pid"?: unknown; "exit-code"?: unknown };
      try {
        said = JSON.parse(line) as typeof said;
      } catch {
        continue; // not a line of bwrap's status
      }
      if (said === null || typeof said !== "object") continue;
      const pid = said["child-pid"];
      if (status.childPid === null && typeof pid === "number" && Number.isSafeInteger(pid) && pid > 1) {
        status.childPid = pid;
        onChildPid(pid);
      }
      if (typeof said["exit-code"] === "number") {
        status.programRan = true;
        status.exitCode = said["exit-code"];
      }
    }
  };
  stream.on("data", (d: Buffer) => {
    rest += d.toString();
    const lines = rest.split("\n");
    rest = lines.pop() ?? "";
    take(lines);
  });
  // A last line without its line break.
  stream.on("end", () => take([rest]));
  stream.on("error", () => {});
  const closedPipe = new Promise<void>((r) => stream.once("close", () => r()));
  const closed = Promise.race([closedPipe, exited.then(() => new Promise<void>((r) => setTimeout(r, bwrapStatusCloseWaitMs).unref()))]);
  return { status, closed };
}

/**
 * Whether a sandboxed launch that ended so never ran its program: bwrap ended on its own (no signal) with a failure and
 * never said `exit-code` — the sandbox could not be set up (a path of the plan gone since it was made: a mount that
 * came and went). Nothing of the program ran, so planning the sandbox again and starting once more runs it once.
 */
export function bwrapSetupFailed(status: BwrapStatus, exit: { code: number | null; signal: string | null }): boolean {
  return !status.programRan && exit.signal === null && exit.code !== null && exit.code !== 0;
}

/** What a start answers when bwrap could not set its sandbox up and another try is left (tools/mcp.ts, service.ts). */
export const setupFailed = Symbol("setupFailed");
