/**
 * rules.json as the kernel reads it (protocol.md 规则): the normalized rules — every optional field present with its
 * default, names resolved — and what the kernel asks of them. The file's own shape is the schema's
 * (src/protocol/rules-schema.ts, published as protocol/rules.schema.json); the types here derive from it. Reading and
 * checking a file is src/protocol/rules-file.ts; glob matching is glob.ts, approvals approvals.ts (re-exported here).
 */
import type { AgentFile, BudgetFile, RuleFile } from "../protocol/rules-schema.js";
import { approvalWaitSecondsDefault, ruleStartsPerWindowMax } from "./limits.js";
import { namePattern, secretsEnvName } from "./names.js";
import { starMatch } from "./glob.js";
import type { ApprovalRule } from "./approvals.js";

export { globMatch, anyGlob, starMatch } from "./glob.js";
export {
  approvalDefault, approvalOf, approvalRuleFor, ownerSessionKey, pluginDenied, toolSessionKey,
  type ApprovalAsk, type ApprovalMode, type ApprovalRule, type ApprovalVerdict,
} from "./approvals.js";
export { assetRefPattern, toolNamePattern, toolPluginNamePattern } from "./names.js";

/** What an agent may do (`access`; default `edit`). */
export type Access = NonNullable<AgentFile["access"]>;
/** When a run's end reaches the owner (`tell`; default `needed`). */
export type Tell = NonNullable<RuleFile["tell"]>;

export interface SourceDef { id: string; name: string; adapter: string | null }
export interface AgentDef {
  id: string; name: string; worker: string; use: string;
  model: string | null; effort: string | null; access: Access;
  command: string[] | null; program: string | null;
  /** Whether the worker hides its home from this agent with bubblewrap where it can (absent: true). */
  sandbox: boolean;
  /** Names of the worker's environment variables this agent also gets; `NAME_*` stands for a prefix. */
  env: string[];
  /**
   * Folders and files, besides its cwd, temporary folders and its CLI's own state, that the sandbox leaves writable
   * for this agent (issue 26): absolute, or `~/…` for the worker's user's home. Empty: none.
   */
  writable: string[];
  /**
   * Folders and files of the hub user's home that the sandbox shows read-only to this agent besides what it needs
   * (issue 26 round 11, F8/F10: the rest of the home is hidden): absolute, or `~/…`. Empty: none.
   */
  readable: string[];
  /** Host devices the sandbox passes through to this agent besides its minimal `/dev` (issue 26; src/kernel/devices.ts). */
  devices: string[];
  /**
   * The network of a sandboxed agent (issue 26 round 33, F33a-1; src/worker/sandbox-network.ts): `own`, a network
   * namespace of its own reaching the internet through pasta, or `host`, the computer's (absent: own).
   */
  network: "own" | "host";
  /** Ports of the computer's loopback (127.0.0.1, ::1) an agent with a network of its own reaches. Empty: none named. */
  loopbackPorts: number[];
}
export interface ChannelDef { id: string; name: string; answerers: string[] | null; links: boolean }
export interface Budget { cost: number | null; tokens: number | null; per: NonNullable<BudgetFile["per"]> }
export interface RuleDef {
  name: string;
  /**
   * Event rules: `source` + `types` globs; intent rules without a source: `intent:<plugin>/<id>` (`anySource`: events
   * of any source); cron rules: `cron` (source `schedule`). The source of the rule's own cards and events.
   */
  source: string; types: string[]; cron: string | null;
  to: string; cwd: string | null; skill: string | null; prompt: string | null;
  group: string; parallel: number | null; resume: boolean; tell: Tell;
  emits: { source: string; types: string[] } | null;
  channels: string[] | null;
  budget: Budget | null;
  /**
   * The tools this rule's agent is offered (issue 16): `<plugin>.<tool>` patterns, `*` any run of characters in the
   * tool's part. Absent when the file gives none (read as none: `ruleTools`), so such files normalize as before.
   */
  tools?: string[];
  /**
   * `"use": "workflow"` (issue 18 "Workflows run"): the rule's runs execute the declarative workflow `workflow`
   * (`<plugin>/<id>`) step by step, its `prompt` steps as turns of the rule's agent `to`. Absent for an ordinary rule.
   */
  use?: "workflow";
  workflow?: string;
  /**
   * `when.intent` (issue 18 "Intents"): a declarative intent `<plugin>/<id>` the event's summary or detail must hit. With
   * no `when.source`, the rule takes events of any source and `source` is `intentSource(intent)` (`anySource`).
   */
  intent?: string;
  /** `promptRef` (issue 18 "Prompts"): a declarative prompt `<plugin>/<name>` whose text comes before `prompt`. */
  promptRef?: string;
  /**
   * `startsPerMinute`: how many runs this rule's events may start per `ruleStartsWindowMs` before it is paused
   * (src/kernel/rate.ts), 1 to `ruleStartsPerMinuteFieldMax`. Absent when the file gives none (so such files normalize
   * and hash as before): `ruleStartsPerWindowMax`, read through `ruleStartsMax`.
   */
  startsPerMinute?: number;
}
export interface ElsewhereDef {
  name: string; source: string | null; to: string | null; cron: string | null; where: string | null;
  cwd: string | null; skill: string | null; prompt: string | null;
}
/**
 * The normalized rule file. Every optional field is present, with its default filled in — except the fields of tool
 * plugins (issue 16: a rule's `tools`, `approvals`, `approvalWaitSeconds`), present only when the file gives them, so
 * that files without them normalize (and hash) as before and rules an older hub kept in its log read the same way.
 * Read them through `ruleTools`, `approvalsOf` and `approvalWaitSecondsOf`.
 */
