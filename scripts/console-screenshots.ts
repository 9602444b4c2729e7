/**
 * `npm run console:screenshots`: every view of the owner console at 1280×800 and 390×844, light and dark, written as
 * PNG files to `screenshots/console/` (not committed; README "Console" shows one of them, docs/console-needs-you.png).
 * `VIEWS=needs,runs` shoots only those views; `LOCALES=en-US,zh-CN` each view in each browser language (default
 * en-US; a locale other than en-US adds its name to the file's).
 * A hub on a temporary home gets cards and runs through the real /v1 calls (tests/console-kit.ts), then headless
 * Debian Chromium signs in with the printed link and visits each view.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { askCard, consoleFixture, launch, runOnce, signedIn } from "../tests/console-kit.js";
import { copyExample, writeFiles } from "../tests/declarative-helpers.js";

const out = join(import.meta.dirname, "..", "screenshots", "console");
mkdirSync(out, { recursive: true });

const f = await consoleFixture();
const browser = await launch();
try {
  // What a person running a few agents sees on a weekday: finished, failed and running work, questions, notices.
  await runOnce(f, "sentry-4120", { outcome: "done", summary: "Fixed the null check in the checkout handler; PR #481 opened.", usage: { input: 182_000, output: 9_400, cost: 1.42 } });
  await runOnce(f, "sentry-4121", { outcome: "failed", error: "npm test: 3 failing (checkout.spec.ts)" });
  await runOnce(f, "ci-9001", { outcome: "nothing", summary: "Flaky test, passed on retry; nothing to change.", usage: { input: 40_000, output: 1_200 } });
  await askCard(f, "deploy-7", { title: "Deploy v2.3.0 to production?", text: "The canary has been green for 2 hours (error rate 0.02 %, p95 210 ms).\nThe migration adds one nullable column.", options: ["Deploy now", "Wait until Monday", "Cancel the release"], recommend: 0 });
  await askCard(f, "issue-311", { title: "Close issue #311 as a duplicate of #288?", options: ["Close it", "Keep it open"] });
  await runOnce(f, "disk-2", { outcome: "done", summary: "Checked the build machines.", notice: [{ title: "Disk on build-2 is 91 % full", text: "Old artifacts in /var/cache/ci can go." }] });
  await f.call("POST", "/v1/tell", f.keys.source, { key: "release-notes", title: "Release notes for v2.3.0 were drafted", text: "docs/releases/2.3.0.md" });
  await runOnce(f, "sentry-4122", null);
  // The worker says what it can hold (2 slots, one run in hand), as the built-in worker does when it asks for work.
  await f.call("GET", `/v1/work?claim=slots&capacity=1&running=${(await f.state()).active.find((r) => r.state === "running")!.id}`, f.keys.worker);
  // A second alert of the running run's subject queues behind it in its lane (and says so).
  await f.call("POST", "/v1/events", f.keys.source, { id: "sentry-4122-again", type: "alert.deploy", subject: "sentry-4122", summary: "deploy sentry-4122 again" });
  await f.call("POST", "/v1/rules/nightly/pause", f.keys.owner, { reason: "holiday freeze", until: "2099-01-02T09:00:00Z" });
  const run = (await f.call("GET", "/v1/state", f.keys.owner)).body.runs.find((r: { state: string }) => r.state === "done").id as number;
  // The example declarative plugin (a panel of every node type, a card template, settings with a secret), and a
  // plugin refused with its errors.
  copyExample(f.home.plugins);
  writeFiles(join(f.home.plugins, "weather"), {
    "plugin.json": { id: "weather", name: "Weather", version: "0.2.0", apiVersion: "1.0", provides: { panels: ["today"] } },
    "panels/today.json": { id: "today", title: "Today", body: [{ type: "gauge", value: 3 }, { type: "list", items: [] , extra: 1 }] },
  });
  await f.call("POST", "/v1/plugins/reload", f.keys.owner);
  await f.call("POST", "/v1/plugins/example/settings/token", f.keys.owner, { value: "ghp_screenshot_secret" });

  const only = process.env.VIEWS?.split(",");
  // An event no rule takes, for the Events view (issue 30); the search finds the sentry alerts.
  await f.call("POST", "/v1/events", f.keys.source, { id: "note-12", type: "note.weekly", subject: "weekly-report", summary: "The weekly report is ready" });
  const views = ["needs", "runs", `runs/${run}`, "events", "search?q=sentry-412", "rules", "workers", "spending", "plugins", "plugins/example"]
    .filter((v) => !only || only.includes(v.replace(/\/\d+$|\?.*$/, "")));
  const locales = process.env.LOCALES?.split(",") ?? ["en-US"];
  for (const [width, height] of [[1280, 800], [390, 844]] as const) {
    for (const [dark, locale] of [false, true].flatMap((d) => locales.map((l) => [d, l] as const))) {
      const { context, page } = await signedIn(browser, f, { width, height, dark, locale });
      const tag = locale === "en-US" ? "" : `-${locale}`;
      for (const view of views) {
        await page.evaluate((v) => (location.hash = `#/${v}`), view);
        await page.waitForSelector(view.startsWith("runs/") ? "#timeline li" : "main h1");
        await page.waitForFunction(() => !document.querySelector("[aria-busy=true]"));
        await page.waitForTimeout(150);
        const file = join(out, `${view.startsWith("runs/") ? "run" : view.replace(/\?.*$/, "").replace("/", "-")}-${width}-${dark ? "dark" : "light"}${tag}.png`);
        await page.screenshot({ path: file, fullPage: true });
        process.stdout.write(`${file}\n`);
      }
      // A running run's page with Stop's confirmation open (issue 30), when the run pages are wanted.
      if (views.some((v) => v.startsWith("runs/"))) {
        const running = (await f.state()).active.find((r) => r.state === "running")!.id;
        await page.evaluate((v) => (location.hash = `#/runs/${v}`), running);
        await page.waitForSelector("#stop-run:not([hidden])");
        await page.click("#stop-run");
        const file = join(out, `run-stop-confirm-${width}-${dark ? "dark" : "light"}${tag}.png`);
        await page.screenshot({ path: file, fullPage: true });
        process.stdout.write(`${file}\n`);
      }
      await context.close();
    }
  }
} finally {
  await browser.close();
  await f.close();
}
