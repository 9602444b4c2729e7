/** The fact stream (SSE) and `why` (protocol.md 日志与确定性). */
import { test } from "node:test";
import assert from "node:assert/strict";
import { hashKey } from "../src/kernel/credentials.js";
import { timeline } from "../src/cli/why.js";
import { hubFixture, readSse, until, type Fixture } from "./helpers.js";
import type { Fact } from "../src/protocol/responses.js";

async function loop(f: Fixture) {
  await f.call("POST", "/v1/events", f.keys.source, { id: "w1", type: "alert.x", subject: "#3", summary: "disk full" });
  const job = (await f.call("GET", "/v1/work?claim=a", f.keys.worker)).body.job;
  await f.call("POST", `/v1/runs/${job.run}/started`, job.token, { session: "sess-why" });
  await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done", summary: "asked", ask: [{ title: "Clean up?", options: ["yes", "no"] }] });
  await f.call("POST", "/v1/cards/1/answer", f.keys.owner, { choice: 0 });
}

test("the stream sends every fact from the start in order, without key hashes, then live ones; resumes after Last-Event-ID", async () => {
  const f = await hubFixture();
  try {
    await loop(f);
    const total = f.seq();
    const res = await fetch(`${f.url}/v1/stream?after=0`, { headers: { authorization: `Bearer ${f.keys.owner}` } });
    assert.equal(res.headers.get("content-type"), "text/event-stream");
    const { msgs, reader } = await readSse(res, (m) => m.length >= total);
    assert.deepEqual(msgs.map((m) => Number(m.id)), Array.from({ length: total }, (_, i) => i + 1));
    assert.ok(msgs.every((m) => m.event === "fact" && m.data.seq === Number(m.id) && m.data.v === 1));
    const text = JSON.stringify(msgs);
    for (const k of Object.values(f.keys)) {
      assert.equal(text.includes(hashKey(k)), false, "no key hash is ever sent");
      assert.equal(text.includes(k), false, "no key");
    }
    // live: a new fact arrives on the open stream
    reader.releaseLock();
    const live = res.body!.getReader();
    await f.call("POST", "/v1/events", f.keys.source, { id: "live", type: "zzz" });
    let got = "";
    while (!got.includes('"live"')) got += new TextDecoder().decode((await live.read()).value);
    assert.match(got, new RegExp(`id: ${total + 1}`));
    await live.cancel();
    const resumed = await fetch(`${f.url}/v1/stream`, { headers: { authorization: `Bearer ${f.keys.owner}`, "last-event-id": String(total) } });
    const r2 = await readSse(resumed, (m) => m.length >= 1);
    assert.equal(r2.msgs[0]!.id, String(total + 1));
    await r2.reader.cancel();
    assert.equal((await f.call("GET", "/v1/stream", f.keys.source)).status, 403);
  } finally {
    await f.close();
  }
});

test("removing the owner key closes its stream", async () => {
  const f = await hubFixture();
  try {
    const second = (await f.call("POST", "/v1/keys/owner/viewer", f.keys.owner)).body.key;
    const res = await fetch(`${f.url}/v1/stream?after=${f.seq()}`, { headers: { authorization: `Bearer ${second}` } });
    const reader = res.body!.getReader();
    await f.call("DELETE", "/v1/keys/owner/viewer", f.keys.owner);
    let done = false;
    await until(async () => {
      const r = await reader.read();
      done = r.done;
      return done;
    }, 10_000, "the stream to end");
    assert.equal(done, true);
  } finally {
    await f.close();
  }
});

test("why: the run's timeline — event, claim, session, receipt, answer, follow-up — with no rule bodies", async () => {
  const f = await hubFixture();
  try {
    await loop(f);
    const why = await f.call("GET", "/v1/runs/1/why", f.keys.owner);
    assert.equal(why.status, 200);
    assert.equal(JSON.stringify(why.body).includes('"agents"'), false, "no rule bodies");
    const lines = timeline(1, why.body.facts).map((l) => l.slice(16));
    assert.deepEqual(lines, [
      "event from shop: #3 — disk full",
      "queued for a worker",
      "picked up by w1 · try 1",
      "the agent started · session sess-why",
      "card #1 question: Clean up?",
      "done — asked",
      "card #1 answered: yes (by you)",
      "an answer to the card \"Clean up?\"",
      "follow-up run #2",
    ]);
    assert.match(timeline(1, why.body.facts)[0]!, /^\d{2}-\d{2} \d{2}:\d{2}:\d{2}  /);
    assert.equal((await f.call("GET", "/v1/runs/99/why", f.keys.owner)).status, 404);
    assert.equal((await f.call("GET", "/v1/runs/1/why", f.keys.worker)).status, 403);
  } finally {
    await f.close();
  }
});

test("why says each thing about a card once: created, each channel's delivery, the answer", () => {
  const at = "2026-11-30T01:00:00.000Z";
  const card = { id: 1, run: 1, version: 1, kind: "ask", fyi: false, title: "Pick", options: ["a", "b"], state: "open", choice: null, answer: null, by: null, deliveries: {} };
  const fact = (seq: number, kind: string, row: object): Fact => ({ v: 1, seq, at, kind, changes: [["cards", "1", row]] });
  const lines = timeline(1, [
    fact(1, "result", card),
    fact(2, "delivered", { ...card, deliveries: { file: { version: 1, ref: "file-1" } } }),
    fact(3, "delivered", { ...card, deliveries: { file: { version: 1, ref: "file-1" }, desktop: { version: 1, ref: "skipped-1" } } }),
    fact(4, "answer", { ...card, state: "answered", choice: 1, by: "owner", deliveries: { file: { version: 1, ref: "file-1" }, desktop: { version: 1, ref: "skipped-1" } } }),
    fact(5, "delivered", { ...card, state: "answered", choice: 1, by: "owner", version: 2, deliveries: { file: { version: 2, ref: "file-1" }, desktop: { version: 2, ref: "skipped-1" } } }),
  ]).map((l) => l.slice(16));
  assert.deepEqual(lines, [
    "card #1 question: Pick",
    "card #1 delivered to file (file-1)",
    "card #1 delivered to desktop (skipped-1)",
    "card #1 answered: b (by you)",
  ]);
  // Channel names are chosen by people: one named "answered" is a channel like any other.
  const named = timeline(1, [
    fact(1, "delivered", { ...card, deliveries: { answered: { version: 1, ref: "m-1" } } }),
    fact(2, "answer", { ...card, state: "answered", choice: 0, by: "owner", deliveries: { answered: { version: 1, ref: "m-1" } } }),
  ]).map((l) => l.slice(16));
  assert.deepEqual(named, ["card #1 question: Pick", "card #1 delivered to answered (m-1)", "card #1 answered: a (by you)"]);
});
