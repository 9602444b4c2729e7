/**
 * Files the sandbox keeps read-only that have another name (issue 26 round 35, F35a-2). A read-only bind protects a
 * path, not the file: a hard link made while the file was still writable — the agent's `.mcp.json` and a second name
 * `docs-cache.json` beside it, moved aside by the check and moved back by the owner; a script the owner later named in
 * a hook — stays writable in the folder the agent writes, and changes the file behind the guard. No link can be made
 * to a read-only bind from the sandbox (another mount: EXDEV), so a file with one name stays one while guarded.
 */
import { lstatSync, opendirSync } from "node:fs";
import { join, sep } from "node:path";

/** Entries looked at at most below the read-only folders of one launch; past them the rest is not looked at. */
export const hardLinkEntriesMax = 20_000;

/**
 * The first regular file among `paths`, or in the folders among them at any depth (not through links; at most
 * `hardLinkEntriesMax` entries), that has more than one name (`links`, its st_nlink), or null — not one in a
 * `node_modules` (pnpm links every package file from its store; a hook runner's tools there). Never throws: a path
 * that cannot be looked at is skipped.
 */
export function hardLinked(paths: readonly string[]): { file: string; links: number } | null {
  let left = hardLinkEntriesMax;
  const look = (path: string): { file: string; links: number } | null => {
    let st;
    try {
      st = lstatSync(path);
    } catch {
      return null;
    }
    // pnpm installs every package file as a hard link of its store: one in a `node_modules` is not a run's doing.
    if (st.isFile()) return st.nlink > 1 && !path.split(sep).includes("node_modules") ? { file: path, links: st.nlink } : null;
    if (!st.isDirectory()) return null;
    let dir;
    try {
      dir = opendirSync(path);
    } catch {
      return null;
    }
    try {
      for (let e = dir.readSync(); e !== null && left > 0; e = dir.readSync()) {
        left -= 1;
        if (!e.isFile() && !e.isDirectory()) continue;
        const found = look(join(path, e.name));
        if (found) return found;
      }
    } catch {
      // a folder that changed meanwhile: what was read counts
    } finally {
      dir.closeSync();
    }
    return null;
  };
  for (const p of paths) {
    const found = look(p);
    if (found) return found;
  }
  return null;
}
