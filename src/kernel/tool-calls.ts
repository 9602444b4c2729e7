/**
 * Tool calls as facts (issue 16; spec tool-plugins.md §5, §8; DESIGN.md "Plugin hosts"): tools run next to the agent
 * (the worker's tool host) or the owner (`plugins invoke`), but the hub decides each call before it runs and records
 * how it ended. Pure, like the rest of the kernel.
 *
 *   refused     → the caller's tool host refused it before asking (`refused` in the body): recorded denied, why
 *                 `refused`, with the host's code and reason; approvals are not consulted.
 *   call        → checks (run going on, calls per run, offered by the run's rule) → approval (rules.ts `approvalOf`:
 *                 exact plugin+tool, plugin, default by the tool's kind — auto, prompt for http until trusted;
 *                 allow_session_keys; disable_model_invocation; first use of a plugin that is not built in and not
 *                 trusted at its manifest digest) → allow | deny | prompt.
 *   prompt      → an ask card "allow once / always allow / deny"; the agent's call is held until `waitUntil`
 *                 (rules.json `approvalWaitSeconds`); then `awaiting_approval` (deadline `toolWait`).
 *   answer      → while held: decides the call itself; after: a one-use grant for the next call of the same tool in
 *                 the same session with the same arguments (their digest: what the owner saw, issue 26 #5), and the
 *                 card wakes the lane like any answer. "Always" trusts the plugin at this digest of its files (issue
 *                 26 #4; the tool host computes it), keeping their list so a later version's card says what changed.
 *   outcome     → ok / error / timeout / oom, or parked (an async task: only the HMAC of its id is kept, with a
 *                 deadline `toolTask`); the callback ends it (ok / error), the deadline with `timeout`. Ended calls
 *                 are counted per quarter hour and plugin (`toolstats`), for `status`.
 */
import { said, type Said, type SaidParam, type Worded } from "../i18n/messages.js";
import type { Ctx } from "./context.js";
import type { CardRow, KnownPlugin, RunRow, ToolCallRow, ToolCallStatus, ToolCallsMeta } from "./types.js";
import { approvalOf, approvalRuleFor, approvalsOf, approvalWaitSecondsOf, ownerSessionKey, starMatch, toolSessionKey } from "./rules.js";
import { answerCard, createCard, saveCard } from "./cards.js";
import { grantKey, toolStatsKey, trustKey } from "./tables.js";
import { toolCallbackKeyHash, toolTaskHash } from "./credentials.js";
import { usageBucketMs } from "./evolve.js";
import { neutralise, relayed } from "./text.js";
import { assert } from "./assert.js";
import { done, ok, refuse as err, type Refusal, type Reply } from "./reply.js";
import { runHeldStates, stateIn } from "./states.js";
import {
  cardTextMaxCodepoints, cardTitleMaxCodepoints, toolCallArgumentsMaxCodepoints, toolCallOutcomeWaitMs, toolCallPreviewMaxCodepoints,
  toolApprovalsOpenPerRunMax, toolCallsPerRunMax, toolCallTimeoutMsDefault, toolCardBindsMax, toolCardFilesMax, toolCardPathMaxCodepoints,
  toolGrantValidMs, toolParkedCallsMax,
} from "./limits.js";
import type { ToolCallBody, ToolOutcomeBody } from "../protocol/schema.js";
import type { Ok, ToolCallDecision, ToolCallResult } from "../protocol/responses.js";

/** The options of a tool call's approval card, by index: allow once, always allow, deny. */
const optionOnce = 0;
export const optionAlways = 1;
const optionDeny = 2;

/** The statuses that end a call, counted in `toolstats` (`parked` ends later, by its callback or deadline). */
const endStatuses: readonly ToolCallStatus[] = ["ok", "error", "timeout", "oom", "denied", "awaiting_approval"];

