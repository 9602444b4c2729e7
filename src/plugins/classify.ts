/**
 * What a plugin folder is, by what it holds (issue 27, point 1; DESIGN.md "Plugin hosts"): `agent.ts | channel.ts |
 * source.ts` (code plugins, also `.js` and `.mjs`), `manifest.toml | plugin-manifest.toml` (a tool plugin),
 * `plugin.json` (a declarative plugin). One table, one scan of the roots for every kind; nothing is read or run.
 */
import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { present, realPathOr, within } from "../common/file-checks.js";
import { t, type Lang } from "../i18n/messages.js";
import { pluginFoldersMax } from "./limits.js";
import { moduleLookupFolder } from "./names.js";
import { pluginKinds, type CodeKind, type PluginKind, type PluginRoot, type ScannedFolder } from "./types.js";

/** The files that make a folder a plugin of a kind, in the order a kind's loader prefers them. */
export const entryFiles: Readonly<Record<PluginKind, readonly string[]>> = {
  declarative: ["plugin.json"],
  tool: ["manifest.toml", "plugin-manifest.toml"],
  agent: ["agent.ts", "agent.js", "agent.mjs"],
  channel: ["channel.ts", "channel.js", "channel.mjs"],
  source: ["source.ts", "source.js", "source.mjs"],
};

/** The file names of a code plugin of `kind`, in the order they are preferred. */
export function codeEntryFiles(kind: CodeKind): readonly string[] {
  return entryFiles[kind];
}

/**
 * The kinds folder `dir` is, in `pluginKinds` order. An entry file that is there but is no regular file (a FIFO, a
 * folder, a dangling link) counts: its loader refuses it with why, instead of the folder being passed over in silence.
 */
export function classify(dir: string): PluginKind[] {
  return pluginKinds.filter((kind) => entryFiles[kind].some((f) => present(join(dir, f))));
}

/** What one scan found: the plugin folders of every root in root order, and notes on roots too full to read whole. */
export interface Scan {
  folders: ScannedFolder[];
  notes: string[];
}

/**
 * Scans `roots` in order: each folder (dot names left out, sorted, at most `pluginFoldersMax` a root) that holds an
 * entry file of some kind. A root that does not exist holds none. A folder entry that is a symbolic link leading out
 * of its root (or nowhere) is left out with a note (`plugins.linkOutOfRoot`), for every kind (issue 26 round 9: the
 * owner linked a plugin folder from a project; an agent working in that project rewrote the plugin's code, which the
 * hub then ran as itself — what the hub runs must lie inside a root, which sandboxes keep read-only or hide). Links
 * inside a plugin's folder follow the same rule (files.ts). Never throws.
 */
export function scanRoots(roots: readonly PluginRoot[], lang: Lang): Scan {
  const folders: ScannedFolder[] = [];
  const notes: string[] = [];
  roots.forEach((root, rootIndex) => {
    let names = folderNames(root.dir);
    if (names.length > pluginFoldersMax) {
      notes.push(t(lang, "tools.tooManyFolders", { root: root.dir, limit: pluginFoldersMax }));
      names = names.slice(0, pluginFoldersMax);
    }
    for (const name of names) {
      const dir = join(root.dir, name);
      if (moduleLookupFolder(name)) {
        if (classify(dir).length > 0) notes.push(t(lang, "plugins.moduleLookupFolder", { folder: dir }));
        continue;
      }
      const outside = linkOutOf(root.dir, dir);
      if (outside !== null) {
        if (classify(dir).length > 0) notes.push(t(lang, "plugins.linkOutOfRoot", { folder: dir, target: outside, root: root.dir }));
        continue;
      }
      const kinds = classify(dir);
      if (kinds.length > 0) folders.push({ dir, name, origin: root.origin, rootIndex, kinds });
    }
  });
  return { folders, notes };
}

/** The names in a folder, dot names left out, sorted; none when it cannot be read. */
export function folderNames(dir: string): string[] {
  try {
    return readdirSync(dir).filter((n) => !n.startsWith(".")).sort();
  } catch {
    return [];
  }
}

/**
 * Where entry `path` of folder `root` leads when it is a symbolic link leading out of `root` (its real path; or its
 * link text when it leads nowhere), else null (no link, or one that stays inside).
 */
function linkOutOf(root: string, path: string): string | null {
  try {
    if (!lstatSync(path).isSymbolicLink()) return null;
  } catch {
    return null;
  }
  const real = realPathOr(path, null);
  if (real === null) return path; // a dangling link may be made to lead anywhere later
  const base = realPathOr(root, null);
  // The root itself counts as out: a plugin folder is a folder inside its root.
  return base === null || real === base || !within(real, base) ? real : null;
}

/** Whether a folder entry is there at all (common/file-checks.ts; named here too for the plugin hosts that ask it). */
export { present };
