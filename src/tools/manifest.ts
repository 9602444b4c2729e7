/**
 * Reading a tool plugin's manifest (spec tool-plugins.md §2, and manifest versions 2 and 3 of the public
 * implementation): TOML parsed by smol-toml, validated strictly (an unknown key, a missing or blank required field, a
 * wrong type, a value out of range are refused naming the key and its line), migrated in memory to version 3, every
 * default filled in. Reading never runs plugin code.
 */
import { createHash } from "node:crypto";
import { parse, TomlError } from "smol-toml";
import { t, type Lang } from "../i18n/messages.js";
import { Checker, isTable, type Table } from "./manifest-check.js";
import { schemaAjv } from "./arguments.js";
import { indexLines } from "./toml-lines.js";
import { hasDotDot, isCapability, parseBind, parseMemory } from "./sandbox-spec.js";
import {
  callTimeoutMsMax, manifestDepthMax, manifestEnvEntriesMax, manifestItemMaxChars, manifestMaxBytes, manifestTextMaxChars,
  manifestToolsMax, manifestVersionMax, pluginNameMaxChars, pluginVersionMaxChars, sandboxCpusMax, sandboxMemoryMinBytes,
  sandboxPidsMax, toolNameMaxChars,
} from "./limits.js";
import { toolPluginNamePattern as pluginNamePattern, toolNamePattern } from "../kernel/rules.js";
import { toolPluginTypes } from "../protocol/patterns.js";
import type { BindMount, Manifest, ManifestProblem, McpSpec, PluginType, SandboxSpec, ToolSpec } from "./types.js";

/** The file names a plugin folder may hold its manifest in: the spec's, then the public implementation's. */
export const manifestFileNames = ["manifest.toml", "plugin-manifest.toml"] as const;

/** Plugin names and tool names: as rules.json names them (`<plugin>.<tool>`), defined once in the kernel. */
export { pluginNamePattern, toolNamePattern };
/** Environment variable names. */
export const envNamePattern = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `protocols` values the public implementation accepts. */
export const knownProtocols = ["openai_function", "block"] as const;
/** `hooks` names the public implementation knows; others load too (as there). */
export const knownHooks = [
  "message.received", "message.sent", "message.transcribed", "message.preprocessed", "session.patch", "agent.bootstrap",
  "gateway.startup", "config.changed",
] as const;

/** The outcome of reading a manifest: the manifest, or every problem found (none is fixed silently). */
export type ManifestResult = { ok: true; manifest: Manifest; digest: string } | { ok: false; problems: ManifestProblem[]; digest: string | null };

/** sha256 (hex) of a manifest's bytes: what trust lists and the tools/list cache are keyed by. */
export function manifestDigest(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

const topKeys = [
  "manifest_version", "name", "version", "description", "author", "plugin_type", "entry_point", "communication",
  "capabilities", "sandbox", "mcp", "protocols", "hooks", "skill_refs", "meta",
] as const;

/**
 * Reads a manifest from its bytes. Never throws for bad input: a file over `manifestMaxBytes`, bad UTF-8 or TOML,
 * nesting deeper than `manifestDepthMax`, or any invalid field gives `ok: false` with the problems in `lang`.
 */
export function readManifest(bytes: Uint8Array, lang: Lang): ManifestResult {
  const digest = manifestDigest(bytes);
  const fail = (key: string, line: number | null, message: string): ManifestResult => ({ ok: false, digest, problems: [{ key, line, message }] });
  if (bytes.length > manifestMaxBytes) return fail("", null, t(lang, "tools.manifest.tooLarge", { limit: manifestMaxBytes }));
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return fail("", null, t(lang, "tools.manifest.utf8"));
  }
  let doc: Table;
  try {
    doc = parse(text, { maxDepth: manifestDepthMax, unsafeKeyBehaviour: "throw" }) as Table;
  } catch (e) {
    if (e instanceof TomlError) return fail("", e.line, t(lang, "tools.manifest.toml", { error: e.message.split("\n")[0]! }));
    return fail("", null, t(lang, "tools.manifest.toml", { error: (e as Error).message }));
  }
  const lines = indexLines(text);
  const c = new Checker(lang, lines);
  const deep = deepestPath(doc);
  if (deep.length > manifestDepthMax) {
    c.add(deep.slice(0, manifestDepthMax + 1), "tools.manifest.tooDeep", { limit: manifestDepthMax });
    return { ok: false, digest, problems: c.problems };
  }
  const manifest = validate(doc, c);
  const problems = [...c.problems].sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity));
  return problems.length > 0 || !manifest ? { ok: false, digest, problems } : { ok: true, manifest, digest };
}

