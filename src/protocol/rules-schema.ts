/**
 * rules.json as JSON Schema 2020-12 built with TypeBox (protocol.md 规则; issue 27 "One way to check files"):
 * published as protocol/rules.schema.json (`npm run schema`), so an editor whose file names it in `$schema` completes
 * and explains every field, and compiled to the validator the hub, `check` and the simulation read the file with
 * (files.generated.ts). The kernel's types of the file are `Static` of these (src/kernel/rules.ts).
 *
 * What a schema cannot say — a name that refers to another section, two names sharing one secrets.env variable, a
 * time zone or cron expression this Node knows, fields that go together — is checked by hand after it
 * (src/protocol/rules-file.ts). `null` stands for "not given" in every optional field, as it always did.
 * Each node names the catalog message of its keywords in `x-messages` (src/protocol/file-problems.ts).
 */
import { Type, type Static, type TSchema } from "@sinclair/typebox";
import {
  rulesFileAgentsMax, rulesFileChannelsMax, rulesFileElsewhereMax, rulesFileListItemsMax, rulesFileRulesMax, rulesFileSourcesMax,
  agentEnvNamesMax, agentWritablePathsMax, agentDevicesMax, agentLoopbackPortsMax, rulesFileApprovalsMax, toolPluginNameMaxChars, toolNameMaxChars,
  sessionKeyPatternMaxChars, approvalWaitSecondsMax, ruleStartsPerMinuteFieldMax, ruleStartsPerWindowMax,
} from "../kernel/limits.js";
import { lineForbiddenClass } from "../kernel/text.js";
import { agentEnvNamePattern, assetRefPattern, codePluginNamePattern, namePattern, toolPluginNamePattern } from "../kernel/names.js";
import type { KeywordMessages } from "./file-problems.js";
import { nullable, record } from "./file-schema.js";

const M = "x-messages";
/** One line of text people read: no control characters (src/kernel/text.ts). */
const oneLine = `^[^${lineForbiddenClass}]*$`;
/** A string with something besides spaces. */
const blank = { type: "string", pattern: "^\\s*$" };
/** The longest free text of the file, in code points (a prompt, a path, a command word). */
const textMaxChars = 4000;

interface TextOptions {
  description: string;
  /** At most so many code points (default 4000). */
  max?: number;
  /** Not only spaces. */
  filled?: boolean;
  /** One line: no control characters. */
  line?: boolean;
  /** A pattern of its own and the message that says it. */
  pattern?: { regex: RegExp | string; id: KeywordMessages[string] };
  /** The messages of keywords checked beside the pattern (`allOf`). */
  also?: Record<string, unknown>[];
}

/** A string field of the file. */
function text(o: TextOptions) {
  const max = o.max ?? textMaxChars;
  const messages: Record<string, unknown> = { maxLength: ["rulesJson.maxChars", { max }] };
  const schema: Record<string, unknown> = { description: o.description, maxLength: max };
  if (o.filled) {
    schema.not = blank;
    messages.not = "rulesJson.empty";
  }
  const pattern = o.pattern ?? (o.line ? { regex: oneLine, id: "rulesJson.control" } : undefined);
  if (pattern) {
    schema.pattern = typeof pattern.regex === "string" ? pattern.regex : pattern.regex.source;
    messages.pattern = pattern.id;
  }
  if (o.line && o.pattern) (o.also ??= []).push({ pattern: oneLine, [M]: { pattern: "rulesJson.control" } });
  if (o.also) schema.allOf = o.also;
  return Type.String({ ...schema, [M]: messages });
}

/** A list of non-blank strings (`items` describes one). */
function strings(description: string, item: TextOptions = { description: "one entry", filled: true }, max = rulesFileListItemsMax, tooMany: KeywordMessages[string] = ["rulesJson.tooMany.items", { max }]) {
  return Type.Array(text({ filled: true, ...item }), { description, maxItems: max, [M]: { type: "rulesJson.strings", maxItems: tooMany } });
}