export interface Rules {
  timezone: string;
  askFirst: string[];
  sources: Record<string, SourceDef>;
  agents: Record<string, AgentDef>;
  channels: Record<string, ChannelDef>;
  rules: RuleDef[];
  elsewhere: ElsewhereDef[];
  /** How tool calls are approved, matched in order of precedence by `approvalOf` (absent: none, every call `auto`). */
  approvals?: ApprovalRule[];
  /** How long an agent's call in `prompt` mode waits for the owner, in seconds (absent: `approvalWaitSecondsDefault`). */
  approvalWaitSeconds?: number;
}

/** The source name of cron rules' events (protocol.md 暂停、恢复、立即运行). */
export const scheduleSource = "schedule";
/** The source of cards and runs of `elsewhere` tasks that name no source. */
export const elsewhereSource = "elsewhere";
/** Source names the hub uses for its own events: a rules file cannot declare them and no key is made for them. */
export const reservedSources: readonly string[] = [scheduleSource, elsewhereSource];
/**
 * The source of a declarative plugin's events (issue 18: an `actions` button or a `form` submit in the console):
 * `plugin:<id>`. A rule routes it without declaring it in `sources` (the hub alone posts it, for the owner; a key
 * name cannot hold `:`, so no source key can post as a plugin).
 */
export const pluginSourcePattern = /^plugin:[a-z0-9][a-z0-9-]{0,63}$/;
/** The source name of declarative plugin `id`'s events. */
export function pluginSource(id: string): string {
  return `plugin:${id}`;
}
/**
 * The source of the events a rule whose `when` names an intent and no source makes itself (issue 18 "Intents": such a
 * rule takes events of any source that hit the intent): its cards, answer events, timer events and manual runs are of
 * source `intent:<plugin>/<id>`, as a cron rule's are of `schedule`. No source key, adapter or plugin can post as it
 * (a source name cannot hold `:` or `/`), and a rules file cannot name it as a source.
 */
export function intentSource(intent: string): string {
  return `intent:${intent}`;
}
/** Whether `rule` takes events of any source (its `when` names an intent and no source): see `intentSource`. */
export function anySource(rule: RuleDef): boolean {
  return rule.intent !== undefined && rule.source === intentSource(rule.intent);
}
/**
 * Whether a card of `rule`'s run may show the card template `ref` (`<plugin>/<template>`): only one of a plugin the rule
 * is tied to — its source (`plugin:<id>`), its intent, its emits' source, its workflow, its prompt, its tools (a tool
 * pattern whose plugin part is `*` ties every plugin). A template's buttons and forms post that plugin's events as the
 * owner; an agent must not put another plugin's in a card of its own (issue 26 round 35, F35b-1: a rule's agent showed
 * the example plugin's "Got it" in its question, and the owner's press started that plugin's rule).
 */
export function templateTied(rule: RuleDef | undefined, ref: string): boolean {
  if (!rule) return false;
  const plugin = ref.slice(0, ref.indexOf("/"));
  const ofSource = (s: string | undefined) => (s?.startsWith("plugin:") ? s.slice("plugin:".length) : null);
  const ofRef = (r: string | undefined) => (r && r.includes("/") ? r.slice(0, r.indexOf("/")) : null);
  const tied = [ofSource(rule.source), ofSource(rule.emits?.source), ofRef(rule.intent), ofRef(rule.workflow), ofRef(rule.promptRef)];
  if (tied.includes(plugin)) return true;
  return (rule.tools ?? []).some((t) => {
    const head = t.includes(".") ? t.slice(0, t.indexOf(".")) : t;
    return head === plugin || head.includes("*");
  });
}
/** Control characters that key names made before names followed `isName` could not hold (C0 and DEL only). */
const oldControlCharacter = /[\u0000-\u001f\u007f]/;

/** Whether `name` can name a source, agent, channel, worker or key: letters, digits, _ . -, at most 100, starting with a letter or digit. */
export function isName(name: string): boolean {
  return namePattern.test(name);
}

/**
 * Whether a key of this name can be removed: keys made before key names followed `isName` may hold any 1–100 code
 * points without control characters or "/", and must stay removable.
 */
export function isOldKeyName(name: string): boolean {
  return name !== "" && [...name].length <= 100 && !oldControlCharacter.test(name) && !name.includes("/");
}

/** See names.ts: two names that give the same secrets.env variable are refused in one rules file. */
export { secretsEnvName };

/** A rule's tool patterns (none when the file gave none). */
export function ruleTools(rule: RuleDef): string[] {
  return rule.tools ?? [];
}

/** Whether `rule` offers tool `qualified` (`<plugin>.<tool>`) to its agent: one of its `tools` patterns matches it. */
export function ruleOffers(rule: RuleDef, qualified: string): boolean {
  return ruleTools(rule).some((p) => starMatch(p, qualified));
}

/** How many runs `rule`'s events may start within `ruleStartsWindowMs` before it is paused (src/kernel/rate.ts). */
export function ruleStartsMax(rule: RuleDef): number {
  return rule.startsPerMinute ?? ruleStartsPerWindowMax;
}

/** The approval rules of a rule file (none when it gave none). */
export function approvalsOf(rules: Rules): ApprovalRule[] {
  return rules.approvals ?? [];
}

/** How long an agent's call in `prompt` mode waits for the owner's answer, in seconds. */
export function approvalWaitSecondsOf(rules: Rules): number {
  return rules.approvalWaitSeconds ?? approvalWaitSecondsDefault;
}
