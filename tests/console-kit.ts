/**
 * What the console's browser tests and `npm run console:screenshots` share: Debian's Chromium driven by
 * playwright-core (never a downloaded browser), a hub with runs and cards made through the real /v1 calls (a source's
 * event, a worker's claim, start and receipt), and signing a page in with the link `agent-autoloop console` prints.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { hubFixture, type Fixture } from "./helpers.js";

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it). */
export const chromiumPath = "/usr/bin/chromium";

/** Why the browser tests cannot run here, or null. In CI a missing Chromium is a failure, never a skip. */
export function browserMissing(): string | null {
  if (existsSync(chromiumPath)) return null;
  if (process.env.CI) throw new Error(`${chromiumPath} is missing: .ci/run installs Debian's chromium`);
  return `${chromiumPath} is missing (apt-get install chromium)`;
}

/**
 * Starts headless Chromium with the flags this machine needs: no sandbox (root), no GPU, and nothing of the browser's
 * own background traffic (the network here is closed: its connections would be refused, many at a time).
 */
export function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

/**
 * Rules of the console's hub: a rule on a source with a budget, two cron rules (one paused later; one in croner's own
 * form for "the last Friday of the month"), a channel.
 */
export const consoleRules = {
  timezone: "UTC",
  sources: { shop: { name: "Shop" } },
  agents: { bot: { worker: "w1", use: "command", command: ["echo", "hi"] } },
  channels: { ch1: { name: "Team chat", answerers: ["ou_alice"] } },
  rules: [
    { name: "alerts", when: { source: "shop", types: ["alert.*"] }, to: "bot", cwd: "/tmp", prompt: "handle it", parallel: 3, budget: { cost: 20, per: "day" } },
    { name: "nightly", when: { cron: "0 3 * * *" }, to: "bot", cwd: "/tmp", prompt: "tidy up" },
    { name: "month-end", when: { cron: "0 17 * * FRI#L" }, to: "bot", cwd: "/tmp", prompt: "write the month's report" },
  ],
};

/** A hub for the console with its owner, source and worker keys. */
export async function consoleFixture(): Promise<Fixture> {
  return hubFixture(consoleRules);
}

/**
 * One run of rule `alerts` for a new event: claimed and started by worker w1, then ended with `result` (a receipt),
 * or left running when `result` is null.
 * @returns the run's id and token.
 */
export async function runOnce(f: Fixture, id: string, result: Record<string, unknown> | null, subject = id): Promise<{ run: number; token: string }> {
  const ev = await f.call("POST", "/v1/events", f.keys.source, { id, type: "alert.deploy", subject, summary: `deploy ${subject}` });
  if (ev.status !== 200) throw new Error(`event ${id}: ${JSON.stringify(ev.body)}`);
  // Runs queued before (an answer's follow-up) are claimed first: end them with nothing until this event's run comes.
  let job: { run: number; token: string; context: { events: { id: string }[] } } | null = null;
  for (let i = 0; i < 20; i++) {
    job = (await f.call("GET", `/v1/work?claim=${id}-${i}`, f.keys.worker)).body.job;
    if (!job || job.context.events.some((e) => e.id === id)) break;
    await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "nothing" });
  }
  if (!job) throw new Error(`no job for ${id}`);
  await f.call("POST", `/v1/runs/${job.run}/started`, job.token, { session: `sess-${id}` });
  if (result) {
    const r = await f.call("POST", `/v1/runs/${job.run}/result`, job.token, result);
    if (r.status !== 200) throw new Error(`result ${id}: ${JSON.stringify(r.body)}`);
  }
  return { run: job.run, token: job.token };
}

/** A run whose receipt asks the owner a question; returns the card's id. */
export async function askCard(f: Fixture, id: string, ask: Record<string, unknown>): Promise<number> {
  await runOnce(f, id, { outcome: "done", summary: `asked about ${id}`, usage: { input: 1200, output: 300, cost: 0.0123 }, ask: [ask] });
  const state = (await f.call("GET", "/v1/state", f.keys.owner)).body;
  return Math.max(...state.cards.map((c: { id: number }) => c.id));
}

/** A new sign-in link, made with the owner key as `agent-autoloop console` does. */
export async function signInLink(f: Fixture): Promise<string> {
  const r = await f.call("POST", "/v1/console/sign-in", f.keys.owner);
  if (r.status !== 200) throw new Error(`sign-in: ${JSON.stringify(r.body)}`);
  return r.body.link;
}

/**
 * A browser context signed in to the console (the session cookie is the context's), with `page` on `hash`.
 * @param options viewport, color scheme, language and time zone of the context (UTC unless given).
 */
export async function signedIn(
  browser: Browser, f: Fixture, options: { width?: number; height?: number; dark?: boolean; locale?: string; timezoneId?: string } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: options.height ?? 800 },
    colorScheme: options.dark ? "dark" : "light",
    locale: options.locale ?? "en-US",
    timezoneId: options.timezoneId ?? "UTC",
  });
  const page = await context.newPage();
  await page.goto(await signInLink(f));
  await page.waitForSelector("nav a[aria-current=page]");
  return { context, page };
}

/**
 * Shows the console's view at `hash` (`runs`, `runs/12`, `search?q=x`) and waits until that view is drawn: a view's
 * module loads when it is first shown (issue 30), and until then the last view stays on the page, so a read made right
 * after a click or an address change could read the last view's page.
 * @param how `nav` clicks the navigation's link (only for a view of its own, no argument or filter); `address` sets the address.
 */
export async function showView(page: Page, hash: string, how: "nav" | "address" = "address"): Promise<void> {
  const m = /^(\w+)(?:\/([A-Za-z0-9_-]+))?(?:\?.*)?$/.exec(hash);
  if (!m) throw new Error(`showView: not a console address: ${hash}`);
  if (how === "nav") await page.click(`nav a[href='#/${hash}']`);
  else await page.evaluate((h) => (location.hash = `#/${h}`), hash);
  await page.waitForSelector(`#main[data-view="${m[1]}/${m[2] ?? ""}"]`);
}

/**
 * axe-core's script, given to a page through the DevTools protocol (the page's CSP rightly refuses an inline script).
 * Read once per test file: it is 650 KB.
 */
let axeSource: string | null = null;
const axeScript = () => (axeSource ??= readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8"));

/**
 * The serious and critical violations axe-core finds in the page as it is, each `id (impact) targets`. axe-core is
 * given to a page once: the views of the console change without a page load, so a later check of the same page finds
 * it there (sending and compiling 650 KB again for each view took seconds on a busy machine).
 */
export async function axeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(axeScript());
  return page.evaluate(async () => {
    const r = await (window as unknown as { axe: { run: (c: Document, o: object) => Promise<{ testEngine: { name: string }; passes: unknown[]; violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe.run(document, { resultTypes: ["violations"] });
    if (r.testEngine.name !== "axe-core" || r.passes.length === 0) return ["axe did not run"];
    return r.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id} (${v.impact}) ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  });
}
