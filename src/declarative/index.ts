/**
 * The declarative plugin host's one public entry (spec declarative-plugins.md; issue 18): the catalog (loading,
 * reloading, listing, and the tool host's HTTP tools), its watcher, the roots of a home, and the public types.
 * Nothing outside src/declarative reaches past this file.
 */
import { join } from "node:path";
import { engineDir } from "../common/paths.js";
import type { DeclarativeRoot } from "./types.js";

export type * from "./types.js";
export { DeclarativeCatalog, definitionMissing, type CatalogOptions } from "./catalog.js";
export { declaredFor, intentTable, promptText, ruleAssets } from "./assets.js";
export { watchCatalog, type CatalogWatcher } from "./watch.js";
export { networkNotDeclared } from "./network.js";
export { formatPluginError } from "./read.js";
export { declarativeApiWindow } from "./version.js";
export { cardTemplateView, controlEvent, uiOf, type CardTemplateView, type ControlPress, type PluginUiView } from "./ui.js";
export * as declarativeLimits from "./limits.js";

/**
 * The roots of a home's declarative plugins (DESIGN.md "Plugin hosts"): the engine's built-in `plugins/`, then the
 * home's `plugins/` folder `pluginsDir`, then each folder given with `serve --plugins <dir>`. A folder holding
 * `plugin.json` is a declarative plugin; the others (agent, channel, source and tool plugins) are passed over.
 */
export function homeDeclarativeRoots(pluginsDir: string, extra: readonly string[] = []): DeclarativeRoot[] {
  return [
    { dir: join(engineDir, "plugins"), origin: "builtin" },
    { dir: pluginsDir, origin: "home" },
    ...extra.map((dir) => ({ dir, origin: "serve" as const })),
  ];
}
