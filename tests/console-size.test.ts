/**
 * The console's first load at size (issue 30), in Chromium: Needs you reads only the newest `cardsPage` (20) open
 * cards — the one state read of the load carries 20 cards and says how many more there are — and "Show older cards"
 * lists the rest. Counts of items, never times.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import type { Browser } from "playwright-core";
import type { Fixture } from "./helpers.js";
import { browserMissing, consoleFixture, launch, signedIn, signInLink } from "./console-kit.js";

const skip = browserMissing() ?? false;
let f: Fixture;
let browser: Browser;

before(async () => {
  if (skip) return;
  f = await consoleFixture();
  // 23 questions, one run each (lanes by subject, so none waits for another).
  for (let i = 0; i < 23; i++) {
    await f.call("POST", "/v1/events", f.keys.source, { id: `q${i}`, type: "alert.deploy", subject: `s${i}` });
    const job = (await f.call("GET", `/v1/work?claim=q${i}&wait=0`, f.keys.worker)).body.job;
    const r = await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done", ask: [{ title: `Question ${i}`, options: ["yes", "no"] }] });
    assert.equal(r.status, 200);
  }
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await f?.close();
});

test("Needs you reads and draws the newest 20 open cards; 'Show older cards' lists the other 3", { skip }, async () => {
  const { context, page } = await signedIn(browser, f);
  try {
    await page.waitForSelector("#asks > li");
    assert.deepEqual(await page.locator("#asks > li h3").allTextContents(), Array.from({ length: 20 }, (_, i) => `Question ${22 - i}`));
    assert.equal(await page.locator("#more-cards span").textContent(), "3 older cards are not listed.");
    // What the page read: the state with 20 cards, and no read of every card.
    const read = await page.evaluate(async () => (await (await fetch("/v1/state?cards=20")).json()) as { cards: unknown[]; moreCards: number });
    assert.deepEqual([read.cards.length, read.moreCards], [20, 3]);
    await page.click("#more-cards button");
    await page.waitForFunction(() => document.querySelectorAll("#asks > li").length === 23);
    assert.equal(await page.locator("#more-cards").isHidden(), true);
  } finally {
    await context.close();
  }
});

test("the first load reads the state once, asking for 20 cards", { skip }, async () => {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const reads: string[] = [];
    page.on("request", (r) => {
      const u = new URL(r.url());
      if (u.pathname === "/v1/state") reads.push(u.search);
    });
    await page.goto(await signInLink(f));
    await page.waitForSelector("#live.on");
    await page.waitForSelector("#asks > li");
    assert.deepEqual(reads, ["?cards=20"]);
  } finally {
    await context.close();
  }
});
