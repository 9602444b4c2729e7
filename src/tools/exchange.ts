/**
 * One JSON-RPC 2.0 request to a fresh plugin process over stdio (spec tool-plugins.md §4): the request as one line,
 * then end of input; stdout is read line by line until the response with the request's id. `notifications/progress`
 * lines are relayed; a line that is not JSON, not a JSON-RPC object, or a response with another id is a plugin error
 * naming the plugin; an exit before the response, a flood of output, a timeout end the call. After the response the
 * plugin gets `exitGraceMs` to exit on end of input, then its process group is killed: nothing is left running —
 * except when `keepAlive` says the process goes on (an async plugin's accepted task), until `keepAliveMs`.
 */
import { t, type Lang } from "../i18n/messages.js";
import { nestedDeeperThan } from "../protocol/validate.js";
import { exitGraceMs, resultDepthMax, stdoutLineMaxBytes, stdoutMaxBytes } from "./limits.js";
import type { PluginProcess, ProcessExit } from "./process.js";
import type { CallProgress } from "./types.js";

/** A JSON-RPC response as received: exactly one of `result` and `error`. */
export type RpcResponse = { result: unknown } | { error: { code: number; message: string; data?: unknown } };

/** How an exchange ended. `message` is for people (it names the plugin). */
export type ExchangeEnd =
  | { kind: "response"; response: RpcResponse }
  | { kind: "protocol"; reason: "not_json" | "wrong_id" | "bad_response"; message: string }
  | { kind: "timeout" | "oom" | "exited" | "overflow" | "spawn" | "aborted"; message: string };

/** The end, and what was seen of the plugin's manners (for conformance). */
export interface ExchangeResult {
  end: ExchangeEnd;
  /** After its response, the plugin exited on end of input within `exitGraceMs` (no kill needed). */
  exitedOnItsOwn: boolean;
  /** It wrote more non-empty lines after its response. */
  extraOutput: boolean;
}

export interface ExchangeOptions {
  plugin: string;
  lang: Lang;
  timeoutMs: number;
  onProgress?: (p: CallProgress) => void;
  signal?: AbortSignal;
  /** Whether the process goes on after this response (an async task); it is then ended after `keepAliveMs`. */
  keepAlive?: (r: RpcResponse) => boolean;
  keepAliveMs?: number;
  /** Told when a kept-alive process has been ended. */
  onKeptAliveEnd?: () => void;
  /** Sends nothing (conformance's last try at a timeout: a plugin waiting for its request cannot answer in time). */
  withhold?: boolean;
}

/** Reads one JSON-RPC line; @returns the message, or an error text. */
function parseLine(line: string, plugin: string, lang: Lang): Record<string, unknown> | string {
  const shown = line.length > 200 ? `${line.slice(0, 200)}…` : line;
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return t(lang, "tools.call.notJson", { plugin, line: shown });
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) return t(lang, "tools.call.notObject", { plugin, line: shown });
  return v as Record<string, unknown>;
}

/**
 * Checks a response object with the right id; @returns it, or why it is not JSON-RPC 2.0. A `result` or `error.data`
 * nested deeper than `resultDepthMax` is refused here: whatever handles it next (printing, the hub, an agent's MCP
 * answer) recurses through it.
 */
function readResponse(msg: Record<string, unknown>, lang: Lang): RpcResponse | string {
  if (msg.jsonrpc !== "2.0") return 'jsonrpc must be "2.0"';
  const hasResult = "result" in msg;
  const hasError = "error" in msg;
  if (hasResult === hasError) return "exactly one of result and error";
  const tooDeep = (field: string, v: unknown) => (nestedDeeperThan(v, resultDepthMax) ? t(lang, "tools.manifest.tooDeep", { field, limit: resultDepthMax }) : null);
  if (hasResult) return tooDeep("result", msg.result) ?? { result: msg.result };
  const e = msg.error as Record<string, unknown> | null;
  if (typeof e !== "object" || e === null || !Number.isInteger(e.code) || typeof e.message !== "string") return "error must be {code: integer, message: string}";
  const deepData = tooDeep("error.data", e.data);
  if (deepData !== null) return deepData;
  return { error: { code: e.code as number, message: e.message, ...("data" in e ? { data: e.data } : {}) } };
}

/** A wrong id as the error shows it: an object or array (of any depth) is not written out. */
function shownId(id: unknown): string {
  if (typeof id === "object" && id !== null) return Array.isArray(id) ? "[…]" : "{…}";
  return JSON.stringify(id) ?? "none";
}

/** Progress params as relayed: a percent (0..100) and a message, when they are of those types. */
function progressOf(params: unknown): CallProgress {
  const p = (typeof params === "object" && params !== null ? params : {}) as Record<string, unknown>;
  return {
    ...(typeof p.percent === "number" && Number.isFinite(p.percent) ? { percent: p.percent } : {}),
    ...(typeof p.message === "string" ? { message: p.message.slice(0, 1000) } : {}),
  };
}