/** The answer a caller gets about a call: its decision now, with the card, hold or reason that goes with it. */
export function callDecisionOf(c: Ctx, call: ToolCallRow): ToolCallDecision {
  const out: ToolCallDecision = { call: call.id, decision: call.decision, sessionKey: call.sessionKey };
  if (call.card !== null) out.card = call.card;
  if (call.reason !== null) Object.assign(out, { reason: call.reason }, call.reasonText ? { reasonText: call.reasonText } : {});
  if (call.decision === "prompt" && call.waitUntil !== null) out.waitUntil = c.iso(call.waitUntil);
  return out;
}

/**
 * A parked call's end as GET …/result gives it, at time `now` (ms): pending until its callback or deadline; a deadline
 * already passed reads as `timeout` even before the timer recorded it. Null for a call that was never parked.
 */
export function callResultOf(call: ToolCallRow, now: number): ToolCallResult | null {
  if (call.deadline === null) return null;
  if (call.status === "parked") return now >= call.deadline ? { status: "timeout" } : { status: "pending" };
  assert(call.result !== null, "ended-parked-call-has-result");
  return call.result;
}

/** Counts an ended call in its quarter hour's `toolstats` row. */
function countEnd(c: Ctx, call: ToolCallRow): void {
  assert(endStatuses.includes(call.status), "counted-call-ended");
  const bucket = Math.floor(c.now / usageBucketMs) * usageBucketMs;
  const key = toolStatsKey(bucket, call.plugin);
  const row = c.tx.get("toolstats", key) ?? { bucket, plugin: call.plugin, counts: {} };
  row.counts[call.status] = (row.counts[call.status] ?? 0) + 1;
  c.tx.put("toolstats", key, row);
}

/** Ends a call with `status` (now), counts it, and saves it. */
export function endCall(c: Ctx, call: ToolCallRow, status: ToolCallStatus): void {
  call.status = status;
  call.endedAt = c.now;
  countEnd(c, call);
  c.tx.put("calls", call.id, call);
}

/** The parked-calls counter, moved by `delta`. */
export function moveParked(c: Ctx, delta: 1 | -1): void {
  const meta: ToolCallsMeta = c.tx.get("meta", "toolCalls") ?? { parked: 0 };
  meta.parked += delta;
  assert(meta.parked >= 0, "parked-calls-counted");
  c.tx.put("meta", "toolCalls", meta);
}

/** A call body with what the hub decides by: every call but one its caller's tool host already refused. */
type DecidableBody = Required<Omit<ToolCallBody, "refused">>;

/** The fields a call body needs unless it is `refused`, in the order a missing one is named. */
const decidingFields = ["manifestDigest", "builtIn", "disableModelInvocation", "kind"] as const;

/**
 * A call body that is not `refused` as one the hub can decide, or the 400 naming the first field it lacks (nothing
 * is recorded then).
 */
function decidable(c: Ctx, body: ToolCallBody): DecidableBody | Refusal {
  const missing = decidingFields.find((f) => body[f] === undefined);
  return missing === undefined ? (body as DecidableBody) : err(400, c.say("field.required", { field: missing }));
}

/** A call as first recorded, before its decision is filled in. A refused call may lack the plugin's facts. */
function newCall(c: Ctx, run: RunRow | null, by: string, sessionKey: string, body: ToolCallBody): ToolCallRow {
  const plugin = body.tool.slice(0, body.tool.indexOf("."));
  return {
    id: c.nextId("call"), run: run?.id ?? null, caller: run ? "agent" : "owner", by, plugin, tool: body.tool, sessionKey,
    argsDigest: body.argsDigest, manifestDigest: body.manifestDigest ?? "", builtIn: body.builtIn ?? false,
    ...(body.kind !== undefined ? { kind: body.kind } : {}), decision: "deny", why: "default",
    approval: null, reason: null, card: null, waitUntil: null, status: "denied", durationMs: null, at: c.now, endedAt: null,
    deadline: null, result: null, reported: null,
  };
}

/** A call's reason: the hub's words and, written from the catalog, their id and params (issue 27 #2). */
const setReason = (call: ToolCallRow, r: string | Worded) => void Object.assign(call, typeof r === "string" ? { reason: r } : { reason: r.words, reasonText: r.text });

