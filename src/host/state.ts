/**
 * GET /v1/state (protocol.md 本人): the whole picture in one snapshot. Reads only what is current or bounded
 * (open cards, active runs, one page of runs, recent lists, the last 7 days of ended runs), never all history.
 */
import type { RunSummary, View } from "../kernel/view.js";
import { emptyRules } from "../kernel/view.js";
import type { EventRow, RunState } from "../kernel/types.js";
import { stateRecentCards, stateRecentEvents, stateRunsPerPage, stateRunsScanRows, workerOnlineMs } from "../kernel/limits.js";
import { Ctx } from "../kernel/context.js";
import { runHeldStates, runLiveStates, runPendingStates, stateIn } from "../kernel/states.js";
import { periodOf, startOfDay } from "../kernel/period.js";
import { ownerCard } from "../kernel/cards.js";
import { waitsFor } from "../kernel/runs.js";
import { usageBucketMs, usageOf, type UsageBucket } from "../kernel/evolve.js";
import { spendKey, toolStatsKey } from "../kernel/tables.js";
import type { Budget } from "../kernel/rules.js";
import type { Env } from "../kernel/types.js";
import type { EventView, RunView, Spending, State } from "../protocol/responses.js";

/** A time in ms as an ISO string; null stays null. */
function iso(ms: number): string;
function iso(ms: number | null | undefined): string | null;
function iso(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}

/** A run as the owner reads it (GET /v1/state, GET /v1/search): its row without the job is enough. */
export function runView(c: Ctx, r: RunSummary): RunView {
  return {
    ...(r.state === "queued" ? { waits: waitsFor(c, r) } : {}),
    id: r.id, rule: r.rule, lane: r.lane, state: r.state, attempt: r.attempt, failures: r.failures, manual: r.manual,
    worker: r.worker, agent: r.agent, session: r.session, link: r.link, events: r.events.length, answers: r.answers,
    createdAt: iso(r.createdAt), claimedAt: iso(r.claimedAt), startedAt: iso(r.startedAt), endedAt: iso(r.endedAt),
    readyAt: iso(r.readyAt), outcome: r.outcome, summary: r.summary, error: r.error, usage: r.usage, mergedInto: r.mergedInto,
  };
}

/** An event as GET /v1/state lists it. */
export function eventView(e: EventRow): EventView {
  return { id: e.id, source: e.source, eventId: e.sid, type: e.type, subject: e.subject, summary: e.summary, at: iso(e.at), routed: e.routed, paused: e.paused };
}

const zeroUsage = (): UsageBucket => ({ rounds: 0, tokens: 0, costNanos: 0, missingTokens: 0, missingCost: 0 });

/** Adds `b` to `sum`. */
function addUsage(sum: UsageBucket, b: UsageBucket): void {
  for (const k of Object.keys(sum) as (keyof UsageBucket)[]) sum[k] += b[k];
}

/** A usage sum as the owner reads it: cost in USD (to the micro-dollar) instead of nano-USD. */
function spendingOf(sum: UsageBucket): Spending {
  const { costNanos, ...rest } = sum;
  return { ...rest, cost: Math.round(costNanos / 1e3) / 1e6 };
}

/**
 * Sums usage of runs ended since `from` (ms), in all and per rule: rounds, tokens, cost, and how many runs did not
 * report each. Whole quarter hours come from the `usage` buckets `evolve` keeps (with their rules' sums); only the runs
 * that ended between `from` and the next bucket edge are read one by one, so the cost does not grow with history or
 * with the number of runs in the window.
 */
function usageSince(view: View, from: number): { all: UsageBucket; rules: Map<string, UsageBucket> } {
  const all = zeroUsage();
  const rules = new Map<string, UsageBucket>();
  const add = (rule: string, b: UsageBucket) => {
    addUsage(all, b);
    const r = rules.get(rule) ?? zeroUsage();
    addUsage(r, b);
    rules.set(rule, r);
  };
  const edge = Math.ceil(from / usageBucketMs) * usageBucketMs;
  for (const { row } of view.runSummaries("ended >= ? AND ended < ?", from, edge)) {
    const share = usageOf(row);
    if (share) add(share.rule, share.add);
  }
  for (const { row } of view.where("usage", "key >= ?", edge)) for (const { rule, ...b } of row.rules) add(rule, b);
  return { all, rules };
}

