/**
 * Discovery of tool plugins (spec tool-plugins.md §2, §9): `<root>/<folder>/manifest.toml` (or the public
 * implementation's `plugin-manifest.toml`) under the common plugin layer's roots (issue 27: built-in, then
 * `<home>/plugins`, then `serve --plugins`, a later root winning a clash by the one precedence rule). Discovery only
 * reads files: no plugin code runs and no `tools/list` is asked. A broken manifest rejects that folder only; a folder
 * that had a good manifest keeps using it until the file is fixed — also across processes when the registry keeps its
 * last good versions in the home (`lastGood`). `rescan()` reads everything again.
 */
import { lstatSync, readlinkSync } from "node:fs";
import { basename, join } from "node:path";
import { t, type Lang } from "../i18n/messages.js";
import { entryFiles, present, scanRoots } from "../plugins/classify.js";
import { FileHashCache, filesDigest, filesListed, filesProblem, pluginFiles, readBounded, type FilesResult } from "../plugins/files.js";
import { LastGood } from "../plugins/last-good.js";
import { choose, type PluginClash } from "../plugins/precedence.js";
import type { PluginOrigin, PluginRoot, ScannedFolder } from "../plugins/types.js";
import { formatProblem, readManifest, type ManifestResult } from "./manifest.js";
import { manifestMaxBytes } from "./limits.js";
import { runners } from "./runners.js";
import type { Manifest, RescanReport, ToolPluginRecord } from "./types.js";

