/**
 * A seeded simulation of the hub's kernel (protocol.md 一致性和复现): sources, workers, channels and the owner act
 * at random against the real `decide`/`evolve` on an in-memory SQLite database, with faults — lost responses,
 * repeated requests, worker restarts, clock jumps, crashes between decide and commit. Every 128 steps a fresh
 * scenario starts; before it ends the faults stop and all work is drained. After every transition the invariants are
 * checked (among them: the usage buckets equal a sum over the runs); at the end of each scenario the whole log is
 * replayed and must equal the live projection.
 * The same seed gives the same run, step for step.
 */
import Database from "better-sqlite3";
import { Store } from "../src/host/store.js";
import { decide, dueKeys, nextDeadline } from "../src/kernel/decide.js";
import { deadlineFailuresBeforeCard } from "../src/kernel/limits.js";
import { parseRules } from "../src/protocol/rules-file.js";
import { hashKey, runToken } from "../src/kernel/credentials.js";
import { evolve, projectionDdl, tables, usageOf, type UsageBucket } from "../src/kernel/evolve.js";
import type { Change, DueRow, Env, Input } from "../src/kernel/types.js";

/** A small, fast, seedable PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const K = { src: hashKey("src"), src2: hashKey("src2"), w1: hashKey("w1"), w2: hashKey("w2"), ch: hashKey("ch"), own: hashKey("own") };

const simRules = {
  timezone: "UTC",
  sources: { shop: {}, crm: {} },
  agents: { a1: { worker: "w1", use: "command", command: ["x"] }, a2: { worker: "w2", use: "command", command: ["x"] } },
  channels: { ch: { answerers: ["alice"] } },
  rules: [
    { name: "alerts", when: { source: "shop", types: ["alert.*"] }, to: "a1", emits: { source: "crm", types: ["ticket.*"] } },
    { name: "tickets", when: { source: "crm", types: ["ticket.*"] }, to: "a2", parallel: 2, resume: true },
    { name: "mixed", when: { source: "shop", types: ["order.*"] }, to: "a2", group: "alerts-and-orders", parallel: 3 },
    { name: "hourly", when: { cron: "17 * * * *" }, to: "a1" },
  ],
};

/** What a simulation did; `deadlineFailures` counts the failed ticks of deadlines broken on purpose, `deadlineCards` their cards. */
export interface SimReport { seed: number; steps: number; scenarios: number; facts: number; replays: number; deadlineFailures: number; deadlineCards: number }

class Violation extends Error {}

interface WorkerSim {
  key: string;
  name: string;
  /** What the worker believes it runs: run id → token. */
  jobs: Map<number, { token: string; started: boolean }>;
  /** A claim whose answer was lost: asked again with the same id. */
  pendingClaim: string | null;
}

export class Simulation {
  private store!: Store;
  private readonly env: Env;
  private readonly r: () => number;
  private now = Date.parse("2026-11-01T00:00:00Z");
  private faults = true;
  private workers: WorkerSim[] = [];
  private lostInputs: Input[] = [];
  /** Deadlines this scenario broke on purpose (see `breakDeadline`): only their ticks may answer 500. */
  private broken = new Set<string>();
  private claimSeq = 0;
  private eventSeq = 0;
  readonly report: SimReport;
  /** Where each scenario's log is replayed (one, reused). */
  private readonly replay = new ReplayTarget();

  constructor(readonly seed: number) {
    this.r = rng(seed);
    this.env = { master: Buffer.alloc(32, seed & 0xff), lang: "en", publicUrl: null };
    this.report = { seed, steps: 0, scenarios: 0, facts: 0, replays: 0, deadlineFailures: 0, deadlineCards: 0 };
  }

