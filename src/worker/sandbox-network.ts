/**
 * The network of a sandboxed agent (issue 26 round 33, F33a-1): a network namespace of its own, joined to the
 * computer's network by pasta (passt). Agents used to share the computer's network, so one whose run went on while
 * a hub run by hand was stopped listened on the hub's own address and took the console's cookie and page secret from
 * the owner's open tab. In a network namespace of its own an agent reaches the internet (and the local network) as
 * before, but not the computer's loopback services — only the ports its rule names (`loopbackPorts`) and those of the
 * loopback URLs in its environment (a model proxy at `ANTHROPIC_BASE_URL=http://127.0.0.1:4000`) — and what it listens
 * on is seen by nothing outside its sandbox.
 *
 * Two ways, measured with passt of 2023-03 and bubblewrap 0.8 (Debian 12):
 * - `wrap` (an ordinary user): pasta makes a user, network, PID, UTS and IPC namespace and runs bwrap in it
 *   (`pasta … -- env --default-signal=PIPE bwrap --unshare-user --uid <uid> --gid <gid> …`; pasta leaves SIGPIPE ignored
 *   in its command, and bwrap's own user namespace keeps the agent's id and no capability). bwrap's status names its
 *   child by pasta's PID namespace; the supervisor finds its number on the computer (`hostPidOf`).
 * - `attach` (root, where pasta will not run a command): bwrap makes the network namespace (`--unshare-net`) and waits
 *   on `--block-fd` before it starts the agent; the supervisor joins pasta to it (`attachArgv`, as root: pasta as
 *   nobody cannot enter the namespace) and then lets bwrap go on. pasta stays until the supervisor ends it after the
 *   launch.
 * Either way: `-t none -u none` (the default would publish the sandbox's listeners on the computer), `--no-map-gw`
 * (the gateway's address would reach every loopback port of the computer), `-T <port>` per port reached, and DNS sent
 * to a fixed address that pasta forwards to the computer's resolver (`--dns-forward`; a resolver on the computer's
 * loopback, systemd-resolved's 127.0.0.53, is not reachable from the sandbox's own loopback).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { procChildren, procNsPids, readProcStat } from "../common/proc.js";
import { findProgram } from "../sdk/index.js";
import { writeFileDurable } from "./files.js";

/** How a sandboxed launch reaches the network: through pasta (`wrap` or `attach`, above). */
export interface SandboxNetwork {
  /** pasta's path. */
  pasta: string;
  mode: "wrap" | "attach";
  /** Ports of the computer's loopback the agent reaches at 127.0.0.1 and ::1 (sorted, each once). */
  ports: number[];
  /** The resolv.conf bound over the sandbox's /etc/resolv.conf (`resolvConf`). */
  resolv: string;
  /** `env` (coreutils ≥ 8.31, for `--default-signal=PIPE`): `wrap` only. */
  env?: string;
  /**
   * util-linux's `setpriv`, which starts pasta with a parent-death signal (`--pdeathsig SIGKILL`): pasta ends with the
   * run's supervisor, and bwrap's `--die-with-parent` then ends the sandbox. Absent where there is none.
   */
  setpriv?: string;
}

/** Where the sandbox sends its DNS queries; pasta forwards what reaches this address to the computer's resolver. */
export const sandboxDnsAddress = "169.254.1.53";

/** The most ports a launch's sandbox reaches on the computer's loopback: those named and those of its environment. */
export const sandboxLoopbackPortsMax = 64;

/**
 * pasta's options common to both ways: no port of the sandbox published on the computer, no gateway mapping, DNS
 * forwarded, `-T` for each port of `ports`. Each of pasta's four forwarding directions is named, since its default for
 * each is `auto` — every port the other side listens on (hostile round 40, F40a-1: with no port to name, `-T` was
 * left out, and the sandbox reached every loopback port of the computer, the hub's among them).
 */
export function pastaOptions(ports: readonly number[]): string[] {
  const toComputer = ports.length > 0 ? ports.flatMap((p) => ["-T", String(p)]) : ["-T", "none"];
  return ["-q", "--config-net", "-t", "none", "-u", "none", "-U", "none", ...toComputer, "--no-map-gw", "--dns-forward", sandboxDnsAddress];
}

/**
 * The command line that starts `bwrapArgv` (bwrap and its arguments) in the sandbox's network (`wrap`: pasta first;
 * `attach`: bwrap makes the namespace and waits on `blockFd`), with `uid`/`gid` kept inside (`wrap`).
 */
export function networkArgv(net: SandboxNetwork, bwrapArgv: readonly string[], blockFd: number, uid: number, gid: number): string[] {
  const [bwrap, ...rest] = bwrapArgv;
  if (net.mode === "attach") return [bwrap!, "--unshare-net", "--block-fd", String(blockFd), ...rest];
  return [...dyingWithParent(net), net.pasta, ...pastaOptions(net.ports), "-f", "--", net.env ?? "env", "--default-signal=PIPE", bwrap!, "--unshare-user", "--uid", String(uid), "--gid", String(gid), ...rest];
}

