/**
 * The review process of a delivery round (protocol.md 交付插件, 审查进程): the project's `review.command` (from
 * `ops/delivery.json` of main, never of the pull request) is given only the diff text on its standard input and the
 * review guide. It never gets a checkout of the pull request: it starts in a new empty folder, with none of the
 * round's environment but `PATH`, `HOME`, `LANG`, `TMPDIR` and `DELIVERY_REVIEW_GUIDE` (the path of a file there
 * holding the guide's text, absent when the project has no guide) — so it runs none of the branch's code, tests,
 * settings or hooks.
 *
 * What it answers, by its exit code: 0 the review passed; 1 it found problems, which are its standard output (the
 * findings, as text for people); anything else, a signal, no exit within `reviewTimeoutMs` or more output than
 * `reviewOutputBytesMax` is a reviewer that did not run (the round ends for the hub's retry).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** How long a review may take, in ms (30 minutes). */
export const reviewTimeoutMs = 30 * 60_000;
/** The most output of a reviewer read, in bytes. */
export const reviewOutputBytesMax = 1_000_000;
/** The longest findings text kept (the hub's card text limit leaves room for the round's own words). */
export const findingsCharsMax = 3_000;

/** How much of a reviewer's standard error is kept, in characters (its end: where a CLI says why it stopped). */
export const stderrTailChars = 1_000;

/** What the reviewer said. */
export type ReviewVerdict =
  | { kind: "passed" }
  | { kind: "findings"; text: string }
  | { kind: "broken"; reason: string };

/** How a reviewer process ended, as `runInRoom` saw it. */
export type RoomExit =
  | { kind: "exited"; code: number | null; signal: string | null; stdout: string; stderrTail: string }
  | { kind: "over"; reason: string }
  | { kind: "notStarted"; reason: string };

/**
 * Runs `command` in the folder `room` with exactly `env`, `input` on its standard input, in a process group of its
 * own: killed whole at `timeoutMs` or when it writes more than `reviewOutputBytesMax` bytes to standard output
 * (of standard error only the last `stderrTailChars` characters are kept, for the reason of a failure). Never throws
 * for the process's own failure.
 */
export function runInRoom(command: string[], room: string, env: NodeJS.ProcessEnv, input: string, timeoutMs: number): Promise<RoomExit> {
  return new Promise<RoomExit>((done) => {
    const child = spawn(command[0]!, command.slice(1), { cwd: room, env, stdio: ["pipe", "pipe", "pipe"], detached: true });
    const out: Buffer[] = [];
    let size = 0;
    let over = false;
    const stop = () => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch { /* gone already */ }
    };
    const timer = setTimeout(() => {
      over = true;
      stop();
    }, timeoutMs);
    child.stdout.on("data", (c: Buffer) => {
      size += c.length;
      if (size > reviewOutputBytesMax) {
        over = true;
        stop();
      } else out.push(c);
    });
    let stderrTail = "";
    child.stderr.on("data", (c: Buffer) => {
      stderrTail = (stderrTail + c.toString("utf8")).slice(-stderrTailChars);
    });
    // a reviewer that stops reading its input early is its own business: the verdict is its exit
    child.stdin.on("error", () => {});
    child.stdin.end(input);
    child.on("error", (e) => {
      clearTimeout(timer);
      done({ kind: "notStarted", reason: `the reviewer did not start: ${e.message}` });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (over) done({ kind: "over", reason: size > reviewOutputBytesMax ? `the reviewer wrote more than ${reviewOutputBytesMax} bytes` : `the reviewer took longer than ${timeoutMs / 1000} s` });
      else done({ kind: "exited", code, signal, stdout: Buffer.concat(out).toString("utf8"), stderrTail });
    });
  });
}

/**
 * Runs `command` (program and arguments) on `diff` with `guide` (the guide's text, or null); see the module comment.
 * @param timeoutMs the time limit (tests give a shorter one).
 * @returns the verdict; never throws for the reviewer's own failure (that is `broken`).
 */
export async function runReviewer(command: string[], diff: string, guide: string | null, timeoutMs = reviewTimeoutMs): Promise<ReviewVerdict> {
  const room = mkdtempSync(join(tmpdir(), "delivery-review-"));
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: room, TMPDIR: room };
  if (process.env.LANG) env.LANG = process.env.LANG;
  if (guide !== null) {
    env.DELIVERY_REVIEW_GUIDE = join(room, "review-guide.md");
    writeFileSync(env.DELIVERY_REVIEW_GUIDE, guide, { mode: 0o444 });
  }
  try {
    const exit = await runInRoom(command, room, env, diff, timeoutMs);
    if (exit.kind !== "exited") return { kind: "broken", reason: exit.reason };
    const text = exit.stdout.trim();
    if (exit.code === 0) return { kind: "passed" };
    if (exit.code === 1) return { kind: "findings", text: (text || "(the reviewer gave no text)").slice(0, findingsCharsMax) };
    return { kind: "broken", reason: `the reviewer ended with ${exit.signal ?? `exit code ${exit.code}`}` };
  } finally {
    rmSync(room, { recursive: true, force: true });
  }
}
