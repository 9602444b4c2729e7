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

/** Whether a built-in plugin (of any kind) has this name: an installed plugin of that name would be used instead. */
export function isBuiltInPlugin(name: string): boolean {
  return (["agent", "channel", "source"] as const).some((kind) => findPlugin(kind, name, null) !== null);
}

const loaded = new Map<string, unknown>();

/**
 * Loads a plugin's default export (cached per file).
 * @throws Error naming the plugin when it is missing or has no default export.
 */
export async function loadPlugin<T>(kind: PluginKind, name: string, installDir: string | null): Promise<T> {
  const file = findPlugin(kind, name, installDir);
  if (!file) throw new Error(`no ${kind} plugin "${name}" (looked in ${installDir ?? "-"} and the built-in plugins)`);
  if (loaded.has(file)) return loaded.get(file) as T;
  let mod: { default?: unknown };
  if (file.endsWith(".ts")) {
    const { tsImport } = await import("tsx/esm/api");
    mod = (await tsImport(pathToFileURL(file).href, import.meta.url)) as { default?: unknown };
  } else {
    mod = (await import(pathToFileURL(file).href)) as { default?: unknown };
  }
  // A .ts file outside an ESM package is compiled as CommonJS: its exports object arrives as `default`.
  let value = mod.default as unknown;
  const inner = value as { __esModule?: boolean; default?: unknown } | null;
  if (inner && typeof inner === "object" && "default" in inner && (inner.__esModule || Object.keys(inner).length === 1)) value = inner.default;
  if (value === undefined || value === null) throw new Error(`${file}: no default export`);
  loaded.set(file, value);
  return value as T;
}
