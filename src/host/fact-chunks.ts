/**
 * The log read for a rebuild (protocol.md 日志与确定性), in chunks: every change is an upsert or delete of one row,
 * so within a chunk only the last change of each row need be applied — the same projection with far fewer writes.
 * For a long log the reading, parsing and collapsing run on a thread of their own (`fact-chunks-thread.ts`) while the
 * store's connection writes the chunk before (issue 32: JSON.parse of the bodies was a third of a rebuild); the two
 * threads meet synchronously (Atomics), because the rebuild is one SQLite transaction, which cannot wait for an event
 * loop.
 */
import { MessageChannel, Worker as Thread, receiveMessageOnPort } from "node:worker_threads";
import { existsSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { engineDir } from "../common/paths.js";
import { assert } from "../kernel/assert.js";
import { t, type Lang } from "../i18n/messages.js";
import type { Change } from "../kernel/types.js";

/** One chunk of the log, collapsed. */
export interface FactChunk {
  /** The last change of each row the chunk's facts changed, in the order of those last changes. */
  changes: Change[];
  /** The fact of the last rules version read so far (this chunk or before): the rules row points there. */
  rulesSeq: number | undefined;
  /** `fact_runs` rows of the chunk, flat: run, seq, run, seq, … */
  runs: number[];
}

/** Facts a chunk holds at most (bounds a chunk's memory with `rebuildChunkBytes`). */
export const rebuildChunkFacts = 1024;
/** Bytes of fact bodies (UTF-16 code units, as read) after which a chunk ends early: a few huge facts stay apart. */
export const rebuildChunkBytes = 4 * 2 ** 20;
/** How long the store waits for the reading thread's next chunk before it gives the rebuild up (ms). */
export const rebuildReaderSilentMs = 60_000;
/** The reading thread's young generation (MB): this small keeps its RSS near its chunks' size. */
const threadYoungMb = 4;
/**
 * The reading thread's old generation at most (MB): ~20× the longest body it parses (`factBodyMaxChars`). A heap
 * limit reached in the middle of a JSON.parse would leave a thread that neither answers nor can be stopped (V8 only
 * collects, ever longer); a larger limit grew its peak RSS with nothing to hold (152 against 136 MB at 119 k facts).
 */
const threadOldMb = 1024;
/**
 * The longest fact body a rebuild reads (UTF-16 code units). The hub writes none near it (a request body is at most
 * 1 MB, a rules file 4 MB); a longer one is damage, refused by name before it is parsed.
 */
export const factBodyMaxChars = 32 * 2 ** 20;
/** Logs shorter than this are read on the store's own thread: starting a thread costs more than they take. */
export const rebuildThreadMinFacts = 10_000;
/** The reading thread's script (compiled: `npm ci` builds it, as the worker's output thread). */
export const factChunksThreadScript = join(engineDir, "dist", "src", "host", "fact-chunks-thread.js");

/** The runs a fact's changes touch: its `runs` rows, and the runs its cards, timers, calls and artifacts belong to. */
export function runsTouched(changes: readonly Change[]): Set<number> {
  const runs = new Set<number>();
  for (const [table, key, row] of changes) {
    if (table === "runs") runs.add(Number(key));
    else if ((table === "cards" || table === "timers" || table === "calls" || table === "artifacts") && row && typeof (row as { run?: unknown }).run === "number") runs.add((row as { run: number }).run);
  }
  return runs;
}

/**
 * Collapses the log's rows `{ seq, body }` (in order of seq) into chunks of at most `chunkFacts` facts and about
 * `chunkBytes` of body each.
 * @throws SyntaxError naming the fact whose body is not JSON; RangeError `store.factTooLong` in `lang` for a body over
 *   `factBodyMaxChars`.
 */
export function* collapseFacts(rows: Iterable<{ seq: number; body: string }>, chunkFacts: number, lang: Lang, chunkBytes = rebuildChunkBytes): Generator<FactChunk> {
  const last = new Map<string, Change>();
  let runs: number[] = [];
  let rulesSeq: number | undefined;
  let facts = 0;
  let bytes = 0;
  const chunk = (): FactChunk => {
    const out = { changes: [...last.values()], rulesSeq, runs };
    last.clear();
    runs = [];
    facts = 0;
    bytes = 0;
    return out;
  };
  for (const row of rows) {
    if (row.body.length > factBodyMaxChars) throw new RangeError(t(lang, "store.factTooLong", { seq: row.seq, chars: row.body.length, max: factBodyMaxChars }));
    let changes: Change[];
    try {
      changes = JSON.parse(row.body) as Change[];
    } catch (e) {
      throw new SyntaxError(`fact ${row.seq}: ${(e as Error).message}`);
    }
    for (const c of changes) {
      const k = `${c[0]}\u0001${c[1]}`;
      // Deleted first, so the map's order is that of the last changes.
      last.delete(k);
      last.set(k, c);
      if (c[0] === "meta" && c[1] === "rules") rulesSeq = row.seq;
    }
    for (const r of runsTouched(changes)) runs.push(r, row.seq);
    bytes += row.body.length;
    if (++facts >= chunkFacts || bytes >= chunkBytes) yield chunk();
  }
  if (facts > 0) yield chunk();
}

/**
 * `collapseFacts` over the log of the database file `path`, read from a read-only connection of its own (closed when
 * the chunks end or the caller stops), with a small page cache: the log is read once, in order.
 * @throws SqliteError when the file cannot be read; what `collapseFacts` throws.
 */
export function* collapseFile(path: string, chunkFacts: number, lang: Lang): Generator<FactChunk> {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    db.pragma("cache_size = -256");
    yield* collapseFacts(db.prepare(`SELECT seq, body FROM facts ORDER BY seq`).iterate() as Iterable<{ seq: number; body: string }>, chunkFacts, lang);
  } finally {
    db.close();
  }
}

