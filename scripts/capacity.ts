/** What a capacity worker prints on SIGTERM (scripts/capacity-worker.mjs). */
interface WorkerReport { runs: number; failed: number; failedBy: Record<string, number>; resultMs: number[] }

/**
 * The capacity of one hub (issue 32), measured: `workers` remote worker processes (scripts/capacity-worker.mjs, each
 * its own process on the loopback) long-poll with `capacity` slots each and run every job through a command agent
 * (`true`, a real child process), while this script posts events at a steady rate — 10,000 runs an hour compressed
 * `compression` times — for `seconds`. Reports p50/p99 of an event's POST (measured here), of a result's POST
 * (measured by the workers) and of a claim (the hub's own `autoloop_claim_seconds` histogram from GET /metrics: a
 * claim's decision to its durable answer, which a client cannot tell apart from the time its long poll was held), the
 * hub's CPU (share of one core over the run) and its peak RSS, the workers' memory, and the requests that failed.
 * All workers share one worker name and key, as replicas of one worker would.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import parse from "parse-prometheus-text-format";
import { newKey, writeFileAtomic } from "../src/host/home.js";
import { registerKeysLocally } from "../src/host/serve.js";
import { ruleStartsPerMinuteFieldMax } from "../src/kernel/limits.js";
import { spawnHub } from "../sim/hub-process.js";
import { endWithScript } from "../sim/children.js";
import { benchHome, call, cpuMs, median, pct, statusMb, stopHub } from "./measure.js";

/** What the capacity run measured (times in ms). */
export interface CapacityReport {
  workers: number; capacity: number; seconds: number; runsPerHour: number; events: number; runsDone: number; failed: number;
  /** The failed requests by `<request> <status>` (0: no answer) or an event's refusal text. */
  failedBy: Record<string, number>;
  event: { p50: number; p99: number }; result: { p50: number; p99: number }; claim: { p50: number; p99: number };
  hubCpuPercent: number; hubPeakRssMb: number; workersRssMb: number; queuedAtEnd: number;
}

/** The q-quantile (0..1) of a Prometheus histogram's cumulative buckets, interpolated inside a bucket as histogram_quantile does. */
export function histogramQuantile(buckets: Record<string, string>, q: number): number {
  const bs = Object.entries(buckets).map(([le, n]) => [le === "+Inf" ? Infinity : Number(le), Number(n)] as const).sort((a, b) => a[0] - b[0]);
  const total = bs.at(-1)?.[1] ?? 0;
  if (total === 0) return NaN;
  const rank = q * total;
  let [lowerLe, lowerN] = [0, 0];
  for (const [le, n] of bs) {
    if (n >= rank) return le === Infinity ? lowerLe : lowerLe + ((le - lowerLe) * (rank - lowerN)) / Math.max(1, n - lowerN);
    [lowerLe, lowerN] = [le, n];
  }
  return lowerLe;
}

