import { test, beforeEach, afterEach } from "node:test";
import assert from "node:assert/strict";
import { hubFixture, type Fixture } from "./helpers.js";

let f: Fixture;
beforeEach(async () => {
  f = await hubFixture();
});
afterEach(async () => {
  await f.close();
});

/** Runs one event through a worker whose receipt asks a question; returns the card id. */
async function askCard(id = "e1", receipt: Record<string, unknown> = { ask: [{ title: "Deploy?", text: "v2 is ready", options: ["yes", "no"], recommend: 0, about: "deploy note" }] }) {
  await f.call("POST", "/v1/events", f.keys.source, { id, type: "alert.deploy", subject: "#7" });
  const job = (await f.call("GET", `/v1/work?claim=${id}`, f.keys.worker)).body.job;
  await f.call("POST", `/v1/runs/${job.run}/started`, job.token, { session: `sess-${id}` });
  await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done", ...receipt });
  const state = (await f.call("GET", "/v1/state", f.keys.owner)).body;
  return state.cards.at(-1).id as number;
}

const next = (key = f.keys.channel) => f.call("GET", "/v1/cards/next", key);

test("a channel gets the card, reports it delivered, and does not get it again", async () => {
  const id = await askCard();
  const r = await next();
  assert.deepEqual({ ...r.body.card, at: "A" }, {
    id, version: 1, ref: null, kind: "ask", fyi: false, state: "open", title: "Deploy?", text: "v2 is ready",
    options: ["yes", "no"], recommend: 0, choice: null, answer: null, by: null, result: null, link: null, rule: "alerts", at: "A",
  });
  assert.equal("lane" in r.body.card, false, "channels do not see the lane");
  assert.equal("about" in r.body.card, false, "channels do not see about");
  const d = await f.call("POST", `/v1/cards/${id}/delivered`, f.keys.channel, { version: 1, ref: "om_1" });
  assert.deepEqual(d.body, { ok: true });
  assert.deepEqual((await next()).body, { card: null });
  // the other channel gets it too
  assert.equal((await next(f.keys.channel2)).body.card.id, id);
});

test("an offered card that is not reported is not offered again within the minute", async () => {
  await askCard();
  assert.notEqual((await next()).body.card, null);
  assert.deepEqual((await next()).body, { card: null });
});

test("a channel relays an answer: by must be an answerer, ref must match; the first answer wins", async () => {
  const id = await askCard();
  await next();
  await f.call("POST", `/v1/cards/${id}/delivered`, f.keys.channel, { version: 1, ref: "om_1" });
  const seq = f.seq();
  const noBy = await f.call("POST", `/v1/cards/${id}/answer`, f.keys.channel, { choice: 0, ref: "om_1" });
  assert.equal(noBy.status, 400);
  assert.equal(noBy.body.error, "by: required when a channel relays an answer");
  const stranger = await f.call("POST", `/v1/cards/${id}/answer`, f.keys.channel, { choice: 0, by: "ou_mallory", ref: "om_1" });
  assert.equal(stranger.status, 403);
  assert.equal(stranger.body.error, "by: ou_mallory is not among this channel's answerers");
  const wrongRef = await f.call("POST", `/v1/cards/${id}/answer`, f.keys.channel, { choice: 0, by: "ou_alice", ref: "om_2" });
  assert.equal(wrongRef.status, 409);
  const range = await f.call("POST", `/v1/cards/${id}/answer`, f.keys.channel, { choice: 2, by: "ou_alice", ref: "om_1" });
  assert.equal(range.status, 400);
  assert.equal(range.body.error, "choice: must be 0 to 1");
  const notDelivered = await f.call("POST", `/v1/cards/${id}/answer`, f.keys.channel2, { choice: 0, by: "anyone", ref: "x" });
  assert.equal(notDelivered.status, 409);
  assert.equal(f.seq(), seq, "refused answers leave no fact");
  const ok = await f.call("POST", `/v1/cards/${id}/answer`, f.keys.channel, { choice: 1, by: "ou_alice", ref: "om_1" });
  assert.equal(ok.status, 200);
  assert.equal(ok.body.card.state, "answered");
  assert.equal(ok.body.card.choice, 1);
  assert.equal(ok.body.card.by, "ou_alice");
  const second = await f.call("POST", `/v1/cards/${id}/answer`, f.keys.owner, { choice: 0 });
  assert.equal(second.status, 409);
  assert.equal(second.body.error, "this card was already answered");
  // the answer is an event of the lane: a run continues the asking run's session with the answer in context
  const job = (await f.call("GET", "/v1/work?claim=after", f.keys.worker)).body.job;
  assert.equal(job.session, "sess-e1");
  assert.deepEqual(job.context.events, []);
  assert.deepEqual({ ...job.context.answers[0], at: "A" }, { card: id, title: "Deploy?", options: ["yes", "no"], choice: 1, text: null, about: "deploy note", by: "ou_alice", at: "A" });
  // the channel gets the update of its message
  const upd = (await next()).body.card;
  assert.equal(upd.ref, "om_1");
  assert.equal(upd.version, 2);
  assert.equal(upd.state, "answered");
  await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done" });
  const st = (await f.call("GET", "/v1/state", f.keys.owner)).body;
  const card = st.recentCards.find((c: any) => c.id === id);
  assert.equal(card.state, "closed");
  assert.equal(card.result, "Done");
});

