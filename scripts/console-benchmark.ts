/**
 * The owner console's figures for `npm run benchmark` (issue 17; `npm run benchmark -- console` measures only these):
 * a real hub process on a home the console's fixture generator filled with its large set (scripts/console-fixture.ts:
 * six days of history through /v1, with 1,000 open question cards and 10,000 runs); then headless Debian Chromium
 * signs in with the printed link and measures the first load (issue 30), three times in fresh contexts: the time from
 * opening the link to the first card of Needs you drawn and the page free to take a click (the browser's main thread
 * answers), where that time went (resource timings, the hub's own time for the state), and the bytes that moved — on the wire (gzip'd) and as read — of the console's files and of
 * `GET /v1/state`; then the hub's RSS with 20 consoles holding `/v1/stream` (20 browsers: the tabs of one browser
 * share one stream). `BENCH_CONSOLE_HOME=<folder> BENCH_CONSOLE_OWNER=<key>` measures a home filled before (`npx tsx
 * scripts/console-fixture.ts large` prints both; the home is used as it is and kept). Skipped, saying why, where
 * Chromium is missing.
 */
import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir, loadavg } from "node:os";
import { join } from "node:path";
import { spawnHub } from "../sim/hub-process.js";
import { call, median, statusMb, stopHub } from "./measure.js";
import { chromiumPath, launch } from "../tests/console-kit.js";
import { fillConsoleHub } from "./console-fixture.js";

const tabs = 20;
/** First loads measured, each in a fresh browser context. */
const firstLoads = 5;

/**
 * Where a first load's time went, read in the page from its resource timings (ms from the page's request): the page,
 * the modules and texts it loads before its first view, the sign-in exchange, the state read (and the hub's own time
 * for it, its `Server-Timing`), and the end of the scripts' first run (DOMContentLoaded).
 */
function whereTimeWent(): string {
  const nav = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming;
  const res = performance.getEntriesByType("resource") as PerformanceResourceTiming[];
  const path = (e: PerformanceResourceTiming) => new URL(e.name).pathname;
  const before = (e: PerformanceResourceTiming) => e.startTime < (res.find((r) => path(r) === "/v1/state")?.responseEnd ?? Infinity);
  const files = res.filter((e) => path(e).startsWith("/console/") && path(e) !== "/console/session" && !path(e).endsWith(".svg") && before(e));
  const session = res.find((e) => path(e) === "/console/session");
  const state = res.find((e) => path(e) === "/v1/state");
  const f = (n: number | undefined) => (n === undefined ? "?" : n.toFixed(0));
  const hub = state?.serverTiming.find((t) => t.name === "hub")?.duration;
  return `page ${f(nav.responseEnd)}, ${files.length} files by ${f(Math.max(...files.map((e) => e.responseEnd)))}, `
    + `sign-in ${f(session?.startTime)}–${f(session?.responseEnd)}, state ${f(state?.startTime)}–${f(state?.responseEnd)} (hub ${f(hub)}), `
    + `scripts run by ${f(nav.domContentLoadedEventEnd)}`;
}

/** A filled home to measure on: a copy of `BENCH_CONSOLE_HOME`, or one the generator fills now (large set). */
async function filledHome(): Promise<{ dir: string; owner: string }> {
  const given = process.env.BENCH_CONSOLE_HOME;
  if (given) {
    const dir = mkdtempSync(join(tmpdir(), "aa-bench-console-"));
    cpSync(given, dir, { recursive: true });
    return { dir, owner: process.env.BENCH_CONSOLE_OWNER ?? "" };
  }
  const { f } = await fillConsoleHub("large");
  await f.running.close();
  return { dir: f.home.dir, owner: f.keys.owner };
}

