/**
 * `decide` answer by answer (protocol.md 谁能做什么, 通道, 本人, Agent): the exact reply of each input the HTTP tests
 * reach only through a running hub, what a decision asks the shell to wake or park, and the kind of each fact.
 * Pure: the Clock kernel on a real SQLite file, no HTTP.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Clock, K, written } from "./clock.js";
import { baseRules } from "./helpers.js";
import { cardLinkToken } from "../src/kernel/credentials.js";
import { cardLinkValidMs, runLeaseMs, workerOfflineMs } from "../src/kernel/limits.js";
import type { Input } from "../src/kernel/types.js";

const start = "2026-11-02T08:00:00Z";
const reply = (d: { status: number; body: unknown }) => [d.status, d.body];
const kinds = (d: { committed: { kind: string }[] }) => d.committed.map((f) => f.kind);

/** A clock whose run 1 (rule alerts, worker w1) asked `receipt`'s cards, each offered to ch1 and ch2. */
function asked(receipt: Record<string, unknown> = { ask: [{ title: "Q", options: ["a", "b"] }] }, rules: unknown = baseRules) {
  const k = new Clock(rules, start);
  k.event("e1");
  const job = k.claim("c1").job!;
  const d = k.result(job.run, { outcome: "done", ...receipt });
  return { k, d };
}

const answer = (k: Clock, fields: Partial<Extract<Input, { kind: "answer" }>>) =>
  k.commit({ kind: "answer", keyHash: K.owner, card: 1, choice: null, text: null, by: null, ref: null, ...fields });

test("the kind of each fact names what happened; a decision says which long polls to wake and whether to park", () => {
  const k = new Clock(baseRules, start);
  const hb = k.commit({ kind: "work", keyHash: K.worker, claim: "h", running: [], capacity: 1 });
  assert.deepEqual([kinds(hb), hb.park, hb.wake], [["heartbeat"], true, { workers: false, channels: [] }]);
  k.event("e1");
  const claim = k.commit({ kind: "work", keyHash: K.worker, claim: "c1", running: [], capacity: 1 }) as ReturnType<Clock["commit"]> & { body: { job: { run: number } } };
  assert.deepEqual([kinds(claim), claim.park], [["claim"], false]);
  assert.deepEqual(kinds(k.commit({ kind: "work", keyHash: K.worker, claim: "c2", running: [1], capacity: 1 })), [], "a heartbeat within the minute writes nothing");
  const done = k.result(claim.body.job.run, { outcome: "done", ask: [{ title: "Q", options: ["a", "b"] }] });
  assert.deepEqual([kinds(done), done.wake], [["result"], { workers: true, channels: ["ch1", "ch2"] }]);
  const offer = k.commit({ kind: "cardsNext", keyHash: K.channel });
  assert.deepEqual([kinds(offer), offer.park], [["offer"], false]);
  const none = k.commit({ kind: "cardsNext", keyHash: K.channel });
  assert.deepEqual([kinds(none), none.park, reply(none)], [[], true, [200, { card: null }]]);
  k.now += 60_000;
  assert.deepEqual(kinds(k.commit({ kind: "cardsNext", keyHash: K.channel })), ["offer"], "the lease of a minute ran out: offered again");
  k.commit({ kind: "delivered", keyHash: K.channel, card: 1, version: 1, ref: "m" });
  k.now += 60_000;
  assert.deepEqual(kinds(k.commit({ kind: "cardsNext", keyHash: K.channel })), ["heartbeat"], "seen again after a minute, nothing to send");
  const rules = k.commit({ kind: "rules", rules: { ...k.rules, askFirst: ["x"] }, hash: "v2" });
  assert.deepEqual([reply(rules), kinds(rules), rules.wake?.workers], [[200, { ok: true, changed: true, version: 2 }], ["rules"], true]);
  const same = k.commit({ kind: "rules", rules: k.rules, hash: "v2" });
  assert.deepEqual([reply(same), kinds(same), same.wake?.workers], [[200, { ok: true, changed: false, version: 2 }], [], false]);
  const gone = k.commit({ kind: "tick", due: "later:gone" });
  assert.deepEqual([reply(gone), gone.committed], [[200, { ok: true }], []], "a deadline that is gone changes nothing");
  k.close();
});

