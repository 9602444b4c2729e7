/**
 * `agent-autoloop plugins list | inspect | doctor` (issues 16, 27; spec tool-plugins.md §9). `list` shows every plugin
 * of every kind — declarative, tool, agent, channel, source — as the home's running hub records them, else as the same
 * loaders read them here (plugin-home.ts: one truth). `inspect` and `doctor` look at tool plugins, read by the same
 * registry and last good rule, with approval modes from rules.json as the hub reads it. Reading runs no plugin code.
 * Only `inspect` asks a plugin in use for its tools when they are not in its manifest (`tools/list`, bounded; an MCP
 * server's `tools/list`), as the contract allows — in the review sandbox (no home, no network: tools/review.ts; issue
 * 26 round 11, F5) unless the owner says `--run` — and ends whatever it started before it returns.
 */
import { existsSync, rmSync } from "node:fs";
import { basename, join } from "node:path";
import { t, type Lang, type MessageId, render } from "../i18n/messages.js";
import { parseJson } from "../kernel/json-error.js";
import { classify, codeKinds } from "../plugins/index.js";
import { bindRefusal, bindsOf, conformance, passedEnvNames, runners, serviceSocketFolder, ToolHost, ToolRegistry, formatClash, type BindChecked, type Manifest, type PluginDiagnosis, type ToolPluginRecord, type ToolsOutcome } from "../tools/index.js";
import type { PluginView } from "../protocol/responses.js";
import { homePluginViews, hubPluginViews, localPlugins, serveDirsOf, type LocalPlugins } from "./plugin-home.js";
import { readCodeFolders } from "../host/code-folders.js";
import { recordedHubUrl } from "../host/lock.js";
import { approvalRuleFor, approvalsOf, pluginDenied, ruleOffers, type ApprovalRule, type Rules } from "../kernel/rules.js";
import { readRulesInput } from "../host/rules-file.js";
import type { Home } from "../host/home.js";
import type { ConformanceLine } from "../tools/index.js";
import { CliError } from "./print.js";

/** What a command prints: lines for stdout and for stderr, and the exit code. */
export interface Printed {
  out: string[];
  err: string[];
  code: number;
}

/**
 * A plugin folder's line of `list` (also its `--json` form): `kind` is a tool plugin's `plugin_type`, else the plugin's
 * kind (`declarative`, `agent`, `channel`, `source`); `tools` null when they are not in its manifest.
 */
export interface PluginLine {
  name: string;
  version: string | null;
  kind: string | null;
  tools: string[] | null;
  origin: string;
  status: "ok" | "error" | "shadowed";
  dir: string;
  errors: string[];
}

/** This home's plugins read here, by the hub's rules (its roots when it runs; the last good versions). */
async function pluginsOf(h: Home, lang: Lang): Promise<LocalPlugins> {
  return localPlugins(h, lang, serveDirsOf(await hubPluginViews(h, lang)));
}

/** The registry of this home's tool plugins (`pluginsOf`). */
async function registryOf(h: Home, lang: Lang): Promise<ToolRegistry> {
  return (await pluginsOf(h, lang)).tools;
}

const statusWord = { loaded: "ok", rejected: "error", shadowed: "shadowed" } as const;

function lineOf(v: PluginView): PluginLine {
  const m = v.manifest as { version?: unknown; plugin_type?: unknown; tools?: unknown; tools_from?: unknown; provides?: { tools?: unknown } };
  const version = typeof m.version === "string" ? m.version : null;
  const names = (x: unknown) => (Array.isArray(x) && x.length > 0 ? x.filter((n): n is string => typeof n === "string") : null);
  const kind = v.kind === "tool" ? (typeof m.plugin_type === "string" ? m.plugin_type : null) : v.kind;
  const tools = v.kind === "tool" ? (m.tools_from === "listed" ? names(m.tools) : null) : v.kind === "declarative" ? names(m.provides?.tools) : null;
  return { name: v.manifest.id, version, kind, tools, origin: v.origin, status: statusWord[v.status], dir: v.dir, errors: v.errors };
}