  private pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.r() * xs.length)]!;
  }

  private chance(p: number): boolean {
    return this.r() < p;
  }

  /** Starts a fresh scenario: a new in-memory database with keys and rules. */
  private scenario(): void {
    this.store?.close();
    this.store = new Store({ path: ":memory:", master: this.env.master, fingerprint: "sim" });
    this.workers = [
      { key: K.w1, name: "w1", jobs: new Map(), pendingClaim: null },
      { key: K.w2, name: "w2", jobs: new Map(), pendingClaim: null },
    ];
    this.lostInputs = [];
    const keys: [string, string, string][] = [["source", "shop", K.src], ["source", "crm", K.src2], ["worker", "w1", K.w1], ["worker", "w2", K.w2], ["channel", "ch", K.ch], ["owner", "owner", K.own]];
    for (const [kind, name, hash] of keys) this.apply({ kind: "keyNew", keyHash: null, local: true, keyKind: kind as never, name, newHash: hash });
    const parsed = parseRules(JSON.stringify(simRules), { timezone: "UTC" });
    if (!parsed.ok) throw new Error(parsed.error);
    this.apply({ kind: "rules", rules: parsed.rules, hash: "sim-rules" });
    this.report.scenarios++;
    this.broken = new Set();
    // Every 4th scenario gets a deadline its handler cannot work with (a worker nobody knows, a kind nobody knows),
    // as a damaged database could hold: it must fail alone, be retried later and become a card, never stop the rest.
    if (this.report.scenarios % 4 === 1) this.breakDeadline({ at: this.now + 60_000, kind: "offline", ref: "ghost" });
    if (this.report.scenarios % 4 === 3) this.breakDeadline({ at: this.now + 90_000, kind: "bogus" as DueRow["kind"], ref: "x" }); // deliberately not a DueKind
  }

  /** Puts a deadline into the due table behind the kernel's back (a hand-made fact in the log). */
  private breakDeadline(row: DueRow): void {
    const key = `${row.kind}:${row.ref}`;
    appendRawFact(this.store, "corrupt", [["due", key, row]], this.now);
    this.broken.add(key);
  }

  /**
   * Fires every deadline due now, one tick each, as the hub's timer does. A tick of a deadline broken on purpose
   * answers 500 and is reported back as `dueFailed`: it must then be due later, one failure more, with its card at
   * the 3rd failure in a row.
   */
  private tick(): void {
    for (const due of dueKeys(this.store.view, this.now, Number.MAX_SAFE_INTEGER)) {
      const input: Input = { kind: "tick", due };
      if (!this.broken.has(due)) {
        this.apply(input);
        continue;
      }
      const before = this.store.view.get("due", due)!;
      const [d] = this.store.commit([{ input, now: this.now }], this.env);
      if (d!.status !== 500 || d!.committed.length > 0) throw new Violation(`step ${this.report.steps}: the broken deadline ${due} answered ${d!.status}`);
      this.apply({ kind: "dueFailed", due, error: d!.failure!.message });
      this.report.deadlineFailures++;
      const after = this.store.view.get("due", due);
      const failures = (before.failing?.failures ?? 0) + 1;
      if (!after || after.at <= this.now || after.failing?.failures !== failures) {
        throw new Violation(`step ${this.report.steps}: the broken deadline ${due} after failure ${failures}: ${JSON.stringify(after)}`);
      }
      const card = this.store.view.where("cards", "state = 'open' AND json_extract(data, '$.key') = ?", `deadline:${due}`)[0];
      if (failures === deadlineFailuresBeforeCard) {
        if (!card) throw new Violation(`step ${this.report.steps}: no card for the broken deadline ${due}`);
        this.report.deadlineCards++;
      }
    }
  }

  /** Decides and commits one input; checks the invariants after it. */
  private apply(input: Input) {
    const [d] = this.store.commit([{ input, now: this.now }], this.env);
    if (d!.status >= 500) throw new Violation(`step ${this.report.steps}: ${input.kind} answered ${d!.status}: ${JSON.stringify(d!.body)}`);
    this.report.facts += d!.committed.length;
    this.checkInvariants(input.kind, d!.committed.some((f) => f.changes.some((c) => c[0] === "runs")));
    return d!;
  }

  /** Runs `steps` steps. @throws Violation naming the step and what broke. */
  run(steps: number): SimReport {
    this.scenario();
    for (let i = 0; i < steps; i++) {
      this.report.steps++;
      const inScenario = i % 128;
      if (inScenario === 0 && i > 0) {
        this.drain();
        this.replayCheck();
        this.scenario();
      }
      this.faults = inScenario < 100;
      this.step();
    }
    this.drain();
    this.replayCheck();
    this.store.close();
    this.replay.close();
    return this.report;
  }

  private step(): void {
    const x = this.r();
    if (this.faults && this.lostInputs.length > 0 && x < 0.05) {
      // a repeated request whose first answer was lost
      this.apply(this.lostInputs.splice(Math.floor(this.r() * this.lostInputs.length), 1)[0]!);
      return;
    }
    if (x < 0.2) this.sourceEvent();
    else if (x < 0.45) this.workerStep(this.pick(this.workers));
    else if (x < 0.6) this.channelStep();
    else if (x < 0.72) this.ownerStep();
    else if (x < 0.85) this.advance(this.chance(0.1) ? 3_600_000 * (1 + Math.floor(this.r() * 30)) : Math.floor(this.r() * 400_000));
    else if (this.faults && x < 0.9) this.crashBetweenDecideAndCommit();
    else if (this.faults && x < 0.93) this.restartWorker(this.pick(this.workers));
    else this.workerStep(this.pick(this.workers));
  }

  private sourceEvent(): void {
    const id = this.chance(0.2) && this.eventSeq > 0 ? `e${Math.floor(this.r() * this.eventSeq)}` : `e${++this.eventSeq}`;
    const shop = this.chance(0.6);
    const type = shop ? this.pick(["alert.cpu", "alert.disk", "order.new", "other.thing"]) : this.pick(["ticket.new", "ticket.reply"]);
    const input: Input = {
      kind: "event", keyHash: shop ? K.src : K.src2,
      event: { id, type, subject: this.pick(["#1", "#2", "#3"]), summary: "s", hops: this.chance(0.02) ? 9 : 0 },
    };
    this.send(input);
  }

  /** Sends an input; with faults, its answer may be lost (the input is remembered to be sent again). */
  private send(input: Input) {
    const d = this.apply(input);
    if (this.faults && this.chance(0.05)) {
      this.lostInputs.push(input);
      return null;
    }
    return d;
  }

  private workerStep(w: WorkerSim): void {
    const running = [...w.jobs.keys()];
    if (running.length > 0 && this.chance(0.6)) {
      const id = this.pick(running);
      const job = w.jobs.get(id)!;
      if (!job.started && this.chance(0.5)) {
        this.send({ kind: "started", run: id, token: job.token, session: `s-${id}-${Math.floor(this.r() * 3)}`, link: null });
        job.started = true;
        return;
      }
      const d = this.send({ kind: "result", run: id, token: job.token, result: this.randomResult(id), hash: `h-${id}-${this.now}` });
      if (d && d.status !== 409) w.jobs.delete(id);
      else if (d?.status === 409) w.jobs.delete(id);
      return;
    }
    const claim = w.pendingClaim ?? `${w.name}-${++this.claimSeq}`;
    const d = this.apply({ kind: "work", keyHash: w.key, claim, running, capacity: Math.max(0, 2 - running.length) });
    if (this.faults && this.chance(0.05)) {
      w.pendingClaim = claim; // the answer was lost: ask again with the same claim id
      return;
    }
    w.pendingClaim = null;
    const body = d.body as { job: { run: number; token: string } | null; cancel: number[] };
    if (body.job) w.jobs.set(body.job.run, { token: body.job.token, started: false });
    for (const id of body.cancel) {
      const job = w.jobs.get(id);
      if (job) {
        this.send({ kind: "result", run: id, token: job.token, result: { outcome: "cancelled" }, hash: `c-${id}` });
        w.jobs.delete(id);
      }
    }
  }

  private randomResult(run: number): any {
    const outcome = this.pick(["done", "done", "done", "nothing", "failed"]);
    const res: any = { outcome, summary: "ok", usage: this.chance(0.7) ? { input: 10, output: 5, cost: 0.01 } : undefined };
    if (this.chance(0.4)) res.ask = [{ title: this.pick(["Q1", "Q2"]), options: ["a", "b"], key: this.chance(0.5) ? "k" : undefined }];
    if (this.chance(0.3)) res.notice = [{ title: "N", fyi: this.chance(0.5) }];
    if (this.chance(0.2)) res.resolve = [{ card: 1 + Math.floor(this.r() * 10) }];
    if (this.chance(0.2)) res.later = [this.chance(0.8) ? { key: "t", at: new Date(this.now + Math.floor(this.r() * 7_200_000)).toISOString() } : { key: "t", cancel: true }];
    if (this.chance(0.15)) res.events = [{ id: `r${run}-${this.now}`, type: this.pick(["ticket.followup", "bad.type"]) }];
    for (const k of Object.keys(res)) if (res[k] === undefined) delete res[k];
    return res;
  }

  private channelStep(): void {
    const d = this.send({ kind: "cardsNext", keyHash: K.ch });
    const card = (d?.body as { card: { id: number; version: number; ref: string | null } | null } | undefined)?.card;
    if (!card) return;
    if (this.chance(0.15)) this.send({ kind: "failed", keyHash: K.ch, card: card.id, version: card.version, error: "x" });
    else if (this.chance(0.9)) this.send({ kind: "delivered", keyHash: K.ch, card: card.id, version: card.version, ref: card.ref ?? `m${card.id}` });
  }

  private ownerStep(): void {
    const open = this.store.view.where("cards", "state = 'open' ORDER BY key").map((x) => x.row);
    const x = this.r();
    if (open.length > 0 && x < 0.5) {
      const card = this.pick(open);
      if (card.kind === "ask" && this.chance(0.3) && card.deliveries.ch?.ref) {
        this.send({ kind: "answer", keyHash: K.ch, card: card.id, choice: Math.floor(this.r() * card.options.length), text: null, by: "alice", ref: card.deliveries.ch.ref });
      } else {
        this.send({ kind: "answer", keyHash: K.own, card: card.id, choice: card.kind === "ask" ? Math.floor(this.r() * card.options.length) : 0, text: null, by: null, ref: null });
      }
    } else if (open.length > 0 && x < 0.6) this.send({ kind: "resolve", keyHash: K.own, card: this.pick(open).id, reason: null });
    else if (x < 0.7) this.send({ kind: "cancel", keyHash: K.own, run: 1 + Math.floor(this.r() * 20) });
    else if (x < 0.8) this.send({ kind: "pause", keyHash: K.own, rule: this.pick(["alerts", "tickets", "hourly"]), reason: null, until: this.chance(0.5) ? new Date(this.now + 3_600_000).toISOString() : null });
    else if (x < 0.9) this.send({ kind: "resume", keyHash: K.own, rule: this.pick(["alerts", "tickets", "hourly"]) });
    else this.send({ kind: "runNow", keyHash: K.own, rule: this.pick(["alerts", "tickets", "mixed"]), subject: this.pick(["#1", "#2"]), reason: null });
  }

  /** Moves the clock forward, firing due deadlines on the way (a clock jump fires them late, all at once). */
  private advance(ms: number): void {
    const end = this.now + ms;
    const jump = this.chance(0.2);
    for (;;) {
      const next = nextDeadline(this.store.view);
      if (next === null || next > end) break;
      if (!jump) this.now = Math.max(this.now, next);
      else this.now = end;
      this.tick();
      if (jump) break;
    }
    this.now = end;
  }

  /** A crash after decide and before commit: the decision is thrown away; nothing may have changed. */
  private crashBetweenDecideAndCommit(): void {
    const seq = this.store.seq;
    const input: Input = { kind: "event", keyHash: K.src, event: { id: `crash-${this.report.steps}`, type: "alert.cpu" } };
    decide(this.store.view, input, this.now, this.env);
    if (this.store.seq !== seq) throw new Violation("decide wrote to the log");
    this.lostInputs.push(input); // the client sends it again later
  }

  private restartWorker(w: WorkerSim): void {
    // A restarted worker forgets claims it never saw answered; runs it was watching it keeps (they are on disk).
    w.pendingClaim = null;
  }

  /** Stops faults and works until nothing is left: every run ends, every card is delivered and closed. */
  private drain(): void {
    this.faults = false;
    for (const input of this.lostInputs.splice(0)) this.apply(input);
    for (const p of this.store.view.where("pauses", "1")) this.apply({ kind: "resume", keyHash: K.own, rule: String(p.key) });
    for (let round = 0; round < 500; round++) {
      let busy = false;
      for (const w of this.workers) {
        for (const [id, job] of [...w.jobs]) {
          this.apply({ kind: "result", run: id, token: job.token, result: { outcome: "done" }, hash: `d-${id}-${this.now}` });
          w.jobs.delete(id);
          busy = true;
        }
        const d = this.apply({ kind: "work", keyHash: w.key, claim: `${w.name}-drain-${++this.claimSeq}`, running: [], capacity: 2 });
        const job = (d.body as { job: { run: number; token: string } | null }).job;
        if (job) {
          w.jobs.set(job.run, { token: job.token, started: true });
          busy = true;
        }
      }
      const uncertain = this.store.view.where("runs", "state IN ('uncertain', 'stopping')").map((x) => x.row);
      for (const run of uncertain) {
        this.apply({ kind: "cancel", keyHash: K.own, run: run.id });
        const token = runToken(this.env.master, run.id, run.attempt, run.claims);
        this.apply({ kind: "result", run: run.id, token, result: { outcome: "cancelled" }, hash: `u-${run.id}-${this.now}` });
        busy = true;
      }
      for (const card of this.store.view.where("cards", "state = 'open' ORDER BY key").map((x) => x.row)) {
        this.apply({ kind: "answer", keyHash: K.own, card: card.id, choice: 0, text: null, by: null, ref: null });
        busy = true;
      }
      const waiting = this.store.view.where("runs", "state IN ('waiting', 'queued')").length;
      const due = this.store.view.where("due", "json_extract(data, '$.kind') IN ('retry', 'later', 'lease', 'pause')").length;
      if (!busy && waiting === 0 && due === 0) return;
      if (!busy) this.advance(3_600_000);
    }
    throw new Violation(`scenario ${this.report.scenarios} did not drain`);
  }

  private replayCheck(): void {
    const diff = this.replay.diff(this.store);
    if (diff) throw new Violation(`scenario ${this.report.scenarios}: replay of table ${diff} differs from the live projection`);
    this.report.replays++;
  }

  private checkInvariants(after: string, runsChanged: boolean): void {
    const problem = invariantProblem(this.store, runsChanged);
    if (problem) throw new Violation(`step ${this.report.steps} (after ${after}): ${problem}`);
  }
}