/**
 * Sends `request` (with numeric `id`) to `proc` and waits for its end. Never throws; always leaves the process ended
 * (or, for `keepAlive`, scheduled to end).
 */
export async function exchange(proc: PluginProcess, request: { id: number; method: string; params: unknown }, o: ExchangeOptions): Promise<ExchangeResult> {
  let extraOutput = false;
  let settle!: (e: ExchangeEnd) => void;
  const decided = new Promise<ExchangeEnd>((r) => (settle = r));
  let done = false;
  const finish = (e: ExchangeEnd) => {
    if (done) return;
    done = true;
    settle(e);
  };

  proc.onLine = (line) => {
    if (done) {
      if (line.trim()) extraOutput = true;
      return;
    }
    if (line.trim() === "") return;
    const msg = parseLine(line, o.plugin, o.lang);
    if (typeof msg === "string") return finish({ kind: "protocol", reason: "not_json", message: msg });
    if (typeof msg.method === "string" && !("id" in msg)) {
      if (msg.method === "notifications/progress") o.onProgress?.(progressOf(msg.params));
      return;
    }
    if (msg.id !== request.id) return finish({ kind: "protocol", reason: "wrong_id", message: t(o.lang, "tools.call.wrongId", { plugin: o.plugin, got: shownId(msg.id), expected: request.id }) });
    const r = readResponse(msg, o.lang);
    if (typeof r === "string") return finish({ kind: "protocol", reason: "bad_response", message: t(o.lang, "tools.call.badResponse", { plugin: o.plugin, why: r }) });
    finish({ kind: "response", response: r });
  };
  proc.onOverflow = (kind) => finish({
    kind: "overflow",
    message: kind === "line" ? t(o.lang, "tools.call.longLine", { plugin: o.plugin, limit: stdoutLineMaxBytes }) : t(o.lang, "tools.call.flood", { plugin: o.plugin, limit: stdoutMaxBytes }),
  });
  void proc.spawnError.then((e) => finish({ kind: "spawn", message: t(o.lang, "tools.call.spawn", { plugin: o.plugin, error: (e as NodeJS.ErrnoException).code ?? e.message }) }));
  let exit: ProcessExit | null = null;
  void proc.exited.then((x) => {
    exit = x;
    // The main process is gone: whatever it left in its group goes too, so the pipes close and the last lines arrive.
    if (!done) proc.signal("SIGKILL");
  });
  void proc.closed.then(() => {
    if (done) return;
    const how = exit?.signal ? `signal ${exit.signal}` : `exit ${exit?.code ?? "?"}`;
    finish(proc.oomKilled() ? { kind: "oom", message: "" } : { kind: "exited", message: t(o.lang, "tools.call.exited", { plugin: o.plugin, how }) });
  });
  const timer = setTimeout(() => finish({ kind: "timeout", message: "" }), o.timeoutMs);
  const onAbort = () => finish({ kind: "aborted", message: t(o.lang, "tools.call.aborted") });
  o.signal?.addEventListener("abort", onAbort, { once: true });
  if (o.signal?.aborted) onAbort();

  if (!o.withhold) {
    proc.write(JSON.stringify({ jsonrpc: "2.0", ...request }));
    proc.endInput();
  }
  const end = await decided;
  clearTimeout(timer);
  o.signal?.removeEventListener("abort", onAbort);

  if (end.kind === "response" && o.keepAlive?.(end.response)) {
    proc.stopReading();
    const stop = setTimeout(() => void proc.end().then(() => o.onKeptAliveEnd?.()), Math.max(0, o.keepAliveMs ?? 0));
    stop.unref();
    void proc.exited.then(() => {
      // The task's process ended by itself: its group and cgroup go now.
      clearTimeout(stop);
      void proc.end().then(() => o.onKeptAliveEnd?.());
    });
    return { end, exitedOnItsOwn: false, extraOutput };
  }
  let exitedOnItsOwn = false;
  // What the plugin started is noted while it still runs: a child that left its group is found through it.
  proc.noteDescendants();
  if (end.kind === "response") {
    const grace = new Promise<false>((r) => setTimeout(() => r(false), exitGraceMs).unref());
    exitedOnItsOwn = await Promise.race([proc.exited.then(() => true as const), grace]);
  }
  // An OOM kill is only visible until the cgroup is removed: look first.
  const oom = end.kind !== "response" && end.kind !== "oom" && proc.oomKilled();
  await proc.end();
  return { end: oom ? { kind: "oom", message: "" } : end, exitedOnItsOwn, extraOutput };
}
