/**
 * MCP plugins (`plugin_type = "mcp"`, manifest_version 3): a long-lived stdio MCP server spoken to through
 * @modelcontextprotocol/sdk's client, its tools offered as `<plugin>.<tool>`. The `[mcp]` block applies:
 * `handshake_timeout_ms` bounds `initialize`; `tools_allowlist` filters the tools (mode allow + no names exports
 * nothing, as the public implementation); `restart_policy` (never | on_crash | always) with `crash_loop_max` crashes
 * in `crash_loop_window_secs` before it is given up on; `idle_shutdown_secs` stops an idle server (0 = never);
 * `autostart` starts it with the host instead of at first use; `env_passthrough` feeds the environment (env.ts).
 * The server runs in the plugin's sandbox and cgroup like any plugin process.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { t } from "../i18n/messages.js";
import { PluginProcess, prepareLaunch, type LaunchSettings } from "./process.js";
import { setupFailed } from "../common/bwrap.js";
import { CrashWindow, backoffMs } from "./restart.js";
import { readToolList } from "./stdio-runner.js";
import type { Outcome, RunnablePlugin, RunnerKind } from "./runner.js";
import { sampleArguments, missingToolName, type ConformanceAdd, type ConformanceOptions } from "./conformance-kit.js";
import { callTimeoutMsDefault, listCacheEntriesMax, mcpListPagesMax, restartBackoffMs, sandboxLaunchTriesMax, stopGraceMs } from "./limits.js";
import type { CallContext, LongLivedStatus, McpSpec, ToolSpec } from "./types.js";
import { reviewed } from "./review.js";

/** The code of an MCP tool's error (`isError: true`), as corlinman's MCP adapter gives it: JSON-RPC internal error. */
export const mcpToolErrorCode = -32603;

/** An MCP transport over a plugin process's stdio: one JSON-RPC message per line. Non-JSON lines are logged, skipped. */
class ProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  constructor(private readonly proc: PluginProcess, private readonly log: (line: string) => void) {}

  async start(): Promise<void> {
    this.proc.onLine = (line) => {
      if (line.trim() === "") return;
      let msg: unknown;
      try {
        msg = JSON.parse(line);
      } catch {
        this.log(`stdout (not JSON-RPC, skipped): ${line.slice(0, 200)}`);
        return;
      }
      this.onmessage?.(msg as JSONRPCMessage);
    };
    this.proc.onOverflow = () => void this.proc.end();
    void this.proc.closed.then(() => this.onclose?.());
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.proc.write(JSON.stringify(message));
  }

  async close(): Promise<void> {
    await stopProcess(this.proc);
  }
}

/** Ends a long-lived process: SIGTERM to its group, SIGKILL after `stopGraceMs`, then its cgroup. */
export async function stopProcess(proc: PluginProcess): Promise<void> {
  proc.endInput();
  proc.signal("SIGTERM");
  const grace = new Promise<void>((r) => setTimeout(r, stopGraceMs).unref());
  await Promise.race([proc.exited.then(() => undefined), grace]);
  await proc.end();
}

/** Which server tools `[mcp] tools_allowlist` exports. */
export function allowedByList(spec: McpSpec, tool: string): boolean {
  const { mode, names } = spec.tools_allowlist;
  return mode === "all" || (mode === "allow" ? names.includes(tool) : !names.includes(tool));
}

/** One MCP plugin's server: started on demand (or at once with `autostart`), restarted by its policy. */
export class McpSession {
  private client: Client | null = null;
  private proc: PluginProcess | null = null;
  /** Processes started with another start left after them (`startOnce`'s `retryable`). */
  private readonly retryable = new WeakSet<PluginProcess>();
  private starting: Promise<{ ok: true } | { ok: false; message: string }> | null = null;
  private tools: ToolSpec[] | null = null;
  private crashes: CrashWindow;
  private attempt = 0;
  private restartTimer: NodeJS.Timeout | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  private stopping = false;
  private gaveUp = false;
  private tag = 0;
  readonly status: LongLivedStatus;

