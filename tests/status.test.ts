/**
 * `agent-autoloop status` as a new user reads it: the channels (last poll, cards waiting for each) and a card waiting
 * for a channel that never polled, with what to do; `--rule` to see one rule's runs; a paused rule shows when the
 * pause ends, not a cron time that will be skipped.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { engine, hubFixture, baseRules } from "./helpers.js";
import type { State } from "../src/protocol/responses.js";
import { Clock } from "./clock.js";
import { formatStatus } from "../src/cli/status.js";

const rules = {
  ...baseRules,
  rules: [...baseRules.rules, { name: "nightly", when: { cron: "0 3 * * *" }, to: "bot", cwd: "/tmp" }],
};
const f = await hubFixture(rules);
after(() => f.close());

function status(args: string[] = []): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(engine, "bin", "agent-autoloop.js"), "status", ...args], {
      env: { ...process.env, AGENT_AUTOLOOP_HOME: f.home.dir, AGENT_AUTOLOOP_LANG: "en", AGENT_AUTOLOOP_URL: f.url, TZ: "UTC" },
      encoding: "utf8",
    }, (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: stdout.trimEnd(), err: stderr.trim() }));
  });
}

/** The lines of one section of `status` (from its heading to the next blank line), times as `MM-DD hh:mm:ss`. */
function section(out: string, heading: string): string[] {
  const lines = out.split("\n");
  const at = lines.indexOf(heading);
  assert.ok(at >= 0, `no section ${heading} in:\n${out}`);
  const end = lines.indexOf("", at);
  return lines.slice(at + 1, end < 0 ? undefined : end).map((l) => l.replace(/\d\d-\d\d \d\d:\d\d:\d\d/g, "MM-DD hh:mm:ss"));
}

/** Posts an event for rule "alerts" and ends its run with `receipt`. @returns the run's id. */
async function run(id: string, receipt: Record<string, unknown> = { outcome: "done", summary: `Done: ${id}` }, key = f.keys.source, type = "alert.x"): Promise<number> {
  assert.equal((await f.call("POST", "/v1/events", key, { id, type })).status, 200);
  const job = (await f.call("GET", `/v1/work?claim=c-${id}`, type.startsWith("ticket") ? f.keys.worker2 : f.keys.worker)).body.job;
  assert.equal((await f.call("POST", `/v1/runs/${job.run}/result`, job.token, receipt)).status, 200);
  return job.run;
}

test("status lists the channels with their last poll and the cards waiting for each; a card waiting for a channel that never polled is marked, with what to do", async () => {
  const asked = await run("q1", { outcome: "done", summary: "Needs you: which?", ask: [{ title: "Which one?", options: ["a", "b"] }] });
  const card = (await f.call("GET", "/v1/cards/next", f.keys.channel)).body.card;
  assert.equal((await f.call("POST", `/v1/cards/${card.id}/delivered`, f.keys.channel, { version: card.version, ref: "m1" })).status, 200);

  const before = await status();
  assert.equal(before.code, 0, before.err);
  assert.deepEqual(section(before.out, "Channels:"), [
    "  ch1 · last poll MM-DD hh:mm:ss · cards waiting: 0",
    "  ch2 · never polled · cards waiting: 1",
    '      nothing on this computer runs ch2: config.json has no channel ch2 (add it under "channels" with its key and options, then restart serve)',
  ]);
  const cards = section(before.out, "Cards waiting for you (1):");
  assert.equal(cards[0], `  #${card.id} ask [alerts] Which one?`);
  assert.ok(cards.includes("      ! ch2: waiting for a channel that has never polled (see Channels)"), cards.join("\n"));
  assert.equal(asked, 1);

  // The channel is in config.json now, but serve reads config.json when it starts: status says to restart it.
  const config = JSON.parse(readFileSync(f.home.config, "utf8"));
  writeFileSync(f.home.config, JSON.stringify({ ...config, channels: { ch2: { use: "file", key: f.keys.channel2, path: join(f.home.dir, "cards2.txt") } } }));
  const configured = await status();
  assert.deepEqual(section(configured.out, "Channels:").slice(1), [
    "  ch2 · never polled · cards waiting: 1",
    "      config.json has channel ch2, but the running serve has not started it: restart serve (it starts the channels of config.json when it starts; rules.json reloads by itself)",
  ]);

  // Once it polls, the mark goes.
  await f.call("GET", "/v1/cards/next", f.keys.channel2);
  const polled = await status();
  assert.deepEqual(section(polled.out, "Channels:"), ["  ch1 · last poll MM-DD hh:mm:ss · cards waiting: 0", "  ch2 · last poll MM-DD hh:mm:ss · cards waiting: 1"]);
  assert.equal(polled.out.includes("never polled"), false);
});

test("status --rule <name> shows only that rule's runs", async () => {
  const mine = [await run("r1"), await run("t1", undefined, f.keys.source2, "ticket.x"), await run("r2")];
  const all = await status();
  assert.deepEqual(section(all.out, "Recent runs:").filter((l) => l.startsWith("  #")).map((l) => l.split(" · ")[0]), [
    `  #${mine[2]} alerts`, `  #${mine[1]} per-subject`, `  #${mine[0]} alerts`, "  #1 alerts",
  ]);
  const one = await status(["--rule", "per-subject"]);
  assert.equal(one.code, 0, one.err);
  assert.deepEqual(section(one.out, "Recent runs of per-subject:"), [
    `  #${mine[1]} per-subject · done · MM-DD hh:mm:ss · w2`,
    "      Done: t1",
  ]);
  const none = await status(["--rule", "nightly"]);
  assert.deepEqual(section(none.out, "Recent runs of nightly:"), ["  (none)"]);
  const unknown = await status(["--rule", "no-such-rule"]);
  assert.deepEqual([unknown.code, unknown.err], [1, "agent-autoloop: no such rule: no-such-rule"]);
});

