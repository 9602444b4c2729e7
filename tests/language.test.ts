/**
 * One message catalog (issue 15): every message has its Chinese and its English text with the same placeholders;
 * the language comes from `AGENT_AUTOLOOP_LANG`, then `LANG`; what the protocol fixes and what goes into data (facts,
 * events, jobs) is the same whatever the hub's language; a hub's refusal reaches a person in that person's language
 * (from its message id and params: tests/texts-data.test.ts);
 * and the CLI under `AGENT_AUTOLOOP_LANG=zh` shows no English text of the catalog. The CLI runs as real child
 * processes of bin/agent-autoloop.js against a real `serve` (`npm run build` first).
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { rmSync, writeFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { catalogEntries, fixedMessageIds, langFromEnv, render, type Lang } from "../src/i18n/messages.js";
import { commanderText } from "../src/cli/commander-text.js";
import { Clock, K, written } from "./clock.js";
import { baseRules, engine, makeHome, serveProcess, type ServeProcess } from "./helpers.js";
import type { Fact } from "../src/kernel/types.js";
import type { ResultAnswer, WorkAnswer } from "../src/protocol/responses.js";

const bin = join(engine, "bin", "agent-autoloop.js");
const cleanup: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const f of cleanup.reverse()) await f();
});

/** The `{name}` placeholders of a catalog text, sorted, each once. */
const placeholders = (text: string) => [...new Set([...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!))].sort();

test("every message of the catalog has a Chinese and an English text, with the same placeholders", () => {
  const entries = catalogEntries();
  assert.ok(entries.length > 400, `${entries.length} messages`);
  const faults: string[] = [];
  for (const [id, entry] of entries) {
    for (const lang of ["zh", "en"] as const) {
      if (typeof entry[lang] !== "string" || entry[lang].trim() === "") faults.push(`${id}: no ${lang} text`);
    }
    if (typeof entry.zh === "string" && typeof entry.en === "string" && placeholders(entry.zh).join() !== placeholders(entry.en).join()) {
      faults.push(`${id}: placeholders ${placeholders(entry.zh).join(",")} (zh) ≠ ${placeholders(entry.en).join(",")} (en)`);
    }
  }
  assert.deepEqual(faults, []);
  // The fixed texts are the protocol's own words: Chinese.
  for (const id of fixedMessageIds) assert.match(render("zh", { id }), /\p{Script=Han}/u, id);
});

test("the language is AGENT_AUTOLOOP_LANG, else LANG: zh… is Chinese, anything else English; nothing else counts", () => {
  const cases: [Record<string, string>, Lang][] = [
    [{}, "en"],
    [{ LANG: "zh_CN.UTF-8" }, "zh"],
    [{ LANG: "ZH_TW.Big5" }, "zh"],
    [{ LANG: "C.UTF-8" }, "en"],
    [{ LANG: "en_US.UTF-8" }, "en"],
    [{ AGENT_AUTOLOOP_LANG: "zh", LANG: "en_US.UTF-8" }, "zh"],
    [{ AGENT_AUTOLOOP_LANG: "en", LANG: "zh_CN.UTF-8" }, "en"],
    [{ AGENT_AUTOLOOP_LANG: "", LANG: "zh_CN.UTF-8" }, "zh"],
    [{ LANG: "C.UTF-8", LC_ALL: "zh_CN.UTF-8" }, "en"],
    [{ LANG: "zh_CN.UTF-8", LC_ALL: "C" }, "zh"],
    [{ LC_MESSAGES: "zh_CN.UTF-8" }, "en"],
  ];
  for (const [env, lang] of cases) assert.equal(langFromEnv(env), lang, JSON.stringify(env));
});

test("commander's own errors are said in the command line's language; other lines stay as they are", () => {
  assert.equal(commanderText("error: unknown command 'stats'\n(Did you mean status?)\n", "zh"), "错误：没有「stats」这个命令\n（是不是想用 status？）\n");
  assert.equal(commanderText("error: too many arguments for 'answer'. Expected 2 arguments but got 3.", "zh"), "错误：「answer」的参数太多：只要 2 个，给了 3 个。");
  assert.equal(commanderText("the disk is full", "zh"), "the disk is full");
  assert.equal(commanderText("error: unknown option '--x'", "en"), "error: unknown option '--x'");
});

