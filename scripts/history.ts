/**
 * `npm run history -- 1000 10000 100000` (protocol.md 历史增长实测): how the hub behaves as its history grows.
 *
 * For each count N, a fresh home gets a history of N scenarios written through the real kernel and store
 * (`Store.commit` → `decide` → `evolve` on a real SQLite file, WAL + synchronous=FULL, the hub's group commit of up to
 * 64 inputs). Each scenario is two rounds of one lane: an event → claimed → started → a receipt with a question and a
 * `later` re-check in 30 s → the card offered, delivered and answered → the re-check comes due and joins the queued
 * round → claimed → started → done with usage. The whole history lies within the last days before now, so every round
 * counts towards "this week" (the worst case for the spending summary).
 *
 * Then a real hub process (`serve`, hub alone) is started on that database and measured over real HTTP on 127.0.0.1:
 * - normal start: spawn → "listening on", median of 5 starts after a clean stop (SIGTERM); idle RSS 1.5 s after each
 *   start, median
 * - claim: `GET /v1/work` for a queued run, median of 30 (each run then finished with `POST …/result`)
 * - state summary: `GET /v1/state` (what `status` reads), median of 30
 * - rebuild: the stored format fingerprint is made stale (as after an upgrade), so the next start replays the
 *   whole log into a new projection: spawn → listening, and the process's peak RSS (VmHWM) after it
 * - crash recovery: SIGKILL while 8 clients post events, then spawn → listening, median of 3
 * No GC is forced; nothing is sampled selectively. Prints a markdown table and the machine. HISTORY_KEEP=1 keeps
 * the homes (their paths are printed) to look into afterwards.
 */
