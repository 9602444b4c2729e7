/** `agent-autoloop status`: the owner's state summary, readable at a glance, worded from the message catalog. */
import { shown, t, type Lang, type MessageId, render } from "../i18n/messages.js";
import { cronSkippedCountMax } from "../kernel/limits.js";
import type { OwnerCard, Spending, State, UsageTotals } from "../protocol/responses.js";

/** How many recent runs `status` shows. */
export const statusRunsShown = 10;
/** `status --rule`: how many pages of runs (`stateRunsPerPage` each) it reads at most looking for the rule's runs. */
export const statusRulePagesMax = 20;

function time(iso: string | null | undefined, tz: string): string {
  if (!iso) return "-";
  const d = new Date(iso);
  const f = new Intl.DateTimeFormat("en-CA", { timeZone: tz, month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" });
  const p = Object.fromEntries(f.formatToParts(d).map((x) => [x.type, x.value]));
  return `${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
}

/**
 * What `formatStatus` knows besides the state: this home's config.json channels, what keeps any of them from starting
 * (`channelProblems`, by name: src/host/channel-setup.ts), and the rule `--rule` names.
 */
/** The lines of a card's text `status` shows, except an open ask card's, which is shown whole. */
export const statusCardLinesMax = 3;

export interface StatusOptions { localChannels?: string[] | null; channelProblems?: Record<string, string>; rule?: string | null }

/**
 * Formats GET /v1/state for a person, in `lang`. Protocol values (states, kinds, cron expressions) and what others
 * wrote (titles, summaries, errors) are shown as they are; a pause reason the hub wrote is shown in `lang`.
 */
export function formatStatus(s: State, lang: Lang, url: string, opts: StatusOptions = {}): string {
  const w = (id: MessageId, params?: Record<string, string | number>) => render(lang, { id, params });
  const tz = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  const out: string[] = [];
  out.push(w("status.header", { url, version: s.rulesVersion, timezone: s.timezone, now: time(s.now, tz) }));
  out.push("", w("status.cards", { n: s.cards.length }));
  if (s.cards.length === 0) out.push(`  ${w("status.none")}`);
  for (const c of s.cards) {
    out.push(`  #${c.id} ${c.kind}${c.state !== "open" ? ` (${c.state})` : ""}${c.rule ? ` [${c.rule}${c.lane ? ` ${c.lane}` : ""}]` : ""} ${shown(lang, c.texts?.title ?? {}, c.title)}`);
    // An open ask card is shown whole (the hub bounds it): what the owner answers — an approval card's binds, what its
    // arguments left out and why it asks — must all be in front of them (issue 26 round 2). Others: their first lines.
    // A time in a text the hub wrote (a budget card's period end) is said in this computer's zone.
    const text = shown(lang, c.texts?.text ?? {}, c.text, tz);
    const lines = text ? text.replace(/\n+$/, "").split("\n") : [];
    const whole = c.kind === "ask" && c.state === "open";
    for (const line of whole ? lines : lines.slice(0, statusCardLinesMax)) out.push(`      ${line}`);
    // What is left out is counted, never dropped in silence (issue 26 round 57, F57b-2: a notice naming 10 moved
    // entries showed 3 and no more).
    const more = whole ? 0 : lines.length - statusCardLinesMax;
    if (more > 0) out.push(`      ${w(more === 1 ? "status.moreLine" : "status.moreLines", { n: more, card: c.id })}`);
    c.options.forEach((o, i) => out.push(`      ${i}) ${shown(lang, c.texts?.options?.[i] ?? {}, o)}${c.recommend === i ? `  ${w("status.recommended")}` : ""}`));
    for (const [ch, d] of Object.entries(c.deliveries)) {
      if (d.error) out.push(`      ${w(d.gaveUp ? "status.deliveryGaveUp" : "status.deliveryFailing", { channel: ch, failures: d.failures, error: d.error })}`);
    }
    if (c.state === "open") out.push(`      ${w("status.answerHint", { card: c.id, choice: c.kind === "ask" ? `<0-${c.options.length - 1}>` : "0" })}`);
    // A budget card says to choose its option; here the CLI's own command does the same too (issue 30).
    const budgetRule = c.texts?.text?.code === "budget.say" ? c.texts.title?.params.rule : undefined;
    if (c.state === "open" && typeof budgetRule === "string") out.push(`      ${w("budget.cli", { rule: budgetRule })}`);
    out.push(...waitsForSilentChannels(s, c, lang));
  }
  const usage = (u: UsageTotals | null) => {
    if (!u) return "";
    const tokens = u.input !== undefined || u.output !== undefined ? ` · ${w("status.tokens", { n: (u.input ?? 0) + (u.output ?? 0) })}` : "";
    return `${tokens}${u.cost !== undefined ? ` · $${u.cost.toFixed(4)}` : ""}`;
  };
  out.push("", w("status.active", { n: s.active.length }));
  if (s.active.length === 0) out.push(`  ${w("status.none")}`);
  for (const r of s.active) {
    const when = r.state === "waiting" ? w("status.retryAt", { at: time(r.readyAt, tz) }) : w("status.since", { at: time(r.claimedAt ?? r.createdAt, tz) });
    out.push(`  #${r.id} ${r.rule}${r.lane ? ` ${r.lane}` : ""} · ${r.state} · ${when}${r.failures ? ` · ${w("status.failures", { n: r.failures })}` : ""}${r.worker ? ` · ${r.worker}` : ""}`);
    if (r.error && r.state === "waiting") out.push(`      ${r.error}`);
    if (r.waits) out.push(`      ${w(`why.waits.${r.waits.why}`, { run: r.waits.run ?? "", limit: r.waits.limit ?? "", worker: r.waits.worker ?? "" })}`);
  }
  out.push("", opts.rule ? w("status.runsOfRule", { rule: opts.rule }) : w("status.runs"));
  if (s.runs.length === 0) out.push(`  ${w("status.none")}`);
  for (const r of s.runs.slice(0, statusRunsShown)) {
    const u = usage(r.usage);
    const attempt = r.attempt > 1 ? ` ${w("status.attempt", { n: r.attempt })}` : "";
    out.push(`  #${r.id} ${r.rule}${r.lane ? ` ${r.lane}` : ""} · ${r.state}${attempt} · ${time(r.endedAt ?? r.startedAt ?? r.claimedAt ?? r.createdAt, tz)}${r.worker ? ` · ${r.worker}` : ""}${u}`);
    if (r.summary) out.push(`      ${r.summary}`);
    if (r.error && r.state !== "done") out.push(`      ${r.error}`);
  }
  if (opts.rule && s.nextBefore) out.push(`  ${w("status.olderRunsOfRule", { rule: opts.rule, run: s.nextBefore })}`);
  out.push("", w("status.rules"));
  for (const l of s.lines) {
    const when = l.cron ? `cron ${l.cron}` : `${l.source}:${l.types.join(",")}`;
    const skipped = `${l.skippedCount}${l.skippedCount >= cronSkippedCountMax ? "+" : ""}`;
    // A paused rule's next cron time would be skipped: it shows when the pause ends instead.
    const cron = l.cron ? `${l.nextAt && !l.paused ? ` · ${w("status.next", { at: time(l.nextAt, tz) })}` : ""}${l.skippedAt ? ` · ${w("status.cronSkipped", { n: skipped, last: time(l.skippedAt, tz) })}` : ""}` : "";
    out.push(`  ${l.name} ← ${when} → ${l.to} · ${w("status.queued", { n: l.queued })} · ${w("status.running", { n: l.running })}${l.paused ? ` · ${l.paused.until ? w("status.pausedUntil", { at: time(l.paused.until, tz) }) : w("status.paused")}` : ""}${cron}`);
  }
  if (s.elsewhere.length) {
    out.push("", w("status.elsewhere"));
    for (const e of s.elsewhere) out.push(`  ${e.name}${e.where ? ` · ${e.where}` : ""}${e.cron ? ` · cron ${e.cron}` : ""}${e.to ? ` → ${e.to}` : ""}`);
  }
  if (s.pauses.length) {
    out.push("", w("status.pausedRules"));
    for (const p of s.pauses) {
      // The hub's own reasons (budget, starting runs too fast) are one fixed text each, whatever the hub's language:
      // said by their id here, in `lang`.
      const own = p.by === "budget" ? t(lang, "budget.reason") : p.by === "rate" ? t(lang, "rate.reason") : null;
      const reason = p.reason ? ` · ${own ?? p.reason}` : "";
      out.push(`  ${p.name} · ${p.by}${reason}${p.until ? ` · ${w("status.until", { at: time(p.until, tz) })}` : ""}`);
    }
  }
  out.push("", w("status.workers"));
  if (s.workers.length === 0) out.push(`  ${w("status.none")}`);
  for (const x of s.workers) out.push(`  ${x.name} · ${w(x.online ? "status.online" : "status.offline")} · ${time(x.seenAt, tz)}`);
  out.push(...channelSection(s, lang, tz, opts.localChannels ?? null, opts.channelProblems ?? {}));
  if (s.timers.length) {
    out.push("", w("status.timers"));
    for (const x of s.timers) out.push(`  ${x.rule}${x.lane ? ` ${x.lane}` : ""} · ${x.key} · ${time(x.at, tz)}${x.about ? ` · ${x.about}` : ""}`);
  }
  if (s.skipped.length) {
    out.push("", w("status.skipped"));
    for (const e of s.skipped.slice(0, 5)) out.push(`  #${e.id} ${e.source}/${e.eventId} ${e.type} · ${e.paused.join(", ")}`);
  }
  out.push("", w("status.unrouted", { n: s.totals.unrouted }));
  for (const e of s.unrouted.slice(0, 5)) out.push(`  #${e.id} ${e.source}/${e.eventId} ${e.type}${e.summary ? ` · ${e.summary}` : ""}`);
  // A figure no run reported is not shown as 0: only the count of runs without it.
  const sp = (x: Spending, label: string) => "  " + [
    x.rounds === 1 ? w("status.spentOneRun", { label }) : w("status.spentRuns", { label, n: x.rounds }),
    ...(x.rounds > x.missingTokens ? [w("status.tokens", { n: x.tokens })] : []),
    ...(x.rounds > x.missingCost ? [w("status.spentCost", { cost: x.cost.toFixed(4) })] : []),
    ...(x.missingTokens ? [w("status.noTokens", { n: x.missingTokens })] : []),
    ...(x.missingCost ? [w("status.noCost", { n: x.missingCost })] : []),
  ].join(" · ");
  out.push("", w("status.spending"), sp(s.spending.today, w("status.today")), sp(s.spending.week, w("status.week")));
  // Tool calls that ended today, one line per plugin (issue 16).
  const calls = s.toolCalls;
  if (calls.length > 0) {
    out.push("", w("status.toolCalls"));
    for (const plugin of [...new Set(calls.map((c) => c.plugin))]) {
      out.push(`  ${plugin}: ${calls.filter((c) => c.plugin === plugin).map((c) => `${c.status} ${c.count}`).join(" · ")}`);
    }
  }
  return out.join("\n");
}

/** Whether `card` waits for its first delivery to `channel` (an open card it was never delivered to, not given up). */
function waitsFor(card: OwnerCard, channel: string): boolean {
  const d = card.deliveries[channel] as OwnerCard["deliveries"][string] | undefined;
  return card.state === "open" && card.channels.includes(channel) && !d?.ref && !d?.gaveUp;
}

/** The marks of a card that waits for channels that never polled. */
function waitsForSilentChannels(s: State, card: OwnerCard, lang: Lang): string[] {
  const never = new Set(s.channels.filter((ch) => !ch.seenAt).map((ch) => ch.id));
  return card.channels.filter((ch) => never.has(ch) && waitsFor(card, ch)).map((channel) => `      ${t(lang, "status.waitsForNeverPolled", { channel })}`);
}

/**
 * The channels of rules.json: last poll and cards waiting for each. For one that never polled, what to do: serve
 * starts the channels of config.json when it starts (a channel added while it runs needs a restart), and a channel
 * config.json does not have is not run on this computer at all.
 * A local channel that cannot start (its secret missing) says so, as its log and doctor do: serve did start it, so
 * "restart serve" would be wrong (issue 26).
 * @param localChannels the channel names in this home's config.json, or null when not known.
 * @param problems what keeps a local channel from starting, by name.
 */
function channelSection(s: State, lang: Lang, tz: string, localChannels: string[] | null, problems: Record<string, string>): string[] {
  const out = ["", t(lang, "status.channels")];
  if (s.channels.length === 0) out.push(`  ${t(lang, "status.none")}`);
  for (const ch of s.channels) {
    const waiting = s.cards.filter((c) => waitsFor(c, ch.id)).length;
    const poll = ch.seenAt ? t(lang, "status.lastPoll", { at: time(ch.seenAt, tz) }) : t(lang, "status.neverPolled");
    out.push(`  ${ch.id} · ${poll} · ${t(lang, "status.cardsWaiting", { n: waiting })}`);
    const problem = Object.hasOwn(problems, ch.id) ? problems[ch.id]! : null;
    if (!ch.seenAt && localChannels && localChannels.includes(ch.id) && problem !== null) out.push(`      ${t(lang, "status.channelProblem", { problem })}`);
    else if (!ch.seenAt && localChannels) {
      out.push(`      ${t(lang, localChannels.includes(ch.id) ? "status.channelNotStarted" : "status.channelNotHere", { channel: ch.id })}`);
    }
  }
  return out;
}

/**
 * The state `status --rule` shows: `rule`'s active runs and its newest runs (up to `statusRunsShown`), looked for page
 * by page through older runs, at most `statusRulePagesMax` pages; `nextBefore` is where older ones of the rule go on.
 * @param page reads one page of `GET /v1/state` (`before`: older runs than this id).
 * @returns null when rules.json has no such rule and none of the runs read is one of it.
 */
export async function stateOfRule(page: (before?: number) => Promise<State>, rule: string, before?: number): Promise<State | null> {
  const first = await page(before);
  const runs: State["runs"] = [];
  let s = first;
  let nextBefore: number | null = null;
  for (let pages = 1; ; pages++) {
    for (const r of s.runs) if (r.rule === rule && runs.length < statusRunsShown) runs.push(r);
    if (runs.length >= statusRunsShown) {
      nextBefore = runs.at(-1)!.id;
      break;
    }
    if (!s.hasMore || pages >= statusRulePagesMax) {
      nextBefore = s.hasMore ? s.nextBefore : null;
      break;
    }
    s = await page(s.nextBefore ?? undefined);
  }
  const active = first.active.filter((r) => r.rule === rule);
  if (runs.length === 0 && active.length === 0 && !first.lines.some((l) => l.name === rule)) return null;
  return { ...first, runs, active, nextBefore, hasMore: nextBefore !== null };
}
