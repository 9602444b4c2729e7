/** Card delivery through time (protocol.md 通道): retries with growing gaps, giving up after an hour, fyi windows, tell modes. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Clock, K } from "./clock.js";
import { baseRules } from "./helpers.js";
import { hashKey } from "../src/kernel/credentials.js";

const oneChannel = { ...baseRules, channels: { ch1: { name: "One" } } };

function askCard(k: Clock, receipt: Record<string, unknown> = { ask: [{ title: "Q", options: ["a", "b"] }] }) {
  k.now += 1000;
  k.event(`e${k.now}`);
  const job = k.claim(`c${k.now}`).job!;
  k.result(job.run, { outcome: "done", ...receipt });
}

const next = (k: Clock) => k.nextCard();

test("a first send that keeps failing is retried with growing gaps and given up after an hour; the card stays open", () => {
  const k = new Clock(oneChannel, "2026-11-02T08:00:00Z");
  askCard(k);
  const first = k.now;
  const gaps: number[] = [];
  for (;;) {
    const card = next(k);
    if (!card) break;
    k.commit({ kind: "failed", keyHash: K.channel, card: card.id, version: card.version, error: "HTTP 500" });
    const at = k.nextOfferAt();
    if (at === null) break;
    gaps.push((at - k.now) / 1000);
    k.now = at;
  }
  assert.deepEqual(gaps.slice(0, 6), [30, 60, 120, 240, 480, 900]);
  assert.ok(k.now - first <= 60 * 60_000 + 1);
  const s = k.state();
  assert.equal(s.cards[0].state, "open");
  assert.equal(s.cards[0].deliveries.ch1.gaveUp, true);
  assert.equal(next(k), null);
  k.close();
});

test("an offered card not reported comes again after a minute", () => {
  const k = new Clock(oneChannel, "2026-11-02T08:00:00Z");
  askCard(k);
  assert.notEqual(next(k), null);
  k.now += 59_000;
  assert.equal(next(k), null);
  k.now += 1_000;
  assert.equal(next(k)?.id, 1);
  k.close();
});

test("an fyi notice is closed at creation yet delivered within 24 h, not after", () => {
  const k = new Clock(oneChannel, "2026-11-02T08:00:00Z");
  askCard(k, { notice: [{ title: "FYI", fyi: true }, { title: "later one", fyi: true }] });
  const a = next(k)!;
  assert.deepEqual([a.title, a.state, a.fyi], ["FYI", "closed", true]);
  k.commit({ kind: "delivered", keyHash: K.channel, card: a.id, version: a.version, ref: "m1" });
  k.advance(Date.parse("2026-11-03T08:00:01Z"));
  const offered: string[] = [];
  for (let card = next(k); card; card = next(k)) offered.push(card.title);
  assert.equal(offered.includes("later one"), false, "the second fyi expired undelivered");
  k.close();
});

test("tell: always sends a card for every finished run; never drops the receipt's notices but not its asks", () => {
  const rules = (tell: string) => ({ ...oneChannel, rules: [{ ...baseRules.rules[0], tell }] });
  const always = new Clock(rules("always"), "2026-11-02T08:00:00Z");
  askCard(always, { summary: "fixed it" });
  assert.deepEqual(always.state().recentCards.map((c) => [c.title, c.text, c.fyi]), [['"alerts" is done', "fixed it", true]]);
  askCard(always, { notice: [{ title: "own" }] });
  assert.equal(always.state().recentCards.length, 1, "a run that made its own card gets no extra one");
  always.close();
  const never = new Clock(rules("never"), "2026-11-02T08:00:00Z");
  askCard(never, { notice: [{ title: "quiet" }], ask: [{ title: "still asked", options: ["x"] }] });
  assert.deepEqual(never.state().cards.map((c) => c.title), ["still asked"]);
  never.close();
});

test("a rule's channels filter where its cards go", () => {
  const rules = { ...baseRules, rules: [{ ...baseRules.rules[0], channels: ["ch2"] }] };
  const k = new Clock(rules, "2026-11-02T08:00:00Z");
  askCard(k);
  assert.equal(next(k), null, "ch1 is not among the rule's channels");
  assert.deepEqual(k.state().cards[0].channels, ["ch2"]);
  k.close();
});

test("a channel named like a property every object inherits (constructor) keeps its own deliveries, answers and links", () => {
  const rules = { ...baseRules, channels: { constructor: { name: "C", answerers: ["ou_bob"], links: true } } };
  const k = new Clock(rules, "2026-11-02T08:00:00Z");
  const C = hashKey("constructor-channel");
  k.commit({ kind: "keyNew", keyHash: null, local: true, keyKind: "channel", name: "constructor", newHash: C });
  askCard(k);
  const nextC = () => k.nextCard(C)!;
  const gaps: number[] = [];
  for (let i = 0; i < 3; i++) {
    const card = nextC();
    assert.deepEqual([card.id, card.ref], [1, null]);
    k.commit({ kind: "failed", keyHash: C, card: card.id, version: card.version, error: "HTTP 500" });
    const at = k.nextOfferAt()!;
    gaps.push((at - k.now) / 1000);
    k.now = at;
  }
  assert.deepEqual(gaps, [30, 60, 120]);
  assert.deepEqual(k.state().cards[0].deliveries, {
    constructor: { ref: null, version: 0, failures: 3, gaveUp: false, error: "HTTP 500" },
  });
  assert.equal((Object as unknown as Record<string, unknown>).failures, undefined, "nothing written onto Object");
  const card = nextC();
  k.commit({ kind: "delivered", keyHash: C, card: card.id, version: card.version, ref: "m1" });
  assert.equal(k.state().cards[0].deliveries["constructor" as string]!.ref, "m1");
  const refused = k.commit({ kind: "answer", keyHash: C, card: 1, choice: 0, text: null, by: "ou_mallory", ref: "m1" });
  assert.equal(refused.status, 403, "only the channel's answerers may answer");
  assert.equal(k.commit({ kind: "answer", keyHash: C, card: 1, choice: 0, text: null, by: "ou_bob", ref: "m2" }).status, 409, "the answer names the message the channel sent");
  assert.equal(k.commit({ kind: "answer", keyHash: C, card: 1, choice: 0, text: null, by: "ou_bob", ref: "m1" }).status, 200);
  assert.deepEqual([k.state().cards[0].state, k.state().cards[0].by], ["answered", "ou_bob"]);
  k.close();
});
