/**
 * A launch's output as transcript steps (issue 30), in the output thread: the bytes of stdout and stderr are cut into
 * lines as they are read (each at most `transcriptLineMaxBytes`), each line mapped by the agent plugin's `transcript`
 * (without one: each line a `stdout`/`stderr` step), stamped with the time it was read, the run's secrets replaced,
 * control characters removed and texts cut. A launch gives at most `transcriptMaxBytes` of steps, then none (the hub's
 * own `cut` entry says where the transcript stops), so an agent printing 50 MB costs the worker a scan, not a transcript.
 */
import type { AgentPlugin, TranscriptStep } from "../sdk/index.js";
import { tail } from "../sdk/index.js";
import { transcriptLineMaxBytes, transcriptMaxBytes, transcriptNameMaxCodepoints, transcriptStderrTailChars, transcriptTextMaxCodepoints } from "../kernel/limits.js";
import { relayedRedacted } from "../kernel/text.js";

/** A step with the time it was read (ms since the epoch). */
export type TimedStep = TranscriptStep & { at: number };

/** Splits a byte stream into lines, each kept up to `transcriptLineMaxBytes` (the rest of a longer line is dropped). */
class Lines {
  private parts: Buffer[] = [];
  private kept = 0;
  constructor(private readonly line: (text: string) => void) {}

  push(buf: Buffer): void {
    for (let i = 0; i < buf.length; ) {
      const nl = buf.indexOf(10, i);
      const end = nl === -1 ? buf.length : nl;
      const room = transcriptLineMaxBytes - this.kept;
      if (room > 0 && end > i) {
        const piece = buf.subarray(i, Math.min(end, i + room));
        // Copied: the chunk's buffer is reused by nothing, but a kept slice would hold all of it.
        this.parts.push(Buffer.from(piece));
        this.kept += piece.length;
      }
      if (nl === -1) break;
      this.flush();
      i = nl + 1;
    }
  }

  /** Ends the line under way (at a newline, or at the end of the output). */
  flush(): void {
    if (this.parts.length === 0) return;
    const text = Buffer.concat(this.parts).toString("utf8").replace(/\r$/, "");
    this.parts = [];
    this.kept = 0;
    this.line(text);
  }
}

/** The steps of one launch, as its output is read. */
export class LaunchSteps {
  private pending: TimedStep[] = [];
  private bytes = 0;
  private cut = false;
  private tailSaid = false;
  readonly stdout: Lines;
  readonly stderr: Lines;
  secrets: readonly string[] = [];
  /** The plugin, once loaded (lines read before are mapped as plain output). */
  plugin: AgentPlugin | null = null;

  constructor() {
    this.stdout = new Lines((line) => this.add(this.plugin?.transcript ? this.mapped(line) : [{ kind: "stdout", text: line }]));
    this.stderr = new Lines((line) => {
      if (!this.plugin?.transcript) this.add([{ kind: "stderr", text: line }]);
    });
  }

  private mapped(line: string): TranscriptStep[] {
    try {
      const steps = this.plugin!.transcript!(line);
      return Array.isArray(steps) ? steps.filter((s) => s && typeof s === "object") : [];
    } catch {
      return [];
    }
  }

  /**
   * Adds steps, bounded: past `transcriptMaxBytes` nothing more. The hub, which counts every launch's entries with their
   * attempt and launch, has cut the transcript by then and says so with its own `cut` entry: a worker sends none (the
   * hub refuses one: issue 26 round 9, a `cut` posted by a failed attempt silenced the next).
   */
  private add(steps: TranscriptStep[]): void {
    for (const s of steps) {
      if (this.cut) return;
      const step = this.bounded(s);
      if (!step) continue;
      this.bytes += JSON.stringify(step).length;
      if (this.bytes > transcriptMaxBytes) {
        this.cut = true;
        return;
      }
      this.pending.push(step);
    }
  }

  /** A step as the hub takes it: known kind, texts without secrets or control characters and cut; null when unusable. */
  private bounded(s: TranscriptStep): TimedStep | null {
    const kinds = ["message", "thinking", "tool", "toolResult", "final", "stdout", "stderr"];
    if (!kinds.includes(s.kind)) return null;
    const text = (v: unknown) => relayedRedacted(String(v), this.secrets, false, transcriptTextMaxCodepoints);
    const name = (v: unknown) => relayedRedacted(String(v), this.secrets, true, transcriptNameMaxCodepoints);
    return {
      at: Date.now(), kind: s.kind,
      ...(s.text !== undefined ? { text: text(s.text) } : {}),
      ...(s.tool !== undefined ? { tool: name(s.tool) } : {}),
      ...(s.id !== undefined ? { id: name(s.id) } : {}),
      ...(s.input !== undefined ? { input: text(s.input) } : {}),
      ...(s.error === true ? { error: true } : {}),
    };
  }

  /**
   * The launch ended (`code`): the unfinished last lines are ended, and when it failed (an exit code other than 0, or
   * the plugin read an error) and stderr is not already in the transcript, its tail is one `stderr` step.
   */
  ended(code: number, failed: boolean, stderr: () => string): void {
    this.stdout.flush();
    this.stderr.flush();
    if (this.tailSaid || !this.plugin?.transcript || (code === 0 && !failed)) return;
    this.tailSaid = true;
    const last = tail(stderr(), transcriptStderrTailChars);
    if (last) this.add([{ kind: "stderr", text: last, error: true }]);
  }

  /** The steps read since the last call. */
  take(): TimedStep[] {
    const out = this.pending;
    this.pending = [];
    return out;
  }
}