/** Records a denied call with `reason` and answers with it. */
function deny(c: Ctx, call: ToolCallRow, why: ToolCallRow["why"], reason: string | Worded): Reply<ToolCallDecision> {
  call.decision = "deny";
  call.why = why;
  setReason(call, reason);
  endCall(c, call, "denied");
  return ok(callDecisionOf(c, call));
}

/** The deny reason of an approval verdict, in the hub's language. */
function denyReason(c: Ctx, why: ToolCallRow["why"], index: number | null, tool: string): Worded {
  return why === "hidden" ? c.worded("tools.calls.deny.hidden", { tool }) : c.worded("tools.calls.deny.approval", { index: index ?? 0, tool });
}

/**
 * The facts an agent's call is decided by: the hub's own (`known`: built in, kind, hidden, an HTTP tool's reach) over
 * the caller's. Of a plugin the hub does not know, only what cannot loosen the decision is taken from the caller: it is
 * not built in (so its first use asks unless trusted), hidden from models when the caller says so; the caller's kind
 * is kept for the card and the record (with it not built in, no kind lets a call through that would otherwise ask).
 */
function decidedBy(body: DecidableBody, known: KnownPlugin | null): DecidableBody {
  if (!known) return { ...body, builtIn: false };
  const { http, ...rest } = known;
  const { http: _claimed, ...others } = body;
  // Without the caller's `http`: the hub's, or none (DecidableBody types its optional fields as present; they may not be).
  return { ...others, ...rest, ...(http ? { http } : {}) } as DecidableBody;
}

/**
 * POST /v1/runs/:id/tools/calls: an agent run's call (the caller checked the run's token), decided by what the hub
 * knows of the plugin (`known`, see `decidedBy`), never by the caller's `builtIn`, `kind` or `disableModelInvocation`. Refused (409) once the run
 * has ended, (429) past `toolCallsPerRunMax` calls of the run; a body that is not `refused` and lacks a field the
 * decision needs (400); otherwise recorded and decided (see the module's table). A `refused` body (its tool host
 * refused the call before asking: unknown plugin or tool, bad arguments, not offered) is recorded denied, as it is.
 */
export function agentToolCall(c: Ctx, run: RunRow, input: ToolCallBody, known: KnownPlugin | null): Reply<ToolCallDecision> {
  if (!stateIn(runHeldStates, run.state)) return err(409, c.say("tools.calls.runEnded", { run: run.id }));
  if (c.view.toolCallsOfRun(run.id) >= toolCallsPerRunMax) return err(429, c.say("tools.calls.tooMany", { run: run.id, limit: toolCallsPerRunMax }));
  const sessionKey = run.job?.sessionKey ?? toolSessionKey(run.rule, run.lane);
  if (input.refused) return refused(c, newCall(c, run, run.agent ?? "", sessionKey, input), input.refused);
  const claimed = decidable(c, input);
  if ("status" in claimed) return claimed;
  const body = decidedBy(claimed, known);
  const call = newCall(c, run, run.agent ?? "", sessionKey, body);
  if (!(run.job?.tools ?? []).some((p) => starMatch(p, body.tool))) {
    return deny(c, call, "notOffered", c.worded("tools.calls.deny.notOffered", { rule: run.rule, tool: body.tool }));
  }
  // An HTTP tool that sends a credential to a URL the agent chooses: denied unless the owner said so (issue 26 #11).
  const http = body.http;
  if (http?.authRef && http.anyUrl && approvalRuleFor(approvalsOf(c.rules), call.plugin, body.tool)?.rule.credential_any_url !== true) {
    return deny(c, call, "credentialAnyUrl", c.worded("tools.calls.deny.credentialAnyUrl", { tool: body.tool, ref: http.authRef }));
  }
  const verdict = approvalOf(approvalsOf(c.rules), {
    plugin: call.plugin, tool: body.tool, caller: "agent", sessionKey, disableModelInvocation: body.disableModelInvocation,
    builtin: body.builtIn, trusted: c.tx.get("trust", trustKey(call.plugin, body.manifestDigest)) !== undefined, kind: body.kind,
  });
  call.why = verdict.why;
  call.approval = verdict.index;
  // The owner's answer after an earlier call with these arguments stopped waiting decides this one (issue 26 #5); a "deny" even
  // once the plugin was trusted or made auto since (round 57, F57a-2: "always allow" on another card, then this "deny").
  const gKey = grantKey(sessionKey, body.tool, body.manifestDigest, body.argsDigest);
  const grant = c.tx.get("grants", gKey);
  const fresh = grant && c.now - grant.at < toolGrantValidMs ? grant : undefined;
  const decided = (g: NonNullable<typeof grant>) => {
    c.tx.del("grants", gKey);
    Object.assign(call, { why: "grant", card: g.card });
    return g.decision === "allow" ? allow(c, call) : deny(c, call, "grant", c.worded("tools.calls.deny.answer", { tool: body.tool, card: g.card }));
  };
  if (fresh?.decision === "deny" && verdict.mode !== "deny") return decided(fresh);
  if (verdict.mode === "deny") return deny(c, call, verdict.why, denyReason(c, verdict.why, verdict.index, body.tool));
  if (verdict.mode === "auto") return allow(c, call);
  if (fresh) return decided(fresh);
  if (grant) c.tx.del("grants", gKey);
  // A run asks about a bounded number of calls at once: the owner is not flooded with cards by one looping agent.
  const open = c.view.openApprovalsOfRun(run.id);
  if (open >= toolApprovalsOpenPerRunMax) {
    return deny(c, call, "tooManyAsking", c.worded("tools.calls.deny.tooManyAsking", { run: run.id, open, limit: toolApprovalsOpenPerRunMax }));
  }
  return prompt(c, call, run, body);
}

