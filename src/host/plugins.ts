/**
 * Finding and loading plugins (protocol.md 一致性和复现): `plugins/<name>/agent.ts | channel.ts | source.ts`,
 * the install directory (`<home>/plugins`) first, then the built-in directory. `.ts` files load at run time
 * through tsx on Node 20; built-in plugins are also shipped compiled (`dist/plugins/<name>/<entry>.js`).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { engineDir } from "./home.js";

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

/** A plugin module: its default export and its named ones. */
export type PluginModule = Record<string, unknown> & { default: unknown };

/** Whether a built-in plugin (of any kind) has this name: an installed plugin of that name would be used instead. */
export function isBuiltInPlugin(name: string): boolean {
  return (["agent", "channel", "source"] as const).some((kind) => findPlugin(kind, name, null) !== null);
}

const loaded = new Map<string, PluginModule>();

/**
 * Loads a plugin's default export (cached per file).
 * @throws Error naming the plugin when it is missing or has no default export.
 */
export async function loadPlugin<T>(kind: PluginKind, name: string, installDir: string | null): Promise<T> {
  return (await loadPluginModule(kind, name, installDir)).default as T;
}

/**
 * Loads a plugin's module: the default export and named exports such as a source plugin's `signatureHeader`
 * (cached per file).
 * @throws Error naming the plugin when it is missing or has no default export.
 */
export async function loadPluginModule(kind: PluginKind, name: string, installDir: string | null): Promise<PluginModule> {
  const file = findPlugin(kind, name, installDir);
  if (!file) throw new Error(`no ${kind} plugin "${name}" (looked in ${installDir ?? "-"} and the built-in plugins)`);
  const cached = loaded.get(file);
  if (cached) return cached;
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
  const found: PluginModule = { ...exports, default: exports.default };
  loaded.set(file, found);
  return found;
}
