/**
 * Reading the projection (protocol.md 日志与确定性: the view is read through SQLite indexes on demand;
 * nothing of history is held in memory). `Tx` overlays the changes one decision makes, so `decide`
 * reads its own writes without touching the database; the changes become the decision's fact.
 */
import type { Db, Statement } from "./evolve.js";
import type {
  CardRow, CardState, Change, EventRow, KeyKind, OutboxRow, RulesMeta, RulesRow, RulesVersionRow, RunRow, RunState, TimerRow, ToolCallRow,
  TrustRow,
} from "./types.js";
import type { Rules } from "./rules.js";
import { laneKey, type KeyOf, type RowOf, type TableName } from "./tables.js";

/**
 * What a decision reads of the projection: rows by table and key (typed by the table registry, tables.ts) and the
 * few questions decisions ask across rows, each answered through an index. No SQL crosses this line: the host's
 * `View` answers over SQLite, and a decision sees nothing else of it.
 */
export interface Projection {
  /** One row of `table` by key, or undefined. */
  get<T extends TableName, K extends KeyOf<T>>(table: T, key: K): RowOf<T, K> | undefined;
  /** The current rules with their version, or undefined before any were loaded. */
  rules(): RulesMeta | undefined;
  /** The hashes of the keys of this kind and name (one, or none). */
  keysNamed(kind: KeyKind, name: string): string[];
  /** The event `source` posted with its own id `sid`, if recorded. */
  eventBySourceId(source: string, sid: string): EventRow | undefined;
  /** The run `worker` claimed with claim id `claim`, if any. */
  runOfClaim(worker: string, claim: string): RunRow | undefined;
  /** The runs in one of `states`, oldest first. */
  runsIn(states: readonly RunState[]): RunRow[];
  /** The queued runs, oldest first, read a page at a time: a loop that stops early reads only the pages it went through. */
  queuedRuns(): Iterable<RunRow>;
  /** The cards in `state`, oldest first. */
  cardsIn(state: CardState): CardRow[];
  /** The newest `limit` open cards of a source and group, oldest first (a job's `open` context). */
  openCardsOf(source: string, group: string, limit: number): CardRow[];
  /** The newest `limit` cards of a lane that are no longer open, newest first (a job's `decided` context). */
  settledCardsOf(rule: string, lane: string, limit: number): CardRow[];
  /** The `later` timers of a lane, soonest first. */
  timersOf(rule: string, lane: string): TimerRow[];
  /** The outbox row `channel` should be offered now (`nextAt` at or before `now`, ms), earliest first, if any. */
  nextOffer(channel: string, now: number): { key: string; row: OutboxRow } | undefined;
  /** The names of the rules that have a cron schedule row. */
  cronRules(): string[];
  /** The earliest deadline of the due table (ms), or null. */
  nextDueAt(): number | null;
  /** The keys of the deadlines at or before `now` (ms), earliest first then by key, at most `limit`. */
  dueKeys(now: number, limit: number): string[];
  /** The earliest `nextAt` of the outbox after `afterMs` (ms), or null. */
  nextOfferAt(afterMs: number): number | null;
  /** How many tool calls run `run` made (issue 16). */
  toolCallsOfRun(run: number): number;
  /** The tool calls of run `run` allowed and still without an outcome, oldest first (issue 26). */
  allowedCallsOfRun(run: number): ToolCallRow[];
  /** How many tool calls of run `run` have an approval card still open (issue 26 round 6, F9). */
  openApprovalsOfRun(run: number): number;
  /** How many artifacts run `run` sent (issue 18). */
  artifactsOfRun(run: number): number;
  /** The trust entries of plugin `plugin` (its "always allow" answers, one per digest), newest first (issue 26 #4). */
  trustOf(plugin: string): TrustRow[];
}

/** A run's row without its job (`View.runSummaries`): what the owner's lists of runs read. */
export type RunSummary = Omit<RunRow, "job">;

/** Rows the view reads a page at a time (`queuedRuns`). */
const scanPageRows = 32;

/**
 * The projection over SQLite: one instance per database; it caches prepared statements and parsed rules. Decisions
 * read it through `Projection`; the shell (the state summary, the link page) and the tests may also ask it SQL
 * directly (`where`, `sql`).
 */
export class View implements Projection {
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

