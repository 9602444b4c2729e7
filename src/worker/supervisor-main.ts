/**
 * The supervisor of one agent process (protocol.md 结构与实测: each run is supervised so its output and exit code
 * survive a worker restart). Started detached by the worker with the run folder as its only argument; reads its
 * spec ({argv, cwd, env, sandboxed}: supervise.ts LaunchSpec) from stdin, so the agent's environment values are in no
 * file; starts the agent in its own process group with stdout and stderr going to files, writes `pid.json`
 * ({supervisor, pgid, start}: `start` is the group leader's start time on Linux, so that a stop never signals a group
 * that took the number later — proc.ts `sameGroup`) and, when the agent exits, `exit.json` ({code, signal}).
 *
 * A sandboxed agent (`argv` starts bubblewrap) is bwrap's child in a new session: its process group is the one
 * bwrap reports on file descriptor 3, and its exit code comes back through bwrap as a shell reports it (128 + the
 * signal's number for a signal), which is recorded as that signal, as it is for an agent run without the sandbox.
 * bwrap says on the same descriptor when the agent's program ended; a launch bwrap ended before that never ran the
 * agent (the sandbox could not be set up), and `exit.json` says so (`setupFailed`), so the worker may plan the
 * sandbox again and launch once more.
 *
 * On Windows there are no process groups: the agent runs under Windows PowerShell's `windows-job.ps1`, which keeps it
 * and everything it starts in a Job Object of its own (windows-job.ts). `pid.json`'s `pgid` is then that PowerShell
 * process's id, and `exit.json` gets the agent's exit code (or why it could not start) when the script exits.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import type { Readable } from "node:stream";
import { constants } from "node:os";
import { join } from "node:path";
import { t } from "../i18n/messages.js";
import { stopGraceMs } from "../kernel/limits.js";
import { findPowerShell, windowsFiles } from "../sdk/launch.js";
import { writeFileDurable } from "./files.js";
import { bwrapSetupFailed, closeBindSources, openBindSources, watchBwrapStatus } from "../common/bwrap.js";
import { processStart, readProcStat } from "../common/proc.js";
import type { LaunchSpec } from "./supervise.js";
import { encodeJobPayload, jobExit, jobHostArgv, jobPayload, jobStatusFile } from "./windows-job.js";
import { hostPidOf, joinPasta, onOwnGroup, type JoinedPasta } from "./sandbox-network.js";

const dir = process.argv[2];
if (!dir) {
  process.stderr.write("usage: supervisor-main <run folder> < spec.json\n");
  process.exit(2);
}

function writeJson(name: string, value: unknown): void {
  writeFileDurable(join(dir!, name), JSON.stringify(value));
}

let spec: LaunchSpec;
try {
  spec = JSON.parse(readFileSync(0, "utf8")) as LaunchSpec;
} catch (e) {
  writeJson("exit.json", { code: 127, signal: null, error: `no launch spec on stdin: ${(e as Error).message}` });
  process.exit(0);
}

/** The signal name of a shell-style exit code (128 + n), or null. */
function signalOf(code: number | null): NodeJS.Signals | null {
  if (code === null || code <= 128) return null;
  const found = Object.entries(constants.signals).find(([, n]) => n === code - 128);
  return (found?.[0] as NodeJS.Signals | undefined) ?? null;
}

// The worker stops the agent's process group, not this one; stay alive to record the exit.
for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(sig, () => {});

const out = openSync(join(dir, "stdout"), "a", 0o600);
const err = openSync(join(dir, "stderr"), "a", 0o600);
const windows = process.platform === "win32";
const lang = spec.lang === "zh" ? "zh" : "en";

/**
 * Windows: starts PowerShell's `windows-job.ps1` (hidden, a child of this process, so it dies with it and its Job
 * Object's handle closes) with the run's files as its output and the launch on its standard input.
 */
