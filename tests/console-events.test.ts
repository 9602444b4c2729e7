/**
 * The console's Events view, search and bulk actions (issue 30) in a real browser against a real hub: an unrouted
 * event and one skipped while its rule was paused are shown as such; a search for a subject finds its event, run and
 * card through the hub's index; a filter in the address survives a reload; "run this again" from an event makes a
 * manual run; several runs are stopped at once (after a confirmation) and several cards resolved; axe finds no
 * serious or critical violation on the new views at 390 px and at desktop width, in Chinese and in English.
 * Also the hub's answers themselves: GET /v1/events pages and GET /v1/search after a restart (the index is made anew
 * with the projection). Skipped, with the reason, only where Chromium is missing outside CI (console-kit.ts).
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { askCard, axeViolations, browserMissing, consoleFixture, launch, runOnce, signedIn, showView } from "./console-kit.js";
import { serveFixture, tempDir, type Fixture } from "./helpers.js";
import { eventsPerPage } from "../src/kernel/limits.js";
import Database from "better-sqlite3";

const missing = browserMissing();
const skip = missing ?? false;
let browser: Browser;
let f: Fixture;
/** The card, run and event of subject SHOP-4120. */
let shop: { card: number; run: number; event: number };
let unrouted: number;
let skipped: number;

before(async () => {
  f = await consoleFixture();
  const card = await askCard(f, "SHOP-4120", { title: "Refund the order?", text: "The customer wants their money back.", options: ["Refund", "Decline"] });
  const state = await f.state();
  const run = state.cards.find((c) => c.id === card)!.run!;
  shop = { card, run, event: (await f.call("GET", "/v1/events?q=SHOP-4120", f.keys.owner)).body.events[0].id };
  unrouted = (await f.call("POST", "/v1/events", f.keys.source, { id: "note-1", type: "note.hello", subject: "NOTE-1", summary: "a note nobody reads" })).body.event;
  await f.call("POST", "/v1/rules/alerts/pause", f.keys.owner, { reason: "maintenance" });
  skipped = (await f.call("POST", "/v1/events", f.keys.source, { id: "disk-9", type: "alert.disk", subject: "DISK-9", summary: "disk almost full" })).body.event;
  await f.call("POST", "/v1/rules/alerts/resume", f.keys.owner);
  if (!missing) browser = await launch();
});
after(async () => {
  await browser?.close();
  await f?.close();
});

test("GET /v1/events says which rules took each event, which skipped it while paused, and its runs", async () => {
  const page = (await f.call("GET", "/v1/events", f.keys.owner)).body;
  const byId = new Map(page.events.map((e: { id: number }) => [e.id, e]));
  assert.deepEqual(byId.get(unrouted), { ...byId.get(unrouted) as object, routed: [], paused: [], unrouted: true, runs: [], runCount: 0 });
  assert.deepEqual((byId.get(skipped) as { paused: string[]; routed: string[]; unrouted: boolean }).paused, ["alerts"]);
  assert.equal((byId.get(skipped) as { unrouted: boolean }).unrouted, false);
  assert.deepEqual((byId.get(shop.event) as { runs: unknown[] }).runs, [{ id: shop.run, rule: "alerts", state: "done" }]);
  assert.deepEqual((await f.call("GET", "/v1/events?routing=unrouted", f.keys.owner)).body.events.map((e: { id: number }) => e.id), [unrouted]);
  assert.deepEqual((await f.call("GET", "/v1/events?routing=skipped", f.keys.owner)).body.events.map((e: { id: number }) => e.id), [skipped]);
  // A bad filter is refused by name; the cookie-less call without a key is refused.
  const bad = await f.call("GET", "/v1/events?routing=lost", f.keys.owner);
  assert.equal(bad.status, 400);
  assert.match(bad.body.error, /routing/);
  assert.equal((await f.call("GET", "/v1/events", null)).status, 401);
  assert.equal((await f.call("GET", "/v1/search?q=x", f.keys.worker)).status, 403);
});

