/**
 * The long polls the hub holds (protocol.md 结构与实测): a worker's `GET /v1/work` and a channel's `GET /v1/cards/next`,
 * decided on arrival and, when they find nothing, held (held-poll.ts) until a commit may have something for them. The
 * hub's shell (hub.ts) wakes them after each group commit, drops those whose key was removed, and ends them when it
 * closes. A worker's claim id is honoured across polls: the newest poll of a claim is the only one that decides.
 */
import type { Answers, InputOf } from "../kernel/types.js";
import type { callerOf } from "../kernel/authorize.js";
import { assert } from "../kernel/assert.js";
import type { RefusalBody } from "../i18n/messages.js";
import { HeldPoll } from "./held-poll.js";
import type { Committed } from "./committed.js";

/**
 * Claim ids of one worker key whose latest poll `seq` the hub keeps (a worker asks under one at a time, a new one after
 * each job): one key making up claim ids forgets only its own (round 46, F46-2: a shared memory of 10,000 let one key
 * make the hub forget another worker's claim).
 */
export const claimSeqsPerWorkerMax = 64;
/** Worker keys whose claims' `seq` the hub keeps (the one seen longest ago forgotten first). */
export const claimSeqWorkersMax = 1_000;

/** A long-poll input: a worker's `GET /v1/work` or a channel's `GET /v1/cards/next`. */
export type PollInput = InputOf<"work" | "cardsNext">;
/** What a long poll answers with. */
export type PollAnswer = Answers["work"] | Answers["cardsNext"];
/** A long poll held: woken by commits, answered on its own (held-poll.ts). */
type Waiter = HeldPoll<PollAnswer>;

/** What the long polls need of the hub: deciding an input (the group commit), and timing a claim for /metrics. */
export interface LongPollHub {
  submit: (input: PollInput) => Promise<Committed<PollAnswer>>;
  /** A decision that began at `t0` (performance.now(), ms) handed out a job. */
  claimed: (t0: number) => void;
}

/** The hub's held long polls, by waiter key ("worker:<name>", "channel:<name>"). */
export class LongPolls {
  private readonly waiters = new Map<string, Set<Waiter>>();
  /** How often each kind of long poll was woken ("worker:", "channel:<name>"), to catch a wake that came between a poll's decision and its wait. */
  private readonly wakeCount = new Map<string, number>();
  /**
   * The newest `GET /v1/work` of each worker's claim id still being decided or held: an older poll of the claim
   * decides no more once a newer one came (`poll`). An entry lives as long as its poll (bounded by the polls).
   */
  private readonly newestClaimPoll = new Map<string, object>();

  /**
   * The latest `seq` seen of each claim id, by worker key (`poll`), kept past its polls (a late request may come after
   * the later one was answered): `claimSeqsPerWorkerMax` claims a key, `claimSeqWorkersMax` keys, the ones seen longest
   * ago forgotten first.
   */
  private readonly claimSeq = new Map<string, Map<string, number>>();

  constructor(private readonly hub: LongPollHub) {}

  /** Keeps `seq` as the latest of `claim` of `worker`, within the limits above. */
  private rememberSeq(worker: string, claim: string, seq: number): void {
    const claims = this.claimSeq.get(worker) ?? new Map<string, number>();
    this.claimSeq.delete(worker);
    this.claimSeq.set(worker, claims);
    if (this.claimSeq.size > claimSeqWorkersMax) this.claimSeq.delete(this.claimSeq.keys().next().value!);
    claims.delete(claim);
    claims.set(claim, seq);
    if (claims.size > claimSeqsPerWorkerMax) claims.delete(claims.keys().next().value!);
  }

  /** Wakes every poll whose key is `prefix` or starts with it ("worker:" wakes every worker's). */
  wakeAll(prefix: string): void {
    this.wakeCount.set(prefix, (this.wakeCount.get(prefix) ?? 0) + 1);
    for (const [key, set] of this.waiters) if (key === prefix || key.startsWith(prefix)) for (const w of [...set]) w.wake();
  }

  /** The wake counter that concerns a waiter key ("worker:<name>" is woken by "worker:", channels by their own). */
  private wakesOf(key: string): number {
    return key.startsWith("worker:") ? this.wakeCount.get("worker:") ?? 0 : (this.wakeCount.get(key) ?? 0) + (this.wakeCount.get("channel:") ?? 0);
  }

  /** Answers every held poll whose key `valid` no longer takes with `status` and `body` (a removed key: 401). */
  drop(valid: (keyHash: string) => boolean, status: 401 | 503, body: RefusalBody): void {
    for (const set of this.waiters.values()) for (const w of [...set]) if (!valid(w.keyHash)) w.gone(status, body);
  }