/** `setpriv --pdeathsig SIGKILL --` where there is one: what follows ends when its parent (the supervisor) does. */
function dyingWithParent(net: SandboxNetwork): string[] {
  return net.setpriv ? [net.setpriv, "--pdeathsig", "SIGKILL", "--"] : [];
}

/**
 * pasta's command line that joins the network namespace at `netns` (`attach`: a descriptor the caller opened, as
 * `/proc/self/fd/3`), as root, in the foreground, writing its process id to `pidFile` once the namespace's interface
 * and routes are set up.
 */
export function attachArgv(net: SandboxNetwork, netns: string, pidFile: string): string[] {
  return [...dyingWithParent(net), net.pasta, ...pastaOptions(net.ports), "-f", "--runas", "0", "--netns-only", "--netns", netns, "-P", pidFile];
}

/**
 * The ports of the computer's loopback named in `env`'s values: each URL (`scheme://host:port…`) whose host is
 * `127.0.0.1`, `localhost` or `[::1]` — where the owner pointed the agent's CLI at a model proxy, a gateway or an HTTP
 * proxy on this computer. pasta forwards a port to the computer's 127.0.0.1 and ::1 only, so another 127/8 address
 * names nothing (it would open the port of another service: the round-39 review, R39-6). A URL without a port names none (the scheme's own port on
 * loopback is rarely a service an agent needs; name it in `loopbackPorts`).
 */
export function loopbackPortsIn(env: Readonly<Record<string, string>>): number[] {
  const out: number[] = [];
  for (const value of Object.values(env)) {
    for (const m of value.matchAll(/[a-z][a-z0-9+.-]*:\/\/(?:[^@/\s]*@)?(127\.0\.0\.1|localhost|\[::1\]):(\d{1,5})(?![\d])/gi)) {
      const port = Number(m[2]);
      if (port >= 1 && port <= 65535) out.push(port);
    }
  }
  return out;
}

/**
 * The sandbox's resolv.conf, written in `folder` (the worker's home, which agents cannot reach) when missing or
 * changed: `nameserver sandboxDnsAddress`, with the computer's `search`, `domain` and `options` lines kept.
 * @returns its path.
 * @throws when it cannot be written.
 */
export function resolvConf(folder: string, hostResolv = "/etc/resolv.conf"): string {
  let kept: string[] = [];
  try {
    kept = readFileSync(hostResolv, "utf8").split("\n").filter((l) => /^\s*(search|domain|options)\s/.test(l)).slice(0, 16);
  } catch {
    // no resolv.conf: the sandbox gets the nameserver alone
  }
  const text = [...kept, `nameserver ${sandboxDnsAddress}`, ""].join("\n");
  const path = join(folder, "sandbox-resolv.conf");
  let now: string | null = null;
  try {
    now = readFileSync(path, "utf8");
  } catch {
    // not written yet
  }
  if (now !== text) {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    // renamed into place: a launch starting meanwhile binds the old file or the new one, never half of one
    writeFileDurable(path, text, 0o644);
  }
  return path;
}

/** What `sandboxNetwork` answers: the network, or why the agent shares the computer's (said once in the log). */
export type NetworkHere = { network: SandboxNetwork } | { shared: "noPasta" | "noEnv" };

/**
 * The programs a network of its own needs here, for a worker of user id `uid`: pasta (`attach` as root, else `wrap`,
 * which needs an `env` that takes `--default-signal`: coreutils 8.31 or later), and `setpriv` where there is one —
 * or why sandboxed agents share the computer's network. Reads PATH and files only (doctor asks it too).
 */
export function networkPrograms(uid: number, path = process.env.PATH ?? ""): { pasta: string; mode: "wrap" | "attach"; env?: string; setpriv?: string } | { shared: "noPasta" | "noEnv" } {
  const pasta = findProgram("pasta", path);
  if (!pasta) return { shared: "noPasta" };
  const setpriv = findProgram("setpriv", path) ?? undefined;
  if (uid === 0) return { pasta, mode: "attach", ...(setpriv ? { setpriv } : {}) };
  const env = findProgram("env", path);
  if (!env || !envTakesDefaultSignal(env)) return { shared: "noEnv" };
  return { pasta, mode: "wrap", env, ...(setpriv ? { setpriv } : {}) };
}

/**
 * The network of a sandboxed launch on this computer (`networkPrograms`), with the ports it reaches and its resolv.conf.
 * @param named the agent's `loopbackPorts`; the ports of `env`'s loopback URLs are added (`loopbackPortsIn`).
 * @param folder where the sandbox's resolv.conf is kept (`resolvConf`).
 * @param never ports never forwarded, named or found: the hub's own (round 39, F39a-4: a URL of the hub in a passed
 *   variable's text opened its port; agents reach the hub through their tools socket only).
 */
export function sandboxNetwork(named: readonly number[], env: Readonly<Record<string, string>>, folder: string, uid: number, path = process.env.PATH ?? "", never: readonly number[] = []): NetworkHere {
  const programs = networkPrograms(uid, path);
  if ("shared" in programs) return programs;
  const ports = [...new Set([...named, ...loopbackPortsIn(env)])].filter((p) => !never.includes(p)).sort((a, b) => a - b).slice(0, sandboxLoopbackPortsMax);
  return { network: { ...programs, ports, resolv: resolvConf(folder) } };
}

