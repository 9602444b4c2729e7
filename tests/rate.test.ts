/**
 * A rule whose events start runs too fast is paused and the owner asked (issue 26, finding 12; src/kernel/rate.ts): on
 * the real kernel and a real SQLite file with the clock in the test's hands. The reported case was a workflow whose
 * HTTP tool posted the event its own rule takes (100 runs in 15 s): here events of a per-subject rule each start a run,
 * as such a loop does, from a source and from receipts; work merging into a queued run starts nothing and is not
 * counted; the window, the card's two answers and `resume`. A rule's own `startsPerMinute` sets its limit, lower or
 * higher than the default (high-volume rules, the benchmark's), and `check` refuses one outside 1..100,000.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Clock, K } from "./clock.js";
import { baseRules, engine, tempDir } from "./helpers.js";
import { ruleStartsPerMinuteFieldMax, ruleStartsPerWindowMax, ruleStartsWindowMs } from "../src/kernel/limits.js";
import type { EventAccepted } from "../src/protocol/responses.js";

/** Rules whose `fast` takes every `go.*` event of shop, one lane per subject (a new run for each new subject). */
const rules = { ...baseRules, rules: [{ name: "fast", when: { source: "shop", types: ["go.*"] }, to: "bot", parallel: 2, emits: { source: "shop", types: ["go.*"] } }] };

let n = 0;
/** Posts a `go.x` event of subject `subject` as source shop: the rules that took it and those paused. */
function post(k: Clock, subject: string): [string[], string[]] {
  const d = k.commit({ kind: "event", keyHash: K.source, event: { id: `e${++n}`, type: "go.x", subject } });
  assert.equal(d.status, 200, JSON.stringify(d.body));
  const b = d.body as EventAccepted;
  return [b.routed, b.paused];
}

/** The rule's pause as the owner's state shows it, and the open cards' titles. */
function paused(k: Clock): [string | null, string[]] {
  const s = k.state();
  const p = s.lines.find((l) => l.name === "fast")!.paused;
  return [p ? `${p.by}: ${p.reason}` : null, s.cards.filter((c) => c.state === "open").map((c) => c.title)];
}

test("a rule whose events start more runs in a minute than the limit is paused and asks the owner; merged work is not counted (issue 26, finding 12)", () => {
  const k = new Clock(rules, "2030-01-01T10:00:00Z");
  try {
    // The limit's runs, one per subject, within the minute; more work for queued lanes merges and is not counted.
    for (let i = 0; i < ruleStartsPerWindowMax; i++) {
      assert.deepEqual(post(k, `s${i}`), [["fast"], []]);
      k.now += 100;
    }
    for (let i = 0; i < 5; i++) assert.deepEqual(post(k, `s${i}`), [["fast"], []], "merged into the lane's queued run");
    assert.equal(k.runs().length, ruleStartsPerWindowMax);
    assert.deepEqual(paused(k), [null, []]);
    // One more run in the same minute: not started; the rule is paused and the owner asked.
    assert.deepEqual(post(k, "one-more"), [[], ["fast"]]);
    assert.equal(k.runs().length, ruleStartsPerWindowMax);
    assert.deepEqual(paused(k), ["rate: 启动轮次太快", ["\"fast\" started runs too fast and is paused"]]);
    const card = k.cards().find((c) => c.state === "open")!;
    assert.deepEqual([card.kind, card.options, card.recommend, card.text], ["ask", ["Resume", "Keep paused"], 1,
      tooFastText(ruleStartsPerWindowMax)]);
    // Paused: its events start nothing, whatever their lane. "Keep paused" keeps it so.
    assert.deepEqual(post(k, "s0"), [[], ["fast"]]);
    assert.equal(k.commit({ kind: "answer", keyHash: K.owner, card: card.id, choice: 1, text: null, by: null, ref: null }).status, 200);
    assert.deepEqual(paused(k), ["rate: 启动轮次太快", []]);
    assert.equal(k.card(card.id).result, "Kept paused");
    // `resume`: a new window, the limit's runs again at once (a run's receipts count as its rule's events do).
    assert.equal(k.commit({ kind: "resume", keyHash: K.owner, rule: "fast" }).status, 200);
    assert.deepEqual(paused(k), [null, []]);
    const runs = k.runs().length;
    for (let i = 0; i < ruleStartsPerWindowMax - 1; i++) assert.deepEqual(post(k, `t${i}`), [["fast"], []]);
    const job = k.claim("c-receipt").job!;
    assert.equal(k.result(job.run, { outcome: "done", events: [{ id: "r1", type: "go.again", subject: "from-receipt" }] }).status, 200);
    assert.equal(k.runs().length, runs + ruleStartsPerWindowMax, "the receipt's event started the window's last run");
    assert.deepEqual(post(k, "t-over"), [[], ["fast"]]);
    const second = k.cards().find((c) => c.state === "open")!;
    // Answered "Resume": resumed with a new window; the card closed so.
    assert.equal(k.commit({ kind: "answer", keyHash: K.owner, card: second.id, choice: 0, text: null, by: null, ref: null }).status, 200);
    assert.deepEqual([paused(k), k.card(second.id).result], [[null, []], "Resumed; the count starts again"]);
    assert.deepEqual(post(k, "u0"), [["fast"], []]);
    // A new window begins a minute after the first run of the last one: the limit again.
    k.now += ruleStartsWindowMs;
    for (let i = 1; i <= ruleStartsPerWindowMax; i++) assert.deepEqual(post(k, `v${i}`), [["fast"], []]);
    assert.deepEqual(post(k, "v-over"), [[], ["fast"]]);
    // `resume` of a pause for starting runs too fast closes its card too.
    const third = k.cards().find((c) => c.state === "open")!;
    k.commit({ kind: "resume", keyHash: K.owner, rule: "fast" });
    assert.deepEqual([paused(k), k.card(third.id).result], [[null, []], "Resumed; the count starts again"]);
  } finally {
    k.close();
  }
});

