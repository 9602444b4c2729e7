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
 *   runs · control · tell     steps by input kind: claims, results, retries, stops; cron, pause, resume, run now; tell
 *   notices · budget · rate · tool-calls   alerts several steps raise (hops); budgets: spend, pause, the budget card
 *                             and its answer; rules starting runs too fast: pause and ask; tool calls (a run's end
 *                             ends its calls that will never report)
 *   cards · schedule          cards: create, deliver, answer, close; cron schedules and the end of a pause
 *   lanes                     events into lanes into queued runs
 *   context                   Ctx: the decision's overlay, time, environment, rules, ids, totals, due table
 *   view                      Projection (typed reads; the SQLite View answers them) and the Tx overlay
 *   evolve                    the projection's SQL schema and its only writer
 *   tables · run-state · system-cards   table registry (row and key types, keys); run state moves; hub alert keys
 *   types                     rows, inputs, decisions, the unions (RunState, RunOutcome, DueKind, SystemKind)
 *   rules                     rules.json parsed and checked
 *   limits · own · text · names · cron · period · credentials · assert · intents · devices · states   leaves (intents:
 *                             declarative intents matched; devices: the device paths a plugin sandbox may bind; states:
 *                             the shared enumerations and the named run-state groups)
 */
import { Ctx } from "./context.js";
import type { Projection } from "./view.js";
import type { Caller, CardRow, Decision, DueRow, Env, Input, KeyKind, RunRow } from "./types.js";
import { answerCard, closeCard, createCard, delivered, failed, nextCard, channelSeen, openAlert, ownerCard } from "./cards.js";
import { findEvent, recordEvent, routeEvent } from "./lanes.js";
import { applyResult, cancelOrphans, cancelRun, leaseExpired, retryDue, started, timerDue, tokenValid, work } from "./runs.js";
import { tooDeepNotice } from "./notices.js";
import { answerRateCard, mayStart } from "./rate.js";
import { tell } from "./tell.js";
import { cardLinkToken, safeEqual } from "./credentials.js";
import { artifactMaxBytes, artifactsPerRunMax, cardLinkValidMs, deadlineFailuresBeforeCard, deadlineRetryFirstMs, deadlineRetryMaxMs } from "./limits.js";
import { assert } from "./assert.js";
import { runEndStates, runHeldStates, stateIn } from "./states.js";
import { answerBudgetCard, countUsage } from "./budget.js";
import { cronDue, pauseDue, pauseRule, resumeRule, runNow } from "./control.js";
import { scheduleCrons } from "./schedule.js";
import { artifactKey, outboxKey } from "./tables.js";
import { artifactPath, utf8Bytes } from "./text.js";
import { systemCardKey } from "./system-cards.js";
import type { MessageId } from "../i18n/messages.js";
import { own } from "./own.js";
import type { IntentTable } from "./intents.js";
import { pluginSource, reservedSources } from "./rules.js";
import { agentToolCall, answerToolCard, ownerToolCall, toolCallback, toolLostDue, toolOutcome, toolTaskDue, toolWaitDue } from "./tool-calls.js";

type Reply = { status: number; body: unknown; park?: boolean };

const ok = (body: unknown = { ok: true }): Reply => ({ status: 200, body });
const err = (status: number, error: string): Reply => ({ status, body: { error } });

/** Looks up who holds a key, by the SHA-256 of the bearer key. */
export function callerOf(view: Projection, keyHash: string | null): Caller | undefined {
  if (!keyHash) return undefined;
  const k = view.get("keys", keyHash);
  return k ? { kind: k.kind, name: k.name } : undefined;
}

/** A kind of key as refusals name it, in the hub's language. */
const kindName = (c: Ctx, kind: KeyKind) => c.msg(`key.kindName.${kind}`);

/**
 * The permission table (protocol.md 谁能做什么): the caller must hold one of `kinds`.
 * @returns the caller, or the 401/403 reply.
 */
export function authorize(c: Ctx, keyHash: string | null, kinds: KeyKind[]): Caller | Reply {
  if (!keyHash) return err(401, c.msg("auth.missing"));
  const caller = callerOf(c.view, keyHash);
  if (!caller) return err(401, c.msg("auth.unknown"));
  if (!kinds.includes(caller.kind)) {
    return err(403, c.msg("auth.kind", { actual: kindName(c, caller.kind), expected: kinds.map((k) => kindName(c, k)).join("/") }));
  }
  return caller;
}

