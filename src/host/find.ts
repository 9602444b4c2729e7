/**
 * What the owner looks for (issue 30): GET /v1/events, a page of events with the rules that took or skipped each and
 * the runs each started, and GET /v1/search, the events, runs and cards whose text has a search text, narrowed by
 * rule, group of run states, worker and time. The text is looked up in the search index beside the projection
 * (search-index.ts); everything else in the projection. Every read is bounded: a page or `searchHitsMax` rows out,
 * and without a text at most `searchScanRows` rows of each kind looked through (the newest).
 */
import type { RunSummary, View } from "../kernel/view.js";
import type { Env, EventRow, CardRow } from "../kernel/types.js";
import { Ctx } from "../kernel/context.js";
import { ownerCard } from "../kernel/cards.js";
import { eventRunsListed, eventsPerPage, searchHitsMax, searchScanRows } from "../kernel/limits.js";
import { runGroupStates, type RunGroup } from "../kernel/states.js";
import type { EventEntry, EventsPage, SearchAnswer } from "../protocol/responses.js";
import type { EventsQuery, SearchQuery } from "../protocol/schema.js";
import { eventView, runView } from "./state.js";
import { textMatch, type SearchKind } from "./search-index.js";

/** A WHERE clause being built: its conditions and their parameters, in order. */
class Where {
  readonly parts: string[] = [];
  readonly params: unknown[] = [];
  add(sql: string, ...params: unknown[]): this {
    this.parts.push(sql);
    this.params.push(...params);
    return this;
  }
  get sql(): string {
    return this.parts.length ? this.parts.join(" AND ") : "1";
  }
}

/** Narrows `w` to rows whose index text has `q` (nothing when `q` is empty). */
function withText(w: Where, kind: SearchKind, q: string | undefined): void {
  if (!q) return;
  const m = textMatch(q, kind);
  w.add(`key IN (SELECT search_text.rowid / 4 FROM search_text WHERE ${m.sql})`, ...m.params);
}

/** Milliseconds of an ISO time of the query (the schema checked its form), or null. */
const ms = (t: string | undefined): number | null => (t ? Date.parse(t) : null);

/** Narrows `w` to rows whose time `field` (ms) is at or after `from` and before `to`. */
function withTime(w: Where, field: string, from: string | undefined, to: string | undefined): void {
  if (from) w.add(`json_extract(data, '$.${field}') >= ?`, ms(from));
  if (to) w.add(`json_extract(data, '$.${field}') < ?`, ms(to));
}

/** The largest key of a table, or 0. */
function topKey(view: View, table: "events" | "runs" | "cards"): number {
  return Number((view.sql(`SELECT MAX(key) AS k FROM v_${table}`).get() as { k: number | null }).k ?? 0);
}

/** An event with its runs (the newest `eventRunsListed`) and how many there are. */
export function eventEntry(view: View, e: EventRow): EventEntry {
  const ids = (view.sql(`SELECT run FROM event_runs WHERE event = ? ORDER BY run DESC LIMIT ?`).all(e.id, eventRunsListed) as { run: number }[]).map((r) => r.run);
  const count = (view.sql(`SELECT COUNT(*) AS n FROM event_runs WHERE event = ?`).get(e.id) as { n: number }).n;
  const runs = ids.flatMap((id) => {
    const r = view.get("runs", id);
    return r ? [{ id, rule: r.rule, state: r.state }] : [];
  });
  return { ...eventView(e), unrouted: e.unrouted, internal: e.internal, runs, runCount: count, ...(e.texts ? { texts: e.texts } : {}) };
}

/** The conditions of events on a rule: taken by it, or skipped because it was paused. */
const eventOfRule = `(EXISTS (SELECT 1 FROM json_each(data, '$.routed') WHERE value = ?) OR EXISTS (SELECT 1 FROM json_each(data, '$.paused') WHERE value = ?))`;

/**
 * GET /v1/events: one page of events, newest first, older than `before`. A page reads at most `searchScanRows` event
 * ids below `before` (a range of the rowid), so a rare filter may give a short page; `nextBefore` says where the next
 * page starts, null when no older event is left.
 */