import { mkdtempSync, rmSync, mkdirSync, writeFileSync, statSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { homePaths, newKey, readMasterKey, writeFileAtomic, type Home } from "../src/host/home.js";
import { registerKeysLocally } from "../src/host/serve.js";
import { readRulesInput } from "../src/host/hub.js";
import { Store } from "../src/host/store.js";
import { hashKey } from "../src/kernel/credentials.js";
import { ruleStartsWindowMs } from "../src/kernel/limits.js";
import { dueKeys } from "../src/kernel/decide.js";
import type { Env, Input } from "../src/kernel/types.js";
import { spawnHub, type HubProcess } from "../sim/hub-process.js";
import { removeScratchRoots, scratchRoot } from "../sim/children.js";
import { call, machine, median, statusMb, stopHub } from "./measure.js";

/** Inputs committed together while building (the hub commits up to 512; 64 scenarios move in step). */
const buildBatch = 64;
/** Repetitions of each HTTP measurement (protocol.md 历史增长实测: 30, median). */
const repeats = 30;

interface Keys { source: string; worker: string; channel: string; owner: string }

const rules = {
  timezone: "UTC",
  sources: { gh: { name: "GitHub" } },
  agents: { fixer: { name: "Fixer", worker: "w", use: "command", command: ["true"] } },
  channels: { ch: { name: "Cards" } },
  rules: [{ name: "issues", when: { source: "gh", types: ["issues.*"] }, to: "fixer", parallel: 100, resume: true, cwd: "/tmp", prompt: "Fix the issue." }],
};

function setup(): { dir: string; home: Home; keys: Keys } {
  const dir = mkdtempSync(join(tmpdir(), "aa-history-"));
  const home = homePaths(dir);
  mkdirSync(dir, { recursive: true });
  readMasterKey(home, true);
  const keys: Keys = { source: newKey(), worker: newKey(), channel: newKey(), owner: newKey() };
  registerKeysLocally(home, [
    { kind: "source", name: "gh", key: keys.source }, { kind: "worker", name: "w", key: keys.worker },
    { kind: "channel", name: "ch", key: keys.channel }, { kind: "owner", name: "owner", key: keys.owner },
  ], "en");
  writeFileSync(home.rules, JSON.stringify(rules, null, 2));
  writeFileAtomic(home.config, JSON.stringify({ listen: "127.0.0.1:0", publicUrl: null, owner: keys.owner, worker: null, channels: {} }));
  return { dir, home, keys };
}

/**
 * Writes `scenarios` scenarios through the real store, ending just before the real clock's now.
 * @returns the number of facts in the log and how long building took (ms).
 * @throws Error when any input is refused (the history would not be what it claims to be).
 */
function build(home: Home, keys: Keys, scenarios: number): { facts: number; ms: number } {
  const t0 = performance.now();
  const master = readMasterKey(home);
  const env: Env = { master, lang: "en", publicUrl: null };
  const store = new Store({ path: home.database, master });
  const h = { source: hashKey(keys.source), worker: hashKey(keys.worker), channel: hashKey(keys.channel), owner: hashKey(keys.owner) };
  // One batch of 64 scenarios takes ~45 s of simulated time, and a minute passes between batches: a rule starts at most
  // ruleStartsPerWindowMax runs a minute before it pauses (issue 26), which a history of real use never reaches. The
  // history ends 10 minutes before now.
  const batches = Math.ceil(scenarios / buildBatch);
  let now = Date.now() - 10 * 60_000 - batches * (45_000 + ruleStartsWindowMs);
  const commit = (inputs: Input[]) => {
    now += 1000;
    const out = store.commit(inputs.map((input) => ({ input, now })), env);
    for (const [i, d] of out.entries()) if (d.status !== 200) throw new Error(`${inputs[i]!.kind} answered ${d.status}: ${JSON.stringify(d.body)}`);
    return out.map((d) => d.body as any);
  };
  const rules = readRulesInput(home.rules, "en");
  commit([rules]);
  let claimSeq = 0;
  /** Claims as many runs as are queued (one input each), starts them and hands in `result`. */
  const round = (n: number, result: (now: number) => unknown) => {
    const jobs = commit(Array.from({ length: n }, () => ({ kind: "work", keyHash: h.worker, claim: `c${++claimSeq}`, running: [], capacity: n }) as Input))
      .map((b) => b.job as { run: number; token: string } | null);
    if (jobs.some((j) => j === null)) throw new Error("a queued run was not claimable");
    commit(jobs.map((j) => ({ kind: "started", run: j!.run, token: j!.token, session: `session-${j!.run}`, link: null })));
    commit(jobs.map((j) => ({ kind: "result", run: j!.run, token: j!.token, result: result(now) as never, hash: `r${j!.run}` })));
  };
  for (let b = 0, done = 0; done < scenarios; b++) {
    const n = Math.min(buildBatch, scenarios - done);
    now += ruleStartsWindowMs;
    commit(Array.from({ length: n }, (_, i) => ({ kind: "event", keyHash: h.source, event: { id: `issues:${done + i}:opened`, type: "issues.opened", subject: `#${done + i}`, summary: "Crash on start" } }) as Input));
    round(n, (t) => ({
      outcome: "done", summary: "Needs a decision",
      ask: [{ title: "Which fix?", text: "Two ways to fix it.", options: ["Patch", "Rewrite"], recommend: 0 }],
      later: [{ key: "recheck", at: new Date(t + 30_000).toISOString(), about: "check the fix again" }],
      usage: { input: 1200, output: 300, cost: 0.012 },
    }));
    // The channel takes every card version waiting for it (new questions, and updates of earlier ones).
    for (;;) {
      const offered = commit(Array.from({ length: n }, () => ({ kind: "cardsNext", keyHash: h.channel }) as Input))
        .map((body) => body.card as { id: number; version: number } | null).filter((c) => c !== null);
      if (offered.length === 0) break;
      commit(offered.map((c) => ({ kind: "delivered", keyHash: h.channel, card: c!.id, version: c!.version, ref: `m${c!.id}` })));
    }
    const open = store.view.where("cards", "state = 'open' ORDER BY key").map((x) => x.row.id);
    commit(open.map((card) => ({ kind: "answer", keyHash: h.owner, card, choice: 0, text: null, by: null, ref: null })));
    now += 31_000;
    commit(dueKeys(store.view, now + 1000, Number.MAX_SAFE_INTEGER).map((due) => ({ kind: "tick", due }) as Input)); // commit adds the 1 s
    round(n, () => ({ outcome: "done", summary: "Patched", usage: { input: 2000, output: 500, cost: 0.02 } }));
    done += n;
  }
  const facts = store.seq;
  store.close();
  return { facts, ms: performance.now() - t0 };
}

/** Starts the hub, with the idle RSS 1.5 s after it listens. */
async function start(dir: string): Promise<{ hub: HubProcess; rss: number }> {
  const hub = await spawnHub(dir);
  await new Promise((r) => setTimeout(r, 1500));
  return { hub, rss: statusMb(hub.child.pid!) };
}

interface Row {
  scenarios: number; rounds: number; facts: number; dbMb: number; buildS: number;
  startMs: number; idleMb: number; claimMs: number; stateMs: number; rebuildMs: number; rebuildPeakMb: number; crashMs: number;
}

/** Measures one history size over real HTTP. */
/**
 * A start that replays the whole log: the stored format fingerprint is made stale (as after an upgrade), then the hub
 * starts. @returns spawn → listening (ms) and the process's peak RSS (VmHWM, MB) once it listens.
 */
async function rebuildStart(dir: string, home: Home): Promise<{ ms: number; peakMb: number }> {
  const db = new Database(home.database);
  db.prepare(`UPDATE store_meta SET value = 'stale' WHERE key = 'fingerprint'`).run();
  db.close();
  const rebuilt = await spawnHub(dir);
  const peakMb = statusMb(rebuilt.child.pid!, "VmHWM");
  await stopHub(rebuilt, "SIGTERM");
  return { ms: rebuilt.startMs, peakMb };
}

/** Facts a scenario writes (12.0 at 100,000 scenarios: docs/measurements.md). */
const factsPerScenario = 12;

/**
 * The rebuild of issue 32's table (`npm run benchmark -- --json`): a history of about `facts` facts built as above,
 * then a start that replays all of it. @returns the facts written, the rebuild's seconds and its peak RSS (MB).
 */
export async function measureRebuild(facts: number, log: (s: string) => void): Promise<{ facts: number; seconds: number; peakMb: number; scrapeMs: number }> {
  const { dir, home, keys } = setup();
  try {
    log(`rebuild: building about ${facts} facts…`);
    const built = build(home, keys, Math.max(1, Math.round(facts / factsPerScenario)));
    const r = await rebuildStart(dir, home);
    // GET /metrics reads the projection at each scrape: how long one takes on this history (median of 5, after the first).
    const h = await spawnHub(dir);
    const scrapes: number[] = [];
    try {
      for (let i = 0; i < 6; i++) {
        const t = performance.now();
        const res = await fetch(`${h.url}/metrics`, { headers: { authorization: `Bearer ${keys.owner}` } });
        if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}`);
        await res.text();
        if (i > 0) scrapes.push(performance.now() - t);
      }
    } finally {
      await stopHub(h, "SIGTERM");
    }
    return { facts: built.facts, seconds: r.ms / 1000, peakMb: r.peakMb, scrapeMs: median(scrapes) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measure(scenarios: number, log: (s: string) => void): Promise<Row> {
  const { dir, home, keys } = setup();
  try {
    log(`building ${scenarios} scenarios…`);
    const built = build(home, keys, scenarios);
    log(`built ${built.facts} facts in ${(built.ms / 1000).toFixed(1)} s; measuring…`);
    const dbMb = (statSync(home.database).size + (statSync(`${home.database}-wal`, { throwIfNoEntry: false })?.size ?? 0)) / 2 ** 20;
    // Normal start and idle RSS: 5 starts, each after a clean stop.
    const starts: number[] = [];
    const rss: number[] = [];
    let h!: HubProcess;
    for (let i = 0; i < 5; i++) {
      const s = await start(dir);
      h = s.hub;
      starts.push(h.startMs);
      rss.push(s.rss);
      if (i < 4) await stopHub(h, "SIGTERM");
    }
    // Claims: 30 queued runs in new lanes, each claimed and finished.
    for (let i = 0; i < repeats; i++) await call(h.url, keys.source, "POST", "/v1/events", { id: `m${i}`, type: "issues.opened", subject: `m${i}` });
    const claims: number[] = [];
    for (let i = 0; i < repeats; i++) {
      const t = performance.now();
      const w = await call(h.url, keys.worker, "GET", `/v1/work?claim=m${i}&capacity=1`);
      claims.push(performance.now() - t);
      if (!w.job) throw new Error(`claim ${i} found no job: ${JSON.stringify(w)}`);
      await call(h.url, w.job.token, "POST", `/v1/runs/${w.job.run}/result`, { outcome: "nothing" });
    }
    const states: number[] = [];
    for (let i = 0; i < repeats; i++) {
      const t = performance.now();
      const s = await call(h.url, keys.owner, "GET", "/v1/state");
      states.push(performance.now() - t);
      if (typeof s.seq !== "number") throw new Error(`GET /v1/state: ${JSON.stringify(s).slice(0, 200)}`);
    }
    await stopHub(h, "SIGTERM");
    const { ms: rebuildMs, peakMb: rebuildPeakMb } = await rebuildStart(dir, home);
    // Crash recovery: SIGKILL under write load, then a start.
    const crashes: number[] = [];
    for (let k = 0; k < 3; k++) {
      const victim = await spawnHub(dir);
      let stop = false;
      let n = 0;
      const clients = Array.from({ length: 8 }, async () => {
        while (!stop) {
          try {
            await call(victim.url, keys.source, "POST", "/v1/events", { id: `crash${k}-${n++}`, type: "other.x" });
          } catch {
            return;
          }
        }
      });
      await new Promise((r) => setTimeout(r, 300));
      await stopHub(victim, "SIGKILL");
      stop = true;
      await Promise.all(clients);
      const back = await spawnHub(dir);
      crashes.push(back.startMs);
      await stopHub(back, "SIGTERM");
    }
    return {
      scenarios, rounds: 2 * scenarios, facts: built.facts, dbMb, buildS: built.ms / 1000,
      startMs: median(starts), idleMb: median(rss), claimMs: median(claims), stateMs: median(states),
      rebuildMs, rebuildPeakMb, crashMs: median(crashes),
    };
  } finally {
    if (process.env.HISTORY_KEEP) log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

const fmt = (x: number, digits = 0) => x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });

async function main(): Promise<void> {
  const sizes = process.argv.slice(2).map(Number).filter((n) => Number.isInteger(n) && n > 0);
  if (sizes.length === 0) sizes.push(1000, 10_000, 100_000);
  const log = (s: string) => process.stderr.write(`${s}\n`);
  const rows: Row[] = [];
  const loadBefore = loadavg()[0]!;
  // Every home and hub of this run lives in one folder that an interruption removes with them (issue 33).
  if (!process.env.HISTORY_KEEP) scratchRoot("aa-history-run-");
  for (const n of sizes) rows.push(await measure(n, log));
  console.log(`machine: ${machine()}; ${new Date().toISOString().slice(0, 10)}; load average ${loadBefore.toFixed(1)} before, ${loadavg()[0]!.toFixed(1)} after`);
  console.log("");
  console.log("| scenarios | rounds | facts | database | normal start | idle RSS | claim (median) | state summary (median) | rebuild (start with full replay) | rebuild peak RSS | crash recovery (start after SIGKILL) |");
  console.log("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const r of rows) {
    console.log(`| ${fmt(r.scenarios)} | ${fmt(r.rounds)} | ${fmt(r.facts)} | ${fmt(r.dbMb)} MB | ${fmt(r.startMs)} ms | ${fmt(r.idleMb, 1)} MB | ${fmt(r.claimMs, 2)} ms | ${fmt(r.stateMs, 1)} ms | ${fmt(r.rebuildMs / 1000, 1)} s | ${fmt(r.rebuildPeakMb)} MB | ${fmt(r.crashMs)} ms |`);
  }
  console.log("");
  console.log(`building the histories took ${rows.map((r) => `${fmt(r.buildS, 1)} s`).join(", ")} (real kernel and store, group commits of ${buildBatch}).`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    await main();
  } finally {
    removeScratchRoots();
  }
}
