/**
 * What a manifest's schema (manifest-schema.ts) cannot say, checked by hand (issue 27): `[mcp]` only with
 * `plugin_type = "mcp"` at manifest_version 3, a tool listed twice, a `parameters` that is no usable JSON Schema, `..`
 * or `.git` in the entry point, a memory size, a known capability, a bind in Docker `-v` form that stays in its place. Each
 * check looks only at values of the right type (the schema names the others), so every problem of a file is told at
 * once. Then the manifest migrated to version 3 with every default filled in.
 */
import { schemaAjv } from "./arguments.js";
import { hasDotDot, isCapability, parseBind, parseMemory } from "./sandbox-spec.js";
import { manifestVersionMax, sandboxMemoryMinBytes } from "./limits.js";
import type { MessageId } from "../i18n/messages.js";
import type { FilePath } from "../protocol/file-problems.js";
import type { ManifestFile, McpFile } from "./manifest-schema.js";
import type { BindMount, Manifest, McpSpec, PluginType, SandboxSpec } from "./types.js";

/** A table of the document as the reader gives it. */
export type Table = Record<string, unknown>;

/** `hooks` names the public implementation knows; others load too (as there). */
export const knownHooks = [
  "message.received", "message.sent", "message.transcribed", "message.preprocessed", "session.patch", "agent.bootstrap",
  "gateway.startup", "config.changed",
] as const;

