/**
 * One name rule per kind of plugin (issue 27, point 1): what a plugin of each kind may be named — a code or declarative
 * plugin by its folder (lowercase letters, digits and `-`; a declarative plugin's `id` is its folder's name, at most 64
 * characters), a tool plugin by its manifest's `name` (letters, digits, `_` and `-`, at most 128). `add` accepts every
 * name a plugin of its kind may have.
 */
import { toolPluginNameMaxChars } from "../kernel/limits.js";
import { toolPluginNamePattern } from "../kernel/rules.js";
import type { PluginKind } from "./types.js";

/** The names a plugin of each kind may have: a pattern and a length in characters. */
export const pluginNameRules: Readonly<Record<PluginKind, { pattern: RegExp; maxChars: number }>> = {
  declarative: { pattern: /^[a-z0-9][a-z0-9-]*$/, maxChars: 64 },
  tool: { pattern: toolPluginNamePattern, maxChars: toolPluginNameMaxChars },
  agent: { pattern: /^[a-z0-9][a-z0-9-]*$/, maxChars: 64 },
  channel: { pattern: /^[a-z0-9][a-z0-9-]*$/, maxChars: 64 },
  source: { pattern: /^[a-z0-9][a-z0-9-]*$/, maxChars: 64 },
};

/**
 * Whether `folder` (a folder's name in a plugins root) is one Node's module lookup reads: `node_modules` in any case
 * (case-insensitive file systems). A plugin folder of that name would choose what every code plugin of the root loads
 * for `agent-autoloop/sdk` and any other package (hostile round 41, F41b-2): no plugin may be named so.
 */
export function moduleLookupFolder(folder: string): boolean {
  return folder.toLowerCase() === "node_modules";
}

/** Whether `name` is a name a plugin of `kind` may have. */
export function pluginNameFits(kind: PluginKind, name: string): boolean {
  const rule = pluginNameRules[kind];
  return rule.pattern.test(name) && [...name].length <= rule.maxChars && !moduleLookupFolder(name);
}
