/**
 * Runs (protocol.md Agent：领活、干活、交回执, 失败时会怎样): claiming with leases and tokens, the job and
 * its session, start, results with their receipt applied in one step, retries, stops and the end of a run.
 */
import type { Ctx } from "./context.js";
import { anyGlob, ruleTools, toolSessionKey, type RuleDef } from "./rules.js";
import {
  failuresBeforeCancel, failuresBeforeCard, heartbeatRecordIntervalMs, retryDelayFirstMs, retryDelayMaxMs, runLeaseMs,
  workerOfflineMs, stateRecentCards,
} from "./limits.js";
import { runToken, safeEqual } from "./credentials.js";
import { closeCard, createCard, openAlert, saveCard } from "./cards.js";
import { enqueue, findEvent, getLane, isPaused, putLane, recordEvent, routeEvent } from "./lanes.js";
import type { CardRow, EventRow, GroupRow, JobSnapshot, RunOutcome, RunRow, TimerRow, UsageSum } from "./types.js";
import { timerKey } from "./tables.js";
import { moveRun } from "./run-state.js";
import { systemCardKey } from "./system-cards.js";
import type { Result } from "../protocol/schema.js";
import type { Job, Rejected, WorkAnswer } from "../protocol/responses.js";
import { tooDeepNotice } from "./notices.js";
import { endLostCalls } from "./tool-calls.js";
import { mayStart } from "./rate.js";
import { own } from "./own.js";
import type { IntentTable } from "./intents.js";
import { assert } from "./assert.js";
import { backoffMs } from "./backoff.js";
import { runPendingStates } from "./states.js";
import { fixedText } from "../i18n/messages.js";

const isoOrNull = (c: Ctx, ms: number | null) => (ms === null ? null : c.iso(ms));

/** The limit of runs at once in a group: the largest `parallel` of its rules, else 1 (protocol.md 规则). */
function groupLimit(c: Ctx, group: string): number {
  let limit = 1;
  for (const r of c.rules.rules) if (r.group === group && r.parallel !== null) limit = Math.max(limit, r.parallel);
  return limit;
}

function getGroup(c: Ctx, name: string): GroupRow {
  return c.tx.get("groups", name) ?? { name, active: [] };
}

function occupy(c: Ctx, run: RunRow): void {
  // Only runs outside their group get here: queued ones, and uncertain ones that release() let go.
  const g = getGroup(c, run.group);
  g.active.push(run.id);
  c.tx.put("groups", g.name, g);
  const lane = getLane(c, run.rule, run.lane);
  lane.active = run.id;
  if (lane.queued === run.id) lane.queued = null;
  putLane(c, lane);
}

/** Frees the run's place in its group and lane (end, or uncertain). */
function release(c: Ctx, run: RunRow): void {
  const g = getGroup(c, run.group);
  if (g.active.includes(run.id)) {
    g.active = g.active.filter((id) => id !== run.id);
    if (g.active.length === 0) c.tx.del("groups", g.name);
    else c.tx.put("groups", g.name, g);
  }
  // The lane is written even when it did not hold the run: every caller writes it in the same fact anyway.
  const lane = getLane(c, run.rule, run.lane);
  if (lane.active === run.id) lane.active = null;
  if (lane.queued === run.id) lane.queued = null;
  putLane(c, lane);
  c.wake.workers = true;
}

/** The token of the run's current claim. */
export function tokenOf(c: Ctx, run: RunRow): string {
  return runToken(c.env.master, run.id, run.attempt, run.claims);
}

/** Whether `token` is the run's current token (constant-time). */
export function tokenValid(c: Ctx, run: RunRow, token: string): boolean {
  return runTokenMatches(c.env.master, run, token);
}

/**
 * Whether `token` is the token of the run's current claim (constant-time); the shell checks it before reading a
 * request's body, the kernel again when it decides.
 */
export function runTokenMatches(master: Buffer, run: Pick<RunRow, "id" | "attempt" | "claims">, token: string): boolean {
  return run.attempt > 0 && safeEqual(token, runToken(master, run.id, run.attempt, run.claims));
}