/** A call its tool host refused before asking (`refused`): denied with the host's code and reason; nothing else looked at. */
function refused(c: Ctx, call: ToolCallRow, r: NonNullable<ToolCallBody["refused"]>): Reply<ToolCallDecision> {
  return deny(c, call, "refused", `${r.code}: ${r.reason}`);
}

/**
 * Records an allowed call: it may run; its outcome comes later — or, when its worker is lost, never: the call then ends
 * `error` at its run's end (`endLostCalls`) or `toolCallOutcomeWaitMs` from now (`toolLostDue`), whichever comes first.
 */
function allow(c: Ctx, call: ToolCallRow): Reply<ToolCallDecision> {
  call.decision = "allow";
  call.status = "allowed";
  c.tx.put("calls", call.id, call);
  c.due("toolLost", call.id, c.now + toolCallOutcomeWaitMs);
  return ok(callDecisionOf(c, call));
}

/** Ends an allowed call that will get no outcome: `error`, with why (worker lost), its deadline taken off. */
function lose(c: Ctx, call: ToolCallRow, reason: Worded): void {
  c.undue("toolLost", call.id);
  setReason(call, reason);
  endCall(c, call, "error");
}

/**
 * Run `run` (an attempt of it) ended: its calls still allowed will never report (the worker that ran them is done with
 * the run, or was lost): each ends `error`, worker lost (issue 26).
 */
export function endLostCalls(c: Ctx, run: number): void {
  for (const seen of c.view.allowedCallsOfRun(run)) {
    const call = c.tx.get("calls", seen.id);
    if (call?.status === "allowed") lose(c, call, c.worded("tools.calls.lost.runEnded", { run }));
  }
}

/** The deadline `toolLost` of an allowed call came and no outcome did: it ends `error`, worker lost. */
export function toolLostDue(c: Ctx, id: number): void {
  const call = c.tx.get("calls", id);
  if (call?.status === "allowed") lose(c, call, c.worded("tools.calls.lost.waited", { minutes: toolCallOutcomeWaitMs / 60_000 }));
}

/**
 * What an approval card says of a call's arguments (issue 26 #5): the preview of their canonical JSON (keys sorted),
 * and, when it is cut, how many characters are not shown and where the whole is (this card's page and the console,
 * when the caller sent it whole) or that it was too long to keep. The shell checked `arguments` against `argsDigest`.
 */
