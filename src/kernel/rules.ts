/**
 * rules.json: parsing (JSONC: comments and trailing commas), validation with line and column, normalization.
 * Pure: text in, normalized rules or one error out (protocol.md 规则). Used by the hub, `check` and the simulation.
 */
import { parseTree, findNodeAtLocation, getNodeValue, printParseErrorCode, createScanner, SyntaxKind, type ParseError, type ParseErrorCode, type JSONPath, type Node } from "jsonc-parser";
import { Cron } from "croner";
import { own } from "./own.js";
import {
  rulesFileAgentsMax, rulesFileChannelsMax, rulesFileDepthMax, rulesFileElsewhereMax, rulesFileListItemsMax, rulesFileMaxBytes,
  rulesFileRulesMax, rulesFileSourcesMax, agentEnvNamesMax, agentWritablePathsMax, agentDevicesMax, rulesFileApprovalsMax, toolPluginNameMaxChars, toolNameMaxChars,
  sessionKeyPatternMaxChars, approvalWaitSecondsDefault, approvalWaitSecondsMax,
} from "./limits.js";
import { lineForbidden } from "./text.js";
import { t, type Lang, type MessageId } from "../i18n/messages.js";
import { secretsEnvName } from "./names.js";
import { devicePathProblem } from "./devices.js";

export type Access = "read" | "edit" | "full";
export type Tell = "always" | "needed" | "never";

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
  /** Host devices the sandbox passes through to this agent besides its minimal `/dev` (issue 26; src/kernel/devices.ts). */
  devices: string[];
}
export interface ChannelDef { id: string; name: string; answerers: string[] | null; links: boolean }
export interface Budget { cost: number | null; tokens: number | null; per: "day" | "week" }
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
}
/** How a tool call is approved (spec tool-plugins.md §8): run it, ask the owner first, or refuse it. */
export type ApprovalMode = "auto" | "prompt" | "deny";
/**
 * One entry of `approvals` (spec tool-plugins.md §8, as the public implementation's `[[approvals.rules]]`): the mode
 * of the calls of `plugin`'s tool `tool` (`<plugin>.<tool>`), or of all its tools when `tool` is null; calls whose
 * session key matches one of `allow_session_keys` (`*` any run of characters) need no approval where the mode says
 * `prompt`. `credential_any_url` (issue 26 #11; an entry naming the tool only): the owner lets an agent call this HTTP
 * tool although its url is one placeholder the agent fills in and it sends a credential — without it such calls are
 * denied, since any declared host, echoing the credential transformed, could hand it to the agent.
 */
export interface ApprovalRule { plugin: string; tool: string | null; mode: ApprovalMode; allow_session_keys: string[]; credential_any_url: boolean }
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
/** Names of sources, agents, channels, workers: what a key name and a URL segment can carry. */
const namePattern = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;
/** An environment variable name, or a prefix of names written `PREFIX_*`. */
const envNamePattern = /^[A-Za-z_][A-Za-z0-9_]{0,99}$|^[A-Za-z][A-Za-z0-9_]{0,98}_\*$/;
/** A tool plugin's name (spec tool-plugins.md §2): letters, digits, `_` and `-` (a `.` would split `<plugin>.<tool>`). */
export const toolPluginNamePattern = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
/** A tool's name within its plugin: letters, digits, `_`, `-` and `.` (as MCP tool names). */
export const toolNamePattern = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
/** The tool part of a rule's `tools` entry: a tool's name in which `*` stands for any run of characters. */
const toolGlobPattern = /^[A-Za-z0-9_.*-]+$/;
/** Control characters, as the protocol's "no control characters" fields define them (src/kernel/text.ts). */
const controlCharacter = lineForbidden;
/** What key names refused before names followed `isName` (C0 and DEL only): such keys must stay removable. */
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

export type RulesParse = { ok: true; rules: Rules } | { ok: false; error: string; line: number; column: number };

/** What is wrong with a rule file, as a message of the catalog, and where. */
type Problem = { id: MessageId; params?: Record<string, string | number> };

class RulesError extends Error {
  constructor(readonly problem: Problem, readonly path: JSONPath) { super(problem.id); }
}