/** An object of named entries (sources, agents, channels): names as keys, at most `max`. */
function named<T extends TSchema>(entry: T, description: string, max: number, tooMany: KeywordMessages[string]) {
  return record(entry, {
    description, maxProperties: max,
    propertyNames: { pattern: namePattern.source, description: "letters, digits, _ . - (at most 100)", [M]: { pattern: "rulesJson.name" } },
    [M]: { maxProperties: tooMany },
  });
}

/** An object that takes only the fields it names. */
function closed<P extends Parameters<typeof Type.Object>[0]>(props: P, description: string, messages: Record<string, unknown> = {}) {
  return Type.Object(props, { description, additionalProperties: false, [M]: messages });
}

const opt = <T extends TSchema>(schema: T) => Type.Optional(nullable(schema));
const bool = (description: string) => opt(Type.Boolean({ description }));
const name = (description: string) => text({ description, max: 100, line: true });
/** A `<plugin>/<name>` of a declarative plugin. */
const assetRef = (description: string) => text({ description, pattern: { regex: assetRefPattern, id: "rulesJson.assetRef" } });
/** A rule's or elsewhere task's name: it stands in URLs and on the terminal. */
const taskName = (description: string) => text({
  description, max: 100, filled: true, line: true,
  also: [{ not: { enum: [".", ".."] }, [M]: { not: "rulesJson.dotName" } }],
});

export const SourceFile = closed({
  name: opt(name("What people read for this source (default: its key).")),
  adapter: opt(text({ description: "The code plugin that turns this source's webhooks into events (a-z, 0-9, -).", pattern: { regex: codePluginNamePattern, id: "rulesJson.pluginName" } })),
}, "A source that may post events with its key (agent-autoloop key new source <name>).");

export const AgentFile = closed({
  name: opt(name("What people read for this agent (default: its key).")),
  worker: text({ description: "The worker that runs this agent (config.json worker.name of that computer).", filled: true, pattern: { regex: namePattern, id: "rulesJson.name" } }),
  use: text({ description: "The agent plugin: claude-code, codex, command, acp, or a plugin of your own (a-z, 0-9, -).", filled: true, pattern: { regex: codePluginNamePattern, id: "rulesJson.pluginName" } }),
  model: opt(text({ description: "The model the agent's CLI uses.", max: 200 })),
  effort: opt(text({ description: "The reasoning effort the agent's CLI uses.", max: 50 })),
  access: opt(Type.Unsafe<"read" | "edit" | "full">({ type: "string", enum: ["read", "edit", "full"], description: "What the agent may do: read, edit (default) or full.", [M]: { enum: "rulesJson.access" } })),
  command: opt(Type.Array(text({ description: "One word of the command.", filled: true }), {
    description: "The program and its arguments (required for use command and acp).", minItems: 1, maxItems: rulesFileListItemsMax,
    [M]: { type: "rulesJson.strings", minItems: "rulesJson.empty", maxItems: ["rulesJson.tooMany.items", { max: rulesFileListItemsMax }] },
  })),
  program: opt(text({ description: "The agent CLI's program, when not the one on PATH." })),
  sandbox: bool("Whether the worker hides its home from this agent with bubblewrap where it can (default true)."),
  env: opt(strings("Environment variables of the worker this agent also gets; NAME_* stands for a prefix.", {
    description: "A variable name or a prefix such as GH_*.", filled: true, pattern: { regex: agentEnvNamePattern, id: "rulesJson.envName" },
    also: [{ not: { type: "string", pattern: "^AGENT_AUTOLOOP_" }, [M]: { not: "rulesJson.envOwn" } }],
  }, agentEnvNamesMax, ["rulesJson.tooMany.names", { max: agentEnvNamesMax }])),
  writable: opt(strings("Folders and files, besides its working folder, the sandbox leaves writable: absolute, or ~/… (docs/guide/sandbox.md).", undefined, agentWritablePathsMax, ["rulesJson.tooMany.paths", { max: agentWritablePathsMax }])),
  readable: opt(strings("Folders and files of the hub user's home the sandbox shows read-only besides what the agent needs (its cwd, its CLI's state, ~/.gitconfig, its PATH's tools): absolute, or ~/… (docs/guide/sandbox.md).", undefined, agentWritablePathsMax, ["rulesJson.tooMany.paths", { max: agentWritablePathsMax }])),
  devices: opt(strings("Host devices the sandbox passes through: GPUs, /dev/kvm, /dev/fuse, … (docs/guide/sandbox.md).", undefined, agentDevicesMax, ["rulesJson.tooMany.paths", { max: agentDevicesMax }])),
  network: opt(Type.Unsafe<"own" | "host">({ type: "string", enum: ["own", "host"], description: "The sandboxed agent's network: own (default: a network of its own that reaches the internet, not the computer's loopback services or listeners) or host (the computer's; docs/guide/sandbox.md).", [M]: { enum: "rulesJson.network" } })),
  loopbackPorts: opt(Type.Array(Type.Integer({ description: "A port of 127.0.0.1 / ::1.", minimum: 1, maximum: 65535, [M]: { type: "rulesJson.port", minimum: "rulesJson.port", maximum: "rulesJson.port" } }), {
    description: "Ports of the computer's loopback an agent with a network of its own reaches (a model proxy, a database; docs/guide/sandbox.md).", maxItems: agentLoopbackPortsMax,
    [M]: { type: "rulesJson.array", maxItems: ["rulesJson.tooMany.items", { max: agentLoopbackPortsMax }] },
  })),
}, "An agent: which worker runs it, with which CLI, model and access.", { required: "rulesJson.required" });