export function eventsPage(view: View, q: EventsQuery): EventsPage {
  const top = q.before ? Number(q.before) : topKey(view, "events") + 1;
  const floor = Math.max(1, top - searchScanRows);
  const w = new Where().add("key < ?", top).add("key >= ?", floor);
  withText(w, "events", q.q);
  if (q.source) w.add(`json_extract(data, '$.source') = ?`, q.source);
  if (q.rule) w.add(eventOfRule, q.rule, q.rule);
  if (q.routing === "unrouted") w.add("unrouted = 1");
  else if (q.routing === "skipped") w.add("skipped = 1");
  else if (q.routing === "routed") w.add(`json_array_length(data, '$.routed') > 0`);
  withTime(w, "at", q.from, q.to);
  const rows = view.where("events", `${w.sql} ORDER BY key DESC LIMIT ?`, ...w.params, eventsPerPage + 1).map((r) => r.row);
  const page = rows.slice(0, eventsPerPage);
  if (rows.length > eventsPerPage) return { events: page.map((e) => eventEntry(view, e)), nextBefore: page.at(-1)!.id };
  const below = floor > 1 && view.where("events", "key < ? ORDER BY key DESC LIMIT 1", floor).length > 0;
  return { events: page.map((e) => eventEntry(view, e)), nextBefore: below ? floor : null };
}

/** The runs of a group of `runGroups`, as a condition. */
function runGroupSql(group: RunGroup): string {
  if (group === "failed") return `(json_extract(data, '$.failures') > 0 OR (state = 'cancelled' AND json_extract(data, '$.error') IS NOT NULL))`;
  return `state IN (${runGroupStates[group].map((s) => `'${s}'`).join(", ")})`;
}

/**
 * The newest rows of `table` that match `w`, at most `searchHitsMax` (and whether there were more); without a search
 * text, among the newest `searchScanRows` only.
 */
function newest<T extends "events" | "runs" | "cards">(view: View, table: T, w: Where, text: boolean) {
  if (!text) w.add("key >= ?", topKey(view, table) - searchScanRows + 1);
  const clause = `${w.sql} ORDER BY key DESC LIMIT ?`;
  // Runs without their jobs (`View.runSummaries`): a hit is shown by its summary, never its job.
  const rows = (table === "runs" ? view.runSummaries(clause, ...w.params, searchHitsMax + 1) : view.where(table, clause, ...w.params, searchHitsMax + 1)).map((r) => r.row);
  return { rows: rows.slice(0, searchHitsMax), more: rows.length > searchHitsMax };
}

/**
 * GET /v1/search: the events, runs and cards whose text has `q` (any, when empty), newest first, narrowed by the
 * query's filters. A group or a worker narrows runs only, and leaves events and cards out (they have neither).
 */
export function search(view: View, env: Env, now: number, q: SearchQuery): SearchAnswer {
  const c = new Ctx(view, now, env);
  const runsOnly = Boolean(q.group || q.worker);
  const text = Boolean(q.q);

  const ew = new Where();
  withText(ew, "events", q.q);
  if (q.rule) ew.add(eventOfRule, q.rule, q.rule);
  withTime(ew, "at", q.from, q.to);
  const events = runsOnly ? { rows: [] as EventRow[], more: false } : newest(view, "events", ew, text);

  const rw = new Where();
  withText(rw, "runs", q.q);
  if (q.group) rw.add(runGroupSql(q.group));
  if (q.rule) rw.add(`json_extract(data, '$.rule') = ?`, q.rule);
  if (q.worker) rw.add(`json_extract(data, '$.worker') = ?`, q.worker);
  withTime(rw, "createdAt", q.from, q.to);
  const runs = newest(view, "runs", rw, text);

  const cw = new Where();
  withText(cw, "cards", q.q);
  if (q.rule) cw.add(`json_extract(data, '$.rule') = ?`, q.rule);
  withTime(cw, "at", q.from, q.to);
  const cards = runsOnly ? { rows: [] as CardRow[], more: false } : newest(view, "cards", cw, text);

  return {
    events: events.rows.map((e) => eventEntry(view, e as EventRow)),
    runs: runs.rows.map((r) => runView(c, r as RunSummary)),
    cards: cards.rows.map((card) => ownerCard(c, card as CardRow)),
    more: { events: events.more, runs: runs.more, cards: cards.more },
  };
}
