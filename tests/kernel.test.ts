/**
 * The kernel against a real SQLite file: purity of `decide`, replay of the log equal to the live projection,
 * and query plans of the hot paths (events, work, results, cards) that read through indexes, never all history.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { Store } from "../src/host/store.js";
import { buildState } from "../src/host/state.js";
import { decide, dueKeys } from "../src/kernel/decide.js";
import { parseRules } from "../src/protocol/rules-file.js";
import { hashKey, runToken } from "../src/kernel/credentials.js";
import { tables } from "../src/kernel/evolve.js";
import type { Env, Input } from "../src/kernel/types.js";
import { tempDir, baseRules } from "./helpers.js";

const master = randomBytes(32);
const env: Env = { master, lang: "en", publicUrl: null };
const rules = (() => {
  const r = parseRules(JSON.stringify(baseRules), { timezone: "UTC" });
  if (!r.ok) throw new Error(r.error);
  return r.rules;
})();
const keyInputs: Input[] = [
  { kind: "keyNew", keyHash: null, local: true, keyKind: "source", name: "shop", newHash: hashKey("src") },
  { kind: "keyNew", keyHash: null, local: true, keyKind: "worker", name: "w1", newHash: hashKey("wrk") },
  { kind: "keyNew", keyHash: null, local: true, keyKind: "channel", name: "ch1", newHash: hashKey("chn") },
  { kind: "keyNew", keyHash: null, local: true, keyKind: "owner", name: "owner", newHash: hashKey("own") },
  { kind: "rules", rules, hash: "h1" },
];

function dump(store: Store): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  for (const t of Object.keys(tables)) out[t] = store.db.prepare(`SELECT key, data FROM v_${t} ORDER BY key`).all();
  return out;
}

/** A workload through the kernel: events, claims, results with receipts, deliveries, answers, ticks. */
function workload(store: Store, n: number, t0: number): void {
  let now = t0;
  const one = (input: Input) => store.commit([{ input, now: (now += 1000) }], env)[0]!;
  for (let i = 0; i < n; i++) {
    one({ kind: "event", keyHash: hashKey("src"), event: { id: `e${i}`, type: "alert.x", subject: `#${i % 3}` } });
    const w = one({ kind: "work", keyHash: hashKey("wrk"), claim: `c${i}`, running: [], capacity: 1 });
    const job = (w.body as { job: { run: number; attempt: number } | null }).job;
    if (job) {
      const token = runToken(master, job.run, job.attempt, 1);
      one({ kind: "started", run: job.run, token, session: `s${i}`, link: null });
      one({
        kind: "result", run: job.run, token, hash: `h${i}`,
        result: { outcome: i % 4 === 3 ? "failed" : "done", ask: [{ title: `q${i % 2}`, options: ["a", "b"] }], later: [{ key: "k", at: new Date(now + 60_000).toISOString() }] },
      });
    }
    const next = one({ kind: "cardsNext", keyHash: hashKey("chn") });
    const card = (next.body as { card: { id: number; version: number } | null }).card;
    if (card) {
      one({ kind: "delivered", keyHash: hashKey("chn"), card: card.id, version: card.version, ref: `m${card.id}` });
      if (i % 2 === 0) one({ kind: "answer", keyHash: hashKey("own"), card: card.id, choice: 1, text: null, by: null, ref: null });
    }
    now += 90_000;
    for (const due of dueKeys(store.view, now + 1000, Number.MAX_SAFE_INTEGER)) one({ kind: "tick", due });
  }
}

test("decide does not change the view it reads, and is deterministic", () => {
  const dir = tempDir();
  const store = new Store({ path: join(dir, "a.db"), master });
  store.commit(keyInputs.map((input) => ({ input, now: 1_000 })), env);
  workload(store, 5, 10_000);
  const before = dump(store);
  const input: Input = { kind: "event", keyHash: hashKey("src"), event: { id: "pure", type: "alert.y" } };
  const a = decide(store.view, input, 5_000_000, env);
  const b = decide(store.view, input, 5_000_000, env);
  assert.deepEqual(dump(store), before, "the projection is unchanged");
  assert.deepEqual(a, b, "same view, input, time and environment → same decision");
  assert.ok(a.facts.length === 1 && a.facts[0]!.changes.length > 0);
  store.close();
});