/** Words for a tool plugin's tools that are not in its manifest: any name, or asked when needed; `-` for other kinds. */
function unlistedTools(v: PluginView, lang: Lang): string {
  const from = (v.manifest as { tools_from?: unknown }).tools_from;
  if (v.kind !== "tool" || typeof from !== "string") return "-";
  return t(lang, from === "any" ? "cli.plugins.toolsAny" : "cli.plugins.toolsAsked");
}

/** Lines of columns, each padded to its widest cell, two spaces apart. */
function columns(rows: string[][]): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => [...r[i]!].length))) ?? [];
  return rows.map((r) => r.map((cell, i) => cell + " ".repeat(widths[i]! - [...cell].length)).join("  ").trimEnd());
}

/** What is wrong with the plugins, for stderr: errors, last good versions in use, clashes, notes. */
function problems(views: readonly PluginView[], notes: readonly string[], lang: Lang): string[] {
  const err: string[] = [];
  for (const v of views) {
    err.push(...v.errors);
    if (v.status === "rejected" && v.digest) err.push(t(lang, "cli.plugins.lastGood", { name: v.manifest.id }));
  }
  const clashes = views.flatMap((v) => (v.status === "shadowed" && v.shadowedBy ? [formatClash({ name: v.manifest.id, winner: v.shadowedBy, loser: { dir: v.dir, origin: v.origin } }, lang, v.kind)] : []));
  return [...err, ...clashes, ...notes];
}

/**
 * `plugins list`: one line per plugin folder of every kind — name, version, kind, tools, (origin), status — by name,
 * or with `json` the lines as a JSON array: the running hub's records, else this home's plugins read here. What is
 * wrong goes to stderr. Exit 0: a listing, not a verdict (`doctor` gives one).
 */
export async function listPlugins(h: Home, lang: Lang, json: boolean): Promise<Printed> {
  const { views, notes } = await homePluginViews(h, lang);
  const sorted = [...views].sort((a, b) => cmp(a.manifest.id, b.manifest.id) || cmp(a.dir, b.dir) || cmp(a.kind, b.kind));
  const lines = sorted.map(lineOf);
  const err = problems(sorted, notes, lang);
  if (json) return { out: [JSON.stringify(lines, null, 2)], err, code: 0 };
  if (lines.length === 0) return { out: [t(lang, "cli.plugins.none", { dir: h.plugins })], err, code: 0 };
  const rows = lines.map((l, i) => [l.name, l.version ?? "-", l.kind ?? "-", l.tools?.join(",") ?? unlistedTools(sorted[i]!, lang), `(${l.origin})`, t(lang, `cli.plugins.status.${l.status}`)]);
  return { out: columns(rows), err, code: 0 };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A tool plugin folder's line, as `list` words it. */
function toolLineOf(rec: ToolPluginRecord): PluginLine {
  const m = rec.manifest;
  return {
    name: rec.name, version: m?.version ?? null, kind: m?.plugin_type ?? null, tools: m && runners[m.plugin_type].tools(m) === "listed" ? m.capabilities.tools.map((x) => x.name) : null,
    origin: rec.origin, status: rec.status === "ok" ? "ok" : rec.status === "rejected" ? "error" : "shadowed", dir: rec.dir, errors: rec.errors,
  };
}

/** The tool plugin folders `name` stands for: plugins of that name, else the folder of that name; the one in use first. */
function recordsNamed(registry: ToolRegistry, name: string): ToolPluginRecord[] {
  const all = registry.list();
  const named = all.filter((r) => r.name === name);
  const found = named.length > 0 ? named : all.filter((r) => basename(r.dir) === name);
  return found.sort((a, b) => Number(registry.get(b.name) === b) - Number(registry.get(a.name) === a));
}

/** rules.json as the hub would read it: its rules and approvals, or why it cannot be read (`missing`: no such file). */
function rulesOf(h: Home, lang: Lang): { rules: Rules | null; error: string | null; missing: boolean } {
  const read = readRulesInput(h.rules, lang);
  return read.kind === "rules" ? { rules: read.rules, error: null, missing: false } : { rules: null, error: read.error, missing: read.missing };
}

/** One tool of `inspect`: its approval as configured, and the rules that offer it. */
interface InspectedTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  approval: { mode: ApprovalRule["mode"]; entry: number | null; allow_session_keys: string[] };
  offeredBy: string[];
}

