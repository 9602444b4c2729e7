/**
 * The agents' tool bridge (issue 16 "Offered to agents"; DESIGN.md "Plugin hosts"): for each run whose rule offers
 * tools, the worker serves an MCP server (newline-delimited JSON-RPC) on a unix socket in the run's `agent/` folder,
 * and the agent's CLI starts the relay (`tool-relay.ts`: `agent-autoloop tools mcp --socket <path> --lang <zh|en>`) as
 * its stdio MCP server. The server half stays in the worker: the agent runs in a sandbox that hides the worker's home
 * and in its own PID namespace, so the run token never leaves this process (no command line, environment or file).
 *
 * What the agent sees: the tools its rule's `tools` patterns name, resolved against this worker's tool host
 * (`<plugin>.<tool>`; tools whose manifest says `disable_model_invocation` are left out). A call is first put to the
 * hub (`POST /v1/runs/:id/tools/calls`: approvals, trust, audit); `deny` answers with the reason; `prompt` waits for
 * the owner up to the hub's bound, then answers "awaiting approval, card N — end your turn"; `allow` runs the tool in
 * the tool host (sandbox, timeout), relays its progress, reports the outcome, and for an async plugin waits for its
 * parked result. Every refusal or failure is a tool error the model can read; nothing here throws at the agent.
 * Who the socket answers (issue 26): only the run's own processes. A sandboxed agent sees no other run's folder; an
 * agent without a sandbox sees them all, so each new connection first proves it comes from the run (peer.ts: the
 * relay shows a challenge in its command line, the worker finds it among the run's processes) before MCP starts.
 *
 * One tool host serves all runs of a worker (service and MCP plugins live as long as the worker), made at the first
 * run that offers tools. A run's server stops with the run; all stop with the worker (a killed one takes its sockets).
 */
