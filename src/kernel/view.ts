/**
 * Reading the projection (protocol.md 日志与确定性: the view is read through SQLite indexes on demand;
 * nothing of history is held in memory). `Tx` overlays the changes one decision makes, so `decide`
 * reads its own writes without touching the database; the changes become the decision's fact.
 */
import type { Db, RulesRow, Statement } from "./evolve.js";
import type { Change, RulesMeta } from "./types.js";
import type { Rules } from "./rules.js";

/** Read access to the projection. One instance per database; it caches prepared statements and parsed rules. */
export class View {
  private readonly cache = new Map<string, Statement>();
  private rulesCache: { version: number; meta: RulesMeta } | null = null;

  /**
   * @param factChanges the changes of the log's fact `seq`, from the shell that keeps the log (undefined when there is
   *   no such fact): the body of a rules version is kept there alone (see `RulesRow`).
   */
  constructor(readonly db: Db, private readonly factChanges: (seq: number) => Change[] | undefined) {}

  /** A prepared statement, cached by its SQL text. */
  sql(sql: string): Statement {
    let s = this.cache.get(sql);
    if (!s) this.cache.set(sql, (s = this.db.prepare(sql)));
    return s;
  }

  /** The SQL texts prepared so far (to check their query plans). */
  preparedSql(): string[] {
    return [...this.cache.keys()];
  }

  /** One row of `table` by key, parsed; undefined when absent. */
  get<T>(table: string, key: string | number): T | undefined {
    const r = this.sql(`SELECT data FROM v_${table} WHERE key = ?`).get(key) as { data: string } | undefined;
    return r ? (JSON.parse(r.data) as T) : undefined;
  }

  /** Rows of `table` matching a WHERE clause over its generated columns, parsed, with their keys. */
  where<T>(table: string, clause: string, ...params: unknown[]): { key: string | number; row: T }[] {
    return (this.sql(`SELECT key, data FROM v_${table} WHERE ${clause}`).all(...params) as { key: string | number; data: string }[]).map(
      (r) => ({ key: r.key, row: JSON.parse(r.data) as T }),
    );
  }

  /**
   * Rows of `table` matching a WHERE clause over its generated columns, in key order, read `pageRows` at a time:
   * a loop that stops early reads and parses only the pages it went through (the oldest claimable of thousands
   * of queued runs). The clause must not order or limit.
   */
  *scan<T>(table: string, clause: string, params: unknown[], pageRows = 32): Generator<{ key: string | number; row: T }> {
    const page = this.sql(`SELECT key, data FROM v_${table} WHERE (${clause}) AND key > ? ORDER BY key LIMIT ${pageRows}`);
    let after: string | number = -Infinity;
    for (;;) {
      const rows = page.all(...params, after) as { key: string | number; data: string }[];
      for (const r of rows) yield { key: r.key, row: JSON.parse(r.data) as T };
      if (rows.length < pageRows) return;
      after = rows[rows.length - 1]!.key;
    }
  }

  /** The current rules, parsed once per rules version (a new view version never reads old rules). */
  rules(): RulesMeta | undefined {
    const v = this.sql(`SELECT data FROM v_meta WHERE key = 'rulesVersion'`).get() as { data: string } | undefined;
    if (!v) return undefined;
    const version = (JSON.parse(v.data) as { version: number }).version;
    if (this.rulesCache?.version === version) return this.rulesCache.meta;
    const row = this.get<RulesRow>("meta", "rules");
    if (!row) return undefined;
    const loaded = this.factChanges(row.seq)?.find(([table, key]) => table === "meta" && key === "rules")?.[2] as RulesMeta | null | undefined;
    if (!loaded) throw new Error(`view: the log has no rules at seq ${row.seq}, where rules version ${row.version} points`);
    const meta: RulesMeta = { version: row.version, hash: row.hash, rules: loaded.rules, at: row.at };
    this.rulesCache = { version, meta };
    return meta;
  }
}

function dedupe(changes: Change[]): Change[] {
  const last = new Map<string, Change>();
  for (const c of changes) {
    const k = `${c[0]}\u0001${c[1]}`;
    last.delete(k);
    last.set(k, c);
  }
  return [...last.values()];
}

/** Current rules or an empty rule set when none was ever loaded. */
export function emptyRules(): Rules {
  return { timezone: "UTC", askFirst: [], sources: {}, agents: {}, channels: {}, rules: [], elsewhere: [] };
}

/**
 * One decision's read-your-writes overlay over a `View`. `put`/`del` record changes in order;
 * `get` answers from the overlay first. Nothing reaches the database until the shell commits.
 */
export class Tx {
  private readonly overlay = new Map<string, object | null>();
  private order: Change[] = [];
  /** Earlier facts of this decision, closed by `mark`. */
  private readonly segments: { kind: string | null; changes: Change[] }[] = [];
  private kind: string | null = null;

  constructor(readonly view: View) {}

  private k(table: string, key: string | number): string {
    return `${table}\u0001${key}`;
  }

  get<T>(table: string, key: string | number): T | undefined {
    const k = this.k(table, key);
    if (this.overlay.has(k)) {
      const v = this.overlay.get(k);
      return v === null ? undefined : (structuredClone(v) as T);
    }
    return this.view.get<T>(table, key);
  }

  /** Whether this decision already changed the row. */
  touched(table: string, key: string | number): boolean {
    return this.overlay.has(this.k(table, key));
  }

  put(table: string, key: string | number, row: object): void {
    const copy = structuredClone(row);
    this.overlay.set(this.k(table, key), copy);
    this.order.push([table, key, copy]);
  }

  del(table: string, key: string | number): void {
    if (!this.overlay.has(this.k(table, key)) && this.view.get(table, key) === undefined) return;
    this.overlay.set(this.k(table, key), null);
    this.order.push([table, key, null]);
  }

  /**
   * Starts a new fact of `kind` in this decision: the changes so far stay in the facts before it
   * (for example a result that pauses its rule for budget: `result`, then `pauseRule`).
   */
  mark(kind: string): void {
    this.segments.push({ kind: this.kind, changes: this.order });
    this.order = [];
    this.kind = kind;
  }

  /** The changes of each fact, last write per row wins within a fact. `kind` null means the input's own kind. */
  facts(): { kind: string | null; changes: Change[] }[] {
    return [...this.segments, { kind: this.kind, changes: this.order }]
      .map((seg) => ({ kind: seg.kind, changes: dedupe(seg.changes) }))
      .filter((seg) => seg.changes.length > 0);
  }

  /** All changes of the decision, last write per row wins. */
  changes(): Change[] {
    return dedupe(this.facts().flatMap((f) => f.changes));
  }
}
