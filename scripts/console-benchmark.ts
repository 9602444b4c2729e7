/**
 * The owner console's figures for `npm run benchmark` (issue 17; `npm run benchmark -- console` measures only these):
 * a real hub process with 1,000 open question cards and 10,000 ended runs, made through /v1; then headless Debian
 * Chromium signs in with the printed link and measures the first load — bytes the hub sent (the console's files and
 * `/v1/state`) and the time from opening the link to the Needs-you list showing all 1,000 cards — and the hub's RSS
 * with 20 consoles holding `/v1/stream` (20 browsers: the tabs of one browser share one stream). Skipped, saying why, where Chromium is missing.
 */
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { writeFileAtomic } from "../src/host/home.js";
import { ruleStartsPerMinuteFieldMax } from "../src/kernel/limits.js";
import { spawnHub } from "../sim/hub-process.js";
import { benchHome, call, statusMb, stopHub } from "./measure.js";
import { chromiumPath, launch } from "../tests/console-kit.js";

const cards = Number(process.env.BENCH_CONSOLE_CARDS ?? 1000);
const runs = Number(process.env.BENCH_CONSOLE_RUNS ?? 10_000);
const tabs = 20;
/** Requests under way at once while filling the hub. */
const fillClients = 16;

/** Runs `n` tasks, `fillClients` at a time. */
async function inParallel(n: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: fillClients }, async () => {
    while (next < n) await task(next++);
  }));
}

/** Measures the console and prints each figure with `say`. */
export async function consoleFigures(say: (k: string, v: string) => void): Promise<void> {
  if (!existsSync(chromiumPath)) {
    say("console figures", `skipped: ${chromiumPath} is missing (apt-get install chromium)`);
    return;
  }
  const { dir, home, keys } = benchHome("aa-bench-console-");
  writeFileSync(home.rules, JSON.stringify({
    timezone: "UTC",
    sources: { bench: { name: "Bench" } },
    agents: { a: { worker: "w", use: "command", command: ["true"] } },
    // 10,000 runs as fast as the hub takes them: its own start limit (issue 26's default of 100 would pause it).
    rules: [{ name: "bench", when: { source: "bench", types: ["job.*"] }, to: "a", parallel: 100_000, startsPerMinute: ruleStartsPerMinuteFieldMax, cwd: "/tmp", prompt: "Do it." }],
  }));
  writeFileAtomic(home.config, JSON.stringify({ listen: "127.0.0.1:0", publicUrl: null, owner: keys.owner, worker: null, channels: {} }));
  const hub = await spawnHub(dir);
  const browser = await launch();
  try {
    // 10,000 ended runs: an event each, claimed and ended by the worker with a summary and usage; the receipts of the
    // first 1,000 ask the owner a question (an open card each).
    await inParallel(runs, async (i) => {
      await call(hub.url, keys.source, "POST", "/v1/events", { id: `r${i}`, type: "job.x", subject: `s${i}` });
      const { job } = await call(hub.url, keys.worker, "GET", `/v1/work?claim=c${i}`);
      const ask = i < cards ? { ask: [{ title: `Question ${i}: deploy build ${i}?`, text: "The canary is green.", options: ["Deploy", "Wait", "Cancel"], recommend: 0 }] } : {};
      if (job) await call(hub.url, job.token, "POST", `/v1/runs/${job.run}/result`, { outcome: "done", summary: `run ${i} done`, usage: { input: 1000, output: 200, cost: 0.01 }, ...ask });
    });
    const state = await call(hub.url, keys.owner, "GET", "/v1/state");
    say("console: the hub's contents", `${state.cards.length} open cards, ${state.totals.runs} runs`);

    // First load: a fresh browser context (nothing cached), from opening the link to the list of every card.
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const bytes = { files: 0, state: 0 };
    const reading: Promise<void>[] = [];
    page.on("response", (r) => reading.push(r.body().then((body) => {
      if (new URL(r.url()).pathname === "/v1/state") bytes.state += body.length;
      else bytes.files += body.length;
    }, () => {})));
    const { link } = await call(hub.url, keys.owner, "POST", "/v1/console/sign-in");
    const t0 = performance.now();
    await page.goto(link);
    await page.waitForFunction((n) => document.querySelectorAll("#asks > li").length === n, state.cards.length, { timeout: 120_000 });
    const loadMs = performance.now() - t0;
    await Promise.all(reading);
    say(`console first load: link → Needs-you list of ${state.cards.length} cards (${state.totals.runs} runs)`, `${loadMs.toFixed(0)} ms`);
    say("console first load: bytes of its files / of GET /v1/state (uncompressed)", `${(bytes.files / 1024).toFixed(1)} KiB / ${(bytes.state / 1024).toFixed(1)} KiB`);
    await context.close();

    // 20 browsers (the tabs of one browser share one stream), each holding the stream.
    await new Promise((r) => setTimeout(r, 2000));
    const before = statusMb(hub.child.pid!);
    const contexts = [];
    for (let i = 0; i < tabs; i++) {
      const ctx = await browser.newContext();
      contexts.push(ctx);
      const p = await ctx.newPage();
      await p.goto((await call(hub.url, keys.owner, "POST", "/v1/console/sign-in")).link);
      await p.waitForSelector("#live.on", { timeout: 120_000 });
    }
    await new Promise((r) => setTimeout(r, 2000));
    say(`hub RSS before / with ${tabs} consoles on the stream`, `${before.toFixed(1)} / ${statusMb(hub.child.pid!).toFixed(1)} MB`);
    for (const ctx of contexts) await ctx.close();
  } finally {
    await browser.close();
    await stopHub(hub);
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await consoleFigures((k, v) => console.log(`${k.padEnd(58)} ${v}`));
