/**
 * Discovery of tool plugins (spec tool-plugins.md §2, §9): `<root>/<folder>/manifest.toml` (or the public
 * implementation's `plugin-manifest.toml`) under each root, built-in first, then `<home>/plugins`, which wins a clash.
 * Discovery only reads files: no plugin code runs and no `tools/list` is asked. A broken manifest rejects that folder
 * only; a folder that had a good manifest keeps using it until the file is fixed. `rescan()` reads everything again.
 */
import { lstatSync, readdirSync } from "node:fs";
import { basename, join } from "node:path";
import { t, type Lang } from "../i18n/messages.js";
import { engineDir } from "../common/paths.js";
import { formatProblem, manifestFileNames, readManifest, type ManifestResult } from "./manifest.js";
import { manifestMaxBytes, pluginFilePathMaxChars, pluginFilesMax, pluginFilesMaxBytes, pluginFolderDepthMax, pluginFoldersMax } from "./limits.js";
import { FileHashCache, filesDigest, filesListed, pluginFiles, readBounded, type FilesResult } from "./files-digest.js";

/** Reading a file with a bound lives in files-digest.ts (a leaf of this folder); re-exported for the tool host's other readers. */
export { readBounded };
import type { Manifest, PluginClash, PluginOrigin, PluginRecord, PluginRoot, RescanReport } from "./types.js";

/**
 * The roots of a home's tool plugins (DESIGN.md "Plugin hosts"): the engine's built-in `plugins/`, then the home's
 * `plugins/` folder `pluginsDir`, which wins a name clash. Folders without a manifest (agent, channel and source
 * plugins) are not tool plugins and are passed over.
 */
export function homeToolRoots(pluginsDir: string): PluginRoot[] {
  return [{ dir: join(engineDir, "plugins"), origin: "builtin" }, { dir: pluginsDir, origin: "home" }];
}

/** What is known of one plugin folder between rescans. */
interface Folder {
  dir: string;
  origin: PluginOrigin;
  rootIndex: number;
  manifestPath: string;
  /** Digest of the bytes last read (even when they were invalid), to skip re-validating an unchanged file. */
  digest: string | null;
  /** Whether both manifest file names were present at the last read. */
  both: boolean;
  errors: string[];
  current: Manifest | null;
  lastGood: { manifest: Manifest; digest: string } | null;
  /** The folder's files at the last rescan (issue 26 #4), or why they cannot be digested (the plugin is refused). */
  files: FilesResult | null;
}

/** The registry of tool plugins found under `roots`. Listeners hear of every rescan that changed something. */
export class ToolRegistry {
  private folders = new Map<string, Folder>();
  private active = new Map<string, PluginRecord>();
  private all: PluginRecord[] = [];
  private clashes: PluginClash[] = [];
  private notes: string[] = [];
  private listeners = new Set<(r: RescanReport) => void>();
  private fileHashes = new FileHashCache();

  /** @param roots searched in order; a later root wins a name clash over an earlier one (built-in, then home). */
  constructor(readonly roots: PluginRoot[], readonly lang: Lang) {}

  /** Every plugin folder found, with its status, sorted by name then folder. */
  list(): PluginRecord[] {
    return [...this.all];
  }

  /** The plugin in use under `name` (its status `ok`, or `rejected` while it runs its last good manifest), or null. */
  get(name: string): PluginRecord | null {
    return this.active.get(name) ?? null;
  }

  /** The clashes of the last rescan, and notes about roots (too many folders). */
  problems(): { clashes: PluginClash[]; notes: string[] } {
    return { clashes: [...this.clashes], notes: [...this.notes] };
  }

