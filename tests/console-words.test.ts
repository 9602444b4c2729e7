/**
 * The console as its owner reads it, in English and in Chinese (issue 30, from `npm run console:screenshots`): a run's
 * timeline in plain words — no session keys, refusal codes or event ids, usage as grouped tokens and money, the error
 * on the try it belongs to; the Events view names an event the hub made by what made it, not by its source and type;
 * the search shows a run that ended well after a failed try without that error, and a card's state in words; a rule
 * paused by the owner says "you"; the spending chart writes money as the rest of the console does; a tool's approval
 * mode in words. Every expected text is exact. Skipped, with the reason, only where Chromium is missing outside CI.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { askCard, axeViolations, browserMissing, consoleRules, launch, runOnce, signedIn, showView } from "./console-kit.js";
import { copyExample } from "./declarative-helpers.js";
import { makeHome, serveFixture, type Fixture } from "./helpers.js";

const missing = browserMissing();
const skip = missing ?? false;
let browser: Browser;
let f: Fixture;
/** How far the hub's clock is ahead of the real one (a retry's 5 minutes pass at once). */
let ahead = 0;
/** A run waiting for its retry after a refused tool call; a done run with usage; a run failed once then done. */
let runs: { waiting: number; done: number; retried: number; retryAt: string };
let manualEvent: number;

/** `MM-DD HH:mm:ss` of an ISO time in UTC, as the console shows times in a UTC browser. */
const utc = (iso: string) => `${iso.slice(5, 10)} ${iso.slice(11, 19)}`;

before(async () => {
  f = await serveFixture(makeHome(consoleRules), { clock: () => Date.now() + ahead });
  copyExample(f.home.plugins);
  await f.call("POST", "/v1/plugins/reload", f.keys.owner);
  // A run whose tool call the worker's tool host refused (no such plugin), then failed: it waits for its retry.
  const w = await runOnce(f, "W-1", null);
  const refused = { tool: "deploy.rollback", argsDigest: `sha256:${"0".repeat(64)}`, preview: "{}", refused: { code: "tools.unknown_plugin", reason: "no such tool plugin: deploy" } };
  assert.equal((await f.call("POST", `/v1/runs/${w.run}/tools/calls`, w.token, refused)).status, 200);
  await f.call("POST", `/v1/runs/${w.run}/result`, w.token, { outcome: "failed", error: "npm test: 3 failing" });
  const done = await runOnce(f, "D-1", { outcome: "done", summary: "Fixed the null check", usage: { input: 182_000, output: 9_400, cost: 1.42 } });
  // A run that fails, waits its 5 minutes (the clock moved on) and is done on its retry.
  const r = await runOnce(f, "R-1", { outcome: "failed", error: "connect ETIMEDOUT" });
  const state = await f.state();
  const waiting = [...state.active, ...state.runs].find((x) => x.id === w.run)!;
  ahead += 6 * 60_000;
  f.running.hub.arm();
  let job: { run: number; token: string } | null = null;
  for (let i = 0; i < 50 && job?.run !== r.run; i++) {
    job = (await f.call("GET", `/v1/work?claim=retry-${i}&wait=0`, f.keys.worker)).body.job;
    if (job && job.run !== r.run) await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "nothing" });
    if (!job) await new Promise((res) => setTimeout(res, 50));
  }
  assert.equal(job?.run, r.run, "the retry is claimed");
  await f.call("POST", `/v1/runs/${r.run}/started`, job!.token, { session: "sess-R-1" });
  await f.call("POST", `/v1/runs/${r.run}/result`, job!.token, { outcome: "done", summary: "Passed on retry", usage: { input: 40_000, output: 1_200, cost: 0.3 } });
  runs = { waiting: w.run, done: done.run, retried: r.run, retryAt: utc(waiting.readyAt!) };
  // A manual run: its event is the hub's own; then a card to find, and the rule `nightly` paused by the owner.
  manualEvent = (await f.call("POST", "/v1/rules/alerts/run", f.keys.owner, { subject: "M-1", reason: "check again" })).body.event;
  await askCard(f, "Q-1", { title: "Refund Q-1?", options: ["Yes", "No"] });
  await f.call("POST", "/v1/rules/nightly/pause", f.keys.owner, { reason: "holiday" });
  if (!missing) browser = await launch();
});
after(async () => {
  await browser?.close();
  await f?.close();
});