test("replaying the whole log gives exactly the live projection", () => {
  const dir = tempDir();
  const path = join(dir, "b.db");
  const live = new Store({ path, master });
  live.commit(keyInputs.map((input) => ({ input, now: 1_000 })), env);
  workload(live, 40, 10_000);
  const expected = dump(live);
  const factRuns = () => live.db.prepare(`SELECT run, seq FROM fact_runs ORDER BY run, seq`).all();
  const expectedRuns = factRuns();
  assert.ok(live.seq > 150, `seq ${live.seq}`);
  assert.ok(expectedRuns.length > 100, `${expectedRuns.length} fact_runs rows`);
  live.close();
  const rebuilt = new Store({ path, master, fingerprint: "changed format" });
  assert.equal(rebuilt.opened.rebuilt, true);
  assert.deepEqual(dump(rebuilt), expected);
  rebuilt.close();
  const normal = new Store({ path, master, fingerprint: "changed format" });
  assert.equal(normal.opened.rebuilt, false, "a normal start opens the projection as it is");
  normal.close();
  // A rebuild applies the last change of each row per chunk of facts: chunk edges anywhere give the same projection.
  // Read here (a short log) and by the reading thread (made to take this one too).
  for (const [chunk, threadMinFacts] of [[1, undefined], [7, undefined], [64, undefined], [1, 0], [7, 0], [64, 0]]) {
    const again = new Store({ path, master, fingerprint: `chunks of ${chunk}, thread from ${threadMinFacts}`, rebuildChunkFacts: chunk, rebuildThreadMinFacts: threadMinFacts });
    assert.equal(again.opened.rebuilt, true);
    assert.deepEqual(dump(again), expected, `chunks of ${chunk} facts, thread from ${threadMinFacts}`);
    assert.deepEqual(again.db.prepare(`SELECT run, seq FROM fact_runs ORDER BY run, seq`).all(), expectedRuns, `fact_runs, chunks of ${chunk} facts, thread from ${threadMinFacts}`);
    again.close();
  }
});

test("the hot paths read through indexes: no full scan of events, runs, cards, timers or outbox", () => {
  const dir = tempDir();
  const store = new Store({ path: join(dir, "c.db"), master });
  store.commit(keyInputs.map((input) => ({ input, now: 1_000 })), env);
  workload(store, 30, 10_000);
  buildState(store.view, env, 20_000, store.seq, null); // the state summary's queries too
  buildState(store.view, env, 20_000, store.seq, 5);
  buildState(store.view, env, 20_000, store.seq, null, { filter: { rule: "alerts", state: "done", worker: "w1" } });
  const big = ["v_events", "v_runs", "v_cards", "v_timers", "v_outbox", "v_due", "v_keys"];
  // Walking a partial index reads only the rows it holds (unrouted or skipped events): not a scan of the table.
  const partial = Object.entries(tables).flatMap(([name, def]) => def.indexes.flatMap((ix, i) => (ix.where ? [`v_${name}_i${i}`] : [])));
  assert.deepEqual(partial, ["v_events_i1", "v_events_i2", "v_runs_i1", "v_runs_i2"]);
  // Bounded on purpose: the newest page of runs walks the rowid backwards up to its LIMIT; every pending timer is listed.
  const bounded = ["SELECT key, json_remove(data, '$.job') AS data FROM v_runs WHERE 1 ORDER BY key DESC LIMIT ?", "SELECT key, data FROM v_timers WHERE 1 ORDER BY at"];
  const scans: string[] = [];
  for (const sql of store.view.preparedSql().filter((q) => !bounded.includes(q))) {
    const plan = store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...Array(sql.split("?").length - 1).fill(0)) as { detail: string }[];
    for (const p of plan) {
      const viaPartial = partial.some((ix) => p.detail.endsWith(`USING INDEX ${ix}`));
      if (/^SCAN /.test(p.detail) && big.some((t) => p.detail.includes(t)) && !viaPartial) scans.push(`${sql} → ${p.detail}`);
    }
  }
  assert.deepEqual(scans, []);
  store.close();
});

