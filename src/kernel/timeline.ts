/**
 * A run's timeline from its facts (`GET /v1/runs/:id/why`; protocol.md 日志与确定性), once for every client (issue 27
 * #4): the CLI's `why`, the MCP server's `why` and the owner console's run page all read it from here, so they tell the
 * same steps — events, rules version, claims, start and end, session, cards, deliveries, answers, tool calls, trust,
 * `later` timers and follow-up runs. Each step is a message id of the catalog and its parameters, never prose: each
 * client words it in its own language (`renderText` with its own catalog) and shows times in its own zone.
 *
 * Pure and self-contained: the hub serves it compiled to the console as /console/kernel/timeline.js (with states.js,
 * the one module it loads), so it imports nothing else at run time. Rows are read through small checks of the fields
 * a step needs (the published shapes of src/protocol/responses.ts: `RunFactRow`, `CardFactRow`, …): a row of another
 * shape says nothing, as rows written by older hubs and fields added later still read.
 */
import type { MessageId } from "../i18n/messages.js";
import type { Fact } from "../protocol/responses.js";
import { runEndStates, stateIn } from "./states.js";

/**
 * A parameter of a text: plain, a time (`{ at }`: ISO 8601 UTC, the client shows it in its zone), a text the hub wrote
 * in its fixed language (`{ fixed }`: `fixedText`, e.g. a manual run's summary; shown as it is where the client cannot
 * word it anew), or a text of its own.
 */
export type TextParam = string | number | { at: string } | { fixed: string; text?: WireTextLike } | Text;

/** A text as the hub stores it beside its words (`code` + `params`; i18n `WireText`), read as it came. */
export interface WireTextLike { code: string; params: Record<string, unknown> }

/** A text for a person as data: a catalog message id and its parameters. */
export interface Text { id: MessageId; params?: Readonly<Record<string, TextParam>> }

/** One step of a timeline: when (the fact's time, ISO 8601 UTC) and what. */
export interface Step { at: string; text: Text }

/** How a client words a text: its catalog (`t` in its language), its clock format, its reading of a fixed text. */
export interface Wording {
  say: (id: MessageId, params: Record<string, string | number>) => string;
  time: (iso: string) => string;
  /** A fixed text: worded anew from its id and params (`data`) where the client can, else shown as it is. */
  fixed?: (text: string, data?: WireTextLike) => string;
}

/** The words of `text`, its parameters worded first (a text inside a text, a time in the client's zone). */
export function renderText(text: Text, w: Wording): string {
  const params: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(text.params ?? {})) {
    params[k] = typeof v !== "object" ? v : "id" in v ? renderText(v, w) : "at" in v ? w.time(v.at) : (w.fixed ?? ((s) => s))(v.fixed, v.text);
  }
  return w.say(text.id, params);
}

type Row = Record<string, unknown>;
const isRow = (v: unknown): v is Row => typeof v === "object" && v !== null && !Array.isArray(v);
const isStr = (v: unknown): v is string => typeof v === "string";
const isInt = (v: unknown): v is number => Number.isInteger(v);
const orNull = (f: (v: unknown) => boolean) => (v: unknown) => v === null || f(v);
/** Whether `row` has each field, each passing its check. */
const has = (row: Row, fields: Record<string, (v: unknown) => boolean>) => Object.entries(fields).every(([k, f]) => f(row[k]));

const strN = orNull(isStr);
const intN = orNull(isInt);
const isRunRow = (r: Row) => has(r, {
  id: isInt, state: isStr, attempt: isInt, worker: strN, session: strN, summary: strN, error: strN, readyAt: isInt,
  answers: Array.isArray, job: orNull((j) => isRow(j) && strN(j.session)), usage: orNull(isRow),
});
const isCardRow = (r: Row) => has(r, {
  id: isInt, run: intN, fyi: (v) => typeof v === "boolean", kind: isStr, title: isStr, state: isStr, choice: intN,
  options: (v) => Array.isArray(v) && v.every(isStr), answer: strN, by: strN, deliveries: isRow,
});
const isEventRow = (r: Row) => has(r, { source: isStr, sid: isStr, type: isStr, subject: strN, summary: strN });
const isTimerRow = (r: Row) => has(r, { run: intN, key: isStr, at: isInt });
const isCallRow = (r: Row) => has(r, {
  id: isInt, run: intN, tool: isStr, sessionKey: isStr, status: isStr, card: intN, reason: strN, durationMs: intN, deadline: intN,
});
const isTrustRow = (r: Row) => has(r, { plugin: isStr, digest: isStr, by: isStr });

