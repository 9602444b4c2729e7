/** `agent-autoloop status`: the owner's state summary, readable at a glance, worded from the message catalog. */
import { localize, t, type Lang, type MessageId } from "../i18n/messages.js";
import { cronSkippedCountMax } from "../kernel/limits.js";

type Any = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function time(iso: string | null | undefined, tz: string): string {
  if (!iso) return "-";
  const d = new Date(iso);
  const f = new Intl.DateTimeFormat("en-CA", { timeZone: tz, month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" });
  const p = Object.fromEntries(f.formatToParts(d).map((x) => [x.type, x.value]));
  return `${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
}

/**
 * Formats GET /v1/state for a person, in `lang`. Protocol values (states, kinds, cron expressions) and what others
 * wrote (titles, summaries, errors) are shown as they are; a pause reason the hub wrote is shown in `lang`.
 */
export function formatStatus(s: Any, lang: Lang, url: string): string {
  const w = (id: MessageId, params?: Record<string, string | number>) => t(lang, id, params);
  const tz = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  const out: string[] = [];
  out.push(w("status.header", { url, version: s.rulesVersion, timezone: s.timezone, now: time(s.now, tz) }));
  out.push("", w("status.cards", { n: s.cards.length }));
  if (s.cards.length === 0) out.push(`  ${w("status.none")}`);
  for (const c of s.cards as Any[]) {
    out.push(`  #${c.id} ${c.kind}${c.state !== "open" ? ` (${c.state})` : ""}${c.rule ? ` [${c.rule}${c.lane ? ` ${c.lane}` : ""}]` : ""} ${c.title}`);
    if (c.text) for (const line of String(c.text).split("\n").slice(0, 3)) out.push(`      ${line}`);
    (c.options as string[]).forEach((o, i) => out.push(`      ${i}) ${o}${c.recommend === i ? `  ${w("status.recommended")}` : ""}`));
    for (const [ch, d] of Object.entries((c.deliveries ?? {}) as Record<string, Any>)) {
      if (d.error) out.push(`      ${w(d.gaveUp ? "status.deliveryGaveUp" : "status.deliveryFailing", { channel: ch, failures: d.failures, error: d.error })}`);
    }
    if (c.state === "open") out.push(`      ${w("status.answerHint", { card: c.id, choice: c.kind === "ask" ? `<0-${c.options.length - 1}>` : "0" })}`);
  }
  const usage = (u: Any | null) => {
    if (!u) return "";
    const tokens = u.input !== undefined || u.output !== undefined ? ` · ${w("status.tokens", { n: (u.input ?? 0) + (u.output ?? 0) })}` : "";
    return `${tokens}${u.cost !== undefined ? ` · $${Number(u.cost).toFixed(4)}` : ""}`;
  };
  out.push("", w("status.active", { n: s.active.length }));
  if (s.active.length === 0) out.push(`  ${w("status.none")}`);
  for (const r of s.active as Any[]) {
    const when = r.state === "waiting" ? w("status.retryAt", { at: time(r.readyAt, tz) }) : w("status.since", { at: time(r.claimedAt ?? r.createdAt, tz) });
    out.push(`  #${r.id} ${r.rule}${r.lane ? ` ${r.lane}` : ""} · ${r.state} · ${when}${r.failures ? ` · ${w("status.failures", { n: r.failures })}` : ""}${r.worker ? ` · ${r.worker}` : ""}`);
    if (r.error && r.state === "waiting") out.push(`      ${r.error}`);
  }
  out.push("", w("status.runs"));
  if (s.runs.length === 0) out.push(`  ${w("status.none")}`);
  for (const r of (s.runs as Any[]).slice(0, 10)) {
    const u = usage(r.usage);
    const attempt = r.attempt > 1 ? ` ${w("status.attempt", { n: r.attempt })}` : "";
    out.push(`  #${r.id} ${r.rule}${r.lane ? ` ${r.lane}` : ""} · ${r.state}${attempt} · ${time(r.endedAt ?? r.startedAt ?? r.claimedAt ?? r.createdAt, tz)}${r.worker ? ` · ${r.worker}` : ""}${u}`);
    if (r.summary) out.push(`      ${r.summary}`);
    if (r.error && r.state !== "done") out.push(`      ${r.error}`);
  }
  out.push("", w("status.rules"));
  for (const l of s.lines as Any[]) {
    const when = l.cron ? `cron ${l.cron}` : `${l.source}:${(l.types as string[]).join(",")}`;
    const skipped = `${l.skippedCount}${l.skippedCount >= cronSkippedCountMax ? "+" : ""}`;
    const cron = l.cron ? `${l.nextAt ? ` · ${w("status.next", { at: time(l.nextAt, tz) })}` : ""}${l.skippedAt ? ` · ${w("status.cronSkipped", { n: skipped, last: time(l.skippedAt, tz) })}` : ""}` : "";
    out.push(`  ${l.name} ← ${when} → ${l.to} · ${w("status.queued", { n: l.queued })} · ${w("status.running", { n: l.running })}${l.paused ? ` · ${w("status.paused")}` : ""}${cron}`);
  }
  if ((s.elsewhere as Any[]).length) {
    out.push("", w("status.elsewhere"));
    for (const e of s.elsewhere as Any[]) out.push(`  ${e.name}${e.where ? ` · ${e.where}` : ""}${e.cron ? ` · cron ${e.cron}` : ""}${e.to ? ` → ${e.to}` : ""}`);
  }
  if ((s.pauses as Any[]).length) {
    out.push("", w("status.pausedRules"));
    for (const p of s.pauses as Any[]) {
      // The budget's pause reason is data the hub writes the same on every machine: shown in `lang`.
      const reason = p.reason ? ` · ${p.by === "budget" ? localize(p.reason, lang) : p.reason}` : "";
      out.push(`  ${p.name} · ${p.by}${reason}${p.until ? ` · ${w("status.until", { at: time(p.until, tz) })}` : ""}`);
    }
  }
  out.push("", w("status.workers"));
  if (s.workers.length === 0) out.push(`  ${w("status.none")}`);
  for (const x of s.workers as Any[]) out.push(`  ${x.name} · ${w(x.online ? "status.online" : "status.offline")} · ${time(x.seenAt, tz)}`);
  if ((s.timers as Any[]).length) {
    out.push("", w("status.timers"));
    for (const x of s.timers as Any[]) out.push(`  ${x.rule}${x.lane ? ` ${x.lane}` : ""} · ${x.key} · ${time(x.at, tz)}${x.about ? ` · ${x.about}` : ""}`);
  }
  if ((s.skipped as Any[]).length) {
    out.push("", w("status.skipped"));
    for (const e of (s.skipped as Any[]).slice(0, 5)) out.push(`  #${e.id} ${e.source}/${e.eventId} ${e.type} · ${(e.paused as string[]).join(", ")}`);
  }
  out.push("", w("status.unrouted", { n: s.totals.unrouted }));
  for (const e of (s.unrouted as Any[]).slice(0, 5)) out.push(`  #${e.id} ${e.source}/${e.eventId} ${e.type}${e.summary ? ` · ${e.summary}` : ""}`);
  const sp = (x: Any, label: string) => `  ${w("status.spent", { label, runs: x.rounds, tokens: x.tokens, cost: Number(x.cost).toFixed(4) })}`
    + `${x.missingTokens ? ` · ${w("status.noTokens", { n: x.missingTokens })}` : ""}${x.missingCost ? ` · ${w("status.noCost", { n: x.missingCost })}` : ""}`;
  out.push("", w("status.spending"), sp(s.spending.today, w("status.today")), sp(s.spending.week, w("status.week")));
  return out.join("\n");
}
