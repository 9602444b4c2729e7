/**
 * The mark of a tool host on every plugin process it starts, and the clean-up it allows (issue 26 round 10, Low: an
 * unsandboxed MCP server started a child in a session of its own that ignored SIGTERM; it outlived a SIGKILL of the
 * hub and a normal stop, and the next start did not end it — round 9's clean-up found only service plugins, by their
 * socket). The mark is a variable in the plugin's environment, which what the plugin starts inherits: the host's pid,
 * its start time (so a reused pid is not taken for the host) and its home. A host ends, at its start, the marked
 * processes of a host of the same home that is gone (SIGKILL, crash), and at its stop its own that outlived their
 * plugin. Linux only (/proc); a process that clears its environment escapes the mark, and one of another user is not
 * ours to end. A sandboxed plugin's processes die with the sandbox (bwrap's pid namespace, --die-with-parent).
 */
import { procEnviron, procTable, readProcStat } from "../common/proc.js";

/** The variable that carries the mark (`<pid>:<start time>:<home>`). */
export const hostMarkVariable = "AGENT_AUTOLOOP_TOOL_HOST";

/** This process's mark as a tool host of `home` (null: a host without a home, a test's). */
export function hostMark(home: string | null, pid: number = process.pid): string {
  return `${pid}:${readProcStat(pid)?.start ?? ""}:${home ?? ""}`;
}

/** The host a mark names, or null for a value that is not a mark. */
function parseMark(value: string): { pid: number; start: string; home: string } | null {
  const m = /^(\d+):(\d*):(.*)$/s.exec(value);
  return m ? { pid: Number(m[1]), start: m[2]!, home: m[3]! } : null;
}

/**
 * SIGKILLs every process (and its process group, unless it is this process's) whose environment holds a mark that
 * `ends` accepts. Returns how many it found.
 */
function endMarked(ends: (mark: string) => boolean): number {
  const prefix = `${hostMarkVariable}=`;
  const ownGroup = readProcStat(process.pid)?.pgid;
  let found = 0;
  for (const p of procTable()) {
    if (p.pid === process.pid) continue;
    const mark = procEnviron(p.pid)?.find((e) => e.startsWith(prefix))?.slice(prefix.length);
    if (mark === undefined || !ends(mark)) continue;
    found++;
    for (const target of p.pgid !== ownGroup && p.pgid > 1 ? [-p.pgid, p.pid] : [p.pid]) {
      try {
        process.kill(target, "SIGKILL");
      } catch {
        // gone meanwhile, or not ours to end
      }
    }
  }
  return found;
}

/**
 * Ends what gone hosts of `home` left running (at a host's start): a marked process whose host's pid runs no more (or
 * is a zombie), or runs a process started at another time.
 */
export function endOrphansOf(home: string | null): number {
  return endMarked((value) => {
    const m = parseMark(value);
    if (!m || m.home !== (home ?? "") || m.pid === process.pid) return false;
    const host = readProcStat(m.pid);
    return !host || host.start !== m.start || host.state === "Z";
  });
}

/** Ends the processes still carrying `mark` (this host's, at its stop: what outlived its plugin). */
export function endOwn(mark: string): number {
  return endMarked((value) => value === mark);
}
