/**
 * Service plugins (spec tool-plugins.md §6): started by the tool host with `CORLINMAN_PLUGIN_ADDR` set to a unix
 * socket path (a stale socket is removed first); the plugin serves gRPC `corlinman.v1.PluginBridge` there and each
 * call is one `Execute` server stream: progress events are relayed, the first result, error or awaiting_approval ends
 * the call, an earlier end of the stream is an error. Supervised: any exit is a crash; it is restarted after
 * 1, 2, 5, 10 s; more than 3 crashes within 60 s is a crash loop and it is not restarted (`crash_loop` status: a card
 * for the owner later). Only a change of its own manifest restarts it (the host compares digests).
 *
 * Who can reach its socket (issue 26): a service serves whoever connects (its code is not ours to change), so only the
 * host may be able to connect. The socket is `plugin.sock` in a folder of its own inside the hub's home, which every
 * sandbox hides: a sandboxed agent cannot see it, nor can another plugin's sandbox (a sandboxed service is shown its
 * own folder alone, at `/run/corlinman`). A socket path deeper than a socket address holds (a deep home) is reached
 * through the host's descriptor of the folder (`/proc/<host pid>/fd/<n>/plugin.sock`, Linux only; elsewhere the
 * service is not started and says why). Processes outside every sandbox — a plugin without `[sandbox]`, an agent with
 * `"sandbox": false`, anything else of the hub's user — can reach it: they can read the hub's keys too.
 */
import { closeSync, constants as fsConstants, existsSync, fstatSync, lstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, rmdirSync } from "node:fs";
import { oPath } from "../common/bwrap.js";
import { procEnviron, procTable } from "../common/proc.js";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { randomBytes } from "node:crypto";
import type * as Grpc from "@grpc/grpc-js";
import { t } from "../i18n/messages.js";
import { PluginProcess, prepareLaunch, type LaunchSettings } from "./process.js";
import { setupFailed } from "../common/bwrap.js";
import { stopProcess } from "./mcp.js";
import { CrashWindow, backoffMs } from "./restart.js";
import type { Outcome, RunnablePlugin, RunnerKind } from "./runner.js";
import { callTimeoutMsDefault, restartBackoffMs, sandboxLaunchTriesMax, serviceCallTimeoutMsDefault, serviceCrashMax, serviceCrashWindowMs, serviceStartTimeoutMs, unixSocketPathMaxBytes } from "./limits.js";
import { sampleArguments, type ConformanceAdd, type ConformanceOptions } from "./conformance-kit.js";
import type { CallContext, LongLivedStatus } from "./types.js";

/** The variable naming the socket a service plugin serves on (§6). */
export const pluginAddrVariable = "CORLINMAN_PLUGIN_ADDR";
/** The name of a service's socket in its own folder. */
export const serviceSocketName = "plugin.sock";
/** Where a sandboxed service is shown its socket's folder (the only one it sees): short, however deep the home. */
export const sandboxSocketDir = "/run/corlinman";

/** Where the service sockets of tool hosts on the home `homeDir` go: `<home>/sockets/` (hidden from every sandbox). */
export function serviceSocketRoot(homeDir: string): string {
  return join(homeDir, "sockets");
}

/**
 * A new folder for one tool host's service sockets: `<home>/sockets/<pid>-<random>/` (0700) when `homeDir` is given,
 * else `<tmp>/aa-tools-<random>/`. Folders there of processes that are gone (a killed host) are removed first.
 */
export function serviceSocketFolder(homeDir: string | null): string {
  if (homeDir === null) return mkdtempSync(join(tmpdir(), "aa-tools-"));
  const root = serviceSocketRoot(homeDir);
  mkdirSync(root, { recursive: true, mode: 0o700 });
  for (const name of readdirSync(root)) {
    const pid = /^(\d+)-/.exec(name)?.[1];
    if (pid === undefined || Number(pid) === process.pid || alive(Number(pid))) continue;
    endOrphans(join(root, name), Number(pid));
    rmSync(join(root, name), { recursive: true, force: true });
  }
  return mkdtempSync(join(root, `${process.pid}-`));
}