/** Measures the console and prints each figure with `say`. */
export async function consoleFigures(say: (k: string, v: string) => void): Promise<void> {
  if (!existsSync(chromiumPath)) {
    say("console figures", `skipped: ${chromiumPath} is missing (apt-get install chromium)`);
    return;
  }
  const { dir, owner } = await filledHome();
  const hub = await spawnHub(dir);
  const browser = await launch();
  try {
    const state = await call(hub.url, owner, "GET", "/v1/state");
    say("console: the hub's contents", `${state.cards.length} open cards, ${state.totals.runs} runs`);

    // First load: a fresh browser context each time (nothing cached), from opening the link to the first card ready
    // for a click; three times (the machine is shared: one load says little), each with where its time went.
    const loads: number[] = [];
    const pageLoads: number[] = [];
    for (let i = 0; i < firstLoads; i++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      // In the page, from the browser's own start of the navigation: when the first card's buttons are in the page,
      // and when the main thread is next free after the frame that drew them (a timer that runs after the paint) —
      // the figure without the test driver's own round trips and polling (Playwright's waits add 0.1–0.6 s here).
      await context.addInitScript(() => {
        const w = window as unknown as { __drawn?: number; __free?: number };
        const seen = new MutationObserver(() => {
          if (!document.querySelector("#asks > li button.option")) return;
          seen.disconnect();
          w.__drawn = performance.now();
          requestAnimationFrame(() => setTimeout(() => { w.__free = performance.now(); }, 0));
        });
        document.addEventListener("DOMContentLoaded", () => seen.observe(document.body, { childList: true, subtree: true }));
      });
      const page = await context.newPage();
      const bytes = { files: 0, filesWire: 0, state: 0, stateWire: 0 };
      const reading: Promise<void>[] = [];
      // What the first view loaded: not the other views' modules the page fetches once it is idle.
      let counting = true;
      // The stream never ends: its sizes would never come (it moves a few bytes a fact).
      page.on("response", (r) => counting && new URL(r.url()).pathname !== "/v1/stream" && reading.push(Promise.all([r.body(), r.request().sizes()]).then(([body, sizes]) => {
        if (new URL(r.url()).pathname === "/v1/state") {
          bytes.state += body.length;
          bytes.stateWire += sizes.responseBodySize;
        } else {
          bytes.files += body.length;
          bytes.filesWire += sizes.responseBodySize;
        }
      }, () => {})));
      const { link } = await call(hub.url, owner, "POST", "/v1/console/sign-in");
      const load = loadavg()[0]!;
      const t0 = performance.now();
      await page.goto(link);
      await page.waitForSelector("#asks > li button.option", { timeout: 120_000 });
      // The page takes a click once its main thread is free: an evaluate answers only then.
      await page.evaluate(() => 0);
      const firstMs = performance.now() - t0;
      counting = false;
      loads.push(firstMs);
      await page.waitForFunction("window.__free !== undefined");
      const inPage = await page.evaluate("[window.__drawn, window.__free]") as [number, number];
      pageLoads.push(inPage[1]);
      const shown = await page.evaluate(() => document.querySelectorAll("#asks > li").length);
      // tsx keeps function names with a helper the page does not have.
      await page.evaluate("globalThis.__name = (f) => f");
      const where = await page.evaluate(whereTimeWent);
      await Promise.all(reading);
      say(`console first load ${i + 1}: link → first card of Needs you ready (${state.cards.length} open, ${state.totals.runs} runs)`, `${firstMs.toFixed(0)} ms (load average ${load.toFixed(1)})`);
      say(`  in the page: first card drawn / page free to take a click`, `${inPage[0].toFixed(0)} / ${inPage[1].toFixed(0)} ms from the browser's start of the navigation`);
      say(`  where it went (ms from the page's request)`, where);
      if (i === 0) {
        say(`console first load: the first page of Needs you`, `${shown} cards`);
        say("console first load: its files, on the wire / as read", `${(bytes.filesWire / 1024).toFixed(1)} KiB / ${(bytes.files / 1024).toFixed(1)} KiB`);
        say("console first load: GET /v1/state, on the wire / as read", `${(bytes.stateWire / 1024).toFixed(1)} KiB / ${(bytes.state / 1024).toFixed(1)} KiB`);
      }
      await context.close();
    }
    say(`console first load: median of ${firstLoads}, from the test driver / in the page`, `${median(loads).toFixed(0)} / ${median(pageLoads).toFixed(0)} ms`);

    // 20 browsers (the tabs of one browser share one stream), each holding the stream.
    await new Promise((r) => setTimeout(r, 2000));
    const before = statusMb(hub.child.pid!);
    const contexts = [];
    for (let i = 0; i < tabs; i++) {
      const ctx = await browser.newContext();
      contexts.push(ctx);
      const p = await ctx.newPage();
      await p.goto((await call(hub.url, owner, "POST", "/v1/console/sign-in")).link);
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