  constructor(
    readonly plugin: RunnablePlugin, private readonly s: LaunchSettings,
    private readonly backoff: readonly number[], private readonly onStatus: (st: LongLivedStatus) => void,
  ) {
    this.crashes = new CrashWindow(this.spec.crash_loop_max, this.spec.crash_loop_window_secs * 1000);
    this.status = { plugin: plugin.name, kind: "mcp", state: "stopped", pid: null, crashes: 0, lastError: null };
  }

  private get spec(): McpSpec {
    return this.plugin.manifest.mcp!;
  }

  private set(state: LongLivedStatus["state"], lastError: string | null = this.status.lastError): void {
    Object.assign(this.status, { state, pid: this.proc?.pid ?? null, crashes: this.crashes.count, lastError });
    this.onStatus({ ...this.status });
  }

  /** Starts the server unless it runs; @returns once `initialize` is done (bounded by `handshake_timeout_ms`). */
  ensure(): Promise<{ ok: true } | { ok: false; message: string }> {
    const name = this.plugin.name;
    if (this.status.state === "crash_loop") return Promise.resolve({ ok: false, message: this.status.lastError ?? "" });
    if (this.gaveUp) return Promise.resolve({ ok: false, message: t(this.s.lang, "tools.long.stopped", { plugin: name }) });
    if (this.client && this.status.state === "running") return Promise.resolve({ ok: true });
    if (this.starting) return this.starting;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    this.starting = this.start().finally(() => (this.starting = null));
    return this.starting;
  }

  private async start(): Promise<{ ok: true } | { ok: false; message: string }> {
    this.stopping = false;
    for (let tries = 1; ; tries++) {
      const started = await this.startOnce(tries < sandboxLaunchTriesMax);
      if (started !== setupFailed) return started;
      // Stopped while the first try ended (the host closing, the plugin changed): no second start.
      if (this.stopping) {
        this.set("stopped");
        return { ok: false, message: t(this.s.lang, "tools.long.stopped", { plugin: this.plugin.name }) };
      }
    }
  }

  /**
   * One start of the server. @param retryable another start is left: a sandbox bwrap could not set up (nothing of the
   *   plugin ran) answers `setupFailed`, and its exit is no crash (`exited`).
   */
  private async startOnce(retryable: boolean): Promise<{ ok: true } | { ok: false; message: string } | typeof setupFailed> {
    this.set("starting");
    const prepared = await prepareLaunch({ name: this.plugin.name, dir: this.plugin.dir, manifest: this.plugin.manifest, tag: `${process.pid}-mcp-${++this.tag}` }, this.s);
    if (!prepared.ok) {
      this.set("stopped", prepared.refusal.message);
      return { ok: false, message: prepared.refusal.message };
    }
    const proc = new PluginProcess(prepared.launch, this.plugin.name, this.s, true);
    this.proc = proc;
    if (retryable && prepared.launch.status) this.retryable.add(proc);
    // The MCP SDK loads with the first server started (a host that starts none never loads it).
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const client = new Client({ name: "agent-autoloop-tool-host", version: "1" }, { capabilities: {} });
    const transport = new ProcessTransport(proc, (l) => this.s.log(`plugin.${this.plugin.name}`, l));
    void proc.spawnError.then((e) => this.s.log(`plugin.${this.plugin.name}`, e.message));
    void proc.closed.then(() => this.exited(proc));
    try {
      await client.connect(transport, { timeout: this.spec.handshake_timeout_ms });
    } catch (e) {
      const message = t(this.s.lang, "tools.long.notReady", { plugin: this.plugin.name, ms: this.spec.handshake_timeout_ms, error: (e as Error).message });
      const before = this.status.lastError;
      this.status.lastError = message;
      await proc.end();
      if (this.retryable.has(proc) && (await proc.setupFailed)) {
        this.status.lastError = before;
        return setupFailed;
      }
      return { ok: false, message: this.status.state === "crash_loop" ? this.status.lastError ?? message : message };
    }
    this.client = client;
    this.tools = null;
    this.set("running", null);
    this.touch();
    return { ok: true };
  }

  /**
   * The process ended: a crash unless we stopped it; restart by policy. A start with another try left that bwrap could
   * not set up is started again by `start` itself.
   */
  private exited(proc: PluginProcess): void {
    if (!this.retryable.has(proc)) return this.ended(proc);
    void proc.setupFailed.then((failed) => (failed ? undefined : this.ended(proc)));
  }