/**
 * Ends the service plugins a killed host left running (issue 26 round 9: an unsandboxed service outlived each SIGKILL
 * of its hub, one more copy per crash; a sandboxed one dies with it, bwrap's --die-with-parent): each process whose
 * `CORLINMAN_PLUGIN_ADDR` lies in the dead host's socket folder `folder` (or, for a path too long for a socket, is
 * reached through the dead host `pid`'s descriptors), with its process group (each service was started as a group of
 * its own). Linux only (/proc); elsewhere nothing is found.
 */
function endOrphans(folder: string, pid: number): void {
  const prefixes = [`${pluginAddrVariable}=${folder}/`, `${pluginAddrVariable}=/proc/${pid}/fd/`];
  for (const p of procTable()) {
    const env = procEnviron(p.pid);
    if (!env?.some((e) => prefixes.some((x) => e.startsWith(x)))) continue;
    try {
      process.kill(-p.pgid, "SIGKILL");
    } catch {
      // gone meanwhile, or not ours to end
    }
  }
}

/** Whether a process `pid` is there (one of another user counts). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

const here = dirname(fileURLToPath(import.meta.url));
/** The .proto of the bridge: beside this file under tsx, in the source tree when running the compiled `dist/`. */
export const bridgeProtoPath = [join(here, "plugin-bridge.proto"), join(here, "..", "..", "..", "src", "tools", "plugin-bridge.proto")].find((p) => existsSync(p))
  ?? join(here, "plugin-bridge.proto");

type BridgeClient = Grpc.Client & { Execute(call: unknown, opts?: Grpc.CallOptions): Grpc.ClientReadableStream<ToolEvent> };
type BridgeCtor = new (address: string, creds: Grpc.ChannelCredentials) => BridgeClient;

/** A ToolEvent as proto-loader gives it (keepCase, oneofs, bytes as Buffer). */
interface ToolEvent {
  kind?: "progress" | "result" | "error" | "awaiting_approval";
  progress?: { message: string; fraction: number };
  result?: { call_id: string; result_json: Buffer; duration_ms: number };
  error?: { reason: string; message: string; retryable: boolean; upstream_code: string };
  awaiting_approval?: { reason: string; args_preview_json: Buffer; tool: string };
}

let bridge: { grpc: typeof Grpc; Ctor: BridgeCtor } | null = null;
/** gRPC and the generated client class of PluginBridge, loaded with the first service (a host that starts none never loads them). */
export async function bridgeClient(): Promise<{ grpc: typeof Grpc; Ctor: BridgeCtor }> {
  if (!bridge) {
    const [grpc, protoLoader] = await Promise.all([import("@grpc/grpc-js"), import("@grpc/proto-loader")]);
    const def = protoLoader.loadSync(bridgeProtoPath, { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true });
    const pkg = grpc.loadPackageDefinition(def) as unknown as { corlinman: { v1: { PluginBridge: BridgeCtor } } };
    bridge = { grpc, Ctor: pkg.corlinman.v1.PluginBridge };
  }
  return bridge;
}

/** One service plugin under supervision. */
export class ServiceSupervisor {
  readonly status: LongLivedStatus;
  readonly socket: string;
  private proc: PluginProcess | null = null;
  /** Processes started with another start left after them (`launchOnce`'s `retryable`). */
  private readonly retryable = new WeakSet<PluginProcess>();
  private client: BridgeClient | null = null;
  private crashes = new CrashWindow(serviceCrashMax, serviceCrashWindowMs);
  private attempt = 0;
  private timer: NodeJS.Timeout | null = null;
  private stopping = false;
  private tag = 0;
  private ready: Promise<boolean> | null = null;
  /** The host's descriptor of `socketDir`, held while a socket path too deep for an address is reached through it. */
  private dirFd: number | null = null;
  /** The host's O_PATH descriptor of the socket the running plugin made (Linux): what the host connects through. */
  private sockFd: number | null = null;