/** Whether the run can be claimed by `worker` now (protocol.md 规则: group one at a time, lane one at a time). */
function claimable(c: Ctx, run: RunRow, worker: string): RuleDef | undefined {
  const rule = c.rule(run.rule);
  if (!rule) return undefined;
  const agent = own(c.rules.agents, rule.to);
  if (!agent || agent.worker !== worker || isPaused(c, rule.name)) return undefined;
  const lane = getLane(c, run.rule, run.lane);
  if (lane.active !== null) return undefined;
  if (getGroup(c, run.group).active.length >= groupLimit(c, run.group)) return undefined;
  return rule;
}

/** Records a worker's heartbeat at most once a minute; returns the ids to cancel. */
function heartbeat(c: Ctx, worker: string, running: number[]): number[] {
  const w = c.tx.get("workers", worker);
  if (!w || c.now - w.seenAt >= heartbeatRecordIntervalMs) {
    if (w?.offlineCard) closeCard(c, w.offlineCard, c.msg("result.notNeeded"));
    c.tx.put("workers", worker, { name: worker, seenAt: c.now, offlineCard: null });
    c.due("offline", worker, c.now + workerOfflineMs);
    for (const id of running) {
      const run = c.tx.get("runs", id);
      if (!run || run.worker !== worker) continue;
      if (run.state === "uncertain" && laneFree(c, run)) {
        moveRun(run, run.startedAt !== null ? "running" : "claimed");
        occupy(c, run);
        backFromUncertain(c, run);
      }
      if (run.state === "claimed" || run.state === "running" || run.state === "stopping") {
        run.seenAt = c.now;
        c.tx.put("runs", run.id, run);
        c.due("lease", run.id, c.now + runLeaseMs);
      }
    }
  }
  const cancel = new Set<number>();
  // Every run of this worker being stopped, listed or not; and those it lists that the owner stopped and that
  // ended meanwhile (an uncertain run stopped, or one that ended before its worker heard of the stop).
  for (const row of c.view.runsIn(["stopping"])) if (row.worker === worker) cancel.add(row.id);
  for (const id of running) {
    const run = c.tx.get("runs", id);
    if (run && run.worker === worker && run.state === "cancelled" && run.stopRequested) cancel.add(id);
  }
  return [...cancel].sort((a, b) => a - b);
}

/** The job of a run as the worker gets it: the snapshot taken at claim plus the current token. */
export function jobOf(c: Ctx, run: RunRow): Job {
  const job = run.job;
  assert(job, "claimed-run-has-job");
  // Stryker disable next-line ArrayDeclaration: only a snapshot taken before tools existed (a fact log of an older version) lacks `tools`; no test writes one
  return { run: run.id, token: tokenOf(c, run), attempt: run.attempt, ...job, tools: job.tools ?? [], sessionKey: job.sessionKey ?? toolSessionKey(run.rule, run.lane) };
}

/**
 * GET /v1/work: heartbeat, then the same job again for a repeated claim id (with a new token), else the
 * oldest claimable queued run for this worker. `capacity <= 0` only reports in and reads no queue.
 */
export function work(c: Ctx, worker: string, claim: string, running: number[], capacity: number): WorkAnswer {
  const cancel = heartbeat(c, worker, running);
  const again = c.view.runOfClaim(worker, claim);
  if (again) {
    const run = c.tx.get("runs", again.id);
    assert(run, "claimed-run-exists");
    // The index found it by this worker and claim id, so run.claim is `claim`.
    if (run.state === "claimed" || run.state === "running" || run.state === "uncertain") {
      run.claims += 1;
      c.tx.put("runs", run.id, run);
      return { job: jobOf(c, run), cancel };
    }
    return { job: null, cancel };
  }
  if (capacity <= 0) return { job: null, cancel };
  for (const row of c.view.queuedRuns()) {
    // Still queued in this decision too: nothing before this loop changes a queued run.
    const run = c.tx.get("runs", row.id);
    assert(run, "queued-run-exists");
    const rule = claimable(c, run, worker);
    if (!rule) continue;
    claimRun(c, run, rule, worker, claim);
    return { job: jobOf(c, run), cancel };
  }
  return { job: null, cancel };
}