/** A time of a row (ms since the epoch) as a time parameter. */
const time = (ms: number): { at: string } => ({ at: new Date(ms).toISOString() });
/** The event type of a manual run (control.ts `manualEventType`): its summary is a fixed text. */
const manualEventType = "run.manual";

/** `{move} {detail}` joined as the timeline joins a run's state change and what goes with it. */
const joined = (id: "why.join.space" | "why.join.dot" | "why.join.dash", move: Text, detail: TextParam): Text => ({ id, params: { move, detail } });

/**
 * The steps of run `run` from the facts `GET /v1/runs/:id/why` returns, oldest first. A card is told once as made,
 * once per channel's delivery and once answered (a card row is written again for every change); a tool call once per
 * status it reaches; a state change of the run with what goes with it (its worker and attempt, its session, its
 * summary and usage, its retry).
 */
export function timeline(run: number, facts: readonly Fact[]): Step[] {
  const out: Step[] = [];
  let state: string | null = null;
  // Keys as JSON arrays, so that no channel name can read as another thing.
  const said = new Set<string>();
  for (const f of facts) {
    const say = (text: Text) => out.push({ at: f.at, text });
    const once = (what: unknown[], text: Text) => {
      const key = JSON.stringify(what);
      if (said.has(key)) return;
      said.add(key);
      say(text);
    };
    let me: Row | null = null;
    for (const [table, key, row] of f.changes) {
      if (!isRow(row)) continue;
      if (table === "meta" && key === "rules" && isInt(row.version)) say({ id: "why.rules", params: { version: row.version } });
      if (table === "events" && isEventRow(row)) say(eventLine(row));
      if (table === "runs" && isRunRow(row)) {
        if (Number(key) === run) me = row;
        else if (row.state === "queued" && (row.answers as unknown[]).length > 0) say({ id: "why.followUp", params: { run: String(key) } });
      }
      if (table === "cards" && isCardRow(row) && row.run === run) cardSteps(row, once);
      if (table === "calls" && isCallRow(row) && row.run === run) {
        const text = toolCallText(row);
        if (text !== null) once(["call", row.id, row.status], text);
      }
      if (table === "trust" && isTrustRow(row)) say({ id: "why.tool.trust", params: { plugin: row.plugin as string, digest: row.digest as string, by: byWhom(row.by as string) } });
      if (table === "timers" && isTimerRow(row) && row.run === run) say({ id: "why.later", params: { key: row.key as string, at: time(row.at as number) } });
    }
    if (me && me.state !== state) {
      say(moveText(f.kind, state, me));
      state = me.state as string;
    } else if (me && f.kind === "started" && me.session) {
      say({ id: "why.session", params: { session: me.session as string } });
    }
  }
  return out;
}

/** Who answered or trusted: the owner's own answer (console, CLI) is "you"; a channel's answerer as the channel names them. */
const byWhom = (by: string): TextParam => (by === "owner" ? { id: "console.card.you" } : by);

/** The words of a card's kind (a kind of a newer hub is shown as it is). */
const cardKindText = { ask: "why.cardKind.ask", notice: "why.cardKind.notice", fyi: "why.cardKind.fyi" } as const satisfies Record<string, MessageId>;

/** A card of the run: made, delivered to each channel, answered — each once. */
function cardSteps(card: Row, once: (what: unknown[], text: Text) => void): void {
  const id = card.id as number;
  const kind = card.fyi ? "fyi" : (card.kind as string);
  once([id], { id: "why.card", params: { card: id, kind: kind in cardKindText ? { id: cardKindText[kind as keyof typeof cardKindText] } : kind, title: card.title as string } });
  for (const [channel, d] of Object.entries(card.deliveries as Row)) {
    if (isRow(d) && isStr(d.ref)) once([id, "delivered", channel], { id: "why.delivered", params: { card: id, channel, ref: d.ref } });
  }
  if (card.state === "answered") {
    const answer = card.choice !== null ? (card.options as string[])[card.choice as number] : (card.answer as string | null);
    once([id, "answered"], { id: "why.answered", params: { card: id, answer: answer ?? "", by: byWhom((card.by as string | null) ?? "-") } });
  }
}

