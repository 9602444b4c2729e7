/**
 * sync and async plugins (spec tool-plugins.md §4, §5): each call is a fresh process (code changes apply on the next
 * call) given one `tools/call` with params `{name, arguments, session_key, request_id, trace_id, callback_url}`. A
 * result `{"task_id": "…"}` is `accepted` whatever the manifest's `plugin_type` says (sync or async: corlinman's runtime
 * reads the result, not the type; issue 34 point 1): its process may go on working until the call's timeout, then its
 * group is ended. A manifest without tools has them asked with `tools/list` the same way, cached by digest.
 */
import { randomBytes } from "node:crypto";
import { t, type Lang } from "../i18n/messages.js";
import { exchange, type ExchangeResult, type RpcResponse } from "./exchange.js";
import { PluginProcess, prepareLaunch, type LaunchSettings } from "./process.js";
import { checkSchema, toolNamePattern } from "./manifest.js";
import { isTable } from "./manifest-rules.js";
import { taskIdPattern as protocolTaskIdPattern } from "../protocol/patterns.js";
import { callTimeoutMsDefault, listCacheEntriesMax, manifestToolsMax, sandboxLaunchTriesMax, taskIdMaxChars, toolNameMaxChars, toolsListTimeoutMs } from "./limits.js";
import type { ActivePlugin, Outcome, RunnablePlugin, RunnerKind } from "./runner.js";
import { checkArguments } from "./arguments.js";
import { brokenArgument, conformanceRequestId, forcedTimeoutMs, forcedTimeoutTries, missingToolName, groupEndWaitMs, groupLeftAfter, sampleArguments, type ConformanceAdd, type ConformanceOptions } from "./conformance-kit.js";
import type { CallContext, ToolSpec } from "./types.js";
import { reviewed } from "./review.js";

export type { Outcome, RunnablePlugin };

/** Task ids: URL-safe characters only (they travel in `/v1/plugins/callback/<task_id>`); the hub checks the same. */
export const taskIdPattern = new RegExp(protocolTaskIdPattern);

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

/**
 * Runs one JSON-RPC request in a fresh process of `p`. With `tasks` (async plugins) a `{"task_id": …}` result keeps the
 * process going until the timeout, held in `background`.
 */
export async function runRequest(
  p: RunnablePlugin, method: string, params: unknown, s: LaunchSettings,
  o: { timeoutMs: number; id?: number; ctx?: CallContext; background?: Set<PluginProcess>; tasks?: boolean; onStart?: (proc: PluginProcess) => void; withhold?: boolean },
): Promise<{ ok: true; result: ExchangeResult } | { ok: false; code: string; message: string }> {
  const id = o.id ?? nextRequestId();
  const started = Date.now();
  for (let tries = 1; ; tries++) {
    const prepared = await prepareLaunch({ name: p.name, dir: p.dir, manifest: p.manifest, tag: `${process.pid}-${id}` }, s);
    if (!prepared.ok) return { ok: false, ...prepared.refusal };
    const proc = new PluginProcess(prepared.launch, p.name, s);
    o.onStart?.(proc);
    const result = await exchangeOnce(p, proc, id, method, params, s, o, started);
    // bwrap could not set the sandbox up (a mount in the plan gone since): nothing of the plugin ran; planned again.
    if (result.end.kind === "exited" && tries < sandboxLaunchTriesMax && (await proc.setupFailed)) continue;
    if (result.extraOutput) s.log(`plugin.${p.name}`, t(s.lang, "tools.call.extraOutput"));
    return { ok: true, result };
  }
}

/** One exchange of `runRequest` with a started process (the time left is counted from `started`, in ms). */
function exchangeOnce(
  p: RunnablePlugin, proc: PluginProcess, id: number, method: string, params: unknown, s: LaunchSettings,
  o: Parameters<typeof runRequest>[4], started: number,
): Promise<ExchangeResult> {
  return exchange(proc, { id, method, params }, {
    plugin: p.name, lang: s.lang, timeoutMs: o.timeoutMs, onProgress: o.ctx?.onProgress, signal: o.ctx?.signal, withhold: o.withhold,
    keepAlive: (r) => {
      const task = o.tasks && method === "tools/call" ? taskIdOf(r) : null;
      if (task === null || !taskIdPattern.test(task)) return false;
      o.background?.add(proc);
      return true;
    },
    keepAliveMs: o.timeoutMs - (Date.now() - started),
    onKeptAliveEnd: () => o.background?.delete(proc),
  });
}

