/**
 * Texts as data (issue 27 #2, Done when): a refusal carries its catalog message id and params beside the hub's words,
 * and a card the hub writes keeps its texts' ids and params in its facts. A hub in Chinese refuses, and the command
 * line, the owner console (headless Chromium) and the MCP server, each in English, say it in English from `code` +
 * `params`; a hub in English, and each client in Chinese, the other way. A budget card written by a Chinese hub shows
 * in English in an English console and command line. A code this client does not know (a newer hub) shows the hub's
 * own words.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { browserMissing, consoleRules, launch, runOnce, signedIn } from "./console-kit.js";
import { engine, hubFixture, type Fixture } from "./helpers.js";
import { shown, type Lang } from "../src/i18n/messages.js";
import type { OwnerCard, State } from "../src/protocol/responses.js";
import { publicFact } from "../src/host/facts.js";

const missing = browserMissing();
const bin = join(engine, "bin", "agent-autoloop.js");
let browser: Browser | undefined;
/** The hub in Chinese and the hub in English, each with a budget card (consoleRules: alerts, $20 a day). */
const hubs: Partial<Record<Lang, Fixture>> = {};

before(async () => {
  if (!missing) browser = await launch();
  for (const lang of ["zh", "en"] as const) {
    const f = await hubFixture(consoleRules, {}, "", { lang });
    hubs[lang] = f;
    await runOnce(f, `spend-${lang}`, { outcome: "done", usage: { cost: 25 } });
  }
});
after(async () => {
  await browser?.close();
  for (const f of Object.values(hubs)) await f.close();
});

/** The other language. */
const other = (lang: Lang): Lang => (lang === "zh" ? "en" : "zh");

/** The refusal of answering card 99, which no hub has, and a bad subject (a text inside a text: `{what}`). */
const noCard = { zh: "没有这张卡片：99", en: "no such card: 99" };
const badSubject = { zh: "subject：格式不对，应为 字母、数字和 # . _ : / @ -", en: "subject: wrong format, expected letters, digits and # . _ : / @ -" };
const budgetTitle = { zh: "「alerts」今天的预算用完了，已暂停", en: '"alerts" used up today\'s budget and is paused' };
const budgetOptions = { zh: ["这个周期内恢复（不再因预算暂停）", "保持暂停"], en: ["Resume for the rest of this period", "Keep paused"] };

/** The environment of a CLI or MCP child for hub `f`, in `lang` and time zone `tz`. */
function envFor(f: Fixture, lang: Lang, tz = "UTC"): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, AGENT_AUTOLOOP_HOME: f.home.dir, AGENT_AUTOLOOP_URL: f.url, AGENT_AUTOLOOP_LANG: lang, TZ: tz };
  return env;
}

function cli(f: Fixture, lang: Lang, args: string[], tz = "UTC"): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { env: envFor(f, lang, tz), encoding: "utf8" }, (e, stdout, stderr) =>
      resolve({ code: e ? Number((e as { code?: number }).code ?? 1) : 0, out: stdout.trim(), err: stderr.trim() }));
  });
}

/** The hub's budget card as GET /v1/state has it. */
async function budgetCard(f: Fixture): Promise<OwnerCard> {
  const state = (await f.call("GET", "/v1/state", f.keys.owner)).body as State;
  const card = state.cards.find((c) => c.rule === null && c.title.includes("alerts"));
  assert.ok(card, JSON.stringify(state.cards));
  return card;
}

/** When a budget card's period ends: the ISO time of its text's `until` (a `time.at` text; issue 30). */
function periodEnd(card: OwnerCard): string {
  const until = card.texts?.text?.params.until;
  assert.ok(typeof until === "object" && until.code === "time.at" && typeof until.params.at === "string", JSON.stringify(until));
  return until.params.at as string;
}

