/**
 * `decide(view, input, now, env)`: the pure heart of the hub (protocol.md 日志与确定性). It reads the view,
 * never changes it, and returns the answer plus the facts that explain it. The shell commits the facts with
 * `evolve` in one transaction and replies only after COMMIT. No clock, randomness, files or network here.
 *
 * Reads like a table: input kind → permission check (谁能做什么) → checks → facts.
 *
 * The kernel's modules form a DAG: each imports only from modules on lower lines (tests/kernel-modules.test.ts fails
 * on a cycle). Nothing in the kernel imports from src/host, src/worker or src/cli.
 *
 *   decide                    the input table (this file): permission, checks, facts; the kernel's entry
 *   card-steps · due-steps    steps by input kind: cards (take, deliver, answer, resolve, link); the due table's ticks
 *   runs · run-results · control · tell · tool-tasks   steps by input kind: claims and starts; results and their
 *                             receipts; cron, pause, resume, run now; tell; an async tool task's callback and deadline
 *   run-end                   a run's end, retries, stops; the deadlines of runs (lease, retry, later)
 *   notices · budget · rate · tool-calls · run-place   alerts several steps raise (hops); budgets: spend, pause, the
 *                             budget card and its answer; rules starting runs too fast: pause and ask; tool calls (a
 *                             run's end ends its calls that will never report); a run's place in its group and lane
 *   cards · schedule          cards: create, deliver, answer, close; cron schedules and the end of a pause
 *   lanes · authorize         events into lanes into queued runs; who calls, and may they (the permission table)
 *   context                   Ctx: the decision's overlay, time, environment, rules, ids, totals, due table
 *   view                      Projection (typed reads; the SQLite View answers them) and the Tx overlay
 *   evolve                    the projection's SQL schema and its only writer
 *   tables · run-state · system-cards   table registry (row and key types, keys); run state moves; hub alert keys
 *   types                     rows, inputs, decisions, the unions (RunState, RunOutcome, DueKind, SystemKind)
 *   rules                     rules.json as the kernel reads it: the normalized types (from the file's schema,
 *                             src/protocol/rules-schema.ts; read and checked in src/protocol/rules-file.ts)
 *   approvals                 how a tool call is approved: approvals entries, session keys, the verdict
 *   glob                      type globs and star patterns, matched in linear time
 *   timeline                  a run's `why` timeline as message ids (every client words it)
 *   limits · own · text · names · cron · period · credentials · assert · intents · devices · states · reply · backoff · json-error
 *                             leaves (intents: declarative intents matched; devices: the device paths a plugin sandbox
 *                             may bind; states: the shared enumerations and the named run-state groups; reply: a step's
 *                             answer or refusal; backoff: the one doubling wait; json-error: where a text stops being
 *                             JSON, without quoting it)
 */
import { Ctx } from "./context.js";
import type { Projection } from "./view.js";
import type { Answers, Decision, Env, Input, InputKind, InputOf, RunRow, RulesAnswer } from "./types.js";
import type { EventAccepted, EventsAccepted, WorkAnswer, Ok, ResultAnswer, ArtifactStored, ToolCallDecision, CancelAnswer, Changed } from "../protocol/responses.js";
import { closeCard, createCard, openAlert } from "./cards.js";
import { findEvent, receiptEventPrefix, recordEvent, routeEvent } from "./lanes.js";
import { started, tokenValid, work } from "./runs.js";
import { applyResult } from "./run-results.js";
import { cancelOrphans, cancelRun } from "./run-end.js";
import { tooDeepNotice } from "./notices.js";
import { mayStart } from "./rate.js";
import { tell } from "./tell.js";
import { artifactMaxBytes, artifactsPerRunMax } from "./limits.js";
import { assert } from "./assert.js";
import { runEndStates, runHeldStates, stateIn } from "./states.js";
import { countUsage } from "./budget.js";
import { pauseRule, resumeRule, runNow } from "./control.js";
import { scheduleCrons } from "./schedule.js";
import { artifactKey } from "./tables.js";
import { artifactPath, utf8Bytes } from "./text.js";
import { systemCardKey } from "./system-cards.js";
import type { MessageId } from "../i18n/messages.js";
import { own } from "./own.js";
import type { IntentTable } from "./intents.js";
import { pluginSource, reservedSources } from "./rules.js";
import { agentToolCall, ownerToolCall, toolOutcome } from "./tool-calls.js";
import { toolCallback } from "./tool-tasks.js";
import { asOwner, authorize } from "./authorize.js";
import { cardAnswer, cardDelivered, cardFailed, cardResolve, cardsNext, linkAnswer } from "./card-steps.js";
import { dueFailed, tick } from "./due-steps.js";
import { done, isReply, ok, refuse as err, type Refusal, type Reply } from "./reply.js";