export const ChannelFile = closed({
  name: opt(name("What people read for this channel (default: its key).")),
  answerers: opt(strings("Who may answer cards on this channel (ids of the channel's users); absent: anyone who reaches it.")),
  links: bool("Whether cards on this channel carry a link that answers without a key (default false)."),
}, "A channel cards reach you on (its options live in config.json channels).");

const When = closed({
  source: opt(text({ description: "The source whose events this rule takes." })),
  types: opt(strings("Globs of event types this rule takes (* any run, ? one character; default all).")),
  cron: opt(text({ description: "A cron expression: the rule runs on this schedule (no source or types then)." })),
  intent: opt(assetRef("A declarative intent <plugin>/<id> the event must hit; without source, events of any source.")),
}, "Which events start this rule: {source, types}, {intent} or {cron}.", { type: "rulesJson.when", required: "rulesJson.when" });

const Emits = closed({
  source: text({ description: "The source of the events this rule's runs emit.", filled: true }),
  types: opt(strings("Globs of the types they may have (default all).")),
}, "The events this rule's runs may emit.", { type: "rulesJson.emits" });

/** A positive number of a budget (finite: 1e999 reads as Infinity). */
const positive = (description: string) => opt(Type.Number({ description, exclusiveMinimum: 0, maximum: Number.MAX_VALUE, [M]: { type: "rulesJson.positive", exclusiveMinimum: "rulesJson.positive", maximum: "rulesJson.positive" } }));

export const BudgetFile = closed({
  cost: positive("The most this rule may spend per period, in the agent's currency."),
  tokens: positive("The most tokens this rule may use per period."),
  per: opt(Type.Unsafe<"day" | "week">({ type: "string", enum: ["day", "week"], description: "The period: day (default) or week.", [M]: { enum: "rulesJson.per" } })),
}, "A budget: cost or tokens (or both) per day or week.", { type: "rulesJson.budget" });

/**
 * A rule's name: a task's name without ":" — a tool call's session key is `<rule>:<lane>`, so a rule `ops` with the lane
 * `prod:x` and a rule `ops:prod` with the lane `x` would share one, and `allow_session_keys` or an "allow once" meant
 * for one would let the other through (issue 26 round 53, F53b-4).
 */
const ruleName = (description: string) => {
  const s = taskName(description) as unknown as { allOf: unknown[] };
  s.allOf.push({ pattern: "^[^:]*$", [M]: { pattern: "rulesJson.ruleColon" } });
  // `owner:<key name>` is the session key of the owner's own calls (round 55, F55-5).
  s.allOf.push({ not: { const: "owner" }, [M]: { not: "rulesJson.ruleOwner" } });
  return s as unknown as ReturnType<typeof taskName>;
};

