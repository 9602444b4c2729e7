/**
 * What `npm run benchmark` and `npm run history` share: order statistics, a process's memory and CPU from /proc
 * (Linux), one JSON call over real HTTP, stopping a hub process, and the machine line printed above the figures.
 */
import { readFileSync } from "node:fs";
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

/** One request with a bearer key and an optional JSON body; resolves with the parsed JSON answer. */
export async function call(url: string, key: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(url + path, {
    method, headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return res.json();
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
