/**
 * Reading the projection (src/kernel/view.ts) on a real SQLite file: prepared statements (the view's and evolve's) and parsed rules are kept,
 * and a decision's overlay (`Tx`) reads its own writes and hands over each fact's last change per row.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import Database from "better-sqlite3";
import { Store } from "../src/host/store.js";
import { Tx, View, emptyRules } from "../src/kernel/view.js";
import { evolve, projectionDdl, projectionDrop, type Db } from "../src/kernel/evolve.js";
import { parseRules } from "../src/protocol/rules-file.js";
import type { Change, Env, Fact } from "../src/kernel/types.js";
import { baseRules, tempDir } from "./helpers.js";

const env: Env = { master: randomBytes(32), lang: "en", publicUrl: null };

function rulesInput(extra: Record<string, unknown> = {}) {
  const r = parseRules(JSON.stringify({ ...baseRules, ...extra }), { timezone: "UTC" });
  if (!r.ok) throw new Error(r.error);
  return { kind: "rules" as const, rules: r.rules, hash: JSON.stringify(extra) };
}

/** A SQLite file with the projection's tables and nothing in them. */
function emptyProjection() {
  const db = new Database(join(tempDir(), "v.db"));
  for (const sql of projectionDdl()) db.exec(sql);
  return db;
}

/** `db` as a `Db` that writes down every SQL text it is asked to prepare into `prepared`. */
function preparing(db: Database.Database, prepared: string[]): Db {
  return { prepare: (sql) => (prepared.push(sql), db.prepare(sql)), exec: (sql) => db.exec(sql) };
}

test("a view prepares each SQL text once", () => {
  const db = emptyProjection();
  const prepared: string[] = [];
  const view = new View(preparing(db, prepared), () => undefined);
  assert.equal(view.get("meta", "ids"), undefined);
  assert.equal(view.get("meta", "totals"), undefined);
  assert.deepEqual(view.where("cards", "state = ?", "open"), []);
  assert.deepEqual(view.where("cards", "state = ?", "closed"), []);
  assert.deepEqual(prepared, ["SELECT data FROM v_meta WHERE key = ?", "SELECT key, data FROM v_cards WHERE state = ?"]);
  assert.deepEqual(view.preparedSql(), prepared);
  db.close();
});

test("evolve prepares each SQL text once per database, and upserts, deletes and moves usage with it", () => {
  const db = emptyProjection();
  const prepared: string[] = [];
  const counting = preparing(db, prepared);
  const ended = { rule: "alerts", state: "done", endedAt: 900_000, mergedInto: null, attempt: 1, usage: { input: 1 }, usageReported: { tokens: true, cost: false } };
  const batch = (n: number) => [
    { changes: [["meta", "m", { n }], ["runs", 1, { ...ended, n }], ["meta", "m", null]] },
    { changes: [["runs", 1, null], ["runs", 2, { ...ended, endedAt: 0 }]] },
  ] as Pick<Fact, "changes">[];
  evolve(counting, batch(1));
  const once = [...prepared];
  evolve(counting, batch(2));
  assert.deepEqual(prepared, once, "the second batch prepared nothing new");
  assert.equal(new Set(once).size, once.length, "no SQL text prepared twice");
  const one = { rounds: 1, tokens: 1, costNanos: 0, missingTokens: 0, missingCost: 1 };
  assert.deepEqual(db.prepare("SELECT key, data FROM v_usage").all(), [{ key: 0, data: JSON.stringify({ ...one, rules: [{ rule: "alerts", ...one }] }) }]);
  assert.deepEqual(db.prepare("SELECT key FROM v_runs").all(), [{ key: 2 }]);
  assert.deepEqual(db.prepare("SELECT key FROM v_meta").all(), []);
  const other = emptyProjection();
  const prepared2: string[] = [];
  evolve(preparing(other, prepared2), batch(1));
  assert.deepEqual(prepared2, once, "another database prepares its own");
  db.close();
  other.close();
});