/** What `inspect` found about one plugin folder (its `--json` form). */
export interface Inspected extends Omit<PluginLine, "tools"> {
  manifestPath: string;
  /** sha256 of the plugin's files (what "always allow" trusts; files-digest.ts), null when they cannot be digested. */
  digest: string | null;
  /** The files the digest covers, `<first 16 hex of sha256> <path>` (null when they cannot be digested). */
  files: string[] | null;
  shadowedBy: ToolPluginRecord["shadowedBy"];
  manifest: Manifest | null;
  /** Where the tools came from; null when they were not asked (the folder is not in use). */
  toolsSource: "manifest" | "tools/list" | "mcp" | null;
  toolsError: string | null;
  tools: InspectedTool[];
  rulesError: string | null;
  checks: ConformanceLine[];
  /** The sandbox's binds as they really are: real sources, broad ones marked, refused ones with why (issue 26 #3). */
  binds: (BindChecked & { refusedWhy: string | null })[];
}

function inspectedTools(rec: ToolPluginRecord, outcome: ToolsOutcome | null, rules: Rules | null): InspectedTool[] {
  if (!outcome?.ok) return [];
  const approvals = rules ? approvalsOf(rules) : [];
  return outcome.tools.map((o) => {
    const entry = approvalRuleFor(approvals, rec.name, o.qualifiedName);
    return {
      name: o.qualifiedName, description: o.tool.description, parameters: o.tool.parameters,
      approval: { mode: entry?.rule.mode ?? "auto", entry: entry?.index ?? null, allow_session_keys: entry?.rule.allow_session_keys ?? [] },
      offeredBy: (rules?.rules ?? []).filter((r) => ruleOffers(r, o.qualifiedName)).map((r) => r.name),
    };
  });
}

/**
 * `plugins inspect <name>`: each folder of that plugin name (or folder name) — manifest, origin, tools, sandbox,
 * approval modes from rules.json, why it is (not) loaded, and the doctor's checks. Asks the plugin in use for its
 * tools when they are not in its manifest — in the review sandbox, or as its manifest runs it with `run` (the owner's
 * `--run`) — and ends it. @throws CliError (exit 1) for an unknown name.
 */
export async function inspectPlugin(h: Home, name: string, lang: Lang, json: boolean, run = false): Promise<Printed> {
  const registry = await registryOf(h, lang);
  const records = recordsNamed(registry, name);
  if (records.length === 0) return inspectOther(h, name, lang, json);
  const { rules, error: rulesError } = rulesOf(h, lang);
  const err: string[] = [];
  // The home (keys, database) is hidden from every sandbox; a plugin's stderr is shown as the hub would log it.
  const host = new ToolHost(registry, { lang, hiddenPaths: [h.dir], log: (subsystem, line) => err.push(`${subsystem}: ${line}`), seen: readCodeFolders(h) });
  const found: Inspected[] = [];
  try {
    const checks = await host.diagnose();
    for (const rec of records) {
      const denied = rules ? pluginDenied(approvalsOf(rules), rec.name) : false;
      const outcome = registry.get(rec.name) === rec ? await host.tools(rec.name, { run, denied }) : null;
      found.push({
        ...toolLineOf(rec), manifestPath: rec.manifestPath, digest: rec.digest, files: rec.files, shadowedBy: rec.shadowedBy, manifest: rec.manifest,
        toolsSource: outcome?.ok ? outcome.source : null, toolsError: outcome && !outcome.ok ? outcome.message : outcome?.unknown?.why ?? null,
        tools: inspectedTools(rec, outcome, rules), rulesError, checks: checks.find((d) => d.dir === rec.dir)?.lines ?? [],
        binds: rec.manifest ? bindsOf(rec.manifest, rec.dir, host.settings).map((b) => ({ ...b, refusedWhy: bindRefusal(rec.name, [b], lang)?.message ?? null })) : [],
      });
    }
  } finally {
    await host.close();
  }
  if (json) return { out: [JSON.stringify(found.length === 1 ? found[0] : found, null, 2)], err, code: 0 };
  return { out: found.flatMap((p, i) => [...(i > 0 ? [""] : []), ...inspectText(p, lang)]), err, code: 0 };
}

