/**
 * One held long poll (`GET /v1/work`, `GET /v1/cards/next`) while it waits for something to hand out (protocol.md
 * 结构与实测): its states, named, instead of flags (issue 27 #5). The hub wakes it when something it may want was
 * committed; it then decides again, and answers when the decision has something, when its wait runs out, when the
 * client goes away, when a newer poll of the same claim supersedes it, or when its key is gone or the hub closes.
 *
 *   waiting        → deciding (woken) · answered (its wait ran out, aborted, superseded, gone)
 *   deciding       → decidingAgain (woken while deciding) · waiting (nothing yet, or a busy store) · answered
 *   decidingAgain  → deciding (the next round starts at once) · answered
 *   answered       the poll's one answer is sent: its timer cleared, its listener removed, it left the hub's waiters.
 */
import type { RefusalBody } from "../i18n/messages.js";
import { assert } from "../kernel/assert.js";
import type { Committed } from "./committed.js";

/** Where a held poll is (see the module). */
export type HeldState = "waiting" | "deciding" | "decidingAgain" | "answered";

/** What a held poll needs of the hub: decide its input again, and take it out of the waiters once it answered. */
export interface HeldPollHub<B> {
  decideAgain: () => Promise<Committed<B>>;
  /** Called once, with the answer, when the poll answers. */
  settle: (answer: Committed<B>) => void;
}

/** A held long poll: answers once, with the first decision that has something, or its last one. */
export class HeldPoll<B> {
  private stateNow: HeldState = "waiting";
  private readonly timer: NodeJS.Timeout;
  private readonly onAbort = () => this.answer(this.last);

  /**
   * @param keyHash the SHA-256 of the caller's key (a removed key answers it 401)
   * @param claim the claim id of a held `GET /v1/work`, null for other polls
   * @param last the decision that found nothing, answered when nothing better comes
   * @param waitMs how long it waits at most (ms)
   */
  constructor(
    readonly keyHash: string,
    readonly claim: string | null,
    private last: Committed<B>,
    waitMs: number,
    private readonly signal: AbortSignal | undefined,
    private readonly hub: HeldPollHub<B>,
  ) {
    this.timer = setTimeout(() => this.answer(this.last), waitMs);
    signal?.addEventListener("abort", this.onAbort, { once: true });
  }

  /** Where it is now. */
  get state(): HeldState {
    return this.stateNow;
  }

  /** Something it may want was committed: decide again now, or once more after the round that runs. */
  wake(): void {
    if (this.stateNow === "deciding") this.stateNow = "decidingAgain";
    else if (this.stateNow === "waiting") void this.decide();
  }

  /** Answers with its last decision at once: a newer poll of the same claim came (it will not decide again). */
  supersede(): void {
    this.answer(this.last);
  }

  /** Answers with a refusal: its key was removed (401), or the hub is closing (503). */
  gone(status: 401 | 503, body: RefusalBody): void {
    this.answer({ status, body, facts: [], committed: [] });
  }

  /** Decides again, round after round while wakes came meanwhile; answers when a decision has something. */
  private async decide(): Promise<void> {
    assert(this.stateNow === "waiting", "held-poll-decides-from-waiting");
    try {
      do {
        this.stateNow = "deciding";
        if (this.signal?.aborted) return this.answer(this.last); // the client went away: never claim for nobody
        this.last = await this.hub.decideAgain();
        if (this.is("answered")) return; // its wait ran out (or it was superseded) meanwhile
        if (!this.last.park) return this.answer(this.last);
      } while (this.is("decidingAgain"));
    } catch {
      // a busy database: keep waiting; the timeout answers with the last decision
    }
    if (!this.is("answered")) this.stateNow = "waiting";
  }

  /** Whether it is in `state` now (read anew after an await: another event may have moved it). */
  private is(state: HeldState): boolean {
    return this.stateNow === state;
  }

  /** Sends the poll's one answer: later calls do nothing. */
  private answer(d: Committed<B>): void {
    if (this.stateNow === "answered") return;
    this.stateNow = "answered";
    clearTimeout(this.timer);
    this.signal?.removeEventListener("abort", this.onAbort);
    this.hub.settle(d);
  }
}
