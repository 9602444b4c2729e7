/**
 * Spending in GET /v1/state (protocol.md 本人; DESIGN.md: aggregates kept as facts are applied): "today" and "7 days",
 * in all and per rule, are read from the quarter-hour `usage` buckets that `evolve` keeps (with each rule's sums), plus
 * the runs of one partial bucket, and must equal a sum over every run the state lists, at any time of day and across
 * bucket edges. The last two tests are the projection's own: they read the buckets `evolve` keeps.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Clock, K } from "./clock.js";
import { baseRules } from "./helpers.js";
import { startOfDay } from "../src/kernel/period.js";
import { Store } from "../src/host/store.js";
import { evolve } from "../src/kernel/evolve.js";
import type { RunView } from "../src/protocol/responses.js";

const min = 60_000;

/**
 * The spending summary recomputed from every run the owner's state lists (page by page), the way it was defined before
 * the buckets. A run's usage holds a kind only when some attempt reported it.
 */
function bruteForce(k: Clock | RunView[], from: number, rule: string | null = null) {
  const s = { rounds: 0, tokens: 0, cost: 0, missingTokens: 0, missingCost: 0 };
  for (const run of Array.isArray(k) ? k : k.runs()) {
    if ((rule !== null && run.rule !== rule) || run.endedAt === null || Date.parse(run.endedAt) < from || run.mergedInto !== null || (run.state === "cancelled" && run.attempt === 0)) continue;
    s.rounds++;
    const u = run.usage ?? {};
    if (u.input !== undefined || u.output !== undefined || u.cached !== undefined) s.tokens += (u.input ?? 0) + (u.output ?? 0);
    else s.missingTokens++;
    if (u.cost !== undefined) s.cost += u.cost;
    else s.missingCost++;
  }
  s.cost = Math.round(s.cost * 1e6) / 1e6;
  return s;
}

test("today and 7 days, in all and per rule, equal a sum over all runs, at every minute-and-a-bit across nine days", () => {
  const pages = { name: "pages", when: { source: "shop", types: ["page.*"] }, to: "bot" };
  const k = new Clock({ ...baseRules, rules: [...baseRules.rules, pages] }, "2026-11-02T08:00:00Z");
  const usages = [{ input: 100, output: 20, cost: 0.125 }, { input: 7 }, { cost: 0.5 }, undefined];
  for (let i = 0; i < 9 * 24; i++) {
    // Every third run is of rule "pages", the others of "alerts"; "per-subject" has none.
    const extra = i % 3 === 1 ? { type: "page.x" } : {};
    k.event(`e${i}`, extra);
    const job = k.claim(`c${i}`).job!;
    const usage = usages[i % usages.length];
    if (i % 5 === 4) k.event(`m${i}`, extra); // queued behind the running run, then merged into its retry
    k.result(job.run, i % 5 === 4 ? { outcome: "failed", error: "x", ...(usage ? { usage } : {}) } : { outcome: i % 3 ? "done" : "nothing", ...(usage ? { usage } : {}) });
    if (i % 7 === 0) {
      // a run cancelled before any attempt does not count; one merged into a retry does not either
      k.event(`q${i}`);
      const queued = k.state().active.find((r) => r.state === "queued");
      if (queued) k.commit({ kind: "cancel", keyHash: K.owner, run: queued.id });
    }
    k.advance(k.now + 61 * min + 7_000);
    const s = k.state();
    const runs = k.runs();
    assert.deepEqual(s.spending.today, bruteForce(runs, startOfDay(k.now, "UTC")), `today at ${k.iso()}`);
    assert.deepEqual(s.spending.week, bruteForce(runs, k.now - 7 * 24 * 60 * min), `7 days at ${k.iso()}`);
    for (const line of s.lines) {
      assert.deepEqual(line.spending, {
        today: bruteForce(runs, startOfDay(k.now, "UTC"), line.name), week: bruteForce(runs, k.now - 7 * 24 * 60 * min, line.name),
      }, `${line.name} at ${k.iso()}`);
    }
  }
  const s = k.state();
  assert.ok(s.spending.week.rounds > 100 && s.spending.week.tokens > 0 && s.spending.week.cost > 0 && s.spending.week.missingCost > 0);
  assert.ok(s.spending.today.rounds < s.spending.week.rounds);
  const [alerts, perSubject, pagesLine] = s.lines.map((l) => l.spending.week);
  assert.equal(alerts!.rounds + pagesLine!.rounds, s.spending.week.rounds);
  assert.ok(pagesLine!.rounds > 30 && pagesLine!.cost > 0 && pagesLine!.missingTokens > 0);
  assert.deepEqual(perSubject, { rounds: 0, tokens: 0, cost: 0, missingTokens: 0, missingCost: 0 });
  k.close();
});

