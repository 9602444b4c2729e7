/**
 * What a process of the engine does when its own standard output or standard error cannot be written (issue 33;
 * protocol.md 失败表: 日志写不出去 → 进程退出，由系统服务拉起).
 *
 * A write to a broken pipe (EPIPE: the reader went away), a terminal that closed (EIO), a full disk (ENOSPC) or a
 * descriptor that is gone (EBADF) makes Node emit `error` on `process.stdout` / `process.stderr`. Without a listener
 * that error becomes an uncaught exception; the supervisor's guard (loops.ts) logs it to the same stream, which fails
 * again: the process spins in that loop forever and answers nothing. With the listener installed here, the first
 * failure ends the process instead, after at most one synchronous attempt to say why on the other stream (nothing if
 * that fails too). The error never reaches the uncaught-exception guard.
 *
 * Two policies:
 * - `service` (`serve`, and with it the local worker, the channels and the tool host, which log through it): any failure ends the process with `logBrokenExitCode`, which a service
 *   manager restarts (Restart=on-failure) and a person can tell apart from a crash (1) or a refused start.
 * - `command` (every other CLI command): a closed pipe (`agent-autoloop status | head -1`) ends the command quietly
 *   with `pipeClosedExitCode`, the status a shell shows for a Unix tool ended by SIGPIPE; any other failure is said
 *   once on the other stream and ends it with `logBrokenExitCode`.
 */
import { writeSync } from "node:fs";
import { t, type Lang } from "../i18n/messages.js";

/** Exit status of a process whose log or output could not be written: EX_IOERR of sysexits.h. */
export const logBrokenExitCode = 74;

/** Exit status of a command whose reader closed the pipe: 128 + SIGPIPE (13), as a shell reports a Unix tool's. */
export const pipeClosedExitCode = 141;

/** How the process ends when its output breaks (see the module comment). */
export type LogStreamPolicy = "service" | "command";

/** The two output streams with the descriptor each writes to (tests pass their own). */
export interface OutputStreams {
  stdout: { fd: number; stream: NodeJS.EventEmitter };
  stderr: { fd: number; stream: NodeJS.EventEmitter };
}

/** Options of `exitWhenOutputBreaks`; the defaults are the real process's. */
export interface ExitOptions {
  streams?: OutputStreams;
  /** Ends the process; tests observe it instead. */
  exit?: (code: number) => void;
  /** Writes one text to a descriptor, synchronously; throws when it cannot. */
  write?: (fd: number, text: string) => void;
}

/** The exit status `policy` gives a failed write of this error code (EPIPE, EIO, …; undefined for an unknown one). */
export function exitCodeOf(policy: LogStreamPolicy, errorCode: string | undefined): number {
  return policy === "command" && errorCode === "EPIPE" ? pipeClosedExitCode : logBrokenExitCode;
}

/** The guard of one process: its policy may change once the command is known (`serve` becomes a service). */
export interface OutputGuard {
  policy: LogStreamPolicy;
}

/**
 * Installs `error` listeners on standard output and standard error that end the process at the first failed write
 * (see the module comment). Install it once per process; set the returned guard's `policy` to change it later.
 * @param lang the language of the one line that says why.
 */
export function exitWhenOutputBreaks(policy: LogStreamPolicy, lang: Lang, opts: ExitOptions = {}): OutputGuard {
  const guard: OutputGuard = { policy };
  const streams = opts.streams ?? { stdout: { fd: 1, stream: process.stdout }, stderr: { fd: 2, stream: process.stderr } };
  const exit = opts.exit ?? ((code: number) => process.exit(code));
  const write = opts.write ?? ((fd: number, text: string) => void writeSync(fd, text));
  let ending = false;
  const onError = (broken: "stdout" | "stderr") => (e: NodeJS.ErrnoException) => {
    if (ending) return;
    ending = true;
    const code = exitCodeOf(guard.policy, e.code);
    if (code !== pipeClosedExitCode) {
      const other = broken === "stderr" ? streams.stdout.fd : streams.stderr.fd;
      const line = t(lang, broken === "stderr" ? "log.brokenStderr" : "log.brokenStdout", { error: e.code ?? e.message, code });
      try {
        write(other, line + "\n");
      } catch {
        // Nowhere left to say it: the exit status alone tells.
      }
    }
    exit(code);
  };
  streams.stdout.stream.on("error", onError("stdout"));
  streams.stderr.stream.on("error", onError("stderr"));
  return guard;
}
