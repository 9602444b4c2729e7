/**
 * `agent-autoloop serve`: the hub, the local worker and the channels in one process, talking to each other
 * over the same HTTP protocol (protocol.md 协议). Initializes a new home first.
 */
import { serve as nodeServe, type ServerType } from "@hono/node-server";
import { isIP, type AddressInfo } from "node:net";
import type { Server } from "node:http";
import { existsSync } from "node:fs";
import { Hub, type HubOptions } from "./hub.js";
import { createApp } from "./http.js";
import { initHome, readConfig, readSecrets, ownerKeyName, type Config, type Home } from "./home.js";
import { registerKeysLocally } from "./local-commits.js";
import { edgeLimits, guardConnections, keyedRequest, serverOptions, type EdgeLimits } from "./edge.js";
import type { Worker } from "../worker/worker.js";
import { Supervisor } from "../worker/loops.js";
import type { KeyKind } from "../kernel/types.js";
import { t, type Lang } from "../i18n/messages.js";
import { readHomeId, removeHubRecord, tryLockHome, writeHubRecord } from "./lock.js";
import { checkHomeFiles, removeStaleTemporaries } from "./home-files.js";
import { recordThisStart } from "./code-folders.js";
import { recordKnownHome } from "../worker/known-homes.js";
import { closeInheritedDescriptors } from "../common/inherited-fds.js";
import { userHomes } from "../worker/sandbox.js";

import { localUrlOf, parseListen, urlOf } from "./listen.js";
import { warmConsoleFiles } from "./console-files.js";

// Listen addresses live in listen.ts (the CLI reads them without loading the hub); named here too for callers of serve.
export { parseListen, urlOf, localUrlOf };

// Writing and reading a home's database while no hub runs: local-commits.ts. This module is the CLI's one door to the
// database (tests/layers.test.ts), so the CLI reaches them through here.
export { commitLocally, readLocally, registerKeysLocally, removeKeyLocally } from "./local-commits.js";

/** `agent-autoloop backup` (src/host/backup.ts, loaded only when called: a starting hub never loads it or tar). */
export async function backupHome(...args: Parameters<typeof import("./backup.js").backupHome>): Promise<string[]> {
  return (await import("./backup.js")).backupHome(...args);
}

/** `agent-autoloop restore` (src/host/backup.ts, loaded only when called). */
export async function restoreHome(...args: Parameters<typeof import("./backup.js").restoreHome>): Promise<string[]> {
  return (await import("./backup.js")).restoreHome(...args);
}

/** The keys of a config.json that must be known to the hub. */
export function configKeys(config: Config): { kind: KeyKind; name: string; key: string }[] {
  return [
    { kind: "owner", name: ownerKeyName, key: config.owner },
    ...(config.worker ? [{ kind: "worker" as const, name: config.worker.name, key: config.worker.key }] : []),
    ...Object.entries(config.channels).map(([name, ch]) => ({ kind: "channel" as const, name, key: ch.key })),
  ];
}

/** Creates a new home (keys registered in its database). @returns the config, or null when it already existed. */
export function initialize(home: Home, lang: Lang): Config | null {
  checkHomeFiles(home, lang);
  const config = initHome(home, (c) => registerKeysLocally(home, configKeys(c), lang));
  if (config) readHomeId(home, true);
  // Every home of this user is hidden from every sandbox, not only the running hub's (issue 26 round 10, Medium 7).
  recordKnownHome(home.dir, userHomes([process.env.HOME]));
  return config;
}

/**
 * How long a starting hub waits for the command line holding the home's lock for a moment (`key new`, or `plugins
 * invoke` recording a call with no hub running — also while it waits for a parked call across a hub restart), in ms.
 */
export const hubLockWaitMs = 3_000;

/**
 * Takes the home's hub lock (`hub.pid`, see lock.ts): one hub per home, or two local workers and two sets of channels
 * would run. A lock left by a process that is gone, a zombie or a reused pid is taken over; one the command line holds
 * for a moment is waited for, up to `hubLockWaitMs`.
 * @returns the function that releases it.
 * @throws Error naming the pid and what it is (a hub, the CLI changing keys or recording a tool call) when another
 *   live process holds it.
 */
