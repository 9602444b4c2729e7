/**
 * Runs' transcripts as the hub keeps them (issue 30: what the agent did), outside the fact log: one append-only NDJSON
 * file per run, `<home>/transcripts/<run>.ndjson` (mode 0600, folder 0700), one `TranscriptEntry` a line. A file is
 * bounded by `maxBytes` (one `cut` entry says where it stopped), read a page of at most `transcriptPageMaxBytes` at a
 * time (never whole: memory stays flat however long it is), and removed `retentionMs` after its run ended by a sweep
 * every `sweepMs` (protocol.md: each round's output is kept 14 days; the run's facts stay).
 */
import { closeSync, fstatSync, mkdirSync, openSync, readSync, readdirSync, rmSync, statSync, writeSync, constants } from "node:fs";
import { join } from "node:path";
import type { TranscriptEntry } from "../protocol/schema.js";
import { transcriptMaxBytes, transcriptPageMaxBytes, transcriptRetentionMs, transcriptSweepIntervalMs } from "../kernel/limits.js";

/** The limits of a hub's transcripts (tests shorten them; src/kernel/limits.ts has the real ones). */
export interface TranscriptLimits {
  /** A transcript's file at most, in bytes. */
  maxBytes: number;
  /** How long after its run ended a transcript is kept, in ms. */
  retentionMs: number;
  /** How often the sweep runs, in ms. */
  sweepMs: number;
}

/** The real limits. */
export const transcriptLimits: TranscriptLimits = { maxBytes: transcriptMaxBytes, retentionMs: transcriptRetentionMs, sweepMs: transcriptSweepIntervalMs };

/** One page read from a transcript (see `Transcripts.page`). */
export interface TranscriptPage { entries: TranscriptEntry[]; next: number; more: boolean; cut: boolean; exists: boolean }

const fileRe = /^([1-9]\d{0,14})\.ndjson$/;

/** The transcripts of one home. */
export class Transcripts {
  private sweeper: NodeJS.Timeout | null = null;
  readonly limits: TranscriptLimits;

  /**
   * @param dir the folder of the files (`<home>/transcripts`), made when first written.
   * @param clock the hub's clock (ms since the epoch).
   * @param ended when a run ended (ms), null while it has not, undefined when the hub knows no such run.
   */
  constructor(
    readonly dir: string, private readonly clock: () => number, private readonly ended: (run: number) => number | null | undefined,
    limits: Partial<TranscriptLimits> = {}, private readonly log: (e: Error) => void = () => {},
  ) {
    this.limits = { ...transcriptLimits, ...limits };
  }

  /** The file of run `run`. */
  file(run: number): string {
    return join(this.dir, `${run}.ndjson`);
  }

  /**
   * Appends `entries` to run `run`'s transcript, as many as fit in `maxBytes`; when one does not, a `cut` entry (of
   * the attempt of the first left out) is written after the last that fit, and nothing is written after it again.
   * @returns how many were kept and whether the transcript is cut.
   * @throws the file system's error (the route answers 500; the worker sends the batch again later).
   */
  append(run: number, entries: readonly TranscriptEntry[]): { kept: number; cut: boolean } {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    // Read and append (its last line tells whether it is cut). O_NOFOLLOW: a link planted in the folder is not followed (the folder is the hub's, 0700, but cheap to refuse).
    const fd = openSync(this.file(run), constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
    try {
      let size = fstatSync(fd).size;
      if (size > 0 && this.isCut(fd, size)) return { kept: 0, cut: true };
      let kept = 0;
      // A line torn by a crash mid-write is ended first, so that the next entry starts a line of its own (issue 26
      // round 9: it was glued onto the torn line, and that line, unparsable, hid it).
      const lines: string[] = size > 0 && !this.endsLine(fd, size) ? ["\n"] : [];
      size += lines.length;
      for (const e of entries) {
        const line = JSON.stringify(e) + "\n";
        const bytes = Buffer.byteLength(line);
        if (size + bytes > this.limits.maxBytes) {
          lines.push(JSON.stringify({ at: e.at, attempt: e.attempt, kind: "cut" } satisfies TranscriptEntry) + "\n");
          writeSync(fd, lines.join(""));
          return { kept, cut: true };
        }
        lines.push(line);
        size += bytes;
        kept += 1;
      }
      if (lines.length) writeSync(fd, lines.join(""));
      return { kept, cut: false };
    } finally {
      closeSync(fd);
    }
  }

  /** Whether the open file (of `size` bytes, more than 0) ends with a line end. */
  private endsLine(fd: number, size: number): boolean {
    const buf = Buffer.alloc(1);
    readSync(fd, buf, 0, 1, size - 1);
    return buf[0] === 10;
  }

  /** Whether the last line of the open file (of `size` bytes) is the `cut` entry. */
  private isCut(fd: number, size: number): boolean {
    const n = Math.min(size, 128);
    const buf = Buffer.alloc(n);
    readSync(fd, buf, 0, n, size - n);
    return /"kind":"cut"\}\n$/.test(buf.toString("latin1"));
  }