test("a worker whose run is being stopped is answered at once, not parked", () => {
  const k = new Clock(baseRules, start);
  k.event("e1");
  const run = k.claim("c1").job!.run;
  assert.deepEqual(reply(k.commit({ kind: "cancel", keyHash: K.owner, run })), [200, { ok: true, changed: true, state: "stopping" }]);
  const hb = k.commit({ kind: "work", keyHash: K.worker, claim: "c2", running: [run], capacity: 1 });
  assert.deepEqual([reply(hb), hb.park], [[200, { job: null, cancel: [run] }], false]);
  k.advance(k.now + runLeaseMs);
  assert.equal(k.run(run).state, "cancelled");
  const token = k.token(run);
  assert.deepEqual(reply(k.commit({ kind: "started", run, token, session: null, link: null })), [409, { error: "this run has already ended" }]);
  assert.deepEqual(reply(k.commit({ kind: "result", run, token, result: { outcome: "done" } as never, hash: "h" })), [409, { error: "this run has already ended" }]);
  assert.deepEqual(reply(k.commit({ kind: "cancel", keyHash: K.owner, run })), [409, { error: "this run has already ended and cannot be stopped" }]);
  k.close();
});

test("webhook events in: only a declared source with an adapter takes them, each answered like a posted event", () => {
  const rules = { ...baseRules, sources: { ...baseRules.sources, gh: { adapter: "github" } } };
  const k = new Clock(rules, start);
  const events = [{ id: "d1", type: "issues.opened" }, { id: "d1", type: "issues.opened" }];
  assert.deepEqual(reply(k.commit({ kind: "eventsIn", source: "gh", events })), [200, {
    events: [{ event: 1, duplicate: false, routed: [], paused: [] }, { event: 1, duplicate: true, routed: [], paused: [] }],
  }]);
  for (const source of ["shop", "nope", "constructor"]) {
    assert.deepEqual(reply(k.commit({ kind: "eventsIn", source, events })), [404, { error: `rules.json declares no source ${source} with an adapter` }]);
  }
  k.close();
});

test("a channel's delivery reports and answers are checked against the card, its version and its delivery", () => {
  const { k } = asked(undefined, { ...baseRules, rules: [{ ...baseRules.rules[0], channels: ["ch2"] }] });
  const notMine = "this card is not sent to this channel";
  assert.deepEqual(reply(k.commit({ kind: "delivered", keyHash: K.channel, card: 1, version: 1, ref: "m" })), [403, { error: notMine }]);
  assert.deepEqual(reply(k.commit({ kind: "answer", keyHash: K.channel, card: 1, choice: 0, text: null, by: "ou_alice", ref: "m" })), [403, { error: notMine }]);
  k.close();
  const { k: k2 } = asked();
  const too = "version: the card has no such version (now 1)";
  assert.deepEqual(reply(k2.commit({ kind: "delivered", keyHash: K.channel, card: 1, version: 2, ref: "m" })), [400, { error: too }]);
  assert.deepEqual(reply(k2.commit({ kind: "failed", keyHash: K.channel, card: 1, version: 2, error: null })), [400, { error: too }]);
  const relay = { kind: "answer", keyHash: K.channel, card: 1, choice: 0, text: null } as const;
  assert.deepEqual(reply(k2.commit({ ...relay, by: null, ref: "m" })), [400, { error: "by: required when a channel relays an answer" }]);
  assert.deepEqual(reply(k2.commit({ ...relay, by: "ou_alice", ref: null })), [400, { error: "ref: required when a channel relays an answer" }]);
  assert.deepEqual(reply(k2.commit({ ...relay, by: "ou_alice", ref: "m" })), [409, { error: "this card has not been delivered to this channel" }]);
  assert.deepEqual(reply(k2.commit({ kind: "delivered", keyHash: K.channel, card: 1, version: 1, ref: "m" })), [200, { ok: true }]);
  assert.equal(k2.commit({ ...relay, by: "ou_alice", ref: "m" }).status, 200);
  k2.close();
});