/** A plain table of the parsed document (not an array, not a date). */
export function isTable(v: unknown): v is Table {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** One problem the hand checks found: where, and the catalog message (its `{field}` is filled in by the caller). */
export interface HandProblem { path: FilePath; id: MessageId; params?: Record<string, string | number> }

const pluginTypes: readonly string[] = ["sync", "async", "service", "mcp"];
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const table = (v: unknown): Table => (isTable(v) ? v : {});

/**
 * Whether a value of the entry point names the plugin folder's own `.git`: a path starting there, relative to the
 * folder (the working directory) or as the sandbox shows it (`.git/main.py`, `./.git`, `/workspace/.git/x`,
 * `-c exec(open('.git/x').read())`, `PYTHONPATH=.git/lib`); not `.gitignore`, `x.git/`, a subfolder's `sub/.git` (whose
 * files the digest covers) nor another folder's (`/w/.git/config` of a bind).
 */
export function namesGitStore(value: string): boolean {
  return /(^|[\s'"=:(,;])(\.\/|\/workspace\/)?\.git([/\\]|$|[^A-Za-z0-9_.-])/.test(value);
}

/** The problems of `doc` a schema cannot find, in the order of the checks. */
export function handProblems(doc: Table): HandProblem[] {
  const out: HandProblem[] = [];
  const add = (path: FilePath, id: MessageId, params?: Record<string, string | number>) => out.push({ path, id, params });
  const declared = Number.isInteger(doc.manifest_version) ? (doc.manifest_version as number) : 1;
  const pluginType = pluginTypes.includes(doc.plugin_type as string) ? (doc.plugin_type as string) : "sync";
  // Migration (in memory): 1 → 2 → 3, except an MCP-flavoured manifest, which must say 3 itself.
  const mcpTable = isTable(doc.mcp);
  if ((pluginType === "mcp" || mcpTable) && declared < 3) add([mcpTable ? "mcp" : "plugin_type"], "tools.manifest.mcpVersion", { version: declared });
  else if (mcpTable && pluginType !== "mcp") add(["mcp"], "tools.manifest.mcpType", { type: pluginType });
  const ep = table(doc.entry_point);
  if (typeof ep.command === "string" && hasDotDot(ep.command)) add(["entry_point", "command"], "tools.manifest.traversal");
  list(ep.args).forEach((a, i) => { if (typeof a === "string" && hasDotDot(a)) add(["entry_point", "args", i], "tools.manifest.traversal"); });
  // Nothing runs from git's store, which the digest leaves out (files.ts; issue 26 round 26, F26b-1).
  if (typeof ep.command === "string" && namesGitStore(ep.command)) add(["entry_point", "command"], "tools.manifest.gitStore");
  list(ep.args).forEach((a, i) => { if (typeof a === "string" && namesGitStore(a)) add(["entry_point", "args", i], "tools.manifest.gitStore"); });
  Object.entries(table(ep.env)).forEach(([k, v]) => { if (typeof v === "string" && namesGitStore(v)) add(["entry_point", "env", k], "tools.manifest.gitStore"); });
  const names: unknown[] = [];
  list(table(doc.capabilities).tools).forEach((tool, i) => {
    const p = ["capabilities", "tools", i];
    const { name, parameters } = table(tool);
    if (typeof name === "string" && names.includes(name)) add([...p, "name"], "tools.manifest.duplicateTool", { tool: name });
    names.push(name);
    const error = isTable(parameters) ? checkSchema(parameters) : null;
    if (error !== null) add([...p, "parameters"], "tools.manifest.schema", { error });
  });
  const sb = table(doc.sandbox);
  if (typeof sb.memory === "string" && sb.memory.trim() !== "") {
    const bytes = parseMemory(sb.memory);
    if (bytes === null || bytes < sandboxMemoryMinBytes) add(["sandbox", "memory"], "tools.manifest.memory", { min: "4m" });
  }
  list(sb.cap_drop).forEach((cap, i) => { if (typeof cap === "string" && !isCapability(cap)) add(["sandbox", "cap_drop", i], "tools.manifest.capability"); });
  list(sb.binds).forEach((b, i) => {
    const m = typeof b === "string" ? parseBind(b) : null;
    const id = ({ form: "tools.manifest.bind", traversal: "tools.manifest.traversal", root: "tools.manifest.bindRoot", ownFolder: "tools.manifest.bindOwnFolder", destination: "tools.manifest.bindDestination" } as const)[typeof m === "string" ? m : "none" as never];
    if (id) add(["sandbox", "binds", i], id);
  });
  return out;
}

/** The manifest of a document schema and hand checks accepted, migrated to version 3, every default filled in. */
export function manifestOf(doc: ManifestFile): Manifest {
  const ep = doc.entry_point;
  const caps = doc.capabilities ?? {};
  return {
    manifest_version: manifestVersionMax,
    declared_version: doc.manifest_version ?? 1,
    name: doc.name, version: doc.version, description: doc.description ?? "", author: doc.author ?? "",
    plugin_type: doc.plugin_type as PluginType,
    entry_point: { command: ep.command, args: [...(ep.args ?? [])], env: Object.fromEntries(Object.entries(ep.env ?? {})) },
    communication: { timeout_ms: doc.communication?.timeout_ms ?? null },
    capabilities: {
      tools: (caps.tools ?? []).map((tool) => ({ name: tool.name, description: tool.description ?? "", parameters: plain(tool.parameters ?? { type: "object" }) as Record<string, unknown> })),
      disable_model_invocation: caps.disable_model_invocation ?? false,
    },
    sandbox: doc.sandbox === undefined ? null : sandbox(doc.sandbox),
    mcp: doc.plugin_type === "mcp" ? mcp(doc.mcp ?? {}) : null,
    protocols: [...(doc.protocols ?? ["openai_function"])],
    hooks: [...(doc.hooks ?? [])],
    skill_refs: [...(doc.skill_refs ?? [])],
    meta: plain(doc.meta ?? {}) as Record<string, unknown>,
  };
}

function sandbox(sb: NonNullable<ManifestFile["sandbox"]>): SandboxSpec {
  const binds = [...(sb.binds ?? [])];
  return {
    memoryBytes: sb.memory === undefined ? null : parseMemory(sb.memory),
    cpus: sb.cpus ?? null,
    pids: sb.pids ?? null,
    read_only_root: sb.read_only_root ?? false,
    cap_drop: [...(sb.cap_drop ?? [])],
    network: sb.network ?? "none",
    binds,
    mounts: binds.map((b) => parseBind(b) as BindMount),
  };
}

function mcp(m: McpFile): McpSpec {
  const env = m.env_passthrough ?? {};
  return {
    autostart: m.autostart ?? false,
    restart_policy: m.restart_policy ?? "on_crash",
    crash_loop_max: m.crash_loop_max ?? 3,
    crash_loop_window_secs: m.crash_loop_window_secs ?? 60,
    handshake_timeout_ms: m.handshake_timeout_ms ?? 5000,
    idle_shutdown_secs: m.idle_shutdown_secs ?? 0,
    env_passthrough: { allow: [...(env.allow ?? [])], deny: [...(env.deny ?? [])] },
    tools_allowlist: { mode: m.tools_allowlist?.mode ?? "allow", names: [...(m.tools_allowlist?.names ?? [])] },
    resources_allowlist: { mode: m.resources_allowlist?.mode ?? "allow", patterns: [...(m.resources_allowlist?.patterns ?? [])] },
  };
}

/** A deep copy with ordinary objects for the reader's tables (dates and other values kept). */
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

/**
 * Why `schema` is not a usable JSON Schema (2020-12) for arguments, or null. Each check compiles with an Ajv of its own
 * (~1 ms): one shared by every check kept each compiled schema until removed, and removing one by its `$id` removed
 * whatever held that id — a schema naming the meta-schema's id removed the meta-schema for every later check.
 */
export function checkSchema(schema: Table): string | null {
  if (!isJson(schema)) return "not JSON (a date or an infinity)";
  try {
    schemaAjv().compile(schema);
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}
