/**
 * The owner's search index (issue 30): the text of every event, run and card (subject, summary, titles, errors) in an
 * SQLite FTS5 table beside the projection, and which runs each event started. Like the projection it is derived from
 * the fact log and never part of it: it is kept in the same transaction as each commit (`apply`) and made anew
 * whenever the projection is rebuilt, or when its own format changed (`open`).
 *
 * The tokenizer is FTS5's `trigram`: a search finds any substring of at least 3 characters, case-insensitive, in any
 * script — `SHOP-4120`, `#483` or a Chinese word without spaces between words, which a word tokenizer would not split.
 * A shorter text is looked for with LIKE over the same table (still the index's text, never the projection's rows).
 */
import type Database from "better-sqlite3";
import type { CardRow, Change, EventRow, RunRow } from "../kernel/types.js";
import { searchCatchUpPageFacts, searchTextMaxChars } from "../kernel/limits.js";

/** The kinds of rows the index holds, as the low 2 bits of its rowid (`rowid = id * 4 + kind`). */
export const searchKinds = { events: 1, runs: 2, cards: 3 } as const;
/** A kind of row the index holds. */
export type SearchKind = keyof typeof searchKinds;

/** What the index's text is made of; a change of it makes the index anew at the next open. */
const searchFormat = "1 trigram: events, runs with their events' subjects, cards with their run's";

/** Rows read at a time while the index is made anew. */
const rebuildPageRows = 1000;

/** Subjects of a run's events the run's text carries (a run of a thousand merged events is found by its first ones). */
const runSubjectsIndexed = 5;

/** The index of one database: made on open, kept by each commit. */
export class SearchIndex {
  private readonly statements = new Map<string, Database.Statement>();
  /** The sequence number of the last fact the index has taken (0: none). */
  private taken = 0;

  constructor(private readonly db: Database.Database) {}

  private stmt(sql: string): Database.Statement {
    let s = this.statements.get(sql);
    if (!s) this.statements.set(sql, (s = this.db.prepare(sql)));
    return s;
  }

  /**
   * Makes the tables if they are missing; fills them anew from the projection (whose last fact is `lastSeq`) when
   * `projectionRebuilt`, or when they were made by another format of `searchFormat` (or not at all), or when the
   * index's cursor is past the log (a log restored older than the index): the index never says more than the log.
   */
  open(projectionRebuilt: boolean, lastSeq: number): void {
    this.db.exec(`CREATE TABLE IF NOT EXISTS store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID`);
    const meta = (key: string) => (this.db.prepare(`SELECT value FROM store_meta WHERE key = ?`).get(key) as { value: string } | undefined)?.value;
    // An index of the format before the cursor was kept had every commit in it.
    this.taken = Number(meta("searchCursor") ?? lastSeq);
    if (!projectionRebuilt && meta("search") === searchFormat && this.taken <= lastSeq) return;
    this.db.transaction(() => {
      this.db.exec(`DROP TABLE IF EXISTS search_text`);
      this.db.exec(`DROP TABLE IF EXISTS event_runs`);
      this.db.exec(`CREATE VIRTUAL TABLE search_text USING fts5(body, tokenize = 'trigram')`);
      this.db.exec(`CREATE TABLE event_runs (event INTEGER NOT NULL, run INTEGER NOT NULL, PRIMARY KEY (event, run)) WITHOUT ROWID`);
      // Events first: a run's text carries its events' subjects, a card's its run's.
      // A page of rows at a time: one connection cannot write while it steps through a read.
      for (const table of ["events", "runs", "cards"] as const) {
        const page = this.db.prepare(`SELECT key, data FROM v_${table} WHERE key > ? ORDER BY key LIMIT ${rebuildPageRows}`);
        for (let after = 0, rows: { key: number; data: string }[]; (rows = page.all(after) as typeof rows).length > 0; after = rows.at(-1)!.key) {
          for (const r of rows) this.put(table, JSON.parse(r.data));
        }
      }
      this.db.prepare(`INSERT OR REPLACE INTO store_meta (key, value) VALUES ('search', ?)`).run(searchFormat);
      this.setCursor(lastSeq);
    })();
  }

  /** Reads the index's cursor again from the database (after the store undid commits: `Store.trial`). */
  reread(): void {
    this.taken = Number((this.stmt(`SELECT value FROM store_meta WHERE key = 'searchCursor'`).get() as { value: string } | undefined)?.value ?? 0);
  }

  /** How many facts of a log ending at `lastSeq` the index has not taken yet. */
  lag(lastSeq: number): number {
    return lastSeq - this.taken;
  }

