/**
 * The plugin registry (issue 27, point 1; DESIGN.md "One plugin model"): one scan of the one list of roots, every
 * kind loader fed the folders of its kinds, one record per plugin. `GET /v1/plugins` is a map over `list()`;
 * `POST /v1/plugins/reload` is `reloadReport()`: every kind reloaded, and what changed since the registry was last
 * asked — also what the watcher (watch.ts) loaded meanwhile — so a plugin made a moment before is said loaded.
 * Reloads run one at a time.
 */
import { t, type Lang } from "../i18n/messages.js";
import { folderNames, scanRoots } from "./classify.js";
import { pluginFiles, statsOnly } from "./files.js";
import { formatClash, kindClashes } from "./precedence.js";
import { inUse, pluginKinds, type KindLoader, type PluginClash, type PluginKind, type PluginRecord, type PluginRoot, type ReloadReport } from "./types.js";

/** Settings of a registry. */
export interface PluginRegistryOptions {
  roots: readonly PluginRoot[];
  /** One loader per kind (each kind loaded by exactly one). */
  loaders: readonly KindLoader[];
  lang: Lang;
  /** Receives what a person running the host may want to see: clashes, a reload that failed. */
  log?: (line: string) => void;
  /** Called after each reload (the hub starts its tool host once a tool plugin is found). */
  afterLoad?: () => void;
}

/** What is in use, by `<kind>\0<id>`: `<dir>\0<digest>` (a new folder or a new version is a change). */
type Snapshot = Map<string, string>;

export class PluginRegistry {
  private queue: Promise<unknown> = Promise.resolve();
  /** What was in use when the registry was last asked (`reloadReport`), or at the first reload. */
  private asked: Snapshot | null = null;
  private printLoaded: string | null = null;
  private notes: string[] = [];
  private readonly clashesSaid = new Set<string>();
  private acrossKinds: PluginClash[] = [];

  constructor(readonly o: PluginRegistryOptions) {
    const kinds = o.loaders.flatMap((l) => l.kinds);
    if (new Set(kinds).size !== kinds.length) throw new Error(`plugin kinds loaded twice: ${kinds.join(", ")}`);
  }

  get roots(): readonly PluginRoot[] {
    return this.o.roots;
  }

  /** Scans every root and reloads every kind (one reload at a time: a second waits for the first). Never rejects. */
  reload(): Promise<void> {
    const next = this.queue.then(() => this.load());
    this.queue = next.catch(() => {});
    return next.catch((e) => this.o.log?.(t(this.o.lang, "plugins.log.failed", { error: (e as Error).message })));
  }

