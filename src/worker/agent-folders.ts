/**
 * The folders this worker's sandboxed launches let agents write, kept in its home (issue 26 round 26, F26a-3, F26a-4:
 * another rule's agent, writing the folder above a rule's cwd, replaced that cwd with a link — to `/run/user/<uid>`,
 * to another project's `.git` — and the next launch bound wherever it led). A link that lies inside one of these
 * folders may be an agent's: a folder a rule names (cwd, `writable`, `readable`) is never reached through one.
 */
import { lstatSync, mkdirSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { readRegular, writeFileDurable } from "./files.js";
import { isInside, realPath } from "./sandbox.js";

/** The most folders kept, the newest (older ones drop out first). */
export const agentFoldersMax = 1_000;

/** The file of the worker of home `homeDir` that keeps them (JSON: an array of real paths, oldest first). */
export function agentFoldersFile(homeDir: string): string {
  return join(homeDir, "worker", "agent-folders.json");
}

/** The folders kept for the worker of home `homeDir`; none when the file is missing or not such an array. */
export function readAgentFolders(homeDir: string): string[] {
  try {
    const v: unknown = JSON.parse(readRegular(agentFoldersFile(homeDir)));
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string" && x.startsWith("/")).slice(-agentFoldersMax) : [];
  } catch {
    return [];
  }
}

/**
 * Adds `folders` (real paths) to those kept, the newest last, at most `agentFoldersMax`.
 * @returns the folders kept now (what `readAgentFolders` would read back).
 * @throws the file system's error when the file cannot be written (the launch then does not start: never unrecorded).
 */
export function recordAgentFolders(homeDir: string, folders: readonly string[]): string[] {
  const before = readAgentFolders(homeDir);
  if (folders.every((f) => before.includes(f))) return before; // nothing new: no write at every launch
  const next = [...before.filter((f) => !folders.includes(f)), ...new Set(folders)].slice(-agentFoldersMax);
  mkdirSync(dirname(agentFoldersFile(homeDir)), { recursive: true, mode: 0o700 });
  writeFileDurable(agentFoldersFile(homeDir), JSON.stringify(next));
  return next;
}

/**
 * The first link on the way to `path` whose own folder lies inside one of `folders` (so an agent may have made it),
 * with that folder; null when the way crosses none (a missing part ends the walk).
 */
export function linkInAgentFolder(path: string, folders: readonly string[]): { link: string; folder: string } | null {
  let at: string = sep;
  for (const part of resolve(path).split(sep).filter(Boolean)) {
    const next = join(at, part);
    let link: boolean;
    try {
      link = lstatSync(next).isSymbolicLink();
    } catch {
      return null;
    }
    if (link) {
      const folder = folders.find((f) => isInside(at, f));
      if (folder) return { link: next, folder };
      at = realPath(next);
    } else at = next;
  }
  return null;
}

/**
 * The first of `folders` the way to `path` enters (the path as written, or where a link on the way leads), or null.
 * Once inside, what follows is an agent's to change at any moment, so nothing after that point is looked at: the
 * answer depends only on links outside those folders (issue 26 round 26, F26a-1).
 */
export function wayEntersAgentFolder(path: string, folders: readonly string[]): string | null {
  let at: string = sep;
  for (const part of resolve(path).split(sep).filter(Boolean)) {
    const next = join(at, part);
    const entered = folders.find((f) => isInside(next, f));
    if (entered) return entered;
    try {
      at = lstatSync(next).isSymbolicLink() ? realPath(next) : next;
    } catch {
      return null;
    }
    const led = folders.find((f) => isInside(at, f));
    if (led) return led;
  }
  return null;
}

/** Whether the real path `real` is a git folder or lies inside one (a `.git` on its way). */
export function inGitFolder(real: string): boolean {
  return real.split(sep).includes(".git");
}