/**
 * The run moved from `from` (null: it is new) to its state, by a fact of kind `kind`, in plain words (issue 30: no
 * fact kinds or state names of the protocol): what happened to it, with what goes with the move — who picked it up,
 * its session, its summary and what it used, why it failed and when it is tried again.
 */
function moveText(kind: string, from: string | null, me: Row): Text {
  const to = me.state as string;
  if (to === "queued") return { id: from === null ? "why.to.queued" : "why.to.requeued" };
  if (to === "claimed") {
    // A new conversation is the usual case and goes unsaid; a session carried on is named (it can be resumed by hand).
    const session = (me.job as Row | null)?.session as string | null | undefined;
    const picked: Text = { id: "why.to.claimed", params: { worker: (me.worker as string | null) ?? "-", attempt: me.attempt as number } };
    return session ? joined("why.join.dot", picked, { id: "why.resumes", params: { session } }) : picked;
  }
  if (to === "running") return me.session ? joined("why.join.dot", { id: "why.to.running" }, { id: "why.session", params: { session: me.session as string } }) : { id: "why.to.running" };
  if (to === "waiting") {
    return { id: "why.to.waiting", params: { error: (me.error as string | null) ?? { id: "why.failed" }, at: time(me.readyAt as number) } };
  }
  if (stateIn(runEndStates, to)) {
    const move: Text = { id: to === "done" ? "why.to.done" : to === "nothing" ? "why.to.nothing" : "why.to.cancelled" };
    const ended = me.summary ? joined("why.join.dash", move, me.summary as string) : move;
    return me.usage ? joined("why.join.dot", ended, usageText(me.usage as Row)) : ended;
  }
  if (to === "stopping") return { id: "why.to.stopping" };
  if (to === "uncertain") return { id: "why.to.uncertain" };
  // A state this timeline does not know (a newer hub's): said as the protocol names it.
  return { id: "why.move", params: { fact: kind, from: from ?? { id: "why.new" }, to } };
}

/** What a run used, as the owner reads it: tokens (input and output together, as the console's run list counts) and cost, each when reported. */
function usageText(u: Row): Text {
  const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : null);
  const parts = [n(u.input), n(u.output)].filter((v) => v !== null);
  const tokens = parts.length > 0 ? parts.reduce((a, b) => a + b, 0) : null;
  const cost = n(u.cost);
  // The run list's own forms: tokens grouped by thousands (the same in both languages), US dollars to 4 decimals.
  const grouped = tokens === null ? null : groupedInt(tokens);
  const usd = cost === null ? null : cost.toFixed(4);
  if (grouped !== null && usd !== null) return { id: "why.usage.both", params: { tokens: grouped, cost: usd } };
  if (grouped !== null) return { id: "why.usage.tokens", params: { tokens: grouped } };
  if (usd !== null) return { id: "why.usage.cost", params: { cost: usd } };
  return { id: "why.usage.none" };
}