for (const hubLang of ["zh", "en"] as const) {
  const readerLang = other(hubLang);

  test(`a refusal of a hub in ${hubLang} carries its id and params, and its words are the hub's`, async () => {
    const f = hubs[hubLang]!;
    const res = await fetch(`${f.url}/v1/cards/99/answer`, { method: "POST", headers: { authorization: `Bearer ${f.keys.owner}`, "content-type": "application/json" }, body: '{"choice":0}' });
    assert.deepEqual([res.status, await res.json()], [404, { error: noCard[hubLang], code: "notFound.card", params: { id: 99 } }]);
    const bad = await fetch(`${f.url}/v1/events`, { method: "POST", headers: { authorization: `Bearer ${f.keys.source}`, "content-type": "application/json" }, body: JSON.stringify({ id: "x", type: "alert.x", subject: "a b" }) });
    assert.deepEqual([bad.status, await bad.json()], [400, {
      error: badSubject[hubLang], code: "field.pattern", params: { field: "subject", what: { code: "pattern.subject", params: {} } },
    }]);
  });

  test(`the budget card a hub in ${hubLang} wrote keeps its texts' ids and params, in its fact too`, async () => {
    const f = hubs[hubLang]!;
    const card = await budgetCard(f);
    assert.deepEqual([card.title, card.options], [budgetTitle[hubLang], budgetOptions[hubLang]]);
    assert.deepEqual(card.texts?.title, { code: "budget.title.day", params: { rule: "alerts" } });
    assert.deepEqual(card.texts?.options, [{ code: "budget.resume", params: {} }, { code: "budget.keep", params: {} }]);
    // The period's end is a time (`time.at`) each client words in its reader's zone (issue 30).
    assert.equal(card.texts?.text?.code, "budget.say");
    const until = card.texts?.text?.params.until as { code: string; params: { at: string; time: string; zone: string } };
    assert.deepEqual(until, { code: "time.at", params: { at: until.params.at, time: `${until.params.at.slice(0, 10)} 00:00`, zone: "UTC" } });
    assert.match(until.params.at, /^\d{4}-\d\d-\d\dT00:00:00\.000Z$/);
    assert.deepEqual(card.texts?.text?.params.resume, { code: "budget.resume", params: {} });
    // The fact as GET /v1/stream sends it.
    const facts = f.running.hub.store.factsAfter(0, Number.MAX_SAFE_INTEGER).map(publicFact);
    const written = facts.flatMap((x) => x.changes).filter(([table, id]) => table === "cards" && id === card.id).map(([, , row]) => (row as { texts?: unknown } | null)?.texts);
    assert.deepEqual(written[0], card.texts);
  });

  test(`the command line in ${readerLang} says a ${hubLang} hub's refusal and budget card in ${readerLang}`, async () => {
    const f = hubs[hubLang]!;
    const refused = await cli(f, readerLang, ["answer", "99", "0"]);
    assert.deepEqual([refused.code, refused.err], [1, `agent-autoloop${readerLang === "zh" ? "：" : ": "}${noCard[readerLang]}`]);
    // In this computer's zone (Shanghai, 8 hours after the rules' UTC), with the CLI's own command beside the card's option.
    const status = await cli(f, readerLang, ["status"], "Asia/Shanghai");
    assert.equal(status.code, 0, status.err);
    assert.match(status.out, new RegExp(`^  #\\d+ ask ${budgetTitle[readerLang].replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`, "m"));
    for (const [i, o] of budgetOptions[readerLang].entries()) assert.match(status.out, new RegExp(`^      ${i}\\) ${o.replace(/[()]/g, "\\$&")}`, "m"));
    const card = await budgetCard(f);
    const end = periodEnd(card);
    const local = `${new Date(Date.parse(end) + 8 * 3600_000).toISOString().slice(0, 10)} 08:00`;
    const lines = status.out.split("\n").map((l) => l.trim());
    assert.ok(lines.includes(readerLang === "zh"
      ? `已用 $25.00，预算 $20。已经领走的这一轮照常做完。这个周期到 ${local}（Asia/Shanghai 时间）结束。想在那之前让规则接着运行，选「这个周期内恢复（不再因预算暂停）」。`
      : `Used $25.00 of $20. Runs already claimed finish normally. This period ends ${local} (Asia/Shanghai time). To let the rule run again before then, choose “Resume for the rest of this period”.`), status.out);
    assert.ok(lines.includes(readerLang === "zh" ? "→ 或者：agent-autoloop resume alerts（同样算这个周期内恢复）" : "→ or: agent-autoloop resume alerts (also resumes it for the rest of the period)"), status.out);
  });

  test(`the MCP server in ${readerLang} says a ${hubLang} hub's refusal in ${readerLang}`, async () => {
    const f = hubs[hubLang]!;
    const client = new Client({ name: "test", version: "1" });
    try {
      await client.connect(new StdioClientTransport({ command: process.execPath, args: [bin, "mcp"], env: envFor(f, readerLang) as Record<string, string> }));
      const answer = await client.callTool({ name: "answer", arguments: { card: 99, choice: 0 } });
      assert.equal(answer.isError, true);
      assert.equal((answer.content as { text: string }[])[0]!.text, noCard[readerLang]);
    } finally {
      await client.close();
    }
  });

  test(`the console in ${readerLang} says a ${hubLang} hub's refusal and budget card in ${readerLang}`, { skip: missing ?? false }, async () => {
    const f = hubs[hubLang]!;
    const { context, page } = await signedIn(browser!, f, { locale: readerLang === "zh" ? "zh-CN" : "en-US", timezoneId: "Asia/Shanghai" });
    try {
      const card = await budgetCard(f);
      const el = page.locator(`#card-${card.id}`);
      await el.waitFor();
      assert.equal(await el.locator("h3").textContent(), budgetTitle[readerLang]);
      // The period's end in the browser's zone and language, and what to do in the console's words: no command (issue 30).
      const end = new Date(periodEnd(card));
      const local = new Intl.DateTimeFormat(readerLang === "zh" ? "zh-CN" : "en-US", { timeZone: "Asia/Shanghai", weekday: "short", year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(end);
      assert.match(local, /08:00$/);
      assert.equal(await el.locator("p.text").textContent(), readerLang === "zh"
        ? `已用 $25.00，预算 $20。已经领走的这一轮照常做完。这个周期到 ${local}（Asia/Shanghai 时间）结束。想在那之前让规则接着运行，选「这个周期内恢复（不再因预算暂停）」。`
        : `Used $25.00 of $20. Runs already claimed finish normally. This period ends ${local} (Asia/Shanghai time). To let the rule run again before then, choose “Resume for the rest of this period”.`);
      assert.deepEqual(await el.locator("button.option").evaluateAll((bs) => bs.map((b) => b.firstChild?.textContent ?? "")), budgetOptions[readerLang]);
      // The console's own client of /v1 (api.js), as every view calls it: its refusal in the reader's language.
      const said = await page.evaluate(async (path) => {
        const { api } = await import("/console/api.js" as string);
        return api("POST", path, { choice: 0 }).then(() => "answered", (e: Error) => e.message);
      }, "/v1/cards/99/answer");
      assert.equal(said, noCard[readerLang]);
    } finally {
      await context.close();
    }
  });
}

test("a code the client does not know (an older or newer hub), or params that do not fit it, show the hub's own words", () => {
  assert.equal(shown("en", { code: "notFound.card", params: { id: 7 } }, "没有这张卡片：7"), "no such card: 7");
  assert.equal(shown("en", { code: "some.newer.message", params: { id: 7 } }, "新的话：7"), "新的话：7");
  assert.equal(shown("en", { code: "notFound.card", params: {} }, "没有这张卡片：7"), "没有这张卡片：7", "a placeholder without its value");
  assert.equal(shown("en", { code: "notFound.card", params: { id: [7] } }, "没有这张卡片：7"), "没有这张卡片：7", "a value of another shape");
  assert.equal(shown("zh", {}, "no such card: 7"), "no such card: 7", "a hub before issue 27 sends no code");
  assert.equal(shown("zh", { code: "field.pattern", params: { field: "f", what: { code: "pattern.subject", params: {} } } }, "x"), "f：格式不对，应为 字母、数字和 # . _ : / @ -");
  assert.equal(shown("zh", { code: "field.pattern", params: { field: "f", what: { code: "pattern.newer", params: {} } } }, "x"), "x", "a text inside of a code it does not know");
});
