/**
 * The one reader of Linux's process table (issue 27 #5): `/proc/<pid>/stat` parsed once here for the hub's lock
 * (host/lock.ts), the worker's supervisor (worker/supervise.ts) and its peer checks (worker/peer.ts). Elsewhere
 * (macOS, Windows) there is no /proc: every reader answers null or an empty table, and its caller asks `ps` or cannot
 * tell.
 */
import { readdirSync, readFileSync } from "node:fs";

/**
 * One process as `/proc/<pid>/stat` describes it: its state letter (`R`, `S`, `Z`, …), parent, process group, and
 * start time (clock ticks after boot, kept as the text the kernel wrote: compared, never computed with).
 */
export interface ProcStat { pid: number; state: string; ppid: number; pgid: number; start: string }

/**
 * Parses the text of a `/proc/<pid>/stat` file. The command name sits in parentheses and may hold anything (spaces,
 * parentheses), so the fields are counted after its last `)`: state, ppid, pgrp, …, starttime (the 22nd field).
 * @returns null for a text without a closing parenthesis.
 */
export function parseProcStat(pid: number, text: string): ProcStat | null {
  const close = text.lastIndexOf(")");
  if (close < 0) return null;
  const f = text.slice(close + 2).split(" ");
  return { pid, state: f[0] ?? "", ppid: Number(f[1]), pgid: Number(f[2]), start: f[19] ?? "" };
}

/** `/proc/<pid>/stat` of process `pid`, or null when there is no such process (or no /proc). */
export function readProcStat(pid: number): ProcStat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  return parseProcStat(pid, text);
}

/** The start time of process `pid` as `ProcStat.start`, or "" when it cannot be told (no such process, or no /proc). */
export function processStart(pid: number): string {
  return readProcStat(pid)?.start ?? "";
}

/**
 * Whether the process group `pgid`, whose leader started at `start` (a `ProcStat.start`), is still that group and not
 * one that took its number after it ended: process ids are used again (pid_max is 32,768 on many machines, and a busy
 * host goes round it in minutes), and a signal to a stale group ends a stranger's processes (seen in a full run: a
 * test's agent and another test's stubborn job host were ended by someone's SIGTERM). While any process of a group
 * lives, Linux gives its number to no new process; so the group is the recorded one when its leader is still the one
 * recorded, or when no process has that number (the leader ended; members left keep the group).
 * @param start "" — cannot tell (no /proc, or a record from before the start time was kept): taken as the same group.
 */
export function sameGroup(pgid: number, start: string): boolean {
  if (start === "") return true;
  const now = readProcStat(pgid);
  return now === null || now.start === start;
}

/** Whether `pid` is still the process that started at `start`: false when it is gone or its number was used again. */
export function sameProcessStart(pid: number, start: string): boolean {
  return readProcStat(pid)?.start === start;
}

/** Every process now, from /proc (empty where there is none). Processes that end while it is read are left out. */
export function procTable(): ProcStat[] {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return [];
  }
  const out: ProcStat[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const p = readProcStat(Number(name));
    if (p) out.push(p);
  }
  return out;
}

/**
 * The environment process `pid` started with, as `/proc/<pid>/environ` holds it (`NAME=value` entries), or null when
 * it is gone or not this user's.
 */
export function procEnviron(pid: number): string[] | null {
  try {
    return readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter(Boolean);
  } catch {
    return null;
  }
}

/** The command line of process `pid` as `/proc/<pid>/cmdline` holds it (its arguments), or null when it is gone. */
export function procCmdline(pid: number): string[] | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  } catch {
    return null;
  }
}

/**
 * The numbers of process `pid` in each PID namespace it is in, outermost first, as the `NSpid` line of
 * `/proc/<pid>/status` gives them (one number outside any namespace); null when it is gone.
 */
export function procNsPids(pid: number): number[] | null {
  try {
    const line = /^NSpid:\s+(.+)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return line ? line.trim().split(/\s+/).map(Number) : null;
  } catch {
    return null;
  }
}

/** The children of process `pid` (its main thread's, as `/proc/<pid>/task/<pid>/children` lists them); [] when it is gone. */
export function procChildren(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Every descendant of process `root` now (Linux /proc; none elsewhere), each with its start time. */
export function descendantsOf(root: number): ProcStat[] {
  const table = procTable();
  const out: ProcStat[] = [];
  const found = new Set<number>([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of table) {
      if (!found.has(p.pid) && found.has(p.ppid)) {
        found.add(p.pid);
        out.push(p);
        grew = true;
      }
    }
  }
  return out;
}