  /**
   * Reloads every kind, then says what changed since the registry was last asked (or since its first reload): ids
   * loaded, replaced and unloaded, and every plugin refused now with its errors (POST /v1/plugins/reload).
   */
  async reloadReport(): Promise<ReloadReport> {
    await this.reload();
    const now = snapshot(this.list());
    const before = this.asked ?? now;
    this.asked = now;
    const idOf = (key: string) => key.slice(key.indexOf("\0") + 1);
    const ids = (keys: string[]) => [...new Set(keys.map(idOf))].sort();
    const rejected = new Map<string, string[]>();
    for (const r of this.list()) if (r.status === "rejected") rejected.set(r.id, [...(rejected.get(r.id) ?? []), ...r.errors]);
    return {
      loaded: ids([...now.keys()].filter((k) => !before.has(k))),
      replaced: ids([...now].filter(([k, v]) => before.has(k) && before.get(k) !== v).map(([k]) => k)),
      unloaded: ids([...before.keys()].filter((k) => !now.has(k))),
      rejected: [...rejected].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([id, errors]) => ({ id, errors })),
    };
  }

  /** Every plugin folder of every kind: by kind (`pluginKinds` order), then id, then folder. */
  list(): PluginRecord[] {
    const order = (k: PluginKind) => pluginKinds.indexOf(k);
    return this.o.loaders.flatMap((l) => l.records()).sort((a, b) => order(a.kind) - order(b.kind) || cmp(a.id, b.id) || cmp(a.dir, b.dir));
  }

  /** The record of `kind` and `id` in use (loaded, or refused with its last good version), else the first found, else null. */
  get(kind: PluginKind, id: string): PluginRecord | null {
    const found = this.list().filter((r) => r.kind === kind && r.id === id);
    return found.find(inUse) ?? found[0] ?? null;
  }

  /** Notes of the last scan (a root with too many folders). */
  scanNotes(): string[] {
    return [...this.notes];
  }

  /** The folders to watch: every root, and every plugin folder found. */
  watchedDirs(): string[] {
    return [...this.o.roots.map((r) => r.dir), ...new Set(this.list().map((r) => r.dir))];
  }

  /**
   * A cheap summary of everything a reload reads — every root's names, and every plugin folder's entries by name,
   * size, times and inode — without reading a file: equal fingerprints mean nothing changed (the watcher's test).
   */
  fingerprint(): string {
    const parts: string[] = [];
    for (const root of this.o.roots) parts.push(`${root.dir}\0${folderNames(root.dir).join("/")}`);
    for (const f of scanRoots(this.o.roots, this.o.lang).folders) {
      const files = pluginFiles(f.dir, statsOnly);
      parts.push(`${f.dir}\0${f.kinds.join(",")}\0${files.ok ? files.files.map((x) => `${x.path}=${x.sha256}`).join("/") : files.why}`);
    }
    return parts.join("\n");
  }

  /** The fingerprint the last reload started from, or null before the first. */
  get loadedFingerprint(): string | null {
    return this.printLoaded;
  }

  private async load(): Promise<void> {
    const print = this.fingerprint();
    const scan = scanRoots(this.o.roots, this.o.lang);
    for (const loader of this.o.loaders) await loader.load(scan.folders.filter((f) => f.kinds.some((k) => loader.kinds.includes(k))));
    this.overrule();
    this.printLoaded = print;
    // A new note (a linked folder left out) is logged once, as a clash is.
    for (const n of scan.notes) if (!this.notes.includes(n)) this.o.log?.(n);
    this.notes = scan.notes;
    this.asked ??= snapshot(this.list());
    this.sayClashes();
    this.o.afterLoad?.();
  }

  /** The clashes across kinds the last reload found (`kindClashes`): the plugins of another kind each one shadows. */
  kindClashes(): PluginClash[] {
    return [...this.acrossKinds];
  }

  /**
   * Applies the precedence across kinds (precedence.ts `sharedIdKinds`): each loader is told which of its plugins a
   * plugin of another kind wins over, decided on the records as the loaders read them (what the last reload's
   * overruling said is undone first). No await between: nobody sees the records half decided.
   */
  private overrule(): void {
    for (const l of this.o.loaders) l.overrule?.([]);
    this.acrossKinds = kindClashes(this.list());
    for (const l of this.o.loaders) l.overrule?.(this.acrossKinds.filter((c) => l.kinds.includes(c.kind)));
  }

  /** Logs each clash once, when it first shows (a shadowed folder and the one that wins over it). */
  private sayClashes(): void {
    const now = new Set<string>();
    for (const r of this.list()) {
      if (r.status !== "shadowed" || !r.shadowedBy) continue;
      const line = t(this.o.lang, "plugins.log.clash", { kind: r.kind, clash: formatClash({ name: r.id, winner: r.shadowedBy, loser: { dir: r.dir, origin: r.origin } }, this.o.lang, r.kind) });
      now.add(line);
      if (!this.clashesSaid.has(line)) this.o.log?.(line);
    }
    this.clashesSaid.clear();
    for (const line of now) this.clashesSaid.add(line);
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function snapshot(records: readonly PluginRecord[]): Snapshot {
  return new Map(records.filter(inUse).map((r) => [`${r.kind}\0${r.id}`, `${r.dir}\0${r.digest}`]));
}
