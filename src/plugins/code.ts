/**
 * Code plugins (plugins.md: `<root>/<name>/agent.ts | channel.ts | source.ts`, also `.js`, `.mjs`): found under the
 * one list of roots by the one precedence rule (a later root wins: `serve --plugins`, then the home, then the built-in
 * ones, whose compiled `dist/plugins/<name>/<entry>.js` is used when it is there), loaded through tsx on Node 20, and
 * checked by the SDK's shape of their kind before they are used (issue 27: a broken plugin is refused with why when it
 * is loaded, not at its first use). A plugin whose new version is refused keeps its last good module in use.
 *
 * Plugins import the engine only as `agent-autoloop/sdk`. Built-in plugins reach it as the package's own name; an
 * installed plugin through `<home>/node_modules/agent-autoloop`, a link to the engine's folder (link.ts).
 */
import { existsSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { realPathOr } from "../common/file-checks.js";
import { pathToFileURL } from "node:url";
import { engineDir } from "../common/paths.js";
import { makeTsxCache, tsxCacheDir, type TsxCacheProblem } from "../common/tsx-cache.js";
import { langFromEnv, t, type Lang } from "../i18n/messages.js";
import { codeShapeChecks } from "../sdk/checks.js";
import { classify, codeEntryFiles, present } from "./classify.js";
import { confineImports, importRefusedText, importScopesMax } from "./import-confinement.js";
import { within as withinFolder } from "./import-scope.cjs";
import { linkEngine } from "./link.js";
import { builtinPluginsDir, pluginRoots } from "./roots.js";
import type { CodeKind, PluginOrigin, PluginRoot } from "./types.js";

/** Code plugin names: lowercase letters, digits and `-` (the folder's name). */
export const codePluginNamePattern = /^[a-z0-9][a-z0-9-]*$/;

/** A plugin module: its default export and its named ones. */
export type PluginModule = Record<string, unknown> & { default: unknown };

/** A code plugin's entry as it would be loaded: its kind, name, file, folder and root. */
export interface CodeEntry {
  kind: CodeKind;
  name: string;
  file: string;
  dir: string;
  origin: PluginOrigin;
  rootIndex: number;
}

/** The entry file of `kind` in folder `dir` (the compiled one for a built-in plugin when it exists), or null. */
export function entryIn(kind: CodeKind, dir: string, origin: PluginOrigin): string | null {
  if (origin === "builtin" && resolve(dir, "..") === builtinPluginsDir) {
    const compiled = join(engineDir, "dist", "plugins", dir.slice(builtinPluginsDir.length + 1), `${kind}.js`);
    if (existsSync(compiled)) return compiled;
  }
  const file = codeEntryFiles(kind).map((f) => join(dir, f)).find(present);
  return file ?? null;
}

/** Every folder of `roots` holding a code plugin of `kind` named `name`, in root order. */
function contenders(kind: CodeKind, name: string, roots: readonly PluginRoot[]): CodeEntry[] {
  if (!codePluginNamePattern.test(name)) return [];
  return roots.flatMap((root, rootIndex) => {
    const dir = join(root.dir, name);
    const file = classify(dir).includes(kind) ? entryIn(kind, dir, root.origin) : null;
    return file ? [{ kind, name, file, dir, origin: root.origin, rootIndex }] : [];
  });
}

/** The entry a code plugin `name` of `kind` loads from: the one of the latest root that has it (precedence.ts), or null. */
export function findCode(kind: CodeKind, name: string, roots: readonly PluginRoot[]): CodeEntry | null {
  return contenders(kind, name, roots).at(-1) ?? null;
}

/** Whether a built-in plugin (of any kind) has this name: an installed plugin of that name would be used instead. */
export function isBuiltInPlugin(name: string): boolean {
  return classify(join(builtinPluginsDir, name)).length > 0;
}

/** The check of `kind` on a module, as the error a loader throws: `<file>: not an agent plugin: <why>`, or null. */
function shapeError(kind: CodeKind, file: string, mod: PluginModule, lang: Lang): string | null {
  const problem = codeShapeChecks[kind](mod, lang);
  if (problem === null) return null;
  const id = kind === "agent" ? "plugins.notAgent" : kind === "channel" ? "plugins.notChannel" : "plugins.notSource";
  return t(lang, id, { file, problem });
}

/** A module kept for a file: the module, and whether the file changed since (its next load tries the new version). */
interface Loaded {
  mod: PluginModule;
  stale: boolean;
}

/**
 * Finds and loads code plugins for one owner (the hub, a worker, the worker's output thread, `doctor`), keeping each
 * loaded module for the owner's lifetime: a plugin file is evaluated once per loader, and again only after the plugin
 * registry saw its files change (`forget`). Every module is checked by its kind's shape before it is handed out.
 */
export class PluginLoader {
  private readonly loaded = new Map<string, Loaded>();
  /** Why the current version of a file was refused (the records show it), by file. */
  private readonly failures = new Map<string, string>();
  private linked = false;
  private confined = false;
  /** The roots searched, a later one winning. */
  readonly roots: readonly PluginRoot[];
  /** `<home>/plugins`, the root installed plugins are in, or null. */
  readonly installDir: string | null;
  private readonly lang: Lang;

  /**
   * @param where `<home>/plugins` (then the roots are the built-in ones and it), null for the built-in plugins only, or
   *   the roots themselves (pluginRoots).
   */
  constructor(where: string | null | readonly PluginRoot[], lang: Lang = langFromEnv(process.env)) {
    this.roots = Array.isArray(where) ? where : pluginRoots(where as string | null);
    this.installDir = this.roots.find((r) => r.origin === "home")?.dir ?? null;
    this.lang = lang;
  }

  /** The file of a plugin entry, or null when no root has it. */
  find(kind: CodeKind, name: string): string | null {
    return findCode(kind, name, this.roots)?.file ?? null;
  }

  /** Why the version of `file` on disk was refused when last loaded, or null. */
  failure(file: string): string | null {
    return this.failures.get(file) ?? null;
  }

  /** The file changed: its next load imports it again (the module in use stays until the new one passes its check). */
  forget(file: string): void {
    const known = this.loaded.get(file);
    if (known) known.stale = true;
    this.failures.delete(file);
  }

  /**
   * Loads a plugin's default export, checked by its kind's shape.
   * @throws Error naming the plugin when it is missing, fails its check, or its module threw.
   */
  async load<T>(kind: CodeKind, name: string): Promise<T> {
    return (await this.loadModule(kind, name)).default as T;
  }

  /**
   * Loads a plugin's module: the default export and named exports such as a source plugin's `signatureHeader`.
   * @throws Error naming the plugin when it is missing, fails its check, or its module threw.
   */
  async loadModule(kind: CodeKind, name: string): Promise<PluginModule> {
    // One lookup: the file loaded and the origin that decides its confinement are of the same entry.
    const entry = findCode(kind, name, this.roots);
    if (!entry) throw new Error(t(this.lang, "plugins.notFound", { kind, name, dir: this.installDir ?? "-" }));
    const file = entry.file;
    const known = this.loaded.get(file);
    if (known && !known.stale) return known.mod;
    if (!known && this.failures.has(file)) throw new Error(this.failures.get(file)!);
    this.link(file);
    let mod: PluginModule;
    try {
      // A built-in plugin is the engine's own code, outside every scope: loading one (a start's `command` agent) does
      // not start the hooks' loader thread, through which every later import of the process then goes (issue 32: a
      // fifth of a start).
      if (entry.origin !== "builtin") await this.confine();
      // The entry itself, a link leading out of the folder, is judged where it leads (hostile round 44, F44a-3: an
      // author re-pointed one after the owner had read the plugin); what it imports, the hooks judge.
      const folder = realPathOr(entry.dir, dirname(file));
      const target = realPathOr(file, file);
      if (!withinFolder(target, folder) && !withinFolder(target, realPathOr(engineDir, engineDir))) throw new Error(t(this.lang, "plugins.entryOutside", { file, target, folder }));
      mod = await importPlugin(file, this.lang);
      const wrong = shapeError(kind, file, mod, this.lang);
      if (wrong !== null) throw new Error(wrong);
    } catch (e) {
      const error = (e as Error).message.startsWith(file) ? (e as Error).message : t(this.lang, "plugins.importFailed", { file, error: (e as Error).message });
      this.failures.set(file, error);
      // A refused new version: the last good module stays in use (the record says the folder is refused).
      if (known) return known.mod;
      throw new Error(error);
    }
    this.failures.delete(file);
    this.loaded.set(file, { mod, stale: false });
    return mod;
  }

  /**
   * Keeps what the plugins of this loader's roots import by name inside each plugin's folder (import-confinement.ts;
   * hostile round 43, F43b-1 and F43b-2: a `package.json` or `node_modules` above a plugin, written by an agent or
   * another user, chose what its imports ran). Built-in plugins are the engine's own code.
   */
  private async confine(): Promise<void> {
    if (this.confined) return;
    const roots = this.roots.filter((r) => r.origin !== "builtin").map((r) => realPathOr(resolve(r.dir), resolve(r.dir)));
    if (!(await confineImports({ roots, folders: [], refused: importRefusedText(this.lang) }, realPathOr(engineDir, engineDir)))) throw new Error(t(this.lang, "plugins.importScopesFull", { max: importScopesMax }));
    this.confined = true;
  }

  /** Links the SDK for an installed plugin, once (a home that cannot be written: a plugin importing it fails then). */
  private link(file: string): void {
    if (!this.installDir || this.linked || !file.startsWith(resolve(this.installDir) + sep)) return;
    try {
      this.linked = linkEngine(this.installDir);
    } catch {
      // A read-only home: plugins that import nothing from the engine still load; one that imports the SDK fails with
      // Node's own "cannot find package 'agent-autoloop'".
    }
  }
}

/** Imports a plugin file (`.ts` through tsx, each time anew). @throws Error when it has no default export, or what its module threw. */
async function importPlugin(file: string, lang: Lang): Promise<PluginModule> {
  let mod: Record<string, unknown>;
  if (file.endsWith(".ts")) {
    // tsx writes what it compiles into a folder of the shared temp folder (issue 26 round 11, F3): only into the hub's own.
    const cache = tsxCacheDir();
    const problem = makeTsxCache(cache);
    if (problem) throw new Error(t(lang, "plugins.tsxCache", { file, dir: cache, why: tsxCacheText(problem, lang) }));
    const { tsImport } = await import("tsx/esm/api");
    // No tsconfig: tsx would read one from the working folder (and `paths` there would choose what `agent-autoloop/sdk`
    // and any other import of the plugin load): an agent's tsconfig.json in its folder ran its code in `serve` and
    // `doctor` started there (hostile round 41, F41b-1).
    mod = (await tsImport(pathToFileURL(file).href, { parentURL: import.meta.url, tsconfig: false })) as Record<string, unknown>;
  } else {
    // A query makes a changed file a new module (Node keeps modules by URL).
    mod = (await import(`${pathToFileURL(file).href}?v=${Date.now()}`)) as Record<string, unknown>;
  }
  // A .ts file outside an ESM package is compiled as CommonJS: its exports object arrives as `default`.
  const inner = mod.default as { __esModule?: boolean; default?: unknown } | null | undefined;
  const exports = inner && typeof inner === "object" && "default" in inner && (inner.__esModule || Object.keys(inner).length === 1)
    ? (inner as Record<string, unknown>)
    : mod;
  if (exports.default === undefined || exports.default === null) throw new Error(t(lang, "plugins.noDefault", { file }));
  return { ...exports, default: exports.default };
}

/** What is wrong with tsx's cache folder, in words. */
function tsxCacheText(p: TsxCacheProblem, lang: Lang): string {
  if (p.why === "owner") return t(lang, "plugins.tsxCache.owner", { uid: p.uid });
  if (p.why === "mode") return t(lang, "plugins.tsxCache.mode", { mode: `0${p.mode.toString(8)}` });
  return t(lang, "plugins.tsxCache.notFolder", {});
}
