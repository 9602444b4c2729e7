/**
 * The reporter of `npm test` (node:test's custom reporter API: a `Transform` of the runner's events into text): one
 * line per test file as it finishes, with its counts and time; each failure at once with its whole error (message,
 * diff, stack, cause) and, for a file with a failure, what its tests wrote on stdout and stderr; then a summary, and
 * last the runner's own closing lines (`# tests`, `# suites`, `# pass`, `# fail`, `# cancelled`, `# skipped`,
 * `# todo`, `# duration_ms`), which CI and scripts look for.
 *
 * Events come per file in order (a file's tests are reported together, one file after another), but a file's own
 * `test:complete` may come before its tests are reported (it finished while another file was being reported): a file's
 * line is printed once the runner reports another file, or shortly after its last event once it is complete, or at
 * the end.
 */
import { Transform } from "node:stream";
import { relative } from "node:path";
import { inspect } from "node:util";

/** A file's line waits this long after the file's last event once the file is complete (ms): its tests may still be coming. */
const fileLineSettleMs = 200;

/**
 * @typedef {{ type: string, data: { name?: string, nesting?: number, file?: string, message?: string, skip?: string | boolean,
 *   todo?: string | boolean, details?: { duration_ms?: number, type?: string, error?: Error & { failureType?: string } } } }} TestEvent
 * @typedef {{ file: string, passed: number, failed: number, skipped: number, todo: number, cancelled: number, output: string[],
 *   ms: number | null, complete: boolean }} FileReport
 */

/** The project's test reporter (see the module comment). */
export default class ProgressReporter extends Transform {
  constructor() {
    super({ writableObjectMode: true });
    /** @type {Map<string, FileReport>} files whose line is not printed yet */
    this.files = new Map();
    /** @type {FileReport[]} files whose line is printed */
    this.reported = [];
    /** @type {string | null} the file being reported */
    this.current = null;
    /** how many files the runner was given */
    this.total = 0;
    /** @type {string[]} the runner's closing lines */
    this.closing = [];
    /** @type {NodeJS.Timeout | null} */
    this.settle = null;
  }

  /** @param {TestEvent} event @param {BufferEncoding} _encoding @param {() => void} done */
  _transform(event, _encoding, done) {
    const { type, data } = event;
    const file = data.file;
    if (type === "test:diagnostic" && !file && data.nesting === 0) {
      this.closing.push(`# ${data.message}`);
      return done();
    }
    if (!file) return done();
    if (type === "test:enqueue" && data.name === file && data.nesting === 0) {
      this.total++;
      return done();
    }
    if (type === "test:stdout" || type === "test:stderr") {
      this.report(file).output.push(String(data.message));
      return done();
    }
    if (type === "test:complete" && data.name === file) {
      const r = this.report(file);
      r.complete = true;
      r.ms = data.details?.duration_ms ?? null;
      if (this.current === file) this.settleLater(file);
      return done();
    }
    if (type !== "test:pass" && type !== "test:fail" && type !== "test:diagnostic") return done();
    if (this.current !== file) {
      if (this.current !== null) this.flushFile(this.current);
      this.current = file;
    }
    const r = this.report(file);
    if (type === "test:diagnostic") r.output.push(`# ${data.message}\n`);
    else if (data.details?.type !== "suite") this.count(r, type, event);
    if (r.complete) this.settleLater(file);
    done();
  }

  /** @param {() => void} done */
  _flush(done) {
    if (this.settle) clearTimeout(this.settle);
    for (const file of [...this.files.keys()]) this.flushFile(file);
    const failed = this.reported.filter((r) => r.failed + r.cancelled > 0);
    this.push(`\n${this.reported.length} test files: ${this.reported.length - failed.length} passed, ${failed.length} failed\n`);
    for (const r of failed) this.push(`  failed: ${relative(process.cwd(), r.file)} (${r.failed + r.cancelled})\n`);
    this.push(this.closing.map((l) => `${l}\n`).join(""));
    done();
  }

  /** @param {string} file @returns {FileReport} */
  report(file) {
    let r = this.files.get(file);
    if (!r) {
      r = { file, passed: 0, failed: 0, skipped: 0, todo: 0, cancelled: 0, output: [], ms: null, complete: false };
      this.files.set(file, r);
    }
    return r;
  }

  /** Counts a test of `r` and prints a failure at once. @param {FileReport} r @param {string} type @param {TestEvent} event */
  count(r, type, { data }) {
    const error = data.details?.error;
    if (type === "test:pass") {
      if (data.todo !== undefined && data.todo !== false) r.todo++;
      else if (data.skip !== undefined && data.skip !== false) r.skipped++;
      else r.passed++;
      return;
    }
    if (data.todo !== undefined && data.todo !== false) {
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

  /** Prints a file's line, once, after the events that belong to it (see the module comment). */
  /** @param {string} file */
  settleLater(file) {
    if (this.settle) clearTimeout(this.settle);
    this.settle = setTimeout(() => {
      this.settle = null;
      if (this.current === file) this.flushFile(file);
    }, fileLineSettleMs);
  }

  /** @param {string} file */
  flushFile(file) {
    const r = this.files.get(file);
    if (!r) return;
    this.files.delete(file);
    if (this.current === file) this.current = null;
    this.reported.push(r);
    const bad = r.failed + r.cancelled > 0;
    const counts = [`${r.passed} passed`, r.failed && `${r.failed} failed`, r.cancelled && `${r.cancelled} cancelled`, r.skipped && `${r.skipped} skipped`, r.todo && `${r.todo} todo`].filter(Boolean).join(", ");
    const time = r.ms === null ? "" : ` (${(r.ms / 1000).toFixed(1)} s)`;
    const progress = this.total > 0 ? `[${this.reported.length}/${this.total}] ` : "";
    this.push(`${bad ? "FAIL" : "ok  "} ${progress}${relative(process.cwd(), file)}: ${counts}${time}\n`);
    if (bad && r.output.length > 0) this.push(`${indent(`output of ${relative(process.cwd(), file)}:\n${r.output.join("")}`)}\n`);
  }
}

/** @param {string} text */
function indent(text) {
  return text.replace(/\n$/, "").split("\n").map((l) => `    ${l}`).join("\n");
}
