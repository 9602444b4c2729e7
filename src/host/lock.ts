/**
 * Which hub belongs to a home, and whether it is alive (issue 14, item 9): the home's random, non-secret id
 * (`home.id`), the lock one hub (or a CLI writing the database) holds (`hub.pid`: its pid and its process start
 * time), and the record the running hub keeps beside it (`hub.json`: pid, start time, URL, home id). A pid counts as
 * a live holder only when the process exists, is not a zombie, and, when a start time was recorded, started then:
 * a reused pid is not taken for the hub. Linux reads `/proc/<pid>/stat`; elsewhere (macOS) `ps` answers.
 */
import { existsSync, linkSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { writeFileAtomic, type Home } from "./home.js";
import { t } from "../i18n/messages.js";

/** The response header on every answer of a hub: the id of the home it serves (not a secret). */
export const homeIdHeader = "x-agent-autoloop-home";
/** A home id: 16 random bytes, base64url (22 characters). */
const homeIdPattern = /^[A-Za-z0-9_-]{22}$/;
/** How long `ps` may take to describe one process (ms). */
const psTimeoutMs = 5_000;

const pidFile = (home: Home) => join(home.dir, "hub.pid");
const idFile = (home: Home) => join(home.dir, "home.id");
const recordFile = (home: Home) => join(home.dir, "hub.json");

/**
 * Creates `path` holding `content`, only if it does not exist yet; readers never see it empty or half written (the
 * content is written under a temporary name first, then linked into place).
 * @returns false when the file already existed.
 */
function createOnce(path: string, content: string, mode: number): boolean {
  const tmp = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  writeFileSync(tmp, content, { mode });
  try {
    linkSync(tmp, path);
    return true;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return false;
    // A file system without hard links: exclusive create (a reader may then see the file empty for a moment).
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "ENOSYS") throw e;
    try {
      writeFileSync(path, content, { flag: "wx", mode });
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw err;
    }
  } finally {
    unlinkSync(tmp);
  }
}

/**
 * The home's id, from `home.id`; with `create`, a home without one gets a new random id (homes made before ids).
 * @throws Error naming the file when it is missing (without `create`) or does not hold an id.
 */
export function readHomeId(home: Home, create = false): string {
  const file = idFile(home);
  for (let i = 0; i < 2; i++) {
    try {
      const id = readFileSync(file, "utf8").trim();
      if (!homeIdPattern.test(id)) throw new Error(t("en", "home.homeId", { file }));
      return id;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT" || !create) throw e;
    }
    createOnce(file, randomBytes(16).toString("base64url") + "\n", 0o644);
  }
  throw new Error(t("en", "home.homeIdCreate", { file }));
}

/** What the system says about a process: its state letter and its start time (opaque, compared as text). */
export interface ProcessInfo { state: string; start: string }

/**
 * Describes process `pid`.
 * @param via "proc" reads /proc/<pid>/stat (start: clock ticks after boot); "ps" asks `ps` (start: `lstart` in the C
 *   locale); the default is /proc where it exists.
 * @returns null when there is no such process; undefined when this system cannot tell (no /proc and no `ps`).
 */
export function processInfo(pid: number, via: "proc" | "ps" = existsSync("/proc/self/stat") ? "proc" : "ps"): ProcessInfo | null | undefined {
  if (!Number.isSafeInteger(pid) || pid <= 0) return null;
  if (via === "proc") {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      return null;
    }
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so fields are counted after the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0] ?? "", start: fields[19] ?? "" };
  }
  try {
    const out = execFileSync("ps", ["-o", "stat=", "-o", "lstart=", "-p", String(pid)], {
      encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], timeout: psTimeoutMs, env: { PATH: process.env.PATH ?? "/bin:/usr/bin", LC_ALL: "C" },
    });
    const m = /^\s*(\S+)\s+(.*\S)\s*$/.exec(out);
    return m ? { state: m[1]!.charAt(0), start: m[2]!.replace(/\s+/g, " ") } : null;
  } catch (e) {
    // ps exits 1 for a pid that does not exist; ENOENT: there is no ps to ask.
    return (e as NodeJS.ErrnoException).code === "ENOENT" ? undefined : null;
  }
}

/** This process's start time, as `processInfo` gives it, or null when the system cannot tell. */
function ownStart(): string | null {
  return processInfo(process.pid)?.start ?? null;
}

/**
 * Whether `pid` is a live process that, when `start` is given, started at that time: a zombie (exited, not yet
 * reaped) or a pid reused by a later process is not. When the system cannot describe processes, a pid that exists
 * counts as alive.
 */
export function processAlive(pid: number, start: string | null): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false; // 0 and negative pids would name process groups
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  const info = processInfo(pid);
  if (info === undefined) return true;
  if (info === null || info.state === "Z" || info.state === "X") return false;
  return start === null || start === "" || info.start === start;
}