/** What the reading thread is given. */
export interface FactChunksThreadData {
  /** The database file. */
  path: string;
  chunkFacts: number;
  /** The language of its errors. */
  lang: Lang;
  /** [0]: messages posted by the thread; [1]: messages taken by the store; [2]: 1 when the store stopped reading. */
  counters: Int32Array;
  port: import("node:worker_threads").MessagePort;
}

/**
 * The chunks of the log in the database file `path`, of `facts` facts: read by a thread of its own
 * (`threadFactChunks`) when the log has at least `threadMinFacts` facts and the thread's compiled script is there
 * (`npm ci` builds it), else here (`collapseFile`).
 * @throws what `threadFactChunks` or `collapseFile` throws.
 */
export function* factChunks(path: string, facts: number, chunkFacts: number, lang: Lang, threadMinFacts = rebuildThreadMinFacts): Generator<FactChunk> {
  if (facts >= threadMinFacts && existsSync(factChunksThreadScript)) return yield* threadFactChunks(path, chunkFacts, lang);
  return yield* collapseFile(path, chunkFacts, lang);
}

/** A message of the reading thread: a chunk, the end, or why it stopped. */
export type FactChunksMessage = { chunk: FactChunk } | { done: true } | { error: string };

/**
 * The chunks of the log in the database file `path`, read, parsed and collapsed by a thread of its own, which posts
 * the next one when the caller has taken the one before. Synchronous: the caller's transaction stays on its thread.
 * @throws Error when the thread reports a failure (a body that is not JSON, an unreadable file) or is silent for
 *   `silentMs` (it died: out of memory, terminated), its message in `lang`.
 */
export function* threadFactChunks(path: string, chunkFacts: number, lang: Lang, silentMs = rebuildReaderSilentMs): Generator<FactChunk> {
  const counters = new Int32Array(new SharedArrayBuffer(12));
  const { port1, port2 } = new MessageChannel();
  const thread = new Thread(factChunksThreadScript, {
    workerData: { path, chunkFacts, lang, counters, port: port2 } satisfies FactChunksThreadData,
    transferList: [port2],
    // Compiled JavaScript: none of the process's flags (`--import tsx` under the tests, a profiler) is its business.
    execArgv: [],
    resourceLimits: { maxYoungGenerationSizeMb: threadYoungMb, maxOldGenerationSizeMb: threadOldMb },
  });
  // Its failures come as messages; an 'error' event (it could not start) is seen as its silence. It never holds the
  // process open.
  thread.on("error", () => {});
  thread.unref();
  try {
    for (let taken = 0; ; ) {
      const waitedFrom = Date.now();
      while (Atomics.load(counters, 0) <= taken) {
        const left = silentMs - (Date.now() - waitedFrom);
        if (left <= 0 || Atomics.wait(counters, 0, taken, left) === "timed-out") {
          throw new Error(t(lang, "store.rebuildSilent", { ms: silentMs }));
        }
      }
      const m = receiveMessageOnPort(port1)?.message as FactChunksMessage | undefined;
      Atomics.store(counters, 1, ++taken);
      Atomics.notify(counters, 1);
      assert(m, "rebuild-thread-message-counted");
      if ("error" in m) throw new Error(m.error);
      if ("done" in m) return;
      yield m.chunk;
    }
  } finally {
    // A thread waiting for room is woken to see it can stop (the count moves too, so no wake-up is lost between its
    // look at the flag and its wait).
    Atomics.store(counters, 2, 1);
    Atomics.add(counters, 1, 1 << 24);
    Atomics.notify(counters, 1);
    port1.close();
    void thread.terminate();
  }
}
