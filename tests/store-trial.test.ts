/**
 * `Store.trial` (src/host/store.ts), on which the 8! enumeration runs every ordering from one starting database: all
 * a trial commits is undone — the log, the projection, the cursors, the search index and what the store and its view
 * keep in memory (the log's end, the search index's cursor, the parsed rules) — and a batch that fails inside a trial
 * is undone alone.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Store } from "../src/host/store.js";
import { parseRules } from "../src/protocol/rules-file.js";
import { hashKey } from "../src/kernel/credentials.js";
import type { Change, Env, Input } from "../src/kernel/types.js";
import { evolve } from "../src/kernel/evolve.js";
import { searchLagFacts } from "../src/kernel/limits.js";

const env: Env = { master: Buffer.alloc(32, 3), lang: "en", publicUrl: null };
const src = hashKey("src");

function rulesOf(agent: string) {
  const parsed = parseRules(JSON.stringify({
    timezone: "UTC", sources: { shop: {} }, agents: { [agent]: { worker: "w", use: "command", command: ["x"] } },
    rules: [{ name: "r", when: { source: "shop", types: ["alert.*"] }, to: agent }],
  }), { timezone: "UTC" });
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.rules;
}

function opened(): { store: Store; one: (input: Input) => { status: number; seqs: number[] } } {
  const store = new Store({ path: ":memory:", master: env.master, fingerprint: "test" });
  let now = 1_000_000;
  const one = (input: Input) => {
    const d = store.commit([{ input, now: (now += 1000) }], env)[0]!;
    return { status: d.status, seqs: d.committed.map((f) => f.seq) };
  };
  one({ kind: "keyNew", keyHash: null, local: true, keyKind: "source", name: "shop", newHash: src });
  one({ kind: "keyNew", keyHash: null, local: true, keyKind: "worker", name: "w", newHash: hashKey("w") });
  one({ kind: "rules", rules: rulesOf("a"), hash: "a" });
  return { store, one };
}

/** Every row of every table of the database, the log's and the search index's included. */
function everything(store: Store): Record<string, unknown[]> {
  const names = (store.db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'search_text_%' ORDER BY name`).all() as { name: string }[]).map((r) => r.name);
  return Object.fromEntries(names.map((n) => [n, store.db.prepare(`SELECT * FROM "${n}" ORDER BY 1`).all()]));
}

test("a trial's commits are undone whole: every table, the log's end and the search index's cursor as before", () => {
  const { store, one } = opened();
  one({ kind: "event", keyHash: src, event: { id: "before", type: "alert.x", subject: "before" } });
  const before = everything(store);
  const seq = store.seq;
  const lag = store.search.lag(store.seq);
  assert.equal(lag, 4);
  let firstInside = 0;
  store.trial(() => {
    // More facts than the search index may lag: it catches up inside the trial and moves its cursor.
    for (let i = 0; i < searchLagFacts + 10; i++) {
      const r = one({ kind: "event", keyHash: src, event: { id: `t${i}`, type: i % 2 ? "alert.x" : "other.x", subject: `trial ${i}` } });
      assert.equal(r.status, 200);
      if (i === 0) firstInside = r.seqs[0]!;
    }
    assert.equal(store.seq, seq + searchLagFacts + 10);
    assert.ok(store.search.lag(store.seq) < searchLagFacts, "the index caught up inside the trial");
    assert.ok(Number((store.db.prepare(`SELECT COUNT(*) AS n FROM search_text`).get() as { n: number }).n) > 0);
  });
  assert.equal(firstInside, seq + 1);
  assert.deepEqual(everything(store), before);
  assert.equal(store.seq, seq);
  assert.equal(store.search.lag(store.seq), lag);
  // The next commit takes the sequence number the trial's first commit had: the log goes on from where it was.
  assert.deepEqual(one({ kind: "event", keyHash: src, event: { id: "after", type: "other.x" } }), { status: 200, seqs: [seq + 1] });
  store.close();
});

test("a rules version a trial loaded and undid can come back with other rules: the view does not keep the old ones", () => {
  const { store, one } = opened();
  const version = store.view.rules()!.version;
  // The fact that loads rules "c" as the next version, as a trial commits it (then undone).
  let loadC: Change[] = [];
  store.trial(() => {
    const seq = one({ kind: "rules", rules: rulesOf("c"), hash: "c" }).seqs[0]!;
    loadC = store.factsAfter(seq - 1, 1)[0]!.changes;
  });
  store.trial(() => {
    one({ kind: "rules", rules: rulesOf("b"), hash: "b" });
    assert.equal(store.view.rules()!.version, version + 1);
    assert.deepEqual(Object.keys(store.view.rules()!.rules.agents), ["b"]);
  });
  // The same version number again, written without any decision reading the rules in between.
  store.trial(() => {
    const seq = store.seq + 1;
    store.db.prepare(`INSERT INTO facts (seq, at, kind, body) VALUES (?, ?, 'rules', ?)`).run(seq, new Date(2_000_000).toISOString(), JSON.stringify(loadC));
    evolve(store.db, [{ seq, changes: loadC }]);
    assert.equal(store.view.rules()!.version, version + 1);
    assert.deepEqual(Object.keys(store.view.rules()!.rules.agents), ["c"]);
  });
  assert.deepEqual(Object.keys(store.view.rules()!.rules.agents), ["a"]);
  store.close();
});

test("a batch that fails inside a trial is undone alone, the trial goes on; a trial never starts inside a transaction", () => {
  const { store, one } = opened();
  const before = everything(store);
  store.trial(() => {
    one({ kind: "event", keyHash: src, event: { id: "kept", type: "other.x" } });
    const kept = everything(store);
    // The log cursor's write fails: the whole batch throws and takes nothing of its own with it.
    store.db.exec(`CREATE TEMP TRIGGER refuse BEFORE INSERT ON store_meta BEGIN SELECT RAISE(ABORT, 'refused here'); END`);
    assert.throws(() => one({ kind: "event", keyHash: src, event: { id: "lost", type: "other.x" } }), /refused here/);
    store.db.exec(`DROP TRIGGER refuse`);
    assert.equal(store.db.inTransaction, true);
    assert.deepEqual(everything(store), kept);
    assert.equal(one({ kind: "event", keyHash: src, event: { id: "lost", type: "other.x" } }).status, 200);
  });
  assert.deepEqual(everything(store), before);
  assert.equal(store.db.inTransaction, false);
  // A transaction not a trial's: a trial there would roll back what it did not begin.
  store.db.exec("BEGIN");
  assert.throws(() => store.trial(() => 0), /trial-outside-transaction/);
  store.db.exec("ROLLBACK");
  store.close();
});

test("a trial inside a trial undoes its own commits alone, and the outer one goes on from where it was", () => {
  const { store, one } = opened();
  const before = everything(store);
  store.trial(() => {
    const first = one({ kind: "event", keyHash: src, event: { id: "outer", type: "alert.x" } });
    const afterOuter = everything(store);
    const seq = store.seq;
    const inner = store.trial(() => {
      const r = one({ kind: "event", keyHash: src, event: { id: "inner", type: "alert.x" } });
      assert.equal(r.seqs[0], seq + 1);
      assert.throws(() => store.trial(() => { one({ kind: "event", keyHash: src, event: { id: "deepest", type: "alert.x" } }); throw new Error("thrown inside"); }), /thrown inside/);
      assert.equal(store.seq, seq + r.seqs.length);
      return r.seqs.length;
    });
    assert.ok(inner >= 1);
    assert.deepEqual(everything(store), afterOuter);
    assert.equal(store.seq, seq);
    // The next commit takes the next number after the outer trial's, not the undone inner one's.
    assert.equal(one({ kind: "event", keyHash: src, event: { id: "again", type: "alert.x" } }).seqs[0], first.seqs.at(-1)! + 1);
  });
  assert.deepEqual(everything(store), before);
  assert.equal(store.db.inTransaction, false);
  store.close();
});

test("nested trials and the search index: an inner trial that catches the index up leaves the outer one's cursor as it was", () => {
  const { store, one } = opened();
  const before = everything(store);
  store.trial(() => {
    one({ kind: "event", keyHash: src, event: { id: "outer", type: "other.x", subject: "outer" } });
    const lag = store.search.lag(store.seq);
    const afterOuter = everything(store);
    store.trial(() => {
      for (let i = 0; i < searchLagFacts + 10; i++) one({ kind: "event", keyHash: src, event: { id: `in${i}`, type: "other.x", subject: `inner ${i}` } });
      assert.ok(store.search.lag(store.seq) < lag + searchLagFacts, "the index caught up inside");
    });
    assert.equal(store.search.lag(store.seq), lag);
    assert.deepEqual(everything(store), afterOuter);
  });
  assert.deepEqual(everything(store), before);
  store.close();
});

test("a transaction SQLite rolled back whole inside a nested trial: the error is the one thrown, nothing is left, and no trial starts in its place", () => {
  const { store, one } = opened();
  const before = everything(store);
  let thrown: unknown;
  store.trial(() => {
    one({ kind: "event", keyHash: src, event: { id: "outer", type: "alert.x" } });
    // A trigger of this transaction that rolls all of it back (itself too) on the log cursor's next write.
    store.db.exec(`CREATE TEMP TRIGGER gone BEFORE INSERT ON store_meta BEGIN SELECT RAISE(ROLLBACK, 'all of it rolled back'); END`);
    try {
      store.trial(() => one({ kind: "event", keyHash: src, event: { id: "inner", type: "alert.x" } }));
    } catch (e) {
      thrown = e;
    }
    assert.equal(store.db.inTransaction, false);
    assert.throws(() => store.trial(() => 0), /trial-outside-transaction/);
  });
  assert.equal(String(thrown), "SqliteError: all of it rolled back");
  assert.deepEqual(everything(store), before);
  assert.equal(store.db.inTransaction, false);
  store.close();
});