/**
 * `plugins inspect <name>` of a plugin of another kind (declarative, agent, channel, source; issue 27): its records as
 * the running hub keeps them, else as read here — kind, origin, status and why, folder, the digest of the version in
 * use, its description and tools. The one in use first. @throws CliError (exit 1) when no plugin has that name.
 */
async function inspectOther(h: Home, name: string, lang: Lang, json: boolean): Promise<Printed> {
  const { views, notes } = await homePluginViews(h, lang);
  const found = views.filter((v) => v.kind !== "tool" && v.manifest.id === name).sort((a, b) => Number(b.status !== "shadowed") - Number(a.status !== "shadowed"));
  // A folder of that name left out before any record (linked out of its root: F29b-2) says why, not "no plugin".
  const left = notes.filter((n) => n.includes(`/${name} `));
  if (found.length === 0) throw new CliError([t(lang, "cli.plugins.notFound", { name, dir: h.plugins }), ...left].join("\n"));
  if (json) return { out: [JSON.stringify(found.length === 1 ? found[0] : found, null, 2)], err: [], code: 0 };
  return { out: found.flatMap((v, i) => [...(i > 0 ? [""] : []), ...otherText(v, lang)]), err: [], code: 0 };
}

/** The lines of `inspect` for a plugin that is not a tool plugin. */
function otherText(v: PluginView, lang: Lang): string[] {
  const l = lineOf(v);
  const out = [t(lang, "cli.plugins.head", { name: l.name, version: l.version ?? "-", kind: l.kind ?? "-", origin: l.origin, status: t(lang, `cli.plugins.status.${l.status}`) })];
  const add = (id: MessageId, params: Record<string, string | number>) => out.push(`  ${render(lang, { id, params })}`);
  const why = v.status === "shadowed" ? t(lang, "cli.plugins.why.shadowed", { winner: v.shadowedBy?.dir ?? "", origin: v.shadowedBy?.origin ?? "" })
    : v.status === "rejected" ? t(lang, v.digest ? "cli.plugins.why.kept" : "cli.plugins.why.rejected", { errors: v.errors.join("; ") })
    : t(lang, "cli.plugins.why.loadedKind");
  add("cli.plugins.why", { why });
  add("cli.plugins.folder", { dir: v.dir });
  add("cli.plugins.files", { digest: v.digest ?? "-" });
  const description = (v.manifest as { description?: unknown }).description;
  if (typeof description === "string" && description) add("cli.plugins.description", { text: description });
  if (l.tools) add("cli.plugins.toolsOf", { tools: l.tools.map((x) => `${l.name}.${x}`).join(", ") });
  return out;
}

/** A check line: its verdict word, the check and what was seen (nothing after the check when nothing was to say). */
function checkLine(l: ConformanceLine, lang: Lang): string {
  const verdict = t(lang, `cli.plugins.verdict.${l.verdict}`);
  return l.detail ? t(lang, "cli.plugins.check", { verdict, check: l.check, detail: l.detail }) : t(lang, "cli.plugins.checkBare", { verdict, check: l.check });
}

function sandboxText(m: Manifest, lang: Lang): string {
  const s = m.sandbox;
  if (!s) return t(lang, "cli.plugins.sandboxNone");
  const none = "-";
  return t(lang, "cli.plugins.sandbox", {
    memory: s.memoryBytes === null ? none : `${Math.round(s.memoryBytes / 1024 / 1024)} MiB`, cpus: s.cpus ?? none, pids: s.pids ?? none,
    network: s.network, root: t(lang, s.read_only_root ? "cli.plugins.root.readOnly" : "cli.plugins.root.writable"),
    binds: s.binds.length > 0 ? s.binds.join(", ") : none,
  });
}

function approvalText(p: Inspected, tool: InspectedTool, lang: Lang): string {
  const a = tool.approval;
  const mode = a.entry === null ? t(lang, "cli.plugins.approval.default") : t(lang, "cli.plugins.approval.entry", { mode: a.mode, index: a.entry });
  if (p.manifest?.capabilities.disable_model_invocation) return t(lang, "cli.plugins.approval.hidden", { mode });
  const notes: string[] = [];
  if (a.mode === "prompt" && a.allow_session_keys.length > 0) notes.push(t(lang, "cli.plugins.approval.sessions", { keys: a.allow_session_keys.join(", ") }));
  if (a.mode === "auto" && p.origin !== "builtin") notes.push(t(lang, "cli.plugins.approval.firstUse"));
  return [t(lang, "cli.plugins.approval", { mode }), ...notes].join(t(lang, "cli.plugins.approval.joiner"));
}