test("GET /v1/events pages by `before`, a page at most eventsPerPage events", async () => {
  const g = await consoleFixture();
  try {
    for (let i = 0; i < eventsPerPage + 3; i++) await g.call("POST", "/v1/events", g.keys.source, { id: `n${i}`, type: "note.page", subject: `P-${i}` });
    const first = (await g.call("GET", "/v1/events", g.keys.owner)).body;
    assert.equal(first.events.length, eventsPerPage);
    assert.equal(first.events[0].subject, `P-${eventsPerPage + 2}`);
    assert.equal(first.nextBefore, first.events.at(-1).id);
    const second = (await g.call("GET", `/v1/events?before=${first.nextBefore}`, g.keys.owner)).body;
    assert.deepEqual(second.events.map((e: { subject: string }) => e.subject), ["P-2", "P-1", "P-0"]);
    assert.equal(second.nextBefore, null);
  } finally {
    await g.close();
  }
});

test("GET /v1/search finds a subject's event, run and card by any part of it, in any case, after a restart too", async () => {
  const ids = (b: { events: { id: number }[]; runs: { id: number }[]; cards: { id: number }[] }) => [b.events.map((e) => e.id), b.runs.map((r) => r.id), b.cards.map((c) => c.id)];
  const want = [[shop.event], [shop.run], [shop.card]];
  assert.deepEqual(ids((await f.call("GET", "/v1/search?q=SHOP-4120", f.keys.owner)).body), want);
  assert.deepEqual(ids((await f.call("GET", "/v1/search?q=shop-41", f.keys.owner)).body), want);
  // Fewer than 3 characters are looked for too (LIKE over the index instead of the trigram match).
  assert.deepEqual(ids((await f.call("GET", "/v1/search?q=Re", f.keys.owner)).body)[2], [shop.card]);
  // A group narrows runs and leaves events and cards out; a date range excludes what is outside it.
  assert.deepEqual(ids((await f.call("GET", "/v1/search?q=SHOP-4120&group=failed", f.keys.owner)).body), [[], [], []]);
  assert.deepEqual(ids((await f.call("GET", "/v1/search?q=SHOP-4120&group=done", f.keys.owner)).body), [[], [shop.run], []]);
  assert.deepEqual(ids((await f.call("GET", "/v1/search?q=SHOP-4120&to=2000-01-01T00:00:00Z", f.keys.owner)).body), [[], [], []]);
  assert.equal((await f.call("GET", "/v1/search?group=lost", f.keys.owner)).status, 400);
  // What FTS5 or LIKE would read as syntax is looked for as text.
  for (const q of ['"', '%', '_', 'a"b', "NEAR(x y)", "AND NOT", "*", "\\"]) {
    const r = await f.call("GET", `/v1/search?q=${encodeURIComponent(q)}`, f.keys.owner);
    assert.deepEqual([r.status, ids(r.body)], [200, [[], [], []]], q);
  }
  assert.deepEqual(ids((await f.call("GET", `/v1/search?q=${encodeURIComponent('refund the "order')}`, f.keys.owner)).body), [[], [], []]);
  assert.deepEqual(ids((await f.call("GET", `/v1/search?q=${encodeURIComponent("order?")}`, f.keys.owner)).body), [[], [], [shop.card]]);
  // The index is not in the fact log: a hub that rebuilds its projection from the log (here: its format fingerprint
  // changed, and the index's tables are gone) makes the index anew and finds the same.
  const g = await consoleFixture();
  try {
    await runOnce(g, "REBUILD-1", { outcome: "done", summary: "the rebuilt one" });
    await g.running.close();
    const db = new Database(g.home.database);
    db.exec("DROP TABLE search_text; DROP TABLE event_runs; UPDATE store_meta SET value = 'other' WHERE key = 'fingerprint'");
    assert.equal((db.prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE name LIKE 'search_text%'").get() as { n: number }).n, 0);
    db.close();
    const again = await serveFixture({ dir: tempDir(), home: g.home, keys: g.keys });
    try {
      assert.deepEqual((await again.call("GET", "/v1/search?q=rebuilt", again.keys.owner)).body.runs.map((r: { summary: string }) => r.summary), ["the rebuilt one"]);
    } finally {
      await again.running.close();
    }
  } finally {
    await g.close().catch(() => {});
  }
});

test("the Events view shows an unrouted event and one skipped while paused, and runs an event again", { skip }, async () => {
  const { context, page } = await signedIn(browser, f);
  try {
    await showView(page, "events");
    await page.waitForSelector(`#events li[data-event="${skipped}"]`);
    const u = page.locator(`#events li[data-event="${unrouted}"]`);
    assert.equal(await u.getAttribute("class"), "event unrouted");
    assert.equal(await u.locator(".subject").textContent(), "NOTE-1");
    assert.deepEqual(await u.locator(".routing").allTextContents(), ["No rule took this event"]);
    const s = page.locator(`#events li[data-event="${skipped}"]`);
    assert.equal(await s.getAttribute("class"), "event skipped");
    assert.deepEqual(await s.locator(".routing").allTextContents(), ["Skipped, paused: alerts"]);
    const e = page.locator(`#events li[data-event="${shop.event}"]`);
    assert.deepEqual(await e.locator(".routing").allTextContents(), ["Taken by: alerts"]);
    assert.equal(await e.locator(`.event-runs a[href="#/runs/${shop.run}"]`).textContent(), `#${shop.run}`);

    // The filter goes into the address.
    await page.selectOption("#events-routing", "unrouted");
    await page.waitForFunction(() => location.hash === "#/events?routing=unrouted");
    await page.waitForFunction((id) => [...document.querySelectorAll("#events li")].map((li) => li.getAttribute("data-event")).join() === String(id), unrouted);
    await page.selectOption("#events-routing", "");
    await page.waitForSelector(`#events li[data-event="${shop.event}"]`);

    // Run this again: a manual run of the rule with the event's subject and the reason given.
    await e.locator(".again-open").click();
    await e.locator("input[name=reason]").fill("check the refund again");
    await e.locator(".again-start").click();
    await page.waitForFunction((id) => /^Queued as run #\d+$/.test(document.querySelector(`#events li[data-event="${id}"] .message`)?.textContent ?? ""), shop.event);
    const run = Number(/#(\d+)/.exec((await e.locator(".message").textContent())!)![1]);
    const made = [...(await f.state()).active, ...(await f.state()).runs].find((r) => r.id === run)!;
    assert.equal(made.manual, true);
    assert.equal(made.rule, "alerts");
    assert.equal(made.lane, "SHOP-4120");
    const why = (await f.call("GET", `/v1/runs/${run}/why`, f.keys.owner)).body;
    assert.ok(JSON.stringify(why.facts).includes("check the refund again"));
    // The paused rule is not offered: it says to resume it first.
    await f.call("POST", "/v1/rules/alerts/pause", f.keys.owner, {});
    await page.waitForFunction((id) => document.querySelector(`#events li[data-event="${id}"] .again-open`) === null, shop.event);
    assert.deepEqual(await e.locator("p.meta").allTextContents(), ["Rule alerts is paused: resume it first"]);
    await f.call("POST", "/v1/rules/alerts/resume", f.keys.owner);
    // The manual run is claimed and ended, so later tests start from runs they make.
    const job = (await f.call("GET", "/v1/work?claim=again", f.keys.worker)).body.job;
    await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "nothing" });
  } finally {
    await context.close();
  }
});

test("a search for a subject finds its event, run and card; its filter survives a reload", { skip }, async () => {
  const { context, page } = await signedIn(browser, f);
  try {
    await showView(page, "search");
    await page.fill("#search-q", "SHOP-4120");
    await page.click("#search-go");
    await page.waitForFunction(() => location.hash === "#/search?q=SHOP-4120");
    await page.waitForSelector("#found-cards li[data-card]");
    assert.ok((await page.locator("#found-events li[data-event]").evaluateAll((els) => els.map((e) => Number(e.getAttribute("data-event"))))).includes(shop.event));
    assert.ok((await page.locator("#found-runs li[data-run]").evaluateAll((els) => els.map((e) => Number(e.getAttribute("data-run"))))).includes(shop.run));
    assert.deepEqual(await page.locator("#found-cards li[data-card]").evaluateAll((els) => els.map((e) => Number(e.getAttribute("data-card")))), [shop.card]);

    await page.selectOption("#search-group", "done");
    await page.waitForFunction(() => location.hash === "#/search?q=SHOP-4120&group=done");
    await page.reload();
    await page.waitForSelector("#found-runs li[data-run]");
    assert.equal(await page.inputValue("#search-q"), "SHOP-4120");
    assert.equal(await page.inputValue("#search-group"), "done");
    // The group `done` is every end state (the manual run of the test before, when it ran, ended `nothing`).
    const done = (await f.call("GET", "/v1/search?q=SHOP-4120&group=done", f.keys.owner)).body.runs.map((r: { id: number; state: string }) => `${r.id} ${r.state}`);
    assert.ok(done.includes(`${shop.run} done`));
    assert.deepEqual(await page.locator("#found-runs li[data-run]").evaluateAll((els) => els.map((e) => `${e.getAttribute("data-run")} ${e.getAttribute("data-state")}`)), done);
    assert.equal(await page.locator("#found-cards").isHidden(), true);

    // The Runs view's filter is in the address too.
    await showView(page, "runs");
    await page.waitForSelector("#filter-state option[value=done]", { state: "attached" });
    await page.selectOption("#filter-state", "done");
    await page.waitForFunction(() => location.hash === "#/runs?state=done");
    await page.reload();
    await page.waitForSelector("#recent-runs li[data-run]");
    assert.equal(await page.inputValue("#filter-state"), "done");
    await page.waitForFunction(() => document.querySelector("#runs-reach")?.textContent === "The hub looked through every run.");
    const ended = (await f.call("GET", "/v1/state?state=done", f.keys.owner)).body.runs.map((r: { id: number }) => String(r.id));
    assert.ok(ended.includes(String(shop.run)));
    assert.deepEqual(await page.locator("#recent-runs li[data-run]").evaluateAll((els) => els.map((e) => e.getAttribute("data-run"))), ended);
  } finally {
    await context.close();
  }
});

test("a run's page links to the event that started it and the cards it asked; a card links to its run", { skip }, async () => {
  // GET /v1/cards/:id: one card whatever its state (a closed one the state no longer lists too).
  const one = await f.call("GET", `/v1/cards/${shop.card}`, f.keys.owner);
  assert.deepEqual([one.status, one.body.card.id, one.body.card.run, one.body.card.title], [200, shop.card, shop.run, "Refund the order?"]);
  // A card pushed out of the state's recent closed cards by newer ones is read from GET /v1/cards/:id.
  const told: number[] = [];
  for (let i = 0; i < 21; i++) {
    const r = await f.call("POST", "/v1/tell", f.keys.source, { key: `old-${i}`, title: `Old news ${i}`, text: "read and done" });
    told.push(r.body.card);
    await f.call("POST", `/v1/cards/${r.body.card}/resolve`, f.keys.owner, {});
  }
  const state = await f.state();
  assert.equal([...state.cards, ...state.recentCards].some((c) => c.id === told[0]), false);
  const { context, page } = await signedIn(browser, f);
  try {
    await showView(page, `runs/${shop.run}`);
    await page.waitForSelector(`#run-cards li[data-card="${shop.card}"]`);
    assert.deepEqual(await page.locator("#run-cards li").evaluateAll((els) => els.map((e) => [e.querySelector("a")!.getAttribute("href"), e.textContent])),
      [[`#/needs/${shop.card}`, `Refund the order? · Card #${shop.card}`]]);
    assert.equal(await page.locator("#run-event").textContent(), `Started by event #${shop.event}`);
    assert.equal(await page.locator(".started-by").textContent(), `Started by event #${shop.event} · SHOP-4120 — deploy SHOP-4120`);

    // The event: the Events view shows that one event only, and a way back to all of them.
    await page.click("#run-event");
    await page.waitForFunction((id) => location.hash === `#/events?event=${id}`, shop.event);
    await page.waitForFunction((id) => [...document.querySelectorAll("#events li[data-event]")].map((li) => li.getAttribute("data-event")).join() === String(id), shop.event);
    assert.equal(await page.locator("#events-one").textContent(), `Showing event #${shop.event} only. Show all events`);
    await page.click("#events-all");
    await page.waitForSelector(`#events li[data-event="${unrouted}"]`);
    assert.equal(await page.locator("#events-one").isHidden(), true);

    // The card: its own page, with the link back to its run.
    await showView(page, `runs/${shop.run}`);
    await page.click(`#run-cards li[data-card="${shop.card}"] a`);
    await page.waitForSelector(`#asks li#card-${shop.card}`);
    assert.equal(await page.locator("h1").textContent(), `Card #${shop.card}`);
    assert.deepEqual(await page.locator("#asks li").evaluateAll((els) => els.map((e) => e.id)), [`card-${shop.card}`]);
    assert.equal(await page.locator(`#card-${shop.card} a.run-link`).getAttribute("href"), `#/runs/${shop.run}`);
    await page.click(`#card-${shop.card} a.run-link`);
    await page.waitForSelector(`#run-cards li[data-card="${shop.card}"]`);
    // In "Needs you" too, each card links to its run.
    await showView(page, "needs");
    await page.waitForSelector(`#asks li#card-${shop.card} a.run-link[href="#/runs/${shop.run}"]`);
    // A card the state no longer lists: read from the hub, shown closed.
    await showView(page, `needs/${told[0]}`);
    await page.waitForSelector(`#asks li#card-${told[0]}[data-state=closed]`);
    assert.equal(await page.locator(`#card-${told[0]} h3`).textContent(), "FYIOld news 0");
    assert.deepEqual(await axeViolations(page), []);
  } finally {
    await context.close();
  }
});

test("bulk: several running runs stopped after a confirmation, several cards resolved", { skip }, async () => {
  const a = await runOnce(f, "BULK-1", null);
  const b = await runOnce(f, "BULK-2", null);
  const c1 = await askCard(f, "BULKCARD-1", { title: "Bulk card one", options: ["Yes", "No"] });
  const c2 = await askCard(f, "BULKCARD-2", { title: "Bulk card two", options: ["Yes", "No"] });
  const { context, page } = await signedIn(browser, f);
  try {
    await showView(page, "search?q=BULK&group=running");
    await page.waitForSelector(`#found-runs input[data-run="${b.run}"]`);
    assert.equal(await page.locator("#bulk-stop").isHidden(), true);
    await page.check(`#found-runs input[data-run="${a.run}"]`);
    await page.check(`#found-runs input[data-run="${b.run}"]`);
    assert.equal(await page.locator("#bulk-stop").textContent(), "Stop selected runs (2)");
    await page.click("#bulk-stop");
    assert.equal(await page.locator("#bulk-stop-confirm p").textContent(), "Stop these 2 runs? What the agents are doing is cut off");
    // Nothing is stopped before the confirmation.
    assert.deepEqual((await f.state()).active.filter((r) => r.id === a.run || r.id === b.run).map((r) => r.state), ["running", "running"]);
    await page.click("#bulk-stop-yes");
    await page.waitForFunction(() => document.querySelector("#bulk-message")?.textContent === "Asked 2 runs to stop");
    const s = await f.state();
    assert.deepEqual([a.run, b.run].map((id) => [...s.active, ...s.runs].find((r) => r.id === id)!.state), ["stopping", "stopping"]);

    await showView(page, "search?q=Bulk%20card");
    await page.waitForSelector(`#found-cards input[data-card="${c2}"]`);
    await page.check(`#found-cards input[data-card="${c1}"]`);
    await page.check(`#found-cards input[data-card="${c2}"]`);
    await page.click("#bulk-resolve");
    await page.waitForFunction(() => document.querySelector("#bulk-message")?.textContent === "Resolved 2 cards");
    const after = await f.state();
    assert.equal(after.cards.some((c) => c.id === c1 || c.id === c2), false);
    assert.deepEqual(after.recentCards.filter((c) => c.id === c1 || c.id === c2).map((c) => c.state), ["closed", "closed"]);
    // The worker ends the stopped runs, so later tests have the rule's slots (parallel 3) for runs they make.
    for (const r of [a, b]) await f.call("POST", `/v1/runs/${r.run}/result`, r.token, { outcome: "nothing" });
  } finally {
    await context.close();
  }
});

test("bulk stop in the Runs list: boxes, one confirmation naming how many, the outcome per run", { skip }, async () => {
  const a = await runOnce(f, "LIST-1", null);
  const b = await runOnce(f, "LIST-2", null);
  const { context, page } = await signedIn(browser, f);
  try {
    await showView(page, "runs");
    await page.waitForSelector(`#active-runs input[data-run="${b.run}"]`);
    assert.equal(await page.locator("#runs-stop").isHidden(), true);
    assert.equal(await page.locator(`#active-runs input[data-run="${a.run}"]`).getAttribute("aria-label"), `Select run #${a.run}`);
    // With the keyboard: Tab to the box, Space ticks it.
    await page.focus(`#active-runs input[data-run="${a.run}"]`);
    await page.keyboard.press("Space");
    await page.check(`#active-runs input[data-run="${b.run}"]`);
    assert.equal(await page.locator("#runs-stop").textContent(), "Stop selected runs (2)");
    await page.click("#runs-stop");
    assert.equal(await page.locator("#runs-stop-confirm p").textContent(), "Stop these 2 runs? What the agents are doing is cut off");
    assert.equal(await page.evaluate(() => document.activeElement?.id), "runs-stop-yes");
    assert.deepEqual(await axeViolations(page), []);
    // Nothing is stopped before the confirmation; run b ends on its own meanwhile (its worker sent its receipt).
    assert.deepEqual((await f.state()).active.filter((r) => r.id === a.run || r.id === b.run).map((r) => r.state), ["running", "running"]);
    await f.call("POST", `/v1/runs/${b.run}/result`, b.token, { outcome: "done", summary: "finished first" });
    await page.waitForFunction((id) => !document.querySelector(`#active-runs li[data-run="${id}"]`), b.run);
    assert.equal(await page.locator("#runs-stop-confirm p").textContent(), "Stop these 2 runs? What the agents are doing is cut off");
    await page.keyboard.press("Enter");
    await page.waitForSelector("#runs-stop-results li");
    assert.deepEqual(await page.locator("#runs-stop-results li").allTextContents(), [
      `Run #${a.run}: asked to stop; its worker ends it`,
      `Run #${b.run}: had already ended`,
    ]);
    assert.equal(await page.locator(".bulk-results p").textContent(), "Asked the run to stop");
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), "In progress");
    const s = await f.state();
    assert.equal([...s.active, ...s.runs].find((r) => r.id === a.run)!.state, "stopping");
    assert.equal(await page.locator("#runs-stop").isHidden(), true);
    // The worker ends the stopped run, so later tests start from runs they make.
    await f.call("POST", `/v1/runs/${a.run}/result`, a.token, { outcome: "nothing" });
  } finally {
    await context.close();
  }
});

