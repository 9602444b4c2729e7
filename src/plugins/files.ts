/**
 * A plugin folder's files, for every kind (issue 27: one plugin model): their digest (issue 26 #4; DESIGN.md "One plugin model": the digest covers the plugin's
 * files, what runs, not only its manifest — trust follows the code). Every entry of the plugin's folder counts, at any
 * depth: a regular file by the sha256 of its bytes, a symlink by its target's text, a folder by being there, each kind
 * apart from the others (`folderStandIn`). The one
 * folder whose content does not count is a top-level `.git` that is a real folder (git's own store: a checkout's files
 * count, its history does not); nothing in it may run, so a link leading into it refuses the plugin, as the manifest's
 * check refuses an entry point naming it (issue 26 round 26, F26b-1: `.git/main.py` and `main.py -> .git/real.py` ran
 * changed code under "always allow"). A `.git` that is a link is checked as any link, a gitfile is a file. An entry
 * that is neither file, folder nor link (a FIFO, a socket, a device) refuses the plugin: it has no content to digest,
 * and whoever writes a FIFO writes what an interpreter reads from it (F26b-1 (d)). A
 * symlink must lead (followed to the end, with realpath) to something inside the folder, which is digested as itself;
 * one that leads out of the folder or nowhere refuses the plugin (issue 26 round 2 #6: what the digest covers is
 * exactly what can run — code outside the folder, which an agent may be able to write, would run under a trust that
 * never saw it; a dangling link may be made to lead anywhere later). We refuse rather than digest the target's content:
 * the target is outside what the owner installed and inspected, a sandboxed plugin sees only its folder (the link would
 * not resolve there), and a folder target would have to be walked without the folder's bounds. Bounded by `pluginFilesMax` entries,
 * `pluginFilesMaxBytes` bytes and `pluginFolderDepthMax` levels; past any of them, or a name with a control character,
 * the folder has no digest and the plugin is refused (fail closed: what cannot be digested cannot be trusted).
 * Reads files; runs nothing. Hashes are kept by inode, size and times, so a rescan hashes only what changed. The same
 * walk, with each file's stat standing for its bytes, is the watcher's fingerprint (`statsOnly`): nothing is read.
 */
import { createHash } from "node:crypto";
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readlinkSync, readSync, realpathSync, type Stats } from "node:fs";
import { realPathOr, within } from "../common/file-checks.js";
import { dirname, join, resolve } from "node:path";
import { t, type Lang } from "../i18n/messages.js";
import { fileHashCacheEntriesMax, pluginFilePathMaxChars, pluginFilesMax, pluginFilesMaxBytes, pluginFolderDepthMax } from "./limits.js";

/**
 * Reads at most `max + 1` bytes of a regular file (so a huge file is never read whole). Opened without waiting: a FIFO
 * or device put in the file's place after the caller's check would otherwise hold the event loop until written to.
 * @throws the file system's error, or one with code `ENOTREG` when what was opened is no regular file.
 */
