/**
 * What rules.json's schema cannot say, checked by hand on a file the schema accepted (issue 27): names that refer to
 * another section (a rule's source, agent and channels; an elsewhere task's), two names sharing one secrets.env
 * variable, a time zone and cron expressions this Node knows, fields that go together (cron without source or types;
 * cwd with to and skill or prompt; use with workflow; budget with cost or tokens), paths and devices a sandbox takes,
 * and approvals naming one tool once. Then the file normalized into the kernel's `Rules`, every default filled in.
 * The first problem throws `RulesError` with its path; parseRules (rules-file.ts) words and places it.
 */
import { Cron } from "croner";
import { own } from "../kernel/own.js";
import { toolNameMaxChars } from "../kernel/limits.js";
import { secretsEnvName, toolNamePattern } from "../kernel/names.js";
import { devicePathProblem } from "../kernel/devices.js";
import { lineForbidden } from "../kernel/text.js";
import {
  elsewhereSource, intentSource, pluginSourcePattern, scheduleSource,
  type AgentDef, type ApprovalRule, type ChannelDef, type ElsewhereDef, type RuleDef, type Rules, type SourceDef,
} from "../kernel/rules.js";
import type { MessageId } from "../i18n/messages.js";
import type { FilePath } from "./file-problems.js";
import type { AgentFile, ApprovalFile, ElsewhereFile, RuleFile, RulesFile } from "./rules-schema.js";

/** What is wrong with a rule file, as a message of the catalog, and where. */
export class RulesError extends Error {
  constructor(readonly problem: { id: MessageId; params?: Record<string, string | number> }, readonly path: FilePath) { super(problem.id); }
}

/** Refuses the file: what is wrong at `path`, as message `id` of the catalog with `params`. */
function fail(path: FilePath, id: MessageId, params?: Record<string, string | number>): never {
  throw new RulesError({ id, params }, path);
}

