/**
 * rules.json: parsing (JSONC: comments and trailing commas), validation with line and column, normalization.
 * Pure: text in, normalized rules or one error out (protocol.md 规则). Used by the hub, `check` and the simulation.
 */
import { parseTree, findNodeAtLocation, getNodeValue, printParseErrorCode, createScanner, SyntaxKind, type ParseError, type JSONPath, type Node } from "jsonc-parser";
import { Cron } from "croner";
import { own } from "./own.js";
import {
  rulesFileAgentsMax, rulesFileChannelsMax, rulesFileDepthMax, rulesFileElsewhereMax, rulesFileListItemsMax, rulesFileMaxBytes,
  rulesFileRulesMax, rulesFileSourcesMax, agentEnvNamesMax,
} from "./limits.js";
import { lineForbidden } from "./text.js";

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
}
export interface ChannelDef { id: string; name: string; answerers: string[] | null; links: boolean }
export interface Budget { cost: number | null; tokens: number | null; per: "day" | "week" }
export interface RuleDef {
  name: string;
  /** Event rules: `source` + `types` globs; cron rules: `cron` (source `schedule`). */
  source: string; types: string[]; cron: string | null;
  to: string; cwd: string | null; skill: string | null; prompt: string | null;
  group: string; parallel: number | null; resume: boolean; tell: Tell;
  emits: { source: string; types: string[] } | null;
  channels: string[] | null;
  budget: Budget | null;
}
export interface ElsewhereDef {
  name: string; source: string | null; to: string | null; cron: string | null; where: string | null;
  cwd: string | null; skill: string | null; prompt: string | null;
}
/** The normalized rule file. Every optional field is present, with its default filled in. */
export interface Rules {
  timezone: string;
  askFirst: string[];
  sources: Record<string, SourceDef>;
  agents: Record<string, AgentDef>;
  channels: Record<string, ChannelDef>;
  rules: RuleDef[];
  elsewhere: ElsewhereDef[];
}

/** The source name of cron rules' events (protocol.md 暂停、恢复、立即运行). */
export const scheduleSource = "schedule";
/** The source of cards and runs of `elsewhere` tasks that name no source. */
export const elsewhereSource = "elsewhere";
/** Source names the hub uses for its own events: a rules file cannot declare them and no key is made for them. */
export const reservedSources: readonly string[] = [scheduleSource, elsewhereSource];
/** Names of sources, agents, channels, workers: what a key name and a URL segment can carry. */
const namePattern = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;
/** An environment variable name, or a prefix of names written `PREFIX_*`. */
const envNamePattern = /^[A-Za-z_][A-Za-z0-9_]{0,99}$|^[A-Za-z][A-Za-z0-9_]{0,98}_\*$/;
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

/**
 * A source or channel name as it appears in a secrets.env variable: upper case, every character other than `A-Z` and
 * `0-9` (such as `-`) turned into `_` (protocol.md 来源: AGENT_AUTOLOOP_SECRET_<来源>). Two names that give the same
 * variable are refused in one rules file.
 */
export function secretsEnvName(name: string): string {
  return name.toUpperCase().replace(/[^A-Z0-9]/g, "_");
}

export type RulesParse = { ok: true; rules: Rules } | { ok: false; error: string; line: number; column: number };