  get<T extends TableName, K extends KeyOf<T>>(table: T, key: K): RowOf<T, K> | undefined {
    const r = this.sql(`SELECT data FROM v_${table} WHERE key = ?`).get(key) as { data: string } | undefined;
    return r ? (JSON.parse(r.data) as RowOf<T, K>) : undefined;
  }

  /** Rows of `table` matching a WHERE clause over its generated columns, parsed, with their keys (the shell's reads). */
  where<T extends TableName>(table: T, clause: string, ...params: unknown[]): { key: KeyOf<T>; row: RowOf<T> }[] {
    return (this.sql(`SELECT key, data FROM v_${table} WHERE ${clause}`).all(...params) as { key: KeyOf<T>; data: string }[]).map(
      (r) => ({ key: r.key, row: JSON.parse(r.data) as RowOf<T> }),
    );
  }

  /**
   * Runs matching a WHERE clause over `v_runs`, parsed without their `job` (SQLite drops it before the row reaches
   * JavaScript): the state summary and the search read a page of runs and never their jobs, and a job holds the open
   * cards of its group (with 1,000 open cards, 110 KB of a 112 KB row: a page of 60 runs was 6.7 MB to parse, issue 30).
   */
  runSummaries(clause: string, ...params: unknown[]): { key: number; row: RunSummary }[] {
    return (this.sql(`SELECT key, json_remove(data, '$.job') AS data FROM v_runs WHERE ${clause}`).all(...params) as { key: number; data: string }[]).map(
      (r) => ({ key: r.key, row: JSON.parse(r.data) as RunSummary }),
    );
  }

  private rows<T extends TableName>(table: T, clause: string, ...params: unknown[]): RowOf<T>[] {
    return this.where(table, clause, ...params).map((r) => r.row);
  }

  /**
   * Drops the rules this view parsed and keeps its prepared statements: after the store undid commits (`Store.trial`)
   * a rules version number can come back with other rules.
   */
  forgetParsed(): void {
    this.rulesCache = null;
  }

  /** The current rules, parsed once per rules version (a new view version never reads old rules). */
  rules(): RulesMeta | undefined {
    const v = this.get("meta", "rulesVersion") as RulesVersionRow | undefined;
    if (!v) return undefined;
    if (this.rulesCache?.version === v.version) return this.rulesCache.meta;
    // The projection keeps a rules version without its body (evolve's `projected`).
    const row = this.get("meta", "rules") as RulesRow | undefined;
    if (!row) return undefined;
    const loaded = this.factChanges(row.seq)?.find(([table, key]) => table === "meta" && key === "rules")?.[2] as RulesMeta | null | undefined;
    if (!loaded) throw new Error(`view: the log has no rules at seq ${row.seq}, where rules version ${row.version} points`);
    const meta: RulesMeta = { version: row.version, hash: row.hash, rules: loaded.rules, at: row.at };
    this.rulesCache = { version: v.version, meta };
    return meta;
  }

  keysNamed(kind: KeyKind, name: string): string[] {
    return this.where("keys", "kn = ?", `${kind}/${name}`).map((r) => r.key);
  }

  eventBySourceId(source: string, sid: string): EventRow | undefined {
    return this.rows("events", "sk = ?", `${source}\u0000${sid}`)[0];
  }

  runOfClaim(worker: string, claim: string): RunRow | undefined {
    return this.rows("runs", "ck = ?", `${worker}\u0000${claim}`)[0];
  }

  runsIn(states: readonly RunState[]): RunRow[] {
    return this.rows("runs", `state IN (${states.map(() => "?").join(", ")}) ORDER BY key`, ...states);
  }

  *queuedRuns(): Generator<RunRow> {
    const page = this.sql(`SELECT key, data FROM v_runs WHERE state = 'queued' AND key > ? ORDER BY key LIMIT ${scanPageRows}`);
    let after = -Infinity;
    for (;;) {
      const rows = page.all(after) as { key: number; data: string }[];
      for (const r of rows) yield JSON.parse(r.data) as RunRow;
      if (rows.length < scanPageRows) return;
      after = rows[rows.length - 1]!.key;
    }
  }

  cardsIn(state: CardState): CardRow[] {
    return this.rows("cards", "state = ? ORDER BY key", state);
  }

  openCardsOf(source: string, group: string, limit: number): CardRow[] {
    return this.rows("cards", "sg = ? AND state = 'open' ORDER BY key DESC LIMIT ?", `${source}\u0000${group}`, limit).reverse();
  }

