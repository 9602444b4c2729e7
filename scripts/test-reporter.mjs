/**
 * The reporter of `npm test` (node:test's custom reporter API: a `Transform` of the runner's events into text): one
 * line per test file as it finishes, with its counts and time; each failure at once with its whole error (message,
 * diff, stack, cause) and, for a file with a failure, what its tests wrote on stdout and stderr; then a summary, and
 * last the runner's own closing lines (`# tests`, `# suites`, `# pass`, `# fail`, `# cancelled`, `# skipped`,
 * `# todo`, `# duration_ms`), which CI and scripts look for.
 *
 * Which test file an event belongs to, as the runner (Node 20) reports them:
 * - The runner enqueues one test per file first (named by the file's path), in the order it runs and reports them.
 * - A file's own events are reported together, one file after the other in that order. A file's last event is its
 *   own `test:complete`, unless it finished while another file was being reported: then that `test:complete` comes
 *   at once and the file's other events come later, in one piece, once the files before it are reported.
 * - An event's `file` is where its test is written, which is another module for tests a helper defines (for example
 *   tests/real-cli-cases.ts for tests/claude-cli.test.ts): only a test file's own path says which file it is.
 * So until the file being reported is complete, every event is its own; after that, the next file begins with a run
 * of `test:enqueue` events of its top-level tests (or with an event carrying its own path). No timer is needed for that.
 *
 * Long proofs run for minutes without a line (issue 29): every `AGENT_AUTOLOOP_TEST_PROGRESS_MS` (default 60 s) a
 * line says which files are still running and for how long. A skipped test is listed under its file's line with the
 * reason it gave.
 */
import { Transform } from "node:stream";
import { relative } from "node:path";
import { inspect } from "node:util";

/**
 * @typedef {{ type: string, data: { name?: string, nesting?: number, file?: string, message?: string, skip?: string | boolean,
 *   todo?: string | boolean, details?: { duration_ms?: number, type?: string, error?: Error & { failureType?: string } } } }} TestEvent
 * @typedef {{ file: string, passed: number, failed: number, skipped: number, todo: number, cancelled: number, output: string[],
 *   ms: number | null, complete: boolean, startedAt: number | null, skips: string[] }} FileReport
 */

/** What a test file's process wrote: its `file` is always the test file's own path. */
const outputEvents = new Set(["test:stdout", "test:stderr"]);

/** The project's test reporter (see the module comment). */
export default class ProgressReporter extends Transform {
  constructor() {
    super({ writableObjectMode: true });
    /** @type {string[]} the test files, in the order the runner reports them */
    this.order = [];
    /** @type {Map<string, FileReport>} */
    this.reports = new Map();
    /** @type {Set<string>} files whose line is printed */
    this.printed = new Set();
    /** the index in `order` of the file being reported (-1: none yet) */
    this.at = -1;
    /** whether the last event was a `test:enqueue` of a top-level test (the start of a file, or more of one) */
    this.enqueueing = false;
    /** @type {string[]} the runner's closing lines */
    this.closing = [];
    const every = Number(process.env.AGENT_AUTOLOOP_TEST_PROGRESS_MS ?? 60_000);
    /** the "still running" line's timer (unref'd: it never keeps the runner alive) */
    this.ticker = every > 0 ? setInterval(() => this.stillRunning(), every) : null;
    this.ticker?.unref();
  }

  /** Says which files have started and not completed, each with how long it has run. */
  stillRunning() {
    const now = Date.now();
    const running = [...this.reports.values()].filter((r) => r.startedAt !== null && !r.complete);
    if (running.length === 0) return;
    const took = (ms) => (ms >= 60_000 ? `${Math.floor(ms / 60_000)} min ${Math.floor((ms % 60_000) / 1000)} s` : `${Math.floor(ms / 1000)} s`);
    this.push(`  … still running: ${running.map((r) => `${relative(process.cwd(), r.file)} (${took(now - r.startedAt)})`).join(", ")}\n`);
  }

  /** @param {TestEvent} event @param {BufferEncoding} _encoding @param {() => void} done */
  _transform(event, _encoding, done) {
    const { type, data } = event;
    const file = data.file;
    if (type === "test:diagnostic" && !file && data.nesting === 0) this.closing.push(`# ${data.message}`);
    if (!file) return done();
    const wholeFile = data.name === file && data.nesting === 0 && !outputEvents.has(type);
    if (wholeFile && type === "test:enqueue") this.order.push(file);
    else if (wholeFile && type === "test:complete") this.fileComplete(file, data.details?.duration_ms ?? null);
    else if (outputEvents.has(type)) this.report(file).output.push(String(data.message));
    else if (wholeFile && type === "test:dequeue") this.report(file).startedAt ??= Date.now();
    else this.event(event);
    done();
  }