  /** Calls `fn` after each rescan that added, changed, removed or rejected a plugin. @returns an unsubscribe function. */
  onChange(fn: (r: RescanReport) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Reads every root again. Never throws: unreadable roots are skipped, unreadable folders are rejected. */
  rescan(): RescanReport {
    const before = new Map([...this.active].map(([n, r]) => [n, r.digest]));
    const seen = new Set<string>();
    const rejected: string[] = [];
    this.notes = [];
    this.roots.forEach((root, rootIndex) => {
      for (const entry of this.folderNames(root)) {
        const dir = join(root.dir, entry);
        // A manifest name that is there but is no regular file (a FIFO, a folder, a dangling symlink) is found too:
        // reading it fails and the folder is listed as rejected with why, instead of being skipped in silence.
        const found = manifestFileNames.filter((f) => present(join(dir, f)));
        if (found.length === 0) continue;
        seen.add(dir);
        const folder = this.folders.get(dir) ?? { dir, origin: root.origin, rootIndex, manifestPath: join(dir, found[0]!), digest: null, both: false, errors: [], current: null, lastGood: null, files: null };
        folder.manifestPath = join(dir, found[0]!);
        this.folders.set(dir, folder);
        const newlyInvalid = this.read(folder, found.length > 1);
        // Every rescan: a changed file of the plugin (not only its manifest) changes its digest (issue 26 #4).
        const wasDigested = folder.files?.ok ?? true;
        folder.files = pluginFiles(dir, this.fileHashes);
        if (newlyInvalid || (wasDigested && !folder.files.ok)) rejected.push(nameOf(folder));
      }
    });
    for (const dir of [...this.folders.keys()]) if (!seen.has(dir)) this.folders.delete(dir);
    this.resolve();
    const report: RescanReport = {
      added: [...this.active.keys()].filter((n) => !before.has(n)),
      changed: [...this.active].filter(([n, r]) => before.has(n) && before.get(n) !== r.digest).map(([n]) => n),
      removed: [...before.keys()].filter((n) => !this.active.has(n)),
      rejected,
      clashes: [...this.clashes],
    };
    if (report.added.length + report.changed.length + report.removed.length + report.rejected.length > 0) {
      for (const fn of this.listeners) fn(report);
    }
    return report;
  }

  /** Sorted folder names of a root (at most `pluginFoldersMax`); a missing root has none. */
  private folderNames(root: PluginRoot): string[] {
    let names: string[];
    try {
      names = readdirSync(root.dir).filter((n) => !n.startsWith(".")).sort();
    } catch {
      return [];
    }
    if (names.length > pluginFoldersMax) {
      this.notes.push(t(this.lang, "tools.tooManyFolders", { root: root.dir, limit: pluginFoldersMax }));
      names = names.slice(0, pluginFoldersMax);
    }
    return names;
  }

  /** Reads a folder's manifest; @returns true when it was newly found invalid. */
  private read(folder: Folder, both: boolean): boolean {
    let result: ManifestResult;
    try {
      result = readManifest(readBounded(folder.manifestPath, manifestMaxBytes), this.lang);
    } catch (e) {
      const error = (e as NodeJS.ErrnoException).code ?? String(e);
      // The digest of an unreadable file stands for its error, so the same error is not reported again each rescan.
      result = { ok: false, digest: `unreadable:${error}`, problems: [{ key: "", line: null, message: t(this.lang, "tools.manifest.read", { error }) }] };
    }
    const changed = result.digest !== folder.digest || both !== folder.both;
    if (!changed) return false;
    folder.digest = result.digest;
    folder.both = both;
    if (both) {
      folder.current = null;
      folder.errors = [`${folder.dir}: ${t(this.lang, "tools.manifest.bothFiles")}`];
      return true;
    }
    if (result.ok) {
      folder.current = result.manifest;
      folder.errors = [];
      folder.lastGood = { manifest: result.manifest, digest: result.digest };
      return false;
    }
    folder.current = null;
    folder.errors = result.problems.map((p) => formatProblem(folder.manifestPath, p));
    return true;
  }

  /** Decides which folder each name is served by, and the status of every folder. */
  private resolve(): void {
    const byName = new Map<string, Folder[]>();
    for (const f of this.folders.values()) {
      const list = byName.get(nameOf(f)) ?? [];
      list.push(f);
      byName.set(nameOf(f), list);
    }
    const records: PluginRecord[] = [];
    this.active.clear();
    this.clashes = [];
    for (const [name, folders] of byName) {
      // Usable folders first; among them the later root (home) wins, then the first folder name.
      const usable = folders.filter((f) => (f.current ?? f.lastGood) && f.files?.ok).sort((a, b) => b.rootIndex - a.rootIndex || basename(a.dir).localeCompare(basename(b.dir)));
      const winner = usable[0] ?? null;
      for (const f of folders) {
        const manifest = f.current ?? f.lastGood?.manifest ?? null;
        const manifestDigest = f.current ? f.digest : f.lastGood?.digest ?? null;
        // The digest of what runs: the plugin's files, its manifest's line standing for the manifest in use.
        const rel = basename(f.manifestPath);
        const files = f.files?.ok ? f.files.files : null;
        const digest = files && manifestDigest ? filesDigest(files, rel, manifestDigest) : null;
        const errors = f.files && !f.files.ok ? [...f.errors, `${f.dir}: ${filesProblem(f.files, this.lang)}`] : [...f.errors];
        const rec: PluginRecord = {
          name, dir: f.dir, manifestPath: f.manifestPath, origin: f.origin, status: errors.length > 0 ? "rejected" : f === winner ? "ok" : "shadowed",
          errors, manifest: files ? manifest : null, digest, files: files && manifestDigest ? filesListed(files, rel, manifestDigest) : null, shadowedBy: null,
        };
        if (f === winner) this.active.set(name, rec);
        else if (winner && manifest) {
          rec.shadowedBy = { dir: winner.dir, origin: winner.origin };
          this.clashes.push({ name, winner: rec.shadowedBy, loser: { dir: f.dir, origin: f.origin } });
        }
        records.push(rec);
      }
    }
    this.all = records.sort((a, b) => a.name.localeCompare(b.name) || a.dir.localeCompare(b.dir));
  }
}

/** Why a plugin folder's files cannot be digested, as a person reads it (the plugin is refused until it is fixed). */
function filesProblem(r: Extract<FilesResult, { ok: false }>, lang: Lang): string {
  switch (r.why) {
    case "files": return t(lang, "tools.files.tooMany", { limit: pluginFilesMax, path: r.path });
    case "bytes": return t(lang, "tools.files.tooLarge", { limit: pluginFilesMaxBytes, path: r.path });
    case "depth": return t(lang, "tools.files.tooDeep", { limit: pluginFolderDepthMax, path: r.path });
    case "name": return t(lang, "tools.files.name", { path: r.path, limit: pluginFilePathMaxChars });
    case "link": return t(lang, "tools.files.linkOut", { path: r.path, target: r.target });
    default: return t(lang, "tools.files.unreadable", { path: r.path, error: r.error ?? "" });
  }
}

/** A folder's plugin name: its manifest's (current, else last good), else the folder's name. */
function nameOf(f: Folder): string {
  return f.current?.name ?? f.lastGood?.manifest.name ?? basename(f.dir);
}

/** Whether a folder entry is there at all, whatever it is (lstat: a dangling symlink is there). */
function present(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** A clash as a person reads it. */
export function formatClash(c: PluginClash, lang: Lang): string {
  return t(lang, "tools.clash", { name: c.name, winner: c.winner.dir, winnerOrigin: c.winner.origin, loser: c.loser.dir, loserOrigin: c.loser.origin });
}