  settledCardsOf(rule: string, lane: string, limit: number): CardRow[] {
    return this.rows("cards", "rl = ? AND state != 'open' ORDER BY key DESC LIMIT ?", laneKey(rule, lane), limit);
  }

  timersOf(rule: string, lane: string): TimerRow[] {
    return this.rows("timers", "rl = ? ORDER BY at", laneKey(rule, lane));
  }

  nextOffer(channel: string, now: number): { key: string; row: OutboxRow } | undefined {
    return this.where("outbox", "channel = ? AND nextAt <= ? ORDER BY nextAt, key LIMIT 1", channel, now)[0];
  }

  cronRules(): string[] {
    return (this.sql(`SELECT key FROM v_crons`).all() as { key: string }[]).map((r) => r.key);
  }

  nextDueAt(): number | null {
    return (this.sql(`SELECT MIN(at) AS at FROM v_due`).get() as { at: number | null }).at;
  }

  dueKeys(now: number, limit: number): string[] {
    return (this.sql(`SELECT key FROM v_due WHERE at <= ? ORDER BY at, key LIMIT ?`).all(now, limit) as { key: string }[]).map((r) => r.key);
  }

  nextOfferAt(afterMs: number): number | null {
    return (this.sql(`SELECT MIN(nextAt) AS at FROM v_outbox WHERE nextAt > ?`).get(afterMs) as { at: number | null }).at;
  }

  toolCallsOfRun(run: number): number {
    return (this.sql(`SELECT COUNT(*) AS n FROM v_calls WHERE run = ?`).get(run) as { n: number }).n;
  }

  allowedCallsOfRun(run: number): ToolCallRow[] {
    return this.rows("calls", "run = ? AND json_extract(data, '$.status') = 'allowed' ORDER BY key", run);
  }

  openApprovalsOfRun(run: number): number {
    // A run has at most toolCallsPerRunMax calls: the join reads that many rows at most.
    return (this.sql(`SELECT COUNT(*) AS n FROM v_calls c JOIN v_cards k ON k.key = json_extract(c.data, '$.card') WHERE c.run = ? AND k.state = 'open'`).get(run) as { n: number }).n;
  }

  artifactsOfRun(run: number): number {
    return (this.sql(`SELECT COUNT(*) AS n FROM v_artifacts WHERE run = ?`).get(run) as { n: number }).n;
  }

  trustOf(plugin: string): TrustRow[] {
    // Keys are `<plugin>\0<digest>` (trustKey): one key range; a plugin has few entries.
    return this.rows("trust", "key >= ? AND key < ?", `${plugin}\u0000`, `${plugin}\u0001`).sort((a, b) => b.at - a.at);
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
 * One decision's read-your-writes overlay over a `Projection`. `put`/`del` record changes in order; `get` answers
 * from the overlay first. Nothing reaches the database until the shell commits. Rows are typed by the table registry
 * (tables.ts): what `put` takes is what `get` gives.
 */
export class Tx {
  private readonly overlay = new Map<string, object | null>();
  private order: Change[] = [];
  /** Earlier facts of this decision, closed by `mark`. */
  private readonly segments: { kind: string | null; changes: Change[] }[] = [];
  private kind: string | null = null;

  constructor(readonly view: Projection) {}

  private k(table: TableName, key: string | number): string {
    return `${table}\u0001${key}`;
  }

  /** The row as this decision left it (a copy), else as the view has it; undefined when absent or deleted. */
  get<T extends TableName, K extends KeyOf<T>>(table: T, key: K): RowOf<T, K> | undefined {
    const k = this.k(table, key);
    if (this.overlay.has(k)) {
      const v = this.overlay.get(k);
      return v === null ? undefined : (structuredClone(v) as RowOf<T, K>);
    }
    return this.view.get(table, key);
  }

  /** Whether this decision already changed the row. */
  touched<T extends TableName>(table: T, key: KeyOf<T>): boolean {
    return this.overlay.has(this.k(table, key));
  }

  /** Writes a row (a copy of `row`: later changes to the object are not written). */
  put<T extends TableName, K extends KeyOf<T>>(table: T, key: K, row: RowOf<T, K>): void {
    const copy = structuredClone(row) as object;
    this.overlay.set(this.k(table, key), copy);
    this.order.push([table, key, copy]);
  }

  /** Deletes a row; a row that is not there is no change. */
  del<T extends TableName>(table: T, key: KeyOf<T>): void {
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