/** Chooses the session a run continues (protocol.md 规则: resume, and when a new session opens). */
function chooseSession(c: Ctx, run: RunRow, rule: RuleDef): string | null {
  let session: string | null = null;
  if (run.sessionHint && run.sessionHint.agent === rule.to) session = run.sessionHint.session;
  else if (rule.resume) {
    const last = getLane(c, run.rule, run.lane).last;
    if (last && !last.stopped && last.agent === rule.to && last.session) session = last.session;
  }
  if (session === null) return null;
  // A session row names the run using it, always one that goes on (runs drop theirs when they end or wait for a
  // retry): that run has the session now, so this one starts a new one.
  if (c.tx.get("sessions", session)) return null;
  return session;
}

function claimRun(c: Ctx, run: RunRow, rule: RuleDef, worker: string, claim: string): void {
  const agent = own(c.rules.agents, rule.to)!;
  run.attempt += 1;
  run.claims = 1;
  run.claim = claim;
  run.worker = worker;
  run.agent = agent.id;
  moveRun(run, "claimed");
  run.claimedAt = c.now;
  run.seenAt = c.now;
  run.startedAt = null;
  const session = chooseSession(c, run, rule);
  run.job = {
    rule: {
      name: rule.name, cwd: rule.cwd, skill: rule.skill, prompt: rule.prompt,
      // Declarative assets (issue 18), only when the rule names them: the shell adds their content to the job it hands out.
      ...(rule.promptRef === undefined ? {} : { promptRef: rule.promptRef }),
      ...(rule.workflow === undefined ? {} : { workflow: rule.workflow }),
      ...(rule.intent === undefined ? {} : { intent: rule.intent }),
    },
    agent: {
      id: agent.id, name: agent.name, use: agent.use, model: agent.model, effort: agent.effort, access: agent.access,
      command: agent.command, program: agent.program, sandbox: agent.sandbox, env: agent.env,
      ...(agent.writable.length ? { writable: agent.writable } : {}),
      ...(agent.devices.length ? { devices: agent.devices } : {}),
    },
    session,
    askFirst: c.rules.askFirst,
    tools: ruleTools(rule),
    sessionKey: toolSessionKey(rule.name, run.lane),
    context: buildContext(c, run, rule),
  };
  if (session) c.tx.put("sessions", session, { run: run.id });
  occupy(c, run);
  c.tx.put("runs", run.id, run);
  c.due("lease", run.id, c.now + runLeaseMs);
}

/** The context file's content (protocol.md Job.context): data, never instructions. */
function buildContext(c: Ctx, run: RunRow, rule: RuleDef): JobSnapshot["context"] {
  const events = run.events
    .map((id) => c.tx.get("events", id))
    // A timer's event is an event of the log too, but the job carries it in `timers`. (Answers join a run as
    // cards, never as events.)
    .filter((e): e is EventRow => !!e && e.internal !== "timer")
    .map((e) => ({
      id: e.sid, source: e.source, sourceName: own(c.rules.sources, e.source)?.name ?? e.source, type: e.type,
      subject: e.subject, summary: e.summary, detail: e.detail, link: e.link, receivedAt: c.iso(e.at),
    }));
  const answers = run.answers
    .map((id) => c.tx.get("cards", id))
    .filter((card): card is CardRow => !!card)
    .map((card) => ({
      card: card.id, title: card.title, options: card.options, choice: card.choice, text: card.answer, about: card.about,
      by: card.by, at: isoOrNull(c, card.answeredAt),
    }));
  const timers = run.timers.map((tm) => ({ key: tm.key, about: tm.about, at: c.iso(tm.at) }));
  const waiting = c.view
    .timersOf(run.rule, run.lane)
    .map((row) => ({ key: row.key, about: row.about, at: c.iso(row.at) }));
  const open = c.view
    .openCardsOf(rule.source, rule.group)
    .map((row) => ({ card: row.id, title: row.title, text: row.text, at: c.iso(row.at) }));
  const decided = c.view
    .settledCardsOf(run.rule, run.lane, stateRecentCards)
    .filter((row) => row.kind === "ask" && (row.choice !== null || row.answer !== null))
    .map((row) => ({ card: row.id, title: row.title, choice: row.choice !== null ? row.options[row.choice] ?? null : row.answer, at: isoOrNull(c, row.answeredAt) }))
    .reverse();
  return { events, answers, timers, waiting, open, decided };
}