export function readBounded(path: string, max: number): Buffer {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw Object.assign(new Error(`${path}: not a regular file`), { code: "ENOTREG" });
    // Sized by the file, one byte more to see it grew, doubled while it does, never past the bound: a buffer of the
    // bound itself zero-filled 16 MB for each small JSON file of a plugin's last good state.
    let buf = Buffer.alloc(Math.min(max + 1, st.size + 1));
    let n = 0;
    for (;;) {
      if (n === buf.length) {
        if (n > max) break;
        const bigger = Buffer.alloc(Math.min(max + 1, n * 2));
        buf.copy(bigger, 0, 0, n);
        buf = bigger;
      }
      const got = readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
    }
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

/** What stands for a regular file in a walk: the sha256 of its bytes (`FileHashCache`), or its stat (`statsOnly`). */
export interface FileHasher {
  hash(file: string, st: Stats): string;
}

/** A file's identity without reading it: device, inode, size and times (the watcher's fingerprint). */
export const statsOnly: FileHasher = { hash: (_file, st) => `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}` };

/** One entry of a plugin folder: its path inside the folder (`/`-separated) and the sha256 (hex) that stands for it. */
export interface FileHash {
  path: string;
  sha256: string;
}

/** The files of a plugin folder, sorted by path, or why they cannot be digested (`limit` names which, `path` where). */
export type FilesResult =
  | { ok: true; files: FileHash[] }
  | { ok: false; why: "files" | "bytes" | "depth" | "name" | "unreadable"; path: string; error?: string }
  | { ok: false; why: "link" | "linkIntoGit"; path: string; target: string }
  | { ok: false; why: "special"; path: string; kind: string }
  | { ok: false; why: "hardLink"; path: string; links: number };

/** Hashes of regular files by `dev:ino:size:mtime:ctime`, so that a rescan reads only files that changed. */
export class FileHashCache implements FileHasher {
  private hashes = new Map<string, string>();

  /** The sha256 (hex) of the regular file `file` whose lstat is `st`. @throws the file system's error. */
  hash(file: string, st: Stats): string {
    const key = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
    const known = this.hashes.get(key);
    if (known) return known;
    const h = createHash("sha256").update(readBounded(file, st.size)).digest("hex");
    if (this.hashes.size >= fileHashCacheEntriesMax) this.hashes.clear();
    this.hashes.set(key, h);
    return h;
  }
}

const controlChar = /[\u0000-\u001f\u007f]/;
/**
 * What stands for a folder. A file stands for the sha256 of its bytes (64 hex digits), a link for `link:` and the
 * sha256 of its text, a folder for this: no file's bytes can stand for a link or a folder (issue 26 round 28, F28b-1:
 * a file holding `link:<text>`, valid Python, had the same hash as the link it replaced, and ran with no card).
 */
const folderStandIn = "folder";

/** The kind of an entry that is neither file, folder nor link, as a person reads it. */
function kindOf(st: Stats): string {
  return st.isFIFO() ? "fifo" : st.isSocket() ? "socket" : st.isCharacterDevice() ? "char-device" : st.isBlockDevice() ? "block-device" : "other";
}

/** Lists and hashes the entries of plugin folder `dir` (see the module), each file by `cache`. Never throws. */
export function pluginFiles(dir: string, cache: FileHasher): FilesResult {
  let root: string;
  try {
    root = realpathSync.native(dir);
  } catch (e) {
    return { ok: false, why: "unreadable", path: ".", error: (e as NodeJS.ErrnoException).code ?? String(e) };
  }
  // git's store, whose content is not digested: a link may not lead into it (a `.git` that is a link is walked as one).
  const gitStore = join(root, ".git");
  const files: FileHash[] = [];
  let bytes = 0;
  const todo: { rel: string; depth: number }[] = [{ rel: "", depth: 0 }];
  /** Files with more than one name, by device and inode: the first name, its link count, and the names seen here. */
  const linked = new Map<string, { path: string; links: number; seen: number }>();
  while (todo.length > 0) {
    const { rel, depth } = todo.pop()!;
    let names: string[];
    try {
      names = readdirSync(rel === "" ? dir : join(dir, rel)).sort();
    } catch (e) {
      return { ok: false, why: "unreadable", path: rel || ".", error: (e as NodeJS.ErrnoException).code ?? String(e) };
    }
    for (const name of names) {
      const path = rel === "" ? name : `${rel}/${name}`;
      if (controlChar.test(name) || path.length > pluginFilePathMaxChars) return { ok: false, why: "name", path: JSON.stringify(path) };
      if (files.length >= pluginFilesMax) return { ok: false, why: "files", path };
      try {
        const full = join(dir, path);
        const st = lstatSync(full);
        let sha256: string;
        if (st.isFile()) {
          // A file with another name (a hard link) can be written through that name, wherever it is: an agent working
          // where the other name lies would change code the hub runs (issue 26 round 9b). The link text of a symlink
          // says where it leads; a hard link says nothing, so one is refused unless every name it has is in the
          // folder (npm's esbuild links its binary between two of its packages: round 45, F45a-4), counted below.
          if (st.nlink > 1) {
            const key = `${st.dev}:${st.ino}`;
            const known = linked.get(key) ?? { path, links: st.nlink, seen: 0 };
            known.seen += 1;
            linked.set(key, known);
          }
          bytes += st.size;
          if (bytes > pluginFilesMaxBytes) return { ok: false, why: "bytes", path };
          sha256 = cache.hash(full, st);
        } else if (st.isSymbolicLink()) {
          const text = readlinkSync(full);
          // Its text read as a path from its folder must stay in the plugin's folder (round 31, F31b-1: `main.py ->
          // ~/project/ln/real.py`, with `~/project/ln` a link back into the plugin, ended inside but passed through a
          // folder an agent writes, which swapped `ln` between the check and the start); each link met on the way is
          // an entry of the folder, checked so too. Then where the kernel leads it in the end (every link followed:
          // `s -> .`, `s/s/../../x` climbs out; round 30, F30b-1), or null when it leads nowhere.
          const written = resolve(dirname(join(root, path)), text);
          if (!within(written, root)) return { ok: false, why: "link", path, target: written };
          const target = realPathOr(full, null);
          if (target === null || !within(target, root)) {
            return { ok: false, why: "link", path, target: target ?? resolve(dirname(full), text) };
          }
          if (within(target, gitStore) && lstatSync(gitStore).isDirectory()) return { ok: false, why: "linkIntoGit", path, target };
          sha256 = `link:${createHash("sha256").update(text).digest("hex")}`;
        } else if (st.isDirectory()) {
          // git's store (a real folder at the top) is not the plugin's files: neither it nor its content counts.
          if (rel === "" && name === ".git") continue;
          sha256 = folderStandIn;
          if (depth + 1 > pluginFolderDepthMax) return { ok: false, why: "depth", path };
          todo.push({ rel: path, depth: depth + 1 });
        } else {
          return { ok: false, why: "special", path, kind: kindOf(st) };
        }
        files.push({ path, sha256 });
      } catch (e) {
        return { ok: false, why: "unreadable", path, error: (e as NodeJS.ErrnoException).code ?? String(e) };
      }
    }
  }
  for (const l of linked.values()) if (l.seen < l.links) return { ok: false, why: "hardLink", path: l.path, links: l.links };
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { ok: true, files };
}

/**
 * The digest of a plugin's files (sha256 hex over `<sha256> <path>` lines in path order), with the manifest's own line
 * standing for `manifestDigest` — the manifest in use, which is the last good one while the file on disk is broken.
 */
export function filesDigest(files: readonly FileHash[], manifestPath: string, manifestDigest: string): string {
  const h = createHash("sha256");
  for (const f of files) h.update(`${f.path === manifestPath ? manifestDigest : f.sha256} ${f.path}\n`);
  return h.digest("hex");
}

/** The files as a call body lists them: `<first 16 hex of sha256, or the stand-in> <path>` (the manifest standing for the one in use). */
export function filesListed(files: readonly FileHash[], manifestPath: string, manifestDigest: string): string[] {
  return files.map((f) => `${(f.path === manifestPath ? manifestDigest : f.sha256).slice(0, 16).padEnd(16)} ${f.path}`);
}

/** Why a plugin folder's files cannot be digested, as a person reads it (the plugin is refused until it is fixed). */
export function filesProblem(r: Extract<FilesResult, { ok: false }>, lang: Lang): string {
  switch (r.why) {
    case "files": return t(lang, "tools.files.tooMany", { limit: pluginFilesMax, path: r.path });
    case "bytes": return t(lang, "tools.files.tooLarge", { limit: pluginFilesMaxBytes, path: r.path });
    case "depth": return t(lang, "tools.files.tooDeep", { limit: pluginFolderDepthMax, path: r.path });
    case "name": return t(lang, "tools.files.name", { path: r.path, limit: pluginFilePathMaxChars });
    case "link": return t(lang, "tools.files.linkOut", { path: r.path, target: r.target });
    case "linkIntoGit": return t(lang, "tools.files.linkIntoGit", { path: r.path, target: r.target });
    case "special": return t(lang, "tools.files.special", { path: r.path, kind: r.kind });
    case "hardLink": return t(lang, "tools.files.hardLink", { path: r.path, links: r.links });
    default: return t(lang, "tools.files.unreadable", { path: r.path, error: r.error ?? "" });
  }
}

/** The digest of a plugin's files with none standing for another (sha256 hex over `<sha256> <path>` lines). */
export function plainDigest(files: readonly FileHash[]): string {
  const h = createHash("sha256");
  for (const f of files) h.update(`${f.sha256} ${f.path}\n`);
  return h.digest("hex");
}
