/**
 * `npm run console:screenshots`: every view of the owner console, from a hub filled as its owner sees it after six
 * days (scripts/console-fixture.ts), as PNG files in `screenshots/console/` (not committed: .gitignore; README
 * "Console" shows one of them, docs/console-needs-you.png). The views: Needs you (the open cards), Runs, a run's page
 * with its transcript, a running run's page with Stop's confirmation, Events, Search with a query, Rules, Workers,
 * Spending, Plugins (tools too), a plugin's own view, the signed-out page (how to sign in), and the card link page.
 * Each at 1280×800 and 390×844, in en-US and zh-CN.
 * `VIEWS=needs,runs` shoots only those views; `LOCALES=en-US` only those browser languages; `THEMES=light,dark`
 * (default light) the color schemes; `SIZE=large` the large set (1,000 open cards, 10,000 runs; 5 to 16 minutes to
 * fill). A file is named `<view>-<width>-<theme>-<locale>.png`.
 * Headless Debian Chromium signs in with the link `agent-autoloop console` prints and visits each view.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { launch, signedIn } from "../tests/console-kit.js";
import { fillConsoleHub, fixtureSizes, type FixtureSize } from "./console-fixture.js";

const out = join(import.meta.dirname, "..", "screenshots", "console");
mkdirSync(out, { recursive: true });
const size = (process.env.SIZE ?? "small") as FixtureSize;
if (!(size in fixtureSizes)) throw new Error(`SIZE: small or large, not ${size}`);

const { f, runs, cardLink } = await fillConsoleHub(size, (line) => process.stderr.write(`${line}\n`));
const browser = await launch();
try {
  const only = process.env.VIEWS?.split(",");
  const views = ["needs", "runs", `runs/${runs.transcript}`, `runs/${runs.retried}`, "events", "search?q=SHOP-412", "rules", "workers", "spending", "plugins", "plugins/example"]
    .filter((v) => !only || only.includes(v.replace(/\/\d+$|\?.*$/, "")));
  const locales = process.env.LOCALES?.split(",") ?? ["en-US", "zh-CN"];
  const themes = process.env.THEMES?.split(",") ?? ["light"];
  const shot = async (page: import("playwright-core").Page, name: string) => {
    const file = join(out, `${name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    process.stdout.write(`${file}\n`);
  };
  for (const [width, height] of [[1280, 800], [390, 844]] as const) {
    for (const theme of themes) {
      for (const locale of locales) {
        const dark = theme === "dark";
        const tag = `${width}-${theme}-${locale}`;
        const { context, page } = await signedIn(browser, f, { width, height, dark, locale });
        for (const view of views) {
          await page.evaluate((v) => (location.hash = `#/${v}`), view);
          await page.waitForSelector(view.startsWith("runs/") ? "#timeline li" : "main h1");
          await page.waitForFunction(() => !document.querySelector("[aria-busy=true]"));
          await page.waitForTimeout(200);
          const name = view.startsWith("runs/") ? `run-${view === `runs/${runs.retried}` ? "retried" : "transcript"}` : view.replace(/\?.*$/, "").replace("/", "-");
          await shot(page, `${name}-${tag}`);
        }
        if (!only || only.includes("runs")) {
          // A running run's page with Stop's confirmation open (issue 30).
          await page.evaluate((v) => (location.hash = `#/runs/${v}`), runs.running);
          await page.waitForSelector("#stop-run:not([hidden])");
          await page.click("#stop-run");
          await shot(page, `run-stop-confirm-${tag}`);
        }
        if (!only || only.includes("signed-out")) {
          // The page a browser without a session shows: how to sign in.
          const bare = await context.browser()!.newContext({ viewport: { width, height }, colorScheme: dark ? "dark" : "light", locale });
          const p = await bare.newPage();
          await p.goto(`${f.url}/console/`);
          await p.waitForSelector("main.signed-out h1");
          await shot(p, `signed-out-${tag}`);
          await bare.close();
        }
        if (cardLink && (!only || only.includes("link"))) {
          // The card link page a channel with `links: true` sends (its language: the reader's Accept-Language).
          const bare = await context.browser()!.newContext({ viewport: { width, height }, colorScheme: dark ? "dark" : "light", locale });
          const p = await bare.newPage();
          await p.goto(cardLink);
          await p.waitForSelector("main h1");
          await shot(p, `link-${tag}`);
          await bare.close();
        }
        await context.close();
      }
    }
  }
} finally {
  await browser.close();
  await f.close();
}