export async function lockHome(home: Home, lang: Lang): Promise<() => void> {
  const until = Date.now() + hubLockWaitMs;
  for (;;) {
    const lock = tryLockHome(home, "hub");
    if ("release" in lock) return lock.release;
    const moment = lock.by === "keys" || lock.by === "invoke";
    if (moment && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 50));
      continue;
    }
    // A file of an older version does not say who holds it: taken for a hub, as then.
    const key = lock.by === "keys" ? "serve.lockedByKeys" : lock.by === "invoke" ? "serve.lockedByInvoke" : lock.by === "restore" ? "serve.lockedByRestore" : "serve.locked";
    throw new Error(t(lang, key, { pid: lock.holder ?? "?", home: home.dir }));
  }
}

/** Why `serve` cannot listen on `address`, in words, and how to pick another address (`--listen`, config.json). */
function listenFailure(e: NodeJS.ErrnoException, address: string, home: Home, lang: Lang): string {
  const words = e.code === "EADDRINUSE" ? t(lang, "serve.addressInUse")
    : e.code === "EADDRNOTAVAIL" ? t(lang, "serve.addressNotHere")
    : e.code === "EACCES" ? t(lang, "serve.addressDenied")
    : null;
  const why = words ? `${words} (${e.code})` : e.message;
  return t(lang, "serve.cannotListen", { address: address.trim(), why, config: home.config });
}

export interface Running {
  url: string;
  hub: Hub;
  /** The local worker's current instance (a new one after a fault restarted it), or null without a local worker. */
  readonly worker: Worker | null;
  close(): Promise<void>;
}

export interface ServeOptions {
  listen?: string;
  lang: Lang;
  log?: (line: string) => void;
  /** The HTTP edge's limits, shortened by tests (src/kernel/limits.ts has the real ones). */
  limits?: Partial<EdgeLimits>;
  /** When a worker or channel counts as gone silent (ms; tests shorten it): see presence.ts. */
  presenceSilentMs?: number;
  /** Checks every answer against its published shape (HubOptions.checkAnswer); tests set it. */
  checkAnswer?: HubOptions["checkAnswer"];
  /** Folders of plugin folders besides `<home>/plugins` (`serve --plugins <dir>`), of every kind. */
  pluginDirs?: string[];
  /** A further root of built-in plugins (HubOptions.builtinToolRoot); tests set it. */
  builtinToolRoot?: string;
  /** The limits of runs' transcripts (HubOptions.transcriptLimits); tests shorten them. */
  transcriptLimits?: HubOptions["transcriptLimits"];
  /** The hub's clock (HubOptions.clock): the console's fixture generator starts six days back and moves it on. */
  clock?: HubOptions["clock"];
}

/**
 * Starts hub + local worker + channels.
 * @throws Error when config.json or rules.json cannot be used (a hub that never loaded rules does not start).
 */
