/**
 * The console's plugins in a real browser (issues 17 and 18): headless Debian Chromium through playwright-core against
 * a real hub on 127.0.0.1. The list of every plugin with every error (file, JSON pointer, reason), live when the hub's
 * watcher or the Reload button reloads; a declarative plugin's panel rendered from every node type, its button and its
 * form becoming events a rule routes to runs; hostile panel content (script, raw HTML, javascript: links, direction
 * marks) shown as text; the settings centre, with a secret never in the page; an axe-core check of both views, light
 * and dark, at desktop and phone width. Skipped, with the reason, only where Chromium is missing outside CI.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { axeViolations, browserMissing, consoleRules, launch, runOnce, signedIn, showView } from "./console-kit.js";
import { hubFixture, type Fixture } from "./helpers.js";
import { copyExample, editJson, routedEvents, writeFiles } from "./declarative-helpers.js";

const missing = browserMissing();
const skip = missing ?? false;
let browser: Browser;
let f: Fixture;

const rules = {
  ...consoleRules,
  // "alerts" uses the example plugin's prompt: its runs' cards may show that plugin's card templates (rules.ts templateTied).
  rules: [...consoleRules.rules.map((r) => (r.name === "alerts" ? { ...r, promptRef: "example/writer" } : r)), { name: "panel", when: { source: "plugin:example", types: ["action.*", "form.*"] }, to: "bot", cwd: "/tmp", prompt: "the owner pressed something" }],
};

before(async () => {
  if (missing) return;
  browser = await launch();
  f = await hubFixture(rules);
  copyExample(f.home.plugins);
  assert.equal((await f.call("POST", "/v1/plugins/reload", f.keys.owner)).status, 200);
});
after(async () => {
  await browser?.close();
  await f?.close();
});

/** Collects what the page logs as errors and uncaught exceptions. */
function errorsOf(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error" && !/status of (400|404|409|401)/.test(m.text())) errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(e.message));
  return errors;
}

/** The texts of the errors a plugin's entry lists: [file, pointer, reason]. */
const errorRows = (page: Page, id: string) => page.locator(`li[data-plugin="${id}"] .plugin-errors li`).evaluateAll((els) => els.map((e) => [
  e.querySelector(".err-file")?.textContent ?? "", e.querySelector(".err-pointer")?.textContent ?? "", e.querySelector(".err-reason")?.textContent ?? "",
]));