function argumentsOnCard(body: DecidableBody): { preview: string; cut: SaidParam } {
  const keep = toolCallPreviewMaxCodepoints - 1;
  if (body.arguments !== undefined) {
    const chars = [...body.arguments];
    if (chars.length <= toolCallPreviewMaxCodepoints) return { preview: relayed(body.arguments, true, toolCallPreviewMaxCodepoints), cut: "" };
    return { preview: `${neutralise(chars.slice(0, keep).join(""), true)}…`, cut: said("tools.calls.card.line", { line: said("tools.calls.card.cutKept", { count: chars.length - keep }) }) };
  }
  if (body.argsLength !== undefined && body.argsLength > toolCallPreviewMaxCodepoints) {
    return { preview: body.preview, cut: said("tools.calls.card.line", { line: said("tools.calls.card.cutLong", { count: body.argsLength - keep, limit: toolCallArgumentsMaxCodepoints }) }) };
  }
  return { preview: body.preview, cut: "" };
}

/**
 * What an approval card says of the plugin sandbox's binds (issue 26 #3): whether it runs sandboxed, its network when it
 * shares the host's (round 30, F30b-2), each real source → container with its mode, broad ones with a warning, at most `toolCardBindsMax` (then how many more); "" when there are none.
 */
function bindsOnCard(c: Ctx, body: DecidableBody): string {
  // Whether it runs in a sandbox at all, first (issue 26 round 25, F25b-4: a card asking again after `[sandbox]` was
  // removed said only which file changed).
  const network = body.sandboxed && body.sandboxNetwork ? `${c.msg("tools.calls.card.sandboxNetwork", { network: body.sandboxNetwork })}\n` : "";
  const sandbox = body.sandboxed === undefined ? "" : `${c.msg(body.sandboxed ? "tools.calls.card.sandboxed" : "tools.calls.card.unsandboxed")}\n${network}`;
  const binds = body.binds ?? [];
  if (binds.length === 0) return sandbox;
  const path = (p: string) => relayed(p, true, toolCardPathMaxCodepoints);
  const lines = binds.slice(0, toolCardBindsMax).map((b) => {
    const line = c.msg("tools.bind.line", { source: path(b.source), container: path(b.container), mode: c.msg(b.readOnly ? "tools.bind.ro" : "tools.bind.rw") });
    return b.broad ? `${line} ${c.msg(`tools.bind.broad.${b.broad}`)}` : line;
  });
  if (binds.length > toolCardBindsMax) lines.push(c.msg("tools.calls.card.more", { count: binds.length - toolCardBindsMax }));
  return `${sandbox}${c.msg("tools.calls.card.binds", { binds: lines.join("; ") })}\n`;
}

/**
 * What an approval card says of the hub's environment the plugin is given (issue 26 round 10: a sandboxed MCP plugin
 * took serve's GH_TOKEN through `env_passthrough`, and no card said so): the names, at most `toolCardBindsMax`; "" when
 * none.
 */
function envOnCard(c: Ctx, body: DecidableBody): string {
  const names = body.env ?? [];
  if (names.length === 0) return "";
  const shown = names.slice(0, toolCardBindsMax);
  if (names.length > toolCardBindsMax) shown.push(c.msg("tools.calls.card.more", { count: names.length - toolCardBindsMax }));
  return `${c.msg("tools.calls.card.env", { names: shown.join(", ") })}\n`;
}

/**
 * What a first use's (or a kind's) approval card says of the plugin's files (issue 26 #4): when the owner trusted an
 * earlier version ("always allow"), that its files changed since, and which (changed, new, removed; at most
 * `toolCardFilesMax`, then how many more), or that which is not known (either side's list is missing); "" otherwise.
 */
