/**
 * The card link page as a reader's browser shows it (issue 30), in Debian's Chromium: at 390 px a card with a long
 * URL never scrolls sideways, in Chinese (Accept-Language) and English; axe finds no serious or critical violation on
 * the card, its answered state and the 404; the page names no English word in Chinese; and another site cannot frame
 * it — a page on another origin that frames the link gets nothing, and no answer is recorded.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { axeViolations, browserMissing, launch } from "./console-kit.js";
import { hubFixture, baseRules, type Fixture } from "./helpers.js";

const skip = browserMissing();
// The rule uses the example plugin's prompt: its runs' cards may show that plugin's card templates (rules.ts templateTied).
const rules = { ...baseRules, rules: baseRules.rules.map((r) => ({ ...r, promptRef: "example/writer" })), channels: { ch1: { name: "Text only", links: true } } };
let f: Fixture;
let browser: Browser;
let n = 0;

/** A card with a long URL on the links channel; its link. */
async function cardLink(): Promise<string> {
  n++;
  await f.call("POST", "/v1/events", f.keys.source, { id: `lp${n}`, type: "alert.x", subject: `lp${n}` });
  const job = (await f.call("GET", `/v1/work?claim=lp${n}`, f.keys.worker)).body.job;
  const url = `https://example.com/${"a-very-long-path-segment-without-any-break".repeat(6)}?token=${"f".repeat(120)}`;
  await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done", ask: [{ title: `Deploy ${n}? ${"x".repeat(80)}`, text: `See ${url}`, options: ["Yes, deploy it now", "No"], recommend: 0 }] });
  for (;;) {
    const card = (await f.call("GET", "/v1/cards/next", f.keys.channel)).body.card;
    await f.call("POST", `/v1/cards/${card.id}/delivered`, f.keys.channel, { version: card.version, ref: `r${card.id}` });
    if (card.title.startsWith(`Deploy ${n}?`)) return card.link as string;
  }
}

before(async () => {
  if (skip) return;
  f = await hubFixture(rules);
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await f?.close();
});

test("at 390 px, in Chinese and English: no sideways scroll, a main landmark and a heading, no serious axe violation, every word in the reader's language", { skip: skip ?? false }, async () => {
  for (const [locale, lang] of [["zh-CN", "zh"], ["en-US", "en"]] as const) {
    const link = await cardLink();
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, locale, bypassCSP: true });
    const page = await context.newPage();
    try {
      for (const [what, url] of [["the card", link], ["a wrong link", link.replace(/.$/, (c) => (c === "A" ? "B" : "A"))]] as const) {
        await page.goto(url);
        const shape = await page.evaluate(() => ({
          wide: document.documentElement.scrollWidth, view: document.documentElement.clientWidth,
          lang: document.documentElement.lang, main: document.querySelectorAll("main").length, h1: document.querySelectorAll("main h1").length,
        }));
        assert.deepEqual(shape, { wide: shape.view, view: 390, lang, main: 1, h1: 1 }, `${locale}, ${what}`);
        assert.deepEqual(await axeViolations(page), [], `${locale}, ${what}`);
      }
      // Answered: the outcome in the reader's words.
      await page.goto(link);
      await page.click("button[name=choice][value='0']");
      const text = await page.locator("main").innerText();
      if (lang === "zh") {
        assert.match(text, /回答： Yes, deploy it now（通过链接）/);
        assert.match(text, /已回答/);
        assert.doesNotMatch(text, /\b(closed|answered|link|Answer)\b/);
      } else {
        assert.match(text, /Answer: Yes, deploy it now \(link\)/);
        assert.match(text, /Answered/);
      }
      assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth), true);
      assert.deepEqual(await axeViolations(page), [], `${locale}, answered`);
    } finally {
      await context.close();
    }
  }
});

test("the link page in the reader's words and theme: the recommended option and who answered in full-width brackets in Chinese; dark when the system is", { skip: skip ?? false }, async () => {
  for (const [locale, dark, recommended, answered, text, muted] of [
    ["zh-CN", true, "Yes, deploy it now（推荐）", "回答： Yes, deploy it now（通过链接）", "rgb(240, 240, 240)", "rgb(176, 176, 176)"],
    ["en-US", false, "Yes, deploy it now (recommended)", "Answer: Yes, deploy it now (link)", "rgb(0, 0, 0)", "rgb(89, 89, 89)"],
  ] as const) {
    const link = await cardLink();
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, locale, colorScheme: dark ? "dark" : "light", bypassCSP: true });
    const page = await context.newPage();
    try {
      await page.goto(link);
      assert.equal(await page.locator("button[name=choice][value='0']").textContent(), recommended, locale);
      // Light or dark as the system is; the muted line 4.5:1 or more on either (axe checks it).
      assert.deepEqual(await page.evaluate(() => [getComputedStyle(document.body).color, getComputedStyle(document.querySelector(".muted")!).color]), [text, muted], locale);
      assert.deepEqual(await axeViolations(page), [], `${locale} ${dark ? "dark" : "light"}`);
      await page.click("button[name=choice][value='0']");
      assert.equal(await page.locator("main p", { has: page.locator("strong") }).innerText(), answered, locale);
    } finally {
      await context.close();
    }
  }
});

test("the link page is not frameable: another origin's frame gets nothing and a click there records no answer; headers say so", { skip: skip ?? false }, async () => {
  const link = await cardLink();
  const res = await fetch(link);
  assert.match(res.headers.get("content-security-policy")!, /frame-ancestors 'none'/);
  assert.equal(res.headers.get("x-frame-options"), "DENY");
  assert.equal(res.headers.get("x-content-type-options"), "nosniff");
  const evil: Server = createServer((_req, r) => r.writeHead(200, { "content-type": "text/html" }).end(`<!doctype html><title>evil</title><iframe id="f" src="${link}" width="400" height="600"></iframe>`));
  await new Promise<void>((r) => evil.listen(0, "127.0.0.2", r));
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    await page.goto(`http://127.0.0.2:${(evil.address() as AddressInfo).port}/`);
    await page.waitForTimeout(1000);
    const frame = page.frames().find((fr) => fr !== page.mainFrame())!;
    const buttons = await frame.locator("button").count().catch(() => 0);
    assert.equal(buttons, 0, "the framed page shows no button");
    await page.mouse.click(100, 100);
    const card = (await f.call("GET", "/v1/state", f.keys.owner)).body.cards.find((c: { link?: string; title: string }) => c.title.startsWith(`Deploy ${n}?`));
    assert.equal(card.state, "open", "no answer recorded");
  } finally {
    await context.close();
    evil.close();
  }
});