/** A step of `decide`: the input of one kind in, that kind's answer (or a refusal) out, its facts in `c`. */
type Step<K extends InputKind> = (c: Ctx, input: InputOf<K>) => Reply<Answers[K]>;

/**
 * The input table: one step per input kind, each typed to the answer its endpoint publishes (`Answers`), so that the
 * compiler holds every step to its endpoint's shape.
 */
const steps: { [K in InputKind]: Step<K> } = {
  event: postEvent,
  eventsIn,
  work: getWork,
  started: runStarted,
  result: runResult,
  cardsNext,
  delivered: cardDelivered,
  failed: cardFailed,
  answer: cardAnswer,
  linkAnswer,
  resolve: cardResolve,
  cancel: runCancel,
  rules: loadRules,
  rulesError,
  keyNew,
  keyRemove,
  pause: (c, input) => asOwner(c, input.keyHash, (who) => pauseRule(c, input.rule, who.name, input.reason, input.until === null ? null : Date.parse(input.until))),
  resume: (c, input) => asOwner(c, input.keyHash, () => resumeRule(c, input.rule)),
  runNow: (c, input) => asOwner(c, input.keyHash, (who) => runNow(c, input.rule, who.name, input.subject, input.reason)),
  tell: (c, input) => {
    const who = authorize(c, input.keyHash, ["source", "worker"]);
    return isReply(who) ? who : tell(c, who, input.body);
  },
  pluginEvent: (c, input) => asOwner(c, input.keyHash, () => receiptId([input.event]) ? err(400, c.say("event.receiptId", { prefix: receiptEventPrefix })) : ok(takeEvent(c, pluginSource(input.plugin), input.event, input.intents ?? {}))),
  artifact: runArtifact,
  toolCall: runToolCall,
  ownerToolCall: (c, input) => asOwner(c, input.keyHash, (who) => ownerToolCall(c, who.name, input.body)),
  toolOutcome: runToolOutcome,
  ownerToolOutcome: (c, input) => asOwner(c, input.keyHash, () => {
    const call = c.tx.get("calls", input.call);
    return call && call.caller === "owner" ? toolOutcome(c, call, input.body) : err(404, c.say("tools.calls.notFound", { id: input.call }));
  }),
  toolCallback: (c, input) => toolCallback(c, input.task, input.key, input.body),
  tick: (c, input) => tick(c, input.due),
  dueFailed: (c, input) => dueFailed(c, input.due, input.error),
};

/**
 * Decides one input. Pure: the same view, input, time and environment give the same decision.
 * @param now milliseconds since the Unix epoch (UTC), from the shell's clock.
 * @returns the HTTP status and body (the input kind's answer, typed by `Answers`), the facts to commit (empty when
 * nothing changed), and `park` for long polls.
 */
export function decide<I extends Input>(view: Projection, input: I, now: number, env: Env): Decision<Answers[I["kind"]]> {
  const c = new Ctx(view, now, env);
  // The table gives the step of exactly this input's kind (TypeScript cannot follow a lookup by a generic key).
  const step = steps[input.kind] as unknown as (c: Ctx, input: I) => Reply<Answers[I["kind"]]>;
  const reply = step(c, input);
  // No refusal writes before it refuses; this keeps a refusal from ever committing a change should one start to.
  // Stryker disable next-line ConditionalExpression,EqualityOperator: no decision writes and then refuses (see above)
  const facts = reply.status < 400 ? c.tx.facts().map((f) => ({ kind: f.kind ?? factKind(input, reply.body), changes: f.changes })) : [];
  return { ...reply, facts, wake: { workers: c.wake.workers, channels: [...c.wake.channels] } };
}

