/**
 * What `npm run benchmark` and `npm run history` share: order statistics, a process's memory and CPU from /proc
 * (Linux), one JSON call over real HTTP, stopping a hub process, and the machine line printed above the figures.
 */
import { readFileSync } from "node:fs";
import http from "node:http";
import { cpus, totalmem } from "node:os";
import type { HubProcess } from "../sim/hub-process.js";

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
 * parsed JSON answer.
 * @throws Error when the connection fails or the answer is not JSON.
 */
export function call(url: string, key: string, method: string, path: string, body?: unknown): Promise<any> {
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
    req.on("error", reject);
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