test("the owner answers with text; a notice closes as handled; fyi cannot be answered", async () => {
  const id = await askCard("e1", {
    ask: [{ title: "Q", options: ["a", "b"] }],
    notice: [{ title: "N", text: "note" }, { title: "F", fyi: true }],
  });
  const st = (await f.call("GET", "/v1/state", f.keys.owner)).body;
  const notice = st.cards.find((c: any) => c.title === "N");
  const fyi = st.recentCards.find((c: any) => c.title === "F");
  const ask = st.cards.find((c: any) => c.title === "Q");
  void id;
  const noChoice = await f.call("POST", `/v1/cards/${ask.id}/answer`, f.keys.owner, {});
  assert.equal(noChoice.status, 400);
  const empty = await f.call("POST", `/v1/cards/${ask.id}/answer`, f.keys.owner, { text: "" });
  assert.equal(empty.status, 400);
  assert.equal(empty.body.error, "text: must not be empty");
  const text = await f.call("POST", `/v1/cards/${ask.id}/answer`, f.keys.owner, { text: "neither, wait" });
  assert.equal(text.body.card.answer, "neither, wait");
  assert.equal(text.body.card.by, "owner");
  const bad = await f.call("POST", `/v1/cards/${notice.id}/answer`, f.keys.owner, { choice: 1 });
  assert.equal(bad.status, 400);
  const handled = await f.call("POST", `/v1/cards/${notice.id}/answer`, f.keys.owner, { choice: 0, text: "fixed by hand" });
  assert.equal(handled.body.card.state, "closed");
  assert.equal(handled.body.card.result, "Handled");
  assert.equal(handled.body.card.answer, "fixed by hand");
  const f2 = await f.call("POST", `/v1/cards/${fyi.id}/answer`, f.keys.owner, { choice: 0 });
  assert.equal(f2.status, 409);
  assert.equal(f2.body.error, "an fyi notice cannot be answered");
});

test("resolve closes a card as no longer needed; an undelivered resolved card is not sent", async () => {
  const id = await askCard();
  const r = await f.call("POST", `/v1/cards/${id}/resolve`, f.keys.owner, { reason: "fixed upstream" });
  assert.deepEqual(r.body, { ok: true, changed: true });
  const again = await f.call("POST", `/v1/cards/${id}/resolve`, f.keys.owner, {});
  assert.deepEqual(again.body, { ok: true, changed: false });
  assert.deepEqual((await next()).body, { card: null });
  const st = (await f.call("GET", "/v1/state", f.keys.owner)).body;
  assert.equal(st.recentCards[0].result, "No longer needed: fixed upstream");
});

test("a receipt resolves an earlier card of the same source and group; others are rejected", async () => {
  const first = await askCard("e1");
  await f.call("POST", "/v1/events", f.keys.source, { id: "e2", type: "alert.deploy" });
  const job = (await f.call("GET", "/v1/work?claim=e2", f.keys.worker)).body.job;
  assert.deepEqual(job.context.open.map((c: any) => c.card), [first]);
  const r = await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done", resolve: [{ card: first, reason: "verified in logs" }] });
  assert.deepEqual(r.body, { rejected: [] });
  const st = (await f.call("GET", "/v1/state", f.keys.owner)).body;
  assert.equal(st.recentCards.find((c: any) => c.id === first).result, "No longer needed: verified in logs");
});

test("a failed delivery is retried later; a wrong version is refused", async () => {
  const id = await askCard();
  await next();
  const tooNew = await f.call("POST", `/v1/cards/${id}/failed`, f.keys.channel, { version: 5, error: "x" });
  assert.equal(tooNew.status, 400);
  const r = await f.call("POST", `/v1/cards/${id}/failed`, f.keys.channel, { version: 1, error: "HTTP 500" });
  assert.deepEqual(r.body, { ok: true });
  assert.deepEqual((await next()).body, { card: null }, "not again at once");
  const st = (await f.call("GET", "/v1/state", f.keys.owner)).body;
  assert.deepEqual(st.cards[0].deliveries.ch1, { ref: null, version: 0, failures: 1, gaveUp: false, error: "HTTP 500" });
});

test("cards endpoints check keys and ids", async () => {
  const id = await askCard();
  const seq = f.seq();
  const cases: [string, string, string | null, unknown, number, RegExp][] = [
    ["GET", "/v1/cards/next", f.keys.owner, undefined, 403, /key of kind channel/],
    ["GET", "/v1/cards/next", null, undefined, 401, /missing/],
    ["POST", `/v1/cards/${id}/delivered`, f.keys.worker, { version: 1, ref: "r" }, 403, /key of kind channel/],
    ["POST", `/v1/cards/${id}/delivered`, f.keys.channel, { version: 1 }, 400, /^ref: required$/],
    ["POST", `/v1/cards/${id}/delivered`, f.keys.channel, { version: 1, ref: "r".repeat(501) }, 400, /^ref: at most 500/],
    ["POST", `/v1/cards/999/delivered`, f.keys.channel, { version: 1, ref: "r" }, 404, /^no such card: 999$/],
    ["POST", `/v1/cards/${id}/answer`, f.keys.source, { choice: 0 }, 403, /kind channel\/owner/],
    ["POST", `/v1/cards/${id}/answer`, f.keys.owner, { choice: 0, text: "t".repeat(4001) }, 400, /^text: at most 4000/],
    ["POST", `/v1/cards/${id}/answer`, f.keys.channel, { choice: 0, by: "b".repeat(501), ref: "r" }, 400, /^by: at most 500/],
    ["POST", `/v1/cards/${id}/resolve`, f.keys.channel, {}, 403, /owner/],
    ["POST", `/v1/cards/${id}/resolve`, f.keys.owner, { why: 1 }, 400, /^why: unknown field$/],
  ];
  for (const [method, path, key, body, status, error] of cases) {
    const r = await f.call(method, path, key, body);
    assert.equal(r.status, status, `${method} ${path}`);
    assert.match(r.body.error, error, `${method} ${path}`);
  }
  assert.equal(f.seq(), seq);
});
