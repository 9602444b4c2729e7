/**
 * The rebuild's reading of the log (src/host/fact-chunks.ts, issue 32): chunks bounded by facts and by bytes, each
 * collapsed to the last change of every row; the reading thread's failures and silence end the rebuild, and a
 * rebuild that fails leaves the database as it was.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import Database from "better-sqlite3";
import { copyFileSync } from "node:fs";
import { Store } from "../src/host/store.js";
import { commitLocally, readLocally } from "../src/host/serve.js";
import { homePaths, readMasterKey } from "../src/host/home.js";
import { collapseFacts, factBodyMaxChars, threadFactChunks } from "../src/host/fact-chunks.js";
import { hashKey } from "../src/kernel/credentials.js";
import type { Change, Env, Input } from "../src/kernel/types.js";
import { tempDir } from "./helpers.js";

const master = randomBytes(32);
const env: Env = { master, lang: "en", publicUrl: null };

const row = (seq: number, changes: Change[]) => ({ seq, body: JSON.stringify(changes) });

test("chunks end at their count of facts or past their bytes, each the last change of every row in the order of those changes", () => {
  const rows = [
    row(1, [["runs", 1, { state: "queued" }], ["meta", "rules", { v: 1 }]]),
    row(2, [["runs", 1, { state: "running" }], ["cards", 7, { run: 1 }]]),
    row(3, [["runs", 2, { state: "queued" }], ["runs", 1, { state: "done" }]]),
    row(4, [["events", "x", { big: "y".repeat(100) }]]),
    row(5, [["timers", 3, { run: 2 }], ["runs", 2, null]]),
  ];
  const byCount = [...collapseFacts(rows, 3, "en", 10_000)];
  assert.deepEqual(byCount, [
    { changes: [["meta", "rules", { v: 1 }], ["cards", 7, { run: 1 }], ["runs", 2, { state: "queued" }], ["runs", 1, { state: "done" }]], rulesSeq: 1, runs: [1, 1, 1, 2, 2, 3, 1, 3] },
    { changes: [["events", "x", { big: "y".repeat(100) }], ["timers", 3, { run: 2 }], ["runs", 2, null]], rulesSeq: 1, runs: [2, 5] },
  ]);
  // 120 bytes: fact 1's and 2's bodies stay below them, fact 3's reaches them; fact 4's body alone passes them.
  const sizes = rows.map((r) => r.body.length);
  assert.ok(sizes[0]! + sizes[1]! < 120 && sizes[0]! + sizes[1]! + sizes[2]! >= 120 && sizes[3]! >= 120, `sizes ${sizes}`);
  assert.deepEqual([...collapseFacts(rows, 1000, "en", 120)].map((c) => c.changes.length), [4, 1, 2]);
  assert.deepEqual([...collapseFacts([], 3, "en")], []);
});

test("a body longer than any the hub writes is refused by name before it is parsed, here and by the reading thread", () => {
  const long = { seq: 3, body: `[["events", 1, {"s": "${"x".repeat(factBodyMaxChars)}"}]]` };
  assert.throws(() => [...collapseFacts([row(1, []), long], 10, "en")],
    { name: "RangeError", message: `fact 3: its body is ${long.body.length} characters, more than the ${factBodyMaxChars} a rebuild reads (the hub writes none so long: the database is damaged)` });
  const path = join(tempDir(), "long.db");
  logOf(path, 5);
  const raw = new Database(path);
  raw.prepare(`UPDATE facts SET body = ? WHERE seq = 3`).run(long.body);
  raw.close();
  assert.throws(() => [...threadFactChunks(path, 7, "zh")], { message: `事实 3 的内容有 ${long.body.length} 个字符，超过重建读取的上限 ${factBodyMaxChars}（中台不会写出这样的事实：数据库已损坏）` });
});

test("a body that is not JSON names its fact", () => {
  assert.throws(() => [...collapseFacts([row(1, []), { seq: 2, body: "[[\"runs\", 1," }], 10, "en")], (e: Error) => e instanceof SyntaxError && e.message.startsWith("fact 2: "));
});

/** A log of `n` keys written through the store, closed. */
function logOf(path: string, n: number): void {
  const store = new Store({ path, master });
  const inputs: Input[] = Array.from({ length: n }, (_, i) => ({ kind: "keyNew", keyHash: null, local: true, keyKind: "source", name: `s${i}`, newHash: hashKey(`k${i}`) }));
  for (const d of store.commit(inputs.map((input) => ({ input, now: 1_000 })), env)) assert.equal(d.status, 200);
  store.close();
}