export const RuleFile = closed({
  name: ruleName("The rule's name (no \":\"): it stands in URLs and on cards."),
  when: When,
  to: text({ description: "The agent that runs it (a key of agents).", filled: true }),
  cwd: opt(text({ description: "The folder the agent works in." })),
  skill: opt(text({ description: "The skill the agent uses.", max: 200 })),
  prompt: opt(text({ description: "What the agent is asked to do, besides the event." })),
  group: opt(text({ description: "Rules of one group share one lane of runs (default: the rule's name).", max: 100, filled: true, line: true })),
  parallel: opt(Type.Integer({ description: "How many runs of this rule at once.", minimum: 1, maximum: Number.MAX_SAFE_INTEGER, [M]: { type: "rulesJson.parallel", minimum: "rulesJson.parallel", maximum: "rulesJson.parallel" } })),
  resume: bool("Whether a run continues the agent's last session of its lane (default false)."),
  startsPerMinute: opt(Type.Integer({
    description: `How many runs this rule's events may start within a minute before the rule is paused and you are asked (default ${ruleStartsPerWindowMax}: a loop's brake; raise it for a rule meant to take thousands of events a minute).`,
    minimum: 1, maximum: ruleStartsPerMinuteFieldMax,
    [M]: Object.fromEntries(["type", "minimum", "maximum"].map((k) => [k, ["rulesJson.startsPerMinute", { max: ruleStartsPerMinuteFieldMax }]])),
  })),
  tell: opt(Type.Unsafe<"always" | "needed" | "never">({ type: "string", enum: ["always", "needed", "never"], description: "When a run's end reaches you: always, needed (default) or never.", [M]: { enum: "rulesJson.tell" } })),
  emits: opt(Emits),
  channels: opt(strings("The channels this rule's cards go to (keys of channels; default all).")),
  budget: opt(BudgetFile),
  tools: opt(strings("The tools this rule's agent is offered: <plugin>.<tool>, * for any run of characters in the tool's part.", {
    description: "<plugin>.<tool>, such as file-ops.*", filled: true,
    pattern: { regex: `^[A-Za-z0-9][A-Za-z0-9_-]{0,${toolPluginNameMaxChars - 1}}\\.[A-Za-z0-9_.*-]{1,${toolNameMaxChars}}$`, id: "rulesJson.toolPattern" },
  })),
  use: opt(Type.Unsafe<"workflow">({ type: "string", enum: ["workflow"], description: "\"workflow\": the rule's runs execute the declarative workflow named in workflow.", [M]: { enum: "rulesJson.ruleUse" } })),
  workflow: opt(assetRef("The declarative workflow <plugin>/<id> the rule runs (with \"use\": \"workflow\").")),
  promptRef: opt(assetRef("A declarative prompt <plugin>/<name> whose text comes before prompt.")),
}, "A rule: which events go to which agent, where, with which skill, and what reaches you.");

export const ElsewhereFile = closed({
  name: taskName("The task's name."),
  source: opt(text({ description: "The source its cards and runs are of (a key of sources)." })),
  to: opt(text({ description: "The agent that runs it (a key of agents)." })),
  cron: opt(text({ description: "A cron expression: when it is due." })),
  where: opt(text({ description: "Where it is done, in words.", line: true })),
  cwd: opt(text({ description: "The folder the agent works in (with to)." })),
  skill: opt(text({ description: "The skill the agent uses.", max: 200 })),
  prompt: opt(text({ description: "What the agent is asked to do." })),
}, "A task done elsewhere that you want to be reminded of or run.");

