/**
 * The catalog of declarative plugins (spec declarative-plugins.md §4; issue 18): plugin folders holding `plugin.json`
 * under the common plugin layer's roots — the engine's built-in `plugins/`, then `<home>/plugins`, then every
 * `serve --plugins <dir>`, a later root winning a clash by the one precedence rule (issue 27) — loaded fail-closed. A
 * reload rescans every root: a new plugin is loaded, a changed one replaced (its old registrations removed first), a
 * gone one unloaded; a plugin whose folder is now refused keeps its previous version registered and working — the one
 * this catalog loaded, or the one the home keeps (`lastGood`: what the hub loaded, for the CLI too). Reloads run one at
 * a time, and read files without blocking: other requests go on between plugins.
 *
 * The catalog is also the tool host's source of HTTP tools (kind `http`, the `DataTools` seam of src/tools): a call
 * runs the tool's request (template.ts, http.ts); a tool that disappears — its plugin unloaded, or replaced by a
 * version without it — ends its calls in flight and answers later ones with "definition missing: <plugin>.<tool>".
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import { t, type Lang } from "../i18n/messages.js";
import { lineForbiddenClass } from "../kernel/text.js";
import { scanRoots } from "../plugins/classify.js";
import { LastGood } from "../plugins/last-good.js";
import { choose } from "../plugins/precedence.js";
import type { PluginClash, ScannedFolder, ShadowedBy } from "../plugins/types.js";
import type { CallContext, DataTools, HttpReach, ToolOutcome, ToolSpec } from "../plugins/tool-seam.js";
import { keep, revive, type KeptPlugin } from "./kept.js";
import { declarativePluginsMax, goneToolsMax, httpTimeoutMsDefault, httpTimeoutMsMax } from "./limits.js";
import { formatPluginError, listPluginFolder } from "./read.js";
import { buildRequest, splitTemplate } from "./template.js";
import { runHttp } from "./http.js";
import { Slicer } from "./slice.js";
import type { DeclarativeOrigin, DeclarativeRecord, DeclarativeRoot, LoadedPlugin, ReloadReport } from "./types.js";
import type { LoadOutcome } from "./load.js";

/** Settings of a catalog; only `roots` and `lang` are needed. */
export interface CatalogOptions {
  roots: readonly DeclarativeRoot[];
  lang: Lang;
  /** Receives what a person running the host may want to see: plugins loaded, replaced, unloaded, refused with why. */
  log?: (line: string) => void;
  /** Where `authRef: env:NAME` is read (the tool host's environment). Default: `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The value of a plugin's secret setting (`authRef: <key>`), or null when it has none. */
  secret?: (plugin: string, key: string) => string | null;
  /**
   * Other addresses of the hub a call's requests may reach it at (its `publicUrl`), besides the one its caller reached
   * it at (`callbackUrl`): requests to the hub name the call (issue 26; http.ts `HttpCall.ownHub`).
   */
  hubUrls?: () => (string | null)[];
  /** Where last good versions and gone tools are kept (the home's, shared by its every loader); default: memory. */
  lastGood?: LastGood;
}

/** The exact error of a tool that was offered and is gone (the contract fixes it, in every language). */
export function definitionMissing(qualifiedName: string): string {
  return `definition missing: ${qualifiedName}`;
}

/** A plugin folder found by a scan: its id is its folder's name. */
interface Found {
  id: string;
  dir: string;
  origin: DeclarativeOrigin;
  rootIndex: number;
}

export class DeclarativeCatalog implements DataTools {
  private readonly records = new Map<string, DeclarativeRecord>();
  /** Registered plugins a plugin of another kind wins over (`overrule`), with the folder that wins. */
  private overruled = new Map<string, ShadowedBy>();
  /** Folders another folder of the same id wins over (shadowed, or refused): listed, never registered. */
  private others: DeclarativeRecord[] = [];
  /** Last good versions and the tools offered once and gone since (the home's, or this catalog's own). */
  private readonly kept: LastGood;
  /** Calls in flight, by `<plugin>.<tool>`: aborted when their tool disappears. */
  private readonly inflight = new Map<string, Set<AbortController>>();
  private queue: Promise<unknown> = Promise.resolve();
  private loaded: string | null = null;
  /** What the last reload made of each folder, with the fingerprint it had then. */
  private outcomes = new Map<string, { print: string; out: LoadOutcome }>();
  /** The values of secret settings whose effect is `reload`, as the last reload read them: plugin → key → value. */
  private readonly snapshots = new Map<string, Map<string, string | null>>();

