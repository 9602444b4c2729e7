import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { request } from "node:http";
import { hubFixture, type Fixture } from "./helpers.js";

let f: Fixture;
before(async () => {
  f = await hubFixture();
});
after(async () => {
  await f.close();
});

const post = (body: unknown, key = f.keys.source) => f.call("POST", "/v1/events", key, body);

test("an event is recorded once per source and id, routed to matching rules", async () => {
  const a = await post({ id: "12:new", type: "alert.cpu", subject: "#12", summary: "CPU high", detail: "load 9", link: "https://shop.example/12" });
  assert.equal(a.status, 200);
  assert.deepEqual(a.body, { event: a.body.event, duplicate: false, routed: ["alerts"], paused: [] });
  const seq = f.seq();
  const b = await post({ id: "12:new", type: "alert.cpu", summary: "changed text" });
  assert.equal(b.status, 200);
  assert.deepEqual(b.body, { event: a.body.event, duplicate: true, routed: ["alerts"], paused: [] });
  assert.equal(f.seq(), seq, "a duplicate writes no fact");
});

test("the same id from another source is another event", async () => {
  const a = await post({ id: "same", type: "alert.x" });
  const b = await post({ id: "same", type: "ticket.open", subject: "t1" }, f.keys.source2);
  assert.equal(b.status, 200);
  assert.notEqual(a.body.event, b.body.event);
  assert.deepEqual(b.body.routed, ["per-subject"]);
});

test("an event no rule takes is kept and listed as unrouted", async () => {
  const r = await post({ id: "u1", type: "order.paid", summary: "nobody listens" });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.routed, []);
  const state = await f.call("GET", "/v1/state", f.keys.owner);
  assert.equal(state.body.unrouted[0].eventId, "u1");
  assert.equal(state.body.unrouted[0].summary, "nobody listens");
  assert.ok(state.body.totals.unrouted >= 1);
  // The newest 20, newest first, counted by event number (10 after 9, not before it).
  const ids: number[] = [r.body.event];
  for (let i = 2; i <= 25; i++) ids.push((await post({ id: `u${i}`, type: "order.paid" })).body.event);
  const after = await f.call("GET", "/v1/state", f.keys.owner);
  assert.deepEqual(after.body.unrouted.map((e: { id: number }) => e.id), ids.slice(-20).reverse());
});

test("bad events are refused with the field named, and leave no fact", async () => {
  const cases: [unknown, number, RegExp][] = [
    [{ type: "alert.x" }, 400, /^id: required$/],
    [{ id: "x" }, 400, /^type: required$/],
    [{ id: 5, type: "alert.x" }, 400, /^id: must be string$/],
    [{ id: "x", type: "alert.x", extra: 1 }, 400, /^extra: unknown field$/],
    [{ id: "x".repeat(201), type: "alert.x" }, 400, /^id: at most 200 characters$/],
    [{ id: "好".repeat(200), type: "alert.x", subject: "a b" }, 400, /^subject: wrong format/],
    [{ id: "x", type: "alert.x", subject: "s".repeat(101) }, 400, /^subject: at most 100/],
    [{ id: "x", type: "alert.x", summary: "字".repeat(201) }, 400, /^summary: at most 200/],
    [{ id: "x", type: "alert.x", detail: "d".repeat(4001) }, 400, /^detail: at most 4000/],
    [{ id: "x", type: "alert.x", link: "https://例子.com/" }, 400, /^link: wrong format/],
    [{ id: "x", type: "alert.x", link: "javascript:alert(1)" }, 400, /^link: wrong format/],
    [{ id: "x", type: "alert.x", link: "https://a.example/" + "p".repeat(500) }, 400, /^link: at most 500/],
    [{ id: "x", type: "t".repeat(65) }, 400, /^type: at most 64/],
    [{ id: "x", type: "has space" }, 400, /^type: wrong format/],
    [{ id: "x", type: "alert.x", hops: -1 }, 400, /^hops: out of range$/],
    [{ id: "x", type: "alert.x", hops: 1.5 }, 400, /^hops: must be integer$/],
    [[1, 2], 400, /request body must be a JSON object/],
    [{ id: "nul\u0000id", type: "alert.x" }, 400, /^id: wrong format, expected no control characters$/],
    [{ id: "x", type: "alert.x", summary: "\u001b[31mred" }, 400, /^summary: wrong format, expected no control characters$/],
    [{ id: "x", type: "alert.x", detail: "ok\nlines\tand tabs\u0007bell" }, 400, /^detail: wrong format, expected no control characters except line breaks and tabs$/],
  ];
  const seq = f.seq();
  for (const [body, status, error] of cases) {
    const r = await post(body);
    assert.equal(r.status, status, JSON.stringify(body).slice(0, 80));
    assert.match(r.body.error, error, JSON.stringify(body).slice(0, 80));
  }
  const bad = await f.call("POST", "/v1/events", f.keys.source, undefined, "{not json");
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error, "the request body is not valid JSON");
  assert.equal(f.seq(), seq);
});

