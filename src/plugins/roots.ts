/**
 * The one list of plugin roots (issue 27, point 1; DESIGN.md "One plugin model"): the engine's built-in `plugins/`,
 * then the home's `plugins/`, then each `serve --plugins <dir>`. Every kind is found under the same roots, and a later
 * root wins a clash over an earlier one (precedence.ts).
 */
import { resolve } from "node:path";
import { join } from "node:path";
import { engineDir } from "../common/paths.js";
import type { PluginRoot } from "./types.js";

/** The engine's built-in plugins (their compiled code is under `dist/plugins/`, found by the code loader). */
export const builtinPluginsDir = join(engineDir, "plugins");

/**
 * The roots of a home's plugins, in precedence order (a later one wins).
 * @param pluginsDir `<home>/plugins`, or null for the built-in plugins only.
 * @param serveDirs the folders given with `serve --plugins <dir>` (resolved against the working folder).
 * @param builtin the built-in roots (tests give one of their own after the engine's).
 */
export function pluginRoots(pluginsDir: string | null, serveDirs: readonly string[] = [], builtin: readonly string[] = [builtinPluginsDir]): PluginRoot[] {
  return [
    ...builtin.map((dir) => ({ dir: resolve(dir), origin: "builtin" as const })),
    ...(pluginsDir ? [{ dir: resolve(pluginsDir), origin: "home" as const }] : []),
    ...serveDirs.map((dir) => ({ dir: resolve(dir), origin: "serve" as const })),
  ];
}
