/**
 * The owner console's figures for `npm run benchmark` (issue 17; `npm run benchmark -- console` measures only these):
 * a real hub process on a home the console's fixture generator filled with its large set (scripts/console-fixture.ts:
 * six days of history through /v1, with 1,000 open question cards and 10,000 runs); then headless Debian Chromium
 * signs in with the printed link and measures the first load (issue 30): the time from opening the link to the first
 * card of Needs you drawn and the page free to take a click (the browser's main thread answers), to the whole first
 * page of cards drawn, and the bytes that moved — on the wire (gzip'd) and as read — of the console's files and of
 * `GET /v1/state`; then the hub's RSS with 20 consoles holding `/v1/stream` (20 browsers: the tabs of one browser
 * share one stream). `BENCH_CONSOLE_HOME=<folder> BENCH_CONSOLE_OWNER=<key>` measures a home filled before (`npx tsx
 * scripts/console-fixture.ts large` prints both; the home is used as it is and kept). Skipped, saying why, where
 * Chromium is missing.
 */
import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir, loadavg } from "node:os";
import { join } from "node:path";
import { spawnHub } from "../sim/hub-process.js";
import { call, statusMb, stopHub } from "./measure.js";
import { chromiumPath, launch } from "../tests/console-kit.js";
import { fillConsoleHub } from "./console-fixture.js";

const tabs = 20;

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

    // First load: a fresh browser context (nothing cached), from opening the link to the first card ready for a click.
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const bytes = { files: 0, filesWire: 0, state: 0, stateWire: 0 };
    const reading: Promise<void>[] = [];
    // The stream never ends: its sizes would never come (it moves a few bytes a fact).
    page.on("response", (r) => new URL(r.url()).pathname !== "/v1/stream" && reading.push(Promise.all([r.body(), r.request().sizes()]).then(([body, sizes]) => {
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
    const shown = await page.evaluate(() => document.querySelectorAll("#asks > li").length);
    const allMs = performance.now() - t0;
    await Promise.all(reading);
    say(`console first load: link → first card of Needs you ready (${state.cards.length} open, ${state.totals.runs} runs)`, `${firstMs.toFixed(0)} ms (load average ${load.toFixed(1)})`);
    say(`console first load: link → the first page of Needs you (${shown} cards) drawn`, `${allMs.toFixed(0)} ms`);
    say("console first load: its files, on the wire / as read", `${(bytes.filesWire / 1024).toFixed(1)} KiB / ${(bytes.files / 1024).toFixed(1)} KiB`);
    say("console first load: GET /v1/state, on the wire / as read", `${(bytes.stateWire / 1024).toFixed(1)} KiB / ${(bytes.state / 1024).toFixed(1)} KiB`);
    await context.close();

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