test("evolve reads an old run row only when the run had ended, and writes a usage bucket only when the share moves", () => {
  const db = emptyProjection();
  const calls: string[] = [];
  const counting: Db = {
    prepare: (sql) => {
      const st = db.prepare(sql);
      return {
        run: (...a: unknown[]) => (calls.push(`run ${sql}`), st.run(...a)),
        get: (...a: unknown[]) => (calls.push(`get ${sql}`), st.get(...a)),
        all: (...a: unknown[]) => st.all(...a),
        iterate: (...a: unknown[]) => st.iterate(...a),
      };
    },
    exec: (sql) => db.exec(sql),
  };
  const run = (extra: object) => ({ rule: "alerts", state: "running", endedAt: null, mergedInto: null, attempt: 1, usage: null, usageReported: { tokens: false, cost: false }, ...extra });
  const apply = (row: object) => {
    calls.length = 0;
    evolve(counting, [{ changes: [["runs", 1, row]] } as Pick<Fact, "changes">]);
    return calls.filter((c) => !c.endsWith("SELECT ended FROM v_runs WHERE key = ?"));
  };
  const upsert = "run INSERT OR REPLACE INTO v_runs (key, data) VALUES (?, ?)";
  assert.deepEqual(apply(run({})), [upsert], "a new run: nothing to read");
  assert.deepEqual(apply(run({ summary: "x" })), [upsert], "a run that has not ended: its old row is not read");
  const done = run({ state: "done", endedAt: 60_000, usage: { input: 2 }, usageReported: { tokens: true, cost: false } });
  assert.deepEqual(apply(done), ["get SELECT data FROM v_usage WHERE key = ?", "run INSERT OR REPLACE INTO v_usage (key, data) VALUES (?, ?)", upsert]);
  assert.deepEqual(apply({ ...done, summary: "same share" }), ["get SELECT data FROM v_runs WHERE key = ?", upsert], "the same share in the same bucket: no usage write");
  const two = { rounds: 1, tokens: 2, costNanos: 0, missingTokens: 0, missingCost: 1 };
  assert.deepEqual(db.prepare("SELECT key, data FROM v_usage").all(), [{ key: 0, data: JSON.stringify({ ...two, rules: [{ rule: "alerts", ...two }] }) }]);
  db.close();
});

test("projectionDrop drops every projection table and nothing else", () => {
  const db = emptyProjection();
  db.exec("CREATE TABLE facts (seq INTEGER PRIMARY KEY)");
  for (const sql of projectionDrop()) db.exec(sql);
  assert.deepEqual(db.prepare("SELECT name FROM sqlite_master").all(), [{ name: "facts" }]);
  db.close();
});

test("the rules are parsed once per version: the same object until a new version is loaded", () => {
  const store = new Store({ path: join(tempDir(), "r.db"), master: env.master });
  assert.equal(store.view.rules(), undefined, "no rules loaded yet");
  store.commit([{ input: rulesInput(), now: 1000 }], env);
  const a = store.view.rules()!;
  assert.equal(store.view.rules(), a);
  assert.equal(a.version, 1);
  store.commit([{ input: rulesInput({ askFirst: ["x"] }), now: 2000 }], env);
  const b = store.view.rules()!;
  assert.notEqual(b, a);
  assert.deepEqual([b.version, b.rules.askFirst], [2, ["x"]]);
  store.close();
});