/** POST /v1/runs/:id/started: the agent took the prompt; remembers its session and link. */
export function started(c: Ctx, run: RunRow, session: string | null, link: string | null): void {
  let changed = false;
  // Of the runs that may report started (claimed, running, stopping, uncertain), only an uncertain one can find its
  // lane free: the others hold it.
  if (laneFree(c, run)) {
    moveRun(run, "running");
    occupy(c, run);
    backFromUncertain(c, run);
    changed = true;
  } else if (run.state === "claimed") {
    moveRun(run, "running"); // a claimed run has not started: `changed` is set just below
  }
  if (run.startedAt === null) {
    run.startedAt = c.now;
    run.seenAt = c.now;
    changed = true;
  }
  if (session && session !== run.session) {
    dropSessions(c, run); // the one it was handed and one it reported before, unless another run took them
    run.session = session;
    c.tx.put("sessions", session, { run: run.id });
    changed = true;
  }
  if (link && link !== run.link) {
    run.link = link;
    changed = true;
  }
  if (changed) c.tx.put("runs", run.id, run);
}

/**
 * Whether an uncertain run can take its lane back: only when no other run took the lane meanwhile (an uncertain
 * run itself released it). Otherwise it stays uncertain (outside its group's count) until its result arrives or
 * the owner stops it.
 */
function laneFree(c: Ctx, run: RunRow): boolean {
  return getLane(c, run.rule, run.lane).active === null;
}

/** Drops the session rows that still name this run: the session it reported and the one its job was handed. */
function dropSessions(c: Ctx, run: RunRow): void {
  for (const s of [run.session, run.job?.session]) {
    if (s && c.tx.get("sessions", s)?.run === run.id) c.tx.del("sessions", s);
  }
}

/** Closes the "uncertain" card of a run whose worker reported it again. */
function backFromUncertain(c: Ctx, run: RunRow): void {
  const card = openAlert(c, systemCardKey.uncertain(run.id));
  if (card) closeCard(c, card.id, c.msg("result.notNeeded"));
}

function addUsage(run: RunRow, usage: Result["usage"]): void {
  if (!usage) return;
  const sum: UsageSum = run.usage ?? {};
  for (const k of ["input", "output", "cached", "cost"] as const) {
    const v = usage[k];
    if (typeof v === "number") sum[k] = (sum[k] ?? 0) + v;
  }
  run.usage = sum;
  if (usage.input !== undefined || usage.output !== undefined || usage.cached !== undefined) run.usageReported.tokens = true;
  if (usage.cost !== undefined) run.usageReported.cost = true;
}

/** Ends a run: frees its lane and group, closes its "will retry" card, marks answered cards executed. */
export function endRun(c: Ctx, run: RunRow, state: RunOutcome): void {
  backFromUncertain(c, run);
  endLostCalls(c, run.id);
  moveRun(run, state);
  run.outcome = state;
  run.endedAt = c.now;
  release(c, run);
  c.undue("lease", run.id);
  c.undue("retry", run.id);
  dropSessions(c, run);
  if (run.attempt > 0) { // a run that was ever claimed (a claimed, running or stopping run always was)
    const lane = getLane(c, run.rule, run.lane);
    lane.last = { run: run.id, session: run.session ?? run.job?.session ?? null, agent: run.agent, stopped: state === "cancelled" };
    putLane(c, lane);
  }
  if (run.retryCard !== null) closeCard(c, run.retryCard, state === "cancelled" ? c.msg("result.cancelled") : c.msg("result.notNeeded"));
  if (state !== "cancelled") {
    for (const id of run.answers) {
      const card = c.tx.get("cards", id);
      if (card && card.state === "answered") {
        card.result = c.msg("result.executed");
        const from = card.state;
        card.state = "closed";
        card.closedAt = c.now;
        saveCard(c, card, from);
      }
    }
  }
  c.tx.put("runs", run.id, run);
}

