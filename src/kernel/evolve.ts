/**
 * The projection (view) schema and `evolve`, its only writer (protocol.md 日志与确定性).
 * Every table keeps a row as JSON in `data`; indexed columns are generated from it, so applying a fact is a
 * mechanical upsert or delete per change and replaying the log rebuilds exactly the same view.
 * This file decides stored content: changing it changes the format fingerprint and makes the hub rebuild.
 */
import type { Fact, RulesRow, UsageBucket, UsageRow } from "./types.js";
import type { TableName } from "./tables.js";

export type { RulesRow, UsageBucket, UsageRow };

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

const json = (path: string) => `json_extract(data, '$.${path}')`;

/**
 * An index of a projection table: its columns, and for a partial index the condition a row must meet to be in it.
 * A row outside a partial index costs no index write, and every commit's pages are written and synced (WAL + FULL).
 */
export interface IndexDef { columns: string[]; where?: string }

/** The SQL of one projection table: an integer or text key, generated columns (name → SQL expression) and indexes. */
export interface TableDef { intKey: boolean; columns: Record<string, string>; indexes: IndexDef[] }

/**
 * Projection tables: name → generated columns and indexes, for every table of the registry (tables.ts, which gives
 * their key and row types). Integer keys for id-numbered rows (the key is the rowid); text keys are WITHOUT ROWID
 * tables, so an upsert changes one B-tree instead of the table and its key index.
 */
export const tables: Record<TableName, TableDef> = {
  meta: { intKey: false, columns: {}, indexes: [] },
  keys: { intKey: false, columns: { kn: `${json("kind")} || '/' || ${json("name")}` }, indexes: [{ columns: ["kn"] }] },
  events: {
    intKey: true,
    columns: { sk: `${json("source")} || char(0) || ${json("sid")}`, unrouted: json("unrouted"), skipped: `json_array_length(data, '$.paused') > 0` },
    indexes: [{ columns: ["sk"] }, { columns: ["key"], where: "unrouted = 1" }, { columns: ["key"], where: "skipped = 1" }],
  },
  runs: {
    intKey: true,
    columns: { state: json("state"), ck: `${json("worker")} || char(0) || ${json("claim")}`, ended: json("endedAt"), rule: json("rule") },
    // (state, rule): runs by state and rule read from the index alone (GET /metrics: 0.9 s a scrape at 20k runs read
    // every row's JSON; issue 32).
    indexes: [{ columns: ["state", "key"] }, { columns: ["ck"], where: "ck IS NOT NULL" }, { columns: ["ended"], where: "ended IS NOT NULL" }, { columns: ["state", "rule"] }],
  },
  cards: {
    intKey: true,
    columns: { state: json("state"), sg: `${json("source")} || char(0) || ${json("group")}`, rl: `${json("rule")} || char(0) || ${json("lane")}` },
    indexes: [{ columns: ["state", "key"] }, { columns: ["sg", "state"] }, { columns: ["rl", "key"] }],
  },
  lanes: { intKey: false, columns: {}, indexes: [] },
  groups: { intKey: false, columns: {}, indexes: [] },
  workers: { intKey: false, columns: {}, indexes: [] },
  channels: { intKey: false, columns: {}, indexes: [] },
  timers: { intKey: false, columns: { at: json("at"), rl: `${json("rule")} || char(0) || ${json("lane")}` }, indexes: [{ columns: ["rl"] }, { columns: ["at"] }] },
  cardkeys: { intKey: false, columns: {}, indexes: [] },
  sessions: { intKey: false, columns: {}, indexes: [] },
  due: { intKey: false, columns: { at: json("at") }, indexes: [{ columns: ["at"] }] },
  outbox: { intKey: false, columns: { channel: json("channel"), nextAt: json("nextAt") }, indexes: [{ columns: ["channel", "nextAt"] }, { columns: ["nextAt"] }] },
  pauses: { intKey: false, columns: {}, indexes: [] },
  crons: { intKey: false, columns: {}, indexes: [] },
  starts: { intKey: false, columns: {}, indexes: [] },
  spend: { intKey: false, columns: {}, indexes: [] },
  /** Ended runs summed per quarter hour of their end (`usageBucketMs`), kept by `evolve` itself: see `UsageBucket`. */
  usage: { intKey: true, columns: {}, indexes: [] },
  calls: { intKey: true, columns: { run: json("run") }, indexes: [{ columns: ["run"] }] },
  trust: { intKey: false, columns: {}, indexes: [] },
  grants: { intKey: false, columns: {}, indexes: [] },
  tasks: { intKey: false, columns: {}, indexes: [] },
  /** Ended tool calls per quarter hour and plugin; the key starts with the quarter hour, so a day is one key range. */
  toolstats: { intKey: false, columns: {}, indexes: [] },
  /** A run's artifacts are counted and listed by their run. */
  artifacts: { intKey: false, columns: { run: json("run") }, indexes: [{ columns: ["run"] }] },
};

