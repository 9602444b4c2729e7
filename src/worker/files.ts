/**
 * Writing the files a worker relies on after a crash (`claim`, `job.json`, `context.json`, `result.json`,
 * `submitted`, the usage ledger, the supervisor's `spec.json`, `pid.json`, `exit.json`): whole or not at all; and
 * reading them, and the agent's output, without ever blocking on something that is not a regular file.
 */
import { randomBytes } from "node:crypto";
import { chmodSync, closeSync, constants, copyFileSync, fchmodSync, linkSync, lstatSync, fstatSync, fsyncSync, openSync, readFileSync, readlinkSync, readSync, renameSync, rmSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { present } from "../common/file-checks.js";
import { langFromEnv, t, type Lang } from "../i18n/messages.js";

/**
 * Creates `path` with `content` only if nothing is there (O_EXCL: never follows or replaces a link or file made
 * meanwhile), with `mode` whatever the umask: a placeholder a sandbox then binds read-only (launch-sandbox.ts), a
 * file of git's private folder (git-isolated.ts).
 * @throws EEXIST when something is already at `path`; the file system's other errors.
 */
export function createNewFile(path: string, content: string | Buffer, mode = 0o600): void {
  const fd = openSync(path, "wx", mode);
  try {
    fchmodSync(fd, mode);
    writeSync(fd, typeof content === "string" ? Buffer.from(content) : content);
  } finally {
    closeSync(fd);
  }
}

/**
 * Moves `path` (a file, folder or link) aside to `to`, or — when something is there already (a name an agent may have
 * made first, so that the move would fail or replace it) — to `to` with `-<8 hex digits>` added: never onto an
 * existing entry. Issue 26 round 12: a planted `commondir` stayed in place because its aside name was taken.
 *
 * Each of the two folders is opened first and the move made through its descriptor (`/proc/self/fd/<n>`, Linux), after
 * checking that the folder opened is the one named: a concurrent run that writes the same folder may replace a folder
 * on the way by a link once the paths were found (round 19, F19-1: the box of a state folder's planted entries swapped
 * for a link to the home, and the hub moved the agent's `.bash_aliases` there). Where /proc is missing (macOS, which
 * has no sandbox of this kind), by path. A regular file with more names (hard links) is then replaced by a copy of its
 * own there: the other names, which an agent may keep in a folder it writes, no longer change what was moved aside
 * (the review of round 35, HL-4).
 * @param unlock when the source folder refuses the move (EACCES, EPERM), make it writable for the move and put its mode back.
 * @param copies what one check may still copy for files with more names (bytes), and the copies it made by file.
 * @returns where it went.
 * @throws the file system's error (the move itself failed); an Error with code `ECHANGED` when a folder on the way is
 *   no longer the one named (nothing moved).
 */
export function moveAside(path: string, to: string, unlock = false, copies: CopyBudget = { bytesLeft: unsharedCopyMax, made: new Map() }): string {
  const from = pinnedFolder(dirname(path));
  let into = from;
  try {
    if (dirname(to) !== dirname(path)) into = pinnedFolder(dirname(to));
    let name = basename(to);
    while (present(join(into.at, name))) name = `${basename(to)}-${randomBytes(4).toString("hex")}`;
    const move = () => renameSync(join(from.at, basename(path)), join(into.at, name));
    try {
      move();
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (!unlock || (code !== "EACCES" && code !== "EPERM")) throw e;
      // The folder made unwritable (the agent runs as the hub's user and may chmod it): writable for the move, through
      // the same descriptor, and its mode put back.
      const mode = fstatSync(from.fd).mode & 0o7777;
      fchmodSync(from.fd, mode | 0o700);
      try {
        move();
      } finally {
        fchmodSync(from.fd, mode);
      }
    }
    unshared(join(into.at, name), join(dirname(to), name), copies);
    return join(dirname(to), name);
  } finally {
    from.close();
    if (into !== from) into.close();
  }
}

/** The most bytes `moveAside` copies for files with more names when no budget is given (one file's worth). */
export const unsharedCopyMax = 64 * 1024 * 1024;
/** The most bytes one check after a run copies for files moved aside with more names (attempt.ts). */
export const unsharedCheckBytesMax = 256 * 1024 * 1024;

/**
 * What one check may still copy (`bytesLeft`) for files moved aside with more names, and the copy it made of each
 * (`made`, by `<dev>:<ino>` of the original: a later name of the same file becomes a name of that copy, no second copy —
 * the round-37 review, HL-5: one 64 MiB file under 40 names cost 2.5 GiB).
 */
export interface CopyBudget {
  bytesLeft: number;
  made: Map<string, string>;
}

/**
 * When `at` (a path reaching the entry just moved, shown as `shown`) is a regular file with more than one name: the
 * copy made of it before, or a copy of its own when `copies` has room for it, in its place (mode kept), the link to
 * the agent's names broken. Never throws: a file it cannot copy (unreadable, the disk full, no room left) stays as moved.
 */
function unshared(at: string, shown: string, copies: CopyBudget): void {
  const copy = `${at}.copy-${randomBytes(4).toString("hex")}`;
  try {
    const st = lstatSync(at);
    if (!st.isFile() || st.nlink < 2) return;
    const id = `${st.dev}:${st.ino}`;
    const before = copies.made.get(id);
    if (before !== undefined) linkSync(before, copy);
    else {
      if (st.size > copies.bytesLeft) return;
      copyFileSync(at, copy, constants.COPYFILE_EXCL);
      chmodSync(copy, st.mode & 0o7777);
      copies.bytesLeft -= st.size;
    }
    renameSync(copy, at);
    if (before === undefined) copies.made.set(id, shown);
  } catch {
    rmSync(copy, { force: true });
  }
}

/**
 * Folder `dir` (a real path) opened and held by a descriptor: `at` reaches it whatever happens to its path meanwhile.
 * @throws the file system's error opening it; an Error with code `ECHANGED` when what opened is not `dir` (a link on
 *   the way, or a folder moved there).
 */
function pinnedFolder(dir: string): { at: string; fd: number; close(): void } {
  const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  const at = `/proc/self/fd/${fd}`;
  let shown: string | null = null;
  try {
    shown = readlinkSync(at);
  } catch {
    // no /proc: by path
  }
  if (shown !== null && shown !== dir) {
    closeSync(fd);
    throw Object.assign(new Error(`${dir}: the folder changed during the check (it is now ${shown})`), { code: "ECHANGED" });
  }
  return { at: shown === null ? dir : at, fd, close: () => closeSync(fd) };
}

/**
 * Writes `content` to `path` atomically and durably: a temporary file beside it (`<path>.<pid>.<12 random hex>.tmp`,
 * made new — `O_EXCL`, so a link someone put at a name they guessed is never followed: hostile round 47b, a worker's
 * artifact written through a planted link would have rewritten the home's rules), fsync, rename over `path` (which
 * replaces a link there, never writes through it), fsync of the folder. A reader sees the old file or the new one,
 * never a part; a crash at any point leaves one of the two and a temporary file, which a starting hub removes for its
 * home's files (host/home-files.ts). `mode` is set on the new file whatever the umask.
 * @throws the file system's error (EISDIR, ENOSPC, EMFILE, …) after removing the temporary file; `path` is unchanged.
 */
export function writeFileDurable(path: string, content: string | Buffer, mode = 0o600): void {
  const tmp = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    const fd = openSync(tmp, "wx", mode);
    try {
      const buf = typeof content === "string" ? Buffer.from(content, "utf8") : content;
      for (let at = 0; at < buf.length; ) at += writeSync(fd, buf, at, buf.length - at);
      fchmodSync(fd, mode);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      // never made, or already renamed
    }
    throw e;
  }
  syncFolder(dirname(path));
}