test("a card link works until exactly seven days after the card was made", () => {
  const { k } = asked();
  const made = Date.parse(k.card(1).at);
  const token = cardLinkToken(k.env.master, 1, made);
  const link = { kind: "linkAnswer", card: 1, token, choice: 0, text: null } as const;
  k.now = made + cardLinkValidMs + 1;
  assert.deepEqual(reply(k.commit(link)), [410, { error: "This link has expired (links last 7 days from the card's creation)" }]);
  k.now = made + cardLinkValidMs;
  const d = k.commit(link);
  assert.deepEqual([d.status, (d.body as { card: { by: string } }).card.by], [200, "link"]);
  k.close();
});

test("answering a closed card says whether it was answered before it closed", () => {
  for (const [fields, error] of [
    [{}, "this card is already closed"],
    [{ choice: 1 }, "this card was already answered"],
    [{ text: "my words" }, "this card was already answered"],
  ] as const) {
    const { k } = asked();
    if ("choice" in fields || "text" in fields) assert.equal(answer(k, fields).status, 200);
    assert.deepEqual(reply(k.commit({ kind: "resolve", keyHash: K.owner, card: 1, reason: null })), [200, { ok: true, changed: true }]);
    assert.deepEqual(reply(answer(k, { choice: 0 })), [409, { error }], JSON.stringify(fields));
    k.close();
  }
});

test("a notice is answered with choice 0 (handled) or text, and its answer comes back as the owner's card", () => {
  const { k } = asked({ notice: [{ title: "N" }] });
  assert.deepEqual(reply(answer(k, { choice: 1 })), [400, { error: "choice: a notice has one option, 0 (handled)" }]);
  const d = answer(k, { choice: 0 });
  assert.equal(d.status, 200);
  const body = d.body as { ok: boolean; card: { id: number; state: string; answer: string | null; result: string; by: string } };
  assert.deepEqual([body.ok, body.card.id, body.card.state, body.card.answer, body.card.result, body.card.by], [true, 1, "closed", null, "Handled", "owner"]);
  const { k: k2 } = asked({ notice: [{ title: "N" }] });
  const texted = answer(k2, { text: "seen" }).body as { card: { state: string; answer: string } };
  assert.deepEqual([texted.card.state, texted.card.answer], ["closed", "seen"]);
  k.close();
  k2.close();
});

test("rules.json errors: one open card per error text; a new text replaces it; good rules close it", () => {
  const k = new Clock(baseRules, start);
  const bad = k.commit({ kind: "rulesError", error: "x: bad", missing: false });
  assert.deepEqual(reply(bad), [200, { ok: true, changed: true }]);
  assert.deepEqual(reply(k.commit({ kind: "rulesError", error: "x: bad", missing: false })), [200, { ok: true, changed: false }]);
  const gone = k.commit({ kind: "rulesError", error: "gone", missing: true });
  assert.deepEqual(reply(gone), [200, { ok: true, changed: true }]);
  // One key for every rules.json error (the facts write it): the new text's card takes the place of the old.
  const keys = [...written(bad, "cards"), ...written(gone, "cards")].map((c) => [c!.id, c!.key, c!.system]);
  assert.deepEqual(keys, [[1, "rules-error", "rulesError"], [1, "rules-error", "rulesError"], [2, "rules-error", "rulesError"]]);
  assert.deepEqual(k.cards().map((c) => [c.id, c.state, c.title, c.text, c.result]), [
    [1, "closed", "rules.json has an error; the old rules keep running", "x: bad", "No longer needed"],
    [2, "open", "rules.json cannot be read; the old rules keep running", "gone", null],
  ]);
  k.commit({ kind: "rules", rules: k.rules, hash: "v2" });
  assert.equal(k.card(2).state, "closed");
  k.close();
});