/** Width of a `usage` bucket (ms): a quarter hour, so a day starts on a bucket edge in every time zone in use. */
export const usageBucketMs = 15 * 60_000;

type RunUsage = {
  rule: string; endedAt: number | null; mergedInto: number | null; state: string; attempt: number;
  usage: { input?: number; output?: number; cost?: number } | null; usageReported: { tokens: boolean; cost: boolean };
};

/**
 * A run row's share of its bucket (and of its rule's sums there), or null when it does not count (not ended, merged,
 * cancelled unclaimed).
 * Reported tokens count when they sum to a whole number within 2^53, cost when it is a whole number of nano-USD
 * within 2^53 (~9 million USD); anything else (2.5 tokens, 1e308 twice, 1e300 USD) counts as not reported, since it
 * cannot be added and taken out again exactly.
 */
export function usageOf(run: RunUsage): { bucket: number; rule: string; add: UsageBucket } | null {
  if (run.endedAt === null || run.mergedInto !== null || (run.state === "cancelled" && run.attempt === 0)) return null;
  const u = run.usage ?? {};
  const tokens = (u.input ?? 0) + (u.output ?? 0);
  const costNanos = Math.round((u.cost ?? 0) * 1e9);
  const countsTokens = run.usageReported.tokens && Number.isSafeInteger(tokens);
  const countsCost = run.usageReported.cost && Number.isSafeInteger(costNanos);
  return {
    bucket: Math.floor(run.endedAt / usageBucketMs) * usageBucketMs,
    rule: run.rule,
    add: {
      rounds: 1,
      tokens: countsTokens ? tokens : 0,
      costNanos: countsCost ? costNanos : 0,
      missingTokens: countsTokens ? 0 : 1,
      missingCost: countsCost ? 0 : 1,
    },
  };
}

/**
 * Moves one run's share out of (sign -1) or into (sign 1) its `usage` bucket and its rule's sums there; an emptied
 * bucket is deleted, an emptied rule leaves the bucket's list.
 */
function addUsage(db: Db, share: NonNullable<ReturnType<typeof usageOf>>, sign: 1 | -1): void {
  const old = stmt(db, `SELECT data FROM v_usage WHERE key = ?`).get(share.bucket) as { data: string } | undefined;
  const b: UsageRow = old ? JSON.parse(old.data) : { rounds: 0, tokens: 0, costNanos: 0, missingTokens: 0, missingCost: 0, rules: [] };
  let r = b.rules.find((x) => x.rule === share.rule);
  if (!r) b.rules.push((r = { rule: share.rule, rounds: 0, tokens: 0, costNanos: 0, missingTokens: 0, missingCost: 0 }));
  for (const k of Object.keys(share.add) as (keyof UsageBucket)[]) {
    b[k] += sign * share.add[k];
    r[k] += sign * share.add[k];
  }
  b.rules = b.rules.filter((x) => x.rounds !== 0).sort((x, y) => (x.rule < y.rule ? -1 : x.rule > y.rule ? 1 : 0));
  if (b.rounds === 0) stmt(db, `DELETE FROM v_usage WHERE key = ?`).run(share.bucket);
  else stmt(db, `INSERT OR REPLACE INTO v_usage (key, data) VALUES (?, ?)`).run(share.bucket, JSON.stringify(b));
}