/** The too-fast card's text for a limit of `count` runs a minute. */
function tooFastText(count: number): string {
  return `Its events started more than ${count} runs within ${ruleStartsWindowMs / 1000} s: its runs may be posting the events it takes (a workflow's HTTP tool posting to this hub, for one). While paused its events start nothing. Look at its latest runs with agent-autoloop why; resuming starts the count again. A rule meant to start that many gets a startsPerMinute of its own in rules.json.`;
}

test("a rule's startsPerMinute is its own start limit, lower or higher than the default; a rule without it keeps the default", () => {
  const rule = (name: string, startsPerMinute?: number) => ({
    name, when: { source: "shop", types: [`${name}.*`] }, to: "bot", parallel: 2, ...(startsPerMinute === undefined ? {} : { startsPerMinute }),
  });
  const k = new Clock({ ...baseRules, rules: [rule("slow", 3), rule("busy", 250), rule("plain")] }, "2030-01-01T10:00:00Z");
  try {
    const post = (type: string, subject: string): [string[], string[]] => {
      const d = k.commit({ kind: "event", keyHash: K.source, event: { id: `${type}-${subject}`, type: `${type}.x`, subject } });
      assert.equal(d.status, 200, JSON.stringify(d.body));
      const b = d.body as EventAccepted;
      return [b.routed, b.paused];
    };
    const openTexts = () => k.cards().filter((c) => c.state === "open").map((c) => [c.title, c.text]);
    for (let i = 0; i < 3; i++) assert.deepEqual(post("slow", `s${i}`), [["slow"], []]);
    assert.deepEqual(post("slow", "s3"), [[], ["slow"]], "the fourth run within the minute: over slow's own 3");
    assert.deepEqual(openTexts(), [["\"slow\" started runs too fast and is paused", tooFastText(3)]]);
    // busy goes past the default of 100 up to its own 250, each within the same minute; plain stops at the default.
    for (let i = 0; i < 250; i++) assert.deepEqual(post("busy", `b${i}`), [["busy"], []], `busy's run ${i + 1}`);
    assert.deepEqual(post("busy", "b250"), [[], ["busy"]]);
    for (let i = 0; i < ruleStartsPerWindowMax; i++) assert.deepEqual(post("plain", `p${i}`), [["plain"], []]);
    assert.deepEqual(post("plain", "over"), [[], ["plain"]]);
    assert.deepEqual(openTexts().slice(1), [
      ["\"busy\" started runs too fast and is paused", tooFastText(250)],
      ["\"plain\" started runs too fast and is paused", tooFastText(ruleStartsPerWindowMax)],
    ]);
    assert.equal(k.runs().length, 3 + 250 + ruleStartsPerWindowMax);
  } finally {
    k.close();
  }
});

test("check refuses a startsPerMinute that is not a whole number from 1 to 100,000, with the line, column and what to write, in English and Chinese", () => {
  const dir = tempDir("aa-rate-check-");
  const check = (value: string, lang: "en" | "zh") => {
    const file = join(dir, "rules.json");
    writeFileSync(file, `{\n  "sources": { "shop": {} },\n  "agents": { "bot": { "worker": "w", "use": "command", "command": ["true"] } },\n  "rules": [{ "name": "r", "when": { "source": "shop" }, "to": "bot",\n    "startsPerMinute": ${value} }]\n}\n`);
    const r = spawnSync(process.execPath, [join(engine, "bin", "agent-autoloop.js"), "check", file], { env: { ...process.env, AGENT_AUTOLOOP_LANG: lang }, encoding: "utf8", timeout: 20_000 });
    return [r.status, r.stderr.trim().replace(`${file}:`, "")];
  };
  const max = ruleStartsPerMinuteFieldMax;
  for (const bad of ["0", String(max + 1), "2.5", "\"500\"", "-1"]) {
    assert.deepEqual(check(bad, "en"), [1, `agent-autoloop: 5:24: rules[0].startsPerMinute: must be a whole number from 1 to 100000 (how many runs this rule's events may start a minute)`], bad);
    assert.deepEqual(check(bad, "zh"), [1, `agent-autoloop：5:24: rules[0].startsPerMinute：应为 1 到 100000 的整数（这条规则的事件每分钟最多启动几个轮次）`], bad);
  }
  for (const good of ["1", String(max), "null"]) assert.equal(check(good, "en")[0], 0, good);
});
