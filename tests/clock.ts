/**
 * A kernel driven through time: a real SQLite store and the real decide/evolve, with the clock in the test's
 * hands. `advance` runs the due table the way the hub's single timer would.
 *
 * Tests read what the hub answers, never its rows: each decision (`commit`: its reply, and the facts it wrote, which
 * the stream sends), the owner's state as GET /v1/state gives it (`state`, `run`, `card`), the facts as GET /v1/stream
 * sends them (`stream`), a card's link page, and what the kernel tells the hub's timer (`dueKeys`, `nextDeadline`,
 * `nextOfferAt`). The store itself is private: the simulation's invariant checks and the store's own tests read rows,
 * not these.
 */
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { Store, type StoreCommitted } from "../src/host/store.js";
import { dueKeys, nextDeadline, nextOfferAt } from "../src/kernel/decide.js";
import { type Rules } from "../src/kernel/rules.js";
import { parseRules } from "../src/protocol/rules-file.js";
import { hashKey } from "../src/kernel/credentials.js";
import { buildState, type RunFilter } from "../src/host/state.js";
import { linkPage } from "../src/host/link-page.js";
import { publicFact } from "../src/host/facts.js";
import type { Change, Env, Fact, Input } from "../src/kernel/types.js";
import type { KeyOf, RowOf, TableName } from "../src/kernel/tables.js";
import type { Card, CardNext, OwnerCard, RunView, State, WorkAnswer } from "../src/protocol/responses.js";
import { appendRawFact } from "../sim/simulation.js";
import { prose, tempDir } from "./helpers.js";

export const K = { source: hashKey("src"), worker: hashKey("wrk"), worker2: hashKey("wrk2"), channel: hashKey("chn"), owner: hashKey("own") };

/** A decision as the store committed it: status, body, facts, what to wake, the facts written and a handler's failure. */
export type Committed = StoreCommitted;

/**
 * The rows of `table` that decision `d`'s facts write, in order (null for a row deleted): what the decision recorded, as
 * GET /v1/stream and `why` send it.
 */
export function written<T extends TableName>(d: { facts: { changes: Change[] }[] }, table: T): (RowOf<T> | null)[] {
  return changed(d, table).map(([, row]) => row);
}

/** Like `written`, with each row's key: `[key, row]`. */
export function changed<T extends TableName>(d: { facts: { changes: Change[] }[] }, table: T): [KeyOf<T>, RowOf<T> | null][] {
  return d.facts.flatMap((f) => f.changes).filter(([t]) => t === table).map(([, key, row]) => [key as KeyOf<T>, row as RowOf<T> | null]);
}

export interface ClockOptions {
  /**
   * The test feeds deadlines whose handlers fail on purpose (a damaged row): a tick answered 500 is reported back as
   * `dueFailed`, as the hub's timer does. Without it such a tick fails the test at once, naming the deadline.
   */
  failingTicks?: boolean;
}

export class Clock {
  readonly #store: Store;
  readonly #failingTicks: boolean;
  /** The token of each run's latest claim, from the answers of `GET /v1/work` this clock saw. */
  readonly #tokens = new Map<number, string>();
  readonly env: Env;
  now: number;
  /** The rules last loaded, as `rules.json` parsed them. */
  rules!: Rules;

  constructor(rules: unknown, start: string, options: ClockOptions = {}) {
    this.env = { master: randomBytes(32), lang: "en", publicUrl: null };
    this.#store = new Store({ path: join(tempDir("aa-clock-"), "hub.db"), master: this.env.master });
    this.#failingTicks = options.failingTicks ?? false;
    this.now = Date.parse(start);
    for (const [kind, name, hash] of [["source", "shop", K.source], ["worker", "w1", K.worker], ["worker", "w2", K.worker2], ["channel", "ch1", K.channel], ["owner", "owner", K.owner]] as const) {
      this.commit({ kind: "keyNew", keyHash: null, local: true, keyKind: kind, name, newHash: hash });
    }
    this.loadRules(rules);
  }

