/**
 * `Store.commit` when SQLite rolls back the whole transaction itself, as it may on a full disk, an I/O error or out
 * of memory (sqlite.org/lang_transaction.html, "Response To Errors Within A Transaction"): here a trigger's
 * RAISE(ROLLBACK) does it. The caller gets that error — not SQLite's "no such savepoint" from undoing a savepoint the
 * rollback took with it — nothing of the batch is written, and the next commit works.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Store } from "../src/host/store.js";
import { hashKey } from "../src/kernel/credentials.js";
import type { Env, Input } from "../src/kernel/types.js";
import { tempDir } from "./helpers.js";

const env: Env = { master: Buffer.alloc(32, 5), lang: "en", publicUrl: null };
const src = hashKey("src");

function opened(): { store: Store; batch: (...inputs: Input[]) => { status: number }[] } {
  const store = new Store({ path: join(tempDir("aa-rollback-"), "hub.db"), master: env.master });
  let now = 1_000_000;
  const batch = (...inputs: Input[]) => store.commit(inputs.map((input) => ({ input, now: (now += 1000) })), env);
  batch({ kind: "keyNew", keyHash: null, local: true, keyKind: "source", name: "shop", newHash: src });
  return { store, batch };
}

const event = (id: string): Input => ({ kind: "event", keyHash: src, event: { id, type: "other.x" } });
const facts = (store: Store) => store.db.prepare(`SELECT seq, kind FROM facts ORDER BY seq`).all();

for (const [where, table] of [["in an input's decision (the log's append)", "facts"], ["after the inputs (the log cursor's write)", "store_meta"]] as const) {
  test(`a whole transaction rolled back by SQLite ${where}: the caller gets its error, nothing is written, the next commit works`, () => {
    const { store, batch } = opened();
    const before = facts(store);
    const seq = store.seq;
    store.db.exec(`CREATE TEMP TRIGGER gone BEFORE INSERT ON ${table} BEGIN SELECT RAISE(ROLLBACK, 'rolled back whole'); END`);
    assert.throws(() => batch(event("a"), event("b")), (e: Error) => e.message === "rolled back whole");
    assert.equal(store.db.inTransaction, false);
    assert.deepEqual(facts(store), before);
    assert.equal(store.seq, seq);
    store.db.exec(`DROP TRIGGER gone`);
    assert.deepEqual(batch(event("a"), event("b")).map((d) => d.status), [200, 200]);
    assert.equal(store.seq, seq + 2);
    store.close();
  });
}
