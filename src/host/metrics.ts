/**
 * `GET /metrics` (issue 32): the hub's figures in the Prometheus text format, through `prom-client`. What the hub
 * already keeps is read when Prometheus scrapes, from the projection, the presence of workers and channels and the
 * database file, so no request and no commit writes anything for it. What only a request knows — how long a claim,
 * an event and a result took, a channel's failed deliveries — is counted in memory here (`HubFigures`), a few numbers
 * per request, and starts from zero with the process as Prometheus counters do. prom-client (~12 MB, ~80 ms to load)
 * is loaded at the first scrape, so a hub that is never scraped does not pay for it (issue 32: idle RSS and start).
 * The names are listed in docs/metrics.md; docs/grafana-dashboard.json is built on them.
 */
import { statSync } from "node:fs";
import type { Registry } from "prom-client";
import type { Store } from "./store.js";
import type { Presence } from "./presence.js";
import { metricsChannelLabelsMax } from "../kernel/limits.js";

/** Upper bounds (seconds) of the latency histograms' buckets: from half a millisecond to 5 s. */
export const latencyBucketsSeconds = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5] as const;

/** One latency histogram: a count per bucket (not cumulative), their sum (s) and count; a constant size. */
export class Latency {
  readonly counts = latencyBucketsSeconds.map(() => 0);
  /** Observations above the last bucket. */
  over = 0;
  sum = 0;
  count = 0;

  /** Counts one duration in seconds. */
  observe(seconds: number): void {
    const i = latencyBucketsSeconds.findIndex((le) => seconds <= le);
    if (i < 0) this.over += 1;
    else this.counts[i]! += 1;
    this.sum += seconds;
    this.count += 1;
  }

  /** Counts the time since `startMs` (a `performance.now()` reading). */
  since(startMs: number): void {
    this.observe((performance.now() - startMs) / 1000);
  }
}

/**
 * What the HTTP layer counts for /metrics, since this process started: the latency of claims (a GET /v1/work's
 * decision that handed out a job, to its durable answer), of accepted events (POST /v1/events and webhooks) and of
 * accepted results, and each channel's reported failed deliveries (at most `metricsChannelLabelsMax` channels by
 * name; the rest under `other`).
 */
export class HubFigures {
  readonly claim = new Latency();
  readonly event = new Latency();
  readonly result = new Latency();
  readonly deliveryFailures = new Map<string, number>();

  /** A channel reported a delivery it could not make (POST /v1/cards/:id/failed, accepted). */
  deliveryFailed(channel: string): void {
    const name = this.deliveryFailures.has(channel) || this.deliveryFailures.size < metricsChannelLabelsMax ? channel : "other";
    this.deliveryFailures.set(name, (this.deliveryFailures.get(name) ?? 0) + 1);
  }
}

/** What a scrape reads: the store, the presence of workers and channels, the in-memory figures and the clock. */
export interface MetricsSource {
  store: Store;
  presence: Presence;
  figures: HubFigures;
  now(): number;
}

/** The content type of the text format (prom-client's `Registry.PROMETHEUS_CONTENT_TYPE`). */
export const metricsContentType = "text/plain; version=0.0.4; charset=utf-8";

type Row = Record<string, string | number | null>;
type Labels = Record<string, string>;

/** The scrapes' registry, made at the first scrape with prom-client loaded then. */
const registries = new WeakMap<MetricsSource, Promise<Registry>>();

/** Every metric as the Prometheus text exposition format 0.0.4. */
export async function metricsText(source: MetricsSource): Promise<string> {
  let reg = registries.get(source);
  if (!reg) registries.set(source, (reg = makeRegistry(source)));
  return (await reg).metrics();
}

/** The label value of a name that may be null or empty ("" is no value in Prometheus: the series would lose it). */
const label = (v: string | number | null | undefined) => (v === null || v === undefined || v === "" ? "none" : String(v));