  /**
   * The entries of run `run`'s transcript from byte offset `after` (a line start a previous page gave as `next`), as
   * many whole lines as `transcriptPageMaxBytes` holds (at least one, should a line be longer). An offset past the end
   * gives no entries and `next` at the end. A line that does not parse (the file was changed by hand) is skipped.
   */
  page(run: number, after: number): TranscriptPage {
    let fd: number;
    try {
      fd = openSync(this.file(run), constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return { entries: [], next: 0, more: false, cut: false, exists: false };
      throw e;
    }
    try {
      const size = fstatSync(fd).size;
      const from = Math.min(after, size);
      const cut = size > 0 && this.isCut(fd, size);
      let want = Math.min(transcriptPageMaxBytes, size - from);
      for (;;) {
        const buf = Buffer.alloc(want);
        const n = readSync(fd, buf, 0, want, from);
        const end = buf.lastIndexOf(10, n - 1);
        if (end < 0 && from + n < size) {
          // One line longer than a page (a hand-made file: the hub writes none): read on until its end.
          want = Math.min(want * 2, size - from);
          continue;
        }
        const text = end < 0 ? "" : buf.toString("utf8", 0, end + 1);
        const entries: TranscriptEntry[] = [];
        for (const line of text.split("\n")) {
          if (!line) continue;
          try {
            entries.push(JSON.parse(line) as TranscriptEntry);
          } catch {
            // not a line the hub wrote: skipped
          }
        }
        const next = from + (end < 0 ? 0 : end + 1);
        return { entries, next, more: next < size, cut, exists: true };
      }
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Removes the transcripts of runs that ended `retentionMs` ago or more, and of runs the hub does not know.
   * @returns the runs whose transcripts were removed.
   */
  sweep(): number[] {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return [];
    }
    const now = this.clock();
    const removed: number[] = [];
    for (const name of names) {
      const m = fileRe.exec(name);
      if (!m) continue;
      const run = Number(m[1]);
      const ended = this.ended(run);
      if (ended === null || (ended !== undefined && now - ended < this.limits.retentionMs)) continue;
      try {
        rmSync(join(this.dir, name), { force: true });
        removed.push(run);
      } catch (e) {
        this.log(e as Error);
      }
    }
    return removed;
  }

  /** Whether run `run`'s transcript was (or is due to be) removed: the run ended `retentionMs` ago or more and its file is gone. */
  removed(run: number): boolean {
    const ended = this.ended(run);
    if (ended === null || ended === undefined || this.clock() - ended < this.limits.retentionMs) return false;
    try {
      statSync(this.file(run));
      return false;
    } catch {
      return true;
    }
  }

  /** Starts the sweep: once now, then every `sweepMs`; a failure is logged and the next round tries again. */
  start(): void {
    if (this.sweeper) return;
    const round = () => {
      try {
        this.sweep();
      } catch (e) {
        this.log(e as Error);
      }
    };
    round();
    this.sweeper = setInterval(round, this.limits.sweepMs);
    this.sweeper.unref();
  }

  /** Stops the sweep. */
  close(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
  }
}
