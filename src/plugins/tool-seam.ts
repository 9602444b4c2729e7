/**
 * The seam between the tool host and the hosts whose tools are data (issue 27, point 1: no host imports another): a
 * tool as offered, a call's context and outcome, and `DataTools`, what a declarative plugin host gives the tool host.
 * Defined once here, in the common plugin layer; the tool host's public types (src/tools/types.ts) re-export them,
 * and the plugin SDK with them.
 */

/** One tool a plugin offers (§2 `[[capabilities.tools]]`); `parameters` is a JSON Schema for the arguments. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** A progress notification of a running call (§4 `notifications/progress`; a service's Progress event). */
export interface CallProgress {
  percent?: number;
  message?: string;
}

/**
 * Who calls and how (§4 params). `sessionKey` is sent as `session_key`; `requestId`/`traceId` are made up when absent;
 * `callbackUrl` is sent as `callback_url` when given; `timeoutMs` overrides the manifest's (capped at one hour).
 */
export interface CallContext {
  sessionKey: string;
  requestId?: string;
  traceId?: string;
  callbackUrl?: string;
  timeoutMs?: number;
  onProgress?: (p: CallProgress) => void;
  signal?: AbortSignal;
  /**
   * The hub's id of this call when an agent's run made it (issue 26): a declarative HTTP tool's requests to its own hub
   * carry it (`toolCallHeader`), so that the events they post get the run's hops + 1, as a receipt's events do.
   */
  toolCall?: number;
  /**
   * The digest the hub decided the call at (`check`'s): when the plugin in use has another one by the time the call
   * starts — its files or definition changed while the call waited for the owner's answer (issue 26 round 24, F24-2:
   * a `[sandbox]` removed, a declarative tool's URL changed) — the call is refused and nothing starts.
   */
  decidedDigest?: string;
}

/** An error code: the plugin's own JSON-RPC code (a number), or one of the host's (`tools.*` strings). */
export type ToolErrorCode = number | string;

/**
 * The outcome of one call, with its duration in ms (from the call to the outcome).
 * - `ok`: the tool's `result`, exactly as the plugin sent it.
 * - `error`: the plugin answered with an error, or broke the protocol, or exited (`code`, `message` name the plugin).
 * - `timeout`, `oom`: ended by the host; its process group is gone.
 * - `accepted`: an async plugin took the call as task `taskId` (the only credential of its callback).
 * - `refused`: nothing was started (unknown tool, arguments that fail the schema, no sandbox, a crash-looping service).
 * - `awaiting_approval`: a service plugin asked for the owner's approval (§6).
 */
export type CallOutcome = (
  | { status: "ok"; result: unknown }
  | { status: "error"; code: ToolErrorCode; message: string }
  | { status: "timeout"; message: string }
  | { status: "oom"; message: string }
  | { status: "accepted"; taskId: string }
  | { status: "refused"; code: string; message: string }
  | { status: "awaiting_approval"; reason: string; argsPreview: string }
) & { durationMs: number };

/** The outcome of a call before the host adds its duration. */
export type ToolOutcome = CallOutcome extends infer O ? (O extends unknown ? Omit<O, "durationMs"> : never) : never;

/**
 * Tools that are data, not processes — a declarative plugin's HTTP tools (spec declarative-plugins.md §3.1; issue 18),
 * of kind `http` — offered and called through the tool host like any other: same names `<plugin>.<tool>`, same check
 * of arguments against `parameters` before anything is sent. A tool plugin of the same name wins over them.
 */
export interface DataTools {
  /** The plugins offering data tools now. */
  pluginIds(): string[];
  /**
   * The tools of plugin `id` now, each with its timeout (ms, without a caller's), and a digest of their definitions
   * (the key of compiled argument schemas and of the hub's trust), or null.
   */
  toolsOf(id: string): { tools: (ToolSpec & { timeoutMs: number; reach: HttpReach })[]; digest: string } | null;
  /** Why plugin `id` offers no tools when it is known but refused (its first error), else null. */
  refusal(id: string): string | null;
  /** The stable error of `<plugin>.<tool>` when it was offered once and is gone ("definition missing: …"), else null. */
  missing(qualifiedName: string): string | null;
  /** Runs a call whose arguments passed `parameters`. Never throws. `timeoutMs`: the caller's, when it gave one. */
  call(plugin: string, tool: string, args: Record<string, unknown>, ctx: CallContext): Promise<ToolOutcome>;
}

/**
 * Where an HTTP tool sends its requests and what goes with them (issue 26 #11: the approval card says so): the hosts
 * of the plugin's `requires.network`, the `authRef` whose credential goes with each request (null for none), and
 * whether the caller's arguments choose the whole URL (`{{param.x}}` as the url: any declared host, any path).
 */
export interface HttpReach {
  network: string[];
  authRef: string | null;
  anyUrl: boolean;
}

