/**
 * The public types of the tool host (spec tool-plugins.md): a manifest after validation and migration, a plugin as
 * discovery sees it, a call and its outcome. Defined once here so that the plugin SDK can re-export them.
 */

import type { BindMount, BindShown } from "./binds.js";

export type { BindMount };

/** `plugin_type` (§1): how a plugin is run. */
export type PluginType = "sync" | "async" | "service" | "mcp";

/** One tool a plugin offers (§2 `[[capabilities.tools]]`); `parameters` is a JSON Schema for the arguments. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/**
 * `[sandbox]` (§7) after validation. `memory` is in bytes, `cpus` a share of one CPU, `pids` (our extension) the most
 * processes and threads at once; null = no such limit. `binds` keep the manifest's Docker `-v` text, parsed in `mounts`.
 */
export interface SandboxSpec {
  memoryBytes: number | null;
  cpus: number | null;
  pids: number | null;
  read_only_root: boolean;
  cap_drop: string[];
  network: "none" | "bridge" | "host";
  binds: string[];
  mounts: BindMount[];
}


/** `[mcp]` (manifest_version 3, plugin_type = "mcp") with the public implementation's defaults filled in. */
export interface McpSpec {
  autostart: boolean;
  restart_policy: "never" | "on_crash" | "always";
  crash_loop_max: number;
  crash_loop_window_secs: number;
  handshake_timeout_ms: number;
  idle_shutdown_secs: number;
  env_passthrough: { allow: string[]; deny: string[] };
  tools_allowlist: { mode: "allow" | "deny" | "all"; names: string[] };
  resources_allowlist: { mode: "allow" | "deny" | "all"; patterns: string[] };
}

/** A manifest after validation and migration to `manifest_version` 3, every default filled in (§2). */
export interface Manifest {
  manifest_version: number;
  /** The version the file declared (1 when absent), before migration. */
  declared_version: number;
  name: string;
  version: string;
  description: string;
  author: string;
  plugin_type: PluginType;
  entry_point: { command: string; args: string[]; env: Record<string, string> };
  communication: { timeout_ms: number | null };
  capabilities: { tools: ToolSpec[]; disable_model_invocation: boolean };
  /** null = no `[sandbox]` table: the plugin runs unsandboxed (§7). */
  sandbox: SandboxSpec | null;
  mcp: McpSpec | null;
  protocols: string[];
  hooks: string[];
  skill_refs: string[];
  meta: Record<string, unknown>;
}

/**
 * One thing wrong with a manifest: the key (`sandbox.binds[0]`), its line and column in the file (1-based) when known,
 * the text.
 */
export interface ManifestProblem {
  key: string;
  line: number | null;
  column?: number | null;
  message: string;
}

/** Where a plugin folder was found; `home` (`<home>/plugins`) wins a clash over `builtin`. */
export type PluginOrigin = "builtin" | "home";

/** A root folder of plugin folders. */
export interface PluginRoot {
  dir: string;
  origin: PluginOrigin;
}

/**
 * A plugin folder as discovery sees it. `status`: `ok` (in use), `rejected` (its manifest is wrong: `errors`; if an
 * earlier version was good, that one stays in use as `manifest`), `shadowed` (another folder with the same name wins:
 * `shadowedBy`).
 */
export interface PluginRecord {
  name: string;
  dir: string;
  manifestPath: string;
  origin: PluginOrigin;
  status: "ok" | "rejected" | "shadowed";
  errors: string[];
  /** The manifest in use: the current one, or the last good one of a rejected folder; null if never valid. */
  manifest: Manifest | null;
  /**
   * sha256 (hex) of the plugin's files (files-digest.ts; issue 26 #4): every file of its folder, the manifest's line
   * standing for the manifest in use. The key of trust lists, of the tools/list cache and of long-lived restarts.
   * Null when the folder cannot be digested (then `errors` says why and nothing runs).
   */
  digest: string | null;
  /** The plugin's files as a call body lists them (`<16 hex> <path>`), for a card to say which changed; null with `digest`. */
  files: string[] | null;
  shadowedBy: { dir: string; origin: PluginOrigin } | null;
}

/** A clash between two plugin folders with the same name: `winner` is in use, `loser` shadowed. */
export interface PluginClash {
  name: string;
  winner: { dir: string; origin: PluginOrigin };
  loser: { dir: string; origin: PluginOrigin };
}

/** What a rescan changed, by plugin name. */
export interface RescanReport {
  added: string[];
  changed: string[];
  removed: string[];
  rejected: string[];
  clashes: PluginClash[];
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

/**
 * A call checked before it runs (`ToolHost.check`): what the hub decides it by — the plugin, the tool, the manifest's
 * digest, whether the plugin is built in, whether models may call it, the call's timeout without a caller's (ms) — or why it is refused (`refused`: nothing
 * started; `error`: the plugin's tool list came back wrong).
 */
/**
 * What `ToolHost.check` found. `toolChecked: false` (only with `startPlugin: false`): the plugin exists, but whether it
 * has the tool and the arguments fit waits for its tool list — check again, starting it, once the call is allowed.
 */
export type CallCheck =
  | {
    ok: true; plugin: string; tool: string; digest: string; builtIn: boolean; disableModelInvocation: boolean; pluginType: ToolKind; timeoutMs: number;
    toolChecked: boolean;
    /** The plugin's files (`<16 hex> <path>`; issue 26 #4), for the card to say which changed; absent for data tools. */
    files?: string[];
    /** An HTTP tool's hosts and credential (issue 26 #11); absent for other kinds. */
    http?: HttpReach;
    /** The sandbox's binds as they really are, broad ones marked (issue 26 #3: shown on the approval card); [] unsandboxed. */
    binds: BindShown[];
  }
  | { ok: false; status: "refused" | "error"; code: ToolErrorCode; message: string };
/** The kind of a tool: its tool plugin's `plugin_type`, or `http` for a declarative plugin's HTTP tool (issue 18). */
export type ToolKind = PluginType | "http";

/** A tool as offered to callers: `<plugin>.<tool>`, with the plugin's kind and whether models may call it. */
export interface OfferedTool {
  qualifiedName: string;
  plugin: string;
  tool: ToolSpec;
  pluginType: ToolKind;
  disableModelInvocation: boolean;
}

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

/** The tools of one plugin, or why they cannot be had. */
export type ToolsOutcome = { ok: true; tools: OfferedTool[]; source: "manifest" | "tools/list" | "mcp" } | { ok: false; code: string; message: string };

/**
 * The state of a long-lived plugin (service or mcp): `crash_loop` = given up after repeated crashes (a card for the
 * owner later); `stopped` = not running and not to be restarted until asked.
 */
export interface LongLivedStatus {
  plugin: string;
  kind: "service" | "mcp";
  state: "starting" | "running" | "backoff" | "crash_loop" | "stopped";
  pid: number | null;
  crashes: number;
  lastError: string | null;
}

/** One line of a conformance run: a check, its verdict, and what was seen. */
export interface ConformanceLine {
  check: string;
  verdict: "ok" | "warn" | "fail" | "skip";
  detail: string;
}