test("GET /v1/state: an empty rule, state or worker is no filter; one given narrows the page of runs on the hub", async () => {
  const ids = async (query: string) => ((await f.call("GET", `/v1/state${query}`, f.keys.owner)).body as State).runs.map((r) => [r.rule, r.worker]);
  const all = await ids("");
  assert.deepEqual(await ids("?rule=&state=&worker="), all);
  assert.ok(all.some(([rule]) => rule === "per-subject") && all.some(([rule]) => rule === "alerts"));
  assert.deepEqual(await ids("?rule=per-subject"), all.filter(([rule]) => rule === "per-subject"));
  assert.deepEqual(await ids("?worker=w2&state=done"), all.filter(([, worker]) => worker === "w2"));
});

test("a paused rule shows when its pause ends, not a cron time that will be skipped", async () => {
  const rulesOf = async () => section((await status()).out, "Rules:").find((l) => l.startsWith("  nightly "))!;
  assert.equal(await rulesOf(), "  nightly ← cron 0 3 * * * → bot · queued 0 · running 0 · next MM-DD hh:mm:ss");
  const until = new Date(Date.now() + 3 * 24 * 3600_000).toISOString();
  assert.equal((await f.call("POST", "/v1/rules/nightly/pause", f.keys.owner, { until })).status, 200);
  const shown = new Date(until);
  const p = (n: number) => String(n).padStart(2, "0");
  const untilText = `${p(shown.getUTCMonth() + 1)}-${p(shown.getUTCDate())} ${p(shown.getUTCHours())}:${p(shown.getUTCMinutes())}:${p(shown.getUTCSeconds())}`;
  const line = section((await status()).out, "Rules:").find((l) => l.startsWith("  nightly "));
  assert.equal(line, "  nightly ← cron 0 3 * * * → bot · queued 0 · running 0 · paused until MM-DD hh:mm:ss");
  assert.ok((await status()).out.includes(`paused until ${untilText}`));
  assert.equal((await f.call("POST", "/v1/rules/nightly/pause", f.keys.owner, {})).status, 200);
  assert.equal((await f.call("POST", "/v1/rules/nightly/resume", f.keys.owner, {})).status, 200);
  assert.equal((await f.call("POST", "/v1/rules/nightly/pause", f.keys.owner, {})).status, 200);
  assert.equal(await rulesOf(), "  nightly ← cron 0 3 * * * → bot · queued 0 · running 0 · paused");
});

test("status spending reads right: '1 run', and a figure no run reported is not shown as 0 beside 'without token counts' (issue 29)", () => {
  const k = new Clock(baseRules, "2026-11-02T08:00:00Z");
  const spending = () => section(formatStatus(k.state(), "en", "http://x"), "Spending:");
  const zh = () => section(formatStatus(k.state(), "zh", "http://x"), "用量：");
  assert.deepEqual(spending(), ["  today: 0 runs", "  7 days: 0 runs"]);
  k.event("e1");
  k.result(k.claim("c1").job!.run, { outcome: "done" });
  assert.deepEqual(spending(), ["  today: 1 run · 1 without token counts · 1 without cost", "  7 days: 1 run · 1 without token counts · 1 without cost"]);
  k.event("e2");
  k.result(k.claim("c2").job!.run, { outcome: "done", usage: { input: 100, output: 20 } });
  assert.deepEqual(spending()[0], "  today: 2 runs · 120 tokens · 1 without token counts · 2 without cost");
  k.event("e3");
  k.result(k.claim("c3").job!.run, { outcome: "done", usage: { input: 1, output: 2, cost: 0.125 } });
  assert.deepEqual(spending()[0], "  today: 3 runs · 123 tokens · 0.1250 USD · 1 without token counts · 2 without cost");
  assert.deepEqual(zh()[0], "  今天：3 轮 · 123 个词元 · 0.1250 美元 · 1 轮没报词元数 · 2 轮没报费用");
  k.close();
});

test("status shows a card's first lines and counts the rest, never drops them in silence (issue 26 round 57, F57b-2: a notice naming 10 moved entries showed 3 and no count)", () => {
  const k = new Clock(baseRules, "2026-11-02T08:00:00Z");
  k.event("e1");
  const text = Array.from({ length: 10 }, (_, i) => `entry ${i + 1} moved`).join("\n");
  k.result(k.claim("c1").job!.run, { outcome: "done", notice: [{ title: "Moved", text }, { title: "Short", text: "one\ntwo\nthree\n" }, { title: "Four", text: "a\nb\nc\nd" }] });
  const shown = (lang: "en" | "zh") => section(formatStatus(k.state(), lang, "http://x"), lang === "en" ? "Cards waiting for you (3):" : "待处理的卡片（3）：");
  assert.deepEqual(shown("en").filter((l) => l.startsWith("      ") && !l.includes("never polled")), [
    "      entry 1 moved", "      entry 2 moved", "      entry 3 moved", "      … 7 more lines not shown: agent-autoloop status --json has card #1 whole",
    "      → agent-autoloop answer 1 0",
    "      one", "      two", "      three", "      → agent-autoloop answer 2 0",
    "      a", "      b", "      c", "      … 1 more line not shown: agent-autoloop status --json has card #3 whole", "      → agent-autoloop answer 3 0",
  ]);
  assert.equal(shown("zh")[4], "      ……还有 7 行没显示：agent-autoloop status --json 里有卡片 #1 的全文");
  k.close();
});