/**
 * Clocks and randomness a kernel step could reach for (issue 27 #5): each made to throw while `run` runs, so that a
 * kernel that reads the time or draws a random number of its own fails, naming which. `new Date(ms)` and `Date.parse`
 * stay: they read the time they are given. One exception, croner (kernel/cron.ts's schedules): its `nextRun(from)`
 * reads `new Date()` and, given `from`, never uses it; it gets an invalid date, so a schedule that came to depend on
 * it would come out wrong (the workload below checks the cron deadlines' exact times).
 */
function withoutClockOrRandomness<T>(run: () => T): T {
  const RealDate = Date;
  const saved = { date: globalThis.Date, random: Math.random, perf: performance.now, uuid: crypto.randomUUID, values: crypto.getRandomValues };
  const forbidden = (what: string) => () => { throw new Error(`the kernel used ${what}`); };
  class NoClockDate extends RealDate {
    constructor(...args: [] | [string | number | Date]) {
      if (args.length > 0) super(...(args as [number]));
      else if (/[\\/]croner[\\/]/.test(new Error().stack ?? "")) super(Number.NaN);
      else throw new Error("the kernel used new Date()");
    }
    static override now = forbidden("Date.now()");
  }
  globalThis.Date = NoClockDate as unknown as DateConstructor;
  Math.random = forbidden("Math.random()");
  performance.now = forbidden("performance.now()");
  crypto.randomUUID = forbidden("crypto.randomUUID()") as typeof crypto.randomUUID;
  crypto.getRandomValues = forbidden("crypto.getRandomValues()") as typeof crypto.getRandomValues;
  try {
    return run();
  } finally {
    globalThis.Date = saved.date;
    Math.random = saved.random;
    performance.now = saved.perf;
    crypto.randomUUID = saved.uuid;
    crypto.getRandomValues = saved.values;
  }
}

test("the trap catches a clock or a random number drawn while it is set, and lets a given time through", () => {
  const uses: [string, () => unknown][] = [
    ["Date.now()", () => Date.now()], ["new Date()", () => new Date()], ["Math.random()", () => Math.random()],
    ["performance.now()", () => performance.now()], ["crypto.randomUUID()", () => crypto.randomUUID()],
    ["crypto.getRandomValues()", () => crypto.getRandomValues(new Uint8Array(4))],
  ];
  for (const [what, use] of uses) {
    assert.throws(() => withoutClockOrRandomness(use), { message: `the kernel used ${what}` });
  }
  assert.equal(withoutClockOrRandomness(() => new Date(0).toISOString()), "1970-01-01T00:00:00.000Z");
  assert.ok(Date.now() > 0 && Math.random() < 1, "restored after");
});

test("the kernel uses no clock or randomness of its own: a workload with crons, claims, results, cards and ticks", () => {
  const dir = tempDir();
  const store = new Store({ path: join(dir, "d.db"), master });
  store.commit(keyInputs.map((input) => ({ input, now: 1_000 })), env);
  const parsed = parseRules(JSON.stringify({ ...baseRules, rules: [...baseRules.rules, { name: "hourly", when: { cron: "0 * * * *" }, to: "bot" }] }), { timezone: "UTC" });
  assert.ok(parsed.ok);
  // Every decision answered: a trap sprung inside a step is a 500 (the store catches it), named here.
  const failures: string[] = [];
  const commit = store.commit.bind(store);
  store.commit = (batch, e) => {
    const out = commit(batch, e);
    out.forEach((d, i) => { if (d.status >= 500) failures.push(`${batch[i]!.input.kind}: ${d.failure?.message ?? JSON.stringify(d.body)}`); });
    return out;
  };
  const hour = 3_600_000;
  const cronDue = (at: number) => dueKeys(store.view, at, 1000).includes("cron:hourly");
  withoutClockOrRandomness(() => {
    store.commit([{ input: { kind: "rules", rules: parsed.rules, hash: "h2" }, now: 2_000 }], env);
    workload(store, 12, 10_000);
    assert.deepEqual([cronDue(hour - 1), cronDue(hour)], [false, true], "the first cron time is 01:00");
    store.commit([{ input: { kind: "tick", due: "cron:hourly" }, now: hour }], env);
    assert.deepEqual([cronDue(2 * hour - 1), cronDue(2 * hour)], [false, true], "the next one 02:00");
  });
  assert.deepEqual(failures, []);
  const state = buildState(store.view, env, 2 * hour, store.seq, null);
  assert.ok(state.runs.some((r) => r.rule === "hourly"), "the cron tick queued a run");
  store.close();
});
