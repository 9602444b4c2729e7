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
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
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
}

/** Where the sandbox sends its DNS queries; pasta forwards what reaches this address to the computer's resolver. */
export const sandboxDnsAddress = "169.254.1.53";

/** The most ports a launch's sandbox reaches on the computer's loopback: those named and those of its environment. */
export const sandboxLoopbackPortsMax = 64;

/**
 * pasta's options common to both ways: no port of the sandbox published on the computer, no gateway mapping, DNS
 * forwarded, `-T` for each port of `ports`.
 */
function pastaOptions(ports: readonly number[]): string[] {
  return ["-q", "--config-net", "-t", "none", "-u", "none", "-U", "none", "--no-map-gw", "--dns-forward", sandboxDnsAddress, ...ports.flatMap((p) => ["-T", String(p)])];
}

/**
 * The command line that starts `bwrapArgv` (bwrap and its arguments) in the sandbox's network (`wrap`: pasta first;
 * `attach`: bwrap makes the namespace and waits on `blockFd`), with `uid`/`gid` kept inside (`wrap`).
 */
export function networkArgv(net: SandboxNetwork, bwrapArgv: readonly string[], blockFd: number, uid: number, gid: number): string[] {
  const [bwrap, ...rest] = bwrapArgv;
  if (net.mode === "attach") return [bwrap!, "--unshare-net", "--block-fd", String(blockFd), ...rest];
  return [net.pasta, ...pastaOptions(net.ports), "-f", "--", net.env ?? "env", "--default-signal=PIPE", bwrap!, "--unshare-user", "--uid", String(uid), "--gid", String(gid), ...rest];
}

/**
 * pasta's command line that joins the network namespace at `netns` (`attach`: a descriptor the caller opened, as
 * `/proc/self/fd/3`), as root, writing its own process id to `pidFile`; it returns once the namespace's interface is
 * set up, and keeps running in the background.
 */
export function attachArgv(net: SandboxNetwork, netns: string, pidFile: string): string[] {
  return [net.pasta, ...pastaOptions(net.ports), "--runas", "0", "--netns-only", "--netns", netns, "-P", pidFile];
}

/**
 * The ports of the computer's loopback named in `env`'s values: each URL (`scheme://host:port…`) whose host is
 * `127.0.0.1` (or another 127/8 address), `localhost` or `[::1]` — where the owner pointed the agent's CLI at a model
 * proxy, a gateway or an HTTP proxy on this computer. A URL without a port names none (the scheme's own port on
 * loopback is rarely a service an agent needs; name it in `loopbackPorts`).
 */
export function loopbackPortsIn(env: Readonly<Record<string, string>>): number[] {
  const out: number[] = [];
  for (const value of Object.values(env)) {
    for (const m of value.matchAll(/[a-z][a-z0-9+.-]*:\/\/(?:[^@/\s]*@)?(127(?:\.\d{1,3}){3}|localhost|\[::1\]):(\d{1,5})(?![\d])/gi)) {
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
 * The network of a sandboxed launch on this computer: pasta from `path`, `attach` as root (`uid` 0), else `wrap`
 * (which needs an `env` that takes `--default-signal`: coreutils 8.31 or later).
 * @param named the agent's `loopbackPorts`; the ports of `env`'s loopback URLs are added (`loopbackPortsIn`).
 * @param folder where the sandbox's resolv.conf is kept (`resolvConf`).
 */
export function sandboxNetwork(named: readonly number[], env: Readonly<Record<string, string>>, folder: string, uid: number, path = process.env.PATH ?? ""): NetworkHere {
  const pasta = findProgram("pasta", path);
  if (!pasta) return { shared: "noPasta" };
  const ports = [...new Set([...named, ...loopbackPortsIn(env)])].sort((a, b) => a - b).slice(0, sandboxLoopbackPortsMax);
  const resolv = resolvConf(folder);
  if (uid === 0) return { network: { pasta, mode: "attach", ports, resolv } };
  const envProgram = findProgram("env", path);
  if (!envProgram || !envTakesDefaultSignal(envProgram)) return { shared: "noEnv" };
  return { network: { pasta, mode: "wrap", ports, resolv, env: envProgram } };
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
  const children = (pid: number): number[] => {
    try {
      return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      return [];
    }
  };
  for (const bwrap of children(wrapper)) {
    for (const child of children(bwrap)) {
      try {
        const nspid = /^NSpid:\s+(.+)$/m.exec(readFileSync(`/proc/${child}/status`, "utf8"))?.[1]?.trim().split(/\s+/).map(Number) ?? [];
        if (nspid[1] === inner) return child;
      } catch {
        // gone meanwhile
      }
    }
  }
  return null;
}

/** Whether this computer's kernel lists a process's children (`/proc/<pid>/task/<pid>/children`), which `hostPidOf` reads. */
export function childrenListed(): boolean {
  return existsSync(`/proc/${process.pid}/task/${process.pid}/children`);
}

/** The file in a launch's folder where an `attach` launch's pasta writes its process id. */
export const pastaPidFile = "pasta.pid";

/** How long pasta may take to join a sandbox's network namespace, in ms; past it the launch ends unstarted. */
export const pastaStartMs = 15_000;

/**
 * Ends the pasta whose id `pidFile` holds (an `attach` launch's, after the launch ended: it would keep the namespace's
 * interface for good), if that process is still a pasta.
 */
export function endPasta(pidFile: string): void {
  try {
    const pid = Number(readFileSync(pidFile, "utf8").trim());
    if (!Number.isSafeInteger(pid) || pid <= 1) return;
    if (!/^(pasta|passt)/.test(readFileSync(`/proc/${pid}/comm`, "utf8"))) return;
    process.kill(pid, "SIGTERM");
  } catch {
    // never written (pasta failed) or gone already
  }
}