function startInJob(): ChildProcess {
  const powershell = findPowerShell(process.env, windowsFiles);
  if (!powershell) {
    writeJson("exit.json", { code: 127, signal: null, error: t(lang, "launch.noJobHost") });
    process.exit(0);
  }
  const argv = jobHostArgv(powershell);
  const host = spawn(argv[0]!, argv.slice(1), { cwd: dir, env: spec.env, stdio: ["pipe", out, err], windowsHide: true });
  host.stdin!.on("error", () => {});
  host.stdin!.end(encodeJobPayload(jobPayload(spec.argv, spec.cwd, Object.keys(spec.env), dir!, stopGraceMs)));
  return host;
}

/** The status file windows-job.ps1 wrote, or null. */
function jobStatus(): string | null {
  try {
    return readFileSync(join(dir!, jobStatusFile), "utf8");
  } catch {
    return null;
  }
}

/**
 * The bind sources of a sandboxed launch, opened once and checked (issue 26 round 2, findings 3-5): each must still
 * be the folder the worker checked, at its path, reached through no link; bwrap binds the open folder, so a link
 * swapped in afterwards changes nothing. A source that changed or is gone ends the launch before bwrap starts.
 */
function openSources(paths: readonly string[]): number[] {
  const opened = openBindSources(paths);
  if ("fds" in opened) return opened.fds;
  const { path, problem } = opened;
  const error = problem.why === "changed" ? t(lang, "sandbox.bindChanged", { path, now: problem.now }) : t(lang, "sandbox.bindGone", { path, error: problem.error });
  // A source gone since the worker planned (a mount of the machine's that went away meanwhile: seen in a full test run,
  // another test's mount under /mnt) is a setup failure the worker plans again, as bwrap's own; one changed into a link
  // is refused for good.
  writeJson("exit.json", { code: 127, signal: null, error, ...(problem.why === "missing" ? { setupFailed: true } : {}) });
  process.exit(0);
}

let child: ChildProcess;
let bindFds: number[] = [];
try {
  if (windows) child = startInJob();
  else {
    bindFds = spec.sandboxed ? openSources(spec.bindSources ?? []) : [];
    // An `attach` network: bwrap waits on the pipe after the bind sources until pasta has joined its namespace.
    const block = spec.sandboxed && spec.network?.mode === "attach" ? ["pipe" as const] : [];
    const stdio: ("ignore" | "pipe" | number)[] = ["ignore", out, err, ...(spec.sandboxed ? ["pipe" as const] : []), ...bindFds, ...block];
    child = spawn(spec.argv[0]!, spec.argv.slice(1), { cwd: spec.cwd, env: spec.env, stdio, detached: true });
  }
} catch (e) {
  writeJson("exit.json", { code: 127, signal: null, error: (e as Error).message });
  process.exit(0);
} finally {
  // bwrap has its own copies (and closes them once mounted); this process keeps none.
  closeBindSources(bindFds);
}
child.on("error", (e) => {
  writeJson("exit.json", { code: 127, signal: null, error: e.message });
  process.exit(0);
});
/** bwrap's status pipe, read (sandboxed launches only): whether the agent's program ran. */
let status: ReturnType<typeof watchBwrapStatus> | null = null;
if (child.pid !== undefined) {
  // Read at once: the agent is this process's child, not reaped before this event loop turns, so its number is its own.
  if (!spec.sandboxed) writeJson("pid.json", { supervisor: process.pid, pgid: child.pid, start: processStart(child.pid) });
  else {
    // bwrap says on its status pipe (sandbox.ts `sandboxStatusFd`) which process it cloned: the agent's group. If it
    // stops before (its exit code and stderr say why), its own group is recorded.
    let recorded = false;
    const record = (pgid: number) => {
      if (!recorded) writeJson("pid.json", { supervisor: process.pid, pgid, start: processStart(pgid) });
      recorded = true;
    };
    const exited = new Promise((r) => child.once("exit", r));
    const network = spec.network;
    const cloned = (pid: number) => {
      // `wrap`: bwrap names its child by pasta's PID namespace; the group to stop is that process's on this computer.
      if (network?.mode === "wrap") record(hostPidOf(child.pid!, pid) ?? child.pid!);
      else if (network?.mode === "attach") {
        // Until pasta has joined and bwrap's child leads a group of its own (it calls setsid after its --block-fd),
        // a stop ends bwrap's own group, which holds that child (the round-39 review, R39-1: a stop then was lost).
        record(child.pid!);
        const block = child.stdio[3 + 1 + bindFds.length] as NodeJS.WritableStream | null;
        blocked = { pid, start: processStart(pid) };
        pasta = joinPasta(network, pid, dir!, () => {
          // A stop may have ended bwrap meanwhile: its child, still waiting, is ended on bwrap's exit, never let go.
          if (child.exitCode !== null || child.signalCode !== null) return;
          blocked = null;
          block?.end("1");
          onOwnGroup(pid, () => {
            if (child.exitCode === null && child.signalCode === null) writeJson("pid.json", { supervisor: process.pid, pgid: pid, start: processStart(pid) });
          });
        }, (why, gone) => {
          // bwrap's child gone already (its namespace could not be opened): its own setup failed, and bwrap says so
          // itself when it exits — a setup failure, started again (R39-3), never read as the network's.
          if (gone || !stillWaiting()) return;
          networkError = t(lang, "sandbox.networkFailed", { error: why });
          child.kill("SIGKILL");
        });
      } else record(pid);
    };
    status = watchBwrapStatus(child.stdio[3] as Readable, exited, cloned);
    child.stdio[3]!.on("end", () => record(child.pid!));
  }
}
/**
 * An `attach` launch's sandbox while it waits on `--block-fd` for pasta: bwrap's child, which a stop of bwrap's group
 * does not end (pid 1 of its namespace ignores SIGTERM, and bwrap sets its parent-death signal only after the wait),
 * and which goes on when the pipe closes — so it is killed when bwrap ends first (the round-39 review, R39-1).
 */
