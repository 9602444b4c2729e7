/**
 * Reading an agent's output while it runs (issue 14: large output streams). The supervisor sends the agent's stdout
 * and stderr to files; the worker reads each file incrementally — only what was appended since its last look — and
 * keeps a bounded window of it: the first `agentOutputHeadBytes` and the last `agentOutputTailBytes`, both cut at
 * line boundaries. That window is what the plugin's `read(stdout, code, stderr)` is given; an output that fits is
 * given whole, exactly as written. The reading, the plugin's `read` and the reading of the last message it finds
 * (receipt.ts `readMessage`, megabytes long for a `command` agent) run in a worker thread (output-thread.ts), so an
 * agent printing hundreds of megabytes never blocks the hub when hub and worker share a process.
 */
import type { PluginRoot } from "../plugins/index.js";
import { closeSync, fstatSync, readSync } from "node:fs";
import { join } from "node:path";
import { Worker as Thread } from "node:worker_threads";
import { engineDir } from "../common/paths.js";
import type { AgentRead } from "../sdk/index.js";
import { readMessage, type ReadMessage } from "./receipt.js";
import { openRegular } from "./files.js";
import { t, type Lang } from "../i18n/messages.js";
import type { TimedStep } from "./transcript-lines.js";

/** Of a long stdout, the first this many bytes (cut at the last line end within them) are kept: 1 MiB. */
export const agentOutputHeadBytes = 1024 * 1024;
/** Of a long stdout, the last this many bytes (from the first line start within them) are kept: 8 MiB. */
export const agentOutputTailBytes = 8 * 1024 * 1024;
/** The same for stderr, which plugins read only for error messages: the first 64 KiB … */
export const agentStderrHeadBytes = 64 * 1024;
/** … and the last 1 MiB. */
export const agentStderrTailBytes = 1024 * 1024;
/** The size of one read from an output file, in bytes. */
const outputReadChunkBytes = 4 * 1024 * 1024;
/** Of a line that starts with ``` or ~~~, this many bytes are looked at to tell a code fence. */
const fenceLineBytes = 256;
/** A read the thread has not answered in this time (a plugin's `read` that never returns) restarts the thread: 60 s. */
export const outputReadTimeoutMs = 60_000;

/** An open Markdown code fence: its run of backticks or tildes, and its opening line (to open it again). */
interface Fence { marks: string; line: string }

