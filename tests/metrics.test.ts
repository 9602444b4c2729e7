/**
 * GET /metrics (issue 32): the owner's key or a `metrics` key reads it, nothing else does, and a metrics key reads
 * nothing else; scraped over real HTTP from a real hub and read by a real Prometheus text parser, every listed metric
 * moves when its cause happens.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import parse, { type ParsedFamily } from "parse-prometheus-text-format";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { baseRules, engine, hubFixture, prose, type Fixture } from "./helpers.js";
import { toolArgsDigest } from "../src/protocol/tool-calls.js";

/** One scrape, parsed: family name → its type and series. */
async function scrape(f: Fixture, key: string): Promise<Map<string, ParsedFamily>> {
  const res = await fetch(`${f.url}/metrics`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  return new Map(parse(await res.text()).map((m) => [m.name, m]));
}

/** The value of the series of `name` whose labels are exactly `labels` (0 when there is no such series). */
function value(m: Map<string, ParsedFamily>, name: string, labels: Record<string, string> = {}): number {
  const family = m.get(name);
  assert.ok(family, `${name} is exposed`);
  const series = family.metrics.find((s) => JSON.stringify(s.labels ?? {}) === JSON.stringify(labels));
  if (!series) return 0;
  return Number(family.type === "HISTOGRAM" ? series.count : series.value);
}

const rules = {
  ...baseRules,
  rules: [{ ...baseRules.rules[0], budget: { cost: 1, tokens: 5000, per: "day" } }, baseRules.rules[1]],
};

test("GET /metrics: the owner key or a metrics key, 401 without one, 403 with another kind; a metrics key cannot read /v1/state", async () => {
  const f = await hubFixture(baseRules);
  try {
    const get = async (path: string, key: string | null) => {
      const res = await fetch(`${f.url}${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
      // A refusal's code and params must word its error exactly (prose checks it), then only the words are compared.
      return [res.status, res.headers.get("content-type")?.startsWith("application/json") ? prose(res.status, await res.json()) : "text"];
    };
    assert.deepEqual(await get("/metrics", null), [401, { error: "missing Authorization: Bearer <key>" }]);
    assert.deepEqual(await get("/metrics", "no-such-key"), [401, { error: "unknown key" }]);
    for (const kind of ["source", "worker", "channel"] as const) {
      assert.deepEqual(await get("/metrics", f.keys[kind]), [403, { error: `wrong kind of key (${kind}); this needs a key of kind owner/metrics` }]);
    }
    assert.deepEqual(await get("/metrics", f.keys.owner), [200, "text"]);
    assert.deepEqual(await get("/metrics", f.keys.metrics), [200, "text"]);
    assert.deepEqual(await get("/v1/state", f.keys.metrics), [403, { error: "wrong kind of key (metrics); this needs a key of kind owner" }]);
    assert.deepEqual(await get("/v1/stream", f.keys.metrics), [403, { error: "wrong kind of key (metrics); this needs a key of kind owner" }]);
    assert.deepEqual(await get("/v1/work?claim=x", f.keys.metrics), [403, { error: "wrong kind of key (metrics); this needs a key of kind worker" }]);
    // The owner makes and removes metrics keys as any other kind.
    const made = await f.call("POST", "/v1/keys/metrics/grafana", f.keys.owner);
    assert.deepEqual([made.status, made.body.kind, made.body.name], [200, "metrics", "grafana"]);
    assert.deepEqual(await get("/metrics", made.body.key), [200, "text"]);
    assert.deepEqual(await get("/v1/state", made.body.key), [403, { error: "wrong kind of key (metrics); this needs a key of kind owner" }]);
    assert.deepEqual((await f.call("DELETE", "/v1/keys/metrics/grafana", f.keys.owner)).body, { ok: true, changed: true });
    assert.deepEqual(await get("/metrics", made.body.key), [401, { error: "unknown key" }]);
  } finally {
    await f.close();
  }
});

test("every listed metric moves when its cause happens, read by a Prometheus text parser", async () => {
  const f = await hubFixture(rules);
  try {
    const m0 = await scrape(f, f.keys.metrics);
    assert.equal(value(m0, "autoloop_events_total", { source: "shop" }), 0);
    assert.equal(value(m0, "autoloop_queue_depth"), 0);
    assert.equal(value(m0, "autoloop_queue_oldest_seconds"), 0);
    assert.equal(value(m0, "autoloop_budget_limit_cost_usd", { rule: "alerts" }), 1);
    assert.equal(value(m0, "autoloop_budget_limit_tokens", { rule: "alerts" }), 5000);
    assert.ok(value(m0, "autoloop_process_resident_memory_bytes") > 0);
    const facts0 = value(m0, "autoloop_facts");
    assert.equal(facts0, f.seq());
    const bytes0 = value(m0, "autoloop_database_bytes");
    assert.ok(bytes0 > 0);

    // An event queues a run.
    assert.equal((await f.call("POST", "/v1/events", f.keys.source, { id: "e1", type: "alert.x", subject: "s1" })).status, 200);
    await new Promise((r) => setTimeout(r, 30));
    const m1 = await scrape(f, f.keys.metrics);
    assert.equal(value(m1, "autoloop_events_total", { source: "shop" }), 1);
    assert.equal(value(m1, "autoloop_event_seconds"), 1);
    assert.equal(value(m1, "autoloop_runs", { state: "queued", rule: "alerts" }), 1);
    assert.equal(value(m1, "autoloop_queue_depth"), 1);
    assert.ok(value(m1, "autoloop_queue_oldest_seconds") > 0);
    assert.ok(value(m1, "autoloop_facts") > facts0);

    // A worker claims it; a channel holds a long poll meanwhile.
    const ac = new AbortController();
    const held = fetch(`${f.url}/v1/cards/next?wait=20`, { headers: { authorization: `Bearer ${f.keys.channel2}` }, signal: ac.signal }).catch(() => null);
    const claim = await f.call("GET", "/v1/work?claim=c1&capacity=1", f.keys.worker);
    const job = claim.body.job;
    await new Promise((r) => setTimeout(r, 100));
    const m2 = await scrape(f, f.keys.owner);
    assert.equal(value(m2, "autoloop_claim_seconds"), 1);
    assert.equal(value(m2, "autoloop_runs", { state: "queued", rule: "alerts" }), 0);
    assert.equal(value(m2, "autoloop_runs", { state: "claimed", rule: "alerts" }), 1);
    assert.equal(value(m2, "autoloop_queue_depth"), 0);
    assert.equal(value(m2, "autoloop_connected", { kind: "worker", name: "w1" }), 1);
    assert.equal(value(m2, "autoloop_polls_held", { kind: "channel", name: "ch2" }), 1);
    ac.abort();
    await held;
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(value(await scrape(f, f.keys.owner), "autoloop_polls_held", { kind: "channel", name: "ch2" }), 0);

    // Its result reports usage and asks the owner: a card for the channels.
    const result = await f.call("POST", `/v1/runs/${job.run}/result`, job.token, {
      outcome: "done", usage: { input: 100, output: 50, cost: 0.25 }, ask: [{ title: "Go on?", options: ["yes", "no"] }],
    });
    assert.equal(result.status, 200);
    const m3 = await scrape(f, f.keys.metrics);
    assert.equal(value(m3, "autoloop_result_seconds"), 1);
    assert.equal(value(m3, "autoloop_runs", { state: "claimed", rule: "alerts" }), 0);
    assert.equal(value(m3, "autoloop_runs", { state: "done", rule: "alerts" }), 1);
    assert.equal(value(m3, "autoloop_budget_cost_usd", { rule: "alerts" }), 0.25);
    assert.equal(value(m3, "autoloop_budget_tokens", { rule: "alerts" }), 150);
    assert.equal(value(m3, "autoloop_cards_open", { channel: "ch1" }), 1);

    // Channel ch1 takes the card and cannot deliver it.
    const next = await f.call("GET", "/v1/cards/next?wait=0", f.keys.channel);
    const card = next.body.card;
    assert.equal((await f.call("POST", `/v1/cards/${card.id}/failed`, f.keys.channel, { version: card.version, error: "down" })).status, 200);
    const m4 = await scrape(f, f.keys.metrics);
    assert.equal(value(m4, "autoloop_delivery_failures_total", { channel: "ch1" }), 1);
    assert.equal(value(m4, "autoloop_connected", { kind: "channel", name: "ch1" }), 1);

    // A tool call the owner's tool host refused is recorded denied.
    const call = await f.call("POST", "/v1/tools/calls", f.keys.owner, {
      tool: "nope.greet", argsDigest: toolArgsDigest({ name: "Ada" }), preview: '{"name":"Ada"}', refused: { code: "tools.unknown_plugin", reason: "no plugin nope" },
    });
    assert.equal(call.status, 200);
    const m5 = await scrape(f, f.keys.metrics);
    assert.equal(value(m5, "autoloop_tool_calls", { plugin: "nope", outcome: "denied" }), 1);
    assert.equal(value(m5, "autoloop_facts"), f.seq());
    assert.ok(value(m5, "autoloop_database_bytes") > bytes0, "the database grew");

    // The Grafana dashboard of docs/ reads only names the hub exposes.
    const dashboard = readFileSync(join(engine, "docs", "grafana-dashboard.json"), "utf8");
    const used = new Set([...dashboard.matchAll(/\b(autoloop_[a-z_]+)/g)].map((x) => x[1]!.replace(/_bucket$/, "")));
    assert.ok(used.size >= 15, `the dashboard uses ${used.size} names`);
    assert.deepEqual([...used].filter((n) => !m5.has(n)), []);
  } finally {
    await f.close();
  }
});
