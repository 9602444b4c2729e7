/**
 * What a kind of tool plugin is to the tool host (issue 27, point 1): one runner per `plugin_type`, in one table
 * (runners.ts), dispatched once (host.ts). A runner knows where its plugins' tools come from, how long a call may take
 * without a caller's timeout, how a call runs, and — for the long-lived kinds — how its plugins start and stop with
 * the host. Adding a kind is one file with its `RunnerKind` and one entry of the table.
 */
import type { ConformanceAdd, ConformanceOptions } from "./conformance-kit.js";
import type { LaunchSettings, PluginProcess } from "./process.js";
import type { CallContext, LongLivedStatus, Manifest, ToolOutcome, ToolSpec } from "./types.js";

/**
 * How a plugin's tools may be asked of it: `review` (in the review sandbox, review.ts) or `run` (as its manifest runs
 * it).
 */
export type ListMode = "review" | "run";

/** A plugin to run: its name, folder and manifest. */
export interface RunnablePlugin {
  name: string;
  dir: string;
  manifest: Manifest;
}

/** A call's outcome without its duration (the host adds it). */
export type Outcome = ToolOutcome;

/** What the host gives its runners: its launch settings and the things they share. */
export interface RunnerHost {
  settings: LaunchSettings;
  /** Waits between restarts of crashed long-lived plugins, in ms. */
  backoff: readonly number[];
  /** Reports a state change of a long-lived plugin (the host's `onStatus` listeners hear it). */
  emit(s: LongLivedStatus): void;
  /** The processes of accepted async tasks, ended when the host closes. */
  background: Set<PluginProcess>;
  /** A new folder of the host's own for one service's socket (no agent and no other plugin can see it). */
  socketFolder(): string;
}

/** A plugin in use, as a runner gets it: what runs, and the digest of its files (a new digest is a new version). */
export interface ActivePlugin {
  p: RunnablePlugin;
  digest: string;
}

/** A plugin's tools and where they came from, or why they cannot be had. */
export type ListOutcome =
  | { ok: true; tools: ToolSpec[]; source: "manifest" | "tools/list" | "mcp" }
  | { ok: false; code: string; message: string };

/** The runner of one host for the plugins of one kind. */
export interface Runner {
  /** Whether the plugin's tools are known without running any of it (the manifest lists them, or a list is cached). */
  knows(a: ActivePlugin): boolean;
  /**
   * The plugin's tools: from its manifest, or asked of it (which may start it) — with `review`, only in the review
   * sandbox (review.ts: a plugin the owner has not trusted), with `run` as its manifest runs it.
   */
  list(a: ActivePlugin, mode: ListMode): Promise<ListOutcome>;
  /** Runs one call of a tool whose arguments passed its schema. Never throws. */
  call(a: ActivePlugin, tool: string, args: Record<string, unknown>, ctx: CallContext, timeoutMs: number): Promise<Outcome>;
  /** Starts the plugin with the host (long-lived kinds). */
  start?(a: ActivePlugin): Promise<void>;
  /** Stops the plugin (gone, or a new version to start). */
  stop?(name: string): Promise<void>;
  /** The states of the long-lived plugins it runs. */
  statuses?(): LongLivedStatus[];
}

/** A kind of tool plugin: what is known of it from its manifest alone, and how a host makes its runner. */
export interface RunnerKind {
  /**
   * Where a plugin's tools come from: its manifest's list (`listed`), `tools/list` asked of it when its manifest lists
   * none (`asked`), its server (`server`), or any tool name when its manifest lists none (`any`).
   */
  tools(m: Manifest): "listed" | "asked" | "server" | "any";
  /** A call's timeout when its caller gives none (ms). */
  timeoutMs(m: Manifest): number;
  /** Whether the manifest's `communication.timeout_ms` applies (else the kind's own default). */
  manifestTimeout: boolean;
  /** Whether `tool` may be called at all, before anything runs (an MCP server's allowlist); absent: every tool. */
  allows?(m: Manifest, tool: string): boolean;
  /** The runner of one host. */
  make(h: RunnerHost): Runner;
  /**
   * The kind's conformance checks of a plugin folder whose manifest is valid (`plugins conformance`): its tools, a
   * good call, a bad one, and what else its protocol asks, each a line through `add`. Ends whatever it started.
   */
  conformance(p: RunnablePlugin, digest: string, s: LaunchSettings, o: ConformanceOptions, add: ConformanceAdd): Promise<void>;
}
