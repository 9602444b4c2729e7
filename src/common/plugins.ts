/**
 * Finding and loading plugins (protocol.md 一致性和复现): `plugins/<name>/agent.ts | channel.ts | source.ts`,
 * the install directory (`<home>/plugins`) first, then the built-in directory. `.ts` files load at run time
 * through tsx on Node 20; built-in plugins are also shipped compiled (`dist/plugins/<name>/<entry>.js`).
 *
 * Plugins import the engine only as `agent-autoloop/sdk` (src/sdk). Built-in plugins reach it as the package's own
 * name; an installed plugin reaches it through `<home>/node_modules/agent-autoloop`, a link to the engine's folder
 * that `linkEngine` keeps, so Node's ordinary package lookup (up the folders from the plugin's file) finds it.
 */
import { existsSync, lstatSync, mkdirSync, readdirSync, readlinkSync, renameSync, rmSync, symlinkSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { dirname, join, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { engineDir } from "./paths.js";

export type PluginKind = "agent" | "channel" | "source";

/** Plugin names: lowercase letters, digits and `-`. */
export const pluginNamePattern = /^[a-z0-9][a-z0-9-]*$/;

/**
 * The file of a plugin entry, or null when no directory has it.
 * @param installDir `<home>/plugins`, searched first.
 */
export function findPlugin(kind: PluginKind, name: string, installDir: string | null): string | null {
  if (!pluginNamePattern.test(name)) return null;
  const candidates = [
    ...(installDir ? [join(installDir, name, `${kind}.ts`), join(installDir, name, `${kind}.js`), join(installDir, name, `${kind}.mjs`)] : []),
    join(engineDir, "dist", "plugins", name, `${kind}.js`),
    join(engineDir, "plugins", name, `${kind}.ts`),
  ];
  return candidates.find((f) => existsSync(f)) ?? null;
}

/** A code plugin entry as it would be loaded: its name, kind, file and where that file is. */
export interface CodePluginEntry {
  name: string;
  kind: PluginKind;
  file: string;
  origin: "builtin" | "home";
}

/**
 * Every agent, channel and source plugin `findPlugin` would load — installed ones (`installDir`) over built-in ones —
 * by name then kind. Reads folder names only: nothing is loaded.
 */
export function listCodePlugins(installDir: string | null): CodePluginEntry[] {
  const names = new Set<string>();
  for (const dir of [installDir, join(engineDir, "plugins"), join(engineDir, "dist", "plugins")]) {
    if (!dir) continue;
    try {
      for (const n of readdirSync(dir)) if (pluginNamePattern.test(n)) names.add(n);
    } catch {
      // a folder that does not exist holds no plugins
    }
  }
  const out: CodePluginEntry[] = [];
  for (const name of [...names].sort()) {
    for (const kind of ["agent", "channel", "source"] as const) {
      const file = findPlugin(kind, name, installDir);
      if (file) out.push({ name, kind, file, origin: installDir && file.startsWith(resolve(installDir) + sep) ? "home" : "builtin" });
    }
  }
  return out;
}

/** A plugin module: its default export and its named ones. */
export type PluginModule = Record<string, unknown> & { default: unknown };

/** Whether a built-in plugin (of any kind) has this name: an installed plugin of that name would be used instead. */
export function isBuiltInPlugin(name: string): boolean {
  return (["agent", "channel", "source"] as const).some((kind) => findPlugin(kind, name, null) !== null);
}

/**
 * Makes `<home>/node_modules/agent-autoloop` a link to the engine's folder, so that a plugin installed in
 * `<home>/plugins/<name>/` can `import … from "agent-autoloop/sdk"`. A link to another folder (an engine that moved
 * or was reinstalled elsewhere) is replaced atomically; a real folder of that name is left alone (someone installed
 * a package there on purpose).
 * @param pluginsDir `<home>/plugins`; the link goes next to it.
 * @returns whether the link now points at `engine`.
 * @throws Error when the home cannot be written (a read-only home, a full disk).
 */
export function linkEngine(pluginsDir: string, engine = engineDir): boolean {
  const modules = join(dirname(resolve(pluginsDir)), "node_modules");
  const link = join(modules, "agent-autoloop");
  const current = linkTarget(link);
  if (current === resolve(engine)) return true;
  if (current === null && existsSync(link)) return false;
  mkdirSync(modules, { recursive: true });
  // A new link under a temporary name, renamed over the old one: a plugin loading meanwhile sees one or the other.
  const temporary = join(modules, `.agent-autoloop-${process.pid}-${randomBytes(4).toString("hex")}`);
  symlinkSync(engine, temporary, "junction");
  try {
    renameSync(temporary, link);
  } catch (e) {
    rmSync(temporary, { force: true });
    if (existsSync(link) && linkTarget(link) === null) return false; // a real folder came in between: leave it
    throw e;
  }
  return true;
}

/** The absolute target of a symbolic link, or null when `path` is not one (or does not exist). */
function linkTarget(path: string): string | null {
  try {
    return lstatSync(path).isSymbolicLink() ? resolve(dirname(path), readlinkSync(path)) : null;
  } catch {
    return null;
  }
}

/**
 * Finds and loads plugins for one owner (the hub, a worker, the worker's output thread, `doctor`), keeping each
 * loaded module for the owner's lifetime: a plugin file is evaluated once per loader, not once per use.
 */
export class PluginLoader {
  private readonly loaded = new Map<string, PluginModule>();
  private linked = false;

  /** @param installDir `<home>/plugins`, searched before the built-in plugins; null for built-in plugins only. */
  constructor(readonly installDir: string | null) {}

  /** The file of a plugin entry, or null when no directory has it (see `findPlugin`). */
  find(kind: PluginKind, name: string): string | null {
    return findPlugin(kind, name, this.installDir);
  }

  /**
   * Loads a plugin's default export.
   * @throws Error naming the plugin when it is missing or has no default export, or the error its module threw.
   */
  async load<T>(kind: PluginKind, name: string): Promise<T> {
    return (await this.loadModule(kind, name)).default as T;
  }

  /**
   * Loads a plugin's module: the default export and named exports such as a source plugin's `signatureHeader`.
   * @throws Error naming the plugin when it is missing or has no default export, or the error its module threw.
   */
  async loadModule(kind: PluginKind, name: string): Promise<PluginModule> {
    const file = this.find(kind, name);
    if (!file) throw new Error(`no ${kind} plugin "${name}" (looked in ${this.installDir ?? "-"} and the built-in plugins)`);
    const cached = this.loaded.get(file);
    if (cached) return cached;
    if (this.installDir && !this.linked && file.startsWith(resolve(this.installDir) + sep)) {
      try {
        this.linked = linkEngine(this.installDir);
      } catch {
        // A home that cannot be written: plugins that import nothing from the engine still load; one that imports
        // the SDK fails with Node's own "cannot find package 'agent-autoloop'".
      }
    }
    const found = await importPlugin(file);
    this.loaded.set(file, found);
    return found;
  }
}

/** Imports a plugin file (`.ts` through tsx). @throws Error when it has no default export, or what its module threw. */
async function importPlugin(file: string): Promise<PluginModule> {
  let mod: Record<string, unknown>;
  if (file.endsWith(".ts")) {
    const { tsImport } = await import("tsx/esm/api");
    mod = (await tsImport(pathToFileURL(file).href, import.meta.url)) as Record<string, unknown>;
  } else {
    mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  }
  // A .ts file outside an ESM package is compiled as CommonJS: its exports object arrives as `default`.
  const inner = mod.default as { __esModule?: boolean; default?: unknown } | null | undefined;
  const exports = inner && typeof inner === "object" && "default" in inner && (inner.__esModule || Object.keys(inner).length === 1)
    ? (inner as Record<string, unknown>)
    : mod;
  if (exports.default === undefined || exports.default === null) throw new Error(`${file}: no default export`);
  return { ...exports, default: exports.default };
}
