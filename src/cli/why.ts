/**
 * `agent-autoloop why <run>`: a run's timeline from its facts (protocol.md 日志与确定性) — events, rules version,
 * claims, start and end, session, receipt, answers and follow-up runs — in local time `MM-DD HH:mm:ss`.
 * Rule bodies are never printed.
 */
import type { Fact, RunFactRow, EventFactRow, ToolCallFactRow } from "../protocol/responses.js";
import { asShape } from "../protocol/response-check.js";
import { localize, t, type Lang } from "../i18n/messages.js";

/** `MM-DD HH:mm:ss` in the local time zone of this computer. */
export function localTime(iso: string): string {
  const d = new Date(iso);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/**
 * The timeline lines of one run from the facts `GET /v1/runs/:id/why` returns, worded in `lang` (default English).
 * Protocol values (fact kinds, run states, card kinds) stay as the protocol spells them.
 */
export function timeline(run: number, facts: Fact[], lang: Lang = "en"): string[] {
  const out: string[] = [];
  let state: string | null = null;
  // A card row is written again for every delivery and change: say each thing about it once (keys as JSON arrays,
  // so that no channel name can read as another thing).
  const said = new Set<string>();
  const once = (what: string, say: (text: string) => void, text: string) => {
    if (said.has(what)) return;
    said.add(what);
    say(text);
  };
  for (const f of facts) {
    const at = localTime(f.at);
    const say = (text: string) => out.push(`${at}  ${text}`);
    let me: RunFactRow | null = null;
    // Rows are read through their published shapes (protocol/responses.ts); a row of another shape says nothing.
    for (const [table, key, row] of f.changes) {
      if (!row) continue;
      const rules = table === "meta" && key === "rules" ? asShape("RulesFactRow", row) : undefined;
      if (rules) say(t(lang, "why.rules", { version: rules.version }));
      const e = table === "events" ? asShape("EventFactRow", row) : undefined;
      if (e) say(t(lang, "why.event", { event: eventLine(e, lang) }));
      const r = table === "runs" ? asShape("RunFactRow", row) : undefined;
      if (r && Number(key) === run) me = r;
      if (r && Number(key) !== run && r.state === "queued" && r.answers.length) say(t(lang, "why.followUp", { run: key }));
      const card = table === "cards" ? asShape("CardFactRow", row) : undefined;
      if (card && card.run === run) {
        once(JSON.stringify([card.id]), say, t(lang, "why.card", { card: card.id, kind: card.fyi ? "fyi" : card.kind, title: card.title }));
        for (const [channel, d] of Object.entries(card.deliveries)) {
          if (d.ref) once(JSON.stringify([card.id, "delivered", channel]), say, t(lang, "why.delivered", { card: card.id, channel, ref: d.ref }));
        }
        if (card.state === "answered") {
          const answer = card.choice !== null ? card.options[card.choice] : card.answer;
          once(JSON.stringify([card.id, "answered"]), say, t(lang, "why.answered", { card: card.id, answer: answer ?? "", by: card.by ?? "-" }));
        }
      }
      const call = table === "calls" ? asShape("ToolCallFactRow", row) : undefined;
      if (call && call.run === run) {
        const line = toolCallLine(call, lang);
        if (line !== null) once(JSON.stringify(["call", call.id, call.status]), say, line);
      }
      const trust = table === "trust" ? asShape("TrustFactRow", row) : undefined;
      if (trust) say(t(lang, "why.tool.trust", { plugin: trust.plugin, digest: trust.digest, by: trust.by }));
      const timer = table === "timers" ? asShape("TimerFactRow", row) : undefined;
      if (timer && timer.run === run) say(t(lang, "why.later", { key: timer.key, at: localTime(new Date(timer.at).toISOString()) }));
    }
    if (me && me.state !== state) {
      const detail =
        me.state === "claimed" ? ` ${t(lang, "why.claimedBy", { worker: me.worker ?? "-", attempt: me.attempt, session: me.job?.session ?? t(lang, "why.new") })}`
        : me.state === "running" ? `${me.session ? ` · ${t(lang, "why.session", { session: me.session })}` : ""}`
        : ["done", "nothing", "cancelled"].includes(me.state) ? `${me.summary ? ` — ${me.summary}` : ""}${me.usage ? ` · ${t(lang, "why.usage", { usage: JSON.stringify(me.usage) })}` : ""}`
        : me.state === "waiting" ? ` — ${t(lang, "why.retry", { error: me.error ?? t(lang, "why.failed"), at: localTime(new Date(me.readyAt).toISOString()) })}`
        : "";
      say(`${f.kind}: ${state ?? t(lang, "why.new")} → ${me.state}${detail}`);
      state = me.state;
    } else if (me && f.kind === "started" && me.session) {
      say(t(lang, "why.session", { session: me.session }));
    }
  }
  return out;
}

/**
 * An event as the timeline names it: `source/id type[ subject][ — summary]`. The summary of a manual run is the
 * protocol's fixed Chinese text: shown in `lang` like the rest of the line.
 */
function eventLine(r: EventFactRow, lang: Lang): string {
  const summary = r.summary && r.type === "run.manual" ? localize(r.summary, lang) : r.summary;
  return `${r.source}/${r.sid} ${r.type}${r.subject ? ` ${r.subject}` : ""}${summary ? ` — ${summary}` : ""}`;
}

/**
 * A tool call as the timeline tells it, once per status it reaches: allowed (by the answer on its card, if one),
 * asking the owner, awaiting approval,
 * denied with why, parked until its deadline, and how it ended. Null for a status it does not tell.
 */
function toolCallLine(call: ToolCallFactRow, lang: Lang): string | null {
  const p = { tool: call.tool, session: call.sessionKey, card: call.card ?? "-" };
  switch (call.status) {
    // Allowed by the owner's answer (while held, or a grant after the hold): the card that decided it.
    case "allowed": return t(lang, call.card === null ? "why.tool.allowed" : "why.tool.allowedOnCard", p);
    case "asking": return t(lang, "why.tool.asking", p);
    case "awaiting_approval": return t(lang, "why.tool.awaiting", p);
    case "denied": return t(lang, "why.tool.denied", { ...p, reason: call.reason ?? "-" });
    case "parked": return t(lang, "why.tool.parked", { ...p, at: call.deadline === null ? "-" : localTime(new Date(call.deadline).toISOString()) });
    // Ended by the hub with no outcome (worker lost): why.
    case "error": if (call.reason !== null) return t(lang, "why.tool.lost", { ...p, reason: call.reason });
    // falls through
    case "ok": case "timeout": case "oom":
      return t(lang, "why.tool.ended", { ...p, status: call.status, ms: call.durationMs ?? "-" });
    default: return null;
  }
}
