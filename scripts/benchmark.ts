/**
 * `npm run benchmark`: measures a real hub process over real HTTP on this machine and prints the figures
 * (protocol.md 结构与实测). Nothing is asserted; no GC is forced; medians of repeated runs.
 *
 * - cold start: from spawning `serve` to its "listening on" line (median of 5)
 * - idle RSS, and RSS with 1,000 held long polls
 * - durable events/s: one client, one request at a time, each committed (WAL + FULL) before its answer;
 *   and 32 concurrent clients (group commit)
 * - claim latency p50/p99 (claim + result of a queued run)
 * - with BENCH_QUEUE (default 5,000) queued runs and a ~4.4 KB rules file: blocked-heartbeat p50/p99, CPU per
 *   heartbeat, facts written meanwhile
 * - idle CPU over 30 s of a hub whose 10 cards wait for channels that do not poll and 10 for a webhook that fails
 *   (`npm run benchmark -- idle` measures only this)
 * - under the slow-body attack of issue 14 (2,000 connections without a key, a byte a second, beside the 1,000 held
 *   long polls): GET /v1/health p50/p99 on new connections, claim latency, connections still held, RSS, descriptors
 * - simulation steps/s
 * - the hub's event-loop delay while its in-process worker watches an agent printing 100 MB (scripts/output-watch.ts)
 * - CLI start: `agent-autoloop --help` against a bare `node -e 0`, medians of 21 runs taken in turns (issue 15's goal:
 *   within 1.5×); `npm run benchmark -- cli` measures only this
 * - the owner console (scripts/console-benchmark.ts): first load with 1,000 open cards and 10,000 runs (bytes, time
 *   to the Needs-you list) and the hub's RSS with 20 console tabs on the stream; `npm run benchmark -- console`
 * - tool calls (issue 16; scripts/tool-calls.ts): one sync call as a bare `node main.js` round trip, through the tool
 *   host and through an agent's MCP bridge, with and without the sandbox; `npm run benchmark -- tools` measures only this
 * - declarative plugins (scripts/plugin-reload.ts): a hub with 100 plugins × 20 assets — start, RSS, a full and an
 *   unchanged reload, GET /v1/health while a reload runs; `npm run benchmark -- plugins` measures only this
 * - Markdown (scripts/markdown-benchmark.ts): a template's longest Markdown as link page HTML and as chat text, prose
 *   and hostile lines; `npm run benchmark -- markdown` measures only this
 */