/** The path to the deepest value of `doc` (iterative: a hostile file must not exhaust the stack). */
function deepestPath(doc: unknown): (string | number)[] {
  let best: (string | number)[] = [];
  const stack: { v: unknown; path: (string | number)[] }[] = [{ v: doc, path: [] }];
  while (stack.length > 0) {
    const { v, path } = stack.pop()!;
    if (path.length > best.length) best = path;
    if (path.length > manifestDepthMax) continue;
    if (Array.isArray(v)) v.forEach((x, i) => stack.push({ v: x, path: [...path, i] }));
    else if (isTable(v)) for (const [k, x] of Object.entries(v)) stack.push({ v: x, path: [...path, k] });
  }
  return best;
}

/** Validates the document and builds the manifest (migrated to version 3); problems go to `c`. */
function validate(doc: Table, c: Checker): Manifest | null {
  c.known(doc, [], topKeys);
  const declared = c.int(doc, [], "manifest_version", Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, 1);
  if (declared > manifestVersionMax) {
    c.add(["manifest_version"], "tools.manifest.versionNewer", { version: declared, max: manifestVersionMax });
    return null;
  }
  if (declared < 1) c.add(["manifest_version"], "tools.manifest.between", { min: 1, max: manifestVersionMax });
  const name = c.str(doc, [], "name", { min: 1, max: pluginNameMaxChars });
  if (name.trim() !== "" && [...name].length <= pluginNameMaxChars && !pluginNamePattern.test(name)) c.add(["name"], "tools.manifest.name");
  const version = c.str(doc, [], "version", { min: 1, max: pluginVersionMaxChars });
  const description = c.str(doc, [], "description", { max: manifestTextMaxChars, fallback: "" });
  const author = c.str(doc, [], "author", { max: manifestTextMaxChars, fallback: "" });
  const pluginType = c.oneOf<PluginType>(doc, [], "plugin_type", toolPluginTypes);
  const protocols = c.strings(doc, [], "protocols", ["openai_function"]);
  protocols.forEach((p, i) => {
    if (!(knownProtocols as readonly string[]).includes(p)) c.add(["protocols", i], "field.enum", { values: knownProtocols.map((x) => `"${x}"`).join(", ") });
  });
  const mcpTable = c.table(doc, [], "mcp");
  // Migration (in memory): 1 → 2 → 3, except an MCP-flavoured manifest, which must say 3 itself.
  const mcpFlavoured = pluginType === "mcp" || mcpTable !== null;
  if (mcpFlavoured && declared < 3) {
    c.add([mcpTable ? "mcp" : "plugin_type"], "tools.manifest.mcpVersion", { version: declared });
  } else if (mcpTable && pluginType !== "mcp") {
    c.add(["mcp"], "tools.manifest.mcpType", { type: pluginType });
  }
  const manifest: Manifest = {
    manifest_version: manifestVersionMax,
    declared_version: declared,
    name, version, description, author,
    plugin_type: pluginType,
    entry_point: entryPoint(doc, c),
    communication: communication(doc, c),
    capabilities: capabilities(doc, c),
    sandbox: sandbox(doc, c),
    mcp: pluginType === "mcp" ? mcp(mcpTable ?? {}, c) : null,
    protocols,
    hooks: c.strings(doc, [], "hooks"),
    skill_refs: c.strings(doc, [], "skill_refs"),
    meta: plain(c.table(doc, [], "meta") ?? {}) as Record<string, unknown>,
  };
  return manifest;
}

function entryPoint(doc: Table, c: Checker): Manifest["entry_point"] {
  const p = ["entry_point"];
  const ep = c.table(doc, [], "entry_point", true);
  if (!ep) return { command: "", args: [], env: {} };
  c.known(ep, p, ["command", "args", "env"]);
  const command = c.str(ep, p, "command", { min: 1, max: manifestItemMaxChars });
  if (hasDotDot(command)) c.add([...p, "command"], "tools.manifest.traversal");
  const args = c.strings(ep, p, "args");
  args.forEach((a, i) => {
    if (hasDotDot(a)) c.add([...p, "args", i], "tools.manifest.traversal");
  });
  const env: Record<string, string> = {};
  const envTable = c.table(ep, p, "env");
  if (envTable) {
    const entries = Object.entries(envTable);
    if (entries.length > manifestEnvEntriesMax) c.add([...p, "env"], "field.maxItems", { limit: manifestEnvEntriesMax });
    for (const [k, v] of entries.slice(0, manifestEnvEntriesMax)) {
      if (!envNamePattern.test(k)) c.add([...p, "env", k], "tools.manifest.envName");
      else if (typeof v !== "string") c.add([...p, "env", k], "field.type", { type: "string" });
      else if ([...v].length > manifestItemMaxChars) c.add([...p, "env", k], "field.maxLength", { limit: manifestItemMaxChars });
      else env[k] = v;
    }
  }
  return { command, args, env };
}

