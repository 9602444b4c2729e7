/**
 * A kernel driven through time: a real SQLite store and the real decide/evolve, with the clock in the test's
 * hands. `advance` runs the due table the way the hub's single timer would.
 */
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { Store } from "../src/host/store.js";
import { dueKeys, nextDeadline } from "../src/kernel/decide.js";
import { parseRules } from "../src/kernel/rules.js";
import { hashKey, runToken } from "../src/kernel/credentials.js";
import { buildState } from "../src/host/state.js";
import type { Env, Input, RunRow } from "../src/kernel/types.js";
import { tempDir } from "./helpers.js";

export const K = { source: hashKey("src"), worker: hashKey("wrk"), worker2: hashKey("wrk2"), channel: hashKey("chn"), owner: hashKey("own") };

export class Clock {
  readonly store: Store;
  readonly env: Env;
  now: number;

  constructor(rules: unknown, start: string) {
    this.env = { master: randomBytes(32), lang: "en", publicUrl: null };
    this.store = new Store({ path: join(tempDir("aa-clock-"), "hub.db"), master: this.env.master });
    this.now = Date.parse(start);
    for (const [kind, name, hash] of [["source", "shop", K.source], ["worker", "w1", K.worker], ["worker", "w2", K.worker2], ["channel", "ch1", K.channel], ["owner", "owner", K.owner]] as const) {
      this.commit({ kind: "keyNew", keyHash: null, local: true, keyKind: kind, name, newHash: hash });
    }
    this.loadRules(rules);
  }

  loadRules(rules: unknown): void {
    const r = parseRules(JSON.stringify(rules), { timezone: "UTC" });
    if (!r.ok) throw new Error(r.error);
    this.commit({ kind: "rules", rules: r.rules, hash: JSON.stringify(r.rules) });
  }

  commit(input: Input) {
    return this.store.commit([{ input, now: this.now }], this.env)[0]!;
  }

  /**
   * Fires every deadline due now, one `tick` each, as the hub's timer does; a tick answered 500 is reported back as
   * `dueFailed`, as the hub does. Returns the ticks' decisions.
   */
  tick() {
    return dueKeys(this.store.view, this.now, Number.MAX_SAFE_INTEGER).map((due) => {
      const d = this.commit({ kind: "tick", due });
      if (d.failure) this.commit({ kind: "dueFailed", due, error: d.failure.message });
      return d;
    });
  }

  /** Moves the clock to `to` (ms or ISO), firing every deadline on the way at its own time, as the timer would. */
  advance(to: number | string): void {
    const end = typeof to === "string" ? Date.parse(to) : to;
    for (;;) {
      const next = nextDeadline(this.store.view);
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

  claim(claim: string, worker = K.worker, running: number[] = []) {
    const d = this.commit({ kind: "work", keyHash: worker, claim, running, capacity: 1 });
    return d.body as { job: { run: number; attempt: number; token: string; session: string | null; context: any; rule: { name: string; cwd: string | null; prompt: string | null } } | null; cancel: number[] };
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

  heartbeat(running: number[], worker = K.worker) {
    return this.commit({ kind: "work", keyHash: worker, claim: `hb-${this.now}`, running, capacity: 0 });
  }

  token(run: number): string {
    const r = this.run(run);
    return runToken(this.env.master, r.id, r.attempt, r.claims);
  }

  /** POST /v1/runs/:id/started with the run's current token. */
  started(run: number, session: string | null, link: string | null = null) {
    return this.commit({ kind: "started", run, token: this.token(run), session, link });
  }

  result(run: number, result: Record<string, unknown>) {
    return this.commit({ kind: "result", run, token: this.token(run), result: result as never, hash: JSON.stringify(result) + this.now });
  }

  run(id: number): RunRow {
    return this.store.view.get("runs", id)!;
  }

  state(): any {
    return buildState(this.store.view, this.env, this.now, this.store.seq, null);
  }

  iso(): string {
    return new Date(this.now).toISOString();
  }

  close(): void {
    this.store.close();
  }
}