/** The timeline of run `run` as the page shows it (its words, no times). */
async function timelineOf(page: Page, run: number): Promise<string[]> {
  await showView(page, `runs/${run}`);
  await page.waitForFunction((r) => document.querySelector("h1")?.textContent?.includes(String(r)) && document.querySelectorAll("#timeline li").length > 3, run);
  return page.locator("#timeline li .said").allTextContents();
}

test("a run's timeline in plain words, in English and Chinese: no session key or refusal code, usage as tokens and money, the error on its try", { skip }, async () => {
  const expected = {
    "en-US": {
      waiting: [
        "event from shop: W-1 — deploy W-1", "queued for a worker", "picked up by w1 · try 1", "the agent started · session sess-W-1",
        "tool deploy.rollback refused: no tool plugin of that name is installed", `failed: npm test: 3 failing · retry at ${runs.retryAt}`,
      ],
      done: "done — Fixed the null check · used 191,400 tokens · USD 1.4200",
      retried: [
        "event from shop: R-1 — deploy R-1", "queued for a worker", "picked up by w1 · try 1", "the agent started · session sess-R-1",
        // The error is said once, on the first try; the second try ends done with what it used.
        "queued again for a worker", "picked up by w1 · try 2 · continues session sess-R-1", "the agent started · session sess-R-1",
        "done — Passed on retry · used 41,200 tokens · USD 0.3000",
      ],
    },
    "zh-CN": {
      waiting: [
        "来自 shop 的事件：W-1——deploy W-1", "进入队列，等接单程序来领", "w1 领走了 · 第 1 次尝试", "Agent 开始干活 · 会话 sess-W-1",
        "工具 deploy.rollback 被拒绝：没有装这个名字的工具插件", `没跑成：npm test: 3 failing · ${runs.retryAt} 再试`,
      ],
      done: "完成 — Fixed the null check · 用了 191,400 个词元 · 1.4200 美元",
      retried: [
        "来自 shop 的事件：R-1——deploy R-1", "进入队列，等接单程序来领", "w1 领走了 · 第 1 次尝试", "Agent 开始干活 · 会话 sess-R-1",
        "重新排队，等接单程序来领", "w1 领走了 · 第 2 次尝试 · 接着会话 sess-R-1", "Agent 开始干活 · 会话 sess-R-1",
        "完成 — Passed on retry · 用了 41,200 个词元 · 0.3000 美元",
      ],
    },
  } as const;
  for (const locale of ["en-US", "zh-CN"] as const) {
    const { context, page } = await signedIn(browser, f, { locale });
    try {
      const e = expected[locale];
      // Its first try (its retry came due with the clock moved on and was ended with nothing).
      assert.deepEqual((await timelineOf(page, runs.waiting)).slice(0, 6), e.waiting, locale);
      assert.equal((await timelineOf(page, runs.done)).at(-1), e.done, locale);
      const retried = await timelineOf(page, runs.retried);
      assert.deepEqual(retried.filter((l) => !l.includes("ETIMEDOUT")), e.retried, locale);
      // The failure of try 1 is told between its start and the requeue, and nowhere else.
      assert.deepEqual(retried.map((l, i) => (l.includes("ETIMEDOUT") ? i : -1)).filter((i) => i >= 0), [4], locale);
      // Its row, on its page and in the Runs list, does not call it failed.
      assert.equal(await page.locator(".run-detail .error-line").count(), 0, locale);
      await showView(page, "runs");
      await page.waitForSelector(`#recent-runs li[data-run="${runs.retried}"]`);
      assert.equal(await page.locator(`#recent-runs li[data-run="${runs.retried}"] .error-line`).count(), 0, locale);
    } finally {
      await context.close();
    }
  }
});

/** Words each view shows, by the reader's language. */
const words = {
  "en-US": {
    manual: "made by the hub: a manual run", tried: "alerts · R-1 · tried 2 times · w1", card: "open", paused: "paused (by you, since ",
    money: /^USD \d+\.\d{2}$/, alerts: "USD 1.73", approval: ["approval: asks you first", "approval: asks you first"],
  },
  "zh-CN": {
    manual: "中枢产生的：手动运行", tried: "alerts · R-1 · 尝试了 2 次 · w1", card: "等你处理", paused: "已暂停（你，",
    money: /^\d+\.\d{2} 美元$/, alerts: "1.73 美元", approval: ["审批：每次先问你", "审批：每次先问你"],
  },
} as const;

