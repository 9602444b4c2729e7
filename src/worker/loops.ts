/**
 * One supervisor for the long-running loops of a process (issue 14): `serve`'s local worker and channels now, the
 * tool and plugin hosts later. A loop that throws or returns is logged and started again after a delay that doubles
 * from `loopRestartFirstMs` up to `loopRestartMaxMs`, and starts from the first delay again once it ran
 * `loopStableMs` without failing. Each loop runs in an AsyncLocalStorage context naming its part, so the process-wide
 * guard logs an uncaught exception or unhandled rejection with the part it came from ("channel slack: …", "hub: …"
 * when no part is known), restarts that part, and never ends the process.
 *
 * It lives in the worker layer because "supervision" belongs there (DESIGN.md) and the tool host will be there;
 * the host imports it, as it imports the worker. No import of the host.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { loopRestartFirstMs, loopRestartMaxMs, loopStableMs } from "../kernel/limits.js";
import { backoffMs } from "../kernel/backoff.js";
import { t, type Lang } from "../i18n/messages.js";

/** Delays of one loop; the defaults are the limits of the same names. */
export interface LoopOptions {
  restartFirstMs?: number;
  restartMaxMs?: number;
  /** A loop that ran this long before failing starts again from `restartFirstMs`. */
  stableMs?: number;
}

/** A loop: runs until `signal` aborts (then it should return soon); throwing or returning early restarts it. */
export type Loop = (signal: AbortSignal) => Promise<void>;

interface Part {
  name: string;
  /** Ends the current attempt of the part as failed (an uncaught error attributed to it). */
  fault(error: unknown): void;
}

type Outcome = { kind: "returned" } | { kind: "threw"; error: unknown } | { kind: "fault"; error: unknown };

const parts = new AsyncLocalStorage<Part>();

/** The name of the supervised part the calling code runs for, or null outside every part. */
export function currentPart(): string | null {
  return parts.getStore()?.name ?? null;
}

/** "Error: message" for errors (with the stack when `stack`), the value as text otherwise. */
function describe(e: unknown, stack: boolean): string {
  if (e instanceof Error) return stack && e.stack ? e.stack : String(e);
  try {
    return typeof e === "string" ? e : JSON.stringify(e) ?? String(e);
  } catch {
    return String(e);
  }
}

/** A delay for people: "0.05 s", "1 s", "300 s". */
function seconds(ms: number, lang: Lang): string {
  return t(lang, "loop.seconds", { seconds: ms / 1000 });
}

export class Supervisor {
  private readonly stopping = new AbortController();
  private readonly running = new Set<Promise<void>>();
  private unguard: (() => void) | null = null;

  /**
   * @param log where restarts and uncaught errors are reported, one entry per call (stacks span lines).
   * @param lang the language of those entries.
   */
  constructor(private readonly log: (line: string) => void, private readonly lang: Lang = "en") {}

  /** Runs `loop` as the part `name` until `stop()`, restarting it with backoff whenever it throws, returns or faults. */
  start(name: string, loop: Loop, opts: LoopOptions = {}): void {
    const kept = this.keep(name, loop, opts);
    this.running.add(kept);
    void kept.then(() => this.running.delete(kept));
  }

  /**
   * Installs the process-wide guard: `uncaughtException` and `unhandledRejection` are logged with their part and
   * stack, and fault that part (restarted like a failure); the process goes on. Removed by `stop()`.
   */
  guardProcess(): void {
    if (this.unguard) return;
    const report = (what: "loop.uncaught" | "loop.unhandled") => (e: unknown) => {
      const part = parts.getStore();
      this.log(t(this.lang, what, { part: part?.name ?? "hub", error: describe(e, true) }));
      part?.fault(e);
    };
    const onException = report("loop.uncaught");
    const onRejection = report("loop.unhandled");
    process.on("uncaughtException", onException);
    process.on("unhandledRejection", onRejection);
    this.unguard = () => {
      process.off("uncaughtException", onException);
      process.off("unhandledRejection", onRejection);
    };
  }

  /**
   * Aborts every loop's signal, waits for the loops' current attempts to return (an attempt given up after a fault is
   * not waited for), then removes the process guard.
   */
  async stop(): Promise<void> {
    this.stopping.abort();
    while (this.running.size > 0) await Promise.all([...this.running]);
    this.unguard?.();
    this.unguard = null;
  }

  private async keep(name: string, loop: Loop, opts: LoopOptions): Promise<void> {
    const first = opts.restartFirstMs ?? loopRestartFirstMs;
    const max = opts.restartMaxMs ?? loopRestartMaxMs;
    const stable = opts.stableMs ?? loopStableMs;
    const stop = this.stopping.signal;
    // Restarts in a row without a stable attempt between: the wait before the next is `backoffMs(restarts, first, max)`.
    let restarts = 0;
    while (!stop.aborted) {
      const ac = new AbortController();
      const onStop = () => ac.abort();
      stop.addEventListener("abort", onStop, { once: true });
      let fault: (error: unknown) => void = () => {};
      const faulted = new Promise<Outcome>((resolve) => (fault = (error) => resolve({ kind: "fault", error })));
      const startedAt = Date.now();
      const attempt = parts
        .run({ name, fault: (e) => fault(e) }, async () => loop(ac.signal))
        .then((): Outcome => ({ kind: "returned" }), (error: unknown): Outcome => ({ kind: "threw", error }));
      const outcome = await Promise.race([attempt, faulted]);
      ac.abort(); // a faulted attempt is told to end; it is not waited for
      stop.removeEventListener("abort", onStop);
      if (stop.aborted) break;
      if (Date.now() - startedAt >= stable) restarts = 0;
      restarts += 1;
      const delay = backoffMs(restarts, first, max);
      const why = outcome.kind === "returned" ? t(this.lang, "loop.returned") : outcome.kind === "fault" ? t(this.lang, "loop.faulted") : describe(outcome.error, false);
      this.log(t(this.lang, "loop.restart", { part: name, why, delay: seconds(delay, this.lang) }));
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, delay);
        function done() {
          clearTimeout(timer);
          stop.removeEventListener("abort", done);
          resolve();
        }
        stop.addEventListener("abort", done, { once: true });
      });
    }
  }
}