  /** @param {() => void} done */
  _flush(done) {
    if (this.ticker) clearInterval(this.ticker);
    for (const file of [...this.order, ...this.reports.keys()]) this.printLine(file);
    const lines = [...this.printed].map((f) => this.reports.get(f)).filter((r) => r !== undefined);
    const failed = lines.filter((r) => r.failed + r.cancelled > 0);
    this.push(`\n${lines.length} test files: ${lines.length - failed.length} passed, ${failed.length} failed\n`);
    for (const r of failed) this.push(`  failed: ${relative(process.cwd(), r.file)} (${r.failed + r.cancelled})\n`);
    this.push(this.closing.map((l) => `${l}\n`).join(""));
    done();
  }

  /** The file being reported, or null. */
  get current() {
    return this.order[this.at] ?? null;
  }

  /** A test file's own `test:complete`: its time; and its line, when it is the file being reported (all its events came). */
  fileComplete(file, ms) {
    const r = this.report(file);
    r.complete = true;
    r.ms = ms;
    if (this.current === file) this.printLine(file);
  }

  /** An event of a test (see the module comment for which file it belongs to). @param {TestEvent} event */
  event({ type, data }) {
    const own = this.order.includes(data.file) ? data.file : null;
    const topEnqueue = type === "test:enqueue" && data.nesting === 0;
    const currentDone = this.current === null || this.report(this.current).complete;
    if (own !== null && own !== this.current) this.moveTo(this.order.indexOf(own));
    else if (own === null && topEnqueue && !this.enqueueing && currentDone) this.moveTo(this.at + 1);
    this.enqueueing = topEnqueue;
    if ((type === "test:pass" || type === "test:fail") && data.details?.type !== "suite") this.count(this.report(this.current ?? data.file), type, data);
    if (type === "test:diagnostic") this.report(this.current ?? data.file).output.push(`# ${data.message}\n`);
  }

  /** The next file is being reported: the one before has no events left. @param {number} index */
  moveTo(index) {
    if (this.current !== null) this.printLine(this.current);
    this.at = index;
  }

  /** @param {string} file @returns {FileReport} */
  report(file) {
    let r = this.reports.get(file);
    if (!r) {
      r = { file, passed: 0, failed: 0, skipped: 0, todo: 0, cancelled: 0, output: [], ms: null, complete: false, startedAt: null, skips: [] };
      this.reports.set(file, r);
    }
    return r;
  }

  /** Counts a test of `r` and prints a failure at once. @param {FileReport} r @param {string} type @param {TestEvent["data"]} data */
  count(r, type, data) {
    const error = data.details?.error;
    const todo = data.todo !== undefined && data.todo !== false;
    if (type === "test:pass") {
      if (todo) r.todo++;
      else if (data.skip !== undefined && data.skip !== false) {
        r.skipped++;
        r.skips.push(`${data.name} — ${typeof data.skip === "string" && data.skip !== "" ? data.skip : "no reason given"}`);
      }
      else r.passed++;
      return;
    }
    if (todo) {
      r.todo++;
      return;
    }
    if (error?.failureType === "cancelledByParent") r.cancelled++;
    else r.failed++;
    // A parent whose subtests failed says only that; the subtests' own errors were printed.
    if (error?.failureType === "subtestsFailed") return;
    const where = data.name === r.file ? "" : ` › ${data.name}`;
    // The runner wraps what the test threw as `cause` (an assertion's message, diff and stack); a file that ended
    // outside any test has only the wrapper, and its output says why (printed with the file's line).
    const thrown = error?.cause instanceof Error ? error.cause : error;
    this.push(`\n✖ ${relative(process.cwd(), r.file)}${where}\n${indent(inspect(thrown, { depth: 8, colors: false }))}\n\n`);
  }

  /** Prints a file's line, once. @param {string} file */
  printLine(file) {
    if (this.printed.has(file)) return;
    this.printed.add(file);
    const r = this.report(file);
    const bad = r.failed + r.cancelled > 0;
    const counts = [`${r.passed} passed`, r.failed && `${r.failed} failed`, r.cancelled && `${r.cancelled} cancelled`, r.skipped && `${r.skipped} skipped`, r.todo && `${r.todo} todo`].filter(Boolean).join(", ");
    const time = r.ms === null ? "" : ` (${(r.ms / 1000).toFixed(1)} s)`;
    const progress = this.order.length > 0 ? `[${this.printed.size}/${this.order.length}] ` : "";
    this.push(`${bad ? "FAIL" : "ok  "} ${progress}${relative(process.cwd(), file)}: ${counts}${time}\n`);
    for (const skip of r.skips) this.push(`    skipped: ${skip}\n`);
    if (bad && r.output.length > 0) this.push(`${indent(`output of ${relative(process.cwd(), file)}:\n${r.output.join("")}`)}\n`);
  }
}

/** @param {string} text */
function indent(text) {
  return text.replace(/\n$/, "").split("\n").map((l) => `    ${l}`).join("\n");
}
