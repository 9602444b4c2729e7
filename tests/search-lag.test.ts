/**
 * The search index brought up to the log in batches (issue 32): a commit no longer writes the index (an FTS5
 * segment per commit doubled an event's cost); the index lags at most `searchLagFacts` facts behind, is brought up by
 * the commit that reaches that lag and before every read, keeps its cursor in the database so a hub killed while it
 * lags catches up after the restart, and says what a full rebuild from the projection says. Real SQLite files.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import Database from "better-sqlite3";
import { Store } from "../src/host/store.js";
import { parseRules } from "../src/protocol/rules-file.js";
import { hashKey } from "../src/kernel/credentials.js";
import { searchLagFacts } from "../src/kernel/limits.js";
import type { Input } from "../src/kernel/types.js";
import { tempDir } from "./helpers.js";

const env = { master: Buffer.alloc(32, 7), lang: "en" as const, publicUrl: null };
const K = { src: hashKey("src"), w: hashKey("w") };

/** A store on a fresh file with a source, a worker and one rule, and a way to commit inputs a second apart. */
function opened(path = join(tempDir(), "hub.db")) {
  const store = new Store({ path, master: env.master });
  let now = Date.parse("2026-11-02T08:00:00Z");
  const apply = (input: Input) => {
    now += 1000;
    const [d] = store.commit([{ input, now }], env);
    assert.ok(d!.status < 400, JSON.stringify(d!.body));
    return d!.body as unknown as Record<string, never>;
  };
  return { store, path, apply };
}

function setUp(apply: (i: Input) => Record<string, never>): void {
  apply({ kind: "keyNew", keyHash: null, local: true, keyKind: "source", name: "shop", newHash: K.src } as Input);
  apply({ kind: "keyNew", keyHash: null, local: true, keyKind: "worker", name: "w", newHash: K.w } as Input);
  const rules = parseRules(JSON.stringify({
    timezone: "UTC", sources: { shop: {} }, agents: { a: { worker: "w", use: "command", command: ["x"] } },
    rules: [{ name: "alerts", when: { source: "shop", types: ["alert.*"] }, to: "a", parallel: 1000 }],
  }), { timezone: "UTC" });
  assert.ok(rules.ok);
  apply({ kind: "rules", rules: rules.rules, hash: "r" } as Input);
}

const event = (i: number): Input => ({ kind: "event", keyHash: K.src, event: { id: `e${i}`, type: "alert.x", subject: `ORDER-${i}` } } as Input);
const cursor = (db: Database.Database) => Number((db.prepare(`SELECT value FROM store_meta WHERE key = 'searchCursor'`).get() as { value: string }).value);
/** The index's texts of one kind (1 events, 2 runs, 3 cards), by id. */
const texts = (db: Database.Database, kind: number) =>
  Object.fromEntries((db.prepare(`SELECT rowid / 4 AS id, body FROM search_text WHERE rowid % 4 = ? ORDER BY rowid`).all(kind) as { id: number; body: string }[]).map((r) => [r.id, r.body]));

test("commits leave the index behind up to searchLagFacts facts; a read brings it up with every row's last text", () => {
  const { store, apply } = opened();
  setUp(apply);
  store.searchUpToDate();
  const before = store.seq;
  assert.equal(cursor(store.db), before);
  for (let i = 0; i < 3; i++) apply(event(i));
  assert.equal(cursor(store.db), before, "three events: the index has not taken them");
  assert.deepEqual(texts(store.db, 1), {});
  // The run of event 1 is claimed and ends with a notice: its text and the card's are the last ones, written once.
  const { job } = apply({ kind: "work", keyHash: K.w, claim: "c1", running: [], capacity: 1 } as Input) as unknown as { job: { run: number; token: string } };
  apply({ kind: "result", run: job.run, token: job.token, result: { outcome: "done", summary: "refunded the order", notice: [{ title: "Refund sent" }] }, hash: "h1" } as Input);
  store.searchUpToDate();
  assert.equal(cursor(store.db), store.seq);
  assert.deepEqual(Object.values(texts(store.db, 1)), ["shop\ne0\nalert.x\nORDER-0", "shop\ne1\nalert.x\nORDER-1", "shop\ne2\nalert.x\nORDER-2"]);
  const runs = texts(store.db, 2);
  assert.equal(runs[job.run], `#${job.run}\nalerts\nrefunded the order\nORDER-0`);
  assert.deepEqual(Object.values(texts(store.db, 3)), ["Refund sent\nORDER-0"]);
  // Nothing new: a read writes nothing.
  const seq = store.seq;
  store.searchUpToDate();
  assert.equal(store.seq, seq);
  store.close();
});

test("the commit that reaches searchLagFacts brings the index up in its own transaction", () => {
  const { store, apply } = opened();
  setUp(apply);
  store.searchUpToDate();
  const start = store.seq;
  let i = 0;
  while (store.seq - start < searchLagFacts - 1) apply(event(i++));
  assert.equal(cursor(store.db), start);
  apply(event(i++));
  assert.equal(store.seq - start >= searchLagFacts, true);
  assert.equal(cursor(store.db), store.seq);
  assert.equal(Object.keys(texts(store.db, 1)).length, i);
  store.close();
});

test("a store closed while its index lags (a killed hub) takes the facts it missed at the next read", () => {
  const dir = tempDir();
  const path = join(dir, "hub.db");
  const first = opened(path);
  setUp(first.apply);
  for (let i = 0; i < 5; i++) first.apply(event(i));
  const lagged = cursor(first.store.db);
  // Not closed: the process is gone as a SIGKILL leaves it (the WAL holds the commits, the index nothing of them).
  const second = new Store({ path, master: env.master });
  assert.equal(second.opened.rebuilt, false);
  assert.equal(cursor(second.db), lagged);
  second.searchUpToDate();
  assert.deepEqual(Object.values(texts(second.db, 1)), [0, 1, 2, 3, 4].map((i) => `shop\ne${i}\nalert.x\nORDER-${i}`));
  // And what it says equals a full refill from the projection (an index made anew by another format).
  const caughtUp = { events: texts(second.db, 1), runs: texts(second.db, 2), cards: texts(second.db, 3) };
  second.db.exec(`UPDATE store_meta SET value = 'older' WHERE key = 'search'`);
  first.store.close();
  second.close();
  const third = new Store({ path, master: env.master });
  assert.deepEqual({ events: texts(third.db, 1), runs: texts(third.db, 2), cards: texts(third.db, 3) }, caughtUp);
  assert.equal(cursor(third.db), third.seq);
  third.close();
});
