/**
 * `agent-autoloop why <run>`: a run's timeline from its facts (protocol.md 日志与确定性) — events, rules version,
 * claims, start and end, session, receipt, answers and follow-up runs — in local time `MM-DD HH:mm:ss`.
 * Rule bodies are never printed.
 */
import type { Fact, RunFactRow } from "../protocol/responses.js";
import { asShape } from "../protocol/response-check.js";

/** `MM-DD HH:mm:ss` in the local time zone of this computer. */
export function localTime(iso: string): string {
  const d = new Date(iso);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** The timeline lines of one run from the facts `GET /v1/runs/:id/why` returns. */
export function timeline(run: number, facts: Fact[]): string[] {
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
      if (rules) say(`rules v${rules.version}`);
      const e = table === "events" ? asShape("EventFactRow", row) : undefined;
      if (e) say(`event ${e.source}/${e.sid} ${e.type}${e.subject ? ` ${e.subject}` : ""}${e.summary ? ` — ${e.summary}` : ""}`);
      const r = table === "runs" ? asShape("RunFactRow", row) : undefined;
      if (r && Number(key) === run) me = r;
      if (r && Number(key) !== run && r.state === "queued" && r.answers.length) say(`follow-up run #${key}`);
      const card = table === "cards" ? asShape("CardFactRow", row) : undefined;
      if (card && card.run === run) {
        once(JSON.stringify([card.id]), say, `card #${card.id} ${card.fyi ? "fyi" : card.kind}: ${card.title}`);
        for (const [channel, d] of Object.entries(card.deliveries)) {
          if (d.ref) once(JSON.stringify([card.id, "delivered", channel]), say, `card #${card.id} delivered to ${channel} (${d.ref})`);
        }
        if (card.state === "answered") once(JSON.stringify([card.id, "answered"]), say, `card #${card.id} answered: ${card.choice !== null ? card.options[card.choice] : card.answer} (by ${card.by})`);
      }
      const timer = table === "timers" ? asShape("TimerFactRow", row) : undefined;
      if (timer && timer.run === run) say(`later ${timer.key} at ${localTime(new Date(timer.at).toISOString())}`);
    }
    if (me && me.state !== state) {
      const detail =
        me.state === "claimed" ? ` by ${me.worker} · attempt ${me.attempt} · session ${me.job?.session ?? "new"}`
        : me.state === "running" ? `${me.session ? ` · session ${me.session}` : ""}`
        : ["done", "nothing", "cancelled"].includes(me.state) ? `${me.summary ? ` — ${me.summary}` : ""}${me.usage ? ` · usage ${JSON.stringify(me.usage)}` : ""}`
        : me.state === "waiting" ? ` — ${me.error ?? "failed"} · retry at ${localTime(new Date(me.readyAt).toISOString())}`
        : "";
      say(`${f.kind}: ${state ?? "new"} → ${me.state}${detail}`);
      state = me.state;
    } else if (me && f.kind === "started" && me.session) {
      say(`session ${me.session}`);
    }
  }
  return out;
}