const isReply = (x: unknown): x is Reply => typeof x === "object" && x !== null && "status" in x;

/**
 * Decides one input. Pure: the same view, input, time and environment give the same decision.
 * @param now milliseconds since the Unix epoch (UTC), from the shell's clock.
 * @returns the HTTP status and body, the facts to commit (empty when nothing changed), and `park` for long polls.
 */
export function decide(view: Projection, input: Input, now: number, env: Env): Decision {
  const c = new Ctx(view, now, env);
  const reply = step(c, input);
  // No refusal writes before it refuses; this keeps a refusal from ever committing a change should one start to.
  // Stryker disable next-line ConditionalExpression,EqualityOperator: no decision writes and then refuses (see above)
  const facts = reply.status < 400 ? c.tx.facts().map((f) => ({ kind: f.kind ?? factKind(input, reply), changes: f.changes })) : [];
  return {
    status: reply.status,
    body: reply.body,
    facts,
    park: reply.park,
    wake: { workers: c.wake.workers, channels: [...c.wake.channels] },
  };
}

function factKind(input: Input, reply: Reply): string {
  if (input.kind === "pause") return "pauseRule";
  if (input.kind === "resume") return "resumeRule";
  if (input.kind === "work") return (reply.body as { job: unknown }).job ? "claim" : "heartbeat";
  if (input.kind === "cardsNext") return (reply.body as { card: unknown }).card ? "offer" : "heartbeat";
  return input.kind;
}

function step(c: Ctx, input: Input): Reply {
  switch (input.kind) {
    case "event": return postEvent(c, input);
    case "eventsIn": return eventsIn(c, input);
    case "work": return getWork(c, input);
    case "started": return runStarted(c, input);
    case "result": return runResult(c, input);
    case "cardsNext": return cardsNext(c, input);
    case "delivered": return cardDelivered(c, input);
    case "failed": return cardFailed(c, input);
    case "answer": return cardAnswer(c, input);
    case "linkAnswer": return linkAnswer(c, input);
    case "resolve": return cardResolve(c, input);
    case "cancel": return runCancel(c, input);
    case "rules": return loadRules(c, input);
    case "rulesError": return rulesError(c, input);
    case "keyNew": return keyNew(c, input);
    case "keyRemove": return keyRemove(c, input);
    case "pause": return control(c, input.keyHash, (who) => pauseRule(c, input.rule, who.name, input.reason, input.until === null ? null : Date.parse(input.until)));
    case "resume": return control(c, input.keyHash, () => resumeRule(c, input.rule));
    case "runNow": return control(c, input.keyHash, (who) => runNow(c, input.rule, who.name, input.subject, input.reason));
    case "tell": {
      const who = authorize(c, input.keyHash, ["source", "worker"]);
      return isReply(who) ? who : tell(c, who, input.body);
    }
    case "pluginEvent": return control(c, input.keyHash, () => ok(takeEvent(c, pluginSource(input.plugin), input.event, input.intents ?? {})));
    case "artifact": return runArtifact(c, input);
    case "toolCall": return runToolCall(c, input);
    case "ownerToolCall": return control(c, input.keyHash, (who) => ownerToolCall(c, who.name, input.body));
    case "toolOutcome": return runToolOutcome(c, input);
    case "ownerToolOutcome": return control(c, input.keyHash, () => {
      const call = c.tx.get("calls", input.call);
      return call && call.caller === "owner" ? toolOutcome(c, call, input.body) : err(404, c.msg("tools.calls.notFound", { id: input.call }));
    });
    case "toolCallback": return toolCallback(c, input.task, input.body);
    case "tick": return tick(c, input.due);
    case "dueFailed": return dueFailed(c, input.due, input.error);
  }
}

function control(c: Ctx, keyHash: string | null, f: (who: Caller) => Reply): Reply {
  const who = authorize(c, keyHash, ["owner"]);
  return isReply(who) ? who : f(who);
}