async function makeRegistry(src: MetricsSource): Promise<Registry> {
  const prom = await import("prom-client");
  const register = new prom.Registry();
  prom.collectDefaultMetrics({ register, prefix: "autoloop_" });
  const db = src.store.db;
  const all = (sql: string, ...args: unknown[]) => db.prepare(sql).all(...args) as Row[];

  /** A gauge (or a counter: `counter`) whose series are set from `rows()` at each scrape. */
  const fromRows = (kind: "gauge" | "counter", name: string, help: string, labelNames: string[], rows: () => { labels: Labels; value: number }[]) => {
    const set = (m: { reset(): void }, each: (l: Labels, v: number) => void) => {
      m.reset();
      for (const r of rows()) each(r.labels, r.value);
    };
    if (kind === "gauge") new prom.Gauge({ name, help, labelNames, registers: [register], collect() { set(this, (l, v) => this.set(l, v)); } });
    else new prom.Counter({ name, help, labelNames, registers: [register], collect() { set(this, (l, v) => this.inc(l, v)); } });
  };

  // The source is the part of the events' indexed `sk` column before its NUL: the index is read, not the rows (the
  // planner scans the table unless told: 57 against 8 ms at 30k events; evolve.ts names the events' first index).
  fromRows("counter", "autoloop_events_total", "Events recorded, by source (from the projection: every event the hub holds).", ["source"], () =>
    all(`SELECT substr(sk, 1, instr(sk, char(0)) - 1) AS source, count(*) AS n FROM v_events INDEXED BY v_events_i0 GROUP BY 1`).map((r) => ({ labels: { source: label(r.source) }, value: Number(r.n) })));
  fromRows("gauge", "autoloop_runs", "Runs by state and rule.", ["state", "rule"], () =>
    all(`SELECT state, rule, count(*) AS n FROM v_runs GROUP BY 1, 2`).map((r) => ({ labels: { state: label(r.state), rule: label(r.rule) }, value: Number(r.n) })));
  fromRows("gauge", "autoloop_queue_depth", "Runs queued for a worker.", [], () =>
    all(`SELECT count(*) AS n FROM v_runs WHERE state = 'queued'`).map((r) => ({ labels: {}, value: Number(r.n) })));
  fromRows("gauge", "autoloop_queue_oldest_seconds", "How long the longest-queued run has been ready (0 with none queued).", [], () =>
    all(`SELECT min(json_extract(data, '$.readyAt')) AS at FROM v_runs WHERE state = 'queued'`).map((r) => ({ labels: {}, value: r.at === null ? 0 : Math.max(0, (src.now() - Number(r.at)) / 1000) })));
  fromRows("gauge", "autoloop_cards_open", "Open cards, by channel they go to (a card for two channels counts for each; none: the console only).", ["channel"], () =>
    all(`SELECT j.value AS channel, count(*) AS n FROM v_cards LEFT JOIN json_each(v_cards.data, '$.channels') AS j WHERE v_cards.state = 'open' GROUP BY 1`)
      .map((r) => ({ labels: { channel: label(r.channel) }, value: Number(r.n) })));
  fromRows("counter", "autoloop_delivery_failures_total", "Deliveries a channel reported failed (POST /v1/cards/:id/failed), since the hub started.", ["channel"], () =>
    [...src.figures.deliveryFailures].map(([channel, n]) => ({ labels: { channel }, value: n })));
  fromRows("gauge", "autoloop_tool_calls", "Tool calls the hub holds, by plugin and status (ok, error, timeout, oom, denied, or still going on).", ["plugin", "outcome"], () =>
    all(`SELECT json_extract(data, '$.plugin') AS plugin, json_extract(data, '$.status') AS status, count(*) AS n FROM v_calls GROUP BY 1, 2`)
      .map((r) => ({ labels: { plugin: label(r.plugin), outcome: label(r.status) }, value: Number(r.n) })));
  const budget = (field: "cost" | "tokens") => () => {
    const now = src.now();
    // The table also holds the owner's "resume for the rest of the period" rows (`{ rule, until }`): told apart by shape.
    const rows = all(`SELECT data FROM v_spend`).map((r) => JSON.parse(String(r.data)) as Partial<{ rule: string; start: number; end: number; cost: number; tokens: number }>);
    return rows.filter((r) => typeof r.start === "number" && typeof r.end === "number" && r.start <= now && now < r.end)
      .map((r) => ({ labels: { rule: r.rule! }, value: r[field] ?? 0 }));
  };
  fromRows("gauge", "autoloop_budget_cost_usd", "Reported cost of a rule in its current budget period (USD).", ["rule"], budget("cost"));
  fromRows("gauge", "autoloop_budget_tokens", "Reported tokens of a rule in its current budget period.", ["rule"], budget("tokens"));
  const limits = (field: "cost" | "tokens") => () => (src.store.view.rules()?.rules.rules ?? [])
    .flatMap((r) => (r.budget?.[field] == null ? [] : [{ labels: { rule: r.name }, value: r.budget[field]! }]));
  fromRows("gauge", "autoloop_budget_limit_cost_usd", "A rule's cost budget per period (USD), for the rules that have one.", ["rule"], limits("cost"));
  fromRows("gauge", "autoloop_budget_limit_tokens", "A rule's token budget per period, for the rules that have one.", ["rule"], limits("tokens"));
  fromRows("gauge", "autoloop_connected", "Whether a worker or channel is polling the hub (1) or went silent (0), since the hub started.", ["kind", "name"], () =>
    src.presence.list().map((p) => ({ labels: { kind: p.kind, name: p.name }, value: p.silent ? 0 : 1 })));
  fromRows("gauge", "autoloop_polls_held", "Long polls the hub holds now, by worker or channel.", ["kind", "name"], () =>
    src.presence.list().map((p) => ({ labels: { kind: p.kind, name: p.name }, value: p.held })));
  fromRows("gauge", "autoloop_facts", "Facts in the log (the last fact's sequence number).", [], () => [{ labels: {}, value: src.store.seq }]);
  fromRows("gauge", "autoloop_database_bytes", "Size of the SQLite database file and its write-ahead log (bytes).", [], () => {
    const size = (f: string) => { try { return statSync(f).size; } catch { return 0; } };
    return [{ labels: {}, value: db.memory ? 0 : size(db.name) + size(`${db.name}-wal`) }];
  });

  for (const [name, what, l] of [["autoloop_claim_seconds", "a claim (GET /v1/work that handed out a job): its decision to its durable answer", src.figures.claim],
    ["autoloop_event_seconds", "an accepted event (POST /v1/events, POST /v1/in/:source), request to answer", src.figures.event],
    ["autoloop_result_seconds", "an accepted result (POST /v1/runs/:id/result), request to answer", src.figures.result]] as const) {
    // The registry's type asks for one of prom-client's classes; it reads only `name`, `help`, `type` and `get()`.
    register.registerMetric(histogram(name, `Latency of ${what}, since the hub started (seconds).`, l) as unknown as Parameters<Registry["registerMetric"]>[0]);
  }
  return register;
}

/** One series of a metric as prom-client's registry formats it (its `MetricValue` with a `metricName`). */
interface Series { labels: Record<string, string | number>; value: number; metricName: string }

/**
 * A histogram prom-client's registry formats from a `Latency`: prom-client's own Histogram observes values itself
 * and cannot take counts kept elsewhere, and the registry formats any object with a name and `get()`.
 */
function histogram(name: string, help: string, l: Latency) {
  return {
    name, help, type: "histogram",
    get: async () => {
      let cumulative = 0;
      const values: Series[] = latencyBucketsSeconds.map((le, i) => ({ labels: { le }, value: (cumulative += l.counts[i]!), metricName: `${name}_bucket` }));
      values.push({ labels: { le: "+Inf" }, value: cumulative + l.over, metricName: `${name}_bucket` });
      values.push({ labels: {}, value: l.sum, metricName: `${name}_sum` }, { labels: {}, value: l.count, metricName: `${name}_count` });
      return { name, help, type: "histogram", aggregator: "sum", values };
    },
  };
}
