/**
 * sync and async plugins (spec tool-plugins.md §4, §5): each call is a fresh process (code changes apply on the next
 * call) given one `tools/call` with params `{name, arguments, session_key, request_id, trace_id, callback_url}`. An
 * async plugin's result `{"task_id": …}` is `accepted`: its process may go on working until the call's timeout, then
 * its group is ended. A manifest without tools has them asked with `tools/list` the same way, cached by digest.
 */
import { randomBytes } from "node:crypto";
import { t, type Lang } from "../i18n/messages.js";
import { exchange, type ExchangeResult, type RpcResponse } from "./exchange.js";
import { PluginProcess, prepareLaunch, type LaunchSettings } from "./process.js";
import { checkSchema, toolNamePattern } from "./manifest.js";
import { isTable } from "./manifest-rules.js";
import { taskIdPattern as protocolTaskIdPattern } from "../protocol/patterns.js";
import { manifestToolsMax, taskIdMaxChars, taskIdMinChars, toolNameMaxChars, toolsListTimeoutMs } from "./limits.js";
import type { CallContext, Manifest, ToolOutcome, ToolSpec } from "./types.js";

/** A plugin to run: its name, folder and manifest. */
export interface RunnablePlugin {
  name: string;
  dir: string;
  manifest: Manifest;
}

/** Task ids: URL-safe characters only (they travel in `/v1/plugins/callback/<task_id>`); the hub checks the same. */
export const taskIdPattern = new RegExp(protocolTaskIdPattern);

/** The outcome without its duration (the caller adds it). */
export type Outcome = ToolOutcome;

let nextId = 1;
/** A fresh request id for this process's JSON-RPC requests (numbers: §3's Bash plugin prints ids unquoted). */
export function nextRequestId(): number {
  return nextId++;
}

/** The task id of an async result `{"task_id": "…"}`, or null when the result is not one. */
function taskIdOf(r: RpcResponse): string | null {
  if (!("result" in r) || !isTable(r.result)) return null;
  const id = (r.result as Record<string, unknown>).task_id;
  return typeof id === "string" ? id : null;
}

/** Runs one JSON-RPC request in a fresh process of `p`. `background` holds processes of accepted async tasks. */
export async function runRequest(
  p: RunnablePlugin, method: string, params: unknown, s: LaunchSettings,
  o: { timeoutMs: number; id?: number; ctx?: CallContext; background?: Set<PluginProcess> },
): Promise<{ ok: true; result: ExchangeResult } | { ok: false; code: string; message: string }> {
  const id = o.id ?? nextRequestId();
  const prepared = await prepareLaunch({ name: p.name, dir: p.dir, manifest: p.manifest, tag: `${process.pid}-${id}` }, s);
  if (!prepared.ok) return { ok: false, ...prepared.refusal };
  const proc = new PluginProcess(prepared.launch, p.name, s);
  const async = p.manifest.plugin_type === "async";
  const started = Date.now();
  const result = await exchange(proc, { id, method, params }, {
    plugin: p.name, lang: s.lang, timeoutMs: o.timeoutMs, onProgress: o.ctx?.onProgress, signal: o.ctx?.signal,
    keepAlive: (r) => {
      const task = async && method === "tools/call" ? taskIdOf(r) : null;
      if (task === null || !taskIdPattern.test(task)) return false;
      o.background?.add(proc);
      return true;
    },
    keepAliveMs: o.timeoutMs - (Date.now() - started),
    onKeptAliveEnd: () => o.background?.delete(proc),
  });
  if (result.extraOutput) s.log(`plugin.${p.name}`, t(s.lang, "tools.call.extraOutput"));
  return { ok: true, result };
}