/** Makes a rename in `dir` durable. Windows cannot open a folder for fsync; there the rename is left to the system. */
function syncFolder(dir: string): void {
  if (process.platform === "win32") return;
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Opens a regular file for reading; never blocks (a FIFO in its place would hold the hub's event loop until some
 * process writes to it).
 * @param lang the language of the error for a file that is not regular (the process's, from its environment, by default)
 * @throws the file system's error (ENOENT, EMFILE, …), or an Error naming `path` when it is not a regular file.
 */
export function openRegular(path: string, lang: Lang = langFromEnv(process.env)): number {
  const fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    if (!fstatSync(fd).isFile()) throw new Error(t(lang, "run.notRegular", { path }));
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  return fd;
}

/**
 * The first `max` bytes of the regular file `path` as UTF-8 text, or "" when it is missing, not a regular file (a FIFO
 * an agent put in its place is opened without waiting and not read: issue 26 round 18, F18-5 held the hub's thread
 * for good) or cannot be read. For the guard's looks at files an agent may have replaced.
 */
export function headOfRegular(path: string, max: number): string {
  let fd: number;
  try {
    fd = openRegular(path, "en");
  } catch {
    return "";
  }
  try {
    const buf = Buffer.alloc(max);
    return buf.subarray(0, readSync(fd, buf, 0, max, 0)).toString("utf8");
  } catch {
    return "";
  } finally {
    closeSync(fd);
  }
}

/** The text of a regular file (see `openRegular`). @throws as `openRegular`, or the read's error. */
export function readRegular(path: string, lang?: Lang): string {
  const fd = openRegular(path, lang);
  try {
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}
