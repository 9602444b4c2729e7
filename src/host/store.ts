/**
 * The SQLite store (protocol.md 日志与确定性): the append-only fact log, the projection, the log cursor and the
 * format fingerprint, all committed in one transaction (WAL, synchronous=FULL). Several accepted inputs may share
 * one transaction (group commit); each is answered only after that COMMIT.
 */
import Database from "better-sqlite3";
import { closeSync, existsSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { engineDir } from "./home.js";
import { fileURLToPath } from "node:url";
import { createHash } from "node:crypto";
import { evolve, projectionDdl, projectionDrop } from "../kernel/evolve.js";
import { View } from "../kernel/view.js";
import { decide } from "../kernel/decide.js";
import { t, refusal, type Lang } from "../i18n/messages.js";
import { SearchIndex } from "./search-index.js";
import { factChunks, rebuildChunkFacts, rebuildThreadMinFacts, runsTouched } from "./fact-chunks.js";
import { searchLagFacts } from "../kernel/limits.js";
import { assert } from "../kernel/assert.js";
import type { Change, Decision, Env, Fact, FactDraft, Input } from "../kernel/types.js";

/** The files whose content decides what is stored (protocol.md: kernel/evolve.ts, kernel/credentials.ts). */
const formatFiles = ["evolve", "credentials"];

/** The source of a kernel file: the TypeScript source when the engine has it, else the compiled sibling. */
function formatSource(name: string): Buffer {
  const ts = join(engineDir, "src", "kernel", `${name}.ts`);
  return existsSync(ts) ? readFileSync(ts) : readFileSync(fileURLToPath(new URL(`../kernel/${name}.js`, import.meta.url)));
}

/**
 * The format fingerprint: SHA-256 over the files that decide stored content and the master key's hash.
 * A mismatch at open makes the store rebuild the projection from the log.
 */
export function formatFingerprint(master: Buffer): string {
  const h = createHash("sha256");
  for (const f of formatFiles) h.update(formatSource(f));
  h.update(createHash("sha256").update(master).digest());
  return h.digest("hex");
}

export interface OpenOptions {
  /** `:memory:` for the simulation. */
  path: string;
  master: Buffer;
  /** Overrides the computed fingerprint (tests of the rebuild). */
  fingerprint?: string;
  /** The language of a failed rebuild's error; default English. */
  lang?: Lang;
  /** Facts per chunk of a rebuild (tests of chunk edges); default `rebuildChunkFacts`. */
  rebuildChunkFacts?: number;
  /** Logs of at least this many facts are read by a thread of their own in a rebuild; default `rebuildThreadMinFacts`. */
  rebuildThreadMinFacts?: number;
}

/** SQLite's page cache while the projection is rebuilt, as `PRAGMA cache_size` takes it (negative: KiB). */
const rebuildCacheKib = -2000;

/** One input's decision as committed: the facts it wrote, and for a 500 the error its decision threw. */
export type StoreCommitted = Decision & { committed: Fact[]; failure?: Error };

export class Store {
  readonly db: Database.Database;
  readonly view: View;
  /** The owner's search index beside the projection (issue 30), brought up to the log in batches (`searchUpToDate`). */
  readonly search: SearchIndex;
  private lastSeq: number;
  /** How many trials (`trial`) are open, one inside the other. */
  private trials = 0;
  /** How the store was opened: whether the projection was rebuilt from the log, and how long it took (ms). */
  readonly opened: { rebuilt: boolean; rebuildMs: number; facts: number };

  constructor(opts: OpenOptions) {
    if (opts.path !== ":memory:") closeSync(openSync(opts.path, "a", 0o600)); // created private: it holds key hashes
    this.db = new Database(opts.path);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("synchronous = FULL");
    this.db.pragma("busy_timeout = 5000");
    this.db.exec(`CREATE TABLE IF NOT EXISTS facts (seq INTEGER PRIMARY KEY, at TEXT NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL)`);
    this.db.exec(`CREATE TABLE IF NOT EXISTS fact_runs (run INTEGER NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (run, seq)) WITHOUT ROWID`);
    this.db.exec(`CREATE TABLE IF NOT EXISTS store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID`);
    this.lastSeq = (this.db.prepare(`SELECT COALESCE(MAX(seq), 0) AS s FROM facts`).get() as { s: number }).s;
    const fingerprint = opts.fingerprint ?? formatFingerprint(opts.master);
    const meta = (k: string) => (this.db.prepare(`SELECT value FROM store_meta WHERE key = ?`).get(k) as { value: string } | undefined)?.value;
    const cursor = Number(meta("cursor") ?? -1);
    const started = performance.now();
    const rebuild = meta("fingerprint") !== fingerprint || cursor !== this.lastSeq;
    this.search = new SearchIndex(this.db);
    // A rebuild (and the search index's refill after it) writes every page about once, in order: a page cache of
    // SQLite's default size here (16 MB) only raised its peak RSS (issue 32: 171 → 154 MB at 1.19 M facts, no slower).
    const cache = this.db.pragma("cache_size", { simple: true }) as number;
    if (rebuild) this.db.pragma(`cache_size = ${rebuildCacheKib}`);
    try {
      try {
        if (rebuild) this.rebuild(fingerprint, opts.rebuildChunkFacts ?? rebuildChunkFacts, opts.rebuildThreadMinFacts ?? rebuildThreadMinFacts, opts.lang ?? "en");
        else for (const sql of projectionDdl()) this.db.exec(sql);
        this.search.open(rebuild, this.lastSeq);
      } finally {
        this.db.pragma(`cache_size = ${cache}`);
      }
    } catch (e) {
      // A store that did not open gives back the connection it opened.
      this.db.close();
      throw e;
    }
    this.opened = { rebuilt: rebuild, rebuildMs: rebuild ? performance.now() - started : 0, facts: this.lastSeq };
    this.view = new View(this.db, (seq) => this.factChanges(seq));
  }

  /** The sequence number of the last fact in the log. */
  get seq(): number {
    return this.lastSeq;
  }

  /**
   * Replays the whole log into a fresh projection in one transaction, streaming the facts (never loading the
   * log whole). Done at open, before the hub accepts input, so no new commit can be overwritten.
   * The log is read, parsed and collapsed to the last change of each row per chunk (`fact-chunks.ts`): by a thread of
   * its own while this connection writes the chunk before, when the log is long; an in-memory database has none.
   * @throws Error `store.rebuildFailed` in `lang` when the log cannot be read or replayed; nothing is changed then.
   */
  private rebuild(fingerprint: string, chunkFacts: number, threadMinFacts: number, lang: Lang): void {
    const replay = this.db.transaction(() => {
      for (const sql of projectionDrop()) this.db.exec(sql);
      // The tables first and their indexes once they are filled: building an index over the finished table is
      // one sort, where keeping it during the replay is a random B-tree write per change.
      const ddl = projectionDdl();
      for (const sql of ddl.filter((q) => !q.startsWith("CREATE INDEX"))) this.db.exec(sql);
      this.db.exec(`DELETE FROM fact_runs`);
      const chunks = this.db.memory || this.lastSeq === 0 ? [] : factChunks(this.db.name, this.lastSeq, chunkFacts, lang, threadMinFacts);
      const ins = this.stmt(`INSERT OR IGNORE INTO fact_runs (run, seq) VALUES (?, ?)`);
      for (const chunk of chunks) {
        evolve(this.db, [{ seq: chunk.rulesSeq, changes: chunk.changes }]);
        for (let i = 0; i < chunk.runs.length; i += 2) ins.run(chunk.runs[i], chunk.runs[i + 1]);
      }
      for (const sql of ddl.filter((q) => q.startsWith("CREATE INDEX"))) this.db.exec(sql);
      this.setMeta("fingerprint", fingerprint);
      this.setMeta("cursor", String(this.lastSeq));
    });
    try {
      replay();
    } catch (e) {
      throw new Error(t(lang, "store.rebuildFailed", { error: e instanceof Error ? e.message : String(e) }), { cause: e });
    }
  }

  private readonly statements = new Map<string, Database.Statement>();
  /** A prepared statement, cached by its SQL text. */
  private stmt(sql: string): Database.Statement {
    let s = this.statements.get(sql);
    if (!s) this.statements.set(sql, (s = this.db.prepare(sql)));
    return s;
  }

  private setMeta(key: string, value: string): void {
    this.stmt(`INSERT OR REPLACE INTO store_meta (key, value) VALUES (?, ?)`).run(key, value);
  }

  /** Remembers which runs a fact touched, so `why` reads a run's facts through an index. */
  private indexRuns(seq: number, changes: Fact["changes"]): void {
    const ins = this.stmt(`INSERT OR IGNORE INTO fact_runs (run, seq) VALUES (?, ?)`);
    for (const r of runsTouched(changes)) ins.run(r, seq);
  }

  private append(f: FactDraft, now: number): Fact {
    const fact: Fact = { v: 1, seq: this.lastSeq + 1, at: new Date(now).toISOString(), kind: f.kind, changes: f.changes };
    this.stmt(`INSERT INTO facts (seq, at, kind, body) VALUES (?, ?, ?, ?)`).run(fact.seq, fact.at, fact.kind, JSON.stringify(f.changes));
    this.indexRuns(fact.seq, f.changes);
    this.lastSeq = fact.seq;
    return fact;
  }

  /**
   * Decides and commits a batch of inputs in one transaction. An input whose decision throws (a broken kernel
   * invariant, a kernel bug, a write SQLite refuses) is rolled back alone to its savepoint and answered 500 with the
   * error in `failure`; the others stand.
   * @returns one decision per input, in order, each with the facts it committed.
   * @throws when the transaction itself cannot commit (for example SQLITE_BUSY after the busy timeout), or SQLite's
   *   error when SQLite rolled the whole transaction back itself (a full disk, an I/O error): nothing is written then.
   */
  commit(batch: { input: Input; now: number }[], env: Env): StoreCommitted[] {
    const out: StoreCommitted[] = [];
    // Inside a trial (`trial`) the batch is a savepoint of the trial's transaction.
    const nested = this.db.inTransaction;
    this.db.exec(nested ? "SAVEPOINT batch" : "BEGIN IMMEDIATE");
    // Another process (a CLI writing a key while no hub ran) may have appended: read the end of the log.
    this.lastSeq = (this.stmt(`SELECT COALESCE(MAX(seq), 0) AS s FROM facts`).get() as { s: number }).s;
    const seqBefore = this.lastSeq;
    try {
      for (const { input, now } of batch) {
        this.db.exec("SAVEPOINT one");
        const seq = this.lastSeq;
        try {
          const d = decide(this.view, input, now, env);
          const committed = d.facts.map((f) => this.append(f, now));
          evolve(this.db, committed);
          this.db.exec("RELEASE one");
          out.push({ ...d, committed });
        } catch (e) {
          // SQLite rolled back the whole transaction itself (a full disk, an I/O error, no memory): the batch is lost
          // whole, and its cause goes to the caller (undoing the savepoint would throw "no such savepoint" over it).
          if (!this.db.inTransaction) throw e;
          this.db.exec("ROLLBACK TO one");
          this.db.exec("RELEASE one");
          this.lastSeq = seq;
          const failure = e instanceof Error ? e : new Error(String(e));
          out.push({ status: 500, body: refusal(env.lang, "hub.internalDecision", { error: failure.message }), facts: [], committed: [], failure });
        }
      }
      if (this.lastSeq !== seqBefore) this.setMeta("cursor", String(this.lastSeq));
      if (this.search.lag(this.lastSeq) >= searchLagFacts) this.search.catchUp(this.lastSeq);
      this.db.exec(nested ? "RELEASE batch" : "COMMIT");
    } catch (e) {
      if (this.db.inTransaction) this.db.exec(nested ? "ROLLBACK TO batch; RELEASE batch" : "ROLLBACK");
      this.lastSeq = seqBefore;
      throw e;
    }
    return out;
  }

  /**
   * Runs `fn` against the store, then undoes everything committed meanwhile: the proofs start each ordering from the
   * same state on one connection, which keeps its prepared statements (reopening a copy of the database and preparing
   * ~130 statements again was a third of each ordering). Inside, `commit` is a savepoint of the trial's transaction,
   * so nothing of it is durable: never used by the hub. A trial inside a trial is a savepoint of its own, undone
   * alone: the 8! enumeration walks the tree of orderings depth first and keeps each shared prefix once.
   * @throws what `fn` throws, after undoing; InvariantError `trial-outside-transaction` when a transaction other than
   *   a trial's is open, or an inner trial finds its parent's transaction gone.
   */
  trial<T>(fn: () => T): T {
    const outer = this.trials === 0;
    // An outer trial begins the transaction; an inner one needs its parent's still open (SQLite may have rolled it all
    // back on an I/O error or a trigger's RAISE(ROLLBACK): a savepoint then would begin a new one).
    assert(outer !== this.db.inTransaction, "trial-outside-transaction");
    this.db.exec(outer ? "BEGIN" : "SAVEPOINT trial");
    this.trials++;
    try {
      return fn();
    } finally {
      this.trials--;
      // Gone already when SQLite rolled back the whole transaction itself: then everything is undone, and what `fn`
      // threw goes on (a rollback with no transaction would throw over it).
      if (this.db.inTransaction) this.db.exec(outer ? "ROLLBACK" : "ROLLBACK TO trial; RELEASE trial");
      this.lastSeq = (this.stmt(`SELECT COALESCE(MAX(seq), 0) AS s FROM facts`).get() as { s: number }).s;
      this.search.reread();
      this.view.forgetParsed();
    }
  }

  /**
   * Brings the search index up to the log, in a transaction of its own when it lags (before each read of the index:
   * GET /v1/search and GET /v1/events). At most `searchLagFacts` facts behind after any commit, so this is short.
   * @throws when the transaction cannot commit (SQLITE_BUSY after the busy timeout).
   */
  searchUpToDate(): void {
    this.lastSeq = (this.stmt(`SELECT COALESCE(MAX(seq), 0) AS s FROM facts`).get() as { s: number }).s;
    if (this.search.lag(this.lastSeq) === 0) return;
    this.db.transaction(() => this.search.catchUp(this.lastSeq)).immediate();
  }

  /** Facts after `seq`, in order, at most `limit`, as stored (with key hashes). */
  factsAfter(seq: number, limit: number): Fact[] {
    return (this.stmt(`SELECT seq, at, kind, body FROM facts WHERE seq > ? ORDER BY seq LIMIT ?`).all(seq, limit) as {
      seq: number; at: string; kind: string; body: string;
    }[]).map((r) => ({ v: 1, seq: r.seq, at: r.at, kind: r.kind, changes: JSON.parse(r.body) }));
  }

  /** The changes of the fact `seq`, or undefined when the log has no such fact (the view reads rules bodies here). */
  private factChanges(seq: number): Change[] | undefined {
    const row = this.stmt(`SELECT body FROM facts WHERE seq = ?`).get(seq) as { body: string } | undefined;
    return row ? (JSON.parse(row.body) as Change[]) : undefined;
  }

  /** The facts that touched a run, in order. */
  factsOfRun(run: number): Fact[] {
    return (this.db.prepare(`SELECT f.seq, f.at, f.kind, f.body FROM fact_runs r JOIN facts f ON f.seq = r.seq WHERE r.run = ? ORDER BY f.seq`).all(run) as {
      seq: number; at: string; kind: string; body: string;
    }[]).map((r) => ({ v: 1, seq: r.seq, at: r.at, kind: r.kind, changes: JSON.parse(r.body) }));
  }

  close(): void {
    this.db.close();
  }
}