test("limits count code points, not UTF-16 units", async () => {
  const r = await post({ id: "😀".repeat(200), type: "alert.emoji", summary: "😀".repeat(200) });
  assert.equal(r.status, 200);
});

test("a body over 1 MiB is refused with 413", async () => {
  const seq = f.seq();
  const r = await f.call("POST", "/v1/events", f.keys.source, undefined, JSON.stringify({ id: "big", type: "alert.x", detail: "x".repeat(1024 * 1024) }));
  assert.equal(r.status, 413);
  assert.match(r.body.error, /larger than 1048576 bytes/);
  assert.equal(f.seq(), seq);
});

/** One POST /v1/events over a raw socket with a chunked body (no Content-Length) in chunks of 1 KiB: status, body and the home header. */
async function postChunked(text: string): Promise<{ status: number; body: string; home: string | undefined }> {
  const u = new URL(f.url);
  const chunks: Buffer[] = [];
  const data = Buffer.from(text);
  for (let i = 0; i < data.length; i += 1024) chunks.push(data.subarray(i, i + 1024));
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, method: "POST", path: "/v1/events", headers: { authorization: `Bearer ${f.keys.source}`, "content-type": "application/json", "transfer-encoding": "chunked" } }, (res) => {
      let body = "";
      res.on("data", (d) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode!, body, home: res.headers["x-agent-autoloop-home"] as string | undefined }));
    });
    req.on("error", (e) => ((e as NodeJS.ErrnoException).code === "EPIPE" || (e as NodeJS.ErrnoException).code === "ECONNRESET" ? undefined : reject(e)));
    for (const c of chunks) req.write(c);
    req.end();
  });
}

test("a chunked body (no length) is counted as it is read: 413 past 1 MiB, taken below", async () => {
  const seq = f.seq();
  const big = await postChunked(JSON.stringify({ id: "chunked-big", type: "alert.x", detail: "x".repeat(1024 * 1024) }));
  assert.equal(big.status, 413);
  assert.match(JSON.parse(big.body).error, /larger than 1048576 bytes/);
  assert.equal(f.seq(), seq);
  const small = await postChunked(JSON.stringify({ id: "chunked-small", type: "other.x", detail: "y".repeat(3900) }));
  assert.equal(small.status, 200, small.body);
  assert.equal(JSON.parse(small.body).duplicate, false);
  assert.equal(typeof small.home, "string", "the home header on a chunked request's answer too");
});

test("only a source key may post events", async () => {
  const seq = f.seq();
  const unauthenticatedBadBody = await post({ id: 1 }, null as unknown as string);
  assert.equal(unauthenticatedBadBody.status, 401, "the key is checked before the body");
  const none = await post({ id: "k", type: "alert.x" }, null as unknown as string);
  assert.equal(none.status, 401);
  assert.match(none.body.error, /missing Authorization/);
  const wrong = await post({ id: "k", type: "alert.x" }, "not-a-key");
  assert.equal(wrong.status, 401);
  for (const key of [f.keys.worker, f.keys.channel, f.keys.owner]) {
    const r = await post({ id: "k", type: "alert.x" }, key);
    assert.equal(r.status, 403);
    assert.match(r.body.error, /needs a key of kind source/);
  }
  assert.equal(f.seq(), seq);
});

test("unknown endpoints answer 404 JSON", async () => {
  const r = await f.call("GET", "/v1/nothing", f.keys.owner);
  assert.equal(r.status, 404);
  assert.equal(r.body.error, "no such endpoint: GET /v1/nothing");
});