import { mkdtempSync, rmSync, mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { spawnSync } from "node:child_process";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { homePaths, newKey, readMasterKey, writeFileAtomic } from "../src/host/home.js";
import { ruleStartsPerMinuteFieldMax } from "../src/kernel/limits.js";
import { registerKeysLocally } from "../src/host/serve.js";
import { simulate } from "../sim/simulation.js";
import { spawnHub } from "../sim/hub-process.js";
import { removeScratchRoots, scratchRoot } from "../sim/children.js";
import { call, cpuMs, healthMs, machine, median, openFds, pct, slowBodyAttack, statusMb, stopHub as stop } from "./measure.js";
import { measureOutputWatch } from "./output-watch.js";
import { consoleFigures } from "./console-benchmark.js";
import { measureToolCalls } from "./tool-calls.js";
import { measurePluginReload } from "./plugin-reload.js";
import { measureMarkdown } from "./markdown-benchmark.js";
import { machineLimits } from "./machine-limits.js";
import { measureRebuild } from "./history.js";
import { capacityRun } from "./capacity.js";
import { figure, figureNames, type Figure, type FigureName } from "./figures.js";
import { instructionCounts, instructionPaths } from "./instructions.js";

const queueDepth = Number(process.env.BENCH_QUEUE ?? 5000);
/** The idle measurement: how long, and how many cards wait for each kind of channel that never delivers. */
const idleMeasureMs = 30_000;
const idleCardsPerChannel = Number(process.env.BENCH_IDLE_CARDS ?? 10);

function rules(): string {
  // ~4.4 KB of rules: 24 rules over 3 sources, one of them the benchmark's.
  const r = {
    timezone: "UTC",
    askFirst: ["delete data", "stop a service", "spend money", "message people outside"],
    sources: { bench: { name: "Bench" }, shop: { name: "Shop" }, crm: { name: "CRM" } },
    agents: { a: { name: "Agent A", worker: "w", use: "command", command: ["true"] }, b: { name: "Agent B", worker: "other", use: "command", command: ["true"] } },
    channels: { ch: { name: "Channel", answerers: ["alice", "bob"] } },
    rules: [
      // Thousands of events a minute on purpose: its own start limit (issue 26's default of 100 would pause it).
      { name: "bench", when: { source: "bench", types: ["job.*"] }, to: "a", parallel: 1000, startsPerMinute: ruleStartsPerMinuteFieldMax, cwd: "/tmp", prompt: "Do the benchmark job." },
      ...Array.from({ length: 23 }, (_, i) => ({
        name: `rule-${i}`, when: { source: i % 2 ? "shop" : "crm", types: [`type${i}.*`, `other${i}.*`] }, to: "b", cwd: "~/code/project",
        prompt: "Handle the event as described in the section of the skill for this kind of event.", skill: "ops", group: `g${i % 5}`,
      })),
    ],
  };
  return JSON.stringify(r, null, 2);
}

function setup(): { dir: string; keys: { source: string; worker: string; owner: string; channel: string } } {
  const dir = mkdtempSync(join(tmpdir(), "aa-bench-"));
  const home = homePaths(dir);
  mkdirSync(dir, { recursive: true });
  readMasterKey(home, true);
  const keys = { source: newKey(), worker: newKey(), owner: newKey(), channel: newKey() };
  registerKeysLocally(home, [
    { kind: "source", name: "bench", key: keys.source }, { kind: "worker", name: "w", key: keys.worker },
    { kind: "owner", name: "owner", key: keys.owner }, { kind: "channel", name: "ch", key: keys.channel },
  ], "en");
  writeFileSync(home.rules, rules());
  writeFileAtomic(home.config, JSON.stringify({ listen: "127.0.0.1:0", publicUrl: null, owner: keys.owner, worker: null, channels: {} }));
  return { dir, keys };
}

const say = (k: string, v: string) => console.log(`${k.padEnd(58)} ${v}`);

/**
 * Idle CPU of a hub process (issue 14): 10 open cards for a channel declared in rules.json that nothing runs (silent)
 * and 10 for a webhook channel run by `serve` whose URL answers 500 (failing), then 30 s with no request from outside.
 */
async function idleWithUndeliveredCards(): Promise<void> {
  const failing = createServer((_req, res) => res.writeHead(500).end("down"));
  await new Promise<void>((r) => failing.listen(0, "127.0.0.1", r));
  const dir = mkdtempSync(join(tmpdir(), "aa-bench-idle-"));
  try {
    const home = homePaths(dir);
    readMasterKey(home, true);
    const keys = { source: newKey(), worker: newKey(), hook: newKey() };
    registerKeysLocally(home, [
      { kind: "source", name: "bench", key: keys.source }, { kind: "worker", name: "w", key: keys.worker }, { kind: "channel", name: "hook", key: keys.hook },
    ], "en");
    const rule = (name: string) => ({ name, when: { source: "bench", types: [`${name}.*`] }, to: "a", parallel: Math.max(1, idleCardsPerChannel), channels: [name] });
    writeFileSync(home.rules, JSON.stringify({
      timezone: "UTC", sources: { bench: {} }, agents: { a: { worker: "w", use: "command", command: ["true"] } },
      channels: { silent: {}, hook: {} }, rules: [rule("silent"), rule("hook")],
    }));
    const url = `http://127.0.0.1:${(failing.address() as { port: number }).port}/hook`;
    writeFileAtomic(home.config, JSON.stringify({
      listen: "127.0.0.1:0", publicUrl: null, owner: newKey(), worker: null, channels: { hook: { use: "webhook", key: keys.hook, url, platform: "slack" } },
    }));
    const hub = await spawnHub(dir);
    try {
      for (const name of ["silent", "hook"]) {
        for (let i = 0; i < idleCardsPerChannel; i++) {
          await call(hub.url, keys.source, "POST", "/v1/events", { id: `${name}${i}`, type: `${name}.x`, subject: `${name}${i}` });
          const { job } = await call(hub.url, keys.worker, "GET", `/v1/work?claim=${name}${i}&capacity=1`);
          await call(hub.url, job.token, "POST", `/v1/runs/${job.run}/result`, { outcome: "done", ask: [{ title: `Q ${name} ${i}`, options: ["a", "b"] }] });
        }
      }
      await new Promise((r) => setTimeout(r, 3000)); // the webhook channel tries each card once and reports it failed
      const cpu0 = cpuMs(hub.child.pid!);
      await new Promise((r) => setTimeout(r, idleMeasureMs));
      const used = cpuMs(hub.child.pid!) - cpu0;
      say(`idle CPU over ${idleMeasureMs / 1000} s (${idleCardsPerChannel} cards for a silent channel, ${idleCardsPerChannel} for a failing webhook)`,
        `${((100 * used) / idleMeasureMs).toFixed(2)} % of a core (${used.toFixed(0)} ms)`);
    } finally {
      await stop(hub);
    }
  } finally {
    failing.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * CLI start (issue 15): wall time of `agent-autoloop --help` (the compiled CLI) and of a bare `node -e 0`, each run
 * `cliStartRuns` times in turns so that a busy moment of the machine weighs on both alike; medians and their ratio.
 */
async function cliStart(): Promise<void> {
  const cliStartRuns = 21;
  const bin = join(import.meta.dirname, "..", "bin", "agent-autoloop.js");
  const wallMs = (args: string[]) => {
    const t = performance.now();
    const r = spawnSync(process.execPath, args, { stdio: "ignore", env: { ...process.env, AGENT_AUTOLOOP_LANG: "en" } });
    if (r.status !== 0) throw new Error(`node ${args.join(" ")} exited with ${r.status}`);
    return performance.now() - t;
  };
  const bare: number[] = [];
  const help: number[] = [];
  for (let i = 0; i < cliStartRuns; i++) {
    bare.push(wallMs(["-e", "0"]));
    help.push(wallMs([bin, "--help"]));
  }
  say(`CLI start: agent-autoloop --help / node -e 0, medians of ${cliStartRuns}`,
    `${median(help).toFixed(0)} / ${median(bare).toFixed(0)} ms (${(median(help) / median(bare)).toFixed(2)}×)`);
}

/** Claims `n` queued runs one by one (claim ids `<prefix><i>`) and finishes each; the claim times in ms. */
async function claimLatencies(url: string, workerKey: string, prefix: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const w = await call(url, workerKey, "GET", `/v1/work?claim=${prefix}${i}&capacity=1`);
    out.push(performance.now() - t);
    if (w.job) await call(url, w.job.token, "POST", `/v1/runs/${w.job.run}/result`, { outcome: "nothing" });
  }
  return out;
}

/** How many events and claims the core figures take. */
interface CoreSizes { events1: number; events32: number; claims: number }

/**
 * The figures of a hub process on the benchmark's home: cold start (median of 5), idle RSS, durable events/s from one
 * and from 32 clients, claim latency, and RSS with 1,000 held long polls — which are left held, with the hub running,
 * for what `main` measures next beside them.
 */
async function hubCore(dir: string, keys: ReturnType<typeof setup>["keys"], sizes: CoreSizes) {
  // cold start
  const starts: number[] = [];
  let hub = await spawnHub(dir);
  starts.push(hub.startMs);
  for (let i = 0; i < 4; i++) {
    await stop(hub);
    hub = await spawnHub(dir);
    starts.push(hub.startMs);
  }
  say("cold start (spawn → listening), median of 5", `${median(starts).toFixed(0)} ms`);
  await new Promise((r) => setTimeout(r, 1500));
  const idleRss = statusMb(hub.child.pid!);
  say("idle RSS", `${idleRss.toFixed(1)} MB`);

  // durable events/s, one client
  const n1 = sizes.events1;
  let t0 = performance.now();
  for (let i = 0; i < n1; i++) await call(hub.url, keys.source, "POST", "/v1/events", { id: `s${i}`, type: "other.x" });
  let s = (performance.now() - t0) / 1000;
  const events1 = n1 / s;
  say("events/s, 1 client (each committed before its answer)", `${Math.round(events1)}`);
  // 32 concurrent clients
  const n32 = sizes.events32;
  let next = 0;
  t0 = performance.now();
  await Promise.all(Array.from({ length: 32 }, async () => {
    while (next < n32) await call(hub.url, keys.source, "POST", "/v1/events", { id: `c${next++}`, type: "other.x" });
  }));
  s = (performance.now() - t0) / 1000;
  const events32 = n32 / s;
  say("events/s, 32 concurrent clients (group commit)", `${Math.round(events32)}`);

  // claim latency: queue runs, claim and finish them one by one
  for (let i = 0; i < sizes.claims; i++) await call(hub.url, keys.source, "POST", "/v1/events", { id: `q${i}`, type: "job.x", subject: `s${i}` });
  const claims = await claimLatencies(hub.url, keys.worker, "cl", sizes.claims);
  say("claim latency p50 / p99 (GET /v1/work, a queued run)", `${median(claims).toFixed(2)} / ${pct(claims, 0.99).toFixed(2)} ms`);

  // 1,000 held long polls
  const ac = new AbortController();
  const polls = Array.from({ length: 1000 }, (_, i) => fetch(`${hub.url}/v1/cards/next?wait=50`, { headers: { authorization: `Bearer ${keys.channel}` }, signal: ac.signal }).catch(() => null));
  await new Promise((r) => setTimeout(r, 3000));
  const rss1000 = statusMb(hub.child.pid!);
  say("RSS with 1,000 held long polls", `${rss1000.toFixed(1)} MB`);
  return { hub, ac, polls, startMs: median(starts), idleRss, events1, events32, claimMedian: median(claims), rss1000 };
}

/** The value of a `--name value` argument, or undefined. */
const flag = (name: string) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
};

/**
 * `npm run benchmark -- --json [--quick] [--only <name,name>]` (issue 32): the figures of issue 32's table, each with
 * the machine's limit measured in this run (scripts/machine-limits.ts), printed as lines as they come and then, last on
 * stdout, as one JSON array (scripts/figures.ts). `--quick`: smaller sizes (a quarter of the events, a third of the claims, the rebuild at
 * 110 k facts, a 1-minute capacity run with 20 workers, 5,000 simulation steps); `--only`: just the parts those figures
 * need (no machine limits when none of them has one). `BENCH_SIM_STEPS=<n>` changes the simulation's steps. The hot
 * paths' instruction counts (scripts/instructions.ts, valgrind) against the counts recorded in
 * scripts/instruction-counts.json: always at the same size, so `--quick` takes them only when `--only` names them.
 * @throws Error naming an unknown figure of `--only`, or when valgrind is missing and a count is wanted.
 */
async function jsonRun(): Promise<void> {
  const quick = process.argv.includes("--quick");
  const began = performance.now();
  const part = async <T>(name: string, f: () => Promise<T>) => {
    const t0 = performance.now();
    try {
      return await f();
    } finally {
      say(`(${name} took ${((performance.now() - t0) / 1000).toFixed(0)} s)`, "");
    }
  };
  const only = flag("--only")?.split(",").filter((n) => n !== "");
  for (const n of only ?? []) if (!figureNames.includes(n as FigureName)) throw new Error(`--only: no figure ${n} (figures: ${figureNames.join(", ")})`);
  const wanted = new Set<FigureName>((only as FigureName[] | undefined) ?? figureNames);
  const needs = (names: FigureName[]) => names.some((n) => wanted.has(n));
  const out: Figure[] = [];
  const core: FigureName[] = ["idle-rss", "rss-1000-polls", "start", "claim-median", "events-1-client", "events-32-clients"];
  const rebuild: FigureName[] = ["rebuild-1.1m-seconds", "rebuild-1.1m-rss", "metrics-scrape"];
  const limits = needs([...core, ...rebuild]) ? await part("machine limits", machineLimits) : null;
  if (limits) say("machine limits (scripts/machine-limits.ts)", JSON.stringify(limits));
  if (needs(core)) {
    const { dir, keys } = setup();
    try {
      const h = await part("hub figures", () => hubCore(dir, keys, quick ? { events1: 500, events32: 2000, claims: 100 } : { events1: 2000, events32: 8000, claims: 300 }));
      h.ac.abort();
      await Promise.all(h.polls);
      await stop(h.hub);
      out.push(figure("idle-rss", h.idleRss, limits!.idleRss), figure("rss-1000-polls", h.rss1000, limits!.idleRss + (1000 * limits!.connectionKb) / 1024),
        figure("start", h.startMs, limits!.start), figure("claim-median", h.claimMedian, limits!.roundTripMs),
        figure("events-1-client", h.events1, limits!.commitsPerSecond), figure("events-32-clients", h.events32, limits!.commitsPerSecondConcurrent));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  if (needs(rebuild)) {
    const goalFacts = 1_100_000;
    const r = await part("rebuild", () => measureRebuild(quick ? goalFacts / 10 : goalFacts, (l) => process.stderr.write(`${l}\n`)));
    say(`full rebuild of ${r.facts} facts: seconds / peak RSS`, `${r.seconds.toFixed(1)} s / ${r.peakMb.toFixed(0)} MB`);
    say(`GET /metrics on that history, median of 5`, `${r.scrapeMs.toFixed(1)} ms`);
    out.push(figure("rebuild-1.1m-seconds", r.seconds, r.facts / limits!.insertRowsPerSecond, { scale: goalFacts / r.facts }), figure("rebuild-1.1m-rss", r.peakMb, limits!.idleRss),
      figure("metrics-scrape", r.scrapeMs, null));
  }
  if (needs(["tool-call-bridge"])) {
    const t = await part("tool calls", () => measureToolCalls(say));
    out.push(figure("tool-call-bridge", t.bridgeSandboxed, t.bare));
  }
  if (needs(["sim-steps"])) {
    const steps = Number(process.env.BENCH_SIM_STEPS ?? (quick ? 5000 : 20_000));
    const t0 = performance.now();
    const r = simulate(24301, steps);
    const rate = r.steps / ((performance.now() - t0) / 1000);
    say(`simulation steps/s (seed 24301, ${steps} steps)`, `${Math.round(rate)}`);
    out.push(figure("sim-steps", rate, null));
  }
  const capacity = figureNames.filter((n) => n.startsWith("capacity-"));
  if (needs(capacity)) {
    const c = await part("capacity run", () => capacityRun(quick ? { workers: 20, capacity: 2, seconds: 60, compression: 12 } : { workers: 200, capacity: 2, seconds: 300, compression: 12 }, (l) => say(l, "")));
    say("capacity run", JSON.stringify(c));
    const failed = c.failed > 0 || c.queuedAtEnd > 0;
    out.push(figure("capacity-claim-p99", c.claim.p99, null, { failed }), figure("capacity-claim-p50", c.claim.p50, null, { failed }),
      figure("capacity-event-p50", c.event.p50, null, { failed }), figure("capacity-event-p99", c.event.p99, null, { failed }),
      figure("capacity-result-p50", c.result.p50, null, { failed }), figure("capacity-result-p99", c.result.p99, null, { failed }),
      figure("capacity-runs-per-hour", c.runsPerHour, null, { failed }), figure("capacity-hub-cpu", c.hubCpuPercent, null, { failed }),
      figure("capacity-hub-rss", c.hubPeakRssMb, null, { failed }));
  }
  const counted = figureNames.filter((n) => n.startsWith("instructions-"));
  // Not in --quick unless named in --only: a count is only comparable with the recorded one at the same size, and the
  // eight runs under valgrind take 2–4 minutes, which the quick run's 5 do not hold beside the rest.
  if (quick ? only !== undefined && needs(counted) : needs(counted)) {
    const c = await part("instruction counts", () => instructionCounts());
    say("instructions per input (callgrind, scripts/instructions.ts)", JSON.stringify(c));
    for (const path of instructionPaths) out.push(figure(`instructions-${path}`, c[path], null));
  }
  say("load average (1, 5, 15 min) at the end", loadavg().map((x) => x.toFixed(2)).join(", "));
  say("the whole run took", `${((performance.now() - began) / 1000).toFixed(0)} s`);
  console.log(JSON.stringify(out.filter((f) => wanted.has(f.name as FigureName)).sort((a, b) => figureNames.indexOf(a.name as FigureName) - figureNames.indexOf(b.name as FigureName))));
}

async function main(): Promise<void> {
  console.log(`machine: ${machine()}; load average ${loadavg().map((x) => x.toFixed(2)).join(", ")}`);
  // Every home, hub and agent of this run lives in one folder that an interruption removes with them (issue 33).
  scratchRoot("aa-bench-run-");
  if (process.argv.includes("--json")) return jsonRun();
  if (process.argv[2] === "idle") return idleWithUndeliveredCards();
  if (process.argv[2] === "cli") return cliStart();
  if (process.argv[2] === "console") return consoleFigures(say);
  if (process.argv[2] === "tools") return void (await measureToolCalls(say));
  if (process.argv[2] === "plugins") return measurePluginReload(say);
  if (process.argv[2] === "markdown") return measureMarkdown(say);
  // First, while no hub of this benchmark runs: a process start is what it measures.
  await cliStart();
  const { dir, keys } = setup();
  try {
    const { hub, ac, polls } = await hubCore(dir, keys, { events1: 2000, events32: 8000, claims: 300 });
    const [n1, n32] = [2000, 8000];

    // the slow-body attack of issue 14, beside the held long polls (keyed: never counted against the caps)
    const attack = await slowBodyAttack(hub.url, 2000);
    await new Promise((r) => setTimeout(r, 2000));
    const health: number[] = [];
    for (let i = 0; i < 100; i++) health.push(await healthMs(hub.url));
    say("GET /v1/health p50 / p99 under a slow-body attack of 2,000 connections", `${median(health).toFixed(2)} / ${pct(health, 0.99).toFixed(2)} ms`);
    for (let i = 0; i < 50; i++) await call(hub.url, keys.source, "POST", "/v1/events", { id: `a${i}`, type: "job.x", subject: `a${i}` });
    const attacked = await claimLatencies(hub.url, keys.worker, "at", 50);
    say("claim latency p50 / p99 under that attack", `${median(attacked).toFixed(2)} / ${pct(attacked, 0.99).toFixed(2)} ms`);
    say("attack connections the hub still holds / its descriptors / RSS", `${attack.open()} / ${openFds(hub.child.pid!)} / ${statusMb(hub.child.pid!).toFixed(1)} MB`);
    attack.stop();

    // deep queue: blocked heartbeats
    for (let i = 0; i < queueDepth; i++) await call(hub.url, keys.source, "POST", "/v1/events", { id: `d${i}`, type: "job.deep", subject: `d${i}` });
    const seqBefore = (await call(hub.url, keys.owner, "GET", "/v1/state")).seq;
    const beats: number[] = [];
    const cpu0 = cpuMs(hub.child.pid!);
    const nBeats = 2000;
    for (let i = 0; i < nBeats; i++) {
      const t = performance.now();
      await call(hub.url, keys.worker, "GET", `/v1/work?claim=hb${i}&capacity=0&running=`);
      beats.push(performance.now() - t);
    }
    const cpu = (cpuMs(hub.child.pid!) - cpu0) / nBeats;
    const seqAfter = (await call(hub.url, keys.owner, "GET", "/v1/state")).seq;
    say(`blocked heartbeat p50 / p99 (${nBeats} of them, ${queueDepth} queued runs, ~4.4 KB rules)`, `${median(beats).toFixed(2)} / ${pct(beats, 0.99).toFixed(2)} ms`);
    say("CPU per blocked heartbeat", `${(cpu * 1000).toFixed(0)} µs`);
    say(`facts written during those ${nBeats} heartbeats`, `${seqAfter - seqBefore}`);
    const states: number[] = [];
    for (let i = 0; i < 30; i++) {
      const t = performance.now();
      await call(hub.url, keys.owner, "GET", "/v1/state");
      states.push(performance.now() - t);
    }
    const events = n1 + n32 + 300 + queueDepth;
    say(`state summary (GET /v1/state) median of 30, ${events} events, ${queueDepth} queued runs`, `${median(states).toFixed(1)} ms`);
    ac.abort();
    await Promise.all(polls);
    await stop(hub);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  await idleWithUndeliveredCards();
  const t0 = performance.now();
  const r = simulate(24301, 20_000);
  say("simulation steps/s (seed 24301, 20,000 steps)", `${Math.round(r.steps / ((performance.now() - t0) / 1000))}`);
  await measureOutputWatch(say);
  await consoleFigures(say);
  await measureToolCalls(say);
  await measurePluginReload(say);
  await measureMarkdown(say);
}

try {
  await main();
} finally {
  removeScratchRoots();
}
