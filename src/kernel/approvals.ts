/**
 * How a tool call is approved (spec tool-plugins.md §8; issue 16): the entries of rules.json's `approvals`, the
 * session keys their `allow_session_keys` match, and the verdict for one call. Pure.
 */
import type { ApprovalFile } from "../protocol/rules-schema.js";
import { starMatch } from "./glob.js";

/** How a tool call is approved (spec tool-plugins.md §8): run it, ask the owner first, or refuse it. */
export type ApprovalMode = ApprovalFile["mode"];
/**
 * One entry of `approvals` (spec tool-plugins.md §8, as the public implementation's `[[approvals.rules]]`): the mode
 * of the calls of `plugin`'s tool `tool` (`<plugin>.<tool>`), or of all its tools when `tool` is null; calls whose
 * session key matches one of `allow_session_keys` (`*` any run of characters) need no approval where the mode says
 * `prompt`. `credential_any_url` (issue 26 #11; an entry naming the tool only): the owner lets an agent call this HTTP
 * tool although its url is one placeholder the agent fills in and it sends a credential — without it such calls are
 * denied, since any declared host, echoing the credential transformed, could hand it to the agent.
 * `legacy_callbacks` (hostile round 37, F37b-3; an entry naming the plugin only): its async tasks may be completed
 * through the key-less legacy callback path with their task id alone (16 characters or more);
 * `legacy_callback_short_ids` with shorter ids too, and implies `legacy_callbacks` (set by the parser).
 */
export interface ApprovalRule {
  plugin: string; tool: string | null; mode: ApprovalMode; allow_session_keys: string[]; credential_any_url: boolean;
  legacy_callbacks: boolean; legacy_callback_short_ids: boolean;
}
/**
 * The session key of an agent run's tool calls (issue 16; spec tool-plugins.md §4 `session_key`): `<rule>:<lane>`,
 * the lane being the subject its events share ("" for none). `allow_session_keys` globs match it.
 */
export function toolSessionKey(rule: string, lane: string): string {
  return `${rule}:${lane}`;
}

/** The session key of the owner's own tool calls (`plugins invoke`): `owner:<key name>`. */
export function ownerSessionKey(keyName: string): string {
  return `owner:${keyName}`;
}

/**
 * The mode of a tool no entry of `approvals` names, by the tool's kind: `prompt` for a declarative plugin's HTTP tool
 * (issue 18: the spec's default profile confirms `http.*` before it runs), else `auto`.
 */
export function approvalDefault(kind: string): "auto" | "prompt" {
  return kind === "http" ? "prompt" : "auto";
}

/**
 * The entry of `approvals` that governs tool `qualified` (`<plugin>.<tool>`) of `plugin` (spec tool-plugins.md §8):
 * the one naming this plugin and tool, else the one naming the plugin alone, else null (the default, `auto`).
 * `index` is its place in the file.
 */
export function approvalRuleFor(approvals: readonly ApprovalRule[], plugin: string, qualified: string): { rule: ApprovalRule; index: number } | null {
  let pluginOnly: { rule: ApprovalRule; index: number } | null = null;
  for (const [index, rule] of approvals.entries()) {
    if (rule.plugin !== plugin) continue;
    if (rule.tool === qualified) return { rule, index };
    if (rule.tool === null) pluginOnly ??= { rule, index };
  }
  return pluginOnly;
}

/**
 * Whether `approvals` deny every tool of `plugin` whoever calls (issue 26 round 9): the entry naming the plugin alone
 * says `deny` and no entry naming one of its tools says anything else. Such a plugin is not offered to agents, so its
 * tools are never listed for them (listing runs a plugin whose manifest names none: "a denied plugin never runs").
 */
export function pluginDenied(approvals: readonly ApprovalRule[], plugin: string): boolean {
  const own = approvals.filter((r) => r.plugin === plugin);
  // rules.json holds at most one entry per plugin and tool (rulesJson.approvalTwice): with the plugin's own entry
  // denying, the plugin is denied whole when every entry of it denies
  return own.find((r) => r.tool === null)?.mode === "deny" && own.every((r) => r.mode === "deny");
}

/** One tool call to approve: what is called, by whom, and what is known of the plugin. */
export interface ApprovalAsk {
  /** The plugin's name and the tool as `<plugin>.<tool>`. */
  plugin: string;
  tool: string;
  /** An agent's run, or the owner's own call (`plugins invoke`). */
  caller: "agent" | "owner";
  /** `<rule>:<lane>` for an agent's run, `owner:<key name>` for the owner (issue 16). */
  sessionKey: string;
  /** The manifest's `capabilities.disable_model_invocation`. */
  disableModelInvocation: boolean;
  /** Whether the plugin is built in (its first call by an agent is not forced to `prompt`). */
  builtin: boolean;
  /** Whether the trust list holds this plugin at its current manifest digest (an earlier "always allow"). */
  trusted: boolean;
  /** The tool's kind (`sync`, `async`, `service`, `mcp`, `http`): `approvalDefault` when no entry names the tool. */
  kind: string;
}

/**
 * Why a call gets its mode: `hidden` (the manifest hides the tool from agents), `tool` / `plugin` (the entry of
 * `approvals` at `index` naming the tool / the plugin alone), `default` (no entry: `auto`), `session` (a `prompt`
 * entry's `allow_session_keys` matched), `owner` (the owner is never asked about their own call), `firstUse` (an
 * agent's call of a plugin that is not built in and not trusted at this manifest).
 */
export interface ApprovalVerdict {
  mode: ApprovalMode;
  why: "hidden" | "tool" | "plugin" | "default" | "session" | "owner" | "firstUse";
  /** The entry of `approvals` that decided, by its place in the file; null when none did. */
  index: number | null;
}

/**
 * The approval mode of one call (spec tool-plugins.md §8; issue 16), in this order: a tool the manifest hides from
 * models (`disable_model_invocation`) is refused to agents; then the entry naming plugin and tool, else the plugin
 * alone, else `auto`; a `prompt` entry lets the sessions of its `allow_session_keys` through (as the public
 * implementation, the list applies to `prompt` only: `deny` stays a refusal); no entry: `approvalDefault` of the
 * tool's kind (`prompt` for an HTTP tool, which an "always allow" — the trust list holding the plugin at this digest
 * — lifts, like a first use); the owner's own call is never prompted (`deny` still refuses it); an agent's `auto` call
 * of a plugin that is not built in becomes `prompt` until the trust list holds the plugin at its current manifest
 * digest. Pure.
 */
export function approvalOf(approvals: readonly ApprovalRule[], ask: ApprovalAsk): ApprovalVerdict {
  if (ask.caller === "agent" && ask.disableModelInvocation) return { mode: "deny", why: "hidden", index: null };
  const entry = approvalRuleFor(approvals, ask.plugin, ask.tool);
  let verdict: ApprovalVerdict = entry
    ? { mode: entry.rule.mode, why: entry.rule.tool === null ? "plugin" : "tool", index: entry.index }
    : { mode: ask.trusted ? "auto" : approvalDefault(ask.kind), why: "default", index: null };
  if (verdict.mode === "prompt" && entry && entry.rule.allow_session_keys.some((k) => starMatch(k, ask.sessionKey))) verdict = { ...verdict, mode: "auto", why: "session" };
  if (ask.caller === "owner") return verdict.mode === "prompt" ? { ...verdict, mode: "auto", why: "owner" } : verdict;
  if (verdict.mode === "auto" && !ask.builtin && !ask.trusted) return { ...verdict, mode: "prompt", why: "firstUse" };
  return verdict;
}