import { createServer, type Server as NetServer, type Socket } from "node:net";
import { closeSync, openSync, rmSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { basename, dirname, join } from "node:path";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { MessageLines } from "./mcp-lines.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { HubClient, HubError } from "../protocol/client.js";
import type { Job, ToolCallDecision } from "../protocol/responses.js";
import { callbackUrlOf, newCallbackKey, toolArgsFields, toolRefusalBody } from "../protocol/tool-calls.js";
import { bridgeCallsInFlightPerRunMax, bridgeConnectionsPerRunMax, toolCallWaitMaxSeconds } from "../kernel/limits.js";
import { HeldLines, RunBytes } from "./bridge-budget.js";
import { t, type Lang } from "../i18n/messages.js";
import { ToolHost, ToolRegistry, argumentsBeyondLimits, toolLimits, toolPlugins, type CallOutcome, type CallProgress, type DataTools, type OfferedTool } from "../tools/index.js";
import { mcpTool, offeredTools } from "./offered-tools.js";
import { LastGood, PluginRegistry, pluginRoots, watchPlugins, type PluginWatcher } from "../plugins/index.js";
import { toolsServerName, type ToolsOffer } from "../sdk/index.js";
import { engineDir } from "../common/paths.js";
import { sleep } from "./supervise.js";
import { runSecrets, shownArguments } from "./transcript.js";
import { neutralise, redact } from "../kernel/text.js";
import {
  admittedMethod, canCheckPeers, firstLine, isNotification, notification, processTree, proofTitlePrefix, provedMethod, proveMethod, refusedMethod, shownBy,
} from "./peer.js";

/**
 * One MCP message (one line) an agent may send the bridge, in bytes: a longer one closes that connection. Four times
 * a call's largest arguments (`argumentsMaxBytes`), for clients that escape text (Python's `\uXXXX`): each byte of
 * a line is parsed on the hub's thread for a local worker (hostile round 41, F41a-1: 10 MiB before).
 */
export const bridgeLineMaxBytes = 4 * toolLimits.argumentsMaxBytes;
/** A message's nesting the bridge parses at all: a call's arguments (`argumentsDepthMax`) inside a message and its params. */
export const bridgeLineDepthMax = toolLimits.argumentsDepthMax + 4;
/** After a parked (async) call's timeout, how long the bridge still waits for the hub to say it ended, in ms. */
export const parkedResultGraceMs = 5_000;
/** The longest unix socket path that fits a socket address (`sun_path` holds 108 bytes with its final NUL). */
export const unixSocketPathMaxBytes = toolLimits.unixSocketPathMaxBytes;
/** The name of a run's socket in its `agent/` folder. */
export const toolsSocketName = "tools.sock";
/** The command the agent's CLI starts as its stdio MCP server: `agent-autoloop tools mcp` (issue 16), this engine's own. */
export const cliScript = join(engineDir, "bin", "agent-autoloop.js");

/** What the bridge needs of its worker. */
export interface ToolBridgeOptions {
  url: string;
  /** The worker's home: plugins come from `<home>/plugins` (and the built-in ones); the home is hidden from sandboxes. */
  home: { dir: string; plugins: string; pluginState?: string };
  lang: Lang;
  log: (line: string) => void;
  /** HTTP tools (kind `http`) offered and called beside the tool plugins, with the same approvals and audit. */
  data?: DataTools;
  /** A tool host to use, started and closed by its owner (`serve`: the hub's); default: one of the bridges' own. */
  toolHost?: () => Promise<ToolHost>;
}

/** A run's open bridge: what to give the agent, and how to stop it. */
export interface RunBridge {
  offer: ToolsOffer;
  close(): Promise<void>;
}

/**
 * Listens on the unix socket `path`. A path longer than a socket address holds (libuv would cut it and bind elsewhere)
 * is reached on Linux through the folder's descriptor (`/proc/self/fd/<n>/<name>`); elsewhere it is refused.
 * @throws the listen error, or why the path cannot be used.
 */
async function listenAt(server: NetServer, path: string, lang: Lang): Promise<void> {
  let fd: number | null = null;
  let address = path;
  if (Buffer.byteLength(path) > unixSocketPathMaxBytes) {
    if (process.platform !== "linux") throw new Error(t(lang, "bridge.socketPathLong", { path, max: unixSocketPathMaxBytes }));
    fd = openSync(dirname(path), "r");
    address = `/proc/self/fd/${fd}/${basename(path)}`;
  }
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(address, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

/** A tool error the model reads. */
function toolError(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

/**
 * A plugin's `result` as the model reads it: its `content` when that is a string (§3's `{"content": "hello, Ada"}`),
 * an MCP plugin's text blocks as they are, else the result's JSON as text.
 */
export function resultContent(result: unknown): CallToolResult["content"] {
  const text = (t: string) => [{ type: "text" as const, text: t }];
  if (typeof result === "string") return text(result);
  const content = (result as { content?: unknown } | null)?.content;
  if (typeof content === "string") return text(content);
  const isText = (b: unknown) => !!b && typeof b === "object" && (b as { type?: unknown }).type === "text" && typeof (b as { text?: unknown }).text === "string";
  if (Array.isArray(content) && content.length > 0 && content.every(isText)) return (content as { text: string }[]).map((b) => ({ type: "text" as const, text: b.text }));
  return text(JSON.stringify(result ?? null));
}

/** The tool bridges of one worker: its tool host, and the runs' servers. */
export class ToolBridges {
  private host: Promise<ToolHost> | null = null;
  private readonly runs = new Set<RunBridge>();
  /** Calls in flight by run (`bridgeCallsInFlightPerRunMax`). */
  private readonly inFlight = new Map<number, number>();
  private readonly client: HubClient;
  private watch: PluginWatcher | null = null;
  /** This worker's key of the fingerprints its redacted call arguments carry (transcript.ts `fingerprint`); never sent. */
  private readonly fingerprintKey = randomBytes(32);

  constructor(private readonly o: ToolBridgeOptions) {
    this.client = new HubClient(o.url, null);
  }

  /**
   * The worker's tool host: its owner's (`toolHost`), else one of its own made and started (services, autostarted MCP
   * servers) on first use, over the home's plugins by the common plugin layer's roots and last good rule, watched.
   */
  private toolHost(): Promise<ToolHost> {
    if (this.o.toolHost) return this.o.toolHost();
    this.host ??= (async () => {
      const roots = pluginRoots(this.o.home.plugins);
      const registry = new ToolRegistry(roots, this.o.lang, new LastGood(this.o.home.pluginState ?? null));
      const plugins = new PluginRegistry({ roots, lang: this.o.lang, loaders: [toolPlugins(registry)], log: this.o.log });
      await plugins.reload();
      const host = new ToolHost(registry, {
        lang: this.o.lang, hiddenPaths: [this.o.home.dir], log: (subsystem, line) => this.o.log(`${subsystem}: ${line}`), ...(this.o.data ? { data: this.o.data } : {}),
      });
      await host.start();
      this.watch = watchPlugins(plugins);
      return host;
    })();
    // A host that could not be made is made again at the next need.
    this.host.catch(() => (this.host = null));
    return this.host;
  }

  /**
   * Opens the bridge of a run: listens on `<agentDir>/tools.sock` (a stale socket of an earlier worker process is
   * replaced). `job` is read at each call, so a token that a repeated claim replaced is the one used.
   * @param runRoots the processes the run's own are found under, asked at each new connection (the worker: the
   *   supervisors of the run's launches); a connection from any other process is turned away (peer.ts).
   * @param secrets the run's secrets (attempt.ts), asked at each call: replaced in the arguments the hub is told of.
   * @throws when the socket cannot be made (the run then gets no tools; the caller says why).
   */
  async open(job: Job, agentDir: string, runRoots: () => readonly number[], secrets: () => readonly string[] = () => []): Promise<RunBridge> {
    const socketPath = join(agentDir, toolsSocketName);
    const calls = new AbortController();
    const sockets = new Set<Socket>();
    // What the run's connections may hold (bridge-budget.ts); each kind of refusal is logged once per run.
    const bytes = new RunBytes();
    const said = new Set<string>();
    const sayOnce = (key: "bridge.connectionsFull" | "bridge.bytesFull", text: string) => {
      if (said.has(key)) return;
      said.add(key);
      this.o.log(t(this.o.lang, "bridge.log", { run: job.run, error: text }));
    };
    const server: NetServer = createServer((socket) => {
      socket.on("error", () => {}); // the peer went away; close follows
      if (sockets.size >= bridgeConnectionsPerRunMax) {
        const text = t(this.o.lang, "bridge.connectionsFull", { run: job.run, max: bridgeConnectionsPerRunMax });
        sayOnce("bridge.connectionsFull", text);
        socket.end(notification(refusedMethod, { message: text }), () => socket.destroy());
        return;
      }
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      const over = () => {
        sayOnce("bridge.bytesFull", t(this.o.lang, "bridge.bytesFull", { run: job.run, max: bytes.max }));
        socket.destroy();
      };
      void this.admit(job, socket, runRoots).then((admitted) => (admitted ? this.serve(job, socket, calls.signal, new HeldLines(bytes, over), secrets) : undefined));
    });
    rmSync(socketPath, { force: true });
    await listenAt(server, socketPath, this.o.lang);
    server.on("error", (e) => this.o.log(t(this.o.lang, "bridge.log", { run: job.run, error: e.message })));
    let closed: Promise<void> | null = null;
    const bridge: RunBridge = {
      offer: { server: toolsServerName, command: [process.execPath, cliScript, "tools", "mcp", "--socket", socketPath, "--lang", this.o.lang] },
      close: () => {
        closed ??= (async () => {
          this.runs.delete(bridge);
          calls.abort();
          const stopped = new Promise<void>((r) => server.close(() => r()));
          for (const s of sockets) s.destroy();
          await stopped;
          rmSync(socketPath, { force: true });
        })();
        return closed;
      },
    };
    this.runs.add(bridge);
    return bridge;
  }

  /**
   * The exchange that comes before MCP on a new connection (peer.ts): a challenge; the peer's `proved`; then a look
   * for a process of the run that shows it. @returns whether the connection is the run's (else it is closed, said in
   * the log and to the peer). Whatever the peer sent after its proof is kept for MCP.
   */
  private async admit(job: Job, socket: Socket, runRoots: () => readonly number[]): Promise<boolean> {
    const challenge = randomBytes(16).toString("hex");
    socket.write(notification(proveMethod, { challenge }));
    const first = await firstLine(socket);
    const proved = first !== null && isNotification(first.line, provedMethod)
      && (!canCheckPeers || shownBy(processTree(runRoots()), proofTitlePrefix + challenge));
    if (!proved) {
      if (!socket.destroyed) {
        this.o.log(t(this.o.lang, "bridge.turnedAway", { run: job.run }));
        socket.end(notification(refusedMethod, { message: t(this.o.lang, "bridge.notOwnRun") }), () => socket.destroy());
      }
      return false;
    }
    if (first.rest.length > 0) socket.unshift(first.rest);
    socket.write(notification(admittedMethod));
    return true;
  }

  /** Serves one MCP connection of a run's agent until it closes; what it reads goes through `held` (the run's byte budget). */
  private async serve(job: Job, socket: Socket, stop: AbortSignal, held: HeldLines, secrets: () => readonly string[]): Promise<void> {
    const mcp = new Server({ name: toolsServerName, version: "1" }, { capabilities: { tools: {} } });
    const readOnly = job.agent.access === "read";
    mcp.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: (await this.offered(job)).map((o) => mcpTool(o, readOnly)) }));
    mcp.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
      const signal = AbortSignal.any([stop, extra.signal]);
      const token = req.params._meta?.progressToken;
      let step = 0;
      const onProgress = token === undefined ? undefined : (p: CallProgress) => {
        step += 1;
        const percent = typeof p.percent === "number" && Number.isFinite(p.percent) ? p.percent : undefined;
        void extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken: token, progress: percent ?? step, ...(percent !== undefined ? { total: 100 } : {}), ...(p.message ? { message: p.message } : {}) },
        }).catch(() => {});
      };
      return this.call(job, req.params.name, req.params.arguments ?? {}, signal, secrets(), onProgress);
    });
    // A line the SDK would drop in silence is answered (F39b-1); one longer than allowed closes the connection.
    // Too deep, or a call whose arguments are beyond the host's limits: answered before the SDK parses and validates
    // the message again (F41a-1), the call refused and recorded as `call` would.
    const answer = (id: unknown, body: object) => void (!socket.destroyed && socket.write(JSON.stringify({ jsonrpc: "2.0", id, ...body }) + "\n"));
    const lines = held.pipe(new MessageLines(bridgeLineMaxBytes, (e) => {
      if (e.over) return void socket.destroy();
      answer(e.id, { error: { code: e.code, message: e.message } });
    }, { depthMax: bridgeLineDepthMax, message: (m) => {
      const params = m.method === "tools/call" && typeof m.params === "object" && m.params !== null ? m.params as { name?: unknown; arguments?: unknown } : null;
      const beyond = params?.arguments === undefined ? null : argumentsBeyondLimits(params.arguments, this.o.lang);
      if (beyond === null) return null;
      const name = typeof params!.name === "string" ? params!.name : "";
      void this.refuseBeyond(job, name, beyond, secrets()).then((result) => answer(m.id, { result }));
      return "handled";
    } }));
    const transport = new StdioServerTransport(lines, socket, { maxBufferSize: bridgeLineMaxBytes + 2 });
    mcp.onclose = () => socket.destroy();
    socket.on("close", () => {
      held.release();
      void mcp.close().catch(() => {});
    });
    await mcp.connect(transport).catch(() => socket.destroy());
    socket.pipe(held); // the socket was paused after the proof: piping lets it flow again
  }

  /** The tools this run is offered now (the plugin folders are read again: an edited manifest counts at once). */
  private async offered(job: Job): Promise<OfferedTool[]> {
    const host = await this.toolHost();
    host.registry.rescan();
    const denied = new Set(job.toolsDenied ?? []); // denied whole by the approvals: never asked for its tools (it would run)
    return offeredTools(host, job.tools.filter((p) => !denied.has(p.slice(0, p.indexOf(".")))), (plugin, error) => this.o.log(t(this.o.lang, "bridge.listFailed", { run: job.run, plugin, error })));
  }

  /**
   * One call of the agent, from the hub's decision to the tool's result. Never throws. The hub is told of the arguments
   * with the run's `secrets` (and what the plugin takes of the hub's environment) replaced (transcript.ts
   * `shownArguments`): its card, digest and "allow once" are of those; the plugin gets `args` as sent.
   */
  private async call(job: Job, name: string, args: Record<string, unknown>, signal: AbortSignal, secrets: readonly string[], onProgress?: (p: CallProgress) => void): Promise<CallToolResult> {
    const now = this.inFlight.get(job.run) ?? 0;
    if (now >= bridgeCallsInFlightPerRunMax) {
      const message = t(this.o.lang, "bridge.tooManyCalls", { tool: name, max: bridgeCallsInFlightPerRunMax });
      return this.refuse(job, name, {}, "tools.too_many_calls", message, await this.hiddenOf(job, name, secrets));
    }
    this.inFlight.set(job.run, now + 1);
    try {
      return await this.callOne(job, name, args, signal, secrets, onProgress);
    } finally {
      const left = (this.inFlight.get(job.run) ?? 1) - 1;
      if (left > 0) this.inFlight.set(job.run, left);
      else this.inFlight.delete(job.run);
    }
  }

  /** `call` within the run's calls in flight. */
  private async callOne(job: Job, name: string, args: Record<string, unknown>, signal: AbortSignal, secrets: readonly string[], onProgress?: (p: CallProgress) => void): Promise<CallToolResult> {
    const lang = this.o.lang;
    const host = await this.toolHost();
    const hidden = await this.hiddenOf(job, name, secrets);
    // Arguments beyond the host's limits are refused before anything reads them (the redaction below runs in the hub's
    // process for a local worker: issue 26 round 12, F12-5); the refusal records none of them.
    const beyond = argumentsBeyondLimits(args, lang);
    if (beyond !== null) return this.refuseBeyond(job, name, beyond, secrets);
    if (!(await this.offered(job)).some((o) => o.qualifiedName === name)) {
      return this.refuse(job, name, args, "tools.not_offered", t(lang, "bridge.notOffered", { tool: name }), hidden);
    }
    // The tool host's checks first (plugin, tool, arguments against its schema): a call refused here is not decided,
    // only recorded (denied, with the reason).
    const checked = await host.check(name, args);
    if (!checked.ok) return checked.status === "refused" ? this.refuse(job, name, args, String(checked.code), checked.message, hidden) : toolError(checked.message);
    let decision: ToolCallDecision;
    try {
      decision = await this.client.toolCall(job.run, job.token, {
        tool: name, ...toolArgsFields(shownArguments(args, hidden, this.fingerprintKey)), manifestDigest: checked.digest, ...(checked.files ? { files: checked.files } : {}),
        ...(checked.binds.length > 0 ? { binds: checked.binds } : {}), ...(checked.sandboxed !== undefined ? { sandboxed: checked.sandboxed } : {}), ...(checked.sandboxNetwork ? { sandboxNetwork: checked.sandboxNetwork } : {}), ...(checked.http ? { http: checked.http } : {}), ...(checked.env ? { env: checked.env } : {}),
        builtIn: checked.builtIn, disableModelInvocation: checked.disableModelInvocation, kind: checked.pluginType,
      });
      if (decision.decision === "prompt") decision = await this.awaitAnswer(job, decision, signal);
    } catch (e) {
      return toolError(t(lang, "bridge.hub", { tool: name, error: hubText(e) }));
    }
    if (decision.decision === "deny") return { ...toolError(t(lang, "bridge.denied", { tool: name, reason: decision.reason ?? "" })), _meta: { denied: true } };
    if (decision.decision === "prompt") return { ...toolError(t(lang, "bridge.awaiting", { card: decision.card ?? "?" })), _meta: { awaitingCard: decision.card ?? null } };

    const callbackKey = newCallbackKey();
    const out = await host.call(name, args, {
      sessionKey: decision.sessionKey, callbackUrl: callbackUrlOf(this.o.url, callbackKey), signal, ...(onProgress ? { onProgress } : {}),
      toolCall: decision.call, // a declarative HTTP tool's requests to this hub name the call (issue 26: hops)
      decidedDigest: checked.digest, // what the owner's answer was about runs, or nothing (F24-2)
    });
    const timeoutMs = checked.timeoutMs;
    await this.report(job, decision.call, out, timeoutMs, callbackKey);
    return out.status === "accepted" ? this.parked(job, name, decision.call, timeoutMs, signal) : resultOf(out, lang);
  }

  /**
   * A workflow's `tool` step (issue 18): the same call as an agent's through its server — offered by the rule's
   * `tools`, decided by the hub (approvals, audit), run by this worker's tool host, its outcome reported. Never throws;
   * a `prompt` decision left unanswered in time is a tool error whose `_meta.awaitingCard` names the card.
   */
  callFor(job: Job, name: string, args: Record<string, unknown>, signal: AbortSignal, secrets: readonly string[] = []): Promise<CallToolResult> {
    return this.call(job, name, args, signal, secrets);
  }

  /**
   * The values of the hub's environment that the plugins `job`'s rule offers tools of are given (tools/env.ts
   * `passedEnv`): secrets of the run, replaced in all it reports (issue 26 round 10). Starts no plugin.
   */
  async passedSecrets(job: Job): Promise<string[]> {
    const host = await this.toolHost();
    host.registry.rescan();
    return [...new Set((job.tools ?? []).map((p) => p.slice(0, p.indexOf("."))))].flatMap((p) => host.passedValues(p));
  }

  /**
   * A call refused here, before the hub decided it: the hub records it (denied, with `code` and `message`) so that
   * every call is audited; the agent reads `message` as a tool error either way (a hub that cannot be reached is logged).
   */
  /** A call whose arguments are beyond the host's limits (`beyond` says how): refused and recorded without them. */
  private async refuseBeyond(job: Job, name: string, beyond: string, secrets: readonly string[]): Promise<CallToolResult> {
    return this.refuse(job, name, {}, "tools.invalid_arguments", t(this.o.lang, "tools.call.arguments", { tool: name, error: beyond }), await this.hiddenOf(job, name, secrets));
  }

  /** The values a call of `name` must not show: the run's secrets and what the tool's plugin takes of the hub's environment. */
  private async hiddenOf(job: Job, name: string, secrets: readonly string[]): Promise<string[]> {
    const host = await this.toolHost();
    return runSecrets(job, {}, [...secrets, ...host.passedValues(name.slice(0, Math.max(0, name.indexOf("."))))]);
  }

  private async refuse(job: Job, name: string, args: unknown, code: string, message: string, secrets: readonly string[]): Promise<CallToolResult> {
    const body = toolRefusalBody(redact(name, secrets, "REDACTED"), shownArguments(args, secrets, this.fingerprintKey), code, redact(neutralise(message, false), secrets));
    if (body) {
      try {
        await this.client.toolCall(job.run, job.token, body);
      } catch (e) {
        this.o.log(t(this.o.lang, "bridge.log", { run: job.run, error: hubText(e) }));
      }
    }
    return { ...toolError(message), _meta: { denied: true } };
  }

  /**
   * Holds a `prompt` decision until the owner answers or the hub's bound (`waitUntil`) passes. A hub that cannot be
   * reached meanwhile (it restarts: the held call and its card are facts and survive it) is asked again each second
   * until the bound; still unanswered then, the call is awaiting approval as usual.
   * @throws the hub's refusal (HubError).
   */
  private async awaitAnswer(job: Job, first: ToolCallDecision, signal: AbortSignal): Promise<ToolCallDecision> {
    let d = first;
    const until = first.waitUntil ? Date.parse(first.waitUntil) : Date.now();
    do {
      const seconds = Math.min(toolCallWaitMaxSeconds, Math.max(1, Math.ceil((until - Date.now()) / 1000)));
      try {
        d = await this.client.toolCallWait(job.run, job.token, first.call, seconds, signal);
      } catch (e) {
        if (e instanceof HubError || signal.aborted) throw e;
        await sleep(1000);
      }
    } while (d.decision === "prompt" && Date.now() < until && !signal.aborted);
    return d;
  }

  /** Tells the hub how an allowed call ended; a hub that cannot be reached is logged (the agent still gets its result). */
  private async report(job: Job, call: number, out: CallOutcome, timeoutMs: number, callbackKey: string): Promise<void> {
    const status = out.status === "accepted" ? "parked" : out.status === "ok" || out.status === "timeout" || out.status === "oom" ? out.status : "error";
    try {
      await this.client.toolCallOutcome(job.run, job.token, call, {
        status, durationMs: Math.max(0, Math.round(out.durationMs)),
        ...(out.status === "accepted" ? { taskId: out.taskId, timeoutMs: Math.min(toolLimits.callTimeoutMsMax, Math.max(1, timeoutMs)), callbackKey } : {}),
      });
    } catch (e) {
      this.o.log(t(this.o.lang, "bridge.log", { run: job.run, error: hubText(e) }));
    }
  }

  /** Waits for a parked call's result (the plugin's callback reaches the hub) up to its timeout and a grace. */
  private async parked(job: Job, name: string, call: number, timeoutMs: number, signal: AbortSignal): Promise<CallToolResult> {
    const lang = this.o.lang;
    const deadline = Date.now() + timeoutMs + parkedResultGraceMs;
    while (!signal.aborted) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      try {
        const r = await this.client.toolCallResult(job.run, job.token, call, Math.min(toolCallWaitMaxSeconds, Math.max(1, Math.ceil(left / 1000))), signal);
        if (r.status === "ok") return { content: resultContent(r.result) };
        if (r.status === "error") return toolError(t(lang, "bridge.failed", { tool: name, code: r.error?.code ?? "", message: r.error?.message ?? "" }));
        if (r.status === "timeout") break;
      } catch (e) {
        if (signal.aborted) break;
        if (e instanceof HubError) return toolError(t(lang, "bridge.hub", { tool: name, error: hubText(e) }));
        await sleep(1000); // the hub restarts: a parked call survives it
      }
    }
    return toolError(t(lang, "bridge.parkedTimeout", { tool: name, ms: timeoutMs }));
  }

  /** Stops every run's server and the tool host (its long-lived plugins and async tasks' processes). */
  async close(): Promise<void> {
    await Promise.all([...this.runs].map((r) => r.close()));
    this.watch?.close();
    this.watch = null;
    const host = this.host;
    this.host = null;
    if (host) await (await host.catch(() => null))?.close();
  }
}

/** A tool host's outcome as the model reads it. */
function resultOf(out: Exclude<CallOutcome, { status: "accepted" }>, lang: Lang): CallToolResult {
  switch (out.status) {
    case "ok":
      return { content: resultContent(out.result) };
    case "error":
      return toolError(t(lang, "bridge.error", { code: out.code, message: out.message }));
    case "refused":
      return toolError(out.message);
    case "awaiting_approval":
      return toolError(out.reason);
    default:
      return toolError(out.message);
  }
}

/** What went wrong asking the hub, in words. */
function hubText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