/** What GET /v1/state's runs may be narrowed to: a rule, a state, a worker (each null: any). */
export interface RunFilter { rule: string | null; state: RunState | null; worker: string | null }

/** What a worker's last poll said of its slots (`Presence.capacityOf`). */
export interface WorkerCapacity { slots: number; free: number }

/** What the state may be asked for besides the page: a filter of its runs, and the workers' slots as they last said. */
export interface StateOptions {
  filter?: RunFilter;
  capacityOf?: (worker: string) => WorkerCapacity | null;
  /** Only the newest this many open and answered cards (issue 30: the console's first load at size); absent: all. */
  cards?: number;
}

/** The cards GET /v1/state lists: open, or answered and not yet closed. */
const listedCards = "state IN ('open', 'answered')";

/**
 * One page of runs, newest first, older than `before` (null: the newest). Without a filter, `stateRunsPerPage` runs.
 * With one, the runs that match among at most `stateRunsScanRows` run ids below `before` (a range of the rowid, so a
 * page reads at most that many rows however rare the match): the page may hold fewer than a full page, and `nextBefore`
 * then says where the next look goes on. Run ids are never reused, so a range of ids is a range of history.
 */
function runsPage(view: View, before: number | null, filter: RunFilter | null): { rows: RunSummary[]; nextBefore: number | null; reachedAt: number | null } {
  if (!filter) {
    const page = view.runSummaries(before === null ? "1 ORDER BY key DESC LIMIT ?" : "key < ? ORDER BY key DESC LIMIT ?", ...(before === null ? [] : [before]), stateRunsPerPage + 1);
    const rows = page.slice(0, stateRunsPerPage).map((r) => r.row);
    return { rows, nextBefore: page.length > stateRunsPerPage ? rows[rows.length - 1]!.id : null, reachedAt: rows.at(-1)?.createdAt ?? null };
  }
  const top = before ?? Number((view.sql("SELECT MAX(key) AS k FROM v_runs").get() as { k: number | null }).k ?? 0) + 1;
  const floor = Math.max(1, top - stateRunsScanRows);
  const page = view.runSummaries(
    "key < ? AND key >= ? AND (? IS NULL OR json_extract(data, '$.rule') = ?) AND (? IS NULL OR state = ?) AND (? IS NULL OR json_extract(data, '$.worker') = ?) ORDER BY key DESC LIMIT ?",
    top, floor, filter.rule, filter.rule, filter.state, filter.state, filter.worker, filter.worker, stateRunsPerPage + 1,
  );
  const rows = page.slice(0, stateRunsPerPage).map((r) => r.row);
  if (page.length > stateRunsPerPage) return { rows, nextBefore: rows[rows.length - 1]!.id, reachedAt: rows[rows.length - 1]!.createdAt };
  // The whole range was looked through: the next look starts below it, if any run is there.
  const below = view.sql("SELECT 1 FROM v_runs WHERE key < ? LIMIT 1").get(floor) !== undefined;
  return { rows, nextBefore: below ? floor : null, reachedAt: view.runSummaries("key = ?", floor)[0]?.row.createdAt ?? null };
}

/** The runs of the last state built from each view: its log position, page, and the runs in hand or waiting. */
const lastRuns = new WeakMap<View, { seq: number; page: string; runs: ReturnType<typeof runsPage>; active: RunSummary[] }>();

/**
 * The page of runs `runsPage` reads and the active runs, read again only when the log moved on (`seq`) or another page
 * is asked for: every console reads the state again after each fact, and each read of the page parsed 60 runs
 * (issue 30). The rows only; what is worded from them with the time (`runView`) is made for each read.
 */
