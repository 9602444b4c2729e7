/**
 * How `add` copies a local plugin folder: exactly what it listed (issue 26, round 10, High 1). The folder is often an
 * agent's project, which the agent may change while `add` works: between the listing (which checks that it holds only
 * files, folders and links, within the limits) and the copy, a parent folder swapped for a link to the hub's home, or a
 * file for a link to `master.key`, would otherwise put the home's secrets into the installed plugin.
 *
 * So every entry is reached from the folder it was listed in, never by its path again: on Linux each folder is opened
 * once (without following a link) and its entries are named through that descriptor (`/proc/self/fd/<n>/<name>`), so
 * no link swapped into a parent is ever followed; a file is opened without following a link and without waiting (a
 * FIFO), and copied from that descriptor only when it is a regular file with the device, inode and size the listing
 * saw; a folder only when it is the listed folder. Anything else refuses the whole add, naming what changed.
 * Elsewhere (no /proc) entries are reached by path, with the same checks of what was opened: there agents run
 * unsandboxed (the sandbox is Linux's bubblewrap) and can read the home anyway.
 */
import {
  closeSync, constants, fchmodSync, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readlinkSync, readSync, statSync, symlinkSync,
  writeSync, type BigIntStats,
} from "node:fs";
import { join } from "node:path";
import { t, type Lang, type PlainId } from "../i18n/messages.js";
import { CliError } from "./connect.js";

/** A local folder `add` copies holds at most this many entries (files, folders and links; without .git). */
export const addFolderEntriesMax = 10_000;
/** … and at most this many bytes of files (100 MiB). */
export const addFolderBytesMax = 100 * 1024 * 1024;
/**
 * Folders `add` leaves out of a copy, at any depth: version control. Not `node_modules`: the packages a plugin brings
 * along are part of it (hostile round 43, F43b-2: left out, they were looked for above the home, where an agent had
 * put its own).
 */
const notCopied = new Set([".git"]);
/** How much of a file is read at a time while copying (1 MiB). */
const copyChunkBytes = 1024 * 1024;

/** What the listing saw of an entry: enough to know it again (device and inode; a file's size too). */
interface Seen { dev: bigint; ino: bigint; size: bigint }
/** One listed entry: its path inside the folder, what it is, its permission bits and identity. */
type Entry = { path: string; kind: "folder" | "file" | "link"; mode: number } & Seen;
/** A folder's listing: the folder named, its own identity, and its entries in an order that makes each folder first. */
export interface Listing { root: string; seen: Seen; entries: Entry[] }

/** A folder being read: its path (for messages and where there is no /proc), and its descriptor on Linux. */
interface Dir { path: string; fd: number | null }

const byDescriptor = process.platform === "linux";
const noFollow = constants.O_NOFOLLOW ?? 0;
const fileFlags = constants.O_RDONLY | noFollow | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);
const dirFlags = constants.O_RDONLY | noFollow | (constants.O_DIRECTORY ?? 0);

/** How `name` inside `dir` is reached: through the folder's descriptor where there is one. */
function at(dir: Dir, name: string): string {
  return dir.fd === null ? join(dir.path, name) : `/proc/self/fd/${dir.fd}/${name}`;
}