  /**
   * @param socketDir this plugin's own folder, which no agent and no other plugin can see (the host's: inside the
   *   hub's home); the socket is `<socketDir>/plugin.sock`. Made when missing; removed when the service stops.
   */
  constructor(
    readonly plugin: RunnablePlugin, readonly digest: string, private readonly s: LaunchSettings, private readonly socketDir: string,
    private readonly backoff: readonly number[], private readonly onStatus: (st: LongLivedStatus) => void,
  ) {
    this.socket = join(socketDir, serviceSocketName);
    this.status = { plugin: plugin.name, kind: "service", state: "stopped", pid: null, crashes: 0, lastError: null };
  }

  private set(state: LongLivedStatus["state"], lastError: string | null = this.status.lastError): void {
    Object.assign(this.status, { state, pid: this.proc?.pid ?? null, crashes: this.crashes.count, lastError });
    this.onStatus({ ...this.status });
  }

  /** Starts the plugin and waits until it accepts gRPC (at most `serviceStartTimeoutMs`). @returns whether it runs. */
  start(): Promise<boolean> {
    this.ready = this.launch();
    return this.ready;
  }

  private async launch(): Promise<boolean> {
    this.stopping = false;
    for (let tries = 1; ; tries++) {
      const launched = await this.launchOnce(tries < sandboxLaunchTriesMax);
      if (launched !== setupFailed) return launched;
      // Stopped while the first try ended (the host closing, the plugin changed): no second start.
      if (this.stopping) {
        this.set("stopped");
        return false;
      }
    }
  }

  /**
   * One start of the plugin. @param retryable another start is left: a sandbox bwrap could not set up (nothing of the
   *   plugin ran) answers `setupFailed`, and its exit is no crash (`exited`).
   */
  private async launchOnce(retryable: boolean): Promise<boolean | typeof setupFailed> {
    this.set("starting");
    mkdirSync(this.socketDir, { recursive: true, mode: 0o700 });
    rmSync(this.socket, { force: true });
    const address = this.addresses();
    if ("error" in address) {
      this.set("stopped", address.error);
      return false;
    }
    const prepared = await prepareLaunch({
      name: this.plugin.name, dir: this.plugin.dir, manifest: this.plugin.manifest, tag: `${process.pid}-svc-${++this.tag}`,
      hostEnv: { [pluginAddrVariable]: address.plugin }, hostBinds: [{ path: this.socketDir, at: sandboxSocketDir }],
    }, this.s);
    if (!prepared.ok) {
      this.set("stopped", prepared.refusal.message);
      return false;
    }
    // Stopped while its launch was being prepared (the host closed during its start): nothing is spawned.
    if (this.stopping) {
      this.set("stopped");
      return false;
    }
    const proc = new PluginProcess(prepared.launch, this.plugin.name, this.s, true);
    this.proc = proc;
    if (retryable && prepared.launch.status) this.retryable.add(proc);
    proc.onLine = (l) => this.s.log(`plugin.${this.plugin.name}`, l);
    void proc.spawnError.then((e) => this.s.log(`plugin.${this.plugin.name}`, e.message));
    void proc.closed.then(() => this.exited(proc));
    const error = await this.connect(proc, address.host);
    if (error !== null) {
      const before = this.status.lastError;
      this.status.lastError = t(this.s.lang, "tools.long.notReady", { plugin: this.plugin.name, ms: serviceStartTimeoutMs, error });
      await proc.end();
      if (this.retryable.has(proc) && (await proc.setupFailed)) {
        this.status.lastError = before;
        return setupFailed;
      }
      return false;
    }
    this.attempt = 0;
    this.set("running", null);
    return true;
  }

