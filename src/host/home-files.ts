/**
 * The files and folders of a home that the hub or the CLI writes when it starts (hardening of issue 14): a folder
 * where a file belongs (or the other way round), a file that cannot be written for lack of permission or space, is
 * said in one sentence naming the file, what is wrong and what to do — never as a bare `EISDIR … rename '….tmp'`.
 */
import { readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { t, type Lang } from "../i18n/messages.js";
import type { Home } from "./home.js";
import { processAlive } from "./lock.js";

/** The home's own files, written or locked at start (`hub.db-wal` and `-shm` are SQLite's, beside the database). */
export function homeFiles(home: Home): string[] {
  return [home.config, home.rules, home.secrets, home.masterKey, home.database, `${home.database}-wal`, `${home.database}-shm`,
    join(home.dir, "home.id"), join(home.dir, "hub.pid"), join(home.dir, "hub.json")];
}

/**
 * Checks that none of the home's files is a folder and none of its folders (`plugins`, `worker`) a file.
 * @throws Error saying which and what to do.
 */
export function checkHomeFiles(home: Home, lang: Lang): void {
  const isDir = (p: string) => {
    try {
      return statSync(p).isDirectory();
    } catch {
      return null; // not there (yet): made when needed
    }
  };
  for (const f of homeFiles(home)) if (isDir(f) === true) throw new Error(t(lang, "home.notFile", { file: f }));
  for (const d of [home.plugins, home.worker]) if (isDir(d) === false) throw new Error(t(lang, "home.notFolder", { file: d }));
}

/** The temporary names the home's files are written under before their rename (`<file>.<pid>[.<hex>].tmp`). */
const temporarySuffix = /\.\d+(\.[0-9a-f]+)?\.tmp$/;

/**
 * Removes the temporary files a write left at the home's top when its process died before the rename (a killed
 * `plugins set` left `secrets.env.<pid>.tmp`, holding every secret, for good: issue 26 round 37), those of a process
 * that is gone; called by a starting hub holding the home's lock. Never throws: what cannot be removed stays.
 * @returns the files removed.
 */
export function removeStaleTemporaries(home: Home): string[] {
  const removed: string[] = [];
  let names: string[] = [];
  try {
    names = readdirSync(home.dir);
  } catch {
    return removed;
  }
  for (const name of names) {
    const m = /\.(\d+)(\.[0-9a-f]+)?\.tmp$/.exec(name);
    if (!m || processAlive(Number(m[1]), null)) continue;
    try {
      rmSync(join(home.dir, name), { force: true });
      removed.push(join(home.dir, name));
    } catch {
      // left: another user's file, or a folder
    }
  }
  return removed;
}

/**
 * A file system error said in a sentence (the file, what is wrong, what to do), or null for other errors. The file
 * named is the one meant: a rename's target, and a temporary file's real name.
 */
export function fileErrorMessage(e: unknown, lang: Lang): string | null {
  const err = e as NodeJS.ErrnoException & { dest?: string };
  if (typeof err?.code !== "string" || typeof err.path !== "string") return null;
  const file = (err.code === "EISDIR" && err.dest ? err.dest : err.path).replace(temporarySuffix, "");
  switch (err.code) {
    case "EISDIR": return t(lang, "home.notFile", { file });
    case "ENOTDIR": return t(lang, "file.pathNotFolder", { file });
    case "EACCES": case "EPERM": return t(lang, "file.denied", { file });
    case "EROFS": return t(lang, "file.readOnly", { file });
    case "ENOSPC": case "EDQUOT": return t(lang, "file.full", { file });
    case "ENOENT": return t(lang, "file.missing", { file });
    // mkdir (recursive too) where a file, not a folder, already is: the only EEXIST a folder's making gives.
    case "EEXIST": return err.syscall === "mkdir" ? t(lang, "file.notFolder", { file }) : null;
    default: return null;
  }
}