/** Keeps the `usage` buckets equal to the sum over run rows: takes out the old row's share, adds the new one's. */
function trackUsage(db: Db, key: string | number, row: object | null): void {
  // Most changes are to runs that have not ended: the indexed column says so without parsing the row.
  const ended = stmt(db, `SELECT ended FROM v_runs WHERE key = ?`).get(key) as { ended: number | null } | undefined;
  const old = ended && ended.ended !== null ? (stmt(db, `SELECT data FROM v_runs WHERE key = ?`).get(key) as { data: string }) : null;
  const before = old ? usageOf(JSON.parse(old.data) as RunUsage) : null;
  const after = row ? usageOf(row as RunUsage) : null;
  if (before && after && before.bucket === after.bucket && before.rule === after.rule && JSON.stringify(before.add) === JSON.stringify(after.add)) return;
  if (before) addUsage(db, before, -1);
  if (after) addUsage(db, after, 1);
}

/** SQL that creates the projection tables (idempotent). */
export function projectionDdl(): string[] {
  const out: string[] = [];
  for (const [name, def] of Object.entries(tables)) {
    const cols = Object.entries(def.columns).map(([c, expr]) => `, ${c} GENERATED ALWAYS AS (${expr}) VIRTUAL`).join("");
    const table = def.intKey ? `key INTEGER PRIMARY KEY, data TEXT NOT NULL${cols})` : `key TEXT PRIMARY KEY, data TEXT NOT NULL${cols}) WITHOUT ROWID`;
    out.push(`CREATE TABLE IF NOT EXISTS v_${name} (${table}`);
    def.indexes.forEach((ix, i) => out.push(`CREATE INDEX IF NOT EXISTS v_${name}_i${i} ON v_${name} (${ix.columns.join(", ")})${ix.where ? ` WHERE ${ix.where}` : ""}`));
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

/** A change's row as the projection keeps it: a rules version without its body (see `RulesRow`), any other row as it is. */
function projected(table: string, key: string | number, row: object, seq: number | undefined): object {
  if (table !== "meta" || key !== "rules") return row;
  if (seq === undefined) throw new Error("evolve: a rules version needs the seq of the fact that holds it");
  const { version, hash, at } = row as RulesRow;
  return { version, hash, at, seq } satisfies RulesRow;
}

/**
 * Applies facts to the projection: each change upserts or deletes one row; a change of a run also moves its share
 * of the `usage` buckets, which no fact names. The only projection writer.
 * @param facts changes with the `seq` of their fact (needed for a rules version, see `RulesRow`).
 * @throws Error on a change to an unknown table or to `usage`, or a rules version without `seq` (a bug, never bad input).
 */
export function evolve(db: Db, facts: readonly (Pick<Fact, "changes"> & { seq?: number })[]): void {
  for (const f of facts) {
    for (const [table, key, row] of f.changes) {
      if (!Object.hasOwn(tables, table)) throw new Error(`evolve: unknown table ${table}`);
      if (table === "usage") throw new Error("evolve: usage is derived from runs, never written by a fact");
      if (table === "runs") trackUsage(db, key, row);
      if (row === null) stmt(db, `DELETE FROM v_${table} WHERE key = ?`).run(key);
      else stmt(db, `INSERT OR REPLACE INTO v_${table} (key, data) VALUES (?, ?)`).run(key, JSON.stringify(projected(table, key, row, f.seq)));
    }
  }
}