function communication(doc: Table, c: Checker): Manifest["communication"] {
  const comm = c.table(doc, [], "communication") ?? {};
  c.known(comm, ["communication"], ["timeout_ms"]);
  return { timeout_ms: c.int(comm, ["communication"], "timeout_ms", 1, callTimeoutMsMax, null) };
}

const schemaChecker = schemaAjv();

function capabilities(doc: Table, c: Checker): Manifest["capabilities"] {
  const p = ["capabilities"];
  const caps = c.table(doc, [], "capabilities") ?? {};
  c.known(caps, p, ["tools", "disable_model_invocation"]);
  const disable = c.bool(caps, p, "disable_model_invocation", false);
  const raw = caps.tools;
  const tools: ToolSpec[] = [];
  if (raw === undefined) return { tools, disable_model_invocation: disable };
  if (!Array.isArray(raw)) {
    c.add([...p, "tools"], "field.type", { type: "array of tables" });
    return { tools, disable_model_invocation: disable };
  }
  if (raw.length > manifestToolsMax) {
    c.add([...p, "tools"], "field.maxItems", { limit: manifestToolsMax });
    return { tools, disable_model_invocation: disable };
  }
  raw.forEach((item, i) => {
    const tp = [...p, "tools", i];
    if (!isTable(item)) return c.add(tp, "field.type", { type: "table" });
    c.known(item, tp, ["name", "description", "parameters"]);
    const name = c.str(item, tp, "name", { min: 1, max: toolNameMaxChars });
    if (name.trim() !== "" && !toolNamePattern.test(name)) c.add([...tp, "name"], "tools.manifest.toolName");
    if (tools.some((x) => x.name === name)) c.add([...tp, "name"], "tools.manifest.duplicateTool", { tool: name });
    const description = c.str(item, tp, "description", { max: manifestTextMaxChars, fallback: "" });
    const parameters = c.table(item, tp, "parameters") ?? { type: "object" };
    const schemaError = checkSchema(parameters);
    if (schemaError) c.add([...tp, "parameters"], "tools.manifest.schema", { error: schemaError });
    tools.push({ name, description, parameters: plain(parameters) as Record<string, unknown> });
  });
  return { tools, disable_model_invocation: disable };
}