/**
 * The same inputs on a hub in English and on one in Chinese: a manual run, a receipt with items the hub rejects, a
 * budget that pauses the rule, a refused manual run while paused. Returns the fact log without card rows (cards are
 * text for a person, in the hub's language) and the refusal of the paused manual run.
 */
function scenario(lang: Lang): { facts: Fact[]; paused: unknown } {
  const rules = { ...baseRules, rules: [{ ...baseRules.rules[0], budget: { tokens: 10 } }, baseRules.rules[1]] };
  const k = new Clock(rules, "2026-11-02T08:00:00Z");
  k.env.lang = lang;
  try {
    assert.equal(k.commit({ kind: "runNow", keyHash: K.owner, rule: "alerts", subject: null, reason: "look now" }).status, 200);
    const first = k.claim("c1").job!;
    k.result(first.run, {
      outcome: "done", usage: { input: 20 }, resolve: [{ card: 99 }], notice: [{ title: "seen", fyi: true }],
      events: [{ id: "f1", type: "followup.x" }, { id: "f2", type: "other.type" }],
    });
    const paused = k.commit({ kind: "runNow", keyHash: K.owner, rule: "alerts", subject: null, reason: null });
    assert.equal(k.commit({ kind: "resume", keyHash: K.owner, rule: "alerts" }).status, 200);
    const second = k.claimed("e2");
    k.result(second, { outcome: "done", resolve: [{ card: 1 }] });
    k.now += 1000;
    assert.equal(k.commit({ kind: "runNow", keyHash: K.owner, rule: "per-subject", subject: "#1", reason: null }).status, 200);
    const third = k.claim("c3", K.worker2).job!;
    k.result(third.run, { outcome: "done", resolve: [{ card: 1 }], events: [{ id: "f3", type: "followup.y" }] });
    const facts = k.stream().map((f) => ({ ...f, changes: f.changes.filter(([table]) => table !== "cards" && table !== "outbox") }));
    return { facts, paused: [paused.status, paused.body] };
  } finally {
    k.close();
  }
}

test("the same inputs give the same facts whatever the hub's language: events, jobs, pauses and receipts' rejections", () => {
  const en = scenario("en");
  const zh = scenario("zh");
  assert.deepEqual(en.facts, zh.facts);
  assert.deepEqual(en.paused, [409, { error: "规则「alerts」暂停中，先恢复再手动运行" }]);
  assert.deepEqual(zh.paused, en.paused);
  const log = { facts: en.facts };
  assert.deepEqual(written(log, "events")[0]!.summary, "owner 手动运行");
  assert.deepEqual(written(log, "pauses").filter((p) => p !== null).map((p) => [p.by, p.reason]), [["budget", "超出预算"]]);
  const rejected = written(log, "runs").flatMap((r) => Object.values(r!.results)).flatMap((x) => (x.response as ResultAnswer).rejected);
  assert.deepEqual([...new Set(rejected.map((x) => JSON.stringify(x)))].sort(), [
    { card: 1, reason: "不在本轮核对范围" },
    { card: 1, reason: "这张卡片已经结案" },
    { card: 99, reason: "没有这张卡片：99" },
    { event: "f2", reason: "type other.type 不在 emits.types 里" },
    { event: "f3", reason: "规则没有写 emits，不能发事件" },
  ].map((x) => JSON.stringify(x)));
});

/** The environment of a CLI or hub child process: this test's without any language or hub URL, plus `extra`. */
function envWith(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DISPLAY: "", WAYLAND_DISPLAY: "" };
  for (const k of ["AGENT_AUTOLOOP_LANG", "LANG", "LC_ALL", "LC_MESSAGES", "AGENT_AUTOLOOP_URL"]) delete env[k];
  return { ...env, ...extra };
}

function cli(dir: string, args: string[], extra: Record<string, string>): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { env: envWith({ AGENT_AUTOLOOP_HOME: dir, ...extra }), encoding: "utf8" }, (e, stdout, stderr) =>
      resolve({ code: e ? Number((e as { code?: number }).code ?? 1) : 0, out: stdout.trim(), err: stderr.trim() }));
  });
}