export { readBounded };

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
  private active = new Map<string, ToolPluginRecord>();
  private all: ToolPluginRecord[] = [];
  private clashes: PluginClash[] = [];
  private notes: string[] = [];
  private listeners = new Set<(r: RescanReport) => void>();
  private fileHashes = new FileHashCache();

  /**
   * @param roots searched in order; a later root wins a name clash over an earlier one (built-in, home, serve).
   * @param lastGood where last good manifests are kept (the home's, shared with every loader of it); default: memory.
   */
  constructor(readonly roots: readonly PluginRoot[], readonly lang: Lang, readonly lastGood = new LastGood(null)) {}

  /** Every plugin folder found, with its status, sorted by name then folder. */
  list(): ToolPluginRecord[] {
    return [...this.all];
  }

  /** The plugin in use under `name` (its status `ok`, or `rejected` while it runs its last good manifest), or null. */
  get(name: string): ToolPluginRecord | null {
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

  /**
   * Reads every folder again: those `folders` names (the plugin registry's one scan), else the roots scanned here.
   * Never throws: unreadable roots are skipped, unreadable folders are rejected.
   */
  rescan(folders?: readonly ScannedFolder[]): RescanReport {
    const before = new Map([...this.active].map(([n, r]) => [n, r.digest]));
    const seen = new Set<string>();
    const rejected: string[] = [];
    let found = folders;
    if (!found) {
      const scan = scanRoots(this.roots, this.lang);
      this.notes = scan.notes;
      found = scan.folders;
    }
    for (const f of found) {
      if (!f.kinds.includes("tool")) continue;
      // A manifest name that is there but is no regular file (a FIFO, a folder, a dangling symlink) is found too:
      // reading it fails and the folder is listed as rejected with why, instead of being skipped in silence.
      const names = entryFiles.tool.filter((n) => present(join(f.dir, n)));
      seen.add(f.dir);
      const folder = this.folders.get(f.dir) ?? { dir: f.dir, origin: f.origin, rootIndex: f.rootIndex, manifestPath: join(f.dir, names[0]!), digest: null, both: false, errors: [], current: null, lastGood: null, files: null };
      folder.manifestPath = join(f.dir, names[0]!);
      folder.rootIndex = f.rootIndex;
      this.folders.set(f.dir, folder);
      const newlyInvalid = this.read(folder, names.length > 1);
      // Every rescan: a changed file of the plugin (not only its manifest) changes its digest (issue 26 #4).
      const wasDigested = folder.files?.ok ?? true;
      folder.files = pluginFiles(f.dir, this.fileHashes);
      if (newlyInvalid || (wasDigested && !folder.files.ok)) rejected.push(nameOf(folder));
    }
    for (const dir of [...this.folders.keys()]) if (!seen.has(dir)) this.forget(dir);
    // A kept version of a folder gone while nobody looked is forgotten too (a new folder there starts afresh).
    for (const dir of this.lastGood.folders("tool")) if (!seen.has(dir) && this.roots.some((r) => dir.startsWith(`${r.dir}/`))) this.lastGood.drop("tool", dir);
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

  private forget(dir: string): void {
    this.folders.delete(dir);
    this.lastGood.drop("tool", dir);
  }

  /** Reads a folder's manifest; @returns true when it was newly found invalid. */
  private read(folder: Folder, both: boolean): boolean {
    let result: ManifestResult;
    const link = linkOf(folder.manifestPath, this.lang);
    try {
      // A manifest that is a link (issue 26 round 5, F6) is refused whatever it leads to: what can write there —
      // a folder the plugin binds writable — could rewrite its sandbox. Its digest stands for the link.
      if (link) result = { ok: false, digest: `link:${link}`, problems: [{ key: "", line: null, message: link }] };
      else result = readManifest(readBounded(folder.manifestPath, manifestMaxBytes), this.lang);
    } catch (e) {
      const error = (e as NodeJS.ErrnoException).code ?? String(e);
      // The digest of an unreadable file stands for its error, so the same error is not reported again each rescan.
      result = { ok: false, digest: `unreadable:${error}`, problems: [{ key: "", line: null, message: t(this.lang, "tools.manifest.read", { error }) }] };
    }
    const changed = result.digest !== folder.digest || both !== folder.both;
    if (!changed) return false;
    folder.digest = result.digest;
    folder.both = both;
    // A version this folder had before this process met it (the hub's, an earlier run's): the same last good rule.
    folder.lastGood ??= this.kept(folder.dir);
    if (both) {
      folder.current = null;
      folder.errors = [`${folder.dir}: ${t(this.lang, "tools.manifest.bothFiles")}`];
      return true;
    }
    if (result.ok) {
      folder.current = result.manifest;
      folder.errors = [];
      folder.lastGood = { manifest: result.manifest, digest: result.digest };
      this.lastGood.put("tool", folder.dir, result.digest, result.manifest);
      return false;
    }
    folder.current = null;
    folder.errors = result.problems.map((p) => formatProblem(folder.manifestPath, p));
    return true;
  }

  /** The last good manifest the home keeps for `dir`, or null. */
  private kept(dir: string): Folder["lastGood"] {
    const k = this.lastGood.get<Manifest>("tool", dir);
    return k ? { manifest: k.value, digest: k.digest } : null;
  }

  /** Decides which folder each name is served by (the one precedence rule), and the status of every folder. */
  private resolve(): void {
    const contenders = [...this.folders.values()].map((f) => ({ f, id: nameOf(f), dir: f.dir, origin: f.origin, rootIndex: f.rootIndex, usable: !!(f.current ?? f.lastGood) && !!f.files?.ok }));
    const { winnerOf, clashes } = choose("tool", contenders);
    const records: ToolPluginRecord[] = [];
    this.active.clear();
    this.clashes = clashes;
    for (const c of contenders) {
      const f = c.f;
      const winner = winnerOf.get(c) ?? null;
      const manifest = f.current ?? f.lastGood?.manifest ?? null;
      const manifestDigest = f.current ? f.digest : f.lastGood?.digest ?? null;
      // The digest of what runs: the plugin's files, its manifest's line standing for the manifest in use.
      const rel = basename(f.manifestPath);
      const files = f.files?.ok ? f.files.files : null;
      const digest = files && manifestDigest ? filesDigest(files, rel, manifestDigest) : null;
      // A hard-linked manifest, or one that is a FIFO, is said once, by the manifest's own check (linkOf, reading it).
      const saidByManifest = f.files && !f.files.ok && (f.files.why === "hardLink" || f.files.why === "special") && f.files.path === rel;
      const errors = f.files && !f.files.ok && !saidByManifest ? [...f.errors, `${f.dir}: ${filesProblem(f.files, this.lang)}`] : [...f.errors];
      const rec: ToolPluginRecord = {
        name: c.id, dir: f.dir, manifestPath: f.manifestPath, origin: f.origin, status: errors.length > 0 ? "rejected" : winner === c ? "ok" : "shadowed",
        errors, manifest: files ? manifest : null, digest, files: files && manifestDigest ? filesListed(files, rel, manifestDigest) : null,
        toolsFrom: manifest ? runners[manifest.plugin_type].tools(manifest) : null,
        shadowedBy: winner && winner !== c && manifest ? { dir: winner.dir, origin: winner.origin } : null,
      };
      if (winner === c) this.active.set(c.id, rec);
      records.push(rec);
    }
    this.all = records.sort((a, b) => a.name.localeCompare(b.name) || a.dir.localeCompare(b.dir));
  }
}

/**
 * Why the manifest at `path` is no regular file of its own, in `lang`: a symbolic link (where it leads), or a file with
 * other names (hard links); null when it is one, or is missing (reading it says so).
 */
function linkOf(path: string, lang: Lang): string | null {
  try {
    const st = lstatSync(path);
    if (st.isSymbolicLink()) return t(lang, "tools.manifest.symlink", { target: readlinkSync(path) });
    if (st.isFile() && st.nlink > 1) return t(lang, "tools.manifest.hardLink", { count: st.nlink });
  } catch {
    // gone meanwhile: reading it says so
  }
  return null;
}

/** A folder's plugin name: its manifest's (current, else last good), else the folder's name. */
function nameOf(f: Folder): string {
  return f.current?.name ?? f.lastGood?.manifest.name ?? basename(f.dir);
}