  /**
   * Where the host connects (`host`) and what the plugin is told to serve on (`plugin`): the socket's own path when it
   * fits a socket address; else, on Linux, the path through the host's descriptor of the folder (the host's own
   * `/proc/self/fd/<n>/…`; for a plugin outside any sandbox, a child of this process, `/proc/<pid>/fd/<n>/…`). A
   * sandboxed plugin serves on `sandboxSocketDir`, where its folder is bound. Elsewhere a path too long is refused.
   */
  private addresses(): { host: string; plugin: string } | { error: string } {
    const inside = `${sandboxSocketDir}/${serviceSocketName}`;
    const sandboxed = !!this.plugin.manifest.sandbox;
    if (Buffer.byteLength(this.socket) <= unixSocketPathMaxBytes) return { host: this.socket, plugin: sandboxed ? inside : this.socket };
    if (process.platform !== "linux") {
      return { error: t(this.s.lang, "tools.long.socketPath", { plugin: this.plugin.name, path: this.socket, max: unixSocketPathMaxBytes }) };
    }
    try {
      this.dirFd ??= openSync(this.socketDir, fsConstants.O_RDONLY | fsConstants.O_DIRECTORY);
    } catch (e) {
      return { error: t(this.s.lang, "tools.long.socketFolder", { plugin: this.plugin.name, path: this.socketDir, error: (e as Error).message }) };
    }
    const through = (pid: string) => `/proc/${pid}/fd/${this.dirFd}/${serviceSocketName}`;
    return { host: through("self"), plugin: sandboxed ? inside : through(String(process.pid)) };
  }

  /** Waits for the socket, then for the gRPC channel at `address`; @returns null when ready, else why not. */
  private async connect(proc: PluginProcess, address: string): Promise<string | null> {
    const deadline = Date.now() + serviceStartTimeoutMs;
    let gone = false;
    void proc.exited.then(() => (gone = true));
    while (!existsSync(this.socket)) {
      if (gone) return "exited";
      if (Date.now() > deadline) return "no socket";
      await new Promise((r) => setTimeout(r, 25));
    }
    // Issue 26 round 3, F2: the plugin owns its socket's folder, so it can put a link there in place of its socket
    // (to another service's, which would then run calls decided for this one). The socket is pinned once: opened
    // without following a link, checked to be a socket, and reached through that descriptor for as long as the plugin
    // runs (gRPC reconnects by path: a later swap in the folder changes nothing). Elsewhere than Linux: lstat only.
    const pinned = this.pinSocket();
    if (pinned !== null && typeof pinned === "object") return pinned.error;
    const { grpc, Ctor } = await bridgeClient();
    const client = new Ctor(`unix:${pinned ?? address}`, grpc.credentials.createInsecure());
    const err = await new Promise<Error | undefined>((r) => client.waitForReady(deadline, r));
    if (err) {
      client.close();
      return err.message;
    }
    this.client = client;
    return null;
  }

  /**
   * Pins the running plugin's socket (see connect): on Linux `/proc/self/fd/<n>` of an O_PATH descriptor of the socket
   * itself; elsewhere null (the path, checked by lstat). @returns `{ error }` when what is there is a link or no socket.
   */
  private pinSocket(): string | null | { error: string } {
    this.unpinSocket();
    const notSocket = { error: t(this.s.lang, "tools.long.notSocket", { plugin: this.plugin.name, path: this.socket }) };
    if (process.platform !== "linux") return lstatSync(this.socket).isSocket() ? null : notSocket;
    try {
      const fd = openSync(this.socket, oPath | fsConstants.O_NOFOLLOW);
      if (!fstatSync(fd).isSocket()) {
        closeSync(fd);
        return notSocket;
      }
      this.sockFd = fd;
      return `/proc/self/fd/${fd}`;
    } catch (e) {
      return { error: (e as Error).message };
    }
  }