let blocked: { pid: number; start: string } | null = null;

/** Whether bwrap's child of an `attach` launch still waits on its `--block-fd` (not ended, not a zombie). */
function stillWaiting(): boolean {
  const now = blocked && readProcStat(blocked.pid);
  return !!now && now.start === blocked!.start && now.state !== "Z" && now.state !== "X";
}
/** An `attach` launch's pasta (sandbox-network.ts `joinPasta`), ended with the launch. */
let pasta: JoinedPasta | null = null;
/** Why the sandbox's network could not be set up, when the supervisor ended bwrap for it. */
let networkError: string | null = null;

child.on("exit", (code, signal) => {
  if (windows) {
    const ended = jobExit(code, jobStatus(), lang);
    writeJson("exit.json", { code: ended.code, signal: null, error: ended.error });
    process.exit(0);
  }
  // bwrap's last status line may still be in the pipe when its exit is seen.
  void (status?.closed ?? Promise.resolve()).then(() => {
    pasta?.end();
    if (stillWaiting()) process.kill(blocked!.pid, "SIGKILL");
    if (spec.network?.mode === "wrap" && signal === null) {
      // pasta answers 0 when it was ended itself (and bwrap with it): bwrap's own word is the agent's exit; without
      // it, an agent that was running ended unfinished. Before bwrap cloned anything, pasta itself failed (R39-8).
      if (status?.status.exitCode != null) code = status.status.exitCode;
      else if (status?.status.childPid === null && code !== 0) networkError = t(lang, "sandbox.networkFailed", { error: t(lang, "sandbox.pastaExit", { code: String(code) }) });
      else if (code === 0) [code, signal] = [null, "SIGKILL"];
    }
    const sig = signal ?? (spec.sandboxed ? signalOf(code) : null);
    // A sandboxed launch bwrap ended on its own before its program ran: the sandbox could not be set up (the worker
    // plans it again and launches once more: attempt.ts).
    const setupFailed = status !== null && bwrapSetupFailed(status.status, { code, signal });
    // bwrap that ended on its own (a setup failure while pasta joined) says so itself: it is planned and started again.
    if (networkError && (spec.network?.mode === "wrap" || signal !== null)) writeJson("exit.json", { code: 127, signal: null, error: networkError });
    else writeJson("exit.json", { code: sig && !signal ? null : code, signal: sig, error: null, ...(setupFailed ? { setupFailed: true } : {}) });
    process.exit(0);
  });
});