  loadRules(rules: unknown): void {
    const r = parseRules(JSON.stringify(rules), { timezone: "UTC" });
    if (!r.ok) throw new Error(r.error);
    this.rules = r.rules;
    this.commit({ kind: "rules", rules: r.rules, hash: JSON.stringify(r.rules) });
  }

  /** Decides and commits one input now. */
  commit(input: Input): Committed {
    return this.commitAll([input])[0]!;
  }

  /** Decides and commits `inputs` in one group commit (one transaction), as the hub's queue does. */
  commitAll(inputs: Input[]): Committed[] {
    const ds = this.#store.commit(inputs.map((input) => ({ input, now: this.now })), this.env);
    ds.forEach((d, i) => {
      const job = inputs[i]!.kind === "work" && d.status === 200 ? (d.body as WorkAnswer).job : null;
      if (job) this.#tokens.set(job.run, job.token);
    });
    return ds.map((d) => ({ ...d, body: prose(d.status, d.body) }) as Committed);
  }

  /**
   * Fires every deadline due now, one `tick` each, as the hub's timer does, and returns the ticks' decisions. A tick
   * answered 500 fails the test, unless it was made with `failingTicks`: then the failure is reported back as
   * `dueFailed`, as the hub does.
   */
  tick(): Committed[] {
    return this.dueKeys().map((due) => {
      const d = this.commit({ kind: "tick", due });
      if (d.status >= 500 || d.failure) {
        if (!this.#failingTicks) {
          throw new Error(`the deadline ${JSON.stringify(due)} answered ${d.status} at ${this.iso()}: ${JSON.stringify(d.body)} (a test that breaks deadlines on purpose makes its Clock with failingTicks)`, { cause: d.failure });
        }
        this.commit({ kind: "dueFailed", due, error: d.failure?.message ?? JSON.stringify(d.body) });
      }
      return d;
    });
  }

  /** Moves the clock to `to` (ms or ISO), firing every deadline on the way at its own time, as the timer would. */
  advance(to: number | string): void {
    const end = typeof to === "string" ? Date.parse(to) : to;
    for (;;) {
      const next = this.nextDeadline();
      if (next === null || next > end) break;
      this.now = Math.max(this.now, next);
      this.tick();
    }
    this.now = end;
  }

  /** Jumps the clock without firing anything on the way (a hub that was asleep), then fires what is due. */
  sleepUntil(to: string): void {
    this.now = Date.parse(to);
    this.tick();
  }

  minutes(n: number): void {
    this.advance(this.now + n * 60_000);
  }

  event(id: string, extra: Record<string, unknown> = {}) {
    return this.commit({ kind: "event", keyHash: K.source, event: { id, type: "alert.x", ...extra } as never });
  }

  /** GET /v1/work with claim id `claim` as `worker` (capacity 1), reporting `running`: its answer. */
  claim(claim: string, worker = K.worker, running: number[] = []): WorkAnswer {
    return this.commit({ kind: "work", keyHash: worker, claim, running, capacity: 1 }).body as WorkAnswer;
  }

  /**
   * Posts event `id` (with `extra` fields, for example `{ subject }`) and claims it as worker w1 with claim id
   * `c-<id>`; reports it started on `session` when one is given. Returns the run's id; throws when the claim gets no job.
   */
  claimed(id: string, session: string | null = null, extra: Record<string, unknown> = {}): number {
    this.event(id, extra);
    const job = this.claim(`c-${id}`).job;
    if (!job) throw new Error(`claim c-${id} got no job`);
    if (session) this.started(job.run, session);
    return job.run;
  }

  /** GET /v1/cards/next as the channel whose key hashes to `keyHash` (default ch1): the card offered now, or null. */
  nextCard(keyHash = K.channel): Card | null {
    return (this.commit({ kind: "cardsNext", keyHash }).body as CardNext).card;
  }