/**
 * Who holds a home's lock: a hub (running, or starting: no `hub.json` yet), or the CLI changing keys or recording
 * the owner's own tool call (`plugins invoke`) while no hub runs.
 */
export type LockHolder = "hub" | "keys" | "invoke" | "restore";
const lockHolders: readonly string[] = ["hub", "keys", "invoke", "restore"] satisfies LockHolder[];

/**
 * Reads `hub.pid`: the pid on its first line, the start time on its second, who holds it on its third (the last two
 * absent in files of older versions).
 */
function readPidFile(file: string): { pid: number; start: string | null; by: LockHolder | null } | null {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return null;
  }
  const [pid, start, by] = text.split("\n");
  const holder = by?.trim() ?? "";
  return /^\d{1,10}$/.test(pid ?? "") ? { pid: Number(pid), start: start?.trim() || null, by: lockHolders.includes(holder) ? (holder as LockHolder) : null } : null;
}

/** The live process other than this one that holds the home's lock, and who it is (null: a file of an older version). */
export function lockHeldBy(home: Home): { pid: number; by: LockHolder | null } | null {
  const held = readPidFile(pidFile(home));
  return held && held.pid !== process.pid && processAlive(held.pid, held.start) ? { pid: held.pid, by: held.by } : null;
}

/**
 * Takes the home's lock (`hub.pid`): held by the hub while it runs, and by the CLI while it writes the database
 * with no hub running. A lock left by a process that is gone (or a zombie, or whose pid now names another process)
 * is taken over.
 * @param as who takes it, written in the file so that whoever finds it taken can say what holds it.
 * @returns `release` once taken; `holder` (the live holder's pid, null when unknown) and `by` (who it is, null when
 *   unknown) when another process holds it.
 */
export function tryLockHome(home: Home, as: LockHolder): { release: () => void } | { holder: number | null; by: LockHolder | null } {
  const file = pidFile(home);
  const mine = `${process.pid}\n${ownStart() ?? ""}\n${as}\n`;
  for (let i = 0; i < 2; i++) {
    if (createOnce(file, mine, 0o600)) {
      return {
        release() {
          try {
            if (readPidFile(file)?.pid === process.pid) unlinkSync(file);
          } catch {
            // already gone
          }
        },
      };
    }
    const held = readPidFile(file);
    if (held && held.pid !== process.pid && processAlive(held.pid, held.start)) return { holder: held.pid, by: held.by };
    try {
      unlinkSync(file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    }
  }
  const last = readPidFile(file);
  return { holder: last?.pid ?? null, by: last?.by ?? null };
}

/** The running hub's record (`hub.json`). */
export interface HubRecord {
  pid: number;
  /** The hub process's start time (see `processInfo`), null when the system cannot tell. */
  start: string | null;
  /** Where clients on this computer reach it. */
  url: string;
  /** The home id it answers with. */
  home: string;
}

/** Writes the record of the hub running in this process (atomically; readable by anyone who can read the home). */
export function writeHubRecord(home: Home, url: string, homeId: string): void {
  const record: HubRecord = { pid: process.pid, start: ownStart(), url, home: homeId };
  writeFileAtomic(recordFile(home), JSON.stringify(record, null, 2) + "\n", 0o644);
}

/** Removes the record when this process wrote it. */
export function removeHubRecord(home: Home): void {
  try {
    const record = JSON.parse(readFileSync(recordFile(home), "utf8")) as Partial<HubRecord>;
    if (record.pid === process.pid) unlinkSync(recordFile(home));
  } catch {
    // gone, or another hub's
  }
}

/** The pid, start time and URL `hub.json` holds, whether or not that process still lives; null when unreadable. */
function readHubRecord(home: Home): { pid: number; start: string | null; url: string } | null {
  let record: Partial<HubRecord>;
  try {
    record = JSON.parse(readFileSync(recordFile(home), "utf8")) as Partial<HubRecord>;
  } catch {
    return null;
  }
  if (typeof record?.url !== "string" || !/^https?:\/\//.test(record.url) || typeof record.pid !== "number") return null;
  return { pid: record.pid, start: typeof record.start === "string" ? record.start : null, url: record.url };
}

/** The URL in `hub.json` when the hub that wrote it is still that live process; null otherwise. */
export function recordedHubUrl(home: Home): string | null {
  const record = readHubRecord(home);
  return record && processAlive(record.pid, record.start) ? record.url : null;
}

/** The URL in `hub.json` whether or not the hub that wrote it still runs (where this home's hub was last); null when none. */
export function lastHubUrl(home: Home): string | null {
  return readHubRecord(home)?.url ?? null;
}