test("axe: the Events, Search and Runs views, a run's page, a card's page and one event at 390 px and desktop, in Chinese and English; screenshots", { skip }, async () => {
  // CONSOLE_SHOTS=<folder> keeps the pictures to look at; else they go with the test's temporary folder.
  const out = process.env.CONSOLE_SHOTS ?? join(tempDir(), "shots");
  mkdirSync(out, { recursive: true });
  // A run in progress, so that the Runs list has a box to select.
  const live = await runOnce(f, "SHOT-1", null);
  /** What each view waits for before it is looked at. */
  const ready: Record<string, string> = {
    events: "#events li", "search?q=SHOP-4120": "#found-cards li", runs: `#active-runs input[data-run="${live.run}"]`,
    [`runs/${shop.run}`]: "#run-cards li", [`needs/${shop.card}`]: `#card-${shop.card}`, [`events?event=${shop.event}`]: "#events-one:not([hidden])",
  };
  for (const locale of ["zh-CN", "en-US"]) {
    for (const width of [390, 1280]) {
      const { context, page } = await signedIn(browser, f, { width, height: 844, locale });
      try {
        for (const view of Object.keys(ready)) {
          await showView(page, view);
          await page.waitForSelector(ready[view]!);
          // A form of "run this again" open, as the reader sees it.
          if (view === "events") await page.locator(`#events li[data-event="${shop.event}"] .again-open`).click();
          // A run selected and the stop's confirmation open.
          if (view === "runs") {
            await page.check(`#active-runs input[data-run="${live.run}"]`);
            await page.click("#runs-stop");
          }
          assert.deepEqual(await axeViolations(page), [], `${view} ${width} ${locale}`);
          const scroll = await page.evaluate(() => document.documentElement.scrollWidth);
          assert.ok(scroll <= width, `${view} at ${width} scrolls sideways (${scroll})`);
          const file = join(out, `${view.replace(/[?=/]/g, "-")}-${width}-${locale}.png`);
          await page.screenshot({ path: file, fullPage: true });
        }
        if (locale === "zh-CN") assert.equal(await page.locator("nav a[data-route=events]").textContent(), "事件");
      } finally {
        await context.close();
      }
    }
  }
  process.stdout.write(`screenshots: ${out}\n`);
});