function postEvent(c: Ctx, input: Extract<Input, { kind: "event" }>): Reply {
  const who = authorize(c, input.keyHash, ["source"]);
  if (isReply(who)) return who;
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
function eventsIn(c: Ctx, input: Extract<Input, { kind: "eventsIn" }>): Reply {
  if (!own(c.rules.sources, input.source)?.adapter) return err(404, c.msg("in.noAdapter", { source: input.source }));
  const hops = callHops(c, input.viaCall);
  return ok({ events: input.events.map((e) => takeEvent(c, input.source, e, input.intents ?? {}, hops)) });
}

/** Records and routes one event of `source`; its hops are at least `minHops` (a tool call's run's + 1). */
function takeEvent(c: Ctx, source: string, e: Extract<Input, { kind: "event" }>["event"], intents: IntentTable, minHops = 0) {
  const dup = findEvent(c, source, e.id);
  if (dup) return { event: dup.id, duplicate: true, routed: dup.routed, paused: dup.paused };
  const ev = recordEvent(c, {
    source, sid: e.id, type: e.type, subject: e.subject ?? null, summary: e.summary ?? null, detail: e.detail ?? null,
    link: e.link ?? null, hops: Math.max(e.hops ?? 0, minHops), internal: null,
  });
  const routed = routeEvent(c, ev, (deep) => tooDeepNotice(c, deep), intents, (rule) => mayStart(c, rule));
  return { event: ev.id, duplicate: false, routed: routed.routed, paused: routed.paused };
}

function getWork(c: Ctx, input: Extract<Input, { kind: "work" }>): Reply {
  const who = authorize(c, input.keyHash, ["worker"]);
  if (isReply(who)) return who;
  const out = work(c, who.name, input.claim, input.running, input.capacity);
  return { status: 200, body: out, park: out.job === null && out.cancel.length === 0 };
}

function runFor(c: Ctx, id: number): RunRow | Reply {
  const run = c.tx.get("runs", id);
  return run ?? err(404, c.msg("notFound.run", { id }));
}

function runStarted(c: Ctx, input: Extract<Input, { kind: "started" }>): Reply {
  const run = tokenRun(c, input.run, input.token);
  if (isReply(run)) return run;
  if (!stateIn(runHeldStates, run.state)) return err(409, c.msg("result.ended"));
  started(c, run, input.session, input.link);
  return ok();
}

function runResult(c: Ctx, input: Extract<Input, { kind: "result" }>): Reply {
  const run = tokenRun(c, input.run, input.token);
  if (isReply(run)) return run;
  const prior = run.results[String(run.attempt)];
  if (prior) return prior.hash === input.hash ? ok(prior.response) : err(409, c.msg("result.conflict"));
  if (!stateIn(runHeldStates, run.state)) return err(409, c.msg("result.ended"));
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
function tokenRun(c: Ctx, run: number, token: string): RunRow | Reply {
  if (token === "") return err(401, c.msg("auth.missing"));
  const row = runFor(c, run);
  if (isReply(row)) return row;
  return tokenValid(c, row, token) ? row : err(403, c.msg("auth.token"));
}

/**
 * PUT /v1/runs/:id/artifacts/:file (issue 18): a file a run's workflow wrote, kept while the run goes on (the states a
 * result is taken in; 409 once it ended), at most `artifactMaxBytes` (400 naming `text`) and `artifactsPerRunMax`
 * files a run (409; the same file again replaces it and is always taken).
 */
function runArtifact(c: Ctx, input: Extract<Input, { kind: "artifact" }>): Reply {
  const run = tokenRun(c, input.run, input.token);
  if (isReply(run)) return run;
  if (!stateIn(runHeldStates, run.state)) return err(409, c.msg("result.ended"));
  const bytes = utf8Bytes(input.text);
  if (bytes > artifactMaxBytes) return err(400, c.msg("artifact.tooLarge", { limit: artifactMaxBytes }));
  const key = artifactKey(run.id, input.file);
  if (!c.tx.get("artifacts", key) && c.view.artifactsOfRun(run.id) >= artifactsPerRunMax) {
    return err(409, c.msg("artifact.tooMany", { run: run.id, limit: artifactsPerRunMax }));
  }
  c.tx.put("artifacts", key, { run: run.id, file: input.file, text: input.text, bytes, at: c.now });
  return ok({ run: run.id, file: input.file, bytes, path: artifactPath(run.id, input.file) });
}

function runToolCall(c: Ctx, input: Extract<Input, { kind: "toolCall" }>): Reply {
  const run = tokenRun(c, input.run, input.token);
  return isReply(run) ? run : agentToolCall(c, run, input.body, input.plugin);
}

/** An outcome reported with a run's token: only for a call of that run (another run's call is not found). */
function runToolOutcome(c: Ctx, input: Extract<Input, { kind: "toolOutcome" }>): Reply {
  const run = tokenRun(c, input.run, input.token);
  if (isReply(run)) return run;
  const call = c.tx.get("calls", input.call);
  return call && call.run === run.id ? toolOutcome(c, call, input.body) : err(404, c.msg("tools.calls.notFound", { id: input.call }));
}

function runCancel(c: Ctx, input: Extract<Input, { kind: "cancel" }>): Reply {
  const who = authorize(c, input.keyHash, ["owner"]);
  if (isReply(who)) return who;
  const run = runFor(c, input.run);
  if (isReply(run)) return run;
  if (stateIn(runEndStates, run.state)) return err(409, c.msg("run.notCancellable"));
  const changed = cancelRun(c, run);
  const after = c.tx.get("runs", run.id);
  assert(after, "cancelled-run-exists");
  return ok({ ok: true, changed, state: after.state });
}

function cardsNext(c: Ctx, input: Extract<Input, { kind: "cardsNext" }>): Reply {
  const who = authorize(c, input.keyHash, ["channel"]);
  if (isReply(who)) return who;
  channelSeen(c, who.name);
  const card = nextCard(c, who.name);
  return { status: 200, body: { card }, park: card === null };
}

function cardFor(c: Ctx, id: number): CardRow | Reply {
  return c.tx.get("cards", id) ?? err(404, c.msg("notFound.card", { id }));
}

function channelCardFor(c: Ctx, keyHash: string | null, id: number): { who: Caller; card: CardRow } | Reply {
  const who = authorize(c, keyHash, ["channel"]);
  if (isReply(who)) return who;
  const card = cardFor(c, id);
  if (isReply(card)) return card;
  if (!card.channels.includes(who.name)) return err(403, c.msg("card.notForChannel"));
  return { who, card };
}

function cardDelivered(c: Ctx, input: Extract<Input, { kind: "delivered" }>): Reply {
  const got = channelCardFor(c, input.keyHash, input.card);
  if (isReply(got)) return got;
  if (input.version > got.card.version) return err(400, c.msg("card.version", { version: got.card.version }));
  delivered(c, got.who.name, got.card, input.version, input.ref);
  return ok();
}

function cardFailed(c: Ctx, input: Extract<Input, { kind: "failed" }>): Reply {
  const got = channelCardFor(c, input.keyHash, input.card);
  if (isReply(got)) return got;
  if (input.version > got.card.version) return err(400, c.msg("card.version", { version: got.card.version }));
  failed(c, got.who.name, got.card, input.error);
  return ok();
}

/** The card a link names, when its token is right (404) and it has not expired (410). */
function linkedCard(c: Ctx, id: number, token: string): CardRow | Reply {
  const card = c.tx.get("cards", id);
  if (!card || !safeEqual(token, cardLinkToken(c.env.master, card.id, card.at))) return err(404, c.msg("link.unknown"));
  if (c.now > card.at + cardLinkValidMs) return err(410, c.msg("link.expired"));
  return card;
}

/** An answer from a card's link page: the link is the permission (protocol.md 谁能做什么: 带权限的卡片链接). */
function linkAnswer(c: Ctx, input: Extract<Input, { kind: "linkAnswer" }>): Reply {
  const card = linkedCard(c, input.card, input.token);
  return isReply(card) ? card : answerChecked(c, card, input.choice, input.text, "link");
}

function cardAnswer(c: Ctx, input: Extract<Input, { kind: "answer" }>): Reply {
  const who = authorize(c, input.keyHash, ["channel", "owner"]);
  if (isReply(who)) return who;
  const card = cardFor(c, input.card);
  if (isReply(card)) return card;
  let by = who.name;
  if (who.kind === "channel") {
    if (!card.channels.includes(who.name)) return err(403, c.msg("card.notForChannel"));
    if (input.by === null) return err(400, c.msg("card.byRequired"));
    if (input.ref === null) return err(400, c.msg("card.refRequired"));
    const answerers = own(c.rules.channels, who.name)?.answerers ?? null;
    if (answerers !== null && !answerers.includes(input.by)) return err(403, c.msg("card.byNotAnswerer", { by: input.by }));
    const ref = own(card.deliveries, who.name)?.ref ?? null;
    if (ref === null) return err(409, c.msg("card.notDelivered"));
    if (ref !== input.ref) return err(409, c.msg("card.refMismatch"));
    by = input.by;
  }
  return answerChecked(c, card, input.choice, input.text, by);
}

/** The checks every answer passes: first one wins, a valid choice, fyi never. */
function answerChecked(c: Ctx, card: CardRow, choice: number | null, text: string | null, by: string): Reply {
  const input = { choice, text };
  if (card.fyi) return err(409, c.msg("card.fyi"));
  if (card.state === "answered") return err(409, c.msg("card.answered"));
  if (card.state === "closed") return err(409, c.msg(card.choice !== null || card.answer !== null ? "card.answered" : "card.closed"));
  if (card.kind === "ask") {
    if (input.choice === null && input.text === null) return err(400, c.msg("card.choiceOrText"));
    if (input.choice !== null && input.choice >= card.options.length) return err(400, c.msg("card.choiceRange", { max: card.options.length - 1 }));
  } else if (input.choice !== null && input.choice !== 0) {
    return err(400, c.msg("card.noticeChoice"));
  }
  if (card.system === "budget") answerBudgetCard(c, card, input.choice, by);
  else if (card.system === "tooFast") answerRateCard(c, card, input.choice, by);
  else if (card.system === "toolApproval") {
    const refused = answerToolCard(c, card, input.choice, by);
    if (refused) return refused;
  } else answerCard(c, card, input.choice, input.text, by);
  const after = c.tx.get("cards", card.id);
  assert(after, "answered-card-exists");
  return ok({ ok: true, card: ownerCard(c, after) });
}

function cardResolve(c: Ctx, input: Extract<Input, { kind: "resolve" }>): Reply {
  const who = authorize(c, input.keyHash, ["owner"]);
  if (isReply(who)) return who;
  const card = cardFor(c, input.card);
  if (isReply(card)) return card;
  const result = input.reason ? c.msg("result.notNeededWhy", { reason: input.reason }) : c.msg("result.notNeeded");
  const changed = closeCard(c, card.id, result, null, who.name);
  return ok({ ok: true, changed });
}

function loadRules(c: Ctx, input: Extract<Input, { kind: "rules" }>): Reply {
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

function rulesError(c: Ctx, input: Extract<Input, { kind: "rulesError" }>): Reply {
  const title: MessageId = input.missing ? "card.rulesMissing.title" : "card.rulesError.title";
  const open = openAlert(c, systemCardKey.rulesError());
  if (open && open.text === input.error) return ok({ ok: true, changed: false });
  if (open) closeCard(c, open.id, c.msg("result.notNeeded"));
  createCard(c, { kind: "notice", key: systemCardKey.rulesError(), title: c.msg(title), text: input.error, rule: null, lane: "", run: null, system: "rulesError" });
  return ok({ ok: true, changed: true });
}

function keyNew(c: Ctx, input: Extract<Input, { kind: "keyNew" }>): Reply {
  if (!input.local) {
    const who = authorize(c, input.keyHash, ["owner"]);
    if (isReply(who)) return who;
  }
  // Whoever held a key for "schedule" or "elsewhere" could post events that read as the hub's own.
  if (input.keyKind === "source" && reservedSources.includes(input.name)) return err(400, c.msg("key.reserved", { name: input.name }));
  for (const hash of c.view.keysNamed(input.keyKind, input.name)) c.tx.del("keys", hash);
  c.tx.put("keys", input.newHash, { kind: input.keyKind, name: input.name, at: c.now });
  return ok({ ok: true });
}

function keyRemove(c: Ctx, input: Extract<Input, { kind: "keyRemove" }>): Reply {
  if (!input.local) {
    const who = authorize(c, input.keyHash, ["owner"]);
    if (isReply(who)) return who;
  }
  const hits = c.view.keysNamed(input.keyKind, input.name);
  for (const hash of hits) c.tx.del("keys", hash);
  return ok({ ok: true, changed: hits.length > 0 });
}

/**
 * A timer woke the shell for one deadline of the due table (protocol.md 结构与实测). The shell sends one `tick` per
 * due row, so each is decided alone: one whose handler throws (500) holds up no other and is reported back as
 * `dueFailed`. A deadline that is gone (handled, moved or removed by an earlier input) or not due yet changes nothing.
 * One that succeeds closes the card its earlier failures made.
 */
function tick(c: Ctx, key: string): Reply {
  const row = c.tx.get("due", key);
  if (!row || row.at > c.now) return ok({ ok: true });
  c.tx.del("due", key);
  switch (row.kind) {
    case "retry": retryDue(c, Number(row.ref)); break;
    case "lease": leaseExpired(c, Number(row.ref)); break;
    case "later": timerDue(c, row.ref); break;
    case "offline": workerOffline(c, row.ref); break;
    case "fyiExpire": fyiExpire(c, Number(row.ref)); break;
    case "cron": cronDue(c, row.ref, row.failing?.dueAt ?? row.at); break;
    case "pause": pauseDue(c, row.ref); break;
    case "toolWait": toolWaitDue(c, Number(row.ref)); break;
    case "toolTask": toolTaskDue(c, Number(row.ref)); break;
    case "toolLost": toolLostDue(c, Number(row.ref)); break;
    // A row of a kind this kernel does not know (DueKind): a damaged database.
    default: assert(false, "due-kind-known");
  }
  const card = openAlert(c, systemCardKey.deadlineFailing(key));
  if (card) closeCard(c, card.id, c.msg("result.notNeeded"));
  return ok({ ok: true });
}

/** A deadline as a person reads it: its kind and what it names, the NUL-joined parts of a `later` key shown with ` · `. */
const deadlineLabel = (row: DueRow) => `${row.kind} ${row.ref.split("\u0000").filter((part) => part !== "").join(" · ")}`;

/** Wait before the next try of a deadline after its n-th failure in a row: 5 s doubling, at most 1 h (ms). */
export function deadlineRetryDelayMs(failures: number): number {
  return Math.min(deadlineRetryFirstMs * 2 ** (failures - 1), deadlineRetryMaxMs);
}

/**
 * The shell reports that the `tick` of deadline `key` failed with `error` (protocol.md 失败时会怎样): it is tried
 * again after a growing wait, and at the 3rd failure in a row the owner gets a card naming it. Nothing changes when
 * the deadline is gone or no longer due (it was handled, moved or set anew since).
 */
function dueFailed(c: Ctx, key: string, error: string): Reply {
  const row = c.tx.get("due", key);
  if (!row || row.at > c.now) return ok({ ok: true, changed: false });
  const failing = { dueAt: row.failing?.dueAt ?? row.at, failures: (row.failing?.failures ?? 0) + 1, error };
  c.tx.put("due", key, { ...row, at: c.now + deadlineRetryDelayMs(failing.failures), failing } satisfies DueRow);
  if (failing.failures === deadlineFailuresBeforeCard) {
    createCard(c, {
      kind: "notice", key: systemCardKey.deadlineFailing(key), title: c.msg("card.deadlineFailing.title", { due: deadlineLabel(row), n: failing.failures }),
      text: c.msg("card.deadlineFailing.text", { at: c.iso(failing.dueAt), error }), rule: null, lane: "", run: null, system: "deadlineFailing",
    });
  }
  return ok({ ok: true, changed: true });
}

function workerOffline(c: Ctx, name: string): void {
  // The offline deadline is armed only by a recorded heartbeat, which writes the worker's row and closes its
  // offline card: when it comes due, the row is there and no offline card is open.
  const w = c.tx.get("workers", name);
  assert(w?.offlineCard === null, "offline-deadline-names-seen-worker");
  const id = createCard(c, {
    kind: "notice", key: systemCardKey.offline(name), title: c.msg("card.offline.title", { worker: name }), text: c.msg("card.offline.text"),
    rule: null, lane: "", run: null, system: "offline",
  });
  c.tx.put("workers", name, { ...w, offlineCard: id });
}

function fyiExpire(c: Ctx, id: number): void {
  const card = c.tx.get("cards", id);
  if (!card) return;
  for (const ch of card.channels) c.tx.del("outbox", outboxKey(ch, id));
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