  heartbeat(running: number[], worker = K.worker) {
    return this.commit({ kind: "work", keyHash: worker, claim: `hb-${this.now}`, running, capacity: 0 });
  }

  /** The token of run `run`'s latest claim (a repeated claim reissues it). @throws when this clock saw no claim of it. */
  token(run: number): string {
    const token = this.#tokens.get(run);
    if (token === undefined) throw new Error(`run ${run} was never claimed`);
    return token;
  }

  /** POST /v1/runs/:id/started with the run's current token. */
  started(run: number, session: string | null, link: string | null = null) {
    return this.commit({ kind: "started", run, token: this.token(run), session, link });
  }

  result(run: number, result: Record<string, unknown>) {
    return this.commit({ kind: "result", run, token: this.token(run), result: result as never, hash: JSON.stringify(result) + this.now });
  }

  /**
   * GET /v1/state as the owner: the first page of runs, or the page of runs older than `before`; with `filter`, the
   * runs of that rule, state and worker among those the page looks through (GET /v1/state?rule=&state=&worker=).
   */
  state(before: number | null = null, filter?: RunFilter): State {
    return buildState(this.#store.view, this.env, this.now, this.#store.seq, before, { filter });
  }

  /** Run `id` as GET /v1/state lists it (the page that starts with it). @throws when there is no such run. */
  run(id: number): RunView {
    const r = this.state(id + 1).runs[0];
    if (r?.id !== id) throw new Error(`no run ${id}`);
    return r;
  }

  /** Every run, newest first, read page by page as GET /v1/state?before= gives them. */
  runs(): RunView[] {
    const all: RunView[] = [];
    for (let s = this.state(); ; s = this.state(s.nextBefore)) {
      all.push(...s.runs);
      if (s.nextBefore === null) return all;
    }
  }

  /** The owner's cards of GET /v1/state, open and recently closed, by id. */
  cards(): OwnerCard[] {
    const s = this.state();
    return [...s.cards, ...s.recentCards].sort((a, b) => a.id - b.id);
  }

  /** Card `id` as the owner sees it in GET /v1/state. @throws when it is neither open nor among the recent cards. */
  card(id: number): OwnerCard {
    const c = this.cards().find((x) => x.id === id);
    if (!c) throw new Error(`no card ${id} in the owner's state`);
    return c;
  }

  /** The facts after `seq`, as GET /v1/stream sends them. */
  stream(seq = 0): Fact[] {
    return this.#store.factsAfter(seq, Number.MAX_SAFE_INTEGER).map(publicFact);
  }

  /** The log's sequence number, as GET /v1/state reports it. */
  seq(): number {
    return this.state().seq;
  }

  /** GET /c/:id/:token at `at` (ms; default now): the link page's status and HTML. */
  linkPage(card: number, token: string, at = this.now) {
    return linkPage(this.#store.view, this.env, at, card, token);
  }

  /** What the kernel tells the hub's timer is due at `at` (default now), earliest first: the deadlines' keys. */
  dueKeys(at = this.now, limit = Number.MAX_SAFE_INTEGER): string[] {
    return dueKeys(this.#store.view, at, limit);
  }

  /** When the hub's timer fires next (ms), or null when nothing is due ever. */
  nextDeadline(): number | null {
    return nextDeadline(this.#store.view);
  }

  /** When a card is offered to a channel next, after `afterMs` (ms), or null: when the hub wakes the channels. */
  nextOfferAt(afterMs?: number): number | null {
    return nextOfferAt(this.#store.view, afterMs);
  }

  /**
   * Appends a fact of `kind` with `changes` as they stand, without deciding anything: a damaged row, or what an older
   * hub's log holds. The test arranges with it; it never reads rows back.
   */
  appendRaw(kind: string, changes: Change[]): void {
    appendRawFact(this.#store, kind, changes, this.now);
    this.#store.commit([], this.env); // an empty commit reads the end of the log again, as the next one would
  }

  iso(): string {
    return new Date(this.now).toISOString();
  }

  close(): void {
    this.#store.close();
  }
}