test("the reading thread streams the file's log: the same chunks as read here; silence past its limit ends the reading", () => {
  const path = join(tempDir(), "log.db");
  logOf(path, 40);
  const db = new Database(path, { readonly: true });
  const here = [...collapseFacts(db.prepare(`SELECT seq, body FROM facts ORDER BY seq`).iterate() as Iterable<{ seq: number; body: string }>, 7, "en")];
  db.close();
  assert.equal(here.length, 6);
  assert.deepEqual([...threadFactChunks(path, 7, "en")], here);
  // No chunk can have come before the wait starts: a limit of 0 ms gives up at once.
  assert.throws(() => [...threadFactChunks(path, 7, "en", 0)], { message: "the thread reading the fact log sent nothing for 0 ms" });
  assert.throws(() => [...threadFactChunks(path, 7, "zh", 0)], { message: "读取事实日志的线程 0 毫秒内没有送来任何内容" });
  assert.throws(() => [...threadFactChunks(join(tempDir(), "none.db"), 7, "en")], { message: "unable to open database file" });
});

test("a rebuild whose log holds a body that is not JSON fails and leaves the projection, the index of runs and the fingerprint as they were", () => {
  const path = join(tempDir(), "broken.db");
  logOf(path, 30);
  const raw = new Database(path);
  const before = {
    keys: raw.prepare(`SELECT key, data FROM v_keys ORDER BY key`).all(),
    meta: raw.prepare(`SELECT key, value FROM store_meta ORDER BY key`).all(),
  };
  assert.equal(before.keys.length, 30);
  raw.prepare(`UPDATE facts SET body = '[["keys",' WHERE seq = 17`).run();
  raw.close();
  // Read here (a short log) and by the reading thread.
  for (const rebuildThreadMinFacts of [undefined, 0]) {
    assert.throws(() => new Store({ path, master, fingerprint: "another format", rebuildThreadMinFacts }),
      (e: Error) => e.message.startsWith("the projection could not be rebuilt from the fact log (the database is left as it was): fact 17: "));
    assert.throws(() => new Store({ path, master, fingerprint: "another format", lang: "zh", rebuildThreadMinFacts }), (e: Error) => e.message.startsWith("无法从事实日志重建投影（数据库保持原样）：fact 17: "));
  }
  // The CLI's own commits and reads (no hub running) say it in the home's language too.
  const home = homePaths(tempDir());
  readMasterKey(home, true);
  copyFileSync(path, home.database);
  const stale = new Database(home.database);
  stale.prepare(`UPDATE store_meta SET value = 'another format' WHERE key = 'fingerprint'`).run();
  stale.close();
  assert.throws(() => commitLocally(home, [], "zh"), (e: Error) => e.message.startsWith("无法从事实日志重建投影（数据库保持原样）：fact 17: "));
  assert.throws(() => readLocally(home, () => 1, "zh"), (e: Error) => e.message.startsWith("无法从事实日志重建投影（数据库保持原样）：fact 17: "));
  const after = new Database(path, { readonly: true });
  assert.deepEqual({ keys: after.prepare(`SELECT key, data FROM v_keys ORDER BY key`).all(), meta: after.prepare(`SELECT key, value FROM store_meta ORDER BY key`).all() }, before);
  after.close();
});
