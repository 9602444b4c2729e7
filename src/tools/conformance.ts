/**
 * Conformance of one tool plugin folder to the contract of spec tool-plugins.md (later `agent-autoloop plugins
 * conformance <folder>`): its manifest, its tool list, a good call, a call of a tool that does not exist, the id echo,
 * stdout discipline, exit at end of input and answering within its timeout. One line per check: `ok`, `warn` (the
 * host copes, but the plugin should change), `fail` (the host cannot use it so), `skip`.
 */
import { existsSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { t, type Lang } from "../i18n/messages.js";
import { checkArguments } from "./arguments.js";
import { systemCgroups } from "./cgroup.js";
import { formatProblem, manifestFileNames, readManifest } from "./manifest.js";
import { McpSession } from "./mcp.js";
import type { LaunchSettings } from "./process.js";
import { readBounded } from "./registry.js";
import { ServiceSupervisor, serviceSocketFolder } from "./service.js";
import { askToolList, callParams, outcomeOf, runRequest, type RunnablePlugin } from "./stdio-runner.js";
import { callTimeoutMsDefault, manifestMaxBytes, restartBackoffMs } from "./limits.js";
import type { ConformanceLine, ToolSpec } from "./types.js";

/** What a conformance run may be given: the arguments of the good call (else made up from the schema). */
export interface ConformanceOptions {
  lang: Lang;
  args?: Record<string, unknown>;
  bwrap?: string;
  log?: (subsystem: string, line: string) => void;
  /** The folder of a service's socket (made when missing): default, a new folder in the temp dir. */
  socketDir?: string;
}

/** The request id conformance uses: not 1, so a plugin that always answers id 1 is caught. */
export const conformanceRequestId = 4242;
/** A tool name no plugin has. */
export const missingToolName = "conformance-no-such-tool";

/** Arguments that fit `schema`'s required properties, made up from their types (strings are "conformance"). */
export function sampleArguments(schema: Record<string, unknown>): Record<string, unknown> {
  const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  const out: Record<string, unknown> = {};
  for (const name of required) {
    const p = props[name] ?? {};
    if (Array.isArray(p.enum) && p.enum.length > 0) out[name] = p.enum[0];
    else if (p.type === "integer" || p.type === "number") out[name] = typeof p.minimum === "number" ? p.minimum : 1;
    else if (p.type === "boolean") out[name] = true;
    else if (p.type === "array") out[name] = [];
    else if (p.type === "object") out[name] = sampleArguments(p);
    else out[name] = "conformance";
  }
  return out;
}

/** Runs the checks on the plugin folder `folder`. Never throws; ends every process it started. */
export async function conformance(folder: string, o: ConformanceOptions): Promise<ConformanceLine[]> {
  const lines: ConformanceLine[] = [];
  const lang = o.lang;
  const add = (id: Parameters<typeof t>[1], verdict: ConformanceLine["verdict"], detail: string) => lines.push({ check: t(lang, id), verdict, detail });
  const dir = resolve(folder);
  const file = manifestFileNames.map((f) => join(dir, f)).find((f) => existsSync(f));
  if (!file) {
    add("tools.conf.manifest", "fail", `${dir}: no ${manifestFileNames.join(" or ")}`);
    return lines;
  }
  const read = readManifest(readBounded(file, manifestMaxBytes), lang);
  if (!read.ok) {
    add("tools.conf.manifest", "fail", read.problems.map((p) => formatProblem(file, p)).join("; "));
    return lines;
  }
  const m = read.manifest;
  add("tools.conf.manifest", "ok", `${m.name} ${m.version} ${m.plugin_type} (${basename(file)}, sha256 ${read.digest.slice(0, 12)})`);
  const s: LaunchSettings = { lang, bwrap: o.bwrap ?? "bwrap", hidden: [], cgroups: systemCgroups(), parentEnv: process.env, log: o.log ?? (() => {}) };
  const p: RunnablePlugin = { name: m.name, dir, manifest: m };
  if (m.plugin_type === "mcp" || m.plugin_type === "service") await longLived(p, read.digest, s, o, add);
  else await stdio(p, s, o, add);
  return lines;
}

type Add = (id: Parameters<typeof t>[1], verdict: ConformanceLine["verdict"], detail: string) => void;

async function stdio(p: RunnablePlugin, s: LaunchSettings, o: ConformanceOptions, add: Add): Promise<void> {
  let tools: ToolSpec[] = p.manifest.capabilities.tools;
  if (tools.length > 0) add("tools.conf.tools", "ok", `manifest: ${tools.map((x) => x.name).join(", ")}`);
  else {
    const asked = await askToolList(p, s);
    if (!asked.ok) return add("tools.conf.tools", "fail", `tools/list: ${asked.message}`);
    tools = asked.tools;
    add("tools.conf.tools", tools.length > 0 ? "ok" : "fail", `tools/list: ${tools.map((x) => x.name).join(", ") || "none"}`);
    if (tools.length === 0) return;
  }
  const tool = tools[0]!;
  const args = o.args ?? sampleArguments(tool.parameters);
  const timeoutMs = p.manifest.communication.timeout_ms ?? callTimeoutMsDefault;
  const ctx = { sessionKey: "conformance" };
  const started = Date.now();
  const run = await runRequest(p, "tools/call", callParams(tool.name, args, ctx), s, { timeoutMs, id: conformanceRequestId, ctx });
  const took = Date.now() - started;
  if (!run.ok) return add("tools.conf.call", "fail", run.message);
  const outcome = outcomeOf(p, run.result, timeoutMs, s.lang);
  const end = run.result.end;
  add("tools.conf.call", outcome.status === "ok" || outcome.status === "accepted" ? "ok" : "fail", `${tool.name} ${JSON.stringify(args)} → ${JSON.stringify(outcome)}`);
  const wrongId = end.kind === "protocol" && end.reason === "wrong_id";
  add("tools.conf.idEcho", end.kind === "response" ? "ok" : wrongId ? "fail" : "skip", end.kind === "response" ? `id ${conformanceRequestId}` : end.message || end.kind);
  const discipline = end.kind === "protocol" && !wrongId ? "fail" : run.result.extraOutput ? "warn" : end.kind === "response" || wrongId ? "ok" : "skip";
  add("tools.conf.stdout", discipline, end.kind === "protocol" && !wrongId ? end.message : run.result.extraOutput ? t(s.lang, "tools.call.extraOutput") : "");
  add("tools.conf.exit", end.kind !== "response" ? "skip" : run.result.exitedOnItsOwn || p.manifest.plugin_type === "async" ? "ok" : "warn", end.kind === "response" && !run.result.exitedOnItsOwn ? "killed after 1 s" : "");
  add("tools.conf.timeout", end.kind === "timeout" ? "fail" : "ok", `${took} ms of ${timeoutMs} ms`);
  const bad = await runRequest(p, "tools/call", callParams(missingToolName, {}, ctx), s, { timeoutMs, ctx });
  if (!bad.ok) add("tools.conf.badCall", "fail", bad.message);
  else {
    const b = bad.result.end;
    add("tools.conf.badCall", b.kind === "response" ? ("error" in b.response ? "ok" : "warn") : "fail", b.kind === "response" ? JSON.stringify(b.response) : b.message || b.kind);
  }
  const badArgs = checkArguments(`conformance\0${tool.name}`, tool.parameters, { ...args, ...brokenArgument(tool.parameters) }, s.lang);
  add("tools.conf.badArgs", Object.keys(brokenArgument(tool.parameters)).length === 0 ? "skip" : badArgs ? "ok" : "warn", badArgs ?? "");
}

/** One argument that breaks the schema (a required string given as a number), or none when it has no typed one. */
function brokenArgument(schema: Record<string, unknown>): Record<string, unknown> {
  const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const name = Object.keys(props).find((k) => props[k]?.type === "string");
  return name ? { [name]: 12345 } : {};
}

async function longLived(p: RunnablePlugin, digest: string, s: LaunchSettings, o: ConformanceOptions, add: Add): Promise<void> {
  const timeoutMs = p.manifest.communication.timeout_ms ?? callTimeoutMsDefault;
  const ctx = { sessionKey: "conformance" };
  if (p.manifest.plugin_type === "mcp") {
    const session = new McpSession({ ...p, manifest: { ...p.manifest, mcp: { ...p.manifest.mcp!, restart_policy: "never" } } }, s, restartBackoffMs, () => {});
    try {
      const listed = await session.listTools();
      if (!listed.ok) return add("tools.conf.tools", "fail", listed.message);
      add("tools.conf.tools", listed.tools.length > 0 ? "ok" : "warn", listed.tools.map((x) => x.name).join(", ") || "none exported ([mcp] tools_allowlist)");
      const tool = listed.tools[0];
      if (!tool) return;
      const args = o.args ?? sampleArguments(tool.parameters);
      const r = await session.call(tool.name, args, ctx, timeoutMs);
      add("tools.conf.call", r.status === "ok" ? "ok" : "fail", `${tool.name} ${JSON.stringify(args)} → ${JSON.stringify(r)}`);
      const bad = await session.call(missingToolName, {}, ctx, timeoutMs);
      add("tools.conf.badCall", bad.status === "error" ? "ok" : "warn", JSON.stringify(bad));
    } finally {
      await session.stop();
    }
    return;
  }
  const sup = new ServiceSupervisor(p, digest, s, o.socketDir ?? join(serviceSocketFolder(null), "1"), restartBackoffMs, () => {});
  try {
    if (!(await sup.start())) return add("tools.conf.call", "fail", sup.status.lastError ?? "");
    const tool = p.manifest.capabilities.tools[0];
    const args = o.args ?? (tool ? sampleArguments(tool.parameters) : {});
    const r = await sup.call(tool?.name ?? "", args, ctx, timeoutMs);
    add("tools.conf.call", r.status === "ok" ? "ok" : "fail", `${tool?.name ?? "(default)"} ${JSON.stringify(args)} → ${JSON.stringify(r)}`);
  } finally {
    await sup.stop();
  }
}