  private ended(proc: PluginProcess): void {
    if (proc !== this.proc) return;
    this.client = null;
    this.proc = null;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    if (this.stopping) return this.set("stopped");
    void proc.exited.then((x) => {
      const clean = x.code === 0 && x.signal === null;
      const policy = this.spec.restart_policy;
      if (!clean && this.crashes.record(Date.now())) {
        this.gaveUp = true;
        return this.set("crash_loop", t(this.s.lang, "tools.long.crashLoop", { plugin: this.plugin.name, crashes: this.crashes.count, seconds: this.spec.crash_loop_window_secs }));
      }
      const why = this.status.lastError ?? `exit ${x.code ?? x.signal}`;
      if (policy === "never" && !clean) {
        this.gaveUp = true;
        return this.set("stopped", why);
      }
      if (policy === "always" || (!clean && policy === "on_crash")) {
        this.set("backoff", clean ? null : why);
        this.restartTimer = setTimeout(() => {
          this.restartTimer = null;
          void this.ensure();
        }, backoffMs(++this.attempt, this.backoff));
        this.restartTimer.unref();
        return;
      }
      this.set("stopped", clean ? null : why);
    });
  }

  /** Restarts the idle countdown (`idle_shutdown_secs`; 0 = never). */
  private touch(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    if (this.spec.idle_shutdown_secs === 0) return;
    this.idleTimer = setTimeout(() => void this.stop(), this.spec.idle_shutdown_secs * 1000);
    this.idleTimer.unref();
  }

  /** The exported tools (after `tools_allowlist`), listed once per server start. */
  async listTools(): Promise<{ ok: true; tools: ToolSpec[] } | { ok: false; unavailable: boolean; message: string }> {
    const ready = await this.ensure();
    if (!ready.ok) return { ...ready, unavailable: true };
    if (this.tools) return { ok: true, tools: this.tools };
    const raw: unknown[] = [];
    let cursor: string | undefined;
    try {
      for (let page = 0; page < mcpListPagesMax; page++) {
        const r = await this.client!.listTools(cursor ? { cursor } : {}, { timeout: this.spec.handshake_timeout_ms });
        raw.push(...r.tools);
        cursor = r.nextCursor;
        if (!cursor) break;
      }
    } catch (e) {
      return { ok: false, unavailable: false, message: t(this.s.lang, "tools.call.toolsList", { plugin: this.plugin.name, error: (e as Error).message }) };
    }
    const named = raw.filter((x) => allowedByList(this.spec, String((x as { name?: unknown }).name)));
    const tools = readToolList({ tools: named });
    if (typeof tools === "string") return { ok: false, unavailable: false, message: t(this.s.lang, "tools.call.toolsList", { plugin: this.plugin.name, error: tools }) };
    this.tools = tools;
    return { ok: true, tools };
  }

  /** Calls `tool` (already checked against the allowlist and its schema). */
  async call(tool: string, args: Record<string, unknown>, ctx: CallContext, timeoutMs: number): Promise<Outcome> {
    const ready = await this.ensure();
    if (!ready.ok) return { status: "refused", code: "tools.unavailable", message: ready.message };
    this.touch();
    try {
      const { CallToolResultSchema } = await import("@modelcontextprotocol/sdk/types.js");
      const r = await this.client!.callTool({ name: tool, arguments: args }, CallToolResultSchema, {
        timeout: timeoutMs,
        signal: ctx.signal,
        onprogress: (p) => ctx.onProgress?.({
          ...(p.total ? { percent: Math.round((p.progress / p.total) * 100) } : {}),
          ...(typeof p.message === "string" ? { message: p.message } : {}),
        }),
      });
      this.touch();
      this.proc?.checkBinds(); // what it wrote in its writable binds during the call (bind-check.ts)
      const { _meta: _ignored, isError, ...result } = r as Record<string, unknown> & { isError?: boolean };
      void _ignored;
      // corlinman's MCP adapter (issue 34 #6): a tool error is JSON-RPC -32603 (internal error) with the tool's text, and
      // a success keeps `isError: false`.
      if (isError) return { status: "error", code: mcpToolErrorCode, message: textOf(result.content) };
      return { status: "ok", result: { ...result, isError: false } };
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      if (code === -32001) return { status: "timeout", message: t(this.s.lang, "tools.call.timeout", { plugin: this.plugin.name, ms: timeoutMs }) };
      if (code === -32000) return { status: "error", code: "tools.plugin_exited", message: t(this.s.lang, "tools.long.ended", { plugin: this.plugin.name, error: (e as Error).message }) };
      return { status: "error", code: typeof code === "number" ? code : "tools.plugin_protocol", message: (e as Error).message };
    }
  }

