/**
 * Every refusal of every /v1 endpoint, through the app itself (`app.request()`, no socket; the socket tests cover the
 * edge): a key of the wrong kind, none, an unknown one, a wrong run token, a path id that is not one, a missing field,
 * an unknown field, a value over its limit or of the wrong form, a bad query parameter, a body that is not UTF-8,
 * JSON or an object, a body over 1 MiB, and a method the path does not take. Status and text are checked exactly,
 * and no refusal writes a fact. The key refusals are made from the endpoint table; the others are listed, and the
 * test fails when an endpoint that takes a body or a query string has none of the kinds its shape can refuse.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import type { Hono } from "hono";
import { Hub } from "../src/host/hub.js";
import { createApp } from "../src/host/http.js";
import { endpoints, pathOf, type EndpointName } from "../src/protocol/endpoints.js";
import { definitions } from "../src/protocol/definitions.js";
import type { KeyKind } from "../src/kernel/types.js";
import { keyKinds } from "../src/kernel/types.js";
import { checkAnswer, makeHome, type Keys, prose } from "./helpers.js";

/** What a row refuses; the coverage check below asks for these by the shape of each endpoint. */
type What = "key" | "token" | "path" | "missing" | "unknown" | "limit" | "form" | "query" | "body" | "method";

interface Row {
  endpoint: EndpointName | null;
  what: What;
  method: string;
  path: string;
  /** A key kind, a literal bearer value, or none. */
  key?: KeyKind | "token" | { bearer: string };
  /** A JSON body, or `raw` bytes. */
  body?: unknown;
  raw?: string | ArrayBuffer;
  headers?: Record<string, string>;
  status: number;
  error: string;
}

let hub: Hub;
let app: Hono;
let keys: Keys;
let dir: string;
let token = "";
let run = 0;