/** Retry delay after the n-th consecutive failure: 5 min doubling, at most 1 h (protocol.md 失败时会怎样). */
export function retryDelayMs(failures: number): number {
  return backoffMs(failures, retryDelayFirstMs, retryDelayMaxMs);
}

/** A failed attempt: retry later on the same session, card at the 3rd, cancel at the 10th. */
function failRun(c: Ctx, run: RunRow, error: string): void {
  // The attempt is over, whether it is retried or not: its calls still without an outcome will get none.
  endLostCalls(c, run.id);
  run.failures += 1;
  run.error = error;
  backFromUncertain(c, run);
  const rule = c.rule(run.rule);
  if (run.failures >= failuresBeforeCancel) {
    createCard(c, {
      kind: "notice", title: c.msg("card.gaveUp.title", { rule: run.rule, n: run.failures }),
      text: c.msg("card.gaveUp.text", { run: run.id, error }), rule: rule ?? null, lane: run.lane, run: run.id, system: "gaveUp",
    });
    endRun(c, run, "cancelled");
    return;
  }
  release(c, run);
  c.undue("lease", run.id);
  const s = run.session ?? run.job?.session ?? null;
  dropSessions(c, run);
  if (s) run.sessionHint = { session: s, agent: run.agent };
  moveRun(run, "waiting");
  run.claim = null;
  run.readyAt = c.now + retryDelayMs(run.failures);
  c.due("retry", run.id, run.readyAt);
  // Work that arrived for the lane while this run was running joins the retry (protocol.md 失败时会怎样).
  const lane = getLane(c, run.rule, run.lane);
  if (lane.queued !== null) { // never this run: it was active, and a lane's active run is never its queued one
    const newer = c.tx.get("runs", lane.queued);
    if (newer && newer.state === "queued") {
      run.events.push(...newer.events);
      run.answers.push(...newer.answers);
      run.timers.push(...newer.timers);
      run.manual ||= newer.manual;
      run.hops = Math.max(run.hops, newer.hops);
      moveRun(newer, "cancelled");
      newer.outcome = "cancelled";
      newer.endedAt = c.now;
      newer.mergedInto = run.id;
      c.tx.put("runs", newer.id, newer);
    }
  }
  lane.queued = run.id;
  putLane(c, lane);
  if (run.failures === failuresBeforeCard) {
    run.retryCard = createCard(c, {
      kind: "notice", title: c.msg("card.failing.title", { rule: run.rule, n: run.failures }),
      text: c.msg("card.failing.text", { run: run.id, error }),
      rule: rule ?? null, lane: run.lane, run: run.id, system: "failing",
    });
  }
  c.tx.put("runs", run.id, run);
}

/**
 * POST /v1/runs/:id/result after the token check: applies the outcome and the receipt in one step.
 * `failed` keeps only `notice`; a run the owner stopped ends `cancelled` when it reports `failed` or `cancelled`.
 * @returns the `rejected` list of receipt items outside this run's scope.
 */