function filesOnCard(c: Ctx, call: ToolCallRow, body: DecidableBody): string {
  if (call.why !== "firstUse" && call.why !== "default") return "";
  const before = c.view.trustOf(call.plugin).find((t) => t.digest !== body.manifestDigest);
  if (!before) return "";
  if (!before.files || !body.files) return `${c.msg("tools.calls.card.changedUnknown", { card: before.card })}\n`;
  const split = (list: string[]) => new Map(list.map((l) => [l.slice(17), l.slice(0, 16)]));
  const was = split(before.files);
  const now = split(body.files);
  const path = (p: string) => relayed(p, true, toolCardPathMaxCodepoints);
  const items: string[] = [];
  for (const [p, h] of now) {
    if (!was.has(p)) items.push(c.msg("tools.calls.card.fileNew", { path: path(p) }));
    else if (was.get(p) !== h) items.push(c.msg("tools.calls.card.fileChanged", { path: path(p) }));
  }
  for (const p of was.keys()) if (!now.has(p)) items.push(c.msg("tools.calls.card.fileRemoved", { path: path(p) }));
  // Same files, another digest: what it takes of the hub's environment changed (tools/env.ts envBoundDigest).
  if (items.length === 0) return `${c.msg("tools.calls.card.changedEnv", { card: before.card })}\n`;
  const shown = items.slice(0, toolCardFilesMax);
  if (items.length > toolCardFilesMax) shown.push(c.msg("tools.calls.card.more", { count: items.length - toolCardFilesMax }));
  return `${c.msg("tools.calls.card.changed", { card: before.card, files: shown.join("; ") })}\n`;
}

/**
 * What an HTTP tool's approval card says of where it sends (issue 26 #11): the declared hosts, that the URL is the
 * agent's choice, that a credential goes with each request and what redaction cannot catch; "" for other kinds.
 */
function reachOnCard(c: Ctx, body: DecidableBody): string {
  const http = body.http;
  if (!http) return "";
  const hosts = http.network.slice(0, toolCardBindsMax).map((h) => relayed(h, true, toolCardPathMaxCodepoints));
  if (http.network.length > toolCardBindsMax) hosts.push(c.msg("tools.calls.card.more", { count: http.network.length - toolCardBindsMax }));
  const lines = [c.msg("tools.calls.card.network", { hosts: hosts.join(", ") || "-" })];
  if (http.anyUrl) lines.push(c.msg("tools.calls.card.anyUrl"));
  if (http.authRef) lines.push(c.msg("tools.calls.card.credential", { ref: relayed(http.authRef, true, toolCardPathMaxCodepoints) }));
  return `${lines.join("\n")}\n`;
}

/** Asks the owner on an ask card and holds the agent's call until `approvalWaitSeconds` from now. */
function prompt(c: Ctx, call: ToolCallRow, run: RunRow, body: DecidableBody): Reply<ToolCallDecision> {
  // The card's words are kept as data too (issue 27 #2), so a client words them in its language; the detail lines
  // (reach, files, binds) stay in the hub's words, cut to fit.
  const why: Said = call.why === "firstUse" ? said("tools.calls.card.firstUse", { plugin: call.plugin, digest: body.manifestDigest })
    : call.why === "default" ? said("tools.calls.card.kind", { plugin: call.plugin, kind: body.kind, digest: body.manifestDigest })
    : said("tools.calls.card.rule", { index: call.approval ?? 0 });
  // Each part is bounded; together they may still pass a card's limit (long binds, hosts and arguments at once): then
  // the detail lines are cut, never the line that says why the card asks (issue 26 round 2), which comes last.
  const head = { run: run.id, session: call.sessionKey, tool: body.tool, kind: body.kind, ...argumentsOnCard(body) };
  let details = `${reachOnCard(c, body)}${envOnCard(c, body)}${filesOnCard(c, call, body)}${bindsOnCard(c, body)}`;
  const room = cardTextMaxCodepoints - [...neutralise(c.worded("tools.calls.card.text", { ...head, why }).words, false)].length;
  const chars = [...details];
  if (chars.length > room) details = `${chars.slice(0, Math.max(0, room - 2)).join("")}…\n`;
  const title = c.worded("tools.calls.card.title", { tool: body.tool });
  const text = c.worded("tools.calls.card.text", { ...head, why: said("tools.calls.card.whyAfter", { details, why }) });
  const card = createCard(c, {
    kind: "ask",
    title: { ...title, words: relayed(title.words, true, cardTitleMaxCodepoints) },
    text: { ...text, words: relayed(text.words, false, cardTextMaxCodepoints) },
    options: [c.worded("tools.calls.option.once"), c.worded("tools.calls.option.always"), c.worded("tools.calls.option.deny")],
    key: `toolCall:${call.id}`, rule: c.rule(run.rule) ?? null, lane: run.lane, run: run.id, system: "toolApproval", toolCall: call.id,
  });
  // The key names this call alone: no other open card can hold it.
  assert(card !== null, "tool-card-created");
  // The whole arguments go with the card (the console and its link page show them), and only with a card.
  if (body.arguments !== undefined) call.args = body.arguments;
  // The files an "always allow" would trust, so that a later version's card can say which changed.
  if ((call.why === "firstUse" || call.why === "default") && body.files !== undefined) call.files = body.files;
  call.decision = "prompt";
  call.card = card;
  call.waitUntil = c.now + approvalWaitSecondsOf(c.rules) * 1000;
  if (call.waitUntil > c.now) {
    call.status = "asking";
    c.tx.put("calls", call.id, call);
    c.due("toolWait", call.id, call.waitUntil);
  } else {
    endCall(c, call, "awaiting_approval");
  }
  return ok(callDecisionOf(c, call));
}