before(async () => {
  const made = makeHome();
  dir = made.dir;
  keys = made.keys;
  hub = new Hub({ home: made.home, lang: "en", checkAnswer });
  await hub.start();
  app = createApp(hub);
  await ask({ method: "POST", path: "/v1/events", key: "source", body: { id: "r1", type: "alert.x" } });
  const job = (await ask({ method: "GET", path: "/v1/work?claim=refusals", key: "worker" })).body.job;
  token = job.token;
  run = job.run;
});
after(async () => {
  await hub.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Sends one request to the app (no socket) and reads the JSON answer. */
async function ask(r: Pick<Row, "method" | "path" | "key" | "body" | "raw" | "headers">): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { ...r.headers };
  const bearer = r.key === undefined ? null : r.key === "token" ? token : typeof r.key === "object" ? r.key.bearer : keys[r.key];
  if (bearer !== null) headers.authorization = `Bearer ${bearer}`;
  const body = r.raw ?? (r.body === undefined ? undefined : JSON.stringify(r.body));
  const res = await app.request(r.path, { method: r.method, headers, body });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

const kindWord = (kinds: readonly string[]) => kinds.join("/");
const missingKey = "missing Authorization: Bearer <key>";
const x = (n: number) => "x".repeat(n);
const badDate = "wrong format, expected a real ISO date-time with Z or an offset";
const notUtf8 = new Uint8Array([0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]).buffer; // {"id":"\xff"}

/** The refusals of keys, made from the table: none, an unknown one, and each kind the endpoint does not take. */
function keyRows(): Row[] {
  const rows: Row[] = [];
  for (const [name, spec] of Object.entries(endpoints) as [EndpointName, (typeof endpoints)[EndpointName]][]) {
    if (!Array.isArray(spec.auth)) continue;
    const allowed: readonly KeyKind[] = spec.auth;
    const path = pathOf(spec.path, { id: 1, name: "alerts", kind: "source", source: "shop", call: 1, key: "k", file: "a.txt", session: "0123456789ab" });
    const base = { endpoint: name, what: "key" as const, method: spec.method, path };
    rows.push({ ...base, status: 401, error: missingKey });
    rows.push({ ...base, key: { bearer: "no-such-key" }, status: 401, error: "unknown key" });
    for (const kind of keyKinds) {
      if (allowed.includes(kind)) continue;
      rows.push({ ...base, key: kind, status: 403, error: `wrong kind of key (${kind}); this needs a key of kind ${kindWord(allowed)}` });
    }
  }
  return rows;
}

/** The other refusals, endpoint by endpoint (`run` and `token` are filled in once the fixture made them). */
function listedRows(): Row[] {
  const started = `/v1/runs/${run}/started`;
  const result = `/v1/runs/${run}/result`;
  return [
    { endpoint: "postEvent", what: "missing", method: "POST", path: "/v1/events", key: "source", body: { type: "alert.x" }, status: 400, error: "id: required" },
    { endpoint: "postEvent", what: "unknown", method: "POST", path: "/v1/events", key: "source", body: { id: "a", type: "alert.x", color: "red" }, status: 400, error: "color: unknown field" },
    { endpoint: "postEvent", what: "limit", method: "POST", path: "/v1/events", key: "source", body: { id: x(201), type: "alert.x" }, status: 400, error: "id: at most 200 characters" },
    { endpoint: "postEvent", what: "limit", method: "POST", path: "/v1/events", key: "source", body: { id: "a", type: "alert.x", hops: -1 }, status: 400, error: "hops: out of range" },
    { endpoint: "postEvent", what: "form", method: "POST", path: "/v1/events", key: "source", body: { id: 7, type: "alert.x" }, status: 400, error: "id: must be string" },
    { endpoint: "postEvent", what: "form", method: "POST", path: "/v1/events", key: "source", body: { id: "a", type: "alert.x", subject: "a b" }, status: 400, error: "subject: wrong format, expected letters, digits and # . _ : / @ -" },
    { endpoint: "postEvent", what: "body", method: "POST", path: "/v1/events", key: "source", raw: "{", status: 400, error: "the request body is not valid JSON" },
    { endpoint: "postEvent", what: "body", method: "POST", path: "/v1/events", key: "source", raw: "", status: 400, error: "the request body is not valid JSON" },
    { endpoint: "postEvent", what: "body", method: "POST", path: "/v1/events", key: "source", body: [{ id: "a", type: "alert.x" }], status: 400, error: "the request body must be a JSON object" },
    { endpoint: "postEvent", what: "body", method: "POST", path: "/v1/events", key: "source", raw: notUtf8, status: 400, error: "the request body is not valid UTF-8" },
    { endpoint: "postEvent", what: "body", method: "POST", path: "/v1/events", key: "source", raw: `{"id":"${x(1024 * 1024)}"}`, status: 413, error: "the request body is larger than 1048576 bytes" },

    { endpoint: "webhook", what: "key", method: "POST", path: "/v1/in/shop", body: {}, status: 401, error: "not accepted: this address takes only webhooks signed with their source's secret" },
    { endpoint: "webhook", what: "key", method: "POST", path: "/v1/in/nowhere", body: {}, status: 401, error: "not accepted: this address takes only webhooks signed with their source's secret" },

    { endpoint: "tell", what: "unknown", method: "POST", path: "/v1/tell", key: "source", body: { key: "k", text: "t", to: "me" }, status: 400, error: "to: unknown field" },
    { endpoint: "tell", what: "missing", method: "POST", path: "/v1/tell", key: "source", body: { ask: { title: "Q" } }, status: 400, error: "ask.options: required" },
    { endpoint: "tell", what: "limit", method: "POST", path: "/v1/tell", key: "source", body: { key: "k", text: x(4001) }, status: 400, error: "text: at most 4000 characters" },
    { endpoint: "tell", what: "limit", method: "POST", path: "/v1/tell", key: "worker", body: { task: "t", ask: { title: "Q", options: ["a"], recommend: 1 } }, status: 400, error: "ask.recommend: out of range" },

    { endpoint: "work", what: "query", method: "GET", path: "/v1/work", key: "worker", status: 400, error: "claim: required, at most 100 characters" },
    { endpoint: "work", what: "query", method: "GET", path: `/v1/work?claim=${x(101)}`, key: "worker", status: 400, error: "claim: required, at most 100 characters" },
    { endpoint: "work", what: "query", method: "GET", path: "/v1/work?claim=a%0Ab", key: "worker", status: 400, error: "claim: no control characters" },
    { endpoint: "work", what: "query", method: "GET", path: "/v1/work?claim=c&wait=soon", key: "worker", status: 400, error: "query parameter wait is invalid" },
    { endpoint: "work", what: "query", method: "GET", path: "/v1/work?claim=c&capacity=1234567", key: "worker", status: 400, error: "query parameter capacity is invalid" },
    { endpoint: "work", what: "query", method: "GET", path: "/v1/work?claim=c&running=1,0", key: "worker", status: 400, error: "query parameter running is invalid" },
    { endpoint: "work", what: "query", method: "GET", path: `/v1/work?claim=c&running=${Array.from({ length: 1001 }, (_, i) => i + 1).join(",")}`, key: "worker", status: 400, error: "query parameter running is invalid" },

    { endpoint: "started", what: "token", method: "POST", path: started, body: {}, status: 401, error: missingKey },
    { endpoint: "started", what: "token", method: "POST", path: started, key: "worker", body: {}, status: 403, error: "the token is wrong or no longer valid (each claim issues a new one)" },
    { endpoint: "started", what: "path", method: "POST", path: "/v1/runs/999/started", key: "token", body: {}, status: 404, error: "no such run: 999" },
    { endpoint: "started", what: "path", method: "POST", path: "/v1/runs/x1/started", key: "token", body: {}, status: 404, error: "no such run: x1" },
    { endpoint: "started", what: "unknown", method: "POST", path: started, key: "token", body: { pid: 1 }, status: 400, error: "pid: unknown field" },
    { endpoint: "started", what: "limit", method: "POST", path: started, key: "token", body: { session: x(501) }, status: 400, error: "session: at most 500 characters" },
    { endpoint: "started", what: "form", method: "POST", path: started, key: "token", body: { link: "javascript:alert(1)" }, status: 400, error: "link: wrong format, expected an ASCII URL without spaces (not javascript: or data:)" },

    { endpoint: "result", what: "token", method: "POST", path: result, body: { outcome: "done" }, status: 401, error: missingKey },
    { endpoint: "result", what: "token", method: "POST", path: result, key: "owner", body: { outcome: "done" }, status: 403, error: "the token is wrong or no longer valid (each claim issues a new one)" },
    { endpoint: "result", what: "path", method: "POST", path: "/v1/runs/0/result", key: "token", body: { outcome: "done" }, status: 404, error: "no such run: 0" },
    { endpoint: "result", what: "missing", method: "POST", path: result, key: "token", body: { summary: "s" }, status: 400, error: "outcome: required" },
    { endpoint: "result", what: "unknown", method: "POST", path: result, key: "token", body: { outcome: "done", exit: 0 }, status: 400, error: "exit: unknown field" },
    { endpoint: "result", what: "limit", method: "POST", path: result, key: "token", body: { outcome: "done", summary: x(1001) }, status: 400, error: "summary: at most 1000 characters" },
    { endpoint: "result", what: "limit", method: "POST", path: result, key: "token", body: { outcome: "done", ask: [{ title: "Q", options: ["a", "b"], recommend: 2 }] }, status: 400, error: "ask[0].recommend: out of range" },
    { endpoint: "result", what: "limit", method: "POST", path: result, key: "token", body: { outcome: "done", notice: Array.from({ length: 51 }, () => ({ title: "n" })) }, status: 400, error: "notice: at most 50 items" },
    { endpoint: "result", what: "form", method: "POST", path: result, key: "token", body: { outcome: "maybe" }, status: 400, error: 'outcome: must be one of ["done","nothing","failed","cancelled"]' },
    { endpoint: "result", what: "form", method: "POST", path: result, key: "token", body: { outcome: "done", later: [{ key: "k", at: "2026-02-30T09:00:00Z" }] }, status: 400, error: `later[0].at: ${badDate}` },
    { endpoint: "result", what: "form", method: "POST", path: result, key: "token", raw: '{"outcome":"done","usage":{"cost":1e400}}', status: 400, error: "usage.cost: out of range" },

    { endpoint: "cardsNext", what: "query", method: "GET", path: "/v1/cards/next?wait=-1", key: "channel", status: 400, error: "query parameter wait is invalid" },

    { endpoint: "delivered", what: "missing", method: "POST", path: "/v1/cards/1/delivered", key: "channel", body: { ref: "m1" }, status: 400, error: "version: required" },
    { endpoint: "delivered", what: "unknown", method: "POST", path: "/v1/cards/1/delivered", key: "channel", body: { version: 1, ref: "m1", at: 0 }, status: 400, error: "at: unknown field" },
    { endpoint: "delivered", what: "limit", method: "POST", path: "/v1/cards/1/delivered", key: "channel", body: { version: 1, ref: x(501) }, status: 400, error: "ref: at most 500 characters" },
    { endpoint: "delivered", what: "path", method: "POST", path: "/v1/cards/one/delivered", key: "channel", body: { version: 1, ref: "m1" }, status: 404, error: "no such card: one" },

    { endpoint: "failed", what: "missing", method: "POST", path: "/v1/cards/1/failed", key: "channel", body: { error: "down" }, status: 400, error: "version: required" },
    { endpoint: "failed", what: "unknown", method: "POST", path: "/v1/cards/1/failed", key: "channel", body: { version: 1, retry: true }, status: 400, error: "retry: unknown field" },
    { endpoint: "failed", what: "limit", method: "POST", path: "/v1/cards/1/failed", key: "channel", body: { version: 1, error: x(2001) }, status: 400, error: "error: at most 2000 characters" },
    { endpoint: "failed", what: "limit", method: "POST", path: "/v1/cards/1/failed", key: "channel", body: { version: 0 }, status: 400, error: "version: out of range" },
    { endpoint: "failed", what: "path", method: "POST", path: "/v1/cards/x/failed", key: "channel", body: { version: 1 }, status: 404, error: "no such card: x" },

    { endpoint: "answer", what: "unknown", method: "POST", path: "/v1/cards/1/answer", key: "owner", body: { choice: 0, why: "x" }, status: 400, error: "why: unknown field" },
    { endpoint: "answer", what: "limit", method: "POST", path: "/v1/cards/1/answer", key: "owner", body: { text: x(4001) }, status: 400, error: "text: at most 4000 characters" },
    { endpoint: "answer", what: "limit", method: "POST", path: "/v1/cards/1/answer", key: "owner", body: { choice: -1 }, status: 400, error: "choice: out of range" },
    { endpoint: "answer", what: "form", method: "POST", path: "/v1/cards/1/answer", key: "owner", body: { text: "" }, status: 400, error: "text: must not be empty" },
    { endpoint: "answer", what: "path", method: "POST", path: "/v1/cards/0/answer", key: "owner", body: { choice: 0 }, status: 404, error: "no such card: 0" },

    { endpoint: "resolve", what: "unknown", method: "POST", path: "/v1/cards/1/resolve", key: "owner", body: { why: "x" }, status: 400, error: "why: unknown field" },
    { endpoint: "resolve", what: "limit", method: "POST", path: "/v1/cards/1/resolve", key: "owner", body: { reason: x(1001) }, status: 400, error: "reason: at most 1000 characters" },
    { endpoint: "resolve", what: "body", method: "POST", path: "/v1/cards/1/resolve", key: "owner", raw: "null", status: 400, error: "the request body must be a JSON object" },
    { endpoint: "resolve", what: "path", method: "POST", path: "/v1/cards/abc/resolve", key: "owner", raw: "", status: 404, error: "no such card: abc" },

    { endpoint: "state", what: "query", method: "GET", path: "/v1/state?before=0", key: "owner", status: 400, error: "query parameter before is invalid" },
    { endpoint: "state", what: "query", method: "GET", path: "/v1/state?state=stuck", key: "owner", status: 400, error: "query parameter state is invalid" },
    { endpoint: "state", what: "limit", method: "GET", path: `/v1/state?rule=${x(201)}`, key: "owner", status: 400, error: "query parameter rule is invalid" },
    { endpoint: "state", what: "form", method: "GET", path: "/v1/state?worker=w%0A1", key: "owner", status: 400, error: "query parameter worker is invalid" },

    { endpoint: "cancel", what: "unknown", method: "POST", path: `/v1/runs/${run}/cancel`, key: "owner", body: { now: true }, status: 400, error: "now: unknown field" },
    { endpoint: "cancel", what: "path", method: "POST", path: "/v1/runs/-1/cancel", key: "owner", body: {}, status: 404, error: "no such run: -1" },

    { endpoint: "pause", what: "path", method: "POST", path: "/v1/rules/nope/pause", key: "owner", raw: "", status: 404, error: "没有这条规则：nope" },
    { endpoint: "pause", what: "unknown", method: "POST", path: "/v1/rules/alerts/pause", key: "owner", body: { for: "1h" }, status: 400, error: "for: unknown field" },
    { endpoint: "pause", what: "limit", method: "POST", path: "/v1/rules/alerts/pause", key: "owner", body: { reason: x(1001) }, status: 400, error: "reason: at most 1000 characters" },
    { endpoint: "pause", what: "form", method: "POST", path: "/v1/rules/alerts/pause", key: "owner", body: { until: "tomorrow" }, status: 400, error: "until: wrong format, expected an ISO date-time with Z or an offset" },
    { endpoint: "pause", what: "form", method: "POST", path: "/v1/rules/alerts/pause", key: "owner", body: { until: "2030-02-30T09:00:00+08:00" }, status: 400, error: `until: ${badDate}` },

    { endpoint: "resume", what: "path", method: "POST", path: "/v1/rules/%E5%B7%A1%E6%A3%80/resume", key: "owner", body: {}, status: 404, error: "没有这条规则：巡检" },
    { endpoint: "resume", what: "unknown", method: "POST", path: "/v1/rules/alerts/resume", key: "owner", body: { reason: "x" }, status: 400, error: "reason: unknown field" },

    { endpoint: "runNow", what: "path", method: "POST", path: "/v1/rules/nope/run", key: "owner", body: {}, status: 404, error: "没有这条规则：nope" },
    { endpoint: "runNow", what: "unknown", method: "POST", path: "/v1/rules/alerts/run", key: "owner", body: { lane: "x" }, status: 400, error: "lane: unknown field" },
    { endpoint: "runNow", what: "limit", method: "POST", path: "/v1/rules/alerts/run", key: "owner", body: { reason: x(4001) }, status: 400, error: "reason: at most 4000 characters" },
    { endpoint: "runNow", what: "form", method: "POST", path: "/v1/rules/alerts/run", key: "owner", body: { subject: "#1 2" }, status: 400, error: "subject: wrong format, expected letters, digits and # . _ : / @ -" },

    { endpoint: "stream", what: "query", method: "GET", path: "/v1/stream?after=-1", key: "owner", status: 400, error: "query parameter after is invalid" },
    { endpoint: "stream", what: "query", method: "GET", path: "/v1/stream?after=0", key: "owner", headers: { "last-event-id": "x" }, status: 400, error: "query parameter after is invalid" },

    { endpoint: "card", what: "path", method: "GET", path: "/v1/cards/999", key: "owner", status: 404, error: "no such card: 999" },
    { endpoint: "card", what: "path", method: "GET", path: "/v1/cards/0x1", key: "owner", status: 404, error: "no such card: 0x1" },
    { endpoint: "why", what: "path", method: "GET", path: "/v1/runs/999/why", key: "owner", status: 404, error: "no such run: 999" },
    { endpoint: "why", what: "path", method: "GET", path: "/v1/runs/1e3/why", key: "owner", status: 404, error: "no such run: 1e3" },

    { endpoint: "keyNew", what: "path", method: "POST", path: "/v1/keys/robot/x", key: "owner", status: 400, error: "kind must be source, worker, channel, owner or metrics" },
    { endpoint: "keyNew", what: "path", method: "POST", path: "/v1/keys/source/a%20b", key: "owner", status: 400, error: "name: letters, digits, _ . - (at most 100), starting with a letter or digit" },
    { endpoint: "keyNew", what: "path", method: "POST", path: `/v1/keys/source/${x(101)}`, key: "owner", status: 400, error: "name: letters, digits, _ . - (at most 100), starting with a letter or digit" },
    { endpoint: "keyRemove", what: "path", method: "DELETE", path: "/v1/keys/robot/x", key: "owner", status: 400, error: "kind must be source, worker, channel, owner or metrics" },
    { endpoint: "keyRemove", what: "path", method: "DELETE", path: "/v1/keys/source/a%01b", key: "owner", status: 400, error: "name: 1 to 100 characters, no control characters or /" },

    { endpoint: "consoleEndOne", what: "path", method: "DELETE", path: "/v1/console/sessions/ABC", key: "owner", status: 400, error: "a console session's name is 12 hex characters, as agent-autoloop console --sessions lists them" },
    { endpoint: "consoleEndOne", what: "path", method: "DELETE", path: `/v1/console/sessions/${"a".repeat(13)}`, key: "owner", status: 400, error: "a console session's name is 12 hex characters, as agent-autoloop console --sessions lists them" },

    ...toolCallRows(),

    // The same endpoint under the name the declarative plugins' specification gives it.
    { endpoint: "tools", what: "key", method: "GET", path: "/api/tools", status: 401, error: missingKey },
    { endpoint: "tools", what: "key", method: "GET", path: "/api/tools", key: { bearer: "no-such-key" }, status: 401, error: "unknown key" },
    { endpoint: "tools", what: "key", method: "GET", path: "/api/tools", key: "worker", status: 403, error: "wrong kind of key (worker); this needs a key of kind owner" },
    { endpoint: "plugins", what: "key", method: "GET", path: "/api/plugins", key: "channel", status: 403, error: "wrong kind of key (channel); this needs a key of kind owner" },
    { endpoint: "pluginsReload", what: "key", method: "POST", path: "/api/plugins/reload", status: 401, error: missingKey },
    { endpoint: "pluginsReload", what: "key", method: "POST", path: "/api/plugins/reload", key: "source", status: 403, error: "wrong kind of key (source); this needs a key of kind owner" },

    { endpoint: null, what: "method", method: "DELETE", path: "/v1/events", key: "source", status: 404, error: "no such endpoint: DELETE /v1/events" },
    { endpoint: "events", what: "key", method: "GET", path: "/v1/events", key: "source", status: 403, error: "wrong kind of key (source); this needs a key of kind owner" },
    { endpoint: "events", what: "query", method: "GET", path: "/v1/events?before=x", key: "owner", status: 400, error: "query parameter before is invalid" },
    { endpoint: "search", what: "key", method: "GET", path: "/v1/search?q=a", key: "worker", status: 403, error: "wrong kind of key (worker); this needs a key of kind owner" },
    { endpoint: "search", what: "query", method: "GET", path: `/v1/search?q=${x(201)}`, key: "owner", status: 400, error: "query parameter q is invalid" },
    { endpoint: "transcript", what: "key", method: "GET", path: "/v1/runs/1/transcript", key: "source", status: 403, error: "wrong kind of key (source); this needs a key of kind owner" },
    { endpoint: "transcript", what: "path", method: "GET", path: "/v1/runs/999/transcript", key: "owner", status: 404, error: "no such run: 999" },
    { endpoint: "transcript", what: "query", method: "GET", path: "/v1/runs/1/transcript?after=x", key: "owner", status: 400, error: "query parameter after is invalid" },
    { endpoint: null, what: "method", method: "POST", path: "/v1/state", key: "owner", body: {}, status: 404, error: "no such endpoint: POST /v1/state" },
    { endpoint: null, what: "method", method: "GET", path: "/v1/runs/1/result", key: "token", status: 404, error: "no such endpoint: GET /v1/runs/1/result" },
    { endpoint: null, what: "method", method: "DELETE", path: "/v1/cards/1/answer", key: "owner", status: 404, error: "no such endpoint: DELETE /v1/cards/1/answer" },
    { endpoint: null, what: "method", method: "PUT", path: "/v1/keys/source/x", key: "owner", status: 404, error: "no such endpoint: PUT /v1/keys/source/x" },
    { endpoint: null, what: "method", method: "POST", path: "/v1/health", status: 404, error: "no such endpoint: POST /v1/health" },
    { endpoint: null, what: "method", method: "DELETE", path: "/v1/cards/1", key: "owner", status: 404, error: "no such endpoint: DELETE /v1/cards/1" },
    { endpoint: null, what: "method", method: "POST", path: "/v1/tools", key: "owner", status: 404, error: "no such endpoint: POST /v1/tools" },
    { endpoint: "pluginSettings", what: "path", method: "GET", path: "/v1/plugins/ghost/settings", key: "owner", status: 404, error: "no such declarative plugin loaded: ghost" },
    { endpoint: "pluginSettingSet", what: "path", method: "POST", path: "/v1/plugins/ghost/settings/x", key: "owner", body: { value: "x" }, status: 404, error: "no such declarative plugin loaded: ghost" },
    { endpoint: "pluginSettingSet", what: "missing", method: "POST", path: "/v1/plugins/ghost/settings/x", key: "owner", body: {}, status: 400, error: "value: required" },
    { endpoint: "pluginSettingSet", what: "unknown", method: "POST", path: "/v1/plugins/ghost/settings/x", key: "owner", body: { value: "x", key: "y" }, status: 400, error: "key: unknown field" },
    { endpoint: "pluginSettingSet", what: "limit", method: "POST", path: "/v1/plugins/ghost/settings/x", key: "owner", body: { value: x(4097) }, status: 400, error: "value: at most 4096 characters" },
    { endpoint: "pluginSettingSet", what: "form", method: "POST", path: "/v1/plugins/ghost/settings/x", key: "owner", body: { value: 3 }, status: 400, error: "value: must be string" },
    { endpoint: "pluginUi", what: "path", method: "GET", path: "/v1/plugins/ghost/ui", key: "owner", status: 404, error: "no such declarative plugin loaded: ghost" },
    { endpoint: "pluginEvent", what: "path", method: "POST", path: "/v1/plugins/ghost/events", key: "owner", body: { panel: "main", action: "go" }, status: 404, error: "no such declarative plugin loaded: ghost" },
    { endpoint: "pluginEvent", what: "unknown", method: "POST", path: "/v1/plugins/ghost/events", key: "owner", body: { panel: "main", action: "go", type: "x" }, status: 400, error: "type: unknown field" },
    { endpoint: "pluginEvent", what: "limit", method: "POST", path: "/v1/plugins/ghost/events", key: "owner", body: { panel: x(65), action: "go" }, status: 400, error: "panel: at most 64 characters" },
    { endpoint: "pluginEvent", what: "limit", method: "POST", path: "/v1/plugins/ghost/events", key: "owner", body: { panel: "main", form: "f", values: { v: x(4001) } }, status: 400, error: "values.v: at most 4000 characters" },
    { endpoint: "pluginEvent", what: "form", method: "POST", path: "/v1/plugins/ghost/events", key: "owner", body: { panel: "main", form: "f", values: { v: [1] } }, status: 400, error: "values.v: must be string" },
    { endpoint: null, what: "method", method: "DELETE", path: "/api/tools", key: "owner", status: 404, error: "no such endpoint: DELETE /api/tools" },
    { endpoint: null, what: "method", method: "GET", path: "/v1/plugins/reload", key: "owner", status: 404, error: "no such endpoint: GET /v1/plugins/reload" },
    { endpoint: null, what: "method", method: "POST", path: "/api/plugins", key: "owner", status: 404, error: "no such endpoint: POST /api/plugins" },
  ];
}

test("every refusal of every endpoint: exact status and text, and nothing written", async () => {
  const seq = hub.store.seq;
  const rows = [...keyRows(), ...listedRows()];
  for (const r of rows) {
    const got = await ask(r);
    const label = `${r.endpoint ?? "-"} ${r.what}: ${r.method} ${r.path.slice(0, 80)}`;
    // prose: the refusal's code and params word exactly its text (issue 27 #2), checked for every row.
    assert.deepEqual([got.status, prose(got.status, got.body)], [r.status, { error: r.error }], label);
  }
  assert.equal(hub.store.seq, seq, "no refusal wrote a fact");
  assert.ok(rows.length > 150, `${rows.length} refusals`);
});

/** The refusals of the tool-call endpoints (issue 16): run token, path, query, body; the callback takes no key. */
function toolCallRows(): Row[] {
  const calls = `/v1/runs/${run}/tools/calls`;
  const body = { tool: "hello-python.greet", argsDigest: `sha256:${"0".repeat(64)}`, preview: "{}", manifestDigest: "a".repeat(64), builtIn: false, disableModelInvocation: false, kind: "sync" };
  const wrongToken = "the token is wrong or no longer valid (each claim issues a new one)";
  return [
    { endpoint: "toolCall", what: "token", method: "POST", path: calls, body, status: 401, error: missingKey },
    { endpoint: "toolCall", what: "token", method: "POST", path: calls, key: "owner", body, status: 403, error: wrongToken },
    { endpoint: "toolCall", what: "path", method: "POST", path: "/v1/runs/999/tools/calls", key: "token", body, status: 404, error: "no such run: 999" },
    { endpoint: "toolCall", what: "missing", method: "POST", path: calls, key: "token", body: { ...body, tool: undefined }, status: 400, error: "tool: required" },
    { endpoint: "toolCall", what: "unknown", method: "POST", path: calls, key: "token", body: { ...body, args: {} }, status: 400, error: "args: unknown field" },
    // The whole arguments travel as their canonical JSON text (issue 26 #5), never as an object.
    { endpoint: "toolCall", what: "form", method: "POST", path: calls, key: "token", body: { ...body, arguments: {} }, status: 400, error: "arguments: must be string" },
    { endpoint: "toolCall", what: "limit", method: "POST", path: calls, key: "token", body: { ...body, preview: x(513) }, status: 400, error: "preview: at most 512 characters" },
    { endpoint: "toolCall", what: "form", method: "POST", path: calls, key: "token", body: { ...body, tool: "greet" }, status: 400, error: "tool: wrong format, expected <plugin>.<tool>" },
    { endpoint: "toolCall", what: "form", method: "POST", path: calls, key: "token", body: { ...body, argsDigest: "md5:00" }, status: 400, error: "argsDigest: wrong format, expected sha256:<hex> of the arguments' canonical JSON" },

    { endpoint: "toolCallGet", what: "token", method: "GET", path: `${calls}/1`, status: 401, error: missingKey },
    { endpoint: "toolCallGet", what: "path", method: "GET", path: "/v1/runs/999/tools/calls/1", key: "token", status: 404, error: "no such run: 999" },
    { endpoint: "toolCallGet", what: "path", method: "GET", path: `${calls}/77`, key: "token", status: 404, error: "no tool call 77" },
    { endpoint: "toolCallGet", what: "query", method: "GET", path: `${calls}/1?waitSeconds=soon`, key: "token", status: 400, error: "query parameter waitSeconds is invalid" },

    { endpoint: "toolCallOutcome", what: "token", method: "POST", path: `${calls}/1/outcome`, key: "worker", body: { status: "ok", durationMs: 1 }, status: 403, error: wrongToken },
    { endpoint: "toolCallOutcome", what: "path", method: "POST", path: "/v1/runs/999/tools/calls/1/outcome", key: "token", body: { status: "ok", durationMs: 1 }, status: 404, error: "no such run: 999" },
    { endpoint: "toolCallOutcome", what: "path", method: "POST", path: `${calls}/one/outcome`, key: "token", body: { status: "ok", durationMs: 1 }, status: 404, error: "no tool call one" },
    { endpoint: "toolCallOutcome", what: "missing", method: "POST", path: `${calls}/1/outcome`, key: "token", body: { status: "ok" }, status: 400, error: "durationMs: required" },
    { endpoint: "toolCallOutcome", what: "unknown", method: "POST", path: `${calls}/1/outcome`, key: "token", body: { status: "ok", durationMs: 1, result: {} }, status: 400, error: "result: unknown field" },
    { endpoint: "toolCallOutcome", what: "limit", method: "POST", path: `${calls}/1/outcome`, key: "token", body: { status: "parked", durationMs: 1, taskId: x(16), timeoutMs: 3_600_001 }, status: 400, error: "timeoutMs: out of range" },
    { endpoint: "toolCallOutcome", what: "form", method: "POST", path: `${calls}/1/outcome`, key: "token", body: { status: "denied", durationMs: 1 }, status: 400, error: 'status: must be one of ["ok","error","timeout","oom","parked"]' },

    { endpoint: "toolCallResult", what: "token", method: "GET", path: `${calls}/1/result`, key: { bearer: "not-a-token" }, status: 403, error: wrongToken },
    { endpoint: "toolCallResult", what: "path", method: "GET", path: "/v1/runs/999/tools/calls/1/result", key: "token", status: 404, error: "no such run: 999" },
    { endpoint: "toolCallResult", what: "path", method: "GET", path: `${calls}/x/result`, key: "token", status: 404, error: "no tool call x" },
    { endpoint: "toolCallResult", what: "query", method: "GET", path: `${calls}/1/result?waitSeconds=1234567`, key: "token", status: 400, error: "query parameter waitSeconds is invalid" },

    { endpoint: "transcriptPost", what: "token", method: "POST", path: `/v1/runs/${run}/transcript`, key: "owner", body: { entries: [] }, status: 403, error: wrongToken },
    { endpoint: "transcriptPost", what: "path", method: "POST", path: "/v1/runs/999/transcript", key: "token", body: { entries: [] }, status: 404, error: "no such run: 999" },
    { endpoint: "transcriptPost", what: "missing", method: "POST", path: `/v1/runs/${run}/transcript`, key: "token", body: {}, status: 400, error: "entries: required" },
    { endpoint: "transcriptPost", what: "unknown", method: "POST", path: `/v1/runs/${run}/transcript`, key: "token", body: { entries: [], more: 1 }, status: 400, error: "more: unknown field" },
    { endpoint: "transcriptPost", what: "limit", method: "POST", path: `/v1/runs/${run}/transcript`, key: "token", body: { entries: Array.from({ length: 201 }, () => ({ at: 1, attempt: 1, kind: "stdout", text: "x" })) }, status: 400, error: "entries: at most 200 items" },
    // Issue 26 round 9: an entry of another attempt, a `cut` (the hub's alone), a time no Date holds.
    { endpoint: "transcriptPost", what: "form", method: "POST", path: `/v1/runs/${run}/transcript`, key: "token", body: { entries: [{ at: 1, attempt: 1, kind: "stdout" }, { at: 1, attempt: 9, kind: "final", text: "x" }] }, status: 400, error: `entries[1]: attempt is 9, but run ${run} is on attempt 1` },
    { endpoint: "transcriptPost", what: "form", method: "POST", path: `/v1/runs/${run}/transcript`, key: "token", body: { entries: [{ at: 1, attempt: 1, kind: "cut" }] }, status: 400, error: "entries[0]: kind cannot be cut: only the hub writes it, when the transcript reaches its limit" },
    { endpoint: "transcriptPost", what: "limit", method: "POST", path: `/v1/runs/${run}/transcript`, key: "token", body: { entries: [{ at: 8_640_000_000_000_001, attempt: 1, kind: "stdout" }] }, status: 400, error: "entries[0].at: out of range" },
    { endpoint: "artifactPut", what: "token", method: "PUT", path: `/v1/runs/${run}/artifacts/a.txt`, body: { text: "t" }, status: 401, error: missingKey },
    { endpoint: "artifactPut", what: "token", method: "PUT", path: `/v1/runs/${run}/artifacts/a.txt`, key: "owner", body: { text: "t" }, status: 403, error: wrongToken },
    { endpoint: "artifactPut", what: "path", method: "PUT", path: "/v1/runs/999/artifacts/a.txt", key: "token", body: { text: "t" }, status: 404, error: "no such run: 999" },
    { endpoint: "artifactPut", what: "path", method: "PUT", path: `/v1/runs/${run}/artifacts/-a`, key: "token", body: { text: "t" }, status: 400, error: "file: a file name of letters, digits, _ . - (at most 100), not starting with . or -" },
    { endpoint: "artifactPut", what: "missing", method: "PUT", path: `/v1/runs/${run}/artifacts/a.txt`, key: "token", body: {}, status: 400, error: "text: required" },
    { endpoint: "artifactPut", what: "unknown", method: "PUT", path: `/v1/runs/${run}/artifacts/a.txt`, key: "token", body: { text: "t", file: "b" }, status: 400, error: "file: unknown field" },
    { endpoint: "artifactPut", what: "limit", method: "PUT", path: `/v1/runs/${run}/artifacts/a.txt`, key: "token", body: { text: "好".repeat(87_382) }, status: 400, error: "text: at most 262144 bytes (UTF-8)" },
    { endpoint: "artifactPut", what: "form", method: "PUT", path: `/v1/runs/${run}/artifacts/a.txt`, key: "token", body: { text: 3 }, status: 400, error: "text: must be string" },
    { endpoint: "artifact", what: "path", method: "GET", path: `/v1/runs/${run}/artifacts/a.txt`, key: "owner", status: 404, error: `run ${run} has no artifact a.txt` },
    { endpoint: "artifact", what: "path", method: "GET", path: `/v1/runs/${run}/artifacts/.hidden`, key: "owner", status: 404, error: `run ${run} has no artifact .hidden` },

    { endpoint: "ownerToolCall", what: "missing", method: "POST", path: "/v1/tools/calls", key: "owner", body: { ...body, builtIn: undefined }, status: 400, error: "builtIn: required" },
    { endpoint: "ownerToolCall", what: "unknown", method: "POST", path: "/v1/tools/calls", key: "owner", body: { ...body, session: "s" }, status: 400, error: "session: unknown field" },
    { endpoint: "ownerToolCall", what: "limit", method: "POST", path: "/v1/tools/calls", key: "owner", body: { ...body, tool: `${x(129)}.t` }, status: 400, error: "tool: wrong format, expected <plugin>.<tool>" },
    { endpoint: "ownerToolCall", what: "limit", method: "POST", path: "/v1/tools/calls", key: "owner", body: { ...body, tool: `p.${x(300)}` }, status: 400, error: "tool: at most 257 characters" },
    { endpoint: "ownerToolInvoke", what: "missing", method: "POST", path: "/v1/tools/invoke", key: "owner", body: { tool: "hello-python.greet" }, status: 400, error: "args: required" },
    { endpoint: "ownerToolInvoke", what: "unknown", method: "POST", path: "/v1/tools/invoke", key: "owner", body: { tool: "hello-python.greet", args: {}, session: "s" }, status: 400, error: "session: unknown field" },
    { endpoint: "ownerToolInvoke", what: "limit", method: "POST", path: "/v1/tools/invoke", key: "owner", body: { tool: `p.${x(300)}`, args: {} }, status: 400, error: "tool: at most 257 characters" },

    { endpoint: "ownerToolCallOutcome", what: "path", method: "POST", path: "/v1/tools/calls/0/outcome", key: "owner", body: { status: "ok", durationMs: 1 }, status: 404, error: "no tool call 0" },
    { endpoint: "ownerToolCallOutcome", what: "missing", method: "POST", path: "/v1/tools/calls/1/outcome", key: "owner", body: { durationMs: 1 }, status: 400, error: "status: required" },
    { endpoint: "ownerToolCallOutcome", what: "unknown", method: "POST", path: "/v1/tools/calls/1/outcome", key: "owner", body: { status: "ok", durationMs: 1, by: "me" }, status: 400, error: "by: unknown field" },
    { endpoint: "ownerToolCallOutcome", what: "limit", method: "POST", path: "/v1/tools/calls/1/outcome", key: "owner", body: { status: "ok", durationMs: -1 }, status: 400, error: "durationMs: out of range" },

    { endpoint: "ownerToolCallResult", what: "path", method: "GET", path: "/v1/tools/calls/5/result", key: "owner", status: 404, error: "no tool call 5" },
    { endpoint: "ownerToolCallResult", what: "query", method: "GET", path: "/v1/tools/calls/5/result?waitSeconds=-1", key: "owner", status: 400, error: "query parameter waitSeconds is invalid" },

    { endpoint: "pluginCallback", what: "path", method: "POST", path: `/v1/plugins/callback/${x(201)}`, body: { status: "success" }, status: 404, error: "no such task" },
    { endpoint: "pluginCallback", what: "path", method: "POST", path: `/plugin-callback/${x(16)}`, body: { status: "success" }, status: 404, error: "no such task" },
    { endpoint: "pluginCallback", what: "missing", method: "POST", path: `/v1/plugins/callback/${x(16)}`, body: { status: "error", error: { code: 1 } }, status: 400, error: "error.message: required" },
    { endpoint: "pluginCallback", what: "limit", method: "POST", path: `/v1/plugins/callback/${x(16)}`, body: { status: "error", error: { code: x(101), message: "m" } }, status: 400, error: "error.code: at most 100 characters" },
    { endpoint: "pluginCallback", what: "body", method: "POST", path: `/v1/plugins/callback/${x(16)}`, raw: "{", status: 400, error: "the request body is not valid JSON" },
    { endpoint: "pluginCallbackKeyed", what: "path", method: "POST", path: `/v1/plugins/callback/${x(31)}/abc-123`, body: { status: "success" }, status: 404, error: "no such task" },
    { endpoint: "pluginCallbackKeyed", what: "path", method: "POST", path: `/v1/plugins/callback/${x(32)}/abc-123`, body: { content: "any JSON" }, status: 404, error: "no such task" },
    { endpoint: "pluginCallbackKeyed", what: "missing", method: "POST", path: `/v1/plugins/callback/${x(32)}/abc-123`, body: { status: "error", error: { code: 1 } }, status: 400, error: "error.message: required" },
    { endpoint: "pluginCallbackKeyed", what: "limit", method: "POST", path: `/v1/plugins/callback/${x(32)}/abc-123`, body: { status: "error", error: { code: x(101), message: "m" } }, status: 400, error: "error.code: at most 100 characters" },
    { endpoint: "pluginCallbackKeyed", what: "body", method: "POST", path: `/v1/plugins/callback/${x(32)}/abc-123`, raw: "{", status: 400, error: "the request body is not valid JSON" },
  ];
}

test("the table covers each endpoint with the refusals its shape can make", () => {
  const rows = [...keyRows(), ...listedRows()];
  const has = (e: EndpointName, what: What) => rows.some((r) => r.endpoint === e && r.what === what);
  for (const [name, spec] of Object.entries(endpoints) as [EndpointName, (typeof endpoints)[EndpointName]][]) {
    if (Array.isArray(spec.auth) || spec.auth === "webhook") assert.ok(has(name, "key"), `${name}: a refused key`);
    if (spec.auth === "run") assert.ok(has(name, "token") && has(name, "path"), `${name}: a refused token and run`);
    if (spec.path.includes(":") && spec.auth !== "webhook") assert.ok(has(name, "path"), `${name}: a refused path parameter`);
    if ("query" in spec) assert.ok(has(name, "query"), `${name}: a refused query parameter`);
    if ("body" in spec) {
      const schema = definitions[spec.body];
      // A shape open to more fields (an async plugin's callback: plugins brought unchanged may send more) refuses none.
      if (schema.additionalProperties === false) assert.ok(has(name, "unknown"), `${name}: an unknown field`);
      if ((schema.required ?? []).length > 0 || JSON.stringify(schema).includes('"required"')) assert.ok(has(name, "missing"), `${name}: a missing field`);
      if (/"max(Length|Items|imum)"/.test(JSON.stringify(schema))) assert.ok(has(name, "limit"), `${name}: a value over its limit`);
    }
  }
  assert.ok(rows.some((r) => r.what === "method"), "a method a path does not take");
});

test("refusals use the kernel's words in the hub's language (zh)", async () => {
  const made = makeHome();
  const zh = new Hub({ home: made.home, lang: "zh", checkAnswer });
  try {
    await zh.start();
    const zhApp = createApp(zh);
    const call = async (method: string, path: string, key: string | null, body?: string) => {
      const res = await zhApp.request(path, { method, headers: key ? { authorization: `Bearer ${key}` } : {}, body });
      return [res.status, prose(res.status, await res.json())];
    };
    assert.deepEqual(await call("GET", "/v1/state", made.keys.channel), [403, { error: "这把密钥是通道的，这里要本人的" }]);
    assert.deepEqual(await call("POST", "/v1/tell", made.keys.owner, "{"), [403, { error: "这把密钥是本人的，这里要来源/接单程序的" }]);
    assert.deepEqual(await call("GET", "/v1/work", null), [401, { error: "缺少 Authorization: Bearer <密钥>" }]);
    assert.deepEqual(await call("POST", "/v1/events", made.keys.source, '{"id":"a"}'), [400, { error: "type：必填" }]);
    assert.deepEqual(await call("GET", "/v1/work?claim=c&wait=x", made.keys.worker), [400, { error: "查询参数 wait 不合法" }]);
    // what a string pattern asks for comes from the catalog too, never the schema's English description (issue 15)
    const event = (body: object) => call("POST", "/v1/events", made.keys.source, JSON.stringify({ id: "p", type: "a.b", ...body }));
    assert.deepEqual(await event({ subject: "a b" }), [400, { error: "subject：格式不对，应为 字母、数字和 # . _ : / @ -" }]);
    assert.deepEqual(await event({ summary: "a\u0007" }), [400, { error: "summary：格式不对，应为 不能有控制字符" }]);
    assert.deepEqual(await event({ type: "a b" }), [400, { error: "type：格式不对，应为 字母、数字和 . _ : / -" }]);
    const pause = (until: string) => call("POST", "/v1/rules/demo/pause", made.keys.owner, JSON.stringify({ until }));
    assert.deepEqual(await pause("bad"), [400, { error: "until：格式不对，应为 带 Z 或时差的 ISO 日期时间" }]);
    assert.deepEqual(await pause("2026-02-30T00:00:00Z"), [400, { error: "until：格式不对，应为 带 Z 或时差的真实 ISO 日期时间" }]);
  } finally {
    await zh.close();
    rmSync(made.dir, { recursive: true, force: true });
  }
});