/** Whether `env` at `program` is coreutils' with `--default-signal` (8.31+), by its text: nothing is run. */
function envTakesDefaultSignal(program: string): boolean {
  try {
    return readFileSync(program).includes("default-signal");
  } catch {
    return false;
  }
}

/**
 * The number on the computer of the process a `wrap` launch's bwrap reported as `inner` (its number in pasta's PID
 * namespace): pasta (`wrapper`) → its child bwrap → bwrap's child, whose `NSpid` ends with `inner` at the depth of
 * pasta's namespace. Null when it cannot be found (gone already).
 */
export function hostPidOf(wrapper: number, inner: number): number | null {
  for (const bwrap of procChildren(wrapper)) {
    for (const child of procChildren(bwrap)) if (procNsPids(child)?.[1] === inner) return child;
  }
  return null;
}

/** The file in a launch's folder where an `attach` launch's pasta writes its process id. */
export const pastaPidFile = "pasta.pid";

/** How long pasta may take to join a sandbox's network namespace, in ms; past it the launch ends unstarted. */
export const pastaStartMs = 15_000;

/** How often the supervisor looks whether pasta has joined, and whether the agent has its own group yet, in ms. */
const joinPollMs = 10;

/** An `attach` launch's pasta while it joins and runs (`joinPasta`). */
export interface JoinedPasta {
  /** Ends pasta (after the launch, or when the launch ends before it joined). */
  end(): void;
}

/**
 * Joins pasta to the network namespace of the sandbox bwrap cloned as `pid` (`attach`): opens the namespace here and
 * gives it to pasta as its descriptor 3 (pasta, root but without CAP_SYS_PTRACE once it dropped capabilities, cannot
 * open another process's namespace by path), starts pasta in the foreground as a child that dies with this process
 * (`setpriv`), and calls `joined` once pasta has written its pid file — its interface and routes are set up then —
 * or `failed` with why (pasta's words, or `pastaStartMs` passed; `gone`: the sandbox's process was ending already, so
 * bwrap's own setup failed). Never both, each at most once.
 * @param folder the launch's folder (pasta's pid file).
 */
export function joinPasta(net: SandboxNetwork, pid: number, folder: string, joined: () => void, failed: (why: string, gone: boolean) => void): JoinedPasta {
  let pasta: ChildProcess | null = null;
  let settled = false;
  let timer: NodeJS.Timeout | null = null;
  let gone = false;
  const settle = (why: string | null) => {
    if (settled) return;
    settled = true;
    if (timer) clearInterval(timer);
    if (why === null) joined();
    else failed(why, gone);
  };
  const handle = {
    end: () => {
      // Silently: a launch that ended before pasta joined (a stop, bwrap's own failure) says so itself.
      settled = true;
      if (timer) clearInterval(timer);
      pasta?.kill("SIGKILL");
    },
  };
  let ns: number;
  try {
    ns = openSync(`/proc/${pid}/ns/net`, "r");
  } catch (e) {
    // ENOENT: the process is ending (its namespaces are let go before it is a zombie): bwrap's own setup failed.
    gone = (e as NodeJS.ErrnoException).code === "ENOENT";
    settle((e as Error).message);
    return handle;
  }
  const pidFile = join(folder, pastaPidFile);
  // An earlier start's file (a launch started again after bwrap's setup failed) is not this pasta's word.
  rmSync(pidFile, { force: true });
  const argv = attachArgv(net, "/proc/self/fd/3", pidFile);
  try {
    pasta = spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", "ignore", "pipe", ns] });
  } finally {
    closeSync(ns);
  }
  let said = "";
  pasta.stderr!.on("data", (d: Buffer) => (said = (said + d.toString()).slice(-4096)));
  const words = () => said.split("\n").filter((l) => l && !l.includes("syslog")).join(" ");
  pasta.on("error", (e) => settle(e.message));
  pasta.on("exit", (code, signal) => settle(words() || `pasta ended (${code ?? signal})`));
  const started = Date.now();
  timer = setInterval(() => {
    let written = "";
    try {
      written = readFileSync(pidFile, "utf8").trim();
    } catch {
      // not yet
    }
    if (written) settle(null);
    else if (Date.now() - started > pastaStartMs) {
      settle(`no answer within ${pastaStartMs} ms`);
      pasta?.kill("SIGKILL");
    }
  }, joinPollMs);
  return handle;
}

/**
 * Calls `then` once process `pid` leads a process group of its own (bwrap's child calls setsid only after its
 * `--block-fd` let it go), or after `waitMs`; not at all when it ended.
 */
export function onOwnGroup(pid: number, then: () => void, waitMs = 5_000): void {
  const started = Date.now();
  const look = () => {
    const stat = readProcStat(pid);
    if (stat === null) return;
    if (stat.pgid === pid || Date.now() - started > waitMs) return then();
    setTimeout(look, joinPollMs);
  };
  look();
}
