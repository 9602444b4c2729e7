/**
 * The shapes of code plugins, checked when a plugin is loaded (issue 27, point 1): the engine takes a plugin's exports
 * only after these say they are what the contract of its kind needs (plugins.md Agent 插件, 通道插件, 事件插件), so
 * a broken plugin is refused with why when it is loaded — at the hub's start for the plugins its files name — not at
 * its first use. A plugin author may call them in their own tests. Pure: nothing is run of the plugin.
 */
import { t, type Lang } from "../i18n/messages.js";
import type { AgentPlugin } from "./agent.js";
import type { ChannelPlugin } from "./channel.js";
import type { SourceModule } from "./source.js";

/** What is wrong with a value, as a person reads it, or null when it is fine. */
type Problem = string | null;

/** The optional members of an agent plugin that, when present, must be functions. */
const agentOptionalFunctions = ["link", "check", "env", "state"] as const satisfies readonly (keyof AgentPlugin)[];
/** The members every agent plugin has, functions both. */
const agentRequiredFunctions = ["command", "read"] as const satisfies readonly (keyof AgentPlugin)[];

/** Why `value` is not an agent plugin (an agent.ts's default export), or null. */
export function agentPluginProblem(value: unknown, lang: Lang): Problem {
  if (typeof value !== "object" || value === null) return t(lang, "sdk.shape.object");
  const v = value as Record<string, unknown>;
  for (const field of agentRequiredFunctions) if (typeof v[field] !== "function") return t(lang, "sdk.shape.function", { field });
  for (const field of agentOptionalFunctions) if (v[field] !== undefined && typeof v[field] !== "function") return t(lang, "sdk.shape.function", { field });
  const pass = v.passEnv;
  if (pass !== undefined && !(Array.isArray(pass) && pass.every((n) => typeof n === "string"))) return t(lang, "sdk.shape.strings", { field: "passEnv" });
  return null;
}

/** Why `value` is not a channel plugin (a channel.ts's default export: a function), or null. */
export function channelPluginProblem(value: unknown, lang: Lang): Problem {
  return typeof value === "function" ? null : t(lang, "sdk.shape.defaultFunction");
}

/** Why a module is not a source plugin (its default export a function; `signatureHeader`, if any, a header name), or null. */
export function sourceModuleProblem(mod: Record<string, unknown>, lang: Lang): Problem {
  if (typeof mod.default !== "function") return t(lang, "sdk.shape.defaultFunction");
  const header = mod.signatureHeader;
  if (header !== undefined && (typeof header !== "string" || !/^[A-Za-z0-9-]{1,100}$/.test(header))) return t(lang, "sdk.shape.header", { field: "signatureHeader" });
  return null;
}

/** The kinds of code plugins and the check of each: what a module must be to be taken as one. */
export const codeShapeChecks = {
  agent: (mod: Record<string, unknown>, lang: Lang): Problem => agentPluginProblem(mod.default, lang),
  channel: (mod: Record<string, unknown>, lang: Lang): Problem => channelPluginProblem(mod.default, lang),
  source: sourceModuleProblem,
} as const satisfies Record<"agent" | "channel" | "source", (mod: Record<string, unknown>, lang: Lang) => Problem>;

/** The default export of a checked module, typed by its kind. */
export type CodePluginOf<K extends keyof typeof codeShapeChecks> = K extends "agent" ? AgentPlugin : K extends "channel" ? ChannelPlugin : SourceModule["default"];