  /**
   * Brings the index up to the log's fact `lastSeq`, reading the facts after its cursor `searchCatchUpPageFacts` at a
   * time and writing each row's last change once. Runs inside the caller's transaction (the projection must be at
   * `lastSeq`: the texts of runs and cards read it), which also writes the new cursor.
   */
  catchUp(lastSeq: number): void {
    const page = this.stmt(`SELECT seq, body FROM facts WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ${searchCatchUpPageFacts}`);
    while (this.taken < lastSeq) {
      const rows = page.all(this.taken, lastSeq) as { seq: number; body: string }[];
      if (rows.length === 0) break; // facts of a log without them (none here: the log is append-only)
      const last = new Map<string, Change>();
      for (const r of rows) {
        for (const c of JSON.parse(r.body) as Change[]) {
          if (c[0] !== "events" && c[0] !== "runs" && c[0] !== "cards") continue;
          const k = `${c[0]}\u0001${c[1]}`;
          last.delete(k); // a later change goes after the others: a card's text reads its run as written before it
          last.set(k, c);
        }
      }
      for (const c of last.values()) this.change(c);
      this.taken = rows.at(-1)!.seq;
    }
    this.setCursor(lastSeq);
  }

  private setCursor(seq: number): void {
    this.taken = seq;
    this.stmt(`INSERT OR REPLACE INTO store_meta (key, value) VALUES ('searchCursor', ?)`).run(String(seq));
  }

  private change([table, key, row]: Change): void {
    if (table !== "events" && table !== "runs" && table !== "cards") return;
    if (row === null) {
      this.stmt(`DELETE FROM search_text WHERE rowid = ?`).run(Number(key) * 4 + searchKinds[table]);
      if (table === "runs") this.stmt(`DELETE FROM event_runs WHERE run = ?`).run(Number(key));
      return;
    }
    this.put(table, row as never);
  }

  /** Writes one row's text (unchanged text is left as it is: a run changes state far more often than words). */
  private put(table: SearchKind, row: EventRow | RunRow | CardRow): void {
    const rowid = row.id * 4 + searchKinds[table];
    const body = this.text(table, row).slice(0, searchTextMaxChars);
    if (table === "runs") {
      const ins = this.stmt(`INSERT OR IGNORE INTO event_runs (event, run) VALUES (?, ?)`);
      for (const e of (row as RunRow).events) ins.run(e, row.id);
    }
    const old = this.stmt(`SELECT body FROM search_text WHERE rowid = ?`).get(rowid) as { body: string } | undefined;
    if (old?.body === body) return;
    if (old) this.stmt(`DELETE FROM search_text WHERE rowid = ?`).run(rowid);
    this.stmt(`INSERT INTO search_text (rowid, body) VALUES (?, ?)`).run(rowid, body);
  }

  /** The words a row is found by. */
  private text(table: SearchKind, row: EventRow | RunRow | CardRow): string {
    if (table === "events") {
      const e = row as EventRow;
      return [e.source, e.sid, e.type, e.subject, e.summary].filter(Boolean).join("\n");
    }
    if (table === "runs") {
      const r = row as RunRow;
      return [`#${r.id}`, r.rule, r.summary, r.error, ...this.subjects(r.events)].filter(Boolean).join("\n");
    }
    const c = row as CardRow;
    const run = c.run === null ? undefined : this.row<RunRow>("runs", c.run);
    return [c.title, c.text, c.answer, c.result, ...(run ? this.subjects(run.events) : [])].filter(Boolean).join("\n");
  }

  /** The subjects of the first events of a list. */
  private subjects(events: number[]): string[] {
    return events.slice(0, runSubjectsIndexed).map((e) => this.row<EventRow>("events", e)?.subject ?? "").filter(Boolean);
  }

  private row<T>(table: "events" | "runs", id: number): T | undefined {
    const r = this.stmt(`SELECT data FROM v_${table} WHERE key = ?`).get(id) as { data: string } | undefined;
    return r ? (JSON.parse(r.data) as T) : undefined;
  }
}

/**
 * The SQL that finds index rows of `kind` whose text has the search text, as a clause over `search_text` and its
 * parameters: a phrase MATCH for 3 characters or more (the trigram index), LIKE for fewer.
 */
export function textMatch(q: string, kind: SearchKind): { sql: string; params: unknown[] } {
  const chars = [...q].length;
  const k = searchKinds[kind];
  if (chars >= 3) return { sql: `search_text MATCH ? AND search_text.rowid % 4 = ${k}`, params: [`"${q.replace(/"/g, '""')}"`] };
  return { sql: `search_text.body LIKE ? ESCAPE '\\' AND search_text.rowid % 4 = ${k}`, params: [`%${q.replace(/[\\%_]/g, (m) => `\\${m}`)}%`] };
}