/** A deep copy with ordinary objects for the parser's prototype-less tables (dates and other values kept). */
function plain(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(plain);
  if (isTable(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

/** Whether `v` is plain JSON: TOML also has dates and infinities, which a JSON Schema cannot hold. */
function isJson(v: unknown): boolean {
  if (typeof v === "string" || typeof v === "boolean") return true;
  if (typeof v === "number") return Number.isFinite(v);
  if (Array.isArray(v)) return v.every(isJson);
  return isTable(v) && Object.values(v).every(isJson);
}

/** Why `schema` is not a usable JSON Schema (2020-12) for arguments, or null. */
export function checkSchema(schema: Table): string | null {
  if (!isJson(schema)) return "not JSON (a date or an infinity)";
  try {
    schemaChecker.compile(schema);
    return null;
  } catch (e) {
    return (e as Error).message;
  } finally {
    // Ajv keeps every compiled schema (and its $id) until removed: a rescan must not grow it.
    schemaChecker.removeSchema(schema);
  }
}

function sandbox(doc: Table, c: Checker): SandboxSpec | null {
  const p = ["sandbox"];
  const sb = c.table(doc, [], "sandbox");
  if (!sb) return null;
  c.known(sb, p, ["memory", "cpus", "pids", "read_only_root", "cap_drop", "network", "binds"]);
  let memoryBytes: number | null = null;
  if (sb.memory !== undefined) {
    const text = c.str(sb, p, "memory", { min: 1, max: 64 });
    const bytes = typeof sb.memory === "string" ? parseMemory(text) : null;
    if (typeof sb.memory === "string" && (bytes === null || bytes < sandboxMemoryMinBytes)) c.add([...p, "memory"], "tools.manifest.memory", { min: "4m" });
    else memoryBytes = bytes;
  }
  let cpus: number | null = null;
  if (sb.cpus !== undefined) {
    if (typeof sb.cpus !== "number" || !Number.isFinite(sb.cpus)) c.add([...p, "cpus"], "field.type", { type: "number" });
    else if (sb.cpus <= 0 || sb.cpus > sandboxCpusMax) c.add([...p, "cpus"], "tools.manifest.between", { min: "0 (excluded)", max: sandboxCpusMax });
    else cpus = sb.cpus;
  }
  const capDrop = c.strings(sb, p, "cap_drop");
  capDrop.forEach((cap, i) => {
    if (!isCapability(cap)) c.add([...p, "cap_drop", i], "tools.manifest.capability");
  });
  const binds = c.strings(sb, p, "binds");
  const mounts: BindMount[] = [];
  binds.forEach((b, i) => {
    const m = parseBind(b);
    if (m === "form") c.add([...p, "binds", i], "tools.manifest.bind");
    else if (m === "traversal") c.add([...p, "binds", i], "tools.manifest.traversal");
    else if (m === "root") c.add([...p, "binds", i], "tools.manifest.bindRoot");
    else if (m === "ownFolder") c.add([...p, "binds", i], "tools.manifest.bindOwnFolder");
    else mounts.push(m);
  });
  return {
    memoryBytes,
    cpus,
    pids: c.int(sb, p, "pids", 1, sandboxPidsMax, null),
    read_only_root: c.bool(sb, p, "read_only_root", false),
    cap_drop: capDrop,
    network: c.oneOf(sb, p, "network", ["none", "bridge", "host"], "none"),
    binds,
    mounts,
  };
}

function mcp(m: Table, c: Checker): McpSpec {
  const p = ["mcp"];
  c.known(m, p, ["autostart", "restart_policy", "crash_loop_max", "crash_loop_window_secs", "handshake_timeout_ms", "idle_shutdown_secs", "env_passthrough", "tools_allowlist", "resources_allowlist"]);
  const envT = c.table(m, p, "env_passthrough") ?? {};
  c.known(envT, [...p, "env_passthrough"], ["allow", "deny"]);
  const allow = c.strings(envT, [...p, "env_passthrough"], "allow");
  allow.forEach((n, i) => {
    if (!envNamePattern.test(n)) c.add([...p, "env_passthrough", "allow", i], "tools.manifest.envName");
  });
  const toolsT = c.table(m, p, "tools_allowlist") ?? {};
  c.known(toolsT, [...p, "tools_allowlist"], ["mode", "names"]);
  const resT = c.table(m, p, "resources_allowlist") ?? {};
  c.known(resT, [...p, "resources_allowlist"], ["mode", "patterns"]);
  const modes = ["allow", "deny", "all"] as const;
  return {
    autostart: c.bool(m, p, "autostart", false),
    restart_policy: c.oneOf(m, p, "restart_policy", ["never", "on_crash", "always"], "on_crash"),
    crash_loop_max: c.int(m, p, "crash_loop_max", 1, 1000, 3),
    crash_loop_window_secs: c.int(m, p, "crash_loop_window_secs", 1, 86_400, 60),
    handshake_timeout_ms: c.int(m, p, "handshake_timeout_ms", 1, callTimeoutMsMax, 5000),
    idle_shutdown_secs: c.int(m, p, "idle_shutdown_secs", 0, 86_400 * 7, 0),
    env_passthrough: { allow, deny: c.strings(envT, [...p, "env_passthrough"], "deny") },
    tools_allowlist: { mode: c.oneOf(toolsT, [...p, "tools_allowlist"], "mode", modes, "allow"), names: c.strings(toolsT, [...p, "tools_allowlist"], "names") },
    resources_allowlist: { mode: c.oneOf(resT, [...p, "resources_allowlist"], "mode", modes, "allow"), patterns: c.strings(resT, [...p, "resources_allowlist"], "patterns") },
  };
}

/** One problem as a person reads it: `<file>:<line>: <message>` (the message names the key). */
export function formatProblem(file: string, p: ManifestProblem): string {
  return p.line !== null ? `${file}:${p.line}: ${p.message}` : `${file}: ${p.message}`;
}