  private unpinSocket(): void {
    if (this.sockFd !== null) closeSync(this.sockFd);
    this.sockFd = null;
  }

  /** Any exit is a crash (unless stopped): restart with backoff, or give up after too many. */
  private exited(proc: PluginProcess): void {
    // A start with another try left that bwrap could not set up is started again by `launch` itself: no crash.
    if (!this.retryable.has(proc)) return this.ended(proc);
    void proc.setupFailed.then((failed) => (failed ? undefined : this.ended(proc)));
  }

  /** The process ended: a crash unless it was stopped; restarted after a backoff. */
  private ended(proc: PluginProcess): void {
    if (proc !== this.proc) return;
    this.client?.close();
    this.client = null;
    this.unpinSocket();
    this.proc = null;
    if (this.stopping) return this.set("stopped");
    void proc.exited.then((x) => {
      const why = this.status.lastError ?? `exit ${x.code ?? x.signal}`;
      if (this.crashes.record(Date.now())) {
        return this.set("crash_loop", t(this.s.lang, "tools.long.crashLoop", { plugin: this.plugin.name, crashes: this.crashes.count, seconds: serviceCrashWindowMs / 1000 }));
      }
      this.set("backoff", why);
      const wait = backoffMs(++this.attempt, this.backoff);
      // said in serve's log: a service killed from outside (SIGKILL, the OOM killer) otherwise comes back in silence
      this.s.log(`plugin.${this.plugin.name}`, t(this.s.lang, "tools.long.restarting", { plugin: this.plugin.name, why, ms: wait }));
      this.timer = setTimeout(() => {
        this.timer = null;
        void this.start();
      }, wait);
      this.timer.unref();
    });
  }

  /** One call over `Execute`; refused when the plugin does not run. */
  async call(tool: string, args: Record<string, unknown>, ctx: CallContext, timeoutMs: number): Promise<Outcome> {
    if (this.status.state === "starting" && this.ready) await this.ready;
    const client = this.client;
    if (!client || this.status.state !== "running") {
      return { status: "refused", code: "tools.unavailable", message: this.status.lastError ?? t(this.s.lang, "tools.call.service", { plugin: this.plugin.name }) };
    }
    const callId = `call_${randomBytes(8).toString("hex")}`;
    const stream = client.Execute({
      call_id: callId, plugin: this.plugin.name, tool, args_json: Buffer.from(JSON.stringify(args)), session_key: ctx.sessionKey,
      approval_preconsented: false, trace: { traceparent: ctx.traceId ? `00-${ctx.traceId}-${randomBytes(8).toString("hex")}-01` : "", tracestate: "", request_id: ctx.requestId ?? "" },
    }, { deadline: Date.now() + timeoutMs });
    return new Promise<Outcome>((resolve) => {
      let done = false;
      const finish = (o: Outcome) => {
        if (done) return;
        done = true;
        ctx.signal?.removeEventListener("abort", onAbort);
        stream.cancel();
        this.proc?.checkBinds(); // what it wrote in its writable binds during the call (bind-check.ts)
        resolve(o);
      };
      const onAbort = () => finish({ status: "error", code: "tools.plugin_aborted", message: t(this.s.lang, "tools.call.aborted") });
      ctx.signal?.addEventListener("abort", onAbort, { once: true });
      stream.on("data", (ev: ToolEvent) => {
        if (ev.kind === "progress" && ev.progress) {
          const f = ev.progress.fraction;
          ctx.onProgress?.({ ...(f >= 0 ? { percent: Math.round(f * 100) } : {}), ...(ev.progress.message ? { message: ev.progress.message } : {}) });
        } else if (ev.kind === "result" && ev.result) {
          finish(this.parseResult(ev.result.result_json));
        } else if (ev.kind === "error" && ev.error) {
          finish({ status: "error", code: ev.error.reason, message: ev.error.message });
        } else if (ev.kind === "awaiting_approval" && ev.awaiting_approval) {
          finish({ status: "awaiting_approval", reason: ev.awaiting_approval.reason, argsPreview: ev.awaiting_approval.args_preview_json.toString("utf8") });
        }
      });
      stream.on("error", (e: Grpc.ServiceError) => {
        if (e.code === bridge!.grpc.status.DEADLINE_EXCEEDED) finish({ status: "timeout", message: t(this.s.lang, "tools.call.timeout", { plugin: this.plugin.name, ms: timeoutMs }) });
        else finish({ status: "error", code: "tools.plugin_exited", message: t(this.s.lang, "tools.long.ended", { plugin: this.plugin.name, error: e.details || e.message }) });
      });
      stream.on("end", () => finish({ status: "error", code: "tools.plugin_protocol", message: t(this.s.lang, "tools.long.noResult", { plugin: this.plugin.name }) }));
    });
  }