/** The kind of a fact an input writes when its step named none: a claim or a heartbeat, an offer or a heartbeat. */
function factKind(input: Input, body: unknown): string {
  if (input.kind === "pause") return "pauseRule";
  if (input.kind === "resume") return "resumeRule";
  if (input.kind === "work") return (body as WorkAnswer).job ? "claim" : "heartbeat";
  if (input.kind === "cardsNext") return (body as { card: unknown }).card ? "offer" : "heartbeat";
  return input.kind;
}

function postEvent(c: Ctx, input: InputOf<"event">): Reply<EventAccepted> {
  const who = authorize(c, input.keyHash, ["source"]);
  if (isReply(who)) return who;
  if (receiptId([input.event])) return err(400, c.say("event.receiptId", { prefix: receiptEventPrefix }));
  return ok(takeEvent(c, who.name, input.event, input.intents ?? {}, callHops(c, input.viaCall)));
}

/**
 * The hops an event gets from the agent's tool call whose request posted it (issue 26): one more than the calling
 * run's, as a receipt's events (runs.ts `emit`); 0 for no call, an unknown one or the owner's (no run).
 */
function callHops(c: Ctx, call: number | undefined): number {
  const row = call === undefined ? undefined : c.tx.get("calls", call);
  const run = row?.run ? c.tx.get("runs", row.run) : undefined;
  return run ? run.hops + 1 : 0;
}

/**
 * POST /v1/in/<source>: events an adapter translated from a verified webhook (the shell checked the signature
 * through the adapter and the shapes through the schema). The source must still be declared with an adapter.
 */
function eventsIn(c: Ctx, input: InputOf<"eventsIn">): Reply<EventsAccepted> {
  if (!own(c.rules.sources, input.source)?.adapter) return err(404, c.say("in.noAdapter", { source: input.source }));
  if (receiptId(input.events)) return err(400, c.say("event.receiptId", { prefix: receiptEventPrefix }));
  const hops = callHops(c, input.viaCall);
  return ok({ events: input.events.map((e) => takeEvent(c, input.source, e, input.intents ?? {}, hops)) });
}

/**
 * Whether a source's event takes an id of the space the hub keeps for receipt events (`receiptEventPrefix`; issue 26
 * round 29, F29a-5: a source posted `receipt:deploy-1` first, and a run's `deploy-1` was then dropped as its duplicate).
 */
function receiptId(events: readonly { id: string }[]): boolean {
  return events.some((e) => e.id.startsWith(receiptEventPrefix));
}

/** Records and routes one event of `source`; its hops are at least `minHops` (a tool call's run's + 1). */
function takeEvent(c: Ctx, source: string, e: InputOf<"event">["event"], intents: IntentTable, minHops = 0): EventAccepted {
  const dup = findEvent(c, source, e.id);
  if (dup) return { event: dup.id, duplicate: true, routed: dup.routed, paused: dup.paused };
  const ev = recordEvent(c, {
    source, sid: e.id, type: e.type, subject: e.subject ?? null, summary: e.summary ?? null, detail: e.detail ?? null,
    link: e.link ?? null, hops: Math.max(e.hops ?? 0, minHops), internal: null,
  });
  // Posted through a run's tool call (minHops > 0): the run's event, as a receipt's (lanes.ts routeEvent).
  const routed = routeEvent(c, ev, (deep) => tooDeepNotice(c, deep), intents, (rule) => mayStart(c, rule), minHops > 0);
  return { event: ev.id, duplicate: false, routed: routed.routed, paused: routed.paused };
}