class RulesError extends Error {
  constructor(message: string, readonly path: JSONPath) { super(message); }
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
 * Reads a rule file's text. Never throws: a bad file gives `{ok:false, error, line, column}`. The file's size, depth and
 * lists are checked before anything walks it (limits.ts: rulesFile…), so no file can exhaust the stack or stall a reader.
 */
export function parseRules(text: string, defaults: { timezone: string }): RulesParse {
  if (Buffer.byteLength(text, "utf8") > rulesFileMaxBytes) {
    return { ok: false, error: `the file is larger than ${rulesFileMaxBytes / 1024 / 1024} MiB (${rulesFileMaxBytes} bytes)`, line: 1, column: 1 };
  }
  const deep = tooDeep(text);
  if (deep !== null) return { ok: false, error: `JSON: more than ${rulesFileDepthMax} objects and arrays inside one another`, ...lineColumn(text, deep) };
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  const e = errors[0];
  if (e) return { ok: false, error: `JSON: ${printParseErrorCode(e.error)}`, ...lineColumn(text, e.offset) };
  // A text without a value (empty, only spaces or comments) is a ValueExpected error above: here there is a tree.
  const root = tree as Node;
  const long = tooLong(root);
  if (long) return { ok: false, error: `${where(long.path)}: at most ${long.max} ${long.what}`, ...lineColumn(text, long.first.offset) };
  const twice = keyGivenTwice(root, []);
  if (twice) return { ok: false, error: `${where(twice.path)}: given twice`, ...lineColumn(text, twice.offset) };
  // Objects without a prototype: "__proto__" is a key like any other (refused as an unknown field or a bad name).
  const value: unknown = getNodeValue(root);
  try {
    return { ok: true, rules: normalizeRules(value, defaults) };
  } catch (err) {
    if (!(err instanceof RulesError)) throw err;
    // A missing field has no node: point at the object that lacks it.
    const node = findNodeAtLocation(root, err.path) ?? findNodeAtLocation(root, err.path.slice(0, -1)) ?? root;
    const at = lineColumn(text, node.offset);
    return { ok: false, error: err.message, ...at };
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
const listLimits: { path: string[]; max: number; what: string }[] = [
  { path: ["askFirst"], max: rulesFileListItemsMax, what: "items" },
  { path: ["sources"], max: rulesFileSourcesMax, what: "sources" },
  { path: ["agents"], max: rulesFileAgentsMax, what: "agents" },
  { path: ["agents", "*", "command"], max: rulesFileListItemsMax, what: "items" },
  { path: ["channels"], max: rulesFileChannelsMax, what: "channels" },
  { path: ["channels", "*", "answerers"], max: rulesFileListItemsMax, what: "items" },
  { path: ["rules"], max: rulesFileRulesMax, what: "rules" },
  { path: ["rules", "*", "when", "types"], max: rulesFileListItemsMax, what: "items" },
  { path: ["rules", "*", "emits", "types"], max: rulesFileListItemsMax, what: "items" },
  { path: ["rules", "*", "channels"], max: rulesFileListItemsMax, what: "items" },
  { path: ["elsewhere"], max: rulesFileElsewhereMax, what: "tasks" },
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
function tooLong(root: Node): { path: JSONPath; first: Node; max: number; what: string } | null {
  const stack: { node: Node; path: JSONPath }[] = [{ node: root, path: [] }];
  for (let top = stack.pop(); top; top = stack.pop()) {
    const children = top.node.children ?? [];
    const limit = listLimits.find((l) => along(top!.path, l.path, true));
    if (limit && children.length > limit.max) return { path: top.path, first: children[limit.max]!, max: limit.max, what: limit.what };
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

function fail(path: JSONPath, msg: string): never {
  throw new RulesError(`${where(path)}: ${msg}`, path);
}

/**
 * A string field. `required`: present and not only spaces; `filled`: when present, not only spaces; `line`: one line
 * of text people read (a name, a title): no control characters; `max`: at most so many code points (default 4000).
 */
function str(v: unknown, path: JSONPath, opts: { required?: boolean; filled?: boolean; line?: boolean; max?: number } = {}): string | null {
  if (v === undefined || v === null) {
    if (opts.required) fail(path, "required");
    return null;
  }
  if (typeof v !== "string") fail(path, "must be a string");
  if ((opts.required || opts.filled) && v.trim() === "") fail(path, "must not be empty");
  if (opts.line && controlCharacter.test(v)) fail(path, "no control characters");
  if ([...v].length > (opts.max ?? 4000)) fail(path, `at most ${opts.max ?? 4000} characters`);
  return v;
}

function strings(v: unknown, path: JSONPath): string[] | null {
  if (v === undefined || v === null) return null;
  if (!Array.isArray(v)) fail(path, "must be an array of strings");
  return v.map((x, i) => str(x, [...path, i], { required: true }) as string);
}

/** An agent's `env`: variable names (`NAME_*` for a prefix), never the worker's own `AGENT_AUTOLOOP_*`. */
function envNames(v: unknown, path: JSONPath): string[] {
  const names = strings(v, path) ?? [];
  if (names.length > agentEnvNamesMax) fail(path, `at most ${agentEnvNamesMax} names`);
  for (const [i, n] of names.entries()) {
    if (!envNamePattern.test(n)) fail([...path, i], "a variable name (letters, digits and _, not starting with a digit, at most 100) or a prefix such as GH_*");
    if (n.startsWith("AGENT_AUTOLOOP_")) fail([...path, i], "AGENT_AUTOLOOP_ variables never reach agents");
  }
  return names;
}

function known(obj: Record<string, unknown>, path: JSONPath, keys: string[]): void {
  for (const k of Object.keys(obj)) if (!keys.includes(k)) fail([...path, k], `unknown field (known: ${keys.join(", ")})`);
}

/** A rule's or elsewhere task's name: it stands in URLs (/v1/rules/<name>/pause) and on the terminal. */
function ruleName(v: unknown, path: JSONPath): string {
  const n = str(v, path, { required: true, max: 100, line: true }) as string;
  if (n === "." || n === "..") fail(path, '"." and ".." cannot be names (they cannot stand in a URL)');
  return n;
}

function name(v: string, path: JSONPath): string {
  if (!namePattern.test(v)) fail(path, "names use letters, digits, _ . - (at most 100)");
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
  if (!isObject(raw)) fail([], "the file must hold one JSON object");
  known(raw, [], ["$schema", "timezone", "askFirst", "sources", "agents", "channels", "rules", "elsewhere"]);
  const timezone = str(raw.timezone, ["timezone"]) ?? defaults.timezone;
  if (!isTimeZone(timezone)) fail(["timezone"], `unknown time zone ${timezone}`);
  const askFirst = strings(raw.askFirst, ["askFirst"]) ?? [];

  const sources: Record<string, SourceDef> = {};
  const rawSources = raw.sources ?? {};
  if (!isObject(rawSources)) fail(["sources"], "must be an object");
  for (const [id, def] of Object.entries(rawSources)) {
    const p = ["sources", id];
    name(id, p);
    if (id === scheduleSource) fail(p, `"${scheduleSource}" is the source of cron rules and cannot be declared`);
    if (id === elsewhereSource) fail(p, `"${elsewhereSource}" is the source of elsewhere tasks and cannot be declared`);
    if (!isObject(def)) fail(p, "must be an object");
    known(def, p, ["name", "adapter"]);
    const adapter = str(def.adapter, [...p, "adapter"]);
    if (adapter !== null && !/^[a-z0-9-]+$/.test(adapter)) fail([...p, "adapter"], "plugin names use a-z, 0-9 and -");
    sources[id] = { id, name: str(def.name, [...p, "name"], { max: 100, line: true }) ?? id, adapter };
  }
  oneSecretEach("sources", "source", Object.keys(sources));

  const agents: Record<string, AgentDef> = {};
  const rawAgents = raw.agents ?? {};
  if (!isObject(rawAgents)) fail(["agents"], "must be an object");
  for (const [id, def] of Object.entries(rawAgents)) {
    const p = ["agents", id];
    name(id, p);
    if (!isObject(def)) fail(p, "must be an object");
    known(def, p, ["name", "worker", "use", "model", "effort", "access", "command", "program", "sandbox", "env"]);
    const use = str(def.use, [...p, "use"], { required: true }) as string;
    if (!/^[a-z0-9-]+$/.test(use)) fail([...p, "use"], "plugin names use a-z, 0-9 and -");
    const access = (str(def.access, [...p, "access"]) ?? "edit") as Access;
    if (!["read", "edit", "full"].includes(access)) fail([...p, "access"], "must be read, edit or full");
    const command = strings(def.command, [...p, "command"]);
    if (command !== null && command.length === 0) fail([...p, "command"], "must not be empty");
    if ((use === "command" || use === "acp") && command === null) fail([...p, "command"], `required for use "${use}"`);
    const sandbox = def.sandbox ?? true;
    if (typeof sandbox !== "boolean") fail([...p, "sandbox"], "must be true or false");
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
    };
  }

  const channels: Record<string, ChannelDef> = {};
  const rawChannels = raw.channels ?? {};
  if (!isObject(rawChannels)) fail(["channels"], "must be an object");
  for (const [id, def] of Object.entries(rawChannels)) {
    const p = ["channels", id];
    name(id, p);
    if (!isObject(def)) fail(p, "must be an object");
    known(def, p, ["name", "answerers", "links"]);
    const links = def.links ?? false;
    if (typeof links !== "boolean") fail([...p, "links"], "must be true or false");
    channels[id] = { id, name: str(def.name, [...p, "name"], { max: 100, line: true }) ?? id, answerers: strings(def.answerers, [...p, "answerers"]), links };
  }
  oneSecretEach("channels", "channel", Object.keys(channels));

  const rawRules = raw.rules ?? [];
  if (!Array.isArray(rawRules)) fail(["rules"], "must be an array");
  const taken = new Set<string>();
  const rules: RuleDef[] = rawRules.map((def, i) => {
    const p = ["rules", i];
    if (!isObject(def)) fail(p, "must be an object");
    known(def, p, ["name", "when", "to", "cwd", "skill", "prompt", "group", "parallel", "resume", "tell", "emits", "channels", "budget"]);
    const rule = ruleName(def.name, [...p, "name"]);
    if (taken.has(rule)) fail([...p, "name"], `another rule is already named "${rule}"`);
    taken.add(rule);
    const when = def.when;
    if (!isObject(when)) fail([...p, "when"], 'required: {"source", "types"} or {"cron"}');
    known(when, [...p, "when"], ["source", "types", "cron"]);
    let source: string;
    let types: string[] = ["*"];
    let cron: string | null = null;
    if (when.cron !== undefined) {
      if (when.source !== undefined || when.types !== undefined) fail([...p, "when"], "a cron rule has no source or types");
      cron = str(when.cron, [...p, "when", "cron"], { required: true }) as string;
      if (!isCron(cron)) fail([...p, "when", "cron"], `not a cron expression: ${cron}`);
      source = scheduleSource;
    } else {
      source = str(when.source, [...p, "when", "source"], { required: true }) as string;
      if (own(sources, source) === undefined) fail([...p, "when", "source"], `no source "${source}" in sources`);
      types = strings(when.types, [...p, "when", "types"]) ?? ["*"];
    }
    const to = str(def.to, [...p, "to"], { required: true }) as string;
    if (own(agents, to) === undefined) fail([...p, "to"], `no agent "${to}" in agents`);
    const parallel = def.parallel ?? null;
    if (parallel !== null && !(Number.isSafeInteger(parallel) && (parallel as number) >= 1)) fail([...p, "parallel"], "must be a whole number ≥ 1");
    const resume = def.resume ?? false;
    if (typeof resume !== "boolean") fail([...p, "resume"], "must be true or false");
    const tell = (str(def.tell, [...p, "tell"]) ?? "needed") as Tell;
    if (!["always", "needed", "never"].includes(tell)) fail([...p, "tell"], "must be always, needed or never");
    let emits: RuleDef["emits"] = null;
    if (def.emits !== undefined && def.emits !== null) {
      if (!isObject(def.emits)) fail([...p, "emits"], 'must be {"source", "types"}');
      known(def.emits, [...p, "emits"], ["source", "types"]);
      const es = str(def.emits.source, [...p, "emits", "source"], { required: true }) as string;
      if (own(sources, es) === undefined) fail([...p, "emits", "source"], `no source "${es}" in sources`);
      emits = { source: es, types: strings(def.emits.types, [...p, "emits", "types"]) ?? ["*"] };
    }
    const ruleChannels = strings(def.channels, [...p, "channels"]);
    ruleChannels?.forEach((c, j) => { if (own(channels, c) === undefined) fail([...p, "channels", j], `no channel "${c}" in channels`); });
    return {
      name: rule, source, types, cron, to,
      cwd: str(def.cwd, [...p, "cwd"]),
      skill: str(def.skill, [...p, "skill"], { max: 200 }),
      prompt: str(def.prompt, [...p, "prompt"]),
      group: str(def.group, [...p, "group"], { max: 100, filled: true, line: true }) ?? rule,
      parallel: parallel as number | null,
      resume, tell, emits, channels: ruleChannels,
      budget: budget(def.budget, [...p, "budget"]),
    };
  });

  const rawElsewhere = raw.elsewhere ?? [];
  if (!Array.isArray(rawElsewhere)) fail(["elsewhere"], "must be an array");
  const elsewhere: ElsewhereDef[] = rawElsewhere.map((def, i) => {
    const p = ["elsewhere", i];
    if (!isObject(def)) fail(p, "must be an object");
    known(def, p, ["name", "source", "to", "cron", "where", "cwd", "skill", "prompt"]);
    const taskName = ruleName(def.name, [...p, "name"]);
    if (taken.has(taskName)) fail([...p, "name"], `a rule or task is already named "${taskName}"`);
    taken.add(taskName);
    const source = str(def.source, [...p, "source"]);
    if (source !== null && own(sources, source) === undefined) fail([...p, "source"], `no source "${source}" in sources`);
    const to = str(def.to, [...p, "to"]);
    if (to !== null && own(agents, to) === undefined) fail([...p, "to"], `no agent "${to}" in agents`);
    const cwd = str(def.cwd, [...p, "cwd"]);
    const skill = str(def.skill, [...p, "skill"], { max: 200 });
    const prompt = str(def.prompt, [...p, "prompt"]);
    if (cwd !== null && to === null) fail([...p, "to"], "a task with cwd needs to");
    if (cwd !== null && skill === null && prompt === null) fail([...p, "cwd"], "a task with cwd needs skill or prompt");
    const cron = str(def.cron, [...p, "cron"]);
    if (cron !== null && !isCron(cron)) fail([...p, "cron"], `not a cron expression: ${cron}`);
    return { name: taskName, source, to, cron, where: str(def.where, [...p, "where"], { line: true }), cwd, skill, prompt };
  });

  return { timezone, askFirst, sources, agents, channels, rules, elsewhere };
}

/** Refuses two names that give the same secrets.env variable: whoever holds one's secret could post as the other. */
function oneSecretEach(field: string, kind: string, names: string[]): void {
  const first = new Map<string, string>();
  for (const id of names) {
    const env = secretsEnvName(id);
    const other = first.get(env);
    if (other !== undefined) fail([field, id], `same secrets.env name (${env}) as ${kind} "${other}"; rename one`);
    first.set(env, id);
  }
}

function budget(v: unknown, path: JSONPath): Budget | null {
  if (v === undefined || v === null) return null;
  if (!isObject(v)) fail(path, 'must be {"cost", "tokens", "per"}');
  known(v, path, ["cost", "tokens", "per"]);
  const num = (x: unknown, k: string) => {
    if (x === undefined || x === null) return null;
    if (typeof x !== "number" || !Number.isFinite(x) || x <= 0) fail([...path, k], "must be a number > 0");
    return x;
  };
  const cost = num(v.cost, "cost");
  const tokens = num(v.tokens, "tokens");
  if (cost === null && tokens === null) fail(path, "needs cost or tokens");
  const per = v.per ?? "day";
  if (per !== "day" && per !== "week") fail([...path, "per"], "must be day or week");
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
