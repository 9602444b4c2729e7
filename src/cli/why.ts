/**
 * `agent-autoloop why <run>`: a run's timeline from its facts (protocol.md 日志与确定性) — events, rules version,
 * claims, start and end, session, receipt, answers and follow-up runs — in local time `MM-DD HH:mm:ss`.
 * Rule bodies are never printed.
 */
import type { Fact } from "../kernel/types.js";
import { localize, t, type Lang } from "../i18n/messages.js";

type Row = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

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
    let me: Row | null = null;
    for (const [table, key, row] of f.changes) {
      if (!row) continue;
      const r = row as Row;
      if (table === "meta" && key === "rules") say(t(lang, "why.rules", { version: r.version }));
      if (table === "events") say(t(lang, "why.event", { event: eventLine(r, lang) }));
      if (table === "runs" && Number(key) === run) me = r;
      if (table === "runs" && Number(key) !== run && r.state === "queued" && r.answers?.length) say(t(lang, "why.followUp", { run: key }));
      if (table === "cards" && r.run === run) {
        once(JSON.stringify([r.id]), say, t(lang, "why.card", { card: r.id, kind: r.fyi ? "fyi" : r.kind, title: r.title }));
        for (const [channel, d] of Object.entries((r.deliveries ?? {}) as Record<string, Row>)) {
          if (d?.ref) once(JSON.stringify([r.id, "delivered", channel]), say, t(lang, "why.delivered", { card: r.id, channel, ref: d.ref }));
        }
        if (r.state === "answered") {
          const answer = r.choice !== null ? r.options[r.choice] : r.answer;
          once(JSON.stringify([r.id, "answered"]), say, t(lang, "why.answered", { card: r.id, answer, by: r.by }));
        }
      }
      if (table === "timers" && r.run === run) say(t(lang, "why.later", { key: r.key, at: localTime(new Date(r.at).toISOString()) }));
    }
    if (me && me.state !== state) {
      const detail =
        me.state === "claimed" ? ` ${t(lang, "why.claimedBy", { worker: me.worker, attempt: me.attempt, session: me.job?.session ?? t(lang, "why.new") })}`
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
function eventLine(r: Row, lang: Lang): string {
  const summary = r.summary && r.type === "run.manual" ? localize(r.summary, lang) : r.summary;
  return `${r.source}/${r.sid} ${r.type}${r.subject ? ` ${r.subject}` : ""}${summary ? ` — ${summary}` : ""}`;
}
