/**
 * Files the sandbox keeps read-only that have another name (issue 26 round 35, F35a-2). A read-only bind protects a
 * path, not the file: a hard link made while the file was still writable — the agent's `.mcp.json` and a second name
 * `docs-cache.json` beside it, moved aside by the check and moved back by the owner; a script the owner later named in
 * a hook — stays writable in the folder the agent writes, and changes the file behind the guard. No link can be made
 * to a read-only bind from the sandbox (another mount: EXDEV), so a file with one name stays one while guarded.
 */
import { opendirSync, type Stats } from "node:fs";
import { join, sep } from "node:path";
import { lstatOr } from "../common/file-checks.js";

/** Entries looked at at most below the read-only folders of one launch; past them the launch is refused (`cut`). */
export const hardLinkEntriesMax = 20_000;

/** What `hardLinked` found: a file with more than one name (`links`, its st_nlink), or the folder it stopped in. */
export type HardLinkFinding = { file: string; links: number } | { cut: string };

/**
 * The first regular file among `paths`, or in the folders among them at any depth (not through links), that has more
 * than one name, or null — not one in a `node_modules` (pnpm links every package file from its store; a hook runner's
 * tools there). The single files are looked at first, then the folders, `hardLinkEntriesMax` entries at most: past
 * them `{ cut }` names the folder it stopped in (the review of round 35, HL-3: the rest was not looked at, and the
 * launch went ahead). Never throws: a path that cannot be looked at is skipped.
 */
export function hardLinked(paths: readonly string[]): HardLinkFinding | null {
  let left = hardLinkEntriesMax;
  const look = (path: string, st: Stats | null): HardLinkFinding | null => {
    if (st === null) return null;
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
      for (let e = dir.readSync(); e !== null; e = dir.readSync()) {
        // Every entry counts (the round-37 review, HL-6: a folder of links or FIFOs was read to its end); a
        // `node_modules` is not entered, its files being exempt (HL-3b: its entries used the bound up).
        if (left-- <= 0) return { cut: path };
        if (!e.isFile() && !e.isDirectory()) continue;
        if (e.isDirectory() && e.name === "node_modules") continue;
        const found = look(join(path, e.name), lstatOr(join(path, e.name)));
        if (found) return found;
      }
    } catch {
      // a folder that changed meanwhile: what was read counts
    } finally {
      dir.closeSync();
    }
    return null;
  };
  const stats = paths.map((p) => [p, lstatOr(p)] as const);
  for (const [p, st] of [...stats.filter(([, st]) => st?.isFile()), ...stats.filter(([, st]) => st?.isDirectory())]) {
    const found = look(p, st);
    if (found) return found;
  }
  return null;
}

