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
  assert.ok(live.seq > 150, `seq ${live.seq}`);
  live.close();
  const rebuilt = new Store({ path, master, fingerprint: "changed format" });
  assert.equal(rebuilt.opened.rebuilt, true);
  assert.deepEqual(dump(rebuilt), expected);
  rebuilt.close();
  const normal = new Store({ path, master, fingerprint: "changed format" });
  assert.equal(normal.opened.rebuilt, false, "a normal start opens the projection as it is");
  normal.close();
  // A rebuild applies the last change of each row per chunk of facts: chunk edges anywhere give the same projection.
  for (const chunk of [1, 7, 64]) {
    const again = new Store({ path, master, fingerprint: `chunks of ${chunk}`, rebuildChunkFacts: chunk });
    assert.equal(again.opened.rebuilt, true);
    assert.deepEqual(dump(again), expected, `chunks of ${chunk} facts`);
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
  const bounded = ["SELECT key, data FROM v_runs WHERE 1 ORDER BY key DESC LIMIT ?", "SELECT key, data FROM v_timers WHERE 1 ORDER BY at"];
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