/** A hub of `baseRules` run by a real `serve` child process whose environment has only `extra` for a language. */
async function hub(extra: Record<string, string>): Promise<{ dir: string; keys: ReturnType<typeof makeHome>["keys"]; hub: ServeProcess }> {
  const { dir, keys } = makeHome(baseRules);
  const process = await serveProcess(dir, undefined, envWith(extra));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }), () => process.stop());
  return { dir, keys, hub: process };
}

/** One request to the hub at `url`; its answer, read as `T` (the hub checks its answers against the contract). */
async function http<T = unknown>(url: string, key: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(url + path, { method, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  return res.json() as Promise<T>;
}

for (const LANG of ["en_US.UTF-8", "zh_CN.UTF-8"]) {
  test(`a manual run's event says "<key name> 手动运行" on a hub under LANG=${LANG}, and reaches the job so; why says it in the CLI's language`, async () => {
    const { dir, keys, hub: h } = await hub({ LANG });
    const ran = await cli(dir, ["run", "alerts", "--reason", "look now"], { LANG });
    assert.deepEqual([ran.code, ran.out], [0, LANG.startsWith("zh") ? "alerts：事件 1，第 1 轮" : "alerts: event 1, run 1"], ran.err);
    const { job } = await http<WorkAnswer>(h.url, keys.worker, "GET", "/v1/work?claim=c1&capacity=1");
    assert.deepEqual(job!.context.events.map((e) => [e.type, e.summary, e.detail]), [["run.manual", "owner 手动运行", "look now"]]);
    for (const [env, summary] of [[{ LANG: "C.UTF-8" }, "owner ran it by hand"], [{ LANG: "zh_CN.UTF-8" }, "owner 手动运行"]] as const) {
      const why = await cli(dir, ["why", "1"], env);
      assert.match(why.out, new RegExp(`^\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}  ${summary}${env.LANG.startsWith("zh") ? "：" : ": "}look now$`, "m"), why.out);
    }
  });
}

test("`run` on a paused rule says so in the command line's language, whatever the hub's", async () => {
  const { dir } = await hub({ LANG: "zh_CN.UTF-8" });
  assert.equal((await cli(dir, ["pause", "alerts"], { LANG: "C.UTF-8" })).out, "alerts: paused");
  const en = await cli(dir, ["run", "alerts"], { LANG: "C.UTF-8" });
  assert.deepEqual([en.code, en.err], [1, 'agent-autoloop: rule "alerts" is paused: resume it before running it by hand']);
  const zh = await cli(dir, ["run", "alerts"], { AGENT_AUTOLOOP_LANG: "zh", LANG: "C.UTF-8" });
  assert.deepEqual([zh.code, zh.err], [1, "agent-autoloop：规则「alerts」暂停中，先恢复再手动运行"]);
  const other = await cli(dir, ["resume", "nightly"], { LANG: "C.UTF-8" });
  assert.deepEqual([other.code, other.err], [1, "agent-autoloop: no such rule: nightly"]);
});

/**
 * The English texts of the catalog a person could recognise in output: each literal stretch between placeholders
 * that holds three words or more and appears in no Chinese text (commands and field names appear in both).
 */
function englishPhrases(): string[] {
  const zh = catalogEntries().map(([, e]) => e.zh).join("\n");
  const out = new Set<string>();
  for (const [, e] of catalogEntries()) {
    for (const part of e.en.split(/\{\w+\}/)) {
      const phrase = part.trim();
      if ((phrase.match(/[A-Za-z]+/g) ?? []).length >= 3 && !zh.includes(phrase)) out.add(phrase);
    }
  }
  return [...out];
}

test("under AGENT_AUTOLOOP_LANG=zh, status, check of a broken file, doctor, why and --help show no English text of the catalog", async () => {
  const { dir, keys, hub: h } = await hub({ AGENT_AUTOLOOP_LANG: "zh" });
  const zh = { AGENT_AUTOLOOP_LANG: "zh" };
  // A run that asks a question and reports usage; one that fails and waits for its retry; a paused rule.
  await http(h.url, keys.source, "POST", "/v1/events", { id: "e1", type: "alert.disk", subject: "#1", summary: "磁盘满了" });
  const first = (await http<WorkAnswer>(h.url, keys.worker, "GET", "/v1/work?claim=c1&capacity=1")).job!;
  await http(h.url, first.token, "POST", `/v1/runs/${first.run}/started`, { session: "s-1" });
  await http(h.url, first.token, "POST", `/v1/runs/${first.run}/result`, {
    outcome: "done", summary: "问了本人", usage: { input: 10, output: 5, cost: 0.01 },
    ask: [{ title: "要清理吗？", options: ["清理", "不清理"], recommend: 0 }], later: [{ key: "复查", at: "2030-01-01T00:00:00Z" }],
  });
  await http(h.url, keys.source2, "POST", "/v1/events", { id: "t1", type: "ticket.new", subject: "#2" });
  const second = (await http<WorkAnswer>(h.url, keys.worker2, "GET", "/v1/work?claim=c2&capacity=1")).job!;
  await http(h.url, second.token, "POST", `/v1/runs/${second.run}/result`, { outcome: "failed", error: "网络断了" });
  await http(h.url, keys.source, "POST", "/v1/events", { id: "u1", type: "nobody.cares" });
  assert.equal((await cli(dir, ["pause", "per-subject", "--reason", "休息"], zh)).code, 0);
  // doctor: this computer now runs worker w1 (the hub already read its config) and a webhook channel with a bad url.
  const config = JSON.parse(readFileSync(join(dir, "config.json"), "utf8"));
  writeFileSync(join(dir, "config.json"), JSON.stringify({ ...config, worker: { name: "w1", key: keys.worker }, channels: { ch2: { use: "webhook", key: keys.channel2, url: "ftp://x" } } }));
  const broken = join(dir, "broken.json");
  writeFileSync(broken, JSON.stringify({ sources: {}, agents: {}, rules: [{ name: "x" }] }));
  const syntax = join(dir, "syntax.json");
  writeFileSync(syntax, '{\n  "rules": [,]\n}');

  const runs = {
    status: await cli(dir, ["status"], zh),
    check: await cli(dir, ["check", broken], zh),
    syntax: await cli(dir, ["check", syntax], zh),
    doctor: await cli(dir, ["doctor"], zh),
    why: await cli(dir, ["why", String(first.run)], zh),
    whyFailed: await cli(dir, ["why", String(second.run)], zh),
    help: await cli(dir, ["--help"], zh),
    helpAnswer: await cli(dir, ["answer", "--help"], zh),
    helpKey: await cli(dir, ["key", "--help"], zh),
    unknown: await cli(dir, ["stats"], zh),
    missing: await cli(dir, ["answer"], zh),
    refused: await cli(dir, ["answer", "99", "0"], zh),
  };
  assert.equal(runs.status.code, 0, runs.status.err);
  assert.match(runs.status.out, /^中台 http:\/\/127\.0\.0\.1:\d+ · 规则 v1 · UTC · /);
  assert.match(runs.status.out, /要清理吗？\n {6}0\) 清理 {2}← 推荐\n {6}1\) 不清理\n {6}→ 回答：agent-autoloop answer 1 <0-1>/);
  assert.equal(runs.check.code, 1);
  assert.equal(runs.check.err, `agent-autoloop：${broken}:1:36: rules[0].when：必填：{"source", "types"}、{"intent"} 或 {"cron"}`);
  assert.equal(runs.syntax.err, `agent-autoloop：${syntax}:2:13: JSON 写错了：这里要写一个值`);
  assert.match(runs.doctor.out, /^正常 rules\.json：2 条规则，2 个 Agent\n/m);
  assert.match(runs.doctor.out, /^待修 通道 ch2：webhook 要在 config\.json 里写 "url"（http 或 https 地址）$/m);
  assert.match(runs.why.out, /w1 领走了 · 第 1 次尝试\n/);
  assert.match(runs.help.out, /^用法： agent-autoloop \[options\] \[command\]\n/);
  assert.match(runs.unknown.err, /^错误：没有「stats」这个命令\n（是不是想用 status？）$/);
  assert.equal(runs.missing.err, "错误：缺少必填参数「card」");
  assert.equal(runs.refused.err, "agent-autoloop：没有这张卡片：99");
  const phrases = englishPhrases();
  assert.ok(phrases.length > 200, `${phrases.length} phrases`);
  for (const [name, r] of Object.entries(runs)) {
    const text = `${r.out}\n${r.err}`;
    assert.deepEqual(phrases.filter((p) => text.includes(p)), [], `${name}:\n${text}`);
  }
});