function getWork(c: Ctx, input: InputOf<"work">): Reply<WorkAnswer> {
  const who = authorize(c, input.keyHash, ["worker"]);
  if (isReply(who)) return who;
  const out = work(c, who.name, input.claim, input.running, input.capacity);
  return { status: 200, body: out, park: out.job === null && out.cancel.length === 0 };
}

function runFor(c: Ctx, id: number): RunRow | Refusal {
  const run = c.tx.get("runs", id);
  return run ?? err(404, c.say("notFound.run", { id }));
}

function runStarted(c: Ctx, input: InputOf<"started">): Reply<Ok> {
  const run = tokenRun(c, input.run, input.token);
  if (isReply(run)) return run;
  if (!stateIn(runHeldStates, run.state)) return err(409, c.say("result.ended"));
  started(c, run, input.session, input.link);
  return done();
}

function runResult(c: Ctx, input: InputOf<"result">): Reply<ResultAnswer> {
  const run = tokenRun(c, input.run, input.token);
  if (isReply(run)) return run;
  const prior = run.results[String(run.attempt)];
  if (prior) return prior.hash === input.hash ? ok(prior.response) : err(409, c.say("result.conflict"));
  if (!stateIn(runHeldStates, run.state)) return err(409, c.say("result.ended"));
  const attempt = run.attempt;
  const rejected = applyResult(c, run, input.result, input.intents ?? {});
  const response = { rejected };
  const after = c.tx.get("runs", run.id);
  assert(after, "result-run-exists");
  after.results[String(attempt)] = { hash: input.hash, response };
  c.tx.put("runs", after.id, after);
  const rule = c.rule(run.rule);
  if (rule) countUsage(c, rule, input.result.usage); // last: a budget pause is a fact of its own after the result
  return ok(response);
}

/** The run of a run-token input, its token checked: none → 401 (as for keys), no run → 404, not its token → 403. */
function tokenRun(c: Ctx, run: number, token: string): RunRow | Refusal {
  if (token === "") return err(401, c.say("auth.missing"));
  const row = runFor(c, run);
  if (isReply(row)) return row;
  return tokenValid(c, row, token) ? row : err(403, c.say("auth.token"));
}

/**
 * PUT /v1/runs/:id/artifacts/:file (issue 18): a file a run's workflow wrote, kept while the run goes on (the states a
 * result is taken in; 409 once it ended), at most `artifactMaxBytes` (400 naming `text`) and `artifactsPerRunMax`
 * files a run (409; the same file again replaces it and is always taken).
 */
function runArtifact(c: Ctx, input: InputOf<"artifact">): Reply<ArtifactStored> {
  const run = tokenRun(c, input.run, input.token);
  if (isReply(run)) return run;
  if (!stateIn(runHeldStates, run.state)) return err(409, c.say("result.ended"));
  const bytes = utf8Bytes(input.text);
  if (bytes > artifactMaxBytes) return err(400, c.say("artifact.tooLarge", { limit: artifactMaxBytes }));
  const key = artifactKey(run.id, input.file);
  if (!c.tx.get("artifacts", key) && c.view.artifactsOfRun(run.id) >= artifactsPerRunMax) {
    return err(409, c.say("artifact.tooMany", { run: run.id, limit: artifactsPerRunMax }));
  }
  c.tx.put("artifacts", key, { run: run.id, file: input.file, text: input.text, bytes, at: c.now });
  return ok({ run: run.id, file: input.file, bytes, path: artifactPath(run.id, input.file) });
}

function runToolCall(c: Ctx, input: InputOf<"toolCall">): Reply<ToolCallDecision> {
  const run = tokenRun(c, input.run, input.token);
  return isReply(run) ? run : agentToolCall(c, run, input.body, input.plugin);
}

/** An outcome reported with a run's token: only for a call of that run (another run's call is not found). */
function runToolOutcome(c: Ctx, input: InputOf<"toolOutcome">): Reply<Ok> {
  const run = tokenRun(c, input.run, input.token);
  if (isReply(run)) return run;
  const call = c.tx.get("calls", input.call);
  return call && call.run === run.id ? toolOutcome(c, call, input.body) : err(404, c.say("tools.calls.notFound", { id: input.call }));
}

