/**
 * A rule whose events start runs too fast is paused and the owner asked (issue 26, finding 12; src/kernel/rate.ts): on
 * the real kernel and a real SQLite file with the clock in the test's hands. The reported case was a workflow whose
 * HTTP tool posted the event its own rule takes (100 runs in 15 s): here events of a per-subject rule each start a run,
 * as such a loop does, from a source and from receipts; work merging into a queued run starts nothing and is not
 * counted; the window, the card's two answers and `resume`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Clock, K } from "./clock.js";
import { baseRules } from "./helpers.js";
import { ruleStartsPerWindowMax, ruleStartsWindowMs } from "../src/kernel/limits.js";
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
      `Its events started more than ${ruleStartsPerWindowMax} runs within ${ruleStartsWindowMs / 1000} s: its runs may be posting the events it takes (a workflow's HTTP tool posting to this hub, for one). While paused its events start nothing. Look at its latest runs with agent-autoloop why; resuming starts the count again.`]);
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
