/**
 * `agent-autoloop why <run>`: a run's timeline from its facts (protocol.md 日志与确定性) — events, rules version,
 * claims, start and end, session, receipt, answers, tool calls and follow-up runs — in local time `MM-DD HH:mm:ss`.
 * Rule bodies are never printed.
 */
import type { Fact } from "../protocol/responses.js";
import { render, shown, type Lang } from "../i18n/messages.js";
import { renderText, timeline as steps, type Wording } from "../kernel/timeline.js";

/** `MM-DD HH:mm:ss` in the local time zone of this computer. */
export function localTime(iso: string): string {
  const d = new Date(iso);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/**
 * The timeline lines of one run from the facts `GET /v1/runs/:id/why` returns, worded in `lang` (default English):
 * the steps of src/kernel/timeline.ts (the one timeline the console and the MCP server show too), each as
 * `MM-DD HH:mm:ss  <text>` in local time. Protocol values (fact kinds, run states, card kinds) stay as the protocol
 * spells them; a manual run's summary (a fixed text) is shown in `lang`.
 */
export function timeline(run: number, facts: Fact[], lang: Lang = "en"): string[] {
  const wording: Wording = { say: (id, params) => render(lang, { id, params }), time: localTime, fixed: (text, data) => shown(lang, data ?? {}, text) };
  return steps(run, facts).map((s) => `${localTime(s.at)}  ${renderText(s.text, wording)}`);
}