/** Runs the capacity case; `log` gets progress lines. */
export async function capacityRun(o: { workers: number; capacity: number; seconds: number; compression: number }, log: (s: string) => void): Promise<CapacityReport> {
  const runsPerHour = 10_000;
  const rate = (runsPerHour * o.compression) / 3600;
  const { dir, home, keys } = benchHome("aa-capacity-");
  const metricsKey = newKey();
  registerKeysLocally(home, [{ kind: "metrics", name: "prometheus", key: metricsKey }], "en");
  writeFileSync(home.rules, JSON.stringify({
    timezone: "UTC", sources: { bench: {} }, agents: { cmd: { worker: "w", use: "command", command: ["true"] } },
    rules: [{ name: "load", when: { source: "bench", types: ["job.*"] }, to: "cmd", parallel: 1000, startsPerMinute: ruleStartsPerMinuteFieldMax, cwd: "/tmp", prompt: "Run." }],
  }));
  writeFileAtomic(home.config, JSON.stringify({ listen: "127.0.0.1:0", publicUrl: null, owner: keys.owner, worker: null, channels: {} }));
  const hub = await spawnHub(dir);
  const workers: ChildProcess[] = [];
  /** Each worker's report, read from its first byte to the close of its stdout (a worker that ends early too). */
  const reported: Promise<WorkerReport>[] = [];
  try {
    const script = join(import.meta.dirname, "capacity-worker.mjs");
    for (let i = 0; i < o.workers; i++) {
      const w = endWithScript(spawn(process.execPath, [script, hub.url, keys.worker, `w${i}`, String(o.capacity)], { stdio: ["ignore", "pipe", "inherit"] }));
      workers.push(w);
      reported.push(new Promise((resolve) => {
        let out = "";
        w.stdout!.on("data", (d: Buffer) => (out += d));
        // "close", not "exit": a process's stdout may still hold its report when it has exited (Node's documentation of
        // 'exit'); one of 200 workers read at "exit" once counted as a failure, "no report", with its report unread.
        w.once("close", () => resolve(out.trim() ? JSON.parse(out.trim().split("\n").pop()!) : { runs: 0, failed: 1, failedBy: { "no report": 1 }, resultMs: [] }));
      }));
    }
    await new Promise((r) => setTimeout(r, Math.min(10_000, 500 + o.workers * 20))); // the workers start and hold their polls
    log(`capacity: ${o.workers} workers × ${o.capacity}, ${rate.toFixed(1)} events/s for ${o.seconds} s`);
    const cpu0 = cpuMs(hub.child.pid!);
    const t0 = performance.now();
    const eventMs: number[] = [];
    let failed = 0;
    const failedBy: Record<string, number> = {};
    const fail = (what: string) => {
      failed += 1;
      failedBy[what] = (failedBy[what] ?? 0) + 1;
    };
    let sent = 0;
    const inFlight = new Set<Promise<void>>();
    // Open loop: each event leaves at its time whatever the answers before it did, as independent sources would send.
    while (performance.now() - t0 < o.seconds * 1000) {
      const due = Math.floor(((performance.now() - t0) / 1000) * rate);
      for (; sent < due; sent++) {
        const ts = performance.now();
        const p = call(hub.url, keys.source, "POST", "/v1/events", { id: `e${sent}`, type: "job.x", subject: `s${sent}` })
          .then((b) => { if (typeof b?.event === "number") eventMs.push(performance.now() - ts); else fail(`event ${String(b?.error).slice(0, 60)}`); }, (e: NodeJS.ErrnoException) => fail(`event 0 ${e.code ?? e.message}`))
          .finally(() => inFlight.delete(p));
        inFlight.add(p);
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    await Promise.all(inFlight);
    // Let the runs in hand finish (at most a quarter of the run, 30 s at most), then read the hub's figures before the workers stop.
    const deadline = performance.now() + Math.min(30_000, (o.seconds * 1000) / 4);
    let queued = 0;
    const scrape = async () => parse(await (await fetch(`${hub.url}/metrics`, { headers: { authorization: `Bearer ${metricsKey}` } })).text());
    for (;;) {
      const runs = (await scrape()).find((m) => m.name === "autoloop_runs")!.metrics;
      queued = runs.filter((r) => ["queued", "claimed", "running"].includes(r.labels!.state!)).reduce((n, r) => n + Number(r.value), 0);
      if (queued === 0 || performance.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const elapsed = performance.now() - t0;
    const hubCpuPercent = (100 * (cpuMs(hub.child.pid!) - cpu0)) / elapsed;
    const hubPeakRssMb = statusMb(hub.child.pid!, "VmHWM");
    const workersRssMb = workers.reduce((s, w) => s + (w.exitCode === null ? statusMb(w.pid!) : 0), 0);
    const claim = (await scrape()).find((m) => m.name === "autoloop_claim_seconds")!.metrics[0]!.buckets!;
    for (const w of workers) w.kill("SIGTERM");
    const reports = await Promise.all(reported);
    const resultMs = reports.flatMap((r) => r.resultMs);
    for (const r of reports) for (const [k, n] of Object.entries(r.failedBy)) failedBy[k] = (failedBy[k] ?? 0) + n;
    const q = (xs: number[]) => ({ p50: xs.length ? median(xs) : NaN, p99: xs.length ? pct(xs, 0.99) : NaN });
    return {
      workers: o.workers, capacity: o.capacity, seconds: o.seconds, runsPerHour: (3600 * reports.reduce((s, r) => s + r.runs, 0)) / (elapsed / 1000),
      events: sent, runsDone: reports.reduce((s, r) => s + r.runs, 0), failed: failed + reports.reduce((s, r) => s + r.failed, 0), failedBy,
      event: q(eventMs), result: q(resultMs), claim: { p50: histogramQuantile(claim, 0.5) * 1000, p99: histogramQuantile(claim, 0.99) * 1000 },
      hubCpuPercent, hubPeakRssMb, workersRssMb, queuedAtEnd: queued,
    };
  } finally {
    for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill("SIGKILL");
    await stopHub(hub);
    rmSync(dir, { recursive: true, force: true });
  }
}