export const ApprovalFile = closed({
  plugin: text({ description: "The tool plugin this entry is about.", filled: true, pattern: { regex: `^(?=.{1,${toolPluginNameMaxChars}}$)${toolPluginNamePattern.source.slice(1)}`, id: ["rulesJson.toolPlugin", { max: toolPluginNameMaxChars }] } }),
  tool: opt(text({ description: "One tool of the plugin, <plugin>.<tool> (no *); absent: all its tools." })),
  mode: Type.Unsafe<"auto" | "prompt" | "deny">({ type: "string", enum: ["auto", "prompt", "deny"], description: "auto: run; prompt: ask you first; deny: refuse.", [M]: { enum: "rulesJson.approvalMode" } }),
  allow_session_keys: opt(strings("Sessions (<rule>:<lane>, owner:<key>) whose calls need no approval where the mode is prompt; * any run of characters.", {
    description: "A session key pattern.", filled: true, line: true, max: sessionKeyPatternMaxChars,
  })),
  credential_any_url: bool("Lets an agent call this HTTP tool although its url is a placeholder the agent fills in and it sends a credential (an entry naming the tool only)."),
  legacy_callbacks: bool("Lets this async plugin complete its tasks through the legacy /plugin-callback/<task_id> path, without its callback_url's key, with task ids of 16 characters or more: any local process that can reach the hub and guess an id could complete that task (an entry naming the plugin only; default: refused)."),
  legacy_callback_short_ids: bool("Lets this async plugin complete its tasks through the legacy /plugin-callback/<task_id> path with task ids shorter than 16 characters too, which any local process that can reach the hub could guess (an entry naming the plugin only; implies legacy_callbacks; corlinman's docs plugins)."),
}, "How calls of a tool plugin's tools are approved (spec tool-plugins.md §8).");

/** rules.json (protocol.md 规则). */
export const RulesFile = Type.Object({
  $schema: Type.Optional(Type.Unknown({ description: "The schema this file follows, for editors (not read)." })),
  timezone: opt(text({ description: "The IANA time zone of cron rules and \"today\" (default: this computer's)." })),
  askFirst: opt(strings("Only these kinds of actions make an agent ask you first.")),
  sources: opt(named(SourceFile, "Who may post events, by name.", rulesFileSourcesMax, ["rulesJson.tooMany.sources", { max: rulesFileSourcesMax }])),
  agents: opt(named(AgentFile, "Who does the work, by name.", rulesFileAgentsMax, ["rulesJson.tooMany.agents", { max: rulesFileAgentsMax }])),
  channels: opt(named(ChannelFile, "Where cards reach you, by name.", rulesFileChannelsMax, ["rulesJson.tooMany.channels", { max: rulesFileChannelsMax }])),
  rules: opt(Type.Array(RuleFile, { description: "Which event goes to which agent.", maxItems: rulesFileRulesMax, [M]: { maxItems: ["rulesJson.tooMany.rules", { max: rulesFileRulesMax }] } })),
  elsewhere: opt(Type.Array(ElsewhereFile, { description: "Tasks done elsewhere.", maxItems: rulesFileElsewhereMax, [M]: { maxItems: ["rulesJson.tooMany.tasks", { max: rulesFileElsewhereMax }] } })),
  approvals: opt(Type.Array(ApprovalFile, { description: "How tool calls are approved; the entry naming the tool wins over the one naming its plugin.", maxItems: rulesFileApprovalsMax, [M]: { maxItems: ["rulesJson.tooMany.approvals", { max: rulesFileApprovalsMax }] } })),
  approvalWaitSeconds: opt(Type.Integer({ description: "How long a call in prompt mode waits for your answer, in seconds (default 60).", minimum: 0, maximum: approvalWaitSecondsMax, [M]: { type: ["rulesJson.approvalWait", { max: approvalWaitSecondsMax }], minimum: ["rulesJson.approvalWait", { max: approvalWaitSecondsMax }], maximum: ["rulesJson.approvalWait", { max: approvalWaitSecondsMax }] } })),
}, { title: "agent-autoloop rules.json", description: "Which event goes to which agent, where, with which skill, and what reaches you (JSONC: comments and trailing commas allowed).", additionalProperties: false, [M]: { type: "rulesJson.notObject" } });

export type RulesFile = Static<typeof RulesFile>;
export type SourceFile = Static<typeof SourceFile>;
export type AgentFile = Static<typeof AgentFile>;
export type ChannelFile = Static<typeof ChannelFile>;
export type RuleFile = Static<typeof RuleFile>;
export type ElsewhereFile = Static<typeof ElsewhereFile>;
export type ApprovalFile = Static<typeof ApprovalFile>;
export type BudgetFile = Static<typeof BudgetFile>;