export function applyResult(c: Ctx, run: RunRow, result: Result, intents: IntentTable = {}): Rejected[] {
  addUsage(run, result.usage);
  if (result.session) {
    run.session = result.session;
  }
  if (result.summary !== undefined) run.summary = result.summary;
  if (result.error !== undefined) run.error = result.error;
  const rule = c.rule(run.rule);
  const rejected: Rejected[] = [];
  const stopping = run.stopRequested;
  if (result.outcome === "cancelled" || (result.outcome === "failed" && stopping)) {
    endRun(c, run, "cancelled");
    return rejected;
  }
  if (result.outcome === "failed") {
    if (rule && rule.tell !== "never") for (const n of result.notice ?? []) notice(c, run, rule, n);
    if (!rule) {
      endRun(c, run, "cancelled");
      return rejected;
    }
    failRun(c, run, result.error ?? result.summary ?? "failed");
    return rejected;
  }
  run.failures = 0;
  let madeCard = false;
  const count = (id: number | null) => { if (id !== null) madeCard = true; };
  const r = rule ?? null;
  for (const a of result.ask ?? []) {
    count(createCard(c, { kind: "ask", title: a.title, text: a.text, options: a.options, recommend: a.recommend ?? null, about: a.about ?? null, key: a.key ?? null, rule: r, lane: run.lane, run: run.id, template: a.card }));
  }
  if (!rule || rule.tell !== "never") for (const n of result.notice ?? []) count(notice(c, run, r, n));
  for (const res of result.resolve ?? []) {
    const why = resolveInScope(c, run, rule, res.card);
    if (why) rejected.push({ card: res.card, reason: why });
    else closeCard(c, res.card, res.reason ? c.msg("result.notNeededWhy", { reason: res.reason }) : c.msg("result.notNeeded"));
  }
  for (const l of result.later ?? []) later(c, run, l);
  for (const e of result.events ?? []) {
    const why = emit(c, run, rule, e, intents);
    if (why) rejected.push({ event: e.id, reason: why });
  }
  if (rule?.tell === "always" && result.outcome === "done" && !madeCard) {
    createCard(c, { kind: "notice", fyi: true, title: c.msg("card.done.title", { rule: rule.name }), text: result.summary ?? "", rule, lane: run.lane, run: run.id });
  }
  endRun(c, run, result.outcome);
  return rejected;
}

function notice(c: Ctx, run: RunRow, rule: RuleDef | null, n: NonNullable<Result["notice"]>[number]): number | null {
  return createCard(c, { kind: "notice", fyi: n.fyi === true, title: n.title, text: n.text, key: n.key ?? null, rule, lane: run.lane, run: run.id, template: n.card });
}

/** Why a receipt may not resolve a card: same source, same group, created before this run's claim, still open. */
function resolveInScope(c: Ctx, run: RunRow, rule: RuleDef | undefined, id: number): string | null {
  const card = c.tx.get("cards", id);
  if (!card) return fixedText("rejected.noCard", { id });
  if (!rule || card.source !== rule.source || card.group !== rule.group || card.at > (run.claimedAt ?? 0) || card.run === run.id) {
    return fixedText("rejected.scope");
  }
  if (card.state !== "open") return fixedText("rejected.closed");
  return null;
}

/** `later`: sets, moves or cancels a timer of the lane (protocol.md 回执). */
function later(c: Ctx, run: RunRow, l: NonNullable<Result["later"]>[number]): void {
  const key = timerKey(run.rule, run.lane, l.key);
  if ("cancel" in l) { // a timer that is not there: nothing to remove
    c.tx.del("timers", key);
    c.undue("later", key);
    return;
  }
  const at = Date.parse(l.at);
  const row: TimerRow = { rule: run.rule, lane: run.lane, key: l.key, at, about: l.about ?? null, run: run.id, hops: run.hops };
  c.tx.put("timers", key, row);
  c.due("later", key, at);
}

/**
 * A receipt event: source fixed by the rule's `emits`, hops one more than the run's deepest event; routed with the
 * intents loaded now, as a posted event is.
 */
function emit(c: Ctx, run: RunRow, rule: RuleDef | undefined, e: NonNullable<Result["events"]>[number], intents: IntentTable): string | null {
  if (!rule?.emits) return fixedText("rejected.noEmits");
  if (!anyGlob(rule.emits.types, e.type)) return fixedText("rejected.type", { type: e.type });
  const source = rule.emits.source;
  if (findEvent(c, source, e.id)) return null;
  const ev = recordEvent(c, {
    source, sid: e.id, type: e.type, subject: e.subject ?? null, summary: e.summary ?? null, detail: e.detail ?? null,
    link: e.link ?? null, hops: run.hops + 1, internal: "receipt",
  });
  routeEvent(c, ev, (deep) => tooDeepNotice(c, deep), intents, (r) => mayStart(c, r));
  return null;
}