/** Maps the end of an exchange to a call outcome. */
export function outcomeOf(p: RunnablePlugin, r: ExchangeResult, timeoutMs: number, lang: Lang): Outcome {
  const end = r.end;
  switch (end.kind) {
    case "response": {
      if ("error" in end.response) return { status: "error", code: end.response.error.code, message: end.response.error.message };
      const task = p.manifest.plugin_type === "async" ? taskIdOf(end.response) : null;
      if (task === null) return { status: "ok", result: end.response.result };
      if (!taskIdPattern.test(task)) return { status: "error", code: "tools.bad_task_id", message: t(lang, "tools.call.taskId", { plugin: p.name, min: taskIdMinChars, max: taskIdMaxChars }) };
      return { status: "accepted", taskId: task };
    }
    case "timeout":
      return { status: "timeout", message: t(lang, "tools.call.timeout", { plugin: p.name, ms: timeoutMs }) };
    case "oom":
      return { status: "oom", message: t(lang, "tools.call.oom", { plugin: p.name, limit: `${p.manifest.sandbox?.memoryBytes ?? "?"} B` }) };
    default:
      return { status: "error", code: `tools.plugin_${end.kind}`, message: end.message };
  }
}

/** The `tools/call` params of §4 (plus `callback_url` when the caller has one). */
export function callParams(tool: string, args: Record<string, unknown>, ctx: CallContext): Record<string, unknown> {
  return {
    name: tool,
    arguments: args,
    session_key: ctx.sessionKey,
    request_id: ctx.requestId ?? `req_${randomBytes(8).toString("hex")}`,
    trace_id: ctx.traceId ?? randomBytes(16).toString("hex"),
    ...(ctx.callbackUrl !== undefined ? { callback_url: ctx.callbackUrl } : {}),
  };
}

/**
 * Reads a `tools/list` answer: `{tools: [{name, description?, inputSchema? | parameters?}]}` (MCP's shape; the
 * manifest's `parameters` accepted too). @returns the tools, or why the answer cannot be used.
 */
export function readToolList(result: unknown): ToolSpec[] | string {
  if (!isTable(result) || !Array.isArray(result.tools)) return "expected {tools: [...]}";
  const list = result.tools as unknown[];
  if (list.length > manifestToolsMax) return `more than ${manifestToolsMax} tools`;
  const out: ToolSpec[] = [];
  for (const [i, item] of list.entries()) {
    if (!isTable(item)) return `tools[${i}]: not an object`;
    const name = item.name;
    if (typeof name !== "string" || name.length === 0 || name.length > toolNameMaxChars || !toolNamePattern.test(name)) return `tools[${i}].name: invalid`;
    if (out.some((x) => x.name === name)) return `tools[${i}].name: ${name} is listed twice`;
    const schema = item.inputSchema ?? item.parameters ?? { type: "object" };
    if (!isTable(schema)) return `tools[${i}].inputSchema: not an object`;
    const bad = checkSchema(schema);
    if (bad) return `tools[${i}].inputSchema: ${bad}`;
    out.push({ name, description: typeof item.description === "string" ? item.description : "", parameters: schema });
  }
  return out;
}

/** The tools of a plugin whose manifest lists none, asked with `tools/list` (bounded by `toolsListTimeoutMs`). */
export async function askToolList(p: RunnablePlugin, s: LaunchSettings): Promise<{ ok: true; tools: ToolSpec[] } | { ok: false; code: string; message: string }> {
  const timeoutMs = Math.min(toolsListTimeoutMs, p.manifest.communication.timeout_ms ?? toolsListTimeoutMs);
  const run = await runRequest(p, "tools/list", {}, s, { timeoutMs });
  if (!run.ok) return run;
  const end = run.result.end;
  if (end.kind !== "response") {
    const o = outcomeOf(p, run.result, timeoutMs, s.lang);
    return { ok: false, code: "code" in o ? String(o.code) : `tools.plugin_${o.status}`, message: "message" in o ? o.message : o.status };
  }
  if ("error" in end.response) return { ok: false, code: "tools.tools_list", message: t(s.lang, "tools.call.toolsList", { plugin: p.name, error: end.response.error.message }) };
  const tools = readToolList(end.response.result);
  if (typeof tools === "string") return { ok: false, code: "tools.tools_list", message: t(s.lang, "tools.call.toolsList", { plugin: p.name, error: tools }) };
  return { ok: true, tools };
}