function runsRead(view: View, seq: number, before: number | null, filter: RunFilter | null): ReturnType<typeof runsPage> & { active: RunSummary[] } {
  const page = JSON.stringify([before, filter]);
  const last = lastRuns.get(view);
  if (last && last.seq === seq && last.page === page) return { ...last.runs, active: last.active };
  const runs = runsPage(view, before, filter);
  const active = view.runSummaries(`state IN (${runLiveStates.map(() => "?").join(", ")}) ORDER BY key`, ...runLiveStates).map((r) => r.row);
  lastRuns.set(view, { seq, page, runs, active });
  return { ...runs, active };
}

/**
 * Builds the owner's state summary.
 * @param before run id to page from (older runs), or null for the first page.
 * @param opts a filter of the page's runs; where the workers' slots are known.
 */
export function buildState(view: View, env: Env, now: number, seq: number, before: number | null, opts: StateOptions = {}): State {
  const meta = view.rules();
  const rules = meta?.rules ?? emptyRules();
  const c = new Ctx(view, now, env);
  const totals = view.get("meta", "totals") ?? { events: 0, unrouted: 0, runs: 0, cards: 0, openCards: 0 };
  // Oldest first, as ever; with `cards`, the newest that many (read newest first, then put back in order).
  const cardRows = opts.cards === undefined ? view.where("cards", `${listedCards} ORDER BY key`) : view.where("cards", `${listedCards} ORDER BY key DESC LIMIT ?`, opts.cards).reverse();
  const cards = cardRows.map(({ row }) => ownerCard(c, row));
  const cardCount = opts.cards === undefined ? cards.length : (view.sql(`SELECT COUNT(*) AS n FROM v_cards WHERE ${listedCards}`).get() as { n: number }).n;
  const recentCards = view.where("cards", "state = 'closed' ORDER BY key DESC LIMIT ?", stateRecentCards).map(({ row }) => ownerCard(c, row));
  const page = runsRead(view, seq, before, opts.filter ?? null);
  const runs = page.rows.map((r) => runView(c, r));
  const active = page.active;
  const workers = view.where("workers", "1 ORDER BY key").map(({ row }) => ({
    name: row.name, seenAt: iso(row.seenAt), online: now - row.seenAt < workerOnlineMs,
    slots: opts.capacityOf?.(row.name)?.slots ?? null, free: opts.capacityOf?.(row.name)?.free ?? null,
  }));
  const seenWorker = new Map(workers.map((w) => [w.name, w]));
  const channelSeen = new Map(view.where("channels", "1").map(({ row }) => [row.name, row.seenAt]));
  const waiting = cardsWaiting(view);
  const pauses = view.where("pauses", "1 ORDER BY key").map(({ key, row }) => ({
    name: String(key), by: row.by, reason: row.reason, since: iso(row.since), until: iso(row.until),
  }));
  const paused = new Map(pauses.map(({ name, ...p }) => [name, p]));
  const today = startOfDay(now, rules.timezone);
  const usedToday = usageSince(view, today);
  const usedWeek = usageSince(view, now - 7 * 24 * 3600_000);
  const lines = rules.rules.map((r) => {
    const cron = view.get("crons", r.name);
    return {
      name: r.name, source: r.source, types: r.types, cron: r.cron, to: r.to, group: r.group, parallel: r.parallel, resume: r.resume, tell: r.tell,
      queued: active.filter((a) => a.rule === r.name && stateIn(runPendingStates, a.state)).length,
      running: active.filter((a) => a.rule === r.name && stateIn(runHeldStates, a.state)).length,
      paused: paused.get(r.name) ?? null,
      skippedAt: iso(cron?.skippedAt),
      // How many cron times were skipped one after another up to skippedAt (a pause, or one outage; at most 1000).
      // A row from before the count was kept says only that one was.
      skippedCount: cron?.skippedCount ?? (cron?.skippedAt ? 1 : 0),
      nextAt: iso(cron?.next),
      spending: { today: spendingOf(usedToday.rules.get(r.name) ?? zeroUsage()), week: spendingOf(usedWeek.rules.get(r.name) ?? zeroUsage()) },
      budget: r.budget ? budgetOf(view, r.name, r.budget, periodOf(now, rules.timezone, r.budget.per)) : null,
    };
  });
  return {
    seq,
    now: iso(now),
    timezone: rules.timezone,
    rulesVersion: meta?.version ?? 0,
    totals,
    cards,
    moreCards: cardCount - cards.length,
    recentCards,
    agents: Object.values(rules.agents).map((a) => ({
      id: a.id, name: a.name, use: a.use, worker: a.worker, access: a.access, online: seenWorker.get(a.worker)?.online ?? false,
    })),
    workers,
    channels: Object.values(rules.channels).map((ch) => ({ id: ch.id, name: ch.name, links: ch.links, seenAt: iso(channelSeen.get(ch.id)), waiting: waiting.get(ch.id) ?? 0 })),
    sources: Object.values(rules.sources).map((s) => ({ id: s.id, name: s.name, adapter: s.adapter })),
    lines,
    elsewhere: rules.elsewhere,
    runs,
    active: active.map((r) => runView(c, r)),
    nextBefore: page.nextBefore,
    hasMore: page.nextBefore !== null,
    reachedAt: iso(page.reachedAt),
    unrouted: view.where("events", "unrouted = 1 ORDER BY key DESC LIMIT ?", stateRecentEvents).map(({ row }) => eventView(row)),
    skipped: view.where("events", "skipped = 1 ORDER BY key DESC LIMIT ?", stateRecentEvents).map(({ row }) => eventView(row)),
    spending: { today: spendingOf(usedToday.all), week: spendingOf(usedWeek.all) },
    timers: before !== null ? [] : view.where("timers", "1 ORDER BY at").map(({ row }) => ({ rule: row.rule, lane: row.lane, key: row.key, about: row.about, at: iso(row.at) })),
    pauses,
    toolCalls: toolCallsSince(view, today),
  };
}