/** Why a folder is (not) loaded. */
function whyText(p: Inspected, lang: Lang): string {
  if (p.status === "shadowed") return t(lang, "cli.plugins.why.shadowed", { winner: p.shadowedBy?.dir ?? "", origin: p.shadowedBy?.origin ?? "" });
  if (p.status === "error") return t(lang, p.manifest ? "cli.plugins.why.lastGood" : "cli.plugins.why.rejected", { errors: p.errors.join("; ") });
  return t(lang, "cli.plugins.why.ok");
}

function toolsHeading(p: Inspected, lang: Lang): string {
  if (p.toolsError !== null) return t(lang, "cli.plugins.tools.failed", { error: p.toolsError });
  if (p.toolsSource === null) return t(lang, "cli.plugins.tools.notAsked");
  if (p.tools.length === 0) return t(lang, p.manifest && runners[p.manifest.plugin_type].tools(p.manifest) === "any" ? "cli.plugins.toolsAny" : "cli.plugins.tools.none");
  const id: Record<NonNullable<Inspected["toolsSource"]>, MessageId> = { manifest: "cli.plugins.tools.manifest", "tools/list": "cli.plugins.tools.list", mcp: "cli.plugins.tools.mcp" };
  return render(lang, { id: id[p.toolsSource] });
}

/** Files of compiled code: Python's bytecode and extension modules, native libraries, Node addons, WebAssembly. */
const compiledFile = /\.(pyc|pyo|so(\.[0-9.]+)?|pyd|dylib|dll|node|wasm)$/i;
/** How many compiled files inspect names (then "…"). */
const compiledShownMax = 5;

function inspectText(p: Inspected, lang: Lang): string[] {
  const m = p.manifest;
  const out = [t(lang, "cli.plugins.head", { name: p.name, version: p.version ?? "-", kind: p.kind ?? "-", origin: p.origin, status: t(lang, `cli.plugins.status.${p.status}`) })];
  const add = (id: MessageId, params: Record<string, string | number>) => out.push(`  ${render(lang, { id, params })}`);
  add("cli.plugins.why", { why: whyText(p, lang) });
  add("cli.plugins.folder", { dir: p.dir });
  add("cli.plugins.manifestFiles", { path: p.manifestPath, count: p.files?.length ?? "-", digest: p.digest ?? "-" });
  // Compiled code runs where the owner reads source: Python imports `x.*.so` before `x.py` (hostile round 43, F43b-5:
  // a shipped .pyc ran instead of the .py; the host now ignores __pycache__, not an extension module).
  const compiled = (p.files ?? []).map((f) => f.slice(f.indexOf(" ") + 1)).filter((f) => compiledFile.test(f));
  if (compiled.length > 0) add("cli.plugins.compiled", { count: compiled.length, files: compiled.slice(0, compiledShownMax).join(", ") + (compiled.length > compiledShownMax ? ", …" : "") });
  if (m) {
    if (m.description) add("cli.plugins.description", { text: m.description });
    if (m.author) add("cli.plugins.author", { text: m.author });
    add("cli.plugins.runs", { command: [m.entry_point.command, ...m.entry_point.args].join(" ") });
    if (runners[m.plugin_type].manifestTimeout) add("cli.plugins.timeout", { ms: runners[m.plugin_type].timeoutMs(m) });
    out.push(`  ${sandboxText(m, lang)}`);
    // The same folder as a code plugin runs in the hub's process, whatever [sandbox] says (hostile round 42, F42b-3).
    const code = classify(p.dir).filter((k) => (codeKinds as readonly string[]).includes(k));
    if (code.length > 0) add("cli.plugins.alsoCode", { kinds: code.join(", ") });
    for (const b of p.binds) {
      if (b.refusedWhy !== null) {
        out.push(`    ${t(lang, "cli.plugins.bindRefused", { reason: b.refusedWhy })}`);
        continue;
      }
      const line = t(lang, "tools.bind.line", { source: b.source, container: b.container, mode: t(lang, b.readOnly ? "tools.bind.ro" : "tools.bind.rw") });
      out.push(`    ${t(lang, "cli.plugins.bind", { bind: b.broad ? `${line} ${t(lang, `tools.bind.broad.${b.broad}`)}` : line })}`);
    }
  }
  // What it takes of the hub's environment (issue 26 round 10): said before the first call asks, never only on the card.
  if (m && passedEnvNames(m).length > 0) add("cli.plugins.env", { names: passedEnvNames(m).join(", ") });
  out.push(`  ${toolsHeading(p, lang)}`);
  for (const tool of p.tools) {
    out.push(`    ${tool.description ? t(lang, "cli.plugins.tool", { name: tool.name, description: tool.description }) : tool.name}`);
    out.push(`      ${approvalText(p, tool, lang)}`);
    out.push(`      ${tool.offeredBy.length > 0 ? t(lang, "cli.plugins.offered", { rules: tool.offeredBy.join(", ") }) : t(lang, "cli.plugins.offeredNone")}`);
    out.push(`      ${t(lang, "cli.plugins.parameters", { schema: JSON.stringify(tool.parameters) })}`);
  }
  if (p.rulesError !== null) add("cli.plugins.rulesError", { error: p.rulesError });
  if (p.checks.length > 0) {
    add("cli.plugins.checks", {});
    for (const l of p.checks) out.push(`    ${checkLine(l, lang)}`);
  }
  return out;
}