/**
 * A fresh projection to replay logs into, made once and reused (issue 32: every replay opening a new database and
 * preparing its statements again was a third of the enumeration): each replay is a transaction rolled back after it.
 * It holds the projection's own tables only (evolve writes nothing else).
 */
export class ReplayTarget {
  private readonly db = new Database(":memory:");
  /** The SELECT of each projection table, in key order (prepared once per connection, for this and the live one). */
  private readonly dumps = new WeakMap<Database.Database, Map<string, Database.Statement>>();

  constructor() {
    for (const sql of projectionDdl()) this.db.exec(sql);
  }

  private dump(db: Database.Database): Record<string, unknown[]> {
    let m = this.dumps.get(db);
    if (!m) this.dumps.set(db, (m = new Map(Object.keys(tables).map((t) => [t, db.prepare(`SELECT key, data FROM v_${t} ORDER BY key`)]))));
    const out: Record<string, unknown[]> = {};
    for (const [t, select] of m) out[t] = select.all();
    return out;
  }

  /**
   * Replays the whole log of `store` into this empty projection and compares it with the live one.
   * @returns the first table that differs from the live projection, or null when they are equal.
   */
  diff(store: Store): string | null {
    const live = this.dump(store.db);
    this.db.exec("BEGIN");
    try {
      for (const f of store.factsAfter(0, Number.MAX_SAFE_INTEGER)) evolve(this.db, [f]);
      const replayed = this.dump(this.db);
      for (const t of Object.keys(live)) if (JSON.stringify(live[t]) !== JSON.stringify(replayed[t])) return t;
      return null;
    } finally {
      this.db.exec("ROLLBACK");
    }
  }