const openerRe = /^(`{3,}|~{3,})/;

/**
 * A bounded view of one growing output file. `update()` reads what was appended; `text()` gives the whole output
 * when it fits in head + tail, else the head, a line saying how many bytes were left out, and the tail. Markdown
 * code fences are followed through the part left out, so a fence open across the cut is closed before the line and
 * opened again after it: a receipt block in the tail is read as in the whole output.
 */
export class OutputWindow {
  /** Bytes read so far (the file's size at the last `update`). */
  total = 0;
  private head: Buffer;
  private headLen = 0;
  /** The bytes after the head, newest last; at most `tailBytes + 1` of them are needed, whole chunks are dropped. */
  private tail: Buffer[] = [];
  private tailLen = 0;
  // Fence tracking over every line, in order.
  private lineLen = 0;
  private fenceLike = false;
  private blankAfter = true;
  private lineBuf = Buffer.alloc(fenceLineBytes);
  private fence: Fence | null = null;
  /** The end of the last whole line within the head (0: none yet), and the fence open there. */
  private headCut = 0;
  private headFence: Fence | null = null;
  /** Fence changes at line starts (`at`: the offset of the line after the fence line) inside the kept tail. */
  private changes: { at: number; fence: Fence | null }[] = [];
  private fenceBeforeChanges: Fence | null = null;

  /** @param onChunk given each chunk read, in order (the transcript's lines: transcript-lines.ts). */
  constructor(readonly file: string, readonly headBytes: number, readonly tailBytes: number, readonly lang: Lang = "en", private readonly onChunk?: (buf: Buffer) => void) {
    this.head = Buffer.alloc(headBytes);
  }

  /** Reads what was appended since the last call; returns whether anything was. A missing file (or not a regular one) is empty. */
  update(): boolean {
    let fd: number;
    try {
      fd = openRegular(this.file);
    } catch {
      return false;
    }
    const before = this.total;
    try {
      const size = fstatSync(fd).size;
      while (this.total < size) {
        const buf = Buffer.allocUnsafe(Math.min(outputReadChunkBytes, size - this.total));
        const n = readSync(fd, buf, 0, buf.length, this.total);
        if (n === 0) break;
        this.consume(buf.subarray(0, n));
      }
    } finally {
      closeSync(fd);
    }
    return this.total !== before;
  }

  private consume(buf: Buffer): void {
    this.onChunk?.(buf);
    this.scan(buf);
    const toHead = Math.min(this.headBytes - this.headLen, buf.length);
    if (toHead > 0) {
      buf.copy(this.head, this.headLen, 0, toHead);
      this.headLen += toHead;
    }
    if (toHead < buf.length) {
      this.tail.push(buf.subarray(toHead));
      this.tailLen += buf.length - toHead;
      while (this.tail.length > 1 && this.tailLen - this.tail[0]!.length > this.tailBytes) this.tailLen -= this.tail.shift()!.length;
    }
    this.total += buf.length;
    const keptFrom = this.total - this.tailLen;
    while (this.changes.length > 0 && this.changes[0]!.at <= keptFrom) this.fenceBeforeChanges = this.changes.shift()!.fence;
  }

  /** Follows code fences line by line; of lines starting with ` or ~ the first bytes are copied, others only counted. */
  private scan(buf: Buffer): void {
    for (let i = 0; i < buf.length; ) {
      const nl = buf.indexOf(10, i);
      const end = nl === -1 ? buf.length : nl;
      if (this.lineLen === 0 && end > i) this.fenceLike = buf[i] === 0x60 || buf[i] === 0x7e;
      if (this.fenceLike) {
        const copied = Math.min(end, i + Math.max(0, fenceLineBytes - this.lineLen));
        if (copied > i) buf.copy(this.lineBuf, this.lineLen, i, copied);
        // A closing fence may have any number of blanks after it: past the copied bytes, only that is looked at.
        if (this.blankAfter && end > copied && /[^ \t]/.test(buf.toString("latin1", copied, end))) this.blankAfter = false;
      }
      this.lineLen += end - i;
      if (nl === -1) break;
      this.endLine(this.total + nl + 1);
      i = nl + 1;
    }
  }

  /** A line ended; `next` is the offset of the line after it. */
  private endLine(next: number): void {
    if (this.fenceLike) {
      const line = this.lineBuf.toString("utf8", 0, Math.min(this.lineLen, fenceLineBytes));
      const before = this.fence;
      if (this.fence === null) {
        const m = openerRe.exec(line);
        if (m) this.fence = { marks: m[1]!, line: line.slice(0, fenceLineBytes) };
      } else if (this.blankAfter && line.startsWith(this.fence.marks) && /^[ \t]*$/.test(line.slice(this.fence.marks.length))) {
        this.fence = null;
      }
      if (this.fence !== before) this.changes.push({ at: next, fence: this.fence });
    }
    this.lineLen = 0;
    this.fenceLike = false;
    this.blankAfter = true;
    if (next <= this.headBytes) {
      this.headCut = next;
      this.headFence = this.fence;
    }
  }

  /** The fence open at line start `at` within the kept tail. */
  private fenceAt(at: number): Fence | null {
    let f = this.fenceBeforeChanges;
    for (const c of this.changes) {
      if (c.at > at) break;
      f = c.fence;
    }
    return f;
  }

  /** The output as a plugin reads it (see the class). */
  text(): string {
    const keptFrom = this.total - Math.min(this.tailLen, this.tailBytes);
    if (keptFrom === this.headLen) return Buffer.concat([this.head.subarray(0, this.headLen), ...this.tail]).toString("utf8");
    const tail = Buffer.concat(this.tail).subarray(this.tailLen - (this.total - keptFrom + 1)); // one byte before keptFrom too
    // The tail starts at the first line start at or after keptFrom; with no line end in it, at a character start.
    let from = tail[0] === 10 ? 1 : tail.indexOf(10, 1) + 1;
    if (from === 0) for (from = 1; from < tail.length && (tail[from]! & 0xc0) === 0x80; from++);
    const tailAt = keptFrom - 1 + from;
    const headEnd = this.headCut > 0 ? this.headCut : wholeChars(this.head, this.headLen);
    const headFence = this.headCut === 0 ? null : this.headFence;
    const tailFence = this.fenceAt(tailAt);
    const parts = [this.head.toString("utf8", 0, headEnd)];
    if (this.headCut === 0) parts.push("\n");
    if (headFence && headFence !== tailFence) parts.push(`${headFence.marks}\n`);
    parts.push(`${t(this.lang, "output.leftOut", { bytes: tailAt - headEnd })}\n`);
    if (tailFence && tailFence !== headFence) parts.push(`${tailFence.line}\n`);
    parts.push(tail.toString("utf8", from));
    return parts.join("");
  }
}

/** The length of the longest start of `buf[0, len)` that ends at a character's end (UTF-8). */
function wholeChars(buf: Buffer, len: number): number {
  let lead = len - 1;
  while (lead > 0 && (buf[lead]! & 0xc0) === 0x80) lead--;
  if (lead < 0) return 0;
  const b = buf[lead]!;
  const need = b < 0x80 ? 1 : b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
  return lead + need <= len ? len : lead;
}

/** One request to the output thread. */
export type OutputRequest =
  | { kind: "read"; id: number; dir: string; use: string; code: number | null; secrets: readonly string[] }
  | { kind: "message"; id: number; text: string }
  | { kind: "forget"; dir: string };