test("a run that ended exactly on a bucket edge counts from that edge on, not before", () => {
  const k = new Clock(baseRules, "2026-11-02T08:14:59.999Z");
  k.event("e1");
  const job = k.claim("c1").job!;
  k.now = Date.parse("2026-11-02T08:15:00.000Z");
  k.result(job.run, { outcome: "done", usage: { input: 3, output: 4, cost: 0.25 } });
  k.now = Date.parse("2026-11-09T08:14:59.999Z");
  assert.deepEqual(k.state().spending.week, { rounds: 1, tokens: 7, cost: 0.25, missingTokens: 0, missingCost: 0 });
  k.now = Date.parse("2026-11-09T08:15:00.000Z");
  assert.deepEqual(k.state().spending.week, { rounds: 1, tokens: 7, cost: 0.25, missingTokens: 0, missingCost: 0 });
  k.now = Date.parse("2026-11-09T08:15:00.001Z");
  assert.deepEqual(k.state().spending.week, { rounds: 0, tokens: 0, cost: 0, missingTokens: 0, missingCost: 0 });
  k.close();
});

test("evolve keeps the buckets equal to the run rows whatever a fact rewrites: usage, end time, or the row itself", () => {
  const store = new Store({ path: ":memory:", master: Buffer.alloc(32), fingerprint: "t" });
  const buckets = () => store.view.where("usage", "1 ORDER BY key").map(({ key, row }) => [key, row]);
  const run = (over: Record<string, unknown>) => ({
    rule: "alerts", endedAt: null, mergedInto: null, state: "running", attempt: 1, usage: null, usageReported: { tokens: false, cost: false }, ...over,
  });
  const t = Date.parse("2026-11-02T08:20:00Z");
  const edge = Date.parse("2026-11-02T08:15:00Z");
  evolve(store.db, [{ changes: [["runs", 1, run({})]] }]);
  assert.deepEqual(buckets(), []);
  evolve(store.db, [{ changes: [["runs", 1, run({ state: "done", endedAt: t, usage: { input: 5, output: 1, cost: 0.5 }, usageReported: { tokens: true, cost: true } })]] }]);
  const one = { rounds: 1, tokens: 6, costNanos: 500_000_000, missingTokens: 0, missingCost: 0 };
  assert.deepEqual(buckets(), [[edge, { ...one, rules: [{ rule: "alerts", ...one }] }]]);
  // A run of another rule in the same bucket: the bucket sums both, each rule keeps its own, sorted by name.
  evolve(store.db, [{ changes: [["runs", 2, run({ rule: "Zebra", state: "nothing", endedAt: t + 60_000 })]] }]);
  const zebra = { rounds: 1, tokens: 0, costNanos: 0, missingTokens: 1, missingCost: 1 };
  assert.deepEqual(buckets(), [[edge, { rounds: 2, tokens: 6, costNanos: 500_000_000, missingTokens: 1, missingCost: 1, rules: [{ rule: "Zebra", ...zebra }, { rule: "alerts", ...one }] }]]);
  evolve(store.db, [{ changes: [["runs", 1, run({ state: "done", endedAt: t, usage: { input: 7 }, usageReported: { tokens: true, cost: false } })]] }]);
  const seven = { rounds: 1, tokens: 7, costNanos: 0, missingTokens: 0, missingCost: 1 };
  assert.deepEqual(buckets(), [[edge, { rounds: 2, tokens: 7, costNanos: 0, missingTokens: 1, missingCost: 2, rules: [{ rule: "Zebra", ...zebra }, { rule: "alerts", ...seven }] }]]);
  evolve(store.db, [{ changes: [["runs", 2, run({ rule: "Zebra", state: "nothing", endedAt: t + 3600_000 })]] }]);
  assert.deepEqual(buckets(), [
    [edge, { ...seven, rules: [{ rule: "alerts", ...seven }] }], [edge + 3600_000, { ...zebra, rules: [{ rule: "Zebra", ...zebra }] }],
  ], "a rule whose runs all left a bucket leaves its list");
  evolve(store.db, [{ changes: [["runs", 1, null], ["runs", 2, run({ state: "cancelled", attempt: 0, endedAt: t })]] }]);
  assert.deepEqual(buckets(), [], "a deleted run and one cancelled before any attempt leave nothing behind");
  evolve(store.db, [{ changes: [["runs", 3, run({ state: "cancelled", endedAt: t, mergedInto: 4, attempt: 2 })]] }]);
  assert.deepEqual(buckets(), [], "a run merged into another is counted there, not here");
  // Only "cancelled before any attempt" is left out: a run cancelled after an attempt counts, and so does one that
  // ended otherwise without an attempt.
  evolve(store.db, [{ changes: [["runs", 5, run({ state: "cancelled", attempt: 1, endedAt: t })], ["runs", 6, run({ state: "nothing", attempt: 0, endedAt: t })]] }]);
  const two = { rounds: 2, tokens: 0, costNanos: 0, missingTokens: 2, missingCost: 2 };
  assert.deepEqual(buckets(), [[edge, { ...two, rules: [{ rule: "alerts", ...two }] }]]);
  assert.throws(() => evolve(store.db, [{ changes: [["usage", edge, { rounds: 1 }]] }]), { message: "evolve: usage is derived from runs, never written by a fact" });
  for (const table of ["nope", "constructor"]) {
    assert.throws(() => evolve(store.db, [{ changes: [[table, 1, {}]] }]), { message: `evolve: unknown table ${table}` });
  }
  store.close();
});

