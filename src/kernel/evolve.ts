/**
 * The projection (view) schema and `evolve`, its only writer (protocol.md 日志与确定性).
 * Every table keeps a row as JSON in `data`; indexed columns are generated from it, so applying a fact is a
 * mechanical upsert or delete per change and replaying the log rebuilds exactly the same view.
 * This file decides stored content: changing it changes the format fingerprint and makes the hub rebuild.
 */
import type { Fact } from "./types.js";

/** A minimal synchronous SQLite handle (better-sqlite3's Database satisfies it). */
export interface Db {
  prepare(sql: string): Statement;
  exec(sql: string): unknown;
}
export interface Statement {
  run(...params: unknown[]): unknown;
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  iterate(...params: unknown[]): IterableIterator<unknown>;
}

const json = (path: string, type = "") => `${type ? `CAST(` : ""}json_extract(data, '$.${path}')${type ? ` AS ${type})` : ""}`;

/** Projection tables: name → generated columns and indexes. Integer keys for id-numbered rows. */
export const tables: Record<string, { intKey: boolean; columns: Record<string, string>; indexes: string[][] }> = {
  meta: { intKey: false, columns: {}, indexes: [] },
  keys: { intKey: false, columns: { kn: `${json("kind")} || '/' || ${json("name")}` }, indexes: [["kn"]] },
  events: {
    intKey: true,
    columns: { sk: `${json("source")} || char(0) || ${json("sid")}`, unrouted: json("unrouted"), skipped: `json_array_length(data, '$.paused') > 0` },
    indexes: [["sk"], ["unrouted", "key"], ["skipped", "key"]],
  },
  runs: {
    intKey: true,
    columns: { state: json("state"), ck: `${json("worker")} || char(0) || ${json("claim")}`, ended: json("endedAt") },
    indexes: [["state", "key"], ["ck"], ["ended"]],
  },
  cards: {
    intKey: true,
    columns: { state: json("state"), sg: `${json("source")} || char(0) || ${json("group")}`, rl: `${json("rule")} || char(0) || ${json("lane")}` },
    indexes: [["state", "key"], ["sg", "state"], ["rl", "key"]],
  },
  lanes: { intKey: false, columns: {}, indexes: [] },
  groups: { intKey: false, columns: {}, indexes: [] },
  workers: { intKey: false, columns: {}, indexes: [] },
  channels: { intKey: false, columns: {}, indexes: [] },
  timers: { intKey: false, columns: { at: json("at"), rl: `${json("rule")} || char(0) || ${json("lane")}` }, indexes: [["rl"], ["at"]] },
  cardkeys: { intKey: false, columns: {}, indexes: [] },
  sessions: { intKey: false, columns: {}, indexes: [] },
  due: { intKey: false, columns: { at: json("at") }, indexes: [["at"]] },
  outbox: { intKey: false, columns: { channel: json("channel"), nextAt: json("nextAt") }, indexes: [["channel", "nextAt"], ["nextAt"]] },
  pauses: { intKey: false, columns: {}, indexes: [] },
  crons: { intKey: false, columns: {}, indexes: [] },
  spend: { intKey: false, columns: {}, indexes: [] },
};

/** SQL that creates the projection tables (idempotent). */
export function projectionDdl(): string[] {
  const out: string[] = [];
  for (const [name, def] of Object.entries(tables)) {
    const cols = Object.entries(def.columns).map(([c, expr]) => `, ${c} GENERATED ALWAYS AS (${expr}) VIRTUAL`).join("");
    out.push(`CREATE TABLE IF NOT EXISTS v_${name} (key ${def.intKey ? "INTEGER" : "TEXT"} PRIMARY KEY, data TEXT NOT NULL${cols})`);
    def.indexes.forEach((ix, i) => out.push(`CREATE INDEX IF NOT EXISTS v_${name}_i${i} ON v_${name} (${ix.join(", ")})`));
  }
  return out;
}

/** SQL that drops the projection tables (before a rebuild). */
export function projectionDrop(): string[] {
  return Object.keys(tables).map((name) => `DROP TABLE IF EXISTS v_${name}`);
}

const statements = new WeakMap<Db, Map<string, Statement>>();
function stmt(db: Db, sql: string): Statement {
  let m = statements.get(db);
  if (!m) statements.set(db, (m = new Map()));
  let s = m.get(sql);
  if (!s) m.set(sql, (s = db.prepare(sql)));
  return s;
}

/**
 * Applies facts to the projection: each change upserts or deletes one row. The only projection writer.
 * @throws Error on a change to an unknown table (a kernel bug, never bad input).
 */
export function evolve(db: Db, facts: readonly Pick<Fact, "changes">[]): void {
  for (const f of facts) {
    for (const [table, key, row] of f.changes) {
      if (!(table in tables)) throw new Error(`evolve: unknown table ${table}`);
      if (row === null) stmt(db, `DELETE FROM v_${table} WHERE key = ?`).run(key);
      else stmt(db, `INSERT OR REPLACE INTO v_${table} (key, data) VALUES (?, ?)`).run(key, JSON.stringify(row));
    }
  }
}