/** A whole number grouped by thousands with commas (`41,200`), as both languages of the console write it. */
function groupedInt(n: number): string {
  return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/**
 * An event as the timeline tells it, in words (issue 30: no source ids with event ids, no event types of the hub's
 * own): one the hub made says what it was — a cron time of its rule, a run by hand with its reason, an answer to a
 * card, a `later` timer — and a posted one (or a receipt's) says its source, its subject (else its type) and summary.
 * The summary of a manual run is the protocol's fixed Chinese text (`{ fixed }`) with its message id and params beside
 * (issue 27 #2; none in events of older hubs): a client shows it in its language from those.
 */
function eventLine(r: Row): Text {
  const summary: TextParam | null = !r.summary ? null
    : r.type === manualEventType ? { fixed: r.summary as string, ...(isRow(r.texts) && isRow(r.texts.summary) ? { text: r.texts.summary as unknown as WireTextLike } : {}) }
    : (r.summary as string);
  const routed = Array.isArray(r.routed) && r.routed.every(isStr) ? (r.routed as string[]) : [];
  if (r.internal === "cron") return { id: "why.event.cron", params: { rule: routed.join(", ") || ((r.subject as string | null) ?? "-") } };
  // A manual run's summary says who ran it ("owner ran it by hand"); its detail is the reason given.
  if ((r.internal === "manual" || r.type === manualEventType) && summary !== null) {
    return isStr(r.detail) && r.detail ? { id: "why.event.manual", params: { summary, reason: r.detail } } : { id: "why.event.manualBare", params: { summary } };
  }
  if (r.internal === "answer" && summary !== null) return { id: "why.event.answer", params: { title: summary } };
  if (r.internal === "timer" && summary !== null) return { id: "why.event.timer", params: { summary } };
  const name = (r.subject as string | null) ?? (r.type as string);
  return summary === null ? { id: "why.event.from", params: { source: r.source as string, name } }
    : { id: "why.event.fromSummary", params: { source: r.source as string, name, summary } };
}

/**
 * The tool host's refusal codes the timeline words itself (the host's message is in the worker's language and says the
 * tool's name again); any other code is dropped and its message kept.
 */
const refusalText = {
  "tools.unknown_plugin": "why.tool.refused.unknownPlugin",
  "tools.unknown_tool": "why.tool.refused.unknownTool",
  "tools.not_offered": "why.tool.refused.notOffered",
} as const satisfies Record<string, MessageId>;

/**
 * Why a call was denied or lost, as a parameter: the hub's words as data (`reasonText`) where it kept them, so a client
 * words them in its language; a refusal of the tool host (`why` = `refused`, stored `<code>: <message>`) by its code,
 * never the code itself.
 */
function callReason(call: Row): TextParam {
  const reason = (call.reason as string | null) ?? "-";
  const data = call.reasonText;
  if (isRow(data) && isStr(data.code) && isRow(data.params)) return { fixed: reason, text: { code: data.code, params: data.params } };
  if (call.why !== "refused") return reason;
  const cut = reason.indexOf(": ");
  if (cut < 0) return reason;
  const code = reason.slice(0, cut);
  return Object.hasOwn(refusalText, code) ? { id: refusalText[code as keyof typeof refusalText] } : reason.slice(cut + 2);
}

/** How an allowed call ended, by its status (`error` here: ended with no reason). */
const endedText = new Map<string, MessageId>([["ok", "why.tool.ok"], ["timeout", "why.tool.timeout"], ["oom", "why.tool.oom"], ["error", "why.tool.error"]]);

/**
 * A tool call as the timeline tells it, once per status it reaches: allowed (by the answer on its card, if one),
 * asking the owner, awaiting approval, denied with why, parked until its deadline, and how it ended. Null for a status
 * it does not tell. The run's session is not said: the timeline is the run's own.
 */
function toolCallText(call: Row): Text | null {
  const p = { tool: call.tool as string, card: (call.card as number | null) ?? "-" };
  const ms = (call.durationMs as number | null) ?? "-";
  switch (call.status) {
    // Allowed by the owner's answer (while held, or a grant after the hold): the card that decided it.
    case "allowed": return { id: call.card === null ? "why.tool.allowed" : "why.tool.allowedOnCard", params: p };
    case "asking": return { id: "why.tool.asking", params: p };
    case "awaiting_approval": return { id: "why.tool.awaiting", params: p };
    case "denied": return { id: "why.tool.denied", params: { ...p, reason: callReason(call) } };
    case "parked": return { id: "why.tool.parked", params: { ...p, at: call.deadline === null ? "-" : time(call.deadline as number) } };
    // Ended by the hub with no outcome (worker lost): why.
    case "error": if (call.reason !== null) return { id: "why.tool.lost", params: { ...p, reason: callReason(call) } };
    // falls through
    case "ok": case "timeout": case "oom":
      return { id: endedText.get(call.status) ?? "why.tool.error", params: { ...p, ms } };
    default: return null;
  }
}