/** Runs `check` on a page signed in, once in English and once in Chinese. */
async function inBoth(check: (page: Page, e: (typeof words)[keyof typeof words], locale: string) => Promise<void>): Promise<void> {
  for (const locale of ["en-US", "zh-CN"] as const) {
    const { context, page } = await signedIn(browser, f, { locale });
    try {
      await check(page, words[locale], locale);
    } finally {
      await context.close();
    }
  }
}

test("Events: an event the hub made says what made it, with its time, and neither its source nor its type", { skip }, () => inBoth(async (page, e, locale) => {
  await showView(page, "events");
  const ev = page.locator(`#events li[data-event="${manualEvent}"] .run-head .meta`);
  await ev.waitFor();
  assert.match((await ev.textContent())!, new RegExp(`^\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2} · ${e.manual}$`), locale);
}));

test("Search: a run done on its retry shows no error of its first try and says its tries; a card's state in words", { skip }, () => inBoth(async (page, e, locale) => {
  await showView(page, "search?q=R-1");
  const found = page.locator(`#found-runs li[data-run="${runs.retried}"]`);
  await found.waitFor();
  assert.equal(await found.locator(".error-line").count(), 0, locale);
  assert.match((await found.locator(".meta").textContent())!, new RegExp(`^${e.tried} · `), locale);
  await showView(page, "search?q=Q-1");
  await page.waitForSelector("#found-cards li[data-card]");
  assert.equal((await page.locator("#found-cards li[data-card] .meta").first().textContent())!.split(" · ")[0], e.card, locale);
}));

test("Rules: a rule the owner paused says it was you", { skip }, () => inBoth(async (page, e, locale) => {
  await showView(page, "rules");
  await page.waitForSelector(".pause-info");
  const said = (await page.locator(".pause-info").first().textContent())!;
  assert.ok(said.startsWith(e.paused), `${locale}: ${said}`);
}));

test("Spending: the charts write money as the rest of the console does, never with a dollar sign in Chinese", { skip }, () => inBoth(async (page, e, locale) => {
  await showView(page, "spending");
  await page.waitForSelector(".chart .bar-value");
  const values = await page.locator(".chart .bar-value").allTextContents();
  assert.deepEqual(values.filter((v) => !e.money.test(v)), [], locale);
  const byRule = page.locator(".chart").nth(1);
  assert.equal(await byRule.locator(".bar-row", { hasText: "alerts" }).locator(".bar-value").textContent(), e.alerts, locale);
}));

test("Plugins: a tool's approval in words, not `prompt`", { skip }, () => inBoth(async (page, e, locale) => {
  await showView(page, "plugins");
  await page.waitForSelector("text=example.http_fetch");
  const modes = await page.locator(".state").allTextContents();
  assert.deepEqual(modes.filter((m) => m.startsWith(e.approval[0].slice(0, 3))), e.approval, locale);
}));

test("axe finds no serious or critical violation on every view and the signed-out page at 390 px, in Chinese and English, light and dark", { skip }, async () => {
  const views = ["needs", "runs", `runs/${runs.retried}`, "events", "search?q=R-1", "rules", "workers", "spending", "plugins", "plugins/example"];
  const found: string[] = [];
  for (const locale of ["zh-CN", "en-US"]) {
    for (const dark of [false, true]) {
      const what = `${locale} ${dark ? "dark" : "light"}`;
      const { context, page } = await signedIn(browser, f, { width: 390, height: 844, locale, dark });
      try {
        for (const view of views) {
          await showView(page, view);
          await page.waitForSelector(view.startsWith("runs/") ? "#timeline li" : "main h1");
          await page.waitForFunction(() => !document.querySelector("[aria-busy=true]"));
          for (const v of await axeViolations(page)) found.push(`${view} ${what}: ${v}`);
          const wide = await page.evaluate(() => document.documentElement.scrollWidth);
          if (wide > 390) found.push(`${view} ${what}: ${wide} px wide`);
        }
        const bare = await browser.newContext({ viewport: { width: 390, height: 844 }, locale, colorScheme: dark ? "dark" : "light" });
        const out = await bare.newPage();
        await out.goto(`${f.url}/console/`);
        await out.waitForSelector("main.signed-out h1");
        for (const v of await axeViolations(out)) found.push(`signed-out ${what}: ${v}`);
        await bare.close();
      } finally {
        await context.close();
      }
    }
  }
  assert.deepEqual(found, []);
});
