/**
 * The declarative plugin host's one public entry (spec declarative-plugins.md; issue 18): the catalog (loading,
 * reloading, listing, and the tool host's HTTP tools), its kind loader of the common plugin layer (issue 27), and the
 * public types. Nothing outside src/declarative reaches past this file.
 */

export type * from "./types.js";
export { DeclarativeCatalog, definitionMissing, type CatalogOptions } from "./catalog.js";
export { declaredFor, intentTable, promptText, ruleAssets } from "./assets.js";
export { declarativePlugins } from "./kind.js";
export { networkNotDeclared } from "./network.js";
export { formatPluginError } from "./read.js";
export { declarativeApiWindow } from "./version.js";
export { cardTemplateView, controlEvent, uiOf, type CardTemplateView, type ControlPress, type PluginUiView } from "./ui.js";
export * as declarativeLimits from "./limits.js";