  /** Stops the server (not a crash); a later call starts it again unless it was given up on. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.restartTimer = null;
    const proc = this.proc;
    if (proc) await stopProcess(proc);
    this.set("stopped");
  }
}

/** The text parts of an MCP content list, joined: what an error says. */
function textOf(content: unknown): string {
  if (!Array.isArray(content)) return "";
  return content.filter((c) => c && typeof c === "object" && (c as { type?: unknown }).type === "text").map((c) => String((c as { text?: unknown }).text)).join("\n");
}

/**
 * MCP plugins' runner: one server per plugin, started at its first need (or with the host: `autostart`), a new one for
 * a new version (digest); its tools are its server's `tools/list` after `tools_allowlist`, which no other tool passes.
 * Asked in review (review.ts: a plugin the owner has not trusted) while its server is not running, a server of its
 * own is started in the review sandbox, asked and stopped, and its list kept for that version.
 */
export const mcpRunner: RunnerKind = {
  tools: () => "server",
  timeoutMs: (m) => m.communication.timeout_ms ?? callTimeoutMsDefault,
  manifestTimeout: false,
  allows: (m, tool) => allowedByList(m.mcp!, tool),
  make(h) {
    const sessions = new Map<string, { session: McpSession; digest: string }>();
    const of = (p: RunnablePlugin, digest: string): McpSession => {
      const known = sessions.get(p.name);
      if (known?.digest === digest) return known.session;
      void known?.session.stop();
      const session = new McpSession(p, h.settings, h.backoff, (st) => h.emit(st));
      sessions.set(p.name, { session, digest });
      return session;
    };
    const reviewedLists = new Map<string, ToolSpec[]>();
    const review = async (a: { p: RunnablePlugin; digest: string }) => {
      const kept = reviewedLists.get(a.digest);
      if (kept) return { ok: true as const, tools: kept };
      const session = new McpSession(reviewed(a.p), h.settings, h.backoff, () => {});
      try {
        const r = await session.listTools();
        if (!r.ok) return r;
        if (reviewedLists.size >= listCacheEntriesMax) reviewedLists.clear();
        reviewedLists.set(a.digest, r.tools);
        return r;
      } finally {
        await session.stop();
      }
    };
    return {
      knows: () => false,
      async list(a, mode) {
        const known = sessions.get(a.p.name);
        const live = known?.digest === a.digest && known.session.status.state === "running";
        const r = mode === "review" && !live ? await review(a) : await of(a.p, a.digest).listTools();
        return r.ok ? { ok: true, tools: r.tools, source: "mcp" } : { ok: false, code: r.unavailable ? "tools.unavailable" : "tools.tools_list", message: r.message };
      },
      call: (a, tool, args, ctx, timeoutMs) => of(a.p, a.digest).call(tool, args, ctx, timeoutMs),
      async start(a) {
        if (a.p.manifest.mcp?.autostart && !sessions.has(a.p.name)) await of(a.p, a.digest).ensure();
      },
      async stop(name) {
        const known = sessions.get(name);
        sessions.delete(name);
        await known?.session.stop();
      },
      statuses: () => [...sessions.values()].map(({ session }) => ({ ...session.status })),
    };
  },
  conformance: conformMcp,
};

/** The conformance checks of an MCP plugin: its server's tools after the allowlist, a good call, a call of a tool it has not. */
async function conformMcp(p: RunnablePlugin, _digest: string, s: LaunchSettings, o: ConformanceOptions, add: ConformanceAdd): Promise<void> {
  const timeoutMs = p.manifest.communication.timeout_ms ?? callTimeoutMsDefault;
  const ctx = { sessionKey: "conformance" };
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
}
