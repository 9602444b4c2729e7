/**
 * The owner console across a restart of the hub (issue 30), in Debian's Chromium against a real `serve` process: a
 * console signed in stays signed in when the hub stops and starts again on its address (sessions are kept hashed in
 * the home), the sign-in token leaves the address bar at once, and a sign-in link pasted into a signed-out tab (which
 * changes only the fragment, so nothing loads) signs that same tab in.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { rmSync } from "node:fs";
import type { Browser } from "playwright-core";
import { browserMissing, launch } from "./console-kit.js";
import { makeHome, serveProcess, type ServeProcess } from "./helpers.js";

const skip = browserMissing();
const cleanup: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const f of cleanup.reverse()) await f();
});

/** A port free on 127.0.0.1 now, for a hub that must come back on the same address. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

test("a signed-in console stays signed in across a hub restart; a pasted sign-in link works in the same tab and leaves the address bar", { skip: skip ?? false }, async () => {
  const made = makeHome();
  const listen = `127.0.0.1:${await freePort()}`;
  let serve: ServeProcess = await serveProcess(made.dir, undefined, undefined, listen);
  cleanup.push(async () => {
    await serve.stop();
    rmSync(made.dir, { recursive: true, force: true });
  });
  const browser: Browser = await launch();
  cleanup.push(() => browser.close());
  const link = async () => {
    const res = await fetch(`${serve.url}/v1/console/sign-in`, { method: "POST", headers: { authorization: `Bearer ${made.keys.owner}` } });
    return ((await res.json()) as { link: string }).link;
  };

  const context = await browser.newContext({ locale: "en-US" });
  const page = await context.newPage();
  await page.goto(await link());
  await page.waitForSelector("nav a[aria-current=page]");
  assert.equal(new URL(page.url()).hash, "#/needs", "the token left the address bar");

  await serve.stop();
  serve = await serveProcess(made.dir, undefined, undefined, listen);
  await page.reload();
  await page.waitForSelector("nav a[aria-current=page]");
  assert.equal(await page.locator("main h1").first().textContent(), "Needs you");

  // A second browser, signed out; the owner pastes a link into its address bar (only the fragment changes).
  const other = await browser.newContext({ locale: "en-US" });
  const tab = await other.newPage();
  await tab.goto(`${serve.url}/console/`);
  await tab.waitForSelector("main.signed-out");
  const pasted = await link();
  await tab.evaluate((hash) => {
    location.hash = hash;
  }, new URL(pasted).hash);
  await tab.waitForSelector("nav a[aria-current=page]");
  assert.equal(new URL(tab.url()).hash, "#/needs");
  const listed = await fetch(`${serve.url}/v1/console/sessions`, { headers: { authorization: `Bearer ${made.keys.owner}` } });
  assert.equal(((await listed.json()) as { sessions: unknown[] }).sessions.length, 2);
});