test("a rules version whose rules row is not there yet is not kept; its body is read from the fact its row names", () => {
  const db = emptyProjection();
  const meta = { version: 1, hash: "h", rules: emptyRules(), at: 5 };
  const asked: number[] = [];
  const log = new Map<number, Change[]>([[7, [["runs", 1, { state: "cancelled" }], ["meta", "rules", meta]]], [8, [["meta", "rules", null]]]]);
  const view = new View(db, (seq) => (asked.push(seq), log.get(seq)));
  db.prepare("INSERT INTO v_meta (key, data) VALUES ('rulesVersion', ?)").run(JSON.stringify({ version: 1 }));
  assert.equal(view.rules(), undefined);
  db.prepare("INSERT INTO v_meta (key, data) VALUES ('rules', ?)").run(JSON.stringify({ version: 1, hash: "h", at: 5, seq: 7 }));
  assert.deepEqual(view.rules(), meta);
  assert.deepEqual(view.rules(), meta);
  assert.deepEqual(asked, [7], "read from the log once per version");
  // A row that points at a fact without rules is a bug: it fails loudly instead of running without rules.
  for (const [seq, version] of [[8, 2], [9, 3]]) {
    db.prepare("UPDATE v_meta SET data = ? WHERE key = 'rules'").run(JSON.stringify({ version, hash: "h", at: 5, seq }));
    db.prepare("UPDATE v_meta SET data = ? WHERE key = 'rulesVersion'").run(JSON.stringify({ version }));
    assert.throws(() => view.rules(), { message: `view: the log has no rules at seq ${seq}, where rules version ${version} points` });
  }
  db.close();
});

test("evolve keeps a rules version without its body, pointing at the fact that holds it; without that fact's seq it refuses", () => {
  const db = emptyProjection();
  const meta = { version: 3, hash: "h", rules: emptyRules(), at: 5 };
  evolve(db, [{ seq: 12, changes: [["meta", "rules", meta], ["meta", "other", { rules: 1 }]] }]);
  assert.deepEqual(db.prepare("SELECT key, data FROM v_meta ORDER BY key").all(), [
    { key: "other", data: JSON.stringify({ rules: 1 }) },
    { key: "rules", data: JSON.stringify({ version: 3, hash: "h", at: 5, seq: 12 }) },
  ]);
  evolve(db, [{ changes: [["meta", "rules", null]] }]);
  assert.throws(() => evolve(db, [{ changes: [["meta", "rules", meta]] }]), { message: "evolve: a rules version needs the seq of the fact that holds it" });
  assert.deepEqual(db.prepare("SELECT key FROM v_meta").all(), [{ key: "other" }]);
  db.close();
});

test("an overlay reads its own writes as copies, deletes only what exists, and hands over the last change per row", () => {
  const store = new Store({ path: join(tempDir(), "t.db"), master: env.master });
  store.commit([{ input: rulesInput(), now: 1000 }], env);
  const tx = new Tx(store.view);
  assert.equal(tx.touched("sessions", "a"), false);
  tx.del("sessions", "a");
  assert.deepEqual(tx.facts(), [], "deleting a row that is not there is no change");
  const row = { run: 1 };
  tx.put("sessions", "a", row);
  row.run = 2;
  const got = tx.get("sessions", "a")!;
  assert.deepEqual(got, { run: 1 }, "a copy was kept");
  got.run = 3;
  assert.equal(tx.get("sessions", "a")!.run, 1, "and a copy is handed out");
  assert.equal(tx.touched("sessions", "a"), true);
  tx.put("sessions", "b", { run: 1 });
  tx.put("sessions", "a", { run: 4 });
  tx.mark("second");
  tx.del("sessions", "b");
  assert.equal(tx.get("sessions", "b"), undefined);
  tx.del("meta", "rules");
  assert.deepEqual(tx.facts(), [
    { kind: null, changes: [["sessions", "b", { run: 1 }], ["sessions", "a", { run: 4 }]] },
    { kind: "second", changes: [["sessions", "b", null], ["meta", "rules", null]] },
  ]);
  assert.deepEqual(tx.changes(), [["sessions", "a", { run: 4 }], ["sessions", "b", null], ["meta", "rules", null]]);
  tx.mark("empty");
  assert.equal(tx.facts().length, 2, "a fact with no change is dropped");
  store.close();
});

test("before any rules are loaded the kernel works with an empty rule set in UTC", () => {
  assert.deepEqual(emptyRules(), { timezone: "UTC", askFirst: [], sources: {}, agents: {}, channels: {}, rules: [], elsewhere: [] });
});