/** Opens folder `name` of `parent` (or, with `name` null, the folder `parent.path` itself, as named) and its stat. */
function openDir(parent: Dir, name: string | null): { dir: Dir; st: BigIntStats } {
  const path = name === null ? parent.path : join(parent.path, name);
  if (!byDescriptor) return { dir: { path, fd: null }, st: name === null ? statSync(path, { bigint: true }) : lstatSync(path, { bigint: true }) };
  const fd = openSync(name === null ? path : at(parent, name), name === null ? constants.O_RDONLY | constants.O_DIRECTORY : dirFlags);
  try {
    return { dir: { path, fd }, st: fstatSync(fd, { bigint: true }) };
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/** Closes a folder `openDir` opened (nothing to close where folders are reached by path). */
function closeDir(dir: Dir): void {
  if (dir.fd !== null) closeSync(dir.fd);
}

/**
 * What a copy of `root` holds, in an order that creates each folder before its contents: files, folders and links
 * only, within the limits. @throws CliError before anything is written.
 */
export function listFolder(root: string, lang: Lang): Listing {
  const entries: Entry[] = [];
  let bytes = 0;
  const walk = (dir: Dir, rel: string) => {
    for (const name of readdirSync(dir.fd === null ? dir.path : `/proc/self/fd/${dir.fd}`).sort()) {
      if (notCopied.has(name)) continue;
      const path = join(rel, name);
      const st = lstatSync(at(dir, name), { bigint: true });
      const kind = st.isDirectory() ? "folder" : st.isFile() ? "file" : st.isSymbolicLink() ? "link" : null;
      if (!kind) throw new CliError(t(lang, "add.notFile", { file: join(root, path) }));
      if (kind === "file") bytes += Number(st.size);
      entries.push({ path, kind, mode: Number(st.mode) & 0o777, dev: st.dev, ino: st.ino, size: st.size });
      if (entries.length > addFolderEntriesMax || bytes > addFolderBytesMax) {
        throw new CliError(t(lang, "add.tooLarge", { dir: root, entries: addFolderEntriesMax, mib: addFolderBytesMax / 1024 / 1024 }));
      }
      if (kind !== "folder") continue;
      // Opened as the folder just seen (a link swapped in since is not followed), and walked through that descriptor.
      let sub;
      try {
        sub = openDir(dir, name);
      } catch {
        throw changeOf(join(root, path), at(dir, name), lang);
      }
      try {
        if (!same(sub.st, st, false)) throw changedError(join(root, path), "add.changed.other", lang);
        walk(sub.dir, path);
      } finally {
        closeDir(sub.dir);
      }
    }
  };
  const top = openDir({ path: root, fd: null }, null);
  try {
    walk(top.dir, "");
  } finally {
    closeDir(top.dir);
  }
  return { root, seen: { dev: top.st.dev, ino: top.st.ino, size: top.st.size }, entries };
}

/** Whether the opened `st` is the entry the listing saw (a file: also of the same size). */
function same(st: BigIntStats, seen: Seen, sized: boolean): boolean {
  return st.dev === seen.dev && st.ino === seen.ino && (!sized || st.size === seen.size);
}

/** The error for an entry that is not what was listed; `what` says how. */
function changedError(file: string, what: PlainId, lang: Lang): CliError {
  return new CliError(t(lang, "add.changed", { file, what: t(lang, what) }));
}

/** Why `at` (reached as `file`) is not the listed entry, by what is there now (after `open` failed or did not match). */
function changeOf(file: string, path: string, lang: Lang, sized = false): CliError {
  let now: BigIntStats | undefined;
  try {
    now = lstatSync(path, { bigint: true });
  } catch {
    return changedError(file, "add.changed.gone", lang);
  }
  return changedError(file, now.isSymbolicLink() ? "add.changed.link" : sized ? "add.changed.size" : "add.changed.other", lang);
}

/**
 * Copies listing `l` into the new folder `into` (the caller renames it into place, or removes it when this throws).
 * Links are copied as links, as git would. @throws CliError naming the entry that is not what was listed, or why the
 * copy failed.
 */
export function copyListing(l: Listing, into: string, lang: Lang): void {
  const children = new Map<string, Entry[]>();
  for (const e of l.entries) {
    const parent = e.path.includes("/") ? e.path.slice(0, e.path.lastIndexOf("/")) : "";
    const list = children.get(parent);
    if (list) list.push(e);
    else children.set(parent, [e]);
  }
  const copy = (dir: Dir, rel: string) => {
    for (const e of children.get(rel) ?? []) {
      const name = e.path.slice(rel === "" ? 0 : rel.length + 1);
      const file = join(l.root, e.path);
      const to = join(into, e.path);
      if (e.kind === "folder") {
        let sub;
        try {
          sub = openDir(dir, name);
        } catch {
          throw changeOf(file, at(dir, name), lang);
        }
        try {
          if (!sub.st.isDirectory() || !same(sub.st, e, false)) throw changeOf(file, at(dir, name), lang);
          mkdirSync(to, { mode: e.mode | 0o700 });
          copy(sub.dir, e.path);
        } finally {
          closeDir(sub.dir);
        }
      } else if (e.kind === "link") {
        let st: BigIntStats | null = null;
        try {
          st = lstatSync(at(dir, name), { bigint: true });
        } catch {
          // gone: said below
        }
        if (!st?.isSymbolicLink() || !same(st, e, false)) throw changeOf(file, at(dir, name), lang);
        symlinkSync(readlinkSync(at(dir, name)), to);
      } else copyFile(at(dir, name), e, file, to, lang);
    }
  };
  let top;
  try {
    top = openDir({ path: l.root, fd: null }, null);
  } catch {
    throw changedError(l.root, "add.changed.gone", lang);
  }
  try {
    if (!same(top.st, l.seen, false)) throw changedError(l.root, "add.changed.other", lang);
    mkdirSync(into, { mode: 0o755 });
    copy(top.dir, "");
  } finally {
    closeDir(top.dir);
  }
}

/** Copies the listed regular file `e` (reached as `path`, named `file`) to the new file `to`, from one descriptor. */
function copyFile(path: string, e: Entry, file: string, to: string, lang: Lang): void {
  let fd: number;
  try {
    fd = openSync(path, fileFlags);
  } catch {
    throw changeOf(file, path, lang);
  }
  try {
    const st = fstatSync(fd, { bigint: true });
    if (!st.isFile() || !same(st, e, false)) throw changeOf(file, path, lang);
    if (st.size !== e.size) throw changedError(file, "add.changed.size", lang);
    const out = openSync(to, "wx", 0o600);
    try {
      const buf = Buffer.allocUnsafe(Math.min(copyChunkBytes, Number(e.size) + 1));
      let left = Number(e.size);
      for (;;) {
        // One byte past the listed size is asked for at the end: a file that grew since is refused, not cut.
        const got = readSync(fd, buf, 0, Math.min(buf.length, left + 1), null);
        if (got === 0) break;
        if (got > left) throw changedError(file, "add.changed.size", lang);
        writeSync(out, buf, 0, got);
        left -= got;
      }
      if (left !== 0) throw changedError(file, "add.changed.size", lang);
      fchmodSync(out, e.mode | 0o600);
    } finally {
      closeSync(out);
    }
  } finally {
    closeSync(fd);
  }
}
