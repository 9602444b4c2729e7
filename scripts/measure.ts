/**
 * What `npm run benchmark` and `npm run history` share: order statistics, a process's memory and CPU from /proc
 * (Linux), one JSON call over real HTTP, stopping a hub process, the machine line printed above the figures, the
 * slow-body attack of issue 14, and a benchmark's home with its keys.
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync } from "node:fs";
import http from "node:http";
import { connect, type Socket } from "node:net";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import type { HubProcess } from "../sim/hub-process.js";
import { homePaths, newKey, readMasterKey, type Home } from "../src/host/home.js";
import { registerKeysLocally } from "../src/host/serve.js";

/** The median (the upper one of an even count) of a non-empty list. */
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The p-quantile (0 ≤ p ≤ 1) of a non-empty list, nearest rank. */
export const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

/** A field of /proc/<pid>/status in MB (VmRSS: resident now; VmHWM: the highest resident so far). */
export function statusMb(pid: number, field: "VmRSS" | "VmHWM" = "VmRSS"): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)![1]) / 1024;
}

/** User + system CPU time a process has used, in ms (assumes 100 clock ticks per second). */
export function cpuMs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
}

/** Keep-alive connections shared by every `call` (one pool per process; sockets are opened as calls need them). */
const keepAlive = new http.Agent({ keepAlive: true });

/**
 * One request with a bearer key and an optional JSON body over node:http on a kept-alive connection (a lighter
 * client than fetch, whose own cost per request on this machine is larger than the hub's); resolves with the
 * parsed JSON answer. A request on a kept-alive socket the hub closed at its keep-alive timeout just as it was sent
 * (ECONNRESET on a reused socket) is sent again once, as Node's documentation advises and fetch does.
 * @throws Error when the connection fails (its `code` kept) or the answer is not JSON.
 */
export function call(url: string, key: string, method: string, path: string, body?: unknown, again = true): Promise<any> {
  const u = new URL(url);
  const data = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: u.hostname, port: u.port, method, path, agent: keepAlive,
      headers: { authorization: `Bearer ${key}`, ...(data === undefined ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(data) }) },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
        } catch (e) {
          reject(e);
        }
      });
      res.on("error", reject);
    });
    req.on("error", (e: NodeJS.ErrnoException) => {
      if (again && req.reusedSocket && e.code === "ECONNRESET") resolve(call(url, key, method, path, body, false));
      else reject(e);
    });
    req.end(data);
  });
}

/** Stops a hub process with `signal` and waits until it has exited. */
export async function stopHub(h: HubProcess, signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
  if (h.child.exitCode !== null || h.child.signalCode !== null) return;
  const exited = new Promise((r) => h.child.once("exit", r));
  h.child.kill(signal);
  await exited;
}

/** "2 × <cpu model>, 24 GiB, Node v20…": the machine the figures come from. */
export function machine(): string {
  return `${cpus().length} × ${cpus()[0]?.model}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

/** Open descriptors of a process (Linux /proc). */
export function openFds(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/**
 * The slow-body attack of issue 14 from this process: `n` connections without a key, a quarter each sending a card
 * link's headers, a webhook's headers, half a request line, or nothing; every one then sends a byte a second.
 * @returns how many of them the hub still holds open, and a stop that closes them all.
 */
export async function slowBodyAttack(url: string, n: number): Promise<{ open(): number; stop(): void }> {
  const u = new URL(url);
  const heads = [
    "POST /c/1/x HTTP/1.1\r\nHost: h\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\nc",
    "POST /v1/in/bench HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{",
    "POST /v1/events HTTP/1.1\r\nHost: h\r\n",
    "",
  ];
  const sockets: { socket: Socket; closed: boolean }[] = [];
  for (let i = 0; i < n; i++) {
    await new Promise<void>((resolve) => {
      const entry = { socket: connect(Number(u.port), u.hostname, () => resolve()), closed: false };
      entry.socket.on("error", () => resolve());
      entry.socket.on("close", () => (entry.closed = true));
      if (heads[i % heads.length]) entry.socket.write(heads[i % heads.length]!);
      sockets.push(entry);
    });
  }
  const dribble = setInterval(() => {
    for (const e of sockets) if (!e.closed) e.socket.write("x");
  }, 1000);
  return {
    open: () => sockets.filter((e) => !e.closed).length,
    stop() {
      clearInterval(dribble);
      for (const e of sockets) e.socket.destroy();
    },
  };
}

/** GET /v1/health on a new connection without a key, as an outside monitor asks; resolves with the time taken in ms. */
export function healthMs(url: string): Promise<number> {
  const t = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.get(`${url}/v1/health`, { agent: false }, (res) => {
      res.resume();
      res.on("end", () => (res.statusCode === 200 ? resolve(performance.now() - t) : reject(new Error(`health: ${res.statusCode}`))));
    });
    req.on("error", reject);
  });
}

/**
 * A new home for a benchmark under the system's temporary folder: its master key, and keys registered for source
 * `bench`, worker `w` and the owner. Rules and config.json are the caller's.
 */
export function benchHome(prefix: string): { dir: string; home: Home; keys: { source: string; worker: string; owner: string } } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const home = homePaths(dir);
  mkdirSync(dir, { recursive: true });
  readMasterKey(home, true);
  const keys = { source: newKey(), worker: newKey(), owner: newKey() };
  registerKeysLocally(home, [
    { kind: "source", name: "bench", key: keys.source }, { kind: "worker", name: "w", key: keys.worker }, { kind: "owner", name: "owner", key: keys.owner },
  ], "en");
  return { dir, home, keys };
}