test("keys made over HTTP need the owner's key; made locally, no key", () => {
  const k = new Clock(baseRules, start);
  const made = (keyHash: string | null, local: boolean) => reply(k.commit({ kind: "keyNew", keyHash, local, keyKind: "source", name: "s2", newHash: "h2" }));
  const removed = (keyHash: string | null, local: boolean) => reply(k.commit({ kind: "keyRemove", keyHash, local, keyKind: "source", name: "s2" }));
  const wrong = "wrong kind of key (source); this needs a key of kind owner";
  assert.deepEqual(made(K.source, false), [403, { error: wrong }]);
  assert.deepEqual(made(K.owner, false), [200, { ok: true }]);
  assert.deepEqual(removed(K.source, false), [403, { error: wrong }]);
  assert.deepEqual(removed(K.owner, false), [200, { ok: true, changed: true }]);
  assert.deepEqual(made(null, true), [200, { ok: true }]);
  assert.deepEqual(removed(null, true), [200, { ok: true, changed: true }]);
  assert.deepEqual(removed(K.owner, false), [200, { ok: true, changed: false }], "no such key");
  k.close();
});

test("a worker not seen for ten minutes gets one offline notice, closed when it comes back", () => {
  const k = new Clock(baseRules, start);
  k.heartbeat([]);
  const before = k.seq();
  k.advance(k.now + workerOfflineMs);
  const card = k.card(1);
  assert.deepEqual([card.kind, card.title, card.text, card.state, card.rule, card.lane, card.run], [
    "notice", "Worker w1 has not been seen for 10 minutes", "Its runs stay with it. This card closes when it returns.", "open", null, "", null,
  ]);
  assert.deepEqual(written({ facts: k.stream(before) }, "cards").map((c) => [c!.id, c!.key, c!.system]), [[1, "offline:w1", "offline"]], "as the stream shows it");
  k.advance(k.now + 3 * workerOfflineMs);
  assert.deepEqual(k.cards().map((c) => c.id), [1], "one notice however long it stays away");
  k.heartbeat([]);
  assert.deepEqual([k.card(1).state, k.card(1).result], ["closed", "No longer needed"]);
  k.close();
});

test("started is taken in every state a run goes on in and refused once it ended; an ended run cannot be stopped", () => {
  for (const state of ["claimed", "running", "stopping", "uncertain"]) {
    const k = new Clock(baseRules, start);
    k.event("e1");
    const run = k.claim("c1").job!.run;
    if (state === "running") k.started(run, null);
    if (state === "stopping") k.commit({ kind: "cancel", keyHash: K.owner, run });
    if (state === "uncertain") k.advance(k.now + runLeaseMs);
    assert.equal(k.run(run).state, state);
    assert.deepEqual([reply(k.started(run, "s-1")), k.run(run).session], [[200, { ok: true }], "s-1"], state);
    k.close();
  }
  for (const outcome of ["done", "nothing", "cancelled"]) {
    const k = new Clock(baseRules, start);
    k.event("e1");
    const run = k.claim("c1").job!.run;
    k.result(run, { outcome });
    assert.equal(k.run(run).state, outcome);
    assert.deepEqual(reply(k.started(run, "s-1")), [409, { error: "this run has already ended" }], outcome);
    assert.deepEqual(reply(k.commit({ kind: "cancel", keyHash: K.owner, run })), [409, { error: "this run has already ended and cannot be stopped" }], outcome);
    k.close();
  }
});