  /** A result's JSON text as a value (empty = null); text that is not JSON is a plugin error. */
  private parseResult(bytes: Buffer): Outcome {
    try {
      return { status: "ok", result: bytes.length === 0 ? null : JSON.parse(bytes.toString("utf8")) };
    } catch {
      return { status: "error", code: "tools.plugin_protocol", message: t(this.s.lang, "tools.long.resultJson", { plugin: this.plugin.name }) };
    }
  }

  /** Stops the plugin: SIGTERM, SIGKILL after 5 s; no restart. Its socket and folder go. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.client?.close();
    this.client = null;
    const proc = this.proc;
    if (proc) await stopProcess(proc);
    this.unpinSocket();
    rmSync(this.socket, { force: true });
    if (this.dirFd !== null) closeSync(this.dirFd);
    this.dirFd = null;
    try {
      rmdirSync(this.socketDir); // only when empty: whatever else the plugin left there stays for the owner to see
    } catch {
      // gone already, or not empty
    }
    this.set("stopped");
  }
}

/**
 * Service plugins' runner: each started with the host (`serve` starts its tool host at once: spec §6, the gateway
 * spawns them at start), supervised, stopped when gone or before its new version starts. Its tools are its manifest's;
 * one that lists none takes any tool name. A call without a caller's timeout gets `serviceCallTimeoutMsDefault`.
 */
export const serviceRunner: RunnerKind = {
  tools: (m) => (m.capabilities.tools.length > 0 ? "listed" : "any"),
  timeoutMs: () => serviceCallTimeoutMsDefault,
  manifestTimeout: false,
  make(h) {
    const services = new Map<string, ServiceSupervisor>();
    return {
      knows: () => true,
      list: async (a) => ({ ok: true, tools: a.p.manifest.capabilities.tools, source: "manifest" }),
      async call(a, tool, args, ctx, timeoutMs) {
        const sup = services.get(a.p.name);
        if (!sup) return { status: "refused", code: "tools.unavailable", message: t(h.settings.lang, "tools.call.service", { plugin: a.p.name }) };
        return sup.call(tool, args, ctx, timeoutMs);
      },
      async start(a) {
        if (services.has(a.p.name)) return;
        const sup = new ServiceSupervisor(a.p, a.digest, h.settings, h.socketFolder(), h.backoff, (st) => h.emit(st));
        services.set(a.p.name, sup);
        await sup.start();
      },
      async stop(name) {
        const sup = services.get(name);
        services.delete(name);
        await sup?.stop();
      },
      statuses: () => [...services.values()].map((sup) => ({ ...sup.status })),
    };
  },
  conformance: conformService,
};

/** The conformance checks of a service plugin: it starts and accepts gRPC, and answers a good call. */
async function conformService(p: RunnablePlugin, digest: string, s: LaunchSettings, o: ConformanceOptions, add: ConformanceAdd): Promise<void> {
  const timeoutMs = p.manifest.communication.timeout_ms ?? callTimeoutMsDefault;
  const ctx = { sessionKey: "conformance" };
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