function runCancel(c: Ctx, input: InputOf<"cancel">): Reply<CancelAnswer> {
  const who = authorize(c, input.keyHash, ["owner"]);
  if (isReply(who)) return who;
  const run = runFor(c, input.run);
  if (isReply(run)) return run;
  if (stateIn(runEndStates, run.state)) return err(409, c.say("run.notCancellable"));
  const changed = cancelRun(c, run);
  const after = c.tx.get("runs", run.id);
  assert(after, "cancelled-run-exists");
  return ok({ ok: true, changed, state: after.state });
}

function loadRules(c: Ctx, input: InputOf<"rules">): Reply<RulesAnswer> {
  const errCard = openAlert(c, systemCardKey.rulesError());
  if (errCard) closeCard(c, errCard.id, c.msg("result.notNeeded"));
  const current = c.tx.get("meta", "rules");
  if (current?.hash === input.hash) return ok({ ok: true, changed: false, version: c.rulesVersion });
  const version = c.rulesVersion + 1;
  c.tx.put("meta", "rules", { version, hash: input.hash, rules: input.rules, at: c.now });
  c.tx.put("meta", "rulesVersion", { version });
  // From here on this decision works with the new rules.
  c.rules = input.rules;
  cancelOrphans(c, new Set(input.rules.rules.map((r) => r.name)));
  scheduleCrons(c, c.now);
  c.wake.workers = true;
  return ok({ ok: true, changed: true, version });
}

function rulesError(c: Ctx, input: InputOf<"rulesError">): Reply<RulesAnswer> {
  const title: MessageId = input.missing ? "card.rulesMissing.title" : "card.rulesError.title";
  const open = openAlert(c, systemCardKey.rulesError());
  if (open && open.text === input.error) return ok({ ok: true, changed: false });
  if (open) closeCard(c, open.id, c.msg("result.notNeeded"));
  createCard(c, { kind: "notice", key: systemCardKey.rulesError(), title: c.worded(title), text: input.error, rule: null, lane: "", run: null, system: "rulesError" });
  return ok({ ok: true, changed: true });
}

function keyNew(c: Ctx, input: InputOf<"keyNew">): Reply<Ok> {
  if (!input.local) {
    const who = authorize(c, input.keyHash, ["owner"]);
    if (isReply(who)) return who;
  }
  // Whoever held a key for "schedule" or "elsewhere" could post events that read as the hub's own.
  if (input.keyKind === "source" && reservedSources.includes(input.name)) return err(400, c.say("key.reserved", { name: input.name }));
  for (const hash of c.view.keysNamed(input.keyKind, input.name)) c.tx.del("keys", hash);
  c.tx.put("keys", input.newHash, { kind: input.keyKind, name: input.name, at: c.now });
  return done();
}

function keyRemove(c: Ctx, input: InputOf<"keyRemove">): Reply<Changed> {
  if (!input.local) {
    const who = authorize(c, input.keyHash, ["owner"]);
    if (isReply(who)) return who;
  }
  const hits = c.view.keysNamed(input.keyKind, input.name);
  for (const hash of hits) c.tx.del("keys", hash);
  return ok({ ok: true, changed: hits.length > 0 });
}

/** The earliest deadline of the due table (ms), or null. The shell arms its single timer for it. */
export function nextDeadline(view: Projection): number | null {
  return view.nextDueAt();
}

/** The keys of the due table's deadlines at or before `now` (ms), earliest first, at most `limit`: one `tick` each. */
export function dueKeys(view: Projection, now: number, limit: number): string[] {
  return view.dueKeys(now, limit);
}

/**
 * The earliest time after `afterMs` at which a leased or retried card becomes offerable again (ms), or null.
 * The shell wakes channels at each such time once: an offer that lies in the past waits for its channel's next poll.
 */
export function nextOfferAt(view: Projection, afterMs = -Infinity): number | null {
  return view.nextOfferAt(afterMs);
}

