/**
 * The public types of the tool host (spec tool-plugins.md): a manifest after validation and migration, a plugin as
 * discovery sees it, a call and its outcome. Defined once here so that the plugin SDK can re-export them.
 */

import type { BindMount, BindShown } from "./binds.js";
import type { HttpReach, ToolErrorCode, ToolSpec } from "../plugins/tool-seam.js";
import type { PluginOrigin } from "../plugins/types.js";
import type { PluginClash } from "../plugins/precedence.js";
import type { ToolPluginType as PluginType } from "../protocol/patterns.js";

export type { BindMount };

export type { CallContext, CallOutcome, CallProgress, DataTools, HttpReach, ToolErrorCode, ToolOutcome, ToolSpec } from "../plugins/tool-seam.js";

/** `plugin_type` (§1): how a plugin is run (the contract's list: each has its runner in runners.ts). */
export type { ToolPluginType as PluginType } from "../protocol/patterns.js";

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

/** Where a plugin folder was found, and the roots (the common plugin layer's: issue 27). */
export type { PluginOrigin, PluginRoot } from "../plugins/types.js";
export type { PluginClash } from "../plugins/precedence.js";

/**
 * A plugin folder as discovery sees it. `status`: `ok` (in use), `rejected` (its manifest is wrong: `errors`; if an
 * earlier version was good, that one stays in use as `manifest`), `shadowed` (another folder with the same name wins:
 * `shadowedBy`).
 */
export interface ToolPluginRecord {
  name: string;
  dir: string;
  manifestPath: string;
  origin: PluginOrigin;
  status: "ok" | "rejected" | "shadowed";
  errors: string[];
  /** The manifest in use: the current one, or the last good one of a rejected folder; null if never valid. */
  manifest: Manifest | null;
  /**
   * sha256 (hex) of the plugin's files (src/plugins/files.ts; issue 26 #4): every file of its folder, the manifest's line
   * standing for the manifest in use. The key of trust lists, of the tools/list cache and of long-lived restarts.
   * Null when the folder cannot be digested (then `errors` says why and nothing runs).
   */
  digest: string | null;
  /** The plugin's files as a call body lists them (`<16 hex> <path>`), for a card to say which changed; null with `digest`. */
  files: string[] | null;
  shadowedBy: { dir: string; origin: PluginOrigin } | null;
  /** Where the tools of the manifest in use come from, by its kind's runner (runners.ts); null without a manifest. */
  toolsFrom: "listed" | "asked" | "server" | "any" | null;
}

/** What a rescan changed, by plugin name. */
export interface RescanReport {
  added: string[];
  changed: string[];
  removed: string[];
  rejected: string[];
  clashes: PluginClash[];
}

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
    /** Whether a tool plugin runs in its sandbox (`[sandbox]` in its manifest: issue 26 round 25, F25b-4); absent for data tools. */
    sandboxed?: boolean;
    /** The sandbox's network when it is not `none` (shown on the approval card: issue 26 round 30, F30b-2). */
    sandboxNetwork?: "bridge" | "host";
    /**
     * The names of the hub's environment the plugin is given beyond the base list (env.ts `passedEnv`; issue 26 round
     * 10), shown on the approval card; absent when none. They are bound into `digest`: another set asks again.
     */
    env?: string[];
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

/**
 * The tools of one plugin, or why they cannot be had. `unknown`: nothing says which tools it has — a rule must name
 * each, and a call's tool and arguments are checked only once the hub allowed it: a service whose manifest lists none
 * (PluginBridge has no list; issue 34 #5; `why` null), or a plugin the owner has not trusted that could not be asked
 * in the review sandbox (review.ts; issue 26 round 11, F5; `why` says what it answered there). `pluginType`: its kind.
 */
export type ToolsOutcome =
  | { ok: true; tools: OfferedTool[]; source: "manifest" | "tools/list" | "mcp"; unknown?: { why: string | null; pluginType: PluginType } }
  | { ok: false; code: string; message: string };

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

/**
 * What the starts of the hub of one home ran or loaded code from outside every sandbox, and their users' homes
 * (absolute paths), as `serve` records them in the home (host/code-folders.ts; issue 26 round 6). A tool host checks
 * writable binds against these besides its own process's view: a CLI's PATH, HOME and plugin roots may differ from
 * the hub's.
 */
export interface CodeFoldersSeen {
  folders: readonly string[];
  homes: readonly string[];
}