  /**
   * Decides `input` now; when it finds nothing, holds it up to `waitMs` and decides it again whenever something it may
   * want was committed. Resolves early when `signal` aborts (the client went away). `key` the waiter key of its
   * caller ("" for none: never held).
   */
  async poll(input: PollInput, waitMs: number, signal: AbortSignal | undefined, caller: ReturnType<typeof callerOf>, key: string, seq?: number): Promise<Committed<PollAnswer>> {
    // A worker asks again with the same claim id when it lost the answer (or aborted its poll). An older poll of that
    // claim — held here (its closed connection not noticed yet), or still in its first decisions — must not claim after
    // this one: a repeated claim issues a new token, which would replace the one this poll hands out (CI: a run stayed
    // claimed, the worker's result refused for its old token).
    let claimKey: string | null = null;
    const me = {};
    if (input.kind === "work") {
      claimKey = `${key}\u0000${input.keyHash}\u0000${input.claim}`;
      // A poll the worker sent before one of the same claim that already came (its request reached the hub late, a
      // connection the worker had given up) decides nothing: it would claim again and replace the later one's token
      // (CI: run "r" stayed claimed, its result refused for that token — the later poll had been answered already).
      const worker = `${key}\u0000${input.keyHash}`;
      const latest = this.claimSeq.get(worker)?.get(input.claim);
      if (seq !== undefined && latest !== undefined && seq <= latest) return { status: 200, body: { job: null, cancel: [] }, facts: [], committed: [] };
      if (seq !== undefined) this.rememberSeq(worker, input.claim, seq);
      for (const w of [...(this.waiters.get(key) ?? [])]) if (w.claim === input.claim && w.keyHash === input.keyHash) w.supersede();
      this.newestClaimPoll.set(claimKey, me);
    }
    try {
      return await this.decideOrHold(input, waitMs, signal, caller, key, () => claimKey !== null && this.newestClaimPoll.get(claimKey) !== me);
    } finally {
      if (claimKey !== null && this.newestClaimPoll.get(claimKey) === me) this.newestClaimPoll.delete(claimKey);
    }
  }

  /** `poll` once the older polls of its claim are superseded; `superseded()`: a newer poll of the claim came since. */
  private async decideOrHold(
    input: PollInput, waitMs: number, signal: AbortSignal | undefined, caller: ReturnType<typeof callerOf>, key: string, superseded: () => boolean,
  ): Promise<Committed<PollAnswer>> {
    let first: Committed<PollAnswer>;
    // A claim's latency (GET /metrics) runs from the decision that handed out its job, on arrival or on a wake, to
    // its durable answer: the time a poll was held waiting for work is not the hub's.
    const decide = async () => {
      const t0 = performance.now();
      const d = await this.hub.submit(input);
      if (d.status === 200 && (d.body as Partial<Answers["work"]>).job) this.hub.claimed(t0);
      return d;
    };
    // A wake committed in the same group as this poll's decision fires before the poll waits: decide again then.
    let wokenMeanwhile = false;
    for (let i = 0; ; i++) {
      const wakes = this.wakesOf(key);
      first = await decide();
      wokenMeanwhile = this.wakesOf(key) !== wakes;
      if (!first.park || waitMs <= 0 || !caller || !wokenMeanwhile || i >= 3) break;
      // Never claim for nobody (the client went away), nor after a newer poll of the same claim.
      if (signal?.aborted || superseded()) return first;
    }
    if (!first.park || waitMs <= 0 || !caller || signal?.aborted || superseded()) return first;
    const set = this.waiters.get(key) ?? new Set<Waiter>();
    this.waiters.set(key, set);
    return new Promise<Committed<PollAnswer>>((resolve) => {
      const poll: Waiter = new HeldPoll<PollAnswer>(input.keyHash!, input.kind === "work" ? input.claim : null, first, waitMs, signal, {
        decideAgain: decide,
        settle: (answer) => {
          assert(set.has(poll), "held-poll-settles-once");
          set.delete(poll);
          if (set.size === 0 && this.waiters.get(key) === set) this.waiters.delete(key);
          resolve(answer);
        },
      });
      set.add(poll);
      // Woken during its last decision here too: held now, it decides again at once (its rounds take further wakes),
      // where it had waited for the next wake or its timeout with its work there (issue 32's capacity run).
      if (wokenMeanwhile) poll.wake();
    });
  }
}