/** 1-based line and column (in UTF-16 code units, as editors count) of a UTF-16 offset in `text`. */
function lineColumn(text: string, offset: number): { line: number; column: number } {
  const lines = text.slice(0, offset).split("\n");
  return { line: lines.length, column: lines[lines.length - 1]!.length + 1 };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * A syntax error of jsonc-parser in words (the catalog's `jsonSyntax.*`, one text for each code of its
 * `ParseErrorCode`); a code the library adds later reads as "a JSON syntax error (code N)".
 */
export function jsonSyntaxText(code: ParseErrorCode, lang: Lang): string {
  const name = printParseErrorCode(code);
  return name === "<unknown ParseErrorCode>" ? t(lang, "jsonSyntax.unknown", { code }) : t(lang, `jsonSyntax.${name}`);
}

/**
 * Reads a rule file's text. Never throws: a bad file gives `{ok:false, error, line, column}`, the error worded in
 * `lang` (default English) from the message catalog. The file's size, depth and lists are checked before anything
 * walks it (limits.ts: rulesFile…), so no file can exhaust the stack or stall a reader.
 */
export function parseRules(text: string, defaults: { timezone: string }, lang: Lang = "en"): RulesParse {
  if (Buffer.byteLength(text, "utf8") > rulesFileMaxBytes) {
    return { ok: false, error: t(lang, "rulesJson.tooLarge", { mib: rulesFileMaxBytes / 1024 / 1024, limit: rulesFileMaxBytes }), line: 1, column: 1 };
  }
  const deep = tooDeep(text);
  if (deep !== null) return { ok: false, error: t(lang, "rulesJson.tooDeep", { max: rulesFileDepthMax }), ...lineColumn(text, deep) };
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  const e = errors[0];
  if (e) return { ok: false, error: t(lang, "rulesJson.syntax", { code: jsonSyntaxText(e.error, lang) }), ...lineColumn(text, e.offset) };
  // A text without a value (empty, only spaces or comments) is a ValueExpected error above: here there is a tree.
  const root = tree as Node;
  const at = (path: JSONPath, problem: Problem) => t(lang, "rulesJson.at", { path: where(path), message: t(lang, problem.id, problem.params) });
  const long = tooLong(root);
  if (long) return { ok: false, error: at(long.path, { id: long.id, params: { max: long.max } }), ...lineColumn(text, long.first.offset) };
  const twice = keyGivenTwice(root, []);
  if (twice) return { ok: false, error: at(twice.path, { id: "rulesJson.twice" }), ...lineColumn(text, twice.offset) };
  // Objects without a prototype: "__proto__" is a key like any other (refused as an unknown field or a bad name).
  const value: unknown = getNodeValue(root);
  try {
    return { ok: true, rules: normalizeRules(value, defaults) };
  } catch (err) {
    if (!(err instanceof RulesError)) throw err;
    // A missing field has no node: point at the object that lacks it.
    const node = findNodeAtLocation(root, err.path) ?? findNodeAtLocation(root, err.path.slice(0, -1)) ?? root;
    return { ok: false, error: at(err.path, err.problem), ...lineColumn(text, node.offset) };
  }
}

/**
 * The offset of the first object or array that opens more than `rulesFileDepthMax` deep, or null. One pass over the
 * tokens, without recursion (strings and comments are tokens of their own). A closing bracket counts only when it
 * closes the innermost opening one, so no text, however broken, nests deeper for the parser than counted here.
 */
function tooDeep(text: string): number | null {
  const scanner = createScanner(text, true);
  const open: SyntaxKind[] = [];
  for (let token = scanner.scan(); token !== SyntaxKind.EOF; token = scanner.scan()) {
    if (token === SyntaxKind.OpenBraceToken || token === SyntaxKind.OpenBracketToken) {
      if (open.push(token) > rulesFileDepthMax) return scanner.getTokenOffset();
    } else if (token === closing(open[open.length - 1])) open.pop();
  }
  return null;
}

function closing(opening: SyntaxKind | undefined): SyntaxKind | null {
  return opening === SyntaxKind.OpenBraceToken ? SyntaxKind.CloseBraceToken : opening === SyntaxKind.OpenBracketToken ? SyntaxKind.CloseBracketToken : null;
}

/** The lists of the file that grow with it: where they are (`*`: any entry) and how many items each may hold. */
const listLimits: { path: string[]; max: number; id: MessageId }[] = [
  { path: ["askFirst"], max: rulesFileListItemsMax, id: "rulesJson.tooMany.items" },
  { path: ["sources"], max: rulesFileSourcesMax, id: "rulesJson.tooMany.sources" },
  { path: ["agents"], max: rulesFileAgentsMax, id: "rulesJson.tooMany.agents" },
  { path: ["agents", "*", "command"], max: rulesFileListItemsMax, id: "rulesJson.tooMany.items" },
  { path: ["channels"], max: rulesFileChannelsMax, id: "rulesJson.tooMany.channels" },
  { path: ["channels", "*", "answerers"], max: rulesFileListItemsMax, id: "rulesJson.tooMany.items" },
  { path: ["rules"], max: rulesFileRulesMax, id: "rulesJson.tooMany.rules" },
  { path: ["rules", "*", "when", "types"], max: rulesFileListItemsMax, id: "rulesJson.tooMany.items" },
  { path: ["rules", "*", "emits", "types"], max: rulesFileListItemsMax, id: "rulesJson.tooMany.items" },
  { path: ["rules", "*", "channels"], max: rulesFileListItemsMax, id: "rulesJson.tooMany.items" },
  { path: ["rules", "*", "tools"], max: rulesFileListItemsMax, id: "rulesJson.tooMany.items" },
  { path: ["elsewhere"], max: rulesFileElsewhereMax, id: "rulesJson.tooMany.tasks" },
  { path: ["approvals"], max: rulesFileApprovalsMax, id: "rulesJson.tooMany.approvals" },
  { path: ["approvals", "*", "allow_session_keys"], max: rulesFileListItemsMax, id: "rulesJson.tooMany.items" },
];

/** Whether `path` is `pattern` (`exact`) or leads into it. */
function along(path: JSONPath, pattern: string[], exact: boolean): boolean {
  if (exact ? path.length !== pattern.length : path.length > pattern.length) return false;
  return path.every((p, i) => pattern[i] === "*" || pattern[i] === String(p));
}

/**
 * The first list over its limit in the order of the file (its path, the first item past the limit, the limit), or
 * null. Walks only the containers that lead to a limited list, with a stack of its own instead of recursion.
 */
function tooLong(root: Node): { path: JSONPath; first: Node; max: number; id: MessageId } | null {
  const stack: { node: Node; path: JSONPath }[] = [{ node: root, path: [] }];
  for (let top = stack.pop(); top; top = stack.pop()) {
    const children = top.node.children ?? [];
    const limit = listLimits.find((l) => along(top!.path, l.path, true));
    if (limit && children.length > limit.max) return { path: top.path, first: children[limit.max]!, max: limit.max, id: limit.id };
    const inside = top.node.type === "object"
      ? children.map((prop) => ({ node: prop.children![1]!, path: [...top!.path, String(prop.children![0]!.value)] }))
      : children.map((node, i) => ({ node, path: [...top!.path, i] }));
    stack.push(...inside.filter((c) => listLimits.some((l) => along(c.path, l.path, false))).reverse());
  }
  return null;
}

/** The first property whose key its object already had (path and offset of the later one's value), or null. */
function keyGivenTwice(node: Node, path: JSONPath): { path: JSONPath; offset: number } | null {
  const children = node.children ?? [];
  if (node.type === "array") {
    for (const [i, child] of children.entries()) {
      const hit = keyGivenTwice(child, [...path, i]);
      if (hit) return hit;
    }
  }
  if (node.type === "object") {
    const seen = new Set<string>();
    for (const prop of children) {
      const [k, v] = prop.children as [Node, Node];
      const key = String(k.value);
      if (seen.has(key)) return { path: [...path, key], offset: v.offset };
      seen.add(key);
      const hit = keyGivenTwice(v, [...path, key]);
      if (hit) return hit;
    }
  }
  return null;
}

function where(path: JSONPath): string {
  let out = "";
  for (const p of path) out += typeof p === "number" ? `[${p}]` : out ? `.${p}` : p;
  return out;
}

/** Refuses the file: what is wrong at `path`, as message `id` of the catalog with `params`. */
function fail(path: JSONPath, id: MessageId, params?: Problem["params"]): never {
  throw new RulesError({ id, params }, path);
}

/**
 * A string field. `required`: present and not only spaces; `filled`: when present, not only spaces; `line`: one line
 * of text people read (a name, a title): no control characters; `max`: at most so many code points (default 4000).
 */
function str(v: unknown, path: JSONPath, opts: { required?: boolean; filled?: boolean; line?: boolean; max?: number } = {}): string | null {
  if (v === undefined || v === null) {
    if (opts.required) fail(path, "rulesJson.required");
    return null;
  }
  if (typeof v !== "string") fail(path, "rulesJson.string");
  if ((opts.required || opts.filled) && v.trim() === "") fail(path, "rulesJson.empty");
  if (opts.line && controlCharacter.test(v)) fail(path, "rulesJson.control");
  if ([...v].length > (opts.max ?? 4000)) fail(path, "rulesJson.maxChars", { max: opts.max ?? 4000 });
  return v;
}

function strings(v: unknown, path: JSONPath): string[] | null {
  if (v === undefined || v === null) return null;
  if (!Array.isArray(v)) fail(path, "rulesJson.strings");
  return v.map((x, i) => str(x, [...path, i], { required: true }) as string);
}

/** An agent's `env`: variable names (`NAME_*` for a prefix), never the worker's own `AGENT_AUTOLOOP_*`. */
function envNames(v: unknown, path: JSONPath): string[] {
  const names = strings(v, path) ?? [];
  if (names.length > agentEnvNamesMax) fail(path, "rulesJson.tooMany.names", { max: agentEnvNamesMax });
  for (const [i, n] of names.entries()) {
    if (!envNamePattern.test(n)) fail([...path, i], "rulesJson.envName");
    if (n.startsWith("AGENT_AUTOLOOP_")) fail([...path, i], "rulesJson.envOwn");
  }
  return names;
}

/**
 * An agent's `writable` (issue 26): absolute paths or `~/…`, written plainly (no `.` or `..` part, no doubled `/`),
 * never `/` or `~` itself (the sandbox keeps the home read-only: see src/worker/sandbox.ts). Whether a path exists,
 * holds the home or lies in a read-only folder is the worker's check: it knows the computer.
 */
function writablePaths(v: unknown, path: JSONPath): string[] {
  const paths = strings(v, path) ?? [];
  if (paths.length > agentWritablePathsMax) fail(path, "rulesJson.tooMany.paths", { max: agentWritablePathsMax });
  for (const [i, w] of paths.entries()) {
    const rest = w.startsWith("~/") ? w.slice(1) : w;
    const plain = rest.startsWith("/") && !rest.includes("//") && !rest.split("/").some((part) => part === "." || part === "..");
    if (!plain || controlCharacter.test(w) || rest.replace(/\/+$/, "") === "") fail([...path, i], "rulesJson.writablePath");
  }
  return paths;
}

/** An agent's `devices` (issue 26): device paths a sandbox may pass through (src/kernel/devices.ts), each once. */
function devicePaths(v: unknown, path: JSONPath): string[] {
  const paths = strings(v, path) ?? [];
  if (paths.length > agentDevicesMax) fail(path, "rulesJson.tooMany.paths", { max: agentDevicesMax });
  for (const [i, d] of paths.entries()) {
    const problem = devicePathProblem(d);
    if (problem === "form") fail([...path, i], "rulesJson.devicePath");
    if (problem === "notPassable") fail([...path, i], "rulesJson.deviceNotPassable");
  }
  return paths;
}

function known(obj: Record<string, unknown>, path: JSONPath, keys: string[]): void {
  for (const k of Object.keys(obj)) if (!keys.includes(k)) fail([...path, k], "rulesJson.unknownField", { known: keys.join(", ") });
}

/** A rule's or elsewhere task's name: it stands in URLs (/v1/rules/<name>/pause) and on the terminal. */
function ruleName(v: unknown, path: JSONPath): string {
  const n = str(v, path, { required: true, max: 100, line: true }) as string;
  if (n === "." || n === "..") fail(path, "rulesJson.dotName");
  return n;
}

function name(v: string, path: JSONPath): string {
  if (!namePattern.test(v)) fail(path, "rulesJson.name");
  return v;
}

/** Whether `tz` is an IANA time zone this Node knows. */
export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** Whether `expr` is a cron expression croner accepts. */
export function isCron(expr: string): boolean {
  try {
    new Cron(expr); // croner schedules nothing without a function to run
    return true;
  } catch {
    return false;
  }
}

/** Validates and normalizes a parsed rule file. Throws RulesError naming the path on the first problem. */
function normalizeRules(raw: unknown, defaults: { timezone: string }): Rules {
  if (!isObject(raw)) fail([], "rulesJson.notObject");
  known(raw, [], ["$schema", "timezone", "askFirst", "sources", "agents", "channels", "rules", "elsewhere", "approvals", "approvalWaitSeconds"]);
  const timezone = str(raw.timezone, ["timezone"]) ?? defaults.timezone;
  if (!isTimeZone(timezone)) fail(["timezone"], "rulesJson.timezone", { timezone });
  const askFirst = strings(raw.askFirst, ["askFirst"]) ?? [];

  const sources: Record<string, SourceDef> = {};
  const rawSources = raw.sources ?? {};
  if (!isObject(rawSources)) fail(["sources"], "rulesJson.object");
  for (const [id, def] of Object.entries(rawSources)) {
    const p = ["sources", id];
    name(id, p);
    if (id === scheduleSource) fail(p, "rulesJson.scheduleSource", { name: scheduleSource });
    if (id === elsewhereSource) fail(p, "rulesJson.elsewhereSource", { name: elsewhereSource });
    if (!isObject(def)) fail(p, "rulesJson.object");
    known(def, p, ["name", "adapter"]);
    const adapter = str(def.adapter, [...p, "adapter"]);
    if (adapter !== null && !/^[a-z0-9-]+$/.test(adapter)) fail([...p, "adapter"], "rulesJson.pluginName");
    sources[id] = { id, name: str(def.name, [...p, "name"], { max: 100, line: true }) ?? id, adapter };
  }
  oneSecretEach("sources", "source", Object.keys(sources));

  const agents: Record<string, AgentDef> = {};
  const rawAgents = raw.agents ?? {};
  if (!isObject(rawAgents)) fail(["agents"], "rulesJson.object");
  for (const [id, def] of Object.entries(rawAgents)) {
    const p = ["agents", id];
    name(id, p);
    if (!isObject(def)) fail(p, "rulesJson.object");
    known(def, p, ["name", "worker", "use", "model", "effort", "access", "command", "program", "sandbox", "env", "writable", "devices"]);
    const use = str(def.use, [...p, "use"], { required: true }) as string;
    if (!/^[a-z0-9-]+$/.test(use)) fail([...p, "use"], "rulesJson.pluginName");
    const access = (str(def.access, [...p, "access"]) ?? "edit") as Access;
    if (!["read", "edit", "full"].includes(access)) fail([...p, "access"], "rulesJson.access");
    const command = strings(def.command, [...p, "command"]);
    if (command !== null && command.length === 0) fail([...p, "command"], "rulesJson.empty");
    if ((use === "command" || use === "acp") && command === null) fail([...p, "command"], "rulesJson.commandFor", { use });
    const sandbox = def.sandbox ?? true;
    if (typeof sandbox !== "boolean") fail([...p, "sandbox"], "rulesJson.boolean");
    agents[id] = {
      id,
      name: str(def.name, [...p, "name"], { max: 100, line: true }) ?? id,
      worker: name(str(def.worker, [...p, "worker"], { required: true }) as string, [...p, "worker"]),
      use,
      model: str(def.model, [...p, "model"], { max: 200 }),
      effort: str(def.effort, [...p, "effort"], { max: 50 }),
      access,
      command,
      program: str(def.program, [...p, "program"]),
      sandbox,
      env: envNames(def.env, [...p, "env"]),
      writable: writablePaths(def.writable, [...p, "writable"]),
      devices: devicePaths(def.devices, [...p, "devices"]),
    };
  }

  const channels: Record<string, ChannelDef> = {};
  const rawChannels = raw.channels ?? {};
  if (!isObject(rawChannels)) fail(["channels"], "rulesJson.object");
  for (const [id, def] of Object.entries(rawChannels)) {
    const p = ["channels", id];
    name(id, p);
    if (!isObject(def)) fail(p, "rulesJson.object");
    known(def, p, ["name", "answerers", "links"]);
    const links = def.links ?? false;
    if (typeof links !== "boolean") fail([...p, "links"], "rulesJson.boolean");
    channels[id] = { id, name: str(def.name, [...p, "name"], { max: 100, line: true }) ?? id, answerers: strings(def.answerers, [...p, "answerers"]), links };
  }
  oneSecretEach("channels", "channel", Object.keys(channels));

  const rawRules = raw.rules ?? [];
  if (!Array.isArray(rawRules)) fail(["rules"], "rulesJson.array");
  const taken = new Set<string>();
  const rules: RuleDef[] = rawRules.map((def, i) => {
    const p = ["rules", i];
    if (!isObject(def)) fail(p, "rulesJson.object");
    known(def, p, ["name", "when", "to", "cwd", "skill", "prompt", "group", "parallel", "resume", "tell", "emits", "channels", "budget", "tools", "use", "workflow", "promptRef"]);
    const rule = ruleName(def.name, [...p, "name"]);
    if (taken.has(rule)) fail([...p, "name"], "rulesJson.ruleTaken", { name: rule });
    taken.add(rule);
    const when = def.when;
    if (!isObject(when)) fail([...p, "when"], "rulesJson.when");
    known(when, [...p, "when"], ["source", "types", "cron", "intent"]);
    const intent = assetRef(when.intent, [...p, "when", "intent"]);
    if (intent !== null && when.cron !== undefined) fail([...p, "when", "intent"], "rulesJson.intentCron");
    let source: string;
    let types: string[] = ["*"];
    let cron: string | null = null;
    if (when.cron !== undefined) {
      if (when.source !== undefined || when.types !== undefined) fail([...p, "when"], "rulesJson.cronOnly");
      cron = str(when.cron, [...p, "when", "cron"], { required: true }) as string;
      if (!isCron(cron)) fail([...p, "when", "cron"], "rulesJson.cron", { cron });
      source = scheduleSource;
    } else {
      const named = str(when.source, [...p, "when", "source"]);
      if (named === null && intent === null) fail([...p, "when", "source"], "rulesJson.sourceOrIntent");
      if (named !== null && own(sources, named) === undefined && !pluginSourcePattern.test(named)) fail([...p, "when", "source"], "rulesJson.noSource", { name: named });
      // Without a source, an intent rule takes events of any source; `types` narrows them as for any event rule.
      source = named ?? intentSource(intent!);
      types = strings(when.types, [...p, "when", "types"]) ?? ["*"];
    }
    const to = str(def.to, [...p, "to"], { required: true }) as string;
    if (own(agents, to) === undefined) fail([...p, "to"], "rulesJson.noAgent", { name: to });
    const parallel = def.parallel ?? null;
    if (parallel !== null && !(Number.isSafeInteger(parallel) && (parallel as number) >= 1)) fail([...p, "parallel"], "rulesJson.parallel");
    const resume = def.resume ?? false;
    if (typeof resume !== "boolean") fail([...p, "resume"], "rulesJson.boolean");
    const tell = (str(def.tell, [...p, "tell"]) ?? "needed") as Tell;
    if (!["always", "needed", "never"].includes(tell)) fail([...p, "tell"], "rulesJson.tell");
    let emits: RuleDef["emits"] = null;
    if (def.emits !== undefined && def.emits !== null) {
      if (!isObject(def.emits)) fail([...p, "emits"], "rulesJson.emits");
      known(def.emits, [...p, "emits"], ["source", "types"]);
      const es = str(def.emits.source, [...p, "emits", "source"], { required: true }) as string;
      if (own(sources, es) === undefined) fail([...p, "emits", "source"], "rulesJson.noSource", { name: es });
      emits = { source: es, types: strings(def.emits.types, [...p, "emits", "types"]) ?? ["*"] };
    }
    const ruleChannels = strings(def.channels, [...p, "channels"]);
    ruleChannels?.forEach((c, j) => { if (own(channels, c) === undefined) fail([...p, "channels", j], "rulesJson.noChannel", { name: c }); });
    const tools = toolPatterns(def.tools, [...p, "tools"]);
    const use = str(def.use, [...p, "use"]);
    if (use !== null && use !== "workflow") fail([...p, "use"], "rulesJson.ruleUse");
    const workflow = assetRef(def.workflow, [...p, "workflow"]);
    if (use !== null && workflow === null) fail([...p, "workflow"], "rulesJson.required");
    if (use === null && workflow !== null) fail([...p, "use"], "rulesJson.workflowNeedsUse");
    const promptRef = assetRef(def.promptRef, [...p, "promptRef"]);
    return {
      name: rule, source, types, cron, to,
      cwd: str(def.cwd, [...p, "cwd"]),
      skill: str(def.skill, [...p, "skill"], { max: 200 }),
      prompt: str(def.prompt, [...p, "prompt"]),
      group: str(def.group, [...p, "group"], { max: 100, filled: true, line: true }) ?? rule,
      parallel: parallel as number | null,
      resume, tell, emits, channels: ruleChannels,
      budget: budget(def.budget, [...p, "budget"]),
      ...(tools === null ? {} : { tools }),
      ...(use === null ? {} : { use: "workflow" as const, workflow: workflow! }),
      ...(intent === null ? {} : { intent }),
      ...(promptRef === null ? {} : { promptRef }),
    };
  });

  const rawElsewhere = raw.elsewhere ?? [];
  if (!Array.isArray(rawElsewhere)) fail(["elsewhere"], "rulesJson.array");
  const elsewhere: ElsewhereDef[] = rawElsewhere.map((def, i) => {
    const p = ["elsewhere", i];
    if (!isObject(def)) fail(p, "rulesJson.object");
    known(def, p, ["name", "source", "to", "cron", "where", "cwd", "skill", "prompt"]);
    const taskName = ruleName(def.name, [...p, "name"]);
    if (taken.has(taskName)) fail([...p, "name"], "rulesJson.taskTaken", { name: taskName });
    taken.add(taskName);
    const source = str(def.source, [...p, "source"]);
    if (source !== null && own(sources, source) === undefined) fail([...p, "source"], "rulesJson.noSource", { name: source });
    const to = str(def.to, [...p, "to"]);
    if (to !== null && own(agents, to) === undefined) fail([...p, "to"], "rulesJson.noAgent", { name: to });
    const cwd = str(def.cwd, [...p, "cwd"]);
    const skill = str(def.skill, [...p, "skill"], { max: 200 });
    const prompt = str(def.prompt, [...p, "prompt"]);
    if (cwd !== null && to === null) fail([...p, "to"], "rulesJson.cwdNeedsTo");
    if (cwd !== null && skill === null && prompt === null) fail([...p, "cwd"], "rulesJson.cwdNeedsWhat");
    const cron = str(def.cron, [...p, "cron"]);
    if (cron !== null && !isCron(cron)) fail([...p, "cron"], "rulesJson.cron", { cron });
    return { name: taskName, source, to, cron, where: str(def.where, [...p, "where"], { line: true }), cwd, skill, prompt };
  });

  const approvals = approvalRules(raw.approvals, ["approvals"]);
  const wait = raw.approvalWaitSeconds ?? null;
  if (wait !== null && !(Number.isSafeInteger(wait) && (wait as number) >= 0 && (wait as number) <= approvalWaitSecondsMax)) {
    fail(["approvalWaitSeconds"], "rulesJson.approvalWait", { max: approvalWaitSecondsMax });
  }
  return {
    timezone, askFirst, sources, agents, channels, rules, elsewhere,
    ...(approvals === null ? {} : { approvals }),
    ...(wait === null ? {} : { approvalWaitSeconds: wait as number }),
  };
}

/** A declarative plugin's asset: `<plugin>/<name>`, both parts letters, digits, `_` and `-` (issue 18). */
export const assetRefPattern = /^[A-Za-z0-9][A-Za-z0-9_-]{0,99}\/[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$/;

/** A rule's `workflow`, `promptRef` or `when.intent`: `<plugin>/<name>`, or null when absent. */
function assetRef(v: unknown, path: JSONPath): string | null {
  const ref = str(v, path);
  if (ref !== null && !assetRefPattern.test(ref)) fail(path, "rulesJson.assetRef");
  return ref;
}

/** A rule's `tools`: `<plugin>.<tool>` with `*` allowed in the tool's part only (a rule names each plugin it offers). */
function toolPatterns(v: unknown, path: JSONPath): string[] | null {
  const patterns = strings(v, path);
  patterns?.forEach((pattern, i) => {
    const dot = pattern.indexOf(".");
    const plugin = pattern.slice(0, dot);
    const tool = pattern.slice(dot + 1);
    if (dot < 0 || !isToolPlugin(plugin) || !toolGlobPattern.test(tool) || tool.length > toolNameMaxChars) fail([...path, i], "rulesJson.toolPattern");
  });
  return patterns;
}

function isToolPlugin(name: string): boolean {
  return toolPluginNamePattern.test(name) && name.length <= toolPluginNameMaxChars;
}

/** `approvals`: each entry checked, and no two for the same plugin and tool (which one applied would be a guess). */
function approvalRules(v: unknown, path: JSONPath): ApprovalRule[] | null {
  if (v === undefined || v === null) return null;
  if (!Array.isArray(v)) fail(path, "rulesJson.array");
  const seen = new Map<string, number>();
  return v.map((def, i) => {
    const p = [...path, i];
    if (!isObject(def)) fail(p, "rulesJson.object");
    known(def, p, ["plugin", "tool", "mode", "allow_session_keys", "credential_any_url"]);
    const plugin = str(def.plugin, [...p, "plugin"], { required: true }) as string;
    if (!isToolPlugin(plugin)) fail([...p, "plugin"], "rulesJson.toolPlugin", { max: toolPluginNameMaxChars });
    const tool = str(def.tool, [...p, "tool"]);
    const toolName = tool?.slice(plugin.length + 1) ?? "";
    if (tool !== null && !(tool.startsWith(`${plugin}.`) && toolNamePattern.test(toolName) && toolName.length <= toolNameMaxChars)) {
      fail([...p, "tool"], "rulesJson.approvalTool", { plugin });
    }
    const mode = str(def.mode, [...p, "mode"], { required: true }) as ApprovalMode;
    if (!["auto", "prompt", "deny"].includes(mode)) fail([...p, "mode"], "rulesJson.approvalMode");
    const keys = strings(def.allow_session_keys, [...p, "allow_session_keys"]) ?? [];
    keys.forEach((k, j) => str(k, [...p, "allow_session_keys", j], { line: true, max: sessionKeyPatternMaxChars }));
    const anyUrl = def.credential_any_url ?? false;
    if (typeof anyUrl !== "boolean") fail([...p, "credential_any_url"], "rulesJson.boolean");
    if (anyUrl && tool === null) fail([...p, "credential_any_url"], "rulesJson.credentialAnyUrlTool");
    const key = `${plugin}\u0000${tool ?? ""}`;
    const first = seen.get(key);
    if (first !== undefined) fail(tool === null ? p : [...p, "tool"], "rulesJson.approvalTwice", { index: first });
    seen.set(key, i);
    return { plugin, tool, mode, allow_session_keys: keys, credential_any_url: anyUrl };
  });
}

/** Refuses two names that give the same secrets.env variable: whoever holds one's secret could post as the other. */
function oneSecretEach(field: string, kind: "source" | "channel", names: string[]): void {
  const first = new Map<string, string>();
  for (const id of names) {
    const env = secretsEnvName(id);
    const other = first.get(env);
    if (other !== undefined) fail([field, id], kind === "source" ? "rulesJson.sameSecret.source" : "rulesJson.sameSecret.channel", { env, other });
    first.set(env, id);
  }
}

function budget(v: unknown, path: JSONPath): Budget | null {
  if (v === undefined || v === null) return null;
  if (!isObject(v)) fail(path, "rulesJson.budget");
  known(v, path, ["cost", "tokens", "per"]);
  const num = (x: unknown, k: string) => {
    if (x === undefined || x === null) return null;
    if (typeof x !== "number" || !Number.isFinite(x) || x <= 0) fail([...path, k], "rulesJson.positive");
    return x;
  };
  const cost = num(v.cost, "cost");
  const tokens = num(v.tokens, "tokens");
  if (cost === null && tokens === null) fail(path, "rulesJson.budgetNeeds");
  const per = v.per ?? "day";
  if (per !== "day" && per !== "week") fail([...path, "per"], "rulesJson.per");
  return { cost, tokens, per };
}

const starCode = 42; // "*"
const anyCode = 63; // "?"

/**
 * Glob match for `when.types` and `emits.types`: `*` is any run of characters, `?` one character (one UTF-16 code
 * unit), everything else literal; the whole type must match.
 * One pass over the type that only ever goes back to just after the last `*` passed, one character further each time:
 * fewer than (pattern length + 1) × (type length + 1) steps, and about the type's length for a few stars, where a
 * backtracking regular expression takes exponential time. `counter.steps`, when given, grows by the steps taken.
 */
export function globMatch(pattern: string, value: string, counter?: { steps: number }): boolean {
  let p = 0;
  let v = 0;
  let steps = 0;
  // After the last star passed: where the pattern goes on (0: no star yet) and where in the value its run ends so far.
  let afterStar = 0;
  let starEnd = 0;
  while (v < value.length) {
    steps++;
    const c = pattern.charCodeAt(p); // NaN past the end: equal to nothing
    if (c === starCode) {
      afterStar = ++p;
      starEnd = v;
    } else if (c === anyCode || c === value.charCodeAt(v)) {
      p++;
      v++;
    } else if (afterStar > 0) {
      p = afterStar;
      v = ++starEnd;
    } else {
      if (counter) counter.steps += steps;
      return false; // no star to go back to
    }
  }
  for (; pattern.charCodeAt(p) === starCode; p++) steps++;
  if (counter) counter.steps += steps;
  return p === pattern.length;
}

/** Whether any of the globs matches `value`. */
export function anyGlob(patterns: string[], value: string): boolean {
  for (const p of patterns) if (globMatch(p, value)) return true;
  return false;
}

/**
 * Whether `value` matches `pattern`, in which `*` stands for any run of characters (none included) and every other
 * character, `?` too, is literal: rules.json's tool patterns and `allow_session_keys` (issue 16). Each piece between
 * stars is looked for once, left to right (the leftmost place is always the right one when only `*` is special).
 */
export function starMatch(pattern: string, value: string): boolean {
  const pieces = pattern.split("*");
  const first = pieces[0]!;
  if (pieces.length === 1) return pattern === value;
  const last = pieces[pieces.length - 1]!;
  if (first.length + last.length > value.length || !value.startsWith(first) || !value.endsWith(last)) return false;
  const end = value.length - last.length;
  let at = first.length;
  for (const piece of pieces.slice(1, -1)) {
    const found = value.indexOf(piece, at);
    if (found < 0 || found + piece.length > end) return false;
    at = found + piece.length;
  }
  return true;
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

/** A rule's tool patterns (none when the file gave none). */
export function ruleTools(rule: RuleDef): string[] {
  return rule.tools ?? [];
}

/** Whether `rule` offers tool `qualified` (`<plugin>.<tool>`) to its agent: one of its `tools` patterns matches it. */
export function ruleOffers(rule: RuleDef, qualified: string): boolean {
  return ruleTools(rule).some((p) => starMatch(p, qualified));
}

/** The approval rules of a rule file (none when it gave none). */
export function approvalsOf(rules: Rules): ApprovalRule[] {
  return rules.approvals ?? [];
}

/** How long an agent's call in `prompt` mode waits for the owner's answer, in seconds. */
export function approvalWaitSecondsOf(rules: Rules): number {
  return rules.approvalWaitSeconds ?? approvalWaitSecondsDefault;
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