test("a reported usage too large to count exactly counts as not reported, never as 0 or as a broken sum", () => {
  const store = new Store({ path: ":memory:", master: Buffer.alloc(32), fingerprint: "t" });
  const buckets = () => store.view.where("usage", "1 ORDER BY key").map(({ row }) => row);
  const t = Date.parse("2026-11-02T08:20:00Z");
  const ended = (usage: Record<string, number>) => ({
    rule: "alerts", endedAt: t, mergedInto: null, state: "done", attempt: 1, usage, usageReported: { tokens: "input" in usage || "output" in usage, cost: "cost" in usage },
  });
  // 1.7976931348623157e308 twice sums to Infinity (stored as JSON null); 1e300 USD is no whole number of nano-USD;
  // 2.5 tokens are not a count.
  evolve(store.db, [{ changes: [["runs", 1, ended({ input: Number.MAX_VALUE, output: Number.MAX_VALUE, cost: 1e300 })]] }]);
  evolve(store.db, [{ changes: [["runs", 2, ended({ input: 2.5, cost: 0.25 })]] }]);
  evolve(store.db, [{ changes: [["runs", 3, ended({ input: 40, output: 2 })]] }]);
  const sum = { rounds: 3, tokens: 42, costNanos: 250_000_000, missingTokens: 2, missingCost: 2 };
  assert.deepEqual(buckets(), [{ ...sum, rules: [{ rule: "alerts", ...sum }] }]);
  evolve(store.db, [{ changes: [["runs", 1, null], ["runs", 2, null], ["runs", 3, null]] }]);
  assert.deepEqual(buckets(), [], "taking the runs out again leaves exact zeros, so nothing is left behind");
  store.close();
});

test("a bucket's rules are sorted by name whatever order their runs come in; a run rewritten to another rule moves its share", () => {
  const t = Date.parse("2026-11-02T08:20:00Z");
  const ended = (rule: string, input: number) => ({
    rule, endedAt: t, mergedInto: null, state: "done", attempt: 1, usage: { input }, usageReported: { tokens: true, cost: false },
  });
  const rows = (order: string[]) => {
    const store = new Store({ path: ":memory:", master: Buffer.alloc(32), fingerprint: "t" });
    order.forEach((rule, i) => evolve(store.db, [{ changes: [["runs", i + 1, ended(rule, rule.length)]] }]));
    const out = store.view.where("usage", "1").map(({ row }) => row.rules.map((r) => `${r.rule}:${r.tokens}`));
    store.close();
    return out;
  };
  const sorted = [["B:1", "a:1", "bb:2", "ccc:3"]];
  for (const order of [["bb", "a", "ccc", "B"], ["ccc", "bb", "B", "a"], ["a", "B", "ccc", "bb"], ["B", "a", "bb", "ccc"]]) assert.deepEqual(rows(order), sorted, order.join());
  const store = new Store({ path: ":memory:", master: Buffer.alloc(32), fingerprint: "t" });
  evolve(store.db, [{ changes: [["runs", 1, ended("alerts", 5)]] }]);
  evolve(store.db, [{ changes: [["runs", 1, ended("pages", 5)]] }]);
  const five = { rounds: 1, tokens: 5, costNanos: 0, missingTokens: 0, missingCost: 1 };
  assert.deepEqual(store.view.where("usage", "1").map(({ row }) => row), [{ ...five, rules: [{ rule: "pages", ...five }] }]);
  store.close();
});