/**
 * rules.json's tools and approvals that name a plugin not found here: warnings (it may be installed later), naming the
 * plugin meant when one differs only in case or has that folder name (hostile round 57, F57a-4: an approval naming
 * `SVCB`, or the folder of a plugin whose manifest names it otherwise, denied nothing).
 */
function rulesWarnings(registry: ToolRegistry, rules: Rules, lang: Lang): ConformanceLine[] {
  const known = (plugin: string) => registry.get(plugin) !== null;
  const near = (plugin: string) => registry.list().find((p) => p.status !== "shadowed" && p.name !== plugin && (p.name.toLowerCase() === plugin.toLowerCase() || basename(p.dir) === plugin))?.name;
  const missing = (pattern: string, plugin: string) => {
    const meant = near(plugin);
    return meant === undefined ? t(lang, "cli.plugins.noPlugin", { pattern, plugin }) : t(lang, "cli.plugins.noPluginNear", { pattern, plugin, near: meant });
  };
  const lines: ConformanceLine[] = [];
  for (const r of rules.rules) {
    for (const pattern of r.tools ?? []) {
      const plugin = pattern.slice(0, pattern.indexOf("."));
      if (!known(plugin)) lines.push({ check: t(lang, "cli.plugins.rulesTools", { rule: r.name }), verdict: "warn", detail: missing(pattern, plugin) });
    }
  }
  approvalsOf(rules).forEach((a, i) => {
    if (!known(a.plugin)) lines.push({ check: t(lang, "cli.plugins.rulesApproval", { index: i }), verdict: "warn", detail: missing(a.tool ?? a.plugin, a.plugin) });
  });
  return lines;
}

/**
 * What `check` says beside this home's valid rules.json (`h.rules`): its tools and approvals that name no tool plugin
 * found here (`rulesWarnings`), as `plugins doctor` words them — `check` had said "valid" of an approval that denied
 * nothing (F57a-4). Reads plugin folders, runs no plugin code; none when rules.json does not read.
 */
export async function rulesPluginWarnings(h: Home, lang: Lang): Promise<string[]> {
  try {
    const { rules } = rulesOf(h, lang);
    if (!rules) return [];
    // A hub's `serve --plugins` folders are asked only of a home a hub has run on: finding one reads config.json and
    // the master key and makes home.id, which `check` — a read of one file, before `init` or in CI — must not need.
    const views = recordedHubUrl(h) === null ? null : await hubPluginViews(h, lang).catch(() => null);
    return rulesWarnings((await localPlugins(h, lang, serveDirsOf(views))).tools, rules, lang).map((l) => checkLine(l, lang));
  } catch {
    return []; // best effort: the file is valid whatever the plugins' folders hold
  }
}