  /** Closes its database. */
  close(): void {
    this.db.close();
  }
}

/**
 * Replays the whole log of `store` into a fresh in-memory projection (a caller that replays often keeps one
 * `ReplayTarget` instead).
 * @returns the first table that differs from the live projection, or null when they are equal.
 */
export function replayDiff(store: Store): string | null {
  const target = new ReplayTarget();
  try {
    return target.diff(store);
  } finally {
    target.close();
  }
}

/** The states of a run that holds its lane and its group. */
const activeStates = "('claimed', 'running', 'stopping')";

/**
 * What must hold after every transition. The relational checks are SQL over the projection (read by SQLite, not
 * parsed into objects); the usage buckets are recounted from the run rows with `usageOf`, unless `runsChanged` says
 * the transition changed no run (the buckets follow run changes only: evolve refuses a fact that writes them).
 * @returns the first problem found, or null.
 */
export function invariantProblem(store: Store, runsChanged = true): string | null {
  const v = store.view;
  const first = (sql: string) => v.sql(sql).get() as Record<string, string | number | null> | undefined;
  const twice = first(`SELECT data ->> 'rule' AS rule, data ->> 'lane' AS lane FROM v_runs WHERE state IN ${activeStates} GROUP BY 1, 2 HAVING COUNT(*) > 1`);
  if (twice) return `two active runs in lane ${twice.rule}/${twice.lane}`;
  const notLane = first(`SELECT r.key AS run FROM v_runs r LEFT JOIN v_lanes l ON l.key = (r.data ->> 'rule') || char(0) || (r.data ->> 'lane')
    WHERE r.state IN ${activeStates} AND (l.data ->> 'active') IS NOT r.key`);
  if (notLane) return `active run ${notLane.run} is not its lane's active run`;
  const notGroup = first(`SELECT r.key AS run, r.data ->> 'group' AS grp FROM v_runs r LEFT JOIN v_groups g ON g.key = r.data ->> 'group'
    WHERE r.state IN ${activeStates} AND NOT EXISTS (SELECT 1 FROM json_each(g.data, '$.active') a WHERE a.value = r.key)`);
  if (notGroup) return `active run ${notGroup.run} is not in group ${notGroup.grp}`;
  const unclaimed = first(`SELECT key AS run FROM v_runs WHERE state IN ${activeStates}
    AND (data ->> 'claim' IS NULL OR data ->> 'worker' IS NULL OR data ->> 'job' IS NULL)`);
  if (unclaimed) return `active run ${unclaimed.run} has no claim`;
  const held = first(`SELECT g.key AS grp, a.value AS run, r.state AS state FROM v_groups g, json_each(g.data, '$.active') a
    LEFT JOIN v_runs r ON r.key = a.value WHERE r.state IS NULL OR r.state NOT IN ${activeStates}`);
  if (held) return `group ${held.grp} holds run ${held.run} in state ${held.state ?? undefined}`;
  const queued = first(`SELECT l.data ->> 'rule' AS rule, l.data ->> 'lane' AS lane, l.data ->> 'queued' AS run, r.state AS state FROM v_lanes l
    LEFT JOIN v_runs r ON r.key = l.data ->> 'queued' WHERE (l.data ->> 'queued') IS NOT NULL AND (r.state IS NULL OR r.state NOT IN ('queued', 'waiting'))`);
  if (queued) return `lane ${queued.rule}/${queued.lane} queues run ${queued.run} in state ${queued.state ?? undefined}`;
  const session = first(`SELECT s.key AS session, s.data ->> 'run' AS run, r.state AS state FROM v_sessions s LEFT JOIN v_runs r ON r.key = s.data ->> 'run'
    WHERE r.state IS NULL OR r.state NOT IN ${activeStates.slice(0, -1)}, 'uncertain')`);
  if (session) return `session ${session.session} names run ${session.run} in state ${session.state ?? undefined}`;
  const noRetry = first(`SELECT r.key AS run FROM v_runs r LEFT JOIN v_due d ON d.key = 'retry:' || r.key WHERE r.state = 'waiting' AND d.key IS NULL`);
  if (noRetry) return `waiting run ${noRetry.run} has no retry deadline`;
  const staleRetry = first(`SELECT d.data ->> 'ref' AS run, r.state AS state FROM v_due d LEFT JOIN v_runs r ON r.key = CAST(d.data ->> 'ref' AS INTEGER)
    WHERE d.data ->> 'kind' = 'retry' AND (r.state IS NULL OR r.state != 'waiting')`);
  if (staleRetry) return `retry deadline of run ${staleRetry.run} in state ${staleRetry.state ?? undefined}`;
  const totals = v.get("meta", "totals");
  const open = (v.sql(`SELECT COUNT(*) AS n FROM v_cards WHERE state = 'open'`).get() as { n: number }).n;
  if ((totals?.openCards ?? 0) !== open) return `totals.openCards ${totals?.openCards} but ${open} open cards`;
  const dup = v.sql(`SELECT sk, COUNT(*) AS n FROM v_events GROUP BY sk HAVING n > 1 LIMIT 1`).get() as { sk: string } | undefined;
  if (dup) return `event ${dup.sk} recorded twice`;
  if (!runsChanged) return null;
  const zero = (): UsageBucket => ({ rounds: 0, tokens: 0, costNanos: 0, missingTokens: 0, missingCost: 0 });
  const buckets = new Map<number, { sum: UsageBucket; rules: Map<string, UsageBucket> }>();
  for (const { row } of v.where("runs", "ended IS NOT NULL")) {
    const share = usageOf(row);
    if (!share) continue;
    const b = buckets.get(share.bucket) ?? { sum: zero(), rules: new Map() };
    const r = b.rules.get(share.rule) ?? zero();
    for (const k of Object.keys(r) as (keyof UsageBucket)[]) {
      b.sum[k] += share.add[k];
      r[k] += share.add[k];
    }
    b.rules.set(share.rule, r);
    buckets.set(share.bucket, b);
  }
  const kept = v.where("usage", "1 ORDER BY key");
  const recount = [...buckets].sort((a, b) => a[0] - b[0]);
  if (kept.length !== recount.length) return `${kept.length} usage buckets kept but runs end in ${recount.length}`;
  for (const [i, { key, row }] of kept.entries()) {
    const [bucket, { sum, rules }] = recount[i]!;
    // The rules' sums as the bucket keeps them: sorted by name, every field of a rule's sum.
    const byRule = [...rules].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([rule, r]) => ({ rule, ...r }));
    const same = (Object.keys(sum) as (keyof UsageBucket)[]).every((k) => row[k] === sum[k]) && JSON.stringify(row.rules) === JSON.stringify(byRule);
    if (key !== bucket || !same) return `usage bucket ${key} holds ${JSON.stringify(row)} but its runs sum to ${JSON.stringify({ ...sum, rules: byRule })}`;
  }
  return null;
}

/**
 * Appends a fact written by hand, as a damaged file or another program could leave one: the faults the kernel's
 * asserts are there for. It goes into the log like any fact (a replay sees it too) and moves the log cursor.
 */
export function appendRawFact(store: Store, kind: string, changes: Change[], now: number): void {
  store.db.transaction(() => {
    const seq = (store.db.prepare(`SELECT COALESCE(MAX(seq), 0) AS s FROM facts`).get() as { s: number }).s + 1;
    store.db.prepare(`INSERT INTO facts (seq, at, kind, body) VALUES (?, ?, ?, ?)`).run(seq, new Date(now).toISOString(), kind, JSON.stringify(changes));
    store.db.prepare(`INSERT OR REPLACE INTO store_meta (key, value) VALUES ('cursor', ?)`).run(String(seq));
    evolve(store.db, [{ changes }]);
  })();
}

/** Runs the simulation for a seed and a number of steps. @throws with the step and invariant that broke. */
export function simulate(seed: number, steps: number): SimReport {
  return new Simulation(seed).run(steps);
}