export async function startServe(home: Home, opts: ServeOptions): Promise<Running> {
  // Before anything is started: what the hub's starter left open must not reach a sandbox (F22-1).
  closeInheritedDescriptors();
  const log = opts.log ?? ((line: string) => process.stderr.write(line + "\n"));
  checkHomeFiles(home, opts.lang);
  if (!existsSync(home.config)) {
    initialize(home, opts.lang);
    log(t(opts.lang, "cli.init.created", { home: home.dir }));
  }
  const config = readConfig(home);
  const { host, port } = parseListen(opts.listen ?? config.listen, opts.lang);
  // The local worker and the channels are loaded only when this home runs them: they bring the HTTP client and its
  // answer validators (responses.generated, 1.2 MB of source V8 keeps), which a hub alone never uses (issue 32).
  const workerModule = config.worker ? await import("../worker/worker.js") : null;
  const channelsModule = Object.keys(config.channels).length > 0 ? await import("./channels.js") : null;
  const unlock = await lockHome(home, opts.lang);
  removeStaleTemporaries(home);
  // A start that fails gives back what it took: the database, the address, the record and the lock.
  let taken: Hub | null = null;
  let listening: ServerType | null = null;
  let url: string;
  try {
    const hub = (taken = new Hub({
      home, lang: opts.lang, publicUrl: config.publicUrl, log, presenceSilentMs: opts.presenceSilentMs, checkAnswer: opts.checkAnswer, pluginDirs: opts.pluginDirs,
      builtinToolRoot: opts.builtinToolRoot, transcriptLimits: opts.transcriptLimits, clock: opts.clock, codeUses: Object.values(config.channels).map((ch) => ({ kind: "channel" as const, name: ch.use })),
    }));
    // What this start runs code from, for every later tool host of the home (a CLI's `plugins invoke` too).
    recordThisStart(home, hub.pluginRoots.map((r) => r.dir));
    recordKnownHome(home.dir, userHomes([process.env.HOME]));
    await hub.start();
    // Transcripts past their retention are removed (issue 30), now and every `sweepMs`, until the hub closes.
    hub.transcripts.start();
    // Service plugins start with serve (spec tool-plugins.md §6), supervised by the hub's tool host, which the local
    // worker's runs share: their calls reach the services serve runs, and every plugin's stderr is in the hub's log.
    hub.superviseTools();
    const app = createApp(hub);
    const limits = { ...edgeLimits, ...opts.limits };
    const server = (listening = await new Promise<ServerType>((resolve, reject) => {
      const s = nodeServe({ fetch: app.fetch, hostname: host, port, serverOptions: serverOptions(limits) }, () => resolve(s));
      // The address cannot be had: the error says which and what to do.
      s.once("error", (e) => reject(new Error(listenFailure(e as NodeJS.ErrnoException, opts.listen ?? config.listen, home, opts.lang))));
    }));
    guardConnections(server as Server, keyedRequest(hub), limits);
    const bound = server.address() as AddressInfo;
    const actual = bound.port;
    // A name is said as the address it gave (the worker and the channels connect there; round 33, F33a-2, below).
    url = urlOf(isIP(host) ? host : bound.address, actual);
    // Without publicUrl, links name this computer: a wildcard address (0.0.0.0, ::) is not one a browser opens. And
    // they name the address the hub holds, never a name: `localhost` is also [::1] to a browser, which the hub did
    // not take and an agent could (issue 26 round 33, F33a-2: it relayed the console and kept its session).
    const local = localUrlOf(bound.address, actual);
    if (!config.publicUrl) hub.setPublicUrl(local);
    writeHubRecord(home, local, hub.homeId);
    warmConsoleFiles();
  } catch (e) {
    const server = listening as ServerType | null;
    if (server) await new Promise<void>((r) => server.close(() => r()));
    await (taken as Hub | null)?.close();
    removeHubRecord(home);
    unlock();
    throw e;
  }
  const hub: Hub = taken;
  const server: ServerType = listening;

  // The local worker and the channels run under one supervisor: restarted after a failure, never ending the hub.
  const supervisor = new Supervisor(log, opts.lang);
  supervisor.guardProcess();
  let worker: Worker | null = null;
  if (config.worker && workerModule) {
    const { Worker } = workerModule;
    const wc = config.worker;
    let stopped = true;
    supervisor.start("worker", async (signal) => {
      // The same worker again after it threw (it still watches its runs); a new one after it was stopped (a fault or
      // shutdown), which picks up the runs of the old one from their folders.
      if (!worker || stopped) worker = new Worker({ url, key: wc.key, name: wc.name, capacity: wc.capacity, home, lang: opts.lang, log, plugins: hub.plugins, data: hub.declarative, toolHost: () => hub.toolHost() });
      const w = worker;
      stopped = false;
      const onAbort = () => {
        stopped = true;
        w.stop();
      };
      signal.addEventListener("abort", onAbort, { once: true });
      try {
        await w.run();
      } finally {
        signal.removeEventListener("abort", onAbort);
      }
    });
  }
  // Each channel gets its own AGENT_AUTOLOOP_CHANNEL_SECRET_<CHANNEL>, read again at each of its (re)starts: a secret
  // written while a channel fails without it is taken at its next restart, as its log line says (issue 26).
  if (channelsModule) {
    for (const [name, ch] of Object.entries(config.channels)) {
      supervisor.start(`channel ${name}`, channelsModule.channelLoop(name, ch, url, hub.plugins, log, () => readSecrets(home)));
    }
  }
  let closing: Promise<void> | null = null;
  return {
    url,
    hub,
    get worker() {
      return worker;
    },
    close() {
      closing ??= (async () => {
        await supervisor.stop();
        await new Promise<void>((r) => {
          server.close(() => r());
          (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
        });
        await hub.close();
        removeHubRecord(home);
        unlock();
      })();
      return closing;
    },
  };
}