/** Maps the end of an exchange to a call outcome; with `tasks` (async plugins) a task id is `accepted`. */
export function outcomeOf(p: RunnablePlugin, r: ExchangeResult, timeoutMs: number, lang: Lang, tasks = false): Outcome {
  const end = r.end;
  switch (end.kind) {
    case "response": {
      if ("error" in end.response) return { status: "error", code: end.response.error.code, message: end.response.error.message };
      const task = tasks ? taskIdOf(end.response) : null;
      if (task === null) return { status: "ok", result: end.response.result };
      if (!taskIdPattern.test(task)) return { status: "error", code: "tools.bad_task_id", message: t(lang, "tools.call.taskId", { plugin: p.name, max: taskIdMaxChars }) };
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

/**
 * The runner of sync and async plugins: a fresh process per call; their tools from the manifest, or asked with
 * `tools/list` once per version (digest) when it lists none (in the review sandbox until the owner trusts it: review.ts;
 * one list per version either way, the same files answering). Nothing is long-lived but an accepted task's process. Both
 * take a string `task_id` as a task (issue 34 point 1: corlinman's own async QA scenario declares no `async`).
 */
function stdioKind(): RunnerKind {
  const tasks = true;
  return {
    tools: (m) => (m.capabilities.tools.length > 0 ? "listed" : "asked"),
    timeoutMs: (m) => m.communication.timeout_ms ?? callTimeoutMsDefault,
    manifestTimeout: true,
    make(h) {
      const cache = new Map<string, ToolSpec[]>();
      const listed = (a: ActivePlugin) => (a.p.manifest.capabilities.tools.length > 0 ? a.p.manifest.capabilities.tools : cache.get(a.digest) ?? null);
      return {
        knows: (a) => listed(a) !== null,
        async list(a, mode) {
          const known = listed(a);
          if (known) return { ok: true, tools: known, source: a.p.manifest.capabilities.tools.length > 0 ? "manifest" : "tools/list" };
          const asked = await askToolList(mode === "review" ? reviewed(a.p) : a.p, h.settings);
          if (!asked.ok) return asked;
          // One entry per version ever seen; a host that lives through very many edits starts over.
          if (cache.size >= listCacheEntriesMax) cache.clear();
          cache.set(a.digest, asked.tools);
          return { ok: true, tools: asked.tools, source: "tools/list" };
        },
        async call(a, tool, args, ctx, timeoutMs) {
          const run = await runRequest(a.p, "tools/call", callParams(tool, args, ctx), h.settings, { timeoutMs, ctx, background: h.background, tasks });
          if (!run.ok) return { status: "refused", code: run.code, message: run.message };
          return outcomeOf(a.p, run.result, timeoutMs, h.settings.lang, tasks);
        },
      };
    },
    conformance: (p, _digest, s, o, add) => conformStdio(p, s, o, add, tasks),
  };
}

/** sync plugins (§1: one call, one answer — or a task id, as corlinman's runtime takes it from any plugin). */
export const syncRunner = stdioKind();
/** async plugins (§5: a task id at once, the result through the callback). */
export const asyncRunner = stdioKind();

/**
 * The conformance checks of a sync or async plugin: its tool list, a good call (its id echoed, stdout only JSON-RPC,
 * an exit at end of input — an async plugin may go on —, within its timeout), a call of a tool it has not, and
 * arguments its schema refuses.
 */
async function conformStdio(p: RunnablePlugin, s: LaunchSettings, o: ConformanceOptions, add: ConformanceAdd, tasks: boolean): Promise<void> {
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
  let goodGroup: number | null = null;
  const run = await runRequest(p, "tools/call", callParams(tool.name, args, ctx), s, { timeoutMs, id: conformanceRequestId, ctx, tasks, onStart: (proc) => (goodGroup = proc.pid) });
  const took = Date.now() - started;
  if (!run.ok) return add("tools.conf.call", "fail", run.message);
  const outcome = outcomeOf(p, run.result, timeoutMs, s.lang, tasks);
  const end = run.result.end;
  add("tools.conf.call", outcome.status === "ok" || outcome.status === "accepted" ? "ok" : "fail", `${tool.name} ${JSON.stringify(args)} → ${JSON.stringify(outcome)}`);
  const wrongId = end.kind === "protocol" && end.reason === "wrong_id";
  add("tools.conf.idEcho", end.kind === "response" ? "ok" : wrongId ? "fail" : "skip", end.kind === "response" ? `id ${conformanceRequestId}` : end.message || end.kind);
  const discipline = end.kind === "protocol" && !wrongId ? "fail" : run.result.extraOutput ? "warn" : end.kind === "response" || wrongId ? "ok" : "skip";
  add("tools.conf.stdout", discipline, end.kind === "protocol" && !wrongId ? end.message : run.result.extraOutput ? t(s.lang, "tools.call.extraOutput") : "");
  // An accepted task's process may work on until the timeout: it was not killed after 1 s, and that is allowed.
  const accepted = outcome.status === "accepted";
  add("tools.conf.exit", end.kind !== "response" ? "skip" : accepted ? "skip" : run.result.exitedOnItsOwn ? "ok" : "warn",
    accepted ? t(s.lang, "tools.conf.exitTask", { ms: timeoutMs }) : end.kind === "response" && !run.result.exitedOnItsOwn ? t(s.lang, "tools.conf.exitKilled") : "");
  await timeoutCheck(p, s, add, { tool: tool.name, args, ctx, tasks, timeoutMs, took, goodCall: end.kind === "timeout" ? goodGroup : null });
  const bad = await runRequest(p, "tools/call", callParams(missingToolName, {}, ctx), s, { timeoutMs, ctx, tasks });
  if (!bad.ok) add("tools.conf.badCall", "fail", bad.message);
  else {
    const b = bad.result.end;
    add("tools.conf.badCall", b.kind === "response" ? ("error" in b.response ? "ok" : "warn") : "fail", b.kind === "response" ? JSON.stringify(b.response) : b.message || b.kind);
  }
  const badArgs = checkArguments(`conformance\0${tool.name}`, tool.parameters, { ...args, ...brokenArgument(tool.parameters) }, s.lang);
  add("tools.conf.badArgs", Object.keys(brokenArgument(tool.parameters)).length === 0 ? "skip" : badArgs ? "ok" : "warn", badArgs ?? "");
}


/**
 * "A timeout ends its whole process group" (issue 34 point 9), tested, not assumed: a call is made to time out — the
 * good call when it did (its group is then looked at), else a call given half the good call's time, then a quarter, …
 * (`forcedTimeoutTries` tries), and last a plugin that is sent nothing, which cannot answer within `forcedTimeoutMs` —
 * and the plugin's process group is looked for afterwards (Linux /proc), given `groupEndWaitMs` to be gone. ok: it timed
 * out and nothing of its group is left; fail: something is; warn: no timeout could be had; skip: no /proc to look in.
 */
async function timeoutCheck(
  p: RunnablePlugin, s: LaunchSettings, add: ConformanceAdd,
  o: { tool: string; args: Record<string, unknown>; ctx: CallContext; tasks: boolean; timeoutMs: number; took: number; goodCall: number | null },
): Promise<void> {
  let group = o.goodCall;
  let forcedMs = o.timeoutMs;
  for (let i = 0; group === null && i <= forcedTimeoutTries; i++) {
    const withhold = i === forcedTimeoutTries;
    forcedMs = withhold ? forcedTimeoutMs : Math.max(1, Math.floor(o.took / 2 ** (i + 1)));
    let pid: number | null = null;
    const run = await runRequest(p, "tools/call", callParams(o.tool, o.args, o.ctx), s, { timeoutMs: forcedMs, ctx: o.ctx, tasks: o.tasks, withhold, onStart: (proc) => (pid = proc.pid) });
    if (run.ok && run.result.end.kind === "timeout") group = pid;
  }
  if (group === null) return add("tools.conf.timeout", "warn", t(s.lang, "tools.conf.timeoutNotForced", { ms: forcedMs, tries: forcedTimeoutTries }));
  const left = await groupLeftAfter(group, groupEndWaitMs);
  if (left === null) return add("tools.conf.timeout", "skip", t(s.lang, "tools.conf.timeoutNoProc"));
  add("tools.conf.timeout", left.length === 0 ? "ok" : "fail", left.length === 0
    ? t(s.lang, "tools.conf.timeoutEnded", { ms: forcedMs })
    : t(s.lang, "tools.conf.timeoutLeft", { ms: forcedMs, pids: left.join(", ") }));
}
