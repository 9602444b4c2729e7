/**
 * GET /v1/state (protocol.md 本人): the whole picture in one snapshot. Reads only what is current or bounded
 * (open cards, active runs, one page of runs, recent lists, the last 7 days of ended runs), never all history.
 */
import type { View } from "../kernel/view.js";
import { emptyRules } from "../kernel/view.js";
import type { EventRow, RunRow } from "../kernel/types.js";
import { stateRecentCards, stateRecentEvents, stateRunsPerPage, workerOnlineMs } from "../kernel/limits.js";
import { Ctx } from "../kernel/context.js";
import { startOfDay } from "../kernel/period.js";
import { ownerCard } from "../kernel/cards.js";
import { toolStatsKey } from "../kernel/tables.js";
import { usageBucketMs, usageOf, type UsageBucket } from "../kernel/evolve.js";
import type { Env } from "../kernel/types.js";
import type { EventView, RunView, Spending, State } from "../protocol/responses.js";

/** A time in ms as an ISO string; null stays null. */
function iso(ms: number): string;
function iso(ms: number | null | undefined): string | null;
function iso(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}

function runView(r: RunRow): RunView {
  return {
    id: r.id, rule: r.rule, lane: r.lane, state: r.state, attempt: r.attempt, failures: r.failures, manual: r.manual,
    worker: r.worker, agent: r.agent, session: r.session, link: r.link, events: r.events.length, answers: r.answers,
    createdAt: iso(r.createdAt), claimedAt: iso(r.claimedAt), startedAt: iso(r.startedAt), endedAt: iso(r.endedAt),
    readyAt: iso(r.readyAt), outcome: r.outcome, summary: r.summary, error: r.error, usage: r.usage, mergedInto: r.mergedInto,
  };
}

function eventView(e: EventRow): EventView {
  return { id: e.id, source: e.source, eventId: e.sid, type: e.type, subject: e.subject, summary: e.summary, at: iso(e.at), routed: e.routed, paused: e.paused };
}

/**
 * Sums usage of runs ended since `from` (ms): rounds, tokens, cost, and how many runs did not report each. Whole
 * quarter hours come from the `usage` buckets `evolve` keeps; only the runs that ended between `from` and the next
 * bucket edge are read one by one, so the cost does not grow with history or with the number of runs in the window.
 */
function spendingSince(view: View, from: number): Spending {
  const sum: UsageBucket = { rounds: 0, tokens: 0, costNanos: 0, missingTokens: 0, missingCost: 0 };
  const add = (b: UsageBucket) => {
    for (const k of Object.keys(sum) as (keyof UsageBucket)[]) sum[k] += b[k];
  };
  const edge = Math.ceil(from / usageBucketMs) * usageBucketMs;
  for (const { row } of view.where("runs", "ended >= ? AND ended < ?", from, edge)) {
    const share = usageOf(row);
    if (share) add(share.add);
  }
  for (const { row } of view.where("usage", "key >= ?", edge)) add(row);
  const { costNanos, ...rest } = sum;
  return { ...rest, cost: Math.round(costNanos / 1e3) / 1e6 };
}

/**
 * Builds the owner's state summary.
 * @param before run id to page from (older runs), or null for the first page.
 */
export function buildState(view: View, env: Env, now: number, seq: number, before: number | null): State {
  const meta = view.rules();
  const rules = meta?.rules ?? emptyRules();
  const c = new Ctx(view, now, env);
  const totals = view.get("meta", "totals") ?? { events: 0, unrouted: 0, runs: 0, cards: 0, openCards: 0 };
  const cards = view.where("cards", "state IN ('open', 'answered') ORDER BY key").map(({ row }) => ownerCard(c, row));
  const recentCards = view.where("cards", "state = 'closed' ORDER BY key DESC LIMIT ?", stateRecentCards).map(({ row }) => ownerCard(c, row));
  const page = view.where("runs", before === null ? "1 ORDER BY key DESC LIMIT ?" : "key < ? ORDER BY key DESC LIMIT ?", ...(before === null ? [] : [before]), stateRunsPerPage + 1);
  const hasMore = page.length > stateRunsPerPage;
  const runs = page.slice(0, stateRunsPerPage).map(({ row }) => runView(row));
  const active = view.where("runs", "state IN ('queued', 'waiting', 'claimed', 'running', 'stopping', 'uncertain') ORDER BY key").map((r) => r.row);
  const workers = view.where("workers", "1 ORDER BY key").map(({ row }) => ({
    name: row.name, seenAt: iso(row.seenAt), online: now - row.seenAt < workerOnlineMs,
  }));
  const seenWorker = new Map(workers.map((w) => [w.name, w]));
  const channelSeen = new Map(view.where("channels", "1").map(({ row }) => [row.name, row.seenAt]));
  const pauses = view.where("pauses", "1 ORDER BY key").map(({ key, row }) => ({
    name: String(key), by: row.by, reason: row.reason, since: iso(row.since), until: iso(row.until),
  }));
  const paused = new Map(pauses.map(({ name, ...p }) => [name, p]));
  const lines = rules.rules.map((r) => {
    const cron = view.get("crons", r.name);
    return {
      name: r.name, source: r.source, types: r.types, cron: r.cron, to: r.to, group: r.group, parallel: r.parallel, resume: r.resume, tell: r.tell,
      queued: active.filter((a) => a.rule === r.name && (a.state === "queued" || a.state === "waiting")).length,
      running: active.filter((a) => a.rule === r.name && ["claimed", "running", "stopping", "uncertain"].includes(a.state)).length,
      paused: paused.get(r.name) ?? null,
      skippedAt: iso(cron?.skippedAt),
      // How many cron times were skipped one after another up to skippedAt (a pause, or one outage; at most 1000).
      // A row from before the count was kept says only that one was.
      skippedCount: cron?.skippedCount ?? (cron?.skippedAt ? 1 : 0),
      nextAt: iso(cron?.next),
    };
  });
  const today = startOfDay(now, rules.timezone);
  return {
    seq,
    now: iso(now),
    timezone: rules.timezone,
    rulesVersion: meta?.version ?? 0,
    totals,
    cards,
    recentCards,
    agents: Object.values(rules.agents).map((a) => ({
      id: a.id, name: a.name, use: a.use, worker: a.worker, access: a.access, online: seenWorker.get(a.worker)?.online ?? false,
    })),
    workers,
    channels: Object.values(rules.channels).map((ch) => ({ id: ch.id, name: ch.name, links: ch.links, seenAt: iso(channelSeen.get(ch.id)) })),
    sources: Object.values(rules.sources).map((s) => ({ id: s.id, name: s.name, adapter: s.adapter })),
    lines,
    elsewhere: rules.elsewhere,
    runs,
    active: active.map(runView),
    nextBefore: hasMore ? runs[runs.length - 1]!.id : null,
    hasMore,
    unrouted: view.where("events", "unrouted = 1 ORDER BY key DESC LIMIT ?", stateRecentEvents).map(({ row }) => eventView(row)),
    skipped: view.where("events", "skipped = 1 ORDER BY key DESC LIMIT ?", stateRecentEvents).map(({ row }) => eventView(row)),
    spending: { today: spendingSince(view, today), week: spendingSince(view, now - 7 * 24 * 3600_000) },
    timers: before !== null ? [] : view.where("timers", "1 ORDER BY at").map(({ row }) => ({ rule: row.rule, lane: row.lane, key: row.key, about: row.about, at: iso(row.at) })),
    pauses,
    toolCalls: toolCallsSince(view, today),
  };
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