/**
 * `plugins doctor`: every plugin folder's checks (manifest, entry point, sandbox available here, clashes) and
 * rules.json's tools and approvals that name no plugin found; runs no plugin code. Exit 1 when anything needs fixing.
 */
export async function doctorPlugins(h: Home, lang: Lang): Promise<Printed> {
  const local = await pluginsOf(h, lang);
  const registry = local.tools;
  const host = new ToolHost(registry, { lang, hiddenPaths: [h.dir], seen: readCodeFolders(h) });
  let diagnoses: PluginDiagnosis[];
  try {
    // Clashes across kinds too: a declarative plugin a tool plugin of its name shadows is said at the tool plugin.
    diagnoses = await host.diagnose(local.registry.kindClashes());
  } finally {
    await host.close();
  }
  const out: string[] = [];
  const { rules, error, missing } = rulesOf(h, lang);
  const rulesLines = rules ? rulesWarnings(registry, rules, lang) : [];
  for (const d of diagnoses) out.push(t(lang, "cli.plugins.doctorHead", { name: d.plugin, dir: d.dir }), ...d.lines.map((l) => `  ${checkLine(l, lang)}`));
  if (rulesLines.length > 0) out.push(t(lang, "cli.plugins.doctorRules", { file: h.rules }), ...rulesLines.map((l) => `  ${checkLine(l, lang)}`));
  const failing = diagnoses.filter((d) => d.lines.some((l) => l.verdict === "fail")).length;
  out.push(diagnoses.length === 0
    ? t(lang, "cli.plugins.none", { dir: h.plugins })
    : t(lang, failing > 0 ? "cli.plugins.doctorFix" : "cli.plugins.doctorFine", { failing, plugins: diagnoses.length }));
  // A home without rules.json yet has nothing to warn about; a broken one leaves every approval unknown.
  const err = [...registry.problems().notes, ...(error !== null && !missing ? [t(lang, "cli.plugins.rulesError", { error })] : [])];
  return { out, err, code: failing > 0 ? 1 : 0 };
}

/**
 * `plugins conformance <folder> [--args JSON]` (issue 16): checks a tool plugin folder against the contract (manifest,
 * tool list, a good call, a bad call, id echo, stdout discipline, exit at end of input, timeout), one line per check,
 * as `doctor` words them. Exit 1 when a check fails (a `warn` does not fail it).
 * @throws CliError when `--args` is not a JSON object.
 */
export async function pluginConformance(folder: string, argsText: string | undefined, lang: Lang, h?: Home): Promise<Printed> {
  let args: Record<string, unknown> | undefined;
  if (argsText !== undefined) {
    const read = parseJson(argsText);
    if (!read.ok) throw new CliError(t(lang, "cli.invoke.argsJson", { error: t(lang, "json.at", { ...read.at }) }));
    const parsed = read.value;
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new CliError(t(lang, "field.type", { field: "--args", type: "object" }));
    args = parsed as Record<string, unknown>;
  }
  // A service under test serves in a folder of the home when there is one (hidden from agents), else in the temp dir.
  const sockets = serviceSocketFolder(h && existsSync(h.dir) ? h.dir : null);
  let lines: ConformanceLine[];
  try {
    // the home is hidden from the plugin under test as from every sandbox the hub starts (f26-add's review: it was not)
    // A plugin the home's approvals deny (whole or one tool) is not run: conformance calls its tools itself, outside the
    // hub's decision and audit (hostile round 40, F40b-1).
    const rules = h ? rulesOf(h, lang).rules : null;
    const approvals = rules ? approvalsOf(rules) : [];
    const refusal = (plugin: string) => {
      const index = approvals.findIndex((r) => r.plugin === plugin && r.mode === "deny");
      return index < 0 ? null : t(lang, "tools.conf.deniedWhy", { index, tool: approvals[index]!.tool ?? plugin });
    };
    lines = await conformance(folder, { lang, args, socketDir: join(sockets, "1"), hidden: h && existsSync(h.dir) ? [h.dir] : [], refusal });
  } finally {
    rmSync(sockets, { recursive: true, force: true });
  }
  return { out: lines.map((l) => checkLine(l, lang)), err: [], code: lines.some((l) => l.verdict === "fail") ? 1 : 0 };
}