test("every plugin with its status and every error; live when the watcher reloads, and from the Reload button", { skip }, async () => {
  writeFiles(join(f.home.plugins, "weather"), {
    "plugin.json": { id: "weather", name: "Weather", version: "0.2.0", apiVersion: "1.0", provides: { panels: ["today"] } },
    "panels/today.json": { id: "today", title: "Today", body: [{ type: "gauge", value: 3 }, { type: "list", items: [], extra: 1 }] },
  });
  await f.call("POST", "/v1/plugins/reload", f.keys.owner);
  const { context, page } = await signedIn(browser, f);
  const errors = errorsOf(page);
  try {
    await showView(page, "plugins", "nav");
    await page.waitForSelector("#plugin-list:not([aria-busy]) li[data-plugin=weather]");
    const listed = (await f.call("GET", "/v1/plugins", f.keys.owner)).body as { kind: string; manifest: { id: string } }[];
    assert.deepEqual(
      await page.locator("#plugin-list > li").evaluateAll((els) => els.map((e) => [(e as HTMLElement).dataset.kind, (e as HTMLElement).dataset.plugin])),
      listed.map((p) => [p.kind, p.manifest.id]),
      "every plugin of every kind, in the hub's order");
    assert.equal(await page.locator("li[data-plugin=example] h3").textContent(), "Example declarative loaded");
    assert.equal(await page.locator("li[data-plugin=weather] h3").textContent(), "Weather declarative refused");
    assert.deepEqual(await errorRows(page, "weather"), [
      ["panels/today.json", "/body/0/type", 'unknown type "gauge" (known: section, list, kv, form, markdown, doc-ref, actions, chart-lite)'],
      ["panels/today.json", "/body/1/extra", "unknown field"],
    ]);
    assert.equal(await page.locator("li[data-plugin=example] h3 a").getAttribute("href"), "#/plugins/example");

    // A broken edit on disk: the hub's watcher reloads it, and the open page shows it without reloading.
    await page.evaluate(() => ((window as unknown as { mark: number }).mark = 1));
    editJson(join(f.home.plugins, "example"), "panels/main.json", (p) => ({ ...p, body: [...p.body, { type: "markdown", markdown: "ok", html: "<b>" }] }));
    await page.waitForSelector("li[data-plugin=example].rejected", { timeout: 15_000 });
    assert.deepEqual(await errorRows(page, "example"), [["panels/main.json", "/body/7/html", "unknown field"]]);
    assert.equal(await page.locator("li[data-plugin=example] h3").textContent(), "Example declarative refused");
    // Fixed, and the refused weather folder gone (never registered: nothing to unload): the Reload button says what it
    // did, unless the watcher was first.
    editJson(join(f.home.plugins, "example"), "panels/main.json", (p) => ({ ...p, body: p.body.slice(0, 7) }));
    rmSync(join(f.home.plugins, "weather"), { recursive: true });
    await page.click("#reload");
    await page.waitForFunction(() => !document.querySelector("li[data-plugin=weather]") && !document.querySelector("li[data-plugin=example].rejected"), null, { timeout: 15_000 });
    assert.match(await page.locator("#reload-report").textContent() ?? "", /^(changed, replaced: example|Nothing changed\.)$/);
    assert.equal(await page.evaluate(() => (window as unknown as { mark?: number }).mark), 1, "no page reload");
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

test("a panel of every node type; its button and its form become events a rule routes to runs", { skip }, async () => {
  const { context, page } = await signedIn(browser, f);
  const errors = errorsOf(page);
  try {
    await showView(page, "plugins/example");
    const panel = page.locator("#panel-main");
    await panel.waitFor();
    assert.equal(await page.locator("h1").textContent(), "Example plugin:example");
    assert.equal(await panel.locator("> h2").textContent(), "Example");
    assert.deepEqual(await panel.locator(".md > *").evaluateAll((els) => els.map((e) => [e.tagName, e.textContent])), [["H4", "About"], ["P", "This panel shows every node of the vocabulary."]]);
    assert.deepEqual(await panel.locator(".ui-kv dl > div").evaluateAll((els) => els.map((e) => [e.querySelector("dt")!.textContent, e.querySelector("dd")!.textContent])), [["Version", "0.1.0"], ["Tools", "2"]]);
    assert.deepEqual(await panel.locator(".ui-list li").allTextContents(), ["One", "Two"]);
    assert.equal(await panel.locator(".ui-doc-ref").textContent(), "documentThe last notenote.md");
    assert.equal(await panel.locator(".chart [role=img]").getAttribute("aria-label"), "Calls: Mon 3, Tue 5");
    assert.deepEqual(await panel.locator(".ui-section > h3").allTextContents(), ["Ask"]);
    assert.equal(await panel.locator(".ui-form h4").textContent(), "Ask for a report");

    const seq = f.seq();
    await panel.locator("button[data-action=refresh]").click();
    await page.waitForFunction(() => /^Sent as event #\d+; rule panel takes it\.$/.test(document.querySelector("#panel-main .ui-actions .message")?.textContent ?? ""));
    // An empty required field: the browser asks for it, nothing is sent.
    await panel.locator(".ui-form button[type=submit]").click();
    assert.equal(await panel.locator("#uf1-topic").evaluate((e) => (e as HTMLInputElement).validity.valueMissing), true);
    await panel.locator("#uf1-topic").fill("Q3 <b>report</b>");
    await panel.locator(".ui-form button[type=submit]").click();
    await page.waitForFunction(() => /^Sent as event #\d+; rule panel takes it\.$/.test(document.querySelector("#panel-main .ui-form .message")?.textContent ?? ""));
    // The card template's button too.
    await page.locator("#card-template-note button[data-action=ack]").click();
    await page.waitForFunction(() => /^Sent as event #\d+/.test(document.querySelector("#card-template-note .message")?.textContent ?? ""));
    assert.ok(f.seq() > seq);
    const seen = await routedEvents(f, "panel");
    assert.deepEqual(seen, [
      ["plugin:example", "action.ack", "card/note", "Got it", null],
      ["plugin:example", "action.refresh", "panel/main", "Refresh", null],
      ["plugin:example", "form.ask", "panel/main", "Ask for a report", '{"topic":"Q3 <b>report</b>"}'],
    ]);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

test("hostile panel content is text: no script, no raw HTML, links only http(s), direction marks shown", { skip }, async () => {
  const md = [
    "# Title <script>window.pwned=1</script>",
    '<img src=x onerror="window.pwned=2"> <iframe src="javascript:window.pwned=3"></iframe>',
    "[click](javascript:window.pwned=4) [data](data:text/html,<script>x</script>) [fine](https://ok.example/a?b=1) **bold** `<code>`",
    "- <svg onload=\"window.pwned=5\">",
    "```",
    "<script>window.pwned=6</script>",
    "```",
    "marked\u200f\u061c end",
  ].join("\n");
  writeFiles(join(f.home.plugins, "hostile"), {
    "plugin.json": { id: "hostile", name: "<b>Hostile</b>", version: "1.0.0", apiVersion: "1.0", provides: { panels: ["main"] } },
    "panels/main.json": { id: "main", title: "<script>window.pwned=7</script>", body: [
      { type: "markdown", markdown: md },
      { type: "kv", kv: [["<i>k</i>", "javascript:window.pwned=8"]] },
      { type: "list", items: ["<a href=\"javascript:window.pwned=9\">x</a>", "rlm\u200f"] },
      { type: "actions", actions: [{ id: "go", label: "<img src=x onerror=window.pwned=10>" }] },
      { type: "doc-ref", docId: "javascript:window.pwned=11" },
    ] },
  });
  // A direction override is refused at load, with where it is.
  writeFiles(join(f.home.plugins, "bidi"), {
    "plugin.json": { id: "bidi", name: "bidi", version: "1.0.0", apiVersion: "1.0", provides: { panels: ["main"] } },
    "panels/main.json": { id: "main", title: "evil\u202Etxt.exe", body: [] },
  });
  const reload = (await f.call("POST", "/v1/plugins/reload", f.keys.owner)).body;
  assert.deepEqual(reload.loaded, ["hostile"]);
  assert.deepEqual(reload.rejected.map((r: { id: string; errors: string[] }) => [r.id, r.errors.length]), [["bidi", 1]]);
  const { context, page } = await signedIn(browser, f);
  const errors = errorsOf(page);
  try {
    await showView(page, "plugins");
    await page.waitForSelector("li[data-plugin=bidi] .plugin-errors li");
    assert.deepEqual(await errorRows(page, "bidi"), [["panels/main.json", "/title", "wrong format, expected one line, no control characters"]]);
    await showView(page, "plugins/hostile");
    const panel = page.locator("#panel-main");
    await panel.waitFor();
    assert.equal(await page.locator("h1 .said").textContent(), "<b>Hostile</b>");
    assert.equal(await panel.locator("> h2").textContent(), "<script>window.pwned=7</script>");
    assert.deepEqual(await panel.locator(".md > *").evaluateAll((els) => els.map((e) => [e.tagName, e.textContent])), [
      ["H3", "Title <script>window.pwned=1</script>"],
      ["P", '<img src=x onerror="window.pwned=2"> <iframe src="javascript:window.pwned=3"></iframe> click data fine bold <code>'],
      ["UL", '<svg onload="window.pwned=5">'],
      ["PRE", "<script>window.pwned=6</script>"],
      ["P", "marked⟦U+200F⟧⟦U+061C⟧ end"],
    ]);
    assert.equal(await panel.locator(".ui-list li").nth(1).textContent(), "rlm⟦U+200F⟧");
    assert.equal(await panel.locator("button[data-action=go]").textContent(), "<img src=x onerror=window.pwned=10>");
    const found = await page.evaluate(() => {
      const p = document.getElementById("panel-main")!;
      return {
        elements: [...p.querySelectorAll("script, img, iframe, svg, b, i, a:not([href^='https://ok.example/'])")].map((e) => e.tagName),
        links: [...p.querySelectorAll("a")].map((a) => [a.getAttribute("href"), a.getAttribute("rel"), a.textContent]),
        attributes: [...p.querySelectorAll("*")].flatMap((e) => [...e.attributes].map((a) => a.name)).filter((n) => n.startsWith("on") || n === "src" || n === "style"),
        pwned: (window as unknown as { pwned?: number }).pwned ?? null,
        isolated: [...p.querySelectorAll(".said")].every((e) => e.getAttribute("dir") === "auto" && getComputedStyle(e).unicodeBidi === "isolate"),
      };
    });
    assert.deepEqual(found, {
      elements: [], links: [["https://ok.example/a?b=1", "noopener noreferrer nofollow", "fine"]], attributes: [], pwned: null, isolated: true,
    });
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
    rmSync(join(f.home.plugins, "hostile"), { recursive: true });
    rmSync(join(f.home.plugins, "bidi"), { recursive: true });
    await f.call("POST", "/v1/plugins/reload", f.keys.owner);
  }
});

test("a doc-ref naming a workflow's file (run:<id>/<file>) links to the route that serves it; other ids stay text", { skip }, async () => {
  writeFiles(join(f.home.plugins, "docs"), {
    "plugin.json": { id: "docs", name: "Docs", version: "1.0.0", apiVersion: "1.0", provides: { panels: ["main"] } },
    "panels/main.json": { id: "main", title: "Docs", body: [
      { type: "doc-ref", docId: "run:12/draft.md", title: "The draft" },
      { type: "doc-ref", docId: "run:12/../etc" },
      { type: "doc-ref", docId: "note.md" },
    ] },
  });
  assert.deepEqual((await f.call("POST", "/v1/plugins/reload", f.keys.owner)).body.loaded, ["docs"]);
  const { context, page } = await signedIn(browser, f);
  const errors = errorsOf(page);
  try {
    await showView(page, "plugins/docs");
    const panel = page.locator("#panel-main");
    await panel.waitFor();
    assert.deepEqual(await panel.locator(".ui-doc-ref").evaluateAll((els) => els.map((e) => {
      const a = e.querySelector("a");
      return [e.textContent, a ? [a.getAttribute("href"), a.getAttribute("rel")] : null];
    })), [
      ["documentThe draftrun:12/draft.md", ["/v1/runs/12/artifacts/draft.md", "noopener"]],
      ["documentrun:12/../etc", null],
      ["documentnote.md", null],
    ]);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
    rmSync(join(f.home.plugins, "docs"), { recursive: true });
    await f.call("POST", "/v1/plugins/reload", f.keys.owner);
  }
});

test("the settings centre: a secret saved is never in the page; a value shows at once; hot or at the next reload said", { skip }, async () => {
  const secret = "ghp_console_secret_0123456789";
  const { context, page } = await signedIn(browser, f);
  const errors = errorsOf(page);
  try {
    await showView(page, "plugins/example");
    await page.waitForSelector("#settings:not([aria-busy]) li[data-key=token]");
    assert.equal(await page.locator("#settings-title").textContent(), "Settings · plugin:example");
    const token = page.locator("li[data-key=token]");
    assert.equal(await token.locator("input").getAttribute("type"), "password");
    assert.equal(await token.locator(".meta").last().textContent(), "not set Applies as soon as it is saved.");
    await token.locator("input").fill(secret);
    await token.locator("button[type=submit]").click();
    await page.waitForFunction(() => document.querySelector("li[data-key=token] .message")?.textContent === "Saved; in effect now.");
    const after = page.locator("li[data-key=token]");
    assert.equal(await after.locator("input").inputValue(), "", "never filled in again");
    assert.equal(await after.locator("input").getAttribute("placeholder"), "set; type to replace");
    assert.equal(await after.locator(".state").textContent(), "set");
    // Nowhere in the page, its storage or the answers the page read.
    assert.equal((await page.content()).includes(secret), false);
    assert.equal(await page.evaluate((s) => JSON.stringify({ ...localStorage }).includes(s) || document.body.innerText.includes(s), secret), false);
    assert.deepEqual((await f.call("GET", "/v1/plugins/example/settings", f.keys.owner)).body.settings[0], {
      key: "token", label: "GitHub token", type: "secret", effect: "hot", description: "A fine-grained token with read access to issues; stored only in the home's secrets file",
      options: null, default: null, value: null, set: true,
    });
    assert.match(readFileSync(f.home.secrets, "utf8"), new RegExp(`^AGENT_AUTOLOOP_PLUGIN_SECRET__example__token="${secret}"$`, "m"));

    const repo = page.locator("li[data-key=repo]");
    assert.equal(await repo.locator("input").getAttribute("placeholder"), "octocat/Hello-World");
    await repo.locator("input").fill("acme/widgets");
    await repo.locator("input").press("Enter");
    await page.waitForFunction(() => document.querySelector("li[data-key=repo] .message")?.textContent === "Saved; in effect from the next reload.");
    assert.equal(await page.locator("li[data-key=repo] input").inputValue(), "acme/widgets");
    // A refused value: the hub's words, nothing written.
    await page.locator("li[data-key=repo] input").fill("two\u2028lines");
    await page.locator("li[data-key=repo] button[type=submit]").click();
    await page.waitForFunction(() => document.querySelector("li[data-key=repo] .message.error"));
    assert.equal(await page.locator("li[data-key=repo] .message").textContent(), "Something went wrong: value: wrong format, expected one line, no control characters");
    assert.equal((await f.call("GET", "/v1/plugins/example/settings", f.keys.owner)).body.settings[1].value, "acme/widgets");
    // Cleared from the console.
    await page.locator("li[data-key=token] button.quiet").click();
    await page.waitForFunction(() => document.querySelector("li[data-key=token] .state")?.textContent === "not set");
    assert.equal((await f.call("GET", "/v1/plugins/example/settings", f.keys.owner)).body.settings[0].set, false);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

test("a receipt's ask names a card template: Needs you shows it whole, its button an event; a template not loaded is said so", { skip }, async () => {
  await runOnce(f, "tpl-1", {
    outcome: "done", summary: "asked with a template",
    ask: [{ title: "Ship it?", text: "The canary is green.", options: ["Yes", "No"], card: "example/note" }],
    notice: [{ title: "A notice", card: "example/ghost" }],
  });
  const cards = (await f.state()).cards.filter((c) => c.title === "Ship it?" || c.title === "A notice");
  assert.deepEqual(cards.map((c) => [c.title, c.template]).sort(), [["A notice", "example/ghost"], ["Ship it?", "example/note"]]);
  const { context, page } = await signedIn(browser, f);
  const errors = errorsOf(page);
  try {
    const ask = cards.find((c) => c.title === "Ship it?")!.id;
    const notice = cards.find((c) => c.title === "A notice")!.id;
    const tpl = page.locator(`#card-${ask} .card-template:not([aria-busy])`);
    await tpl.waitFor();
    assert.equal(await tpl.locator("h4").textContent(), "A note");
    assert.equal(await tpl.locator(".md").textContent(), "A note from the example plugin.");
    assert.deepEqual(await page.locator(`#card-${ask} button.option .said`).allTextContents(), ["Yes", "No"], "the card's own options stay");
    await tpl.locator("button[data-action=ack]").click();
    await page.waitForFunction((id) => /^Sent as event #\d+; rule panel takes it\.$/.test(document.querySelector(`#card-${id} .card-template .message`)?.textContent ?? ""), ask);
    assert.deepEqual(await routedEvents(f, "panel"), [["plugin:example", "action.ack", "card/note", "Got it", null]]);
    await page.waitForSelector(`#card-${notice} .card-template:not([aria-busy])`);
    assert.equal(await page.locator(`#card-${notice} .card-template`).textContent(), "card template example/ghost is not loaded");
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

test("axe-core finds no serious or critical violation in the plugin views and a card with a template, light and dark, at desktop and phone width", { skip }, async () => {
  writeFiles(join(f.home.plugins, "weather"), {
    "plugin.json": { id: "weather", name: "Weather", version: "0.2.0", apiVersion: "1.0", provides: { panels: ["today"] } },
    "panels/today.json": { id: "today", title: "Today", body: [{ type: "gauge" }] },
  });
  await f.call("POST", "/v1/plugins/reload", f.keys.owner);
  const found: string[] = [];
  for (const [dark, width, height] of [[false, 1280, 800], [true, 1280, 800], [false, 390, 844], [true, 390, 844]] as const) {
    const { context, page } = await signedIn(browser, f, { dark, width, height });
    try {
      // Needs you holds a card with a card template (the test before made it).
      for (const view of ["plugins", "plugins/example", "needs"]) {
        await showView(page, view);
        await page.waitForSelector(view === "plugins" ? "#plugin-list:not([aria-busy]) li[data-plugin=weather]" : view === "needs" ? ".card-template:not([aria-busy]) .ui-card" : "#panel-main");
        await page.waitForFunction(() => !document.querySelector("[aria-busy=true]"));
        const violations = await axeViolations(page);
        for (const v of violations) found.push(`${view} ${dark ? "dark" : "light"} ${width}: ${v}`);
      }
    } finally {
      await context.close();
    }
  }
  rmSync(join(f.home.plugins, "weather"), { recursive: true });
  assert.deepEqual(found, []);
});
