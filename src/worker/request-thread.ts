/**
 * A thread of the worker that answers requests (the output thread, the guard thread): started on first use, each
 * request answered by the reply with its `id`, or with undefined when the thread failed, exited or did not answer
 * within `timeoutMs` — then it is ended, every waiting request answered undefined, and the next request starts a new
 * one. The callers decide what undefined means (ask again, or do the work on their own thread).
 */
import { existsSync } from "node:fs";
import { Worker as Thread } from "node:worker_threads";

/** How a request thread is started and what it says when it fails. */
export interface RequestThreadOptions<Req> {
  /** The compiled thread script; when it is missing (sources not built) every request is answered undefined. */
  script: string;
  workerData?: unknown;
  /** How long a request may wait for its reply, in ms. */
  timeoutMs: number;
  /** The thread did not answer `req` in time (it is restarted). */
  slow(req: Req): void;
  /** The thread threw (`error` its message). */
  failed(error: string): void;
}

/** One request thread; `Req` and `Rep` are its messages, matched by `id`. */
export class RequestThread<Req extends { id: number }, Rep extends { id: number }> {
  private thread: Thread | null = null;
  private readonly pending = new Map<number, (r: Rep | undefined) => void>();

  constructor(private readonly o: RequestThreadOptions<Req>) {}

  /** `req`'s reply, or undefined when there is no thread or it failed or timed out. */
  ask(req: Req): Promise<Rep | undefined> {
    const thread = this.start();
    if (!thread) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.o.slow(req);
        this.close();
      }, this.o.timeoutMs);
      timer.unref();
      this.pending.set(req.id, (r) => {
        clearTimeout(timer);
        resolve(r);
      });
      thread.postMessage(req);
    });
  }

  /** Sends a message that has no reply to a running thread (none is started for it). */
  tell(message: unknown): void {
    this.thread?.postMessage(message);
  }

  /** Answers every waiting request with undefined and ends the thread; the next request starts a new one. */
  close(): void {
    const thread = this.thread;
    this.thread = null;
    void thread?.terminate();
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const done of waiting) done(undefined);
  }

  private start(): Thread | null {
    if (this.thread) return this.thread;
    if (!existsSync(this.o.script)) return null;
    const thread = new Thread(this.o.script, { workerData: this.o.workerData });
    thread.unref();
    thread.on("message", (m: Rep) => {
      const done = this.pending.get(m.id);
      this.pending.delete(m.id);
      done?.(m);
    });
    thread.on("error", (e) => this.o.failed(e.message));
    thread.on("exit", () => {
      if (this.thread === thread) this.close();
    });
    this.thread = thread;
    return thread;
  }
}