/**
 * POST /v1/tools/calls: the owner's own call (`plugins invoke`), session key `owner:<key name>`. Never prompted: the
 * owner is not asked about their own call; `deny` and `disable_model_invocation` (which hides a tool from agents
 * only) are as for anyone. A `refused` call (see the schema) is recorded denied, as for an agent.
 */
export function ownerToolCall(c: Ctx, keyName: string, input: ToolCallBody): Reply<ToolCallDecision> {
  const sessionKey = ownerSessionKey(keyName);
  if (input.refused) return refused(c, newCall(c, null, keyName, sessionKey, input), input.refused);
  const body = decidable(c, input);
  if ("status" in body) return body;
  const call = newCall(c, null, keyName, sessionKey, body);
  const verdict = approvalOf(approvalsOf(c.rules), {
    plugin: call.plugin, tool: body.tool, caller: "owner", sessionKey, disableModelInvocation: body.disableModelInvocation,
    builtin: body.builtIn, trusted: true, kind: body.kind,
  });
  call.why = verdict.why;
  call.approval = verdict.index;
  // The owner's verdict is never `prompt` (approvalOf turns it into auto).
  assert(verdict.mode !== "prompt", "owner-call-not-prompted");
  return verdict.mode === "deny" ? deny(c, call, verdict.why, denyReason(c, verdict.why, verdict.index, body.tool)) : allow(c, call);
}

/**
 * The owner answered a tool call's approval card (the caller checked the answer is the first and valid). A text
 * answer without a choice is refused: the card takes its options only. While the agent's call is still held, the
 * answer decides that call and closes the card; afterwards it is kept as a one-use grant for the next call of the
 * tool in that session and wakes the lane like any answer. "Always allow" also trusts the plugin at this manifest.
 * @returns the refusal, or null when the answer was recorded.
 */
export function answerToolCard(c: Ctx, card: CardRow, choice: number | null, by: string): Refusal | null {
  if (choice === null) return err(400, c.say("tools.calls.choiceNeeded"));
  const call = card.toolCall === undefined ? undefined : c.tx.get("calls", card.toolCall);
  assert(call, "tool-card-has-call");
  const allowed = choice !== optionDeny;
  if (choice === optionAlways) {
    c.tx.put("trust", trustKey(call.plugin, call.manifestDigest), {
      plugin: call.plugin, digest: call.manifestDigest, card: card.id, by, at: c.now, ...(call.files ? { files: call.files } : {}),
    });
  }
  const run = call.run === null ? undefined : c.tx.get("runs", call.run);
  if (call.status === "asking" && run && stateIn(runHeldStates, run.state)) {
    c.undue("toolWait", call.id);
    call.why = "answer";
    if (allowed) allow(c, call);
    else deny(c, call, "answer", c.worded("tools.calls.deny.answer", { tool: call.tool, card: card.id }));
    const from = card.state;
    card.state = "closed";
    card.choice = choice;
    card.by = by;
    card.answeredAt = c.now;
    card.closedAt = c.now;
    card.result = !allowed ? c.msg("tools.calls.result.denied")
      : choice === optionOnce ? c.msg("tools.calls.result.once") : c.msg("tools.calls.result.always", { plugin: call.plugin });
    saveCard(c, card, from);
    return null;
  }
  if (call.status === "asking") {
    // Its run ended before the hold ran out: the agent was not told to wait any longer.
    c.undue("toolWait", call.id);
    endCall(c, call, "awaiting_approval");
  }
  // After "always allow" of a first use (or of a kind's default prompt) the trust entry lets the next call through; a
  // grant would outlive its need.
  if (!(choice === optionAlways && (call.why === "firstUse" || call.why === "default"))) {
    c.tx.put("grants", grantKey(call.sessionKey, call.tool, call.manifestDigest, call.argsDigest), {
      sessionKey: call.sessionKey, tool: call.tool, digest: call.manifestDigest, argsDigest: call.argsDigest, decision: allowed ? "allow" : "deny", card: card.id, at: c.now,
    });
  }
  answerCard(c, card, choice, null, by);
  return null;
}

