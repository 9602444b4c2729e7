/**
 * Log lines a caller can cause, bounded (issue 14): whoever can send requests, with a key or without, must not be
 * able to flood the hub's log. Each kind of line (its route and reason, chosen by the code, never by the caller) is
 * written at most once per `callerLogIntervalMs`; the next line of that kind says how many were left out meanwhile.
 */
import { callerLogIntervalMs, callerLogKindsMax } from "../kernel/limits.js";
import { t, type Lang } from "../i18n/messages.js";

export class BoundedLog {
  private readonly kinds = new Map<string, { at: number; leftOut: number }>();

  /**
   * @param write where lines go (the hub's log), or nothing
   * @param now the hub's clock, in ms
   */
  constructor(
    private readonly write: ((line: string) => void) | undefined,
    private readonly now: () => number,
    private readonly lang: Lang,
    private readonly intervalMs = callerLogIntervalMs,
    private readonly kindsMax = callerLogKindsMax,
  ) {}

  /** Writes `line` unless a line of `kind` was written less than the interval ago (then it only counts it). */
  say(kind: string, line: string): void {
    const now = this.now();
    const seen = this.kinds.get(kind);
    if (seen && now - seen.at < this.intervalMs) {
      seen.leftOut += 1;
      return;
    }
    if (!seen && this.kinds.size >= this.kindsMax) {
      for (const [k, v] of this.kinds) if (now - v.at >= this.intervalMs) this.kinds.delete(k);
      if (this.kinds.size >= this.kindsMax) return;
    }
    this.kinds.set(kind, { at: now, leftOut: 0 });
    if (!seen?.leftOut) return this.write?.(line);
    // The count goes on the first line: a stack may follow it.
    const nl = line.indexOf("\n");
    const note = ` ${t(this.lang, "log.leftOut", { n: seen.leftOut })}`;
    this.write?.(nl < 0 ? line + note : line.slice(0, nl) + note + line.slice(nl));
  }
}

/**
 * Whether a request failed because its client hung up (the socket closed before the body was complete): no fault of
 * the hub's, so not an internal error and nothing to log. Node ends the body with `Error: aborted` (ECONNRESET).
 */
export function clientHungUp(req: Request, e: unknown): boolean {
  const err = e as NodeJS.ErrnoException | null;
  return req.signal.aborted || (err?.code === "ECONNRESET" && err.message === "aborted");
}