/** Whether `tz` is an IANA time zone this Node knows. */
export function isTimeZone(tz: string): boolean {
  // Known without asking ICU, whose first use pages ~8 MB of its data in and takes 20–30 ms of a start (issue 32): a
  // hub on UTC with no cron source then never touches it.
  if (tz === "UTC") return true;
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

/** Checks what the schema cannot say and normalizes the file. @throws RulesError naming the path of the first problem. */
export function normalizeRules(raw: RulesFile, defaults: { timezone: string }): Rules {
  const timezone = raw.timezone ?? defaults.timezone;
  if (!isTimeZone(timezone)) fail(["timezone"], "rulesJson.timezone", { timezone });
  const sources: Record<string, SourceDef> = {};
  for (const [id, def] of Object.entries(raw.sources ?? {})) {
    if (id === scheduleSource) fail(["sources", id], "rulesJson.scheduleSource", { name: scheduleSource });
    if (id === elsewhereSource) fail(["sources", id], "rulesJson.elsewhereSource", { name: elsewhereSource });
    sources[id] = { id, name: def.name ?? id, adapter: def.adapter ?? null };
  }
  oneSecretEach("sources", "source", Object.keys(sources));
  const agents: Record<string, AgentDef> = {};
  for (const [id, def] of Object.entries(raw.agents ?? {})) agents[id] = agent(id, def);
  const channels: Record<string, ChannelDef> = {};
  for (const [id, def] of Object.entries(raw.channels ?? {})) {
    channels[id] = { id, name: def.name ?? id, answerers: def.answerers ?? null, links: def.links ?? false };
  }
  oneSecretEach("channels", "channel", Object.keys(channels));
  const taken = new Set<string>();
  const rules = (raw.rules ?? []).map((def, i) => rule(def, ["rules", i], { sources, agents, channels, taken }));
  const elsewhere = (raw.elsewhere ?? []).map((def, i) => task(def, ["elsewhere", i], { sources, agents, taken }));
  const approvals = raw.approvals === undefined || raw.approvals === null ? null : approvalRules(raw.approvals);
  const wait = raw.approvalWaitSeconds ?? null;
  return {
    timezone, askFirst: raw.askFirst ?? [], sources, agents, channels, rules, elsewhere,
    ...(approvals === null ? {} : { approvals }),
    ...(wait === null ? {} : { approvalWaitSeconds: wait }),
  };
}

/** An agent: `command` for the plugins that run one, sandbox paths written plainly, devices a sandbox passes. */
function agent(id: string, def: AgentFile): AgentDef {
  const p = ["agents", id];
  const command = def.command ?? null;
  if ((def.use === "command" || def.use === "acp") && command === null) fail([...p, "command"], "rulesJson.commandFor", { use: def.use });
  const writable = def.writable ?? [];
  writable.forEach((w, i) => { if (!plainPath(w)) fail([...p, "writable", i], "rulesJson.writablePath"); });
  const readable = def.readable ?? [];
  readable.forEach((w, i) => { if (!plainPath(w)) fail([...p, "readable", i], "rulesJson.writablePath"); });
  const devices = def.devices ?? [];
  devices.forEach((d, i) => {
    const problem = devicePathProblem(d);
    if (problem === "form") fail([...p, "devices", i], "rulesJson.devicePath");
    if (problem === "notPassable") fail([...p, "devices", i], "rulesJson.deviceNotPassable");
  });
  return {
    id, name: def.name ?? id, worker: def.worker, use: def.use, model: def.model ?? null, effort: def.effort ?? null,
    access: def.access ?? "edit", command, program: def.program ?? null, sandbox: def.sandbox ?? true, env: def.env ?? [], writable, readable, devices,
    network: def.network ?? "own", loopbackPorts: [...new Set(def.loopbackPorts ?? [])],
  };
}

/**
 * An agent's `writable` or `readable` (issue 26): absolute paths or `~/…`, written plainly (no `.` or `..` part, no doubled `/`),
 * never `/` or `~` itself (the sandbox keeps the home read-only: see src/worker/sandbox.ts). Whether a path exists,
 * holds the home or lies in a read-only folder is the worker's check: it knows the computer.
 */
function plainPath(w: string): boolean {
  const rest = w.startsWith("~/") ? w.slice(1) : w;
  const plain = rest.startsWith("/") && !rest.includes("//") && !rest.split("/").some((part) => part === "." || part === "..");
  return plain && !lineForbidden.test(w) && rest.replace(/\/+$/, "") !== "";
}

type Named = { sources: Record<string, SourceDef>; agents: Record<string, AgentDef>; channels: Record<string, ChannelDef>; taken: Set<string> };

/** A rule: one name per rule and task, what `when` may combine, and every name it gives declared. */
function rule(def: RuleFile, p: FilePath, n: Named): RuleDef {
  if (n.taken.has(def.name)) fail([...p, "name"], "rulesJson.ruleTaken", { name: def.name });
  n.taken.add(def.name);
  const { when } = def;
  const intent = when.intent ?? null;
  if (intent !== null && when.cron !== undefined) fail([...p, "when", "intent"], "rulesJson.intentCron");
  let source: string;
  let types: string[] = ["*"];
  let cron: string | null = null;
  if (when.cron !== undefined) {
    if (when.source !== undefined || when.types !== undefined) fail([...p, "when"], "rulesJson.cronOnly");
    if (when.cron === null) fail([...p, "when", "cron"], "rulesJson.required");
    if (when.cron.trim() === "") fail([...p, "when", "cron"], "rulesJson.empty");
    if (!isCron(when.cron)) fail([...p, "when", "cron"], "rulesJson.cron", { cron: when.cron });
    cron = when.cron;
    source = scheduleSource;
  } else {
    const named = when.source ?? null;
    if (named === null && intent === null) fail([...p, "when", "source"], "rulesJson.sourceOrIntent");
    if (named !== null && own(n.sources, named) === undefined && !pluginSourcePattern.test(named)) fail([...p, "when", "source"], "rulesJson.noSource", { name: named });
    // Without a source, an intent rule takes events of any source; `types` narrows them as for any event rule.
    source = named ?? intentSource(intent!);
    types = when.types ?? ["*"];
  }
  if (own(n.agents, def.to) === undefined) fail([...p, "to"], "rulesJson.noAgent", { name: def.to });
  let emits: RuleDef["emits"] = null;
  if (def.emits !== undefined && def.emits !== null) {
    if (own(n.sources, def.emits.source) === undefined) fail([...p, "emits", "source"], "rulesJson.noSource", { name: def.emits.source });
    emits = { source: def.emits.source, types: def.emits.types ?? ["*"] };
  }
  const channels = def.channels ?? null;
  channels?.forEach((c, j) => { if (own(n.channels, c) === undefined) fail([...p, "channels", j], "rulesJson.noChannel", { name: c }); });
  const use = def.use ?? null;
  const workflow = def.workflow ?? null;
  if (use !== null && workflow === null) fail([...p, "workflow"], "rulesJson.required");
  if (use === null && workflow !== null) fail([...p, "use"], "rulesJson.workflowNeedsUse");
  const tools = def.tools ?? null;
  const promptRef = def.promptRef ?? null;
  const startsPerMinute = def.startsPerMinute ?? null;
  return {
    name: def.name, source, types, cron, to: def.to,
    cwd: def.cwd ?? null, skill: def.skill ?? null, prompt: def.prompt ?? null, group: def.group ?? def.name,
    parallel: def.parallel ?? null, resume: def.resume ?? false, tell: def.tell ?? "needed", emits, channels,
    budget: budget(def.budget ?? null, [...p, "budget"]),
    ...(tools === null ? {} : { tools }),
    ...(use === null ? {} : { use: "workflow" as const, workflow: workflow! }),
    ...(intent === null ? {} : { intent }),
    ...(promptRef === null ? {} : { promptRef }),
    ...(startsPerMinute === null ? {} : { startsPerMinute }),
  };
}

function budget(b: RuleFile["budget"] & object | null, path: FilePath): RuleDef["budget"] {
  if (b === null) return null;
  const cost = b.cost ?? null;
  const tokens = b.tokens ?? null;
  if (cost === null && tokens === null) fail(path, "rulesJson.budgetNeeds");
  return { cost, tokens, per: b.per ?? "day" };
}

/** An elsewhere task: its name taken by no rule or task, its source and agent declared, cwd with what to do there. */
function task(def: ElsewhereFile, p: FilePath, n: Omit<Named, "channels">): ElsewhereDef {
  if (n.taken.has(def.name)) fail([...p, "name"], "rulesJson.taskTaken", { name: def.name });
  n.taken.add(def.name);
  const source = def.source ?? null;
  if (source !== null && own(n.sources, source) === undefined) fail([...p, "source"], "rulesJson.noSource", { name: source });
  const to = def.to ?? null;
  if (to !== null && own(n.agents, to) === undefined) fail([...p, "to"], "rulesJson.noAgent", { name: to });
  const [cwd, skill, prompt, cron] = [def.cwd ?? null, def.skill ?? null, def.prompt ?? null, def.cron ?? null];
  if (cwd !== null && to === null) fail([...p, "to"], "rulesJson.cwdNeedsTo");
  if (cwd !== null && skill === null && prompt === null) fail([...p, "cwd"], "rulesJson.cwdNeedsWhat");
  if (cron !== null && !isCron(cron)) fail([...p, "cron"], "rulesJson.cron", { cron });
  return { name: def.name, source, to, cron, where: def.where ?? null, cwd, skill, prompt };
}

/**
 * `approvals`: a tool of the entry's own plugin, `credential_any_url` on a tool's entry, `legacy_callbacks` and
 * `legacy_callback_short_ids` on a plugin's (the latter implies the former), no two for one tool.
 */
function approvalRules(entries: ApprovalFile[]): ApprovalRule[] {
  const seen = new Map<string, number>();
  return entries.map((def, i) => {
    const p = ["approvals", i];
    const { plugin, mode } = def;
    const tool = def.tool ?? null;
    const toolName = tool?.slice(plugin.length + 1) ?? "";
    if (tool !== null && !(tool.startsWith(`${plugin}.`) && toolNamePattern.test(toolName) && toolName.length <= toolNameMaxChars)) {
      fail([...p, "tool"], "rulesJson.approvalTool", { plugin });
    }
    const anyUrl = def.credential_any_url ?? false;
    if (anyUrl && tool === null) fail([...p, "credential_any_url"], "rulesJson.credentialAnyUrlTool");
    const shortIds = def.legacy_callback_short_ids ?? false;
    if (shortIds && tool !== null) fail([...p, "legacy_callback_short_ids"], "rulesJson.legacyCallbackPlugin");
    const legacy = def.legacy_callbacks ?? false;
    if (legacy && tool !== null) fail([...p, "legacy_callbacks"], "rulesJson.legacyCallbackPlugin");
    const key = `${plugin}\u0000${tool ?? ""}`;
    const first = seen.get(key);
    if (first !== undefined) fail(tool === null ? p : [...p, "tool"], "rulesJson.approvalTwice", { index: first });
    seen.set(key, i);
    return { plugin, tool, mode, allow_session_keys: def.allow_session_keys ?? [], credential_any_url: anyUrl, legacy_callbacks: legacy || shortIds, legacy_callback_short_ids: shortIds };
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
