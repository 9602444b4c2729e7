/**
 * Runs claimed and started (protocol.md Agent：领活、干活、交回执): a worker's heartbeat and claim with leases and tokens,
 * the job and its session and context, the start. A run's place in its group and lane is run-place.ts; its result is
 * run-results.ts; its end, retries, stops and deadlines run-end.ts.
 */
import type { Ctx } from "./context.js";
import { approvalsOf, pluginDenied, ruleTools, toolSessionKey, type RuleDef } from "./rules.js";
import { heartbeatRecordIntervalMs, runLeaseMs, workerOfflineMs, stateRecentCards, contextOpenCardsMax } from "./limits.js";
import { runToken, safeEqual } from "./credentials.js";
import { closeCard } from "./cards.js";
import { contextEventId, getLane, isPaused } from "./lanes.js";
import type { CardRow, EventRow, JobSnapshot, RunRow } from "./types.js";
import { moveRun } from "./run-state.js";
import type { Job, WorkAnswer } from "../protocol/responses.js";
import { own } from "./own.js";
import { assert } from "./assert.js";
import { backFromUncertain, dropSessions, getGroup, groupLimit, laneFree, occupy } from "./run-place.js";

const isoOrNull = (c: Ctx, ms: number | null) => (ms === null ? null : c.iso(ms));

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
  const w = waitsFor(c, run);
  return w.why === "worker" && w.worker === worker ? c.rule(run.rule) : undefined;
}

/**
 * What a queued run waits for (issue 30: queued runs say why), the first that holds, in the order a claim checks
 * them: its rule is gone (or its agent), its rule is paused, its lane's run `run` holds the lane, its group runs
 * `limit` at a time and all are taken, or — nothing in the hub holds it — worker `worker` asking for work (a claim by
 * that worker takes it). The one test a claim makes (`claimable`), so what the owner reads is what a claim does.
 */
export type QueuedWait =
  | { why: "rule" } | { why: "paused" } | { why: "lane"; run: number } | { why: "group"; limit: number } | { why: "worker"; worker: string };

/** What queued `run` waits for (see QueuedWait). */
export function waitsFor(c: Ctx, run: Pick<RunRow, "rule" | "lane" | "group">): QueuedWait {
  const rule = c.rule(run.rule);
  const agent = rule ? own(c.rules.agents, rule.to) : undefined;
  if (!rule || !agent) return { why: "rule" };
  if (isPaused(c, rule.name)) return { why: "paused" };
  const lane = getLane(c, run.rule, run.lane);
  if (lane.active !== null) return { why: "lane", run: lane.active };
  const limit = groupLimit(c, run.group);
  if (getGroup(c, run.group).active.length >= limit) return { why: "group", limit };
  return { why: "worker", worker: agent.worker };
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
      ...(agent.readable.length ? { readable: agent.readable } : {}),
      ...(agent.devices.length ? { devices: agent.devices } : {}),
      ...(agent.network === "host" ? { network: agent.network } : {}),
      ...(agent.loopbackPorts.length ? { loopbackPorts: agent.loopbackPorts } : {}),
    },
    session,
    askFirst: c.rules.askFirst,
    tools: ruleTools(rule),
    ...toolsDenied(c, rule),
    sessionKey: toolSessionKey(rule.name, run.lane),
    context: buildContext(c, run, rule),
  };
  if (session) c.tx.put("sessions", session, { run: run.id });
  occupy(c, run);
  c.tx.put("runs", run.id, run);
  c.due("lease", run.id, c.now + runLeaseMs);
}

/** `toolsDenied` of a job: the plugins of the rule's `tools` the approvals deny whole, when there are any. */
function toolsDenied(c: Ctx, rule: RuleDef): { toolsDenied?: string[] } {
  const denied = [...new Set(ruleTools(rule).map((p) => p.slice(0, p.indexOf("."))))].filter((p) => pluginDenied(approvalsOf(c.rules), p));
  return denied.length ? { toolsDenied: denied } : {};
}

/** The context file's content (protocol.md Job.context): data, never instructions. */
function buildContext(c: Ctx, run: RunRow, rule: RuleDef): JobSnapshot["context"] {
  const events = run.events
    .map((id) => c.tx.get("events", id))
    // A timer's event is an event of the log too, but the job carries it in `timers`. (Answers join a run as
    // cards, never as events.)
    .filter((e): e is EventRow => !!e && e.internal !== "timer")
    .map((e) => ({
      id: contextEventId(e), source: e.source, sourceName: own(c.rules.sources, e.source)?.name ?? e.source, type: e.type,
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
    .openCardsOf(rule.source, rule.group, contextOpenCardsMax)
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