/**
 * The thread's answer: to a `read`, the plugin's reading (null when it threw or gave nothing usable); to a
 * `message`, the last message read by `readMessage`.
 */
export interface OutputReply { id: number; value: AgentRead | ReadMessage | null; steps?: TimedStep[] }

/** What the output thread is started with. */
export interface OutputThreadData { lang: Lang; plugins: readonly PluginRoot[] }

/** The compiled thread script (the worker always runs the compiled one, also under tsx, as for the supervisor). */
export const outputThreadScript = join(engineDir, "dist", "src", "worker", "output-thread.js");

/**
 * The worker's side of the output thread: started on first use, restarted after it fails or a read times out.
 * Each launch folder's windows live in the thread until `forget`.
 */
export class OutputReader {
  private thread: Thread | null = null;
  private next = 1;
  /** Pending reads: each gets the plugin's reading, or undefined when the thread failed or timed out. */
  private readonly pending = new Map<number, (r: OutputReply | undefined) => void>();
  private closed = false;

  /**
   * @param name the worker's name, for log lines.
   * @param plugins the worker's `<home>/plugins` (null: built-in plugins only); the thread loads plugins from there.
   */
  constructor(
    private readonly name: string, private readonly lang: Lang, private readonly plugins: readonly PluginRoot[],
    private readonly log: (line: string) => void = () => {},
  ) {}

  /**
   * The plugin `use`'s reading of launch folder `dir` (its `stdout` and `stderr`), `code` being the exit code or
   * null while the agent runs. Null when the plugin threw or returned nothing. When the thread fails or does not
   * answer in time, it is restarted and asked once more; then the reading is an error.
   */
  async read(dir: string, use: string, code: number | null, transcript?: { secrets: readonly string[]; steps: (s: TimedStep[]) => void }): Promise<AgentRead | null> {
    for (let i = 0; i < 2 && !this.closed; i++) {
      const r = await this.ask({ kind: "read", id: this.next++, dir, use, code, secrets: transcript?.secrets ?? [] }, dir);
      if (r?.steps?.length) transcript?.steps(r.steps);
      if (r !== undefined) return r.value as AgentRead | null;
    }
    return this.closed ? null : { error: this.failure() };
  }

  /**
   * `readMessage(text)` in the thread. When the thread fails twice, the outcome marker of the first line stands and
   * the receipt is an error (so the worker asks for it again, and the owner gets a card).
   */
  async message(text: string): Promise<ReadMessage> {
    for (let i = 0; i < 2 && !this.closed; i++) {
      const r = (await this.ask({ kind: "message", id: this.next++, text }, ""))?.value;
      if (r) return r as ReadMessage;
      if (r === null) break; // readMessage itself failed: asking again gives the same
    }
    const nl = text.search(/\S[^\n]*/);
    return { ...readMessage(nl < 0 ? "" : text.slice(nl, nl + 4000).split("\n")[0]!, this.lang), receiptError: this.failure() };
  }

  private failure(): string {
    return t(this.lang, "worker.outputFailed", { seconds: outputReadTimeoutMs / 1000 });
  }

  /** Drops the thread's windows of `dir` (its launch was reported). */
  forget(dir: string): void {
    this.thread?.postMessage({ kind: "forget", dir } satisfies OutputRequest);
  }

  /** Ends the thread; later reads give null. */
  close(): void {
    this.closed = true;
    this.restart();
  }

  /** Sends a request; resolves with the answer, or undefined when the thread failed or timed out (`dir` for the log). */
  private ask(req: Extract<OutputRequest, { id: number }>, dir: string): Promise<OutputReply | undefined> {
    const thread = this.start();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.log(t(this.lang, "worker.outputSlow", { name: this.name, dir, seconds: outputReadTimeoutMs / 1000 }));
        this.restart();
      }, outputReadTimeoutMs);
      timer.unref();
      this.pending.set(req.id, (r) => {
        clearTimeout(timer);
        resolve(r);
      });
      thread.postMessage(req);
    });
  }

  private start(): Thread {
    if (this.thread) return this.thread;
    const thread = new Thread(outputThreadScript, { workerData: { lang: this.lang, plugins: this.plugins } satisfies OutputThreadData });
    thread.unref();
    thread.on("message", (m: OutputReply) => {
      const done = this.pending.get(m.id);
      this.pending.delete(m.id);
      done?.(m);
    });
    thread.on("error", (e) => this.log(t(this.lang, "worker.outputThread", { name: this.name, error: e.message })));
    thread.on("exit", () => {
      if (this.thread === thread) this.restart();
    });
    this.thread = thread;
    return thread;
  }

  /** Answers every pending read with undefined and ends the thread; the next read starts a new one. */
  private restart(): void {
    const thread = this.thread;
    this.thread = null;
    void thread?.terminate();
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const done of waiting) done(undefined);
  }
}