/** A rule's budget with what its current period counted against it (the `spend` row `countUsage` keeps). */
function budgetOf(view: View, rule: string, budget: Budget, period: { start: number; end: number }): NonNullable<State["lines"][number]["budget"]> {
  const spent = view.get("spend", spendKey(rule, period.start));
  return { cost: budget.cost, tokens: budget.tokens, per: budget.per, spentCost: spent?.cost ?? 0, spentTokens: spent?.tokens ?? 0, periodEnd: iso(period.end) };
}

/**
 * Tool calls that ended since `from` (ms, a quarter-hour edge: the start of a day in any time zone in use), by plugin
 * and status, from the `toolstats` quarter hours (issue 16); sorted by plugin, then status.
 */
function toolCallsSince(view: View, from: number): State["toolCalls"] {
  const counts = new Map<string, { plugin: string; status: string; count: number }>();
  for (const { row } of view.where("toolstats", "key >= ?", toolStatsKey(Math.floor(from / usageBucketMs) * usageBucketMs, ""))) {
    for (const [status, n] of Object.entries(row.counts)) {
      const k = JSON.stringify([row.plugin, status]);
      const c = counts.get(k) ?? { plugin: row.plugin, status, count: 0 };
      c.count += n ?? 0;
      counts.set(k, c);
    }
  }
  return [...counts.values()].sort((a, b) => (a.plugin === b.plugin ? (a.status < b.status ? -1 : 1) : a.plugin < b.plugin ? -1 : 1));
}

/**
 * Open cards each channel has not taken yet (no delivery `ref`), by channel id: counted in SQL over every open card,
 * so the count holds when `cards` lists only the newest.
 */
function cardsWaiting(view: View): Map<string, number> {
  const rows = view.sql(
    "SELECT j.value AS channel, COUNT(*) AS n FROM v_cards JOIN json_each(v_cards.data, '$.channels') AS j WHERE v_cards.state = 'open' " +
    "AND json_extract(v_cards.data, '$.deliveries.\"' || j.value || '\".ref') IS NULL GROUP BY 1",
  ).all() as { channel: string; n: number }[];
  return new Map(rows.map((r) => [r.channel, r.n]));
}