/** The deadline `toolWait` of a call came: a call still held is told to end its turn (`awaiting_approval`). */
export function toolWaitDue(c: Ctx, id: number): void {
  const call = c.tx.get("calls", id);
  if (call?.status === "asking") endCall(c, call, "awaiting_approval");
}

/**
 * POST …/tools/calls/:call/outcome: how an allowed call ended. The same report again is answered alike and changes
 * nothing; another one after the first is refused (409). `parked` keeps only the HMAC of the task id (the callback's
 * credential), with the deadline `timeoutMs` (default `toolCallTimeoutMsDefault`) from now.
 */
export function toolOutcome(c: Ctx, call: ToolCallRow, body: ToolOutcomeBody): Reply<Ok> {
  if (body.status === "parked" && body.taskId === undefined) return err(400, c.say("tools.calls.taskIdNeeded"));
  if (body.status !== "parked" && (body.taskId !== undefined || body.callbackKey !== undefined)) return err(400, c.say("tools.calls.taskIdOnlyParked"));
  if (call.reported !== null) {
    if (call.reported === body.status && call.durationMs === body.durationMs) return done();
    return err(409, c.say("tools.calls.ended", { id: call.id, status: call.reported }));
  }
  // Ended with no outcome (worker lost): a report that comes after it is one of an ended call.
  if (call.status === "error") return err(409, c.say("tools.calls.ended", { id: call.id, status: call.status }));
  if (call.status !== "allowed") return err(409, c.say("tools.calls.notAllowed", { id: call.id, decision: call.status }));
  c.undue("toolLost", call.id);
  call.reported = body.status;
  call.durationMs = body.durationMs;
  if (body.status !== "parked") {
    endCall(c, call, body.status);
    return done();
  }
  if ((c.tx.get("meta", "toolCalls")?.parked ?? 0) >= toolParkedCallsMax) return err(429, c.say("tools.calls.tooManyParked", { limit: toolParkedCallsMax }));
  const hash = toolTaskHash(c.env.master, body.taskId!);
  const holder = c.tx.get("tasks", hash);
  const held = holder ? c.tx.get("calls", holder.call)?.status === "parked" : false;
  // A call without a key is reached by its task id alone: two parked calls cannot share it.
  if (held && body.callbackKey === undefined) return err(409, c.say("tools.calls.taskReused"));
  // An id whose task ended is free again (issue 34 #3: corlinman's plugins reuse theirs): a new task; the ended call
  // keeps its result in the audit. One a parked call still holds stays that call's on the legacy path; this call is
  // reached through its own key.
  if (!held) c.tx.put("tasks", hash, { call: call.id });
  if (body.callbackKey !== undefined) c.tx.put("tasks", toolCallbackKeyHash(c.env.master, body.callbackKey), { call: call.id, task: hash });
  call.status = "parked";
  call.deadline = c.now + (body.timeoutMs ?? toolCallTimeoutMsDefault);
  c.tx.put("calls", call.id, call);
  c.due("toolTask", call.id, call.deadline);
  moveParked(c, 1);
  return done();
}
