/**
 * The client reads answers through the contract (src/protocol/client.ts): an answer of the published shape is handed
 * on typed, fields it does not know included (protocol.md 版本与兼容: clients ignore them); an answer of another shape
 * is a ProtocolError naming the field, and the CLI says so in the user's language; a refusal is a HubError with the
 * hub's text. The other side is a real HTTP server on 127.0.0.1 that answers what each case needs.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { HubClient, HubError, ProtocolError } from "../src/protocol/client.js";
import { call, CliError } from "../src/cli/connect.js";

/** What the server answers next: status, body text and content type. */
let next: { status: number; body: string; type?: string } = { status: 200, body: "{}" };
/** The last request the server got. */
let seen: { method: string; url: string; auth: string | undefined; body: string } | null = null;
let server: Server;
let url = "";

before(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      seen = { method: req.method ?? "", url: req.url ?? "", auth: req.headers.authorization, body };
      res.writeHead(next.status, { "content-type": next.type ?? "application/json" });
      res.end(next.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((r) => server.close(() => r())));

const card = { id: 3, version: 2, ref: null, kind: "ask", fyi: false, state: "open", title: "Q", text: "", options: ["a"], recommend: null, choice: null, answer: null, by: null, result: null, link: null, rule: "r", at: "2026-11-30T00:00:00.000Z" };

test("an answer of the published shape comes back typed, with fields it does not know kept; paths and bodies come from the table", async () => {
  const client = new HubClient(url, "k1");
  next = { status: 200, body: JSON.stringify({ card: { ...card, color: "blue" }, later: true }) };
  const got = await client.nextCard(5);
  assert.equal(got.card?.title, "Q");
  assert.deepEqual(seen, { method: "GET", url: "/v1/cards/next?wait=5", auth: "Bearer k1", body: "" });
  next = { status: 200, body: JSON.stringify({ changed: true, rule: "巡检 2", paused: { by: "owner", reason: null, since: "2026-11-30T00:00:00.000Z", until: null } }) };
  const paused = await client.pause("巡检 2", { reason: "up" });
  assert.equal(paused.paused.by, "owner");
  assert.deepEqual(seen, { method: "POST", url: "/v1/rules/%E5%B7%A1%E6%A3%80%202/pause", auth: "Bearer k1", body: '{"reason":"up"}' });
  next = { status: 200, body: JSON.stringify({ ok: true }) };
  await client.started(12, "tok", {});
  assert.deepEqual(seen, { method: "POST", url: "/v1/runs/12/started", auth: "Bearer tok", body: "{}" });
  next = { status: 200, body: JSON.stringify({ job: null, cancel: [4] }) };
  assert.deepEqual(await client.work({ claim: "c 1", wait: 50, running: [4, 5], capacity: 0 }), { job: null, cancel: [4] });
  assert.equal(seen?.url, "/v1/work?claim=c+1&wait=50&running=4%2C5&capacity=0");
  next = { status: 200, body: JSON.stringify({ ok: true, kind: "source", name: "shop", key: "aa_x" }) };
  assert.equal((await client.keyNew("source", "shop")).key, "aa_x");
  assert.equal(seen?.method, "POST");
  assert.equal(seen?.url, "/v1/keys/source/shop");
});

test("an answer of another shape is a ProtocolError naming the field; the CLI says so", async () => {
  const client = new HubClient(url, "k1");
  next = { status: 200, body: JSON.stringify({ card: { ...card, state: "lost" } }) };
  const e = await client.nextCard(0).then(() => null, (err: unknown) => err);
  assert.ok(e instanceof ProtocolError);
  assert.equal(e.field, "card.state");
  assert.equal(e.message, 'the answer to GET /v1/cards/next does not match the protocol: card.state: enum {"allowedValues":["open","answered","closed"]}');
  next = { status: 200, body: JSON.stringify({ changed: "yes", rule: "r" }) };
  const cli = await call(client, (c) => c.resume("r"), "en").then(() => null, (err: unknown) => err);
  assert.ok(cli instanceof CliError);
  assert.equal(cli.message, `the answer of ${url} does not match the protocol: changed: must be boolean`);
  const zh = await call(client, (c) => c.resume("r"), "zh").then(() => null, (err: unknown) => err);
  assert.equal((zh as Error).message, `${url} 的回答不合协议：changed：应为 boolean`);
  next = { status: 200, body: "not json" };
  const text = await client.health().then(() => null, (err: unknown) => err);
  assert.ok(text instanceof ProtocolError);
  assert.equal(text.field, "ok", "a body that is not JSON lacks every field");
});

test("a refusal is a HubError with the hub's text; one that is not the protocol's says its status", async () => {
  const client = new HubClient(url, null);
  next = { status: 403, body: JSON.stringify({ error: "wrong kind of key (channel); this needs a key of kind owner" }) };
  const e = await client.state().then(() => null, (err: unknown) => err);
  assert.ok(e instanceof HubError);
  assert.deepEqual([e.status, e.error, e.message], [403, "wrong kind of key (channel); this needs a key of kind owner", "wrong kind of key (channel); this needs a key of kind owner"]);
  assert.equal(seen?.auth, undefined, "no key, no header");
  next = { status: 502, body: "<html>bad gateway</html>", type: "text/html" };
  const proxy = await client.state().then(() => null, (err: unknown) => err);
  assert.ok(proxy instanceof HubError);
  assert.deepEqual([proxy.status, proxy.error, proxy.message], [502, "<html>bad gateway</html>", "<html>bad gateway</html>"]);
  next = { status: 500, body: JSON.stringify({ message: "x" }) };
  const other = await client.state().then(() => null, (err: unknown) => err);
  assert.deepEqual([(other as HubError).status, (other as HubError).error, (other as Error).message], [500, null, "HTTP 500"]);
});