  constructor(readonly opts: CatalogOptions) {
    this.kept = opts.lastGood ?? new LastGood(null);
  }

  private get lang(): Lang {
    return this.opts.lang;
  }

  /**
   * Reloads every root, or the folders the plugin registry's one scan gives (one reload at a time: a second waits for
   * the first). Never rejects.
   */
  reload(folders?: readonly ScannedFolder[]): Promise<ReloadReport> {
    const next = this.queue.then(() => this.rescan(folders));
    this.queue = next.catch(() => {});
    return next.catch((e) => {
      this.opts.log?.(t(this.lang, "decl.log.failed", { error: (e as Error).message }));
      return { loaded: [], replaced: [], unloaded: [], rejected: [] };
    });
  }

  /** The fingerprint the last reload started from (see `fingerprint`), or null before the first. */
  get loadedFingerprint(): string | null {
    return this.loaded;
  }

  /**
   * Every plugin folder known: the registered and the refused, by id, then the folders another one wins over. A
   * plugin a plugin of another kind wins over (`overrule`) is listed `shadowed` by it, with nothing in use.
   */
  list(): DeclarativeRecord[] {
    const registered = [...this.records.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map((r) => {
      const by = this.overruled.get(r.id);
      return by ? { ...r, status: "shadowed" as const, current: null, shadowedBy: by } : r;
    });
    return [...registered, ...this.others];
  }

  /** The plugin registered under `id` and in use, or null (also while a plugin of another kind wins over it). */
  get(id: string): LoadedPlugin | null {
    return this.overruled.has(id) ? null : this.records.get(id)?.current ?? null;
  }

  /**
   * The plugins a plugin of another kind wins over (the plugin layer's `kindClashes`: a tool plugin of the same name),
   * until the next call: each is out of use whole (its tools, panels, cards and workflows), its version kept, so it
   * is back in use as it was once the clash is gone.
   */
  overrule(clashes: readonly PluginClash[]): void {
    this.overruled = new Map(clashes.map((c) => [c.name, c.winner]));
  }

  /**
   * A cheap summary of everything a reload reads — names, sizes, times and inodes of every root's plugin folders and
   * their asset files — without reading a file: equal fingerprints mean nothing changed (the watcher's test).
   */
  async fingerprint(): Promise<string> {
    const slicer = new Slicer();
    const parts: string[] = [];
    for (const f of this.scan(undefined)) {
      await slicer.breathe();
      parts.push(`${f.dir}\0${folderFingerprint(f.dir)}`);
    }
    return parts.join("\n");
  }

  /** The plugin folders of every root (or those given), in root order, at most `declarativePluginsMax`. */
  private scan(given: readonly ScannedFolder[] | undefined): Found[] {
    const found: Found[] = [];
    for (const f of given ?? scanRoots(this.opts.roots, this.lang).folders) {
      // A plugin.json that is there but no regular file (a FIFO, a folder, a link, a dangling one) is found too:
      // the loader refuses it and the folder is listed rejected with why, not skipped in silence (issue 26).
      if (!f.kinds.includes("declarative")) continue;
      if (found.length >= declarativePluginsMax) {
        this.opts.log?.(t(this.lang, "decl.folder.tooMany", { limit: declarativePluginsMax, dir: f.dir }));
        break;
      }
      found.push({ id: f.name, dir: f.dir, origin: f.origin, rootIndex: f.rootIndex });
    }
    return found;
  }

  /** The version of folder `f` in use before this reload: the one registered from it, else the one the home keeps. */
  private previous(f: Found): LoadedPlugin | null {
    const mine = this.records.get(f.id)?.current;
    if (mine?.dir === f.dir) return mine;
    return revive(this.kept.get<KeptPlugin>("declarative", f.dir)?.value);
  }

  private async rescan(given: readonly ScannedFolder[] | undefined): Promise<ReloadReport> {
    const found = this.scan(given);
    const slicer = new Slicer();
    const prints = new Map<string, string>();
    for (const f of found) {
      await slicer.breathe();
      prints.set(f.dir, folderFingerprint(f.dir));
    }
    this.loaded = found.map((f) => `${f.dir}\0${prints.get(f.dir)}`).join("\n");
    const report: ReloadReport = { loaded: [], replaced: [], unloaded: [], rejected: [] };
    const outcomes = new Map<string, { print: string; out: LoadOutcome }>();
    // The loader (and the compiled schemas it brings) loads only when there is a plugin to read.
    const { loadPlugin } = found.length > 0 ? await import("./load.js") : { loadPlugin: null };
    const contenders = [];
    for (const f of found) {
      // Other requests get their turn every `reloadSliceMaxMs` (slice.ts), between files.
      await slicer.breathe();
      // A folder whose fingerprint did not change since it was read is not read again.
      const print = prints.get(f.dir)!;
      const known = this.outcomes.get(f.dir);
      const out = known?.print === print ? known.out : await loadPlugin!(f.dir, f.origin, this.lang, slicer);
      outcomes.set(f.dir, { print, out });
      const previous = this.previous(f);
      contenders.push({ ...f, out, previous, usable: out.ok || previous !== null });
    }
    // One precedence rule (issue 27): a usable folder over one that is not, then the later root, then the name.
    const { winnerOf } = choose("declarative", contenders);
    const others: DeclarativeRecord[] = [];
    const seen = new Set<string>();
    for (const c of contenders) {
      const winner = winnerOf.get(c) ?? contenders.find((x) => x.id === c.id)!;
      const errors = c.out.ok ? [] : c.out.errors.map(formatPluginError);
      if (c !== winner) {
        const shadowedBy = { dir: winner.dir, origin: winner.origin };
        others.push({ id: c.id, dir: c.dir, origin: c.origin, status: c.out.ok ? "shadowed" : "rejected", errors, manifest: c.out.ok ? c.out.plugin.manifest : c.out.manifest ?? { id: c.id }, current: null, shadowedBy });
        if (!c.out.ok) report.rejected.push({ id: c.id, errors });
        continue;
      }
      seen.add(c.id);
      const current = this.records.get(c.id)?.current ?? null;
      if (c.out.ok) {
        const p = c.out.plugin;
        if (!current) report.loaded.push(c.id);
        else if (current.digest !== p.digest || current.dir !== p.dir) {
          report.replaced.push(c.id);
          this.forget(current, p);
        }
        this.records.set(c.id, { id: c.id, dir: c.dir, origin: c.origin, status: "loaded", errors: [], manifest: p.manifest, current: p, shadowedBy: null });
        this.kept.put("declarative", c.dir, p.digest, keep(p));
      } else {
        // Refused: the version in use stays (this catalog's, else the home's last good one).
        const inUse = c.previous ?? current;
        if (!current && inUse) report.loaded.push(c.id);
        else if (current && inUse && current !== inUse) {
          report.replaced.push(c.id);
          this.forget(current, inUse);
        }
        report.rejected.push({ id: c.id, errors });
        this.records.set(c.id, { id: c.id, dir: c.dir, origin: c.origin, status: "rejected", errors, manifest: inUse?.manifest ?? c.out.manifest ?? { id: c.id }, current: inUse, shadowedBy: null });
      }
    }
    for (const [id, rec] of this.records) {
      if (seen.has(id)) continue;
      if (rec.current) {
        report.unloaded.push(id);
        this.forget(rec.current, null);
      }
      this.records.delete(id);
    }
    this.forgetVanished(new Set(found.map((f) => f.dir)));
    this.others = others;
    this.outcomes = outcomes;
    this.snapshot();
    for (const list of [report.loaded, report.replaced, report.unloaded]) list.sort();
    report.rejected.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    this.say(report);
    return report;
  }

  /** Kept versions of folders gone from the roots (also while no loader looked): their tools gone, the versions forgotten. */
  private forgetVanished(found: Set<string>): void {
    for (const dir of this.kept.folders("declarative")) {
      if (found.has(dir) || !this.opts.roots.some((r) => dir.startsWith(`${r.dir}/`))) continue;
      const old = revive(this.kept.get<KeptPlugin>("declarative", dir)?.value);
      if (old) this.forget(old, null);
      this.kept.drop("declarative", dir);
    }
  }

  /** Reads the secret settings that take effect on a reload (`effect` other than `hot`) of every registered plugin. */
  private snapshot(): void {
    this.snapshots.clear();
    for (const rec of this.records.values()) {
      if (!rec.current) continue;
      const values = new Map<string, string | null>();
      for (const s of rec.current.settings) if (s.type === "secret" && s.effect !== "hot") values.set(s.key, this.opts.secret?.(rec.id, s.key) ?? null);
      this.snapshots.set(rec.id, values);
    }
  }

  /** Logs what a reload did; a refused plugin with every error. */
  private say(r: ReloadReport): void {
    const raw = this.opts.log;
    if (!raw) return;
    // Ids, paths and reasons come from folder names and files a plugin chose: a line break or a direction mark in them
    // must not start a line of its own or reorder the line (it is shown as \u{…}).
    const log = (line: string) => raw(line.replace(logForbidden, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`));
    for (const id of r.loaded) log(t(this.lang, "decl.log.loaded", { id, dir: this.records.get(id)!.dir }));
    for (const id of r.replaced) log(t(this.lang, "decl.log.replaced", { id, dir: this.records.get(id)!.dir }));
    for (const id of r.unloaded) log(t(this.lang, "decl.log.unloaded", { id }));
    for (const { id, errors } of r.rejected) {
      const kept = this.records.get(id)?.current ? t(this.lang, "decl.log.kept") : "";
      log(t(this.lang, "decl.log.rejected", { id, count: errors.length, kept }));
      for (const e of errors) log(`  ${e}`);
    }
  }

  /** The tools of `old` that `next` (null: none) no longer has: ended in flight, and remembered as gone. */
  private forget(old: LoadedPlugin, next: LoadedPlugin | null): void {
    const gone: string[] = [];
    for (const name of old.tools.keys()) {
      if (next?.tools.has(name)) continue;
      const q = `${old.id}.${name}`;
      for (const ac of this.inflight.get(q) ?? []) ac.abort();
      this.inflight.delete(q);
      gone.push(q);
    }
    // A tool that comes back is no longer gone.
    this.kept.setGone(gone, [...(next?.tools.keys() ?? [])].map((name) => `${old.id}.${name}`), goneToolsMax);
  }

  // ── the tool host's seam (DataTools) ─────────────────────────────────────────────────────────────────────────
  pluginIds(): string[] {
    return [...this.records.keys()].filter((id) => (this.get(id)?.tools.size ?? 0) > 0).sort();
  }

  toolsOf(id: string): { tools: (ToolSpec & { timeoutMs: number; reach: HttpReach })[]; digest: string } | null {
    const p = this.get(id);
    if (!p || p.tools.size === 0) return null;
    return {
      digest: p.digest,
      tools: [...p.tools.values()].map((x) => {
        const url = splitTemplate(x.http.url).pieces;
        const reach = { network: [...(p.manifest.requires?.network ?? [])], authRef: x.http.authRef ?? null, anyUrl: url.length === 1 && "param" in url[0]! };
        return { name: x.name, description: x.description ?? "", parameters: x.parameters, timeoutMs: x.http.timeoutMs ?? httpTimeoutMsDefault, reach };
      }),
    };
  }

  refusal(id: string): string | null {
    const rec = this.records.get(id);
    return rec && rec.status === "rejected" ? t(this.lang, "decl.call.rejected", { plugin: id, error: rec.errors[0] ?? "" }) : null;
  }

  missing(qualifiedName: string): string | null {
    return this.kept.isGone(qualifiedName) ? definitionMissing(qualifiedName) : null;
  }

  async call(plugin: string, tool: string, args: Record<string, unknown>, ctx: CallContext): Promise<ToolOutcome> {
    const q = `${plugin}.${tool}`;
    const p = this.get(plugin);
    const def = p?.tools.get(tool);
    if (!p || !def) return { status: "refused", code: "tools.definition_missing", message: definitionMissing(q) };
    const auth = this.credential(p, def.http.authRef);
    if (auth !== null && !auth.ok) return { status: "refused", code: "tools.auth_missing", message: auth.message };
    const built = buildRequest(def, args, auth?.value ?? null, this.lang);
    if (!built.ok) return { status: "refused", code: "tools.invalid_arguments", message: t(this.lang, "tools.call.arguments", { tool: q, error: built.message }) };
    const ac = new AbortController();
    const set = this.inflight.get(q) ?? new Set<AbortController>();
    set.add(ac);
    this.inflight.set(q, set);
    try {
      return await runHttp(built, {
        network: p.manifest.requires?.network ?? [],
        timeoutMs: Math.min(httpTimeoutMsMax, Math.max(1, ctx.timeoutMs ?? def.http.timeoutMs ?? httpTimeoutMsDefault)),
        resultPath: def.http.resultPath ?? "",
        signal: ctx.signal,
        gone: ac.signal,
        goneMessage: definitionMissing(q),
        secrets: auth?.ok ? [auth.value] : [],
        lang: this.lang,
        ...(ctx.toolCall !== undefined ? { ownHub: { urls: [ctx.callbackUrl ?? null, ...(this.opts.hubUrls?.() ?? [])], call: ctx.toolCall } } : {}),
      });
    } finally {
      set.delete(ac);
      if (set.size === 0 && this.inflight.get(q) === set) this.inflight.delete(q);
    }
  }

  /** The credential of `authRef`: null without one; its value; or why it cannot be had (never the value itself). */
  private credential(p: LoadedPlugin, ref: string | undefined): { ok: true; value: string } | { ok: false; message: string } | null {
    if (ref === undefined) return null;
    if (ref.startsWith("env:")) {
      const name = ref.slice(4);
      const v = (this.opts.env ?? process.env)[name];
      return v ? { ok: true, value: v } : { ok: false, message: t(this.lang, "decl.call.authEnv", { name }) };
    }
    // A `hot` setting is read now; any other as the last reload read it.
    const hot = p.settings.find((s) => s.key === ref)?.effect === "hot";
    const kept = this.snapshots.get(p.id);
    const v = hot || !kept?.has(ref) ? this.opts.secret?.(p.id, ref) ?? null : kept.get(ref)!;
    return v ? { ok: true, value: v } : { ok: false, message: t(this.lang, "decl.call.authSetting", { key: ref, plugin: p.id }) };
  }
}

/** What a log line shows escaped: controls, line and paragraph separators, direction marks, lone surrogates. */
const logForbidden = new RegExp(`[${lineForbiddenClass}\\u200e\\u200f\\u061c]`, "gu");

/** The asset folders a plugin has (their files count in its fingerprint). */
const assetFolders = new Set(["tools", "workflows", "intents", "prompts", "panels", "cards"]);

/**
 * One plugin folder's fingerprint: the name, size, modification and change times (ns) and inode of each entry and of
 * each asset folder's files (at most `pluginFolderEntriesMax` of a folder: see `listPluginFolder`); no file is read. Synchronous: a few dozen `stat` calls, far cheaper than as many round
 * trips through the thread pool.
 */
function folderFingerprint(dir: string): string {
  const parts: string[] = [];
  const add = (path: string) => {
    try {
      const s = statSync(path, { bigint: true });
      parts.push(`${path}\0${s.size}\0${s.mtimeNs}\0${s.ctimeNs}\0${s.ino}`);
    } catch {
      parts.push(`${path}\0-`);
    }
  };
  /** The names in `folder`; a folder with too many is described by its own times (they change as entries come and go). */
  const bounded = (folder: string): string[] => {
    let list;
    try {
      list = listPluginFolder(folder);
    } catch {
      list = null;
    }
    if (list !== "tooMany") return (list ?? []).map((e) => e.name);
    parts.push(`${folder}\0tooMany`);
    add(folder);
    return [];
  };
  for (const name of bounded(dir)) {
    add(join(dir, name));
    if (assetFolders.has(name)) for (const file of bounded(join(dir, name))) add(join(dir, name, file));
  }
  return parts.join("\n");
}
