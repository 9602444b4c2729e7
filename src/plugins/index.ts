/**
 * The common plugin layer's one public entry (issue 27, point 1; DESIGN.md "One plugin model"): the one list of roots,
 * the classification of folders, the one precedence rule, one record per plugin, the registry that reloads every kind
 * through the kind loaders that register with it, the one watcher, the last good versions a home keeps, the code
 * plugins' loader (checked by the SDK's shapes) and the seam between the tool host and the hosts of data tools.
 * It imports no host: the tool host (src/tools/kind.ts) and the declarative host (src/declarative/kind.ts) register
 * with it, as the code plugin loader here does.
 */
export type * from "./types.js";
export { pluginKinds, codeKinds, inUse } from "./types.js";
export { builtinPluginsDir, pluginRoots } from "./roots.js";
export { classify, entryFiles, scanRoots, type Scan } from "./classify.js";
export { choose, formatClash, kindClashes, sharedIdKinds, type Contender } from "./precedence.js";
export { PluginRegistry, type PluginRegistryOptions } from "./registry.js";
export { watchPlugins, type PluginWatcher, type Watched } from "./watch.js";
export { LastGood, type Kept } from "./last-good.js";
export { PluginLoader, codePluginNamePattern, findCode, isBuiltInPlugin, type CodeEntry, type PluginModule } from "./code.js";
export { codePlugins, type CodeUse, type CodeKindOptions } from "./code-kind.js";
export { linkEngine } from "./link.js";
export { moduleLookupFolder, pluginNameRules, pluginNameFits } from "./names.js";
export type * from "./tool-seam.js";
export * as pluginLimits from "./limits.js";