/**
 * POST /v1/runs/:id/cancel (owner): queued and waiting runs end at once; claimed and running ones are
 * stopped by their worker first; an uncertain one ends now and is cancelled if its worker comes back.
 * @returns whether anything changed.
 */
export function cancelRun(c: Ctx, run: RunRow): boolean {
  switch (run.state) {
    case "queued":
    case "waiting":
    case "uncertain":
      run.stopRequested = true;
      endRun(c, run, "cancelled");
      return true;
    case "claimed":
    case "running":
      moveRun(run, "stopping");
      run.stopRequested = true;
      c.tx.put("runs", run.id, run);
      c.wake.workers = true;
      return true;
    default:
      return false;
  }
}

/** A lease ran out: the worker has not reported the run for 5 minutes; free its group and tell the owner. */
export function leaseExpired(c: Ctx, runId: number): void {
  const run = c.tx.get("runs", runId);
  if (!run || !["claimed", "running", "stopping"].includes(run.state)) return;
  if (run.stopRequested) {
    endRun(c, run, "cancelled");
    return;
  }
  moveRun(run, "uncertain");
  release(c, run);
  c.tx.put("runs", run.id, run);
  // A run with a lease was claimed, so it has its worker.
  assert(run.worker !== null, "leased-run-has-worker");
  createCard(c, {
    kind: "notice", key: systemCardKey.uncertain(run.id), title: c.msg("card.uncertain.title", { run: run.id, rule: run.rule }),
    text: c.msg("card.uncertain.text", { worker: run.worker }), rule: null, lane: "", run: run.id, system: "uncertain",
  });
}

/** A retry wait ended: the run is queued again. */
export function retryDue(c: Ctx, runId: number): void {
  // A retry deadline is removed in the same step as its run leaves "waiting" (ended, or started by `run <rule>`).
  const run = c.tx.get("runs", runId);
  assert(run?.state === "waiting", "retry-deadline-names-waiting-run");
  moveRun(run, "queued");
  run.readyAt = c.now;
  c.tx.put("runs", run.id, run);
  c.wake.workers = true;
}

/** A `later` timer came due: its lane gets a run that continues the session of the run that set it. */
export function timerDue(c: Ctx, key: string): void {
  const tm = c.tx.get("timers", key);
  if (!tm) return;
  c.tx.del("timers", key);
  const rule = c.rule(tm.rule);
  if (!rule) return;
  const setter = tm.run !== null ? c.tx.get("runs", tm.run) : undefined;
  const session = setter?.session ?? null;
  const src = rule.source;
  const ev = recordEvent(c, {
    source: src, sid: `later:${tm.lane}:${tm.key}:${c.iso(tm.at)}`, type: "timer.due", subject: tm.lane || null,
    summary: tm.about, detail: null, link: null, hops: tm.hops, internal: "timer",
  });
  ev.routed = [rule.name];
  c.tx.put("events", ev.id, ev);
  enqueue(c, rule, tm.lane, {
    events: [ev.id], timers: [{ key: tm.key, about: tm.about, at: tm.at, run: tm.run }], hops: tm.hops,
    sessionHint: session ? { session, agent: setter?.agent ?? null } : null,
  });
}

/** Cancels unclaimed runs of rules that no longer exist, with a notice (protocol.md 失败时会怎样). */
export function cancelOrphans(c: Ctx, names: Set<string>): void {
  for (const row of c.view.runsIn(runPendingStates)) {
    if (names.has(row.rule)) continue;
    const run = c.tx.get("runs", row.id);
    assert(run, "orphaned-run-exists");
    createCard(c, {
      kind: "notice", title: c.msg("card.ruleGone.title", { rule: run.rule, run: run.id }), text: c.msg("card.ruleGone.text"),
      rule: null, lane: "", run: run.id, system: "ruleGone",
    });
    endRun(c, run, "cancelled");
  }
}

