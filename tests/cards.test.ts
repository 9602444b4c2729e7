/**
 * Cards (protocol.md 通道, 回执, 本人): which cards are equal while open, what each channel is offered after a change,
 * what a delivery report and a failure report record, when a channel's poll is written to the log, how answers and
 * resolves close cards. First on the real kernel and a real SQLite file with the clock in the test's hands, then over
 * real HTTP: the exact shapes and refusals of the cards endpoints.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { Clock, K, written } from "./clock.js";
import { baseRules, hubEachTest } from "./helpers.js";
import type { Job, WorkAnswer } from "../src/protocol/responses.js";
import { contextOpenCardsMax } from "../src/kernel/limits.js";

const twoRules = {
  ...baseRules,
  channels: { ch1: { name: "One" }, ch2: { name: "Two" } },
  rules: [
    { name: "alerts", when: { source: "shop", types: ["alert.*"] }, to: "bot" },
    { name: "other", when: { source: "shop", types: ["other.*"] }, to: "bot2" },
    { name: "lanes", when: { source: "shop", types: ["lane.*"] }, to: "bot", parallel: 2 },
  ],
};

/** One event of `type` through a run whose receipt is `receipt`; returns the run id. */
function receipt(k: Clock, receipt: Record<string, unknown>, type = "alert.x", subject?: string): number {
  k.now += 1000;
  k.commit({ kind: "event", keyHash: K.source, event: { id: `e${k.now}`, type, ...(subject ? { subject } : {}) } as never });
  const worker = type.startsWith("other") ? K.worker2 : K.worker;
  const job = k.claim(`c${k.now}`, worker).job!;
  k.result(job.run, { outcome: "done", ...receipt });
  return job.run;
}

const next = (k: Clock, key = K.channel) => k.nextCard(key);
/** The fyi offers the hub's timer ends by `at` (ms): the deadlines `fyiExpire:<card>` due by then. */
const fyiExpiry = (k: Clock, at: number) => k.dueKeys(at).filter((d) => d.startsWith("fyiExpire:"));
const ask = (title: string, more: Record<string, unknown> = {}) => ({ ask: [{ title, options: ["a", "b"], ...more }] });

test("an equal card is made once while open: same rule, lane and key, else title and text; again once it is not open", () => {
  const k = new Clock(twoRules, "2026-11-02T08:00:00Z");
  receipt(k, ask("Q", { text: "a" }));
  receipt(k, ask("Q", { text: "a" }));
  assert.equal(k.cards().length, 1, "the same title and text while the first is open");
  receipt(k, ask("Q", { text: "b" }));
  receipt(k, ask("Q"));
  receipt(k, ask("Q", { text: "" }));
  assert.deepEqual(k.cards().map((c) => [c.id, c.title, c.text]), [[1, "Q", "a"], [2, "Q", "b"], [3, "Q", ""]], "no text is the same as an empty text");
  receipt(k, ask("X", { key: "k1" }));
  receipt(k, ask("Y", { key: "k1" }));
  receipt(k, ask("X"));
  receipt(k, ask("X"));
  assert.deepEqual(k.cards().slice(3).map((c) => [c.id, c.title]), [[4, "X"], [5, "X"]], "a key decides equality instead of the title: Y is card 4 again, X without a key is not");
  receipt(k, ask("Q", { text: "a" }), "other.x");
  assert.deepEqual([k.card(6).rule, k.card(6).title], ["other", "Q"], "another rule's card in the same lane is not equal");
  receipt(k, ask("Q", { text: "a" }), "lane.x", "s1");
  receipt(k, ask("Q", { text: "a" }), "lane.x", "s2");
  receipt(k, ask("Q", { text: "a" }), "lane.x", "s2");
  assert.deepEqual(k.cards().slice(6).map((c) => [c.id, c.rule, c.lane]), [[7, "lanes", "s1"], [8, "lanes", "s2"]], "another lane's card is not equal");
  assert.equal(k.state().totals.openCards, 8);
  // no longer open: the same card can be made again
  k.commit({ kind: "answer", keyHash: K.owner, card: 1, choice: 0, text: null, by: null, ref: null });
  assert.equal(k.state().totals.openCards, 7);
  k.commit({ kind: "resolve", keyHash: K.owner, card: 4, reason: null });
  assert.equal(k.state().totals.openCards, 6);
  const job = k.claim("after-answer").job!;
  k.result(job.run, { outcome: "done", ...ask("Q", { text: "a" }), notice: [{ title: "Z", key: "k1" }] });
  assert.deepEqual(k.cards().slice(8).map((c) => [c.id, c.kind, c.title, c.state]), [[9, "ask", "Q", "open"], [10, "notice", "Z", "open"]]);
  assert.equal(k.card(1).state, "closed", "the answered card closed when its run ended");
  assert.equal(k.state().totals.openCards, 8);
  k.close();
});

test("an fyi notice: the same run never sends the same one twice, another run may", () => {
  const k = new Clock(twoRules, "2026-11-02T08:00:00Z");
  receipt(k, { notice: [{ title: "F", fyi: true }, { title: "F", fyi: true }, { title: "G", fyi: true, key: "g" }, { title: "H", fyi: true, key: "g" }] });
  assert.deepEqual(k.cards().map((c) => [c.id, c.title, c.state, c.run]), [[1, "F", "closed", 1], [2, "G", "closed", 1]]);
  receipt(k, { notice: [{ title: "F", fyi: true }, { title: "F" }] });
  assert.deepEqual(k.cards().slice(2).map((c) => [c.id, c.title, c.fyi, c.state, c.run]), [[3, "F", true, "closed", 2], [4, "F", false, "open", 2]]);
  assert.deepEqual(k.state().totals.openCards, 1, "an fyi notice is never an open card");
  k.close();
});

test("after a change a channel that shows the card gets the update; one that never got it gets nothing", () => {
  const k = new Clock(twoRules, "2026-11-02T08:00:00Z");
  k.commit({ kind: "keyNew", keyHash: null, local: true, keyKind: "channel", name: "ch2", newHash: "h-ch2" });
  receipt(k, ask("Q"));
  assert.equal(next(k)?.id, 1);
  k.commit({ kind: "delivered", keyHash: K.channel, card: 1, version: 1, ref: "m1" });
  k.commit({ kind: "answer", keyHash: K.owner, card: 1, choice: 1, text: null, by: null, ref: null });
  const upd = next(k)!;
  assert.deepEqual([upd.id, upd.version, upd.ref, upd.state, upd.choice], [1, 2, "m1", "answered", 1]);
  assert.equal(next(k, "h-ch2"), null, "ch2 never got the card and it is no longer open");
  k.commit({ kind: "delivered", keyHash: K.channel, card: 1, version: 2, ref: "m1" });
  // its run ends: the card closes, the update goes to ch1 only
  const job = k.claim("c-answer").job!;
  k.result(job.run, { outcome: "done" });
  assert.deepEqual([next(k)?.version, k.card(1).state], [3, "closed"]);
  assert.equal(next(k, "h-ch2"), null);
  k.close();
});

test("a card still open goes on to channels that have not taken it yet; a resolved one does not", () => {
  const k = new Clock(twoRules, "2026-11-02T08:00:00Z");
  k.commit({ kind: "keyNew", keyHash: null, local: true, keyKind: "channel", name: "ch2", newHash: "h-ch2" });
  receipt(k, { notice: [{ title: "N1" }, { title: "N2" }] });
  assert.deepEqual({ ...next(k), at: "A" }, {
    id: 1, version: 1, ref: null, kind: "notice", fyi: false, state: "open", title: "N1", text: "", options: [], recommend: null,
    choice: null, answer: null, by: null, result: null, link: null, rule: "alerts", at: "A",
  });
  k.commit({ kind: "delivered", keyHash: K.channel, card: 1, version: 1, ref: "m1" });
  k.commit({ kind: "resolve", keyHash: K.owner, card: 2, reason: "gone" });
  assert.deepEqual([next(k, "h-ch2")?.id, next(k, "h-ch2")], [1, null], "ch2 still gets the open card, not the resolved one");
  assert.equal(next(k), null, "ch1 never got card 2");
  k.close();
});

test("a delivery report: the reported version ends the offer, an older one brings the newest back, a repeat writes nothing", () => {
  const k = new Clock(twoRules, "2026-11-02T08:00:00Z");
  receipt(k, ask("Q"));
  assert.equal(next(k)?.version, 1);
  // answered while ch1 sends version 1: the card is no longer open and ch1 has no message yet
  k.commit({ kind: "answer", keyHash: K.owner, card: 1, choice: 0, text: null, by: null, ref: null });
  k.commit({ kind: "delivered", keyHash: K.channel, card: 1, version: 1, ref: "m1" });
  const again = next(k)!;
  assert.deepEqual([again.version, again.ref, again.state], [2, "m1", "answered"], "the newest version is offered at once");
  k.commit({ kind: "delivered", keyHash: K.channel, card: 1, version: 2, ref: "m1" });
  k.now += 60_000;
  assert.equal(next(k), null, "the newest version was delivered: not offered again");
  assert.deepEqual(k.card(1).deliveries.ch1, { ref: "m1", version: 2, failures: 0, gaveUp: false, error: null });
  const repeat = k.commit({ kind: "delivered", keyHash: K.channel, card: 1, version: 2, ref: "m1" });
  assert.deepEqual([repeat.body, repeat.committed], [{ ok: true }, []], "a repeated report writes nothing");
  assert.equal(next(k), null, "and offers nothing");
  // a late report of an older version while the newest is offered does not offer it again
  const job = k.claim("c-answer").job!;
  k.result(job.run, { outcome: "done" });
  assert.equal(next(k)?.version, 3);
  k.commit({ kind: "delivered", keyHash: K.channel, card: 1, version: 2, ref: "m1" });
  assert.equal(next(k), null, "version 3 stays leased");
  k.now += 60_000;
  assert.equal(next(k)?.version, 3, "and is offered again when its lease ends");
  // another message for an older version: the ref changes, the version stays the newest reported
  k.commit({ kind: "delivered", keyHash: K.channel, card: 1, version: 1, ref: "m0" });
  assert.deepEqual([k.card(1).deliveries.ch1!.ref, k.card(1).deliveries.ch1!.version], ["m0", 2]);
  k.close();
});

test("a failed update is recorded without a retry; the next delivery report clears the error", () => {
  const k = new Clock(twoRules, "2026-11-02T08:00:00Z");
  receipt(k, ask("Q"));
  next(k);
  k.commit({ kind: "delivered", keyHash: K.channel, card: 1, version: 1, ref: "m1" });
  k.commit({ kind: "answer", keyHash: K.owner, card: 1, choice: 0, text: null, by: null, ref: null });
  assert.equal(next(k)?.version, 2);
  k.commit({ kind: "failed", keyHash: K.channel, card: 1, version: 2, error: null });
  assert.deepEqual(k.card(1).deliveries.ch1, { ref: "m1", version: 1, failures: 1, gaveUp: false, error: "failed" });
  k.now += 60 * 60_000;
  assert.equal(next(k), null, "an update that failed is not retried");
  const report = k.commit({ kind: "delivered", keyHash: K.channel, card: 1, version: 1, ref: "m1" });
  assert.equal(report.committed.length, 1, "a report of the same message clears the error");
  assert.deepEqual(k.card(1).deliveries.ch1, { ref: "m1", version: 1, failures: 1, gaveUp: false, error: null });
  k.close();
});

test("a first send that fails: retries 30 s doubling to 15 min, the last one at the hour, then given up; a later delivery still counts", () => {
  const k = new Clock({ ...twoRules, channels: { ch1: { name: "One" } } }, "2026-11-02T08:00:00Z");
  receipt(k, ask("Q"));
  const first = k.now;
  const gaps: number[] = [];
  for (let card = next(k); card; card = next(k)) {
    k.commit({ kind: "failed", keyHash: K.channel, card: 1, version: 1, error: `HTTP ${gaps.length}` });
    const at = k.nextOfferAt(); // when the hub wakes the channel again, if ever
    if (at === null) break;
    gaps.push((at - k.now) / 1000);
    k.now = at - 1;
    assert.equal(next(k), null, "not before its time");
    k.now += 1;
  }
  assert.deepEqual(gaps, [30, 60, 120, 240, 480, 900, 900, 870]);
  assert.equal(k.now - first, 60 * 60_000);
  assert.deepEqual(k.card(1).deliveries.ch1, { ref: null, version: 0, failures: 9, gaveUp: true, error: "HTTP 8" });
  k.commit({ kind: "delivered", keyHash: K.channel, card: 1, version: 1, ref: "m1" });
  assert.deepEqual(k.card(1).deliveries.ch1, { ref: "m1", version: 1, failures: 9, gaveUp: false, error: null });
  k.close();
});

test("a channel's polls are written at most once a minute", () => {
  const k = new Clock(twoRules, "2026-11-02T08:00:00Z");
  const seq = k.seq();
  assert.equal(next(k), null);
  assert.equal(k.seq(), seq + 1, "the first poll is written");
  k.now += 59_999;
  next(k);
  assert.equal(k.seq(), seq + 1, "not again within the minute");
  k.now += 1;
  next(k);
  assert.equal(k.seq(), seq + 2);
  assert.equal(k.state().channels.find((c) => c.id === "ch1")!.seenAt, "2026-11-02T08:01:00.000Z");
  k.close();
});

test("the channel sees the earliest offer first; the owner's view has no ref and no link", () => {
  const k = new Clock({ ...twoRules, channels: { ch1: { name: "One", links: true } } }, "2026-11-02T08:00:00Z");
  k.env.publicUrl = "https://hub.example";
  receipt(k, { notice: [{ title: "A" }] });
  receipt(k, { notice: [{ title: "B" }] });
  const a = next(k)!;
  assert.equal(a.id, 1);
  assert.match(a.link!, /^https:\/\/hub\.example\/c\/1\/[A-Za-z0-9_-]{43}$/);
  k.commit({ kind: "failed", keyHash: K.channel, card: 1, version: 1, error: "x" });
  assert.equal(next(k)?.id, 2, "card 1 waits for its retry");
  k.now += 29_999;
  assert.equal(next(k), null, "card 2 is leased and card 1 waits for 30 s from its failure");
  k.now += 1;
  assert.equal(next(k)?.id, 1);
  const owner = k.state().cards[0];
  assert.deepEqual([owner.ref, owner.link], [null, null]);
  k.env.publicUrl = null;
  k.now += 60_000;
  assert.equal(next(k)!.link, null, "no link without a public address");
  k.close();
});

test("an answer becomes an event of the card's lane at the asking run's depth, and a run on the asking run's session", () => {
  const k = new Clock(twoRules, "2026-11-02T08:00:00Z");
  k.commit({ kind: "event", keyHash: K.source, event: { id: "deep", type: "lane.x", subject: "s1", hops: 3 } as never });
  const job = k.claim("c1").job!;
  k.commit({ kind: "started", run: job.run, token: job.token, session: "sess-s1", link: null });
  k.result(job.run, { outcome: "done", ...ask("Q") });
  receipt(k, ask("R")); // rule alerts, lane "", no session
  const first = k.commit({ kind: "answer", keyHash: K.owner, card: 1, choice: 1, text: null, by: null, ref: null });
  const second = k.commit({ kind: "answer", keyHash: K.owner, card: 2, choice: 0, text: null, by: null, ref: null });
  const events = [...written(first, "events"), ...written(second, "events")];
  assert.deepEqual(events.map((e) => [e!.source, e!.sid, e!.type, e!.subject, e!.summary, e!.hops, e!.routed, e!.internal]), [
    ["shop", "card:1:answer", "card.answer", "s1", "Q", 3, ["lanes"], "answer"],
    ["shop", "card:2:answer", "card.answer", null, "R", 0, ["alerts"], "answer"],
  ]);
  assert.deepEqual(written(first, "runs").map((r) => [r!.lane, r!.hops]), [["s1", 3]], "the run it makes is as deep as its event");
  const a = k.claim("c3").job!;
  assert.deepEqual([a.rule.name, k.run(a.run).lane, k.run(a.run).answers, a.session], ["lanes", "s1", [1], "sess-s1"], "the asking run's session, continued by its agent");
  const b = k.claim("c4").job!;
  assert.deepEqual([b.rule.name, k.run(b.run).lane, k.run(b.run).answers, b.session], ["alerts", "", [2], null]);
  k.close();
});

test("an answer to a card whose rule is gone is recorded, and nothing runs", () => {
  const k = new Clock(twoRules, "2026-11-02T08:00:00Z");
  receipt(k, ask("Q"));
  k.loadRules({ ...twoRules, rules: twoRules.rules.filter((r) => r.name !== "alerts") });
  const totals = k.state().totals;
  const r = k.commit({ kind: "answer", keyHash: K.owner, card: 1, choice: 1, text: "ok", by: null, ref: null });
  assert.equal(r.status, 200);
  assert.deepEqual([k.card(1).state, k.card(1).choice, k.card(1).answer, k.card(1).by], ["answered", 1, "ok", "owner"]);
  assert.deepEqual([k.state().totals.runs, k.state().totals.events, written(r, "events")], [totals.runs, totals.events, []], "no event, no run");
  k.close();
});

test("resolving an answered card keeps its answer and who gave it", () => {
  const k = new Clock(twoRules, "2026-11-02T08:00:00Z");
  receipt(k, ask("Q"));
  k.commit({ kind: "answer", keyHash: K.owner, card: 1, choice: null, text: "wait", by: null, ref: null });
  k.commit({ kind: "resolve", keyHash: K.owner, card: 1, reason: null });
  assert.deepEqual([k.card(1).state, k.card(1).answer, k.card(1).by, k.card(1).result], ["closed", "wait", "owner", "No longer needed"]);
  k.close();
});

test("a card a channel has not taken yet waits for it past a day; an fyi notice does not", () => {
  const k = new Clock(twoRules, "2026-11-02T08:00:00Z");
  receipt(k, { notice: [{ title: "N" }, { title: "F", fyi: true }] });
  const day = 24 * 60 * 60_000;
  assert.deepEqual([fyiExpiry(k, k.now + day - 1), fyiExpiry(k, k.now + day)], [[], ["fyiExpire:2"]], "only the fyi notice's offer ends, a day on");
  k.advance(k.now + 25 * 60 * 60_000);
  const offered: string[] = [];
  for (let got = next(k); got; got = next(k)) offered.push(got.title);
  assert.deepEqual(offered, ["N", "Worker w1 has not been seen for 10 minutes"]);
  k.close();
});

test("a channel removed from the rules still gets the cards made for it, without a link", () => {
  const k = new Clock(twoRules, "2026-11-02T08:00:00Z");
  k.env.publicUrl = "https://hub.example";
  k.commit({ kind: "keyNew", keyHash: null, local: true, keyKind: "channel", name: "ch2", newHash: "h-ch2" });
  receipt(k, ask("Q"));
  k.loadRules({ ...twoRules, channels: { ch1: { name: "One", links: true } } });
  const got = next(k, "h-ch2")!;
  assert.deepEqual([got.id, got.link], [1, null]);
  assert.match(next(k)!.link!, /^https:\/\/hub\.example\/c\/1\//);
  k.close();
});

test("an elsewhere task's answered asks run one at a time in the task's group, each from a new session", () => {
  const rules = {
    ...twoRules,
    elsewhere: [
      { name: "sweep", to: "bot2", cwd: "/srv", skill: "tidy", where: "an app" },
      { name: "report", source: "shop", to: "bot2", cwd: "/tmp", prompt: "Report.", where: "an app" },
    ],
  };
  const k = new Clock(rules, "2026-11-02T08:00:00Z");
  const tellAsk = (task: string, title: string) => k.commit({ kind: "tell", keyHash: K.worker2, body: { task, ask: { title, options: ["yes", "no"] } } });
  const answer = (id: number) => k.commit({ kind: "answer", keyHash: K.owner, card: id, choice: 0, text: null, by: null, ref: null });
  tellAsk("sweep", "First?");
  tellAsk("sweep", "Second?");
  tellAsk("report", "Third?");
  const answers = [answer(1), answer(3)];
  const job = k.claim("c1", K.worker2).job!;
  assert.deepEqual([job.rule, k.run(job.run).lane, job.session], [{ name: "sweep", cwd: "/srv", skill: "tidy", prompt: null }, "", null]);
  k.commit({ kind: "started", run: job.run, token: job.token, session: "s-sweep", link: null });
  answers.push(answer(2));
  assert.deepEqual(answers.flatMap((d) => written(d, "events")).map((e) => [e!.source, e!.routed]), [["elsewhere", ["sweep"]], ["shop", ["report"]], ["elsewhere", ["sweep"]]]);
  const other = k.commit({ kind: "work", keyHash: K.worker2, claim: "c2", running: [job.run], capacity: 2 }).body as WorkAnswer;
  assert.equal(other.job!.rule.name, "report", "the task's group is busy, another task's is not");
  k.result(job.run, { outcome: "done", session: "s-sweep" });
  const second = k.claim("c3", K.worker2).job!;
  assert.deepEqual([second.rule.name, k.run(second.run).answers, second.session], ["sweep", [2], null]);
  k.close();
});

test("issue 26 round 53, F53b-7 (reported case: a worker's tell ask of an elsewhere task named another plugin's card template, whose button starts a deploy): refused, naming the field, nothing written; the same ask without it is made", () => {
  const rules = { ...twoRules, elsewhere: [{ name: "nightly", to: "bot2", cwd: "/srv", prompt: "Look.", where: "an app" }] };
  const k = new Clock(rules, "2026-11-02T08:00:00Z");
  const ask = (card?: string) => k.commit({ kind: "tell", keyHash: K.worker2, body: { task: "nightly", ask: { title: "Nightly job finished", options: ["OK"], ...(card ? { card } : {}) } } });
  const refused = ask("tp/go");
  assert.deepEqual([refused.status, refused.body, refused.facts], [400, { error: "ask.card: task nightly has nothing to do with the plugin of card template tp/go (no source, emits, intent, workflow, prompt or tool of it names the plugin): its template cannot be used" }, []]);
  assert.equal(ask().status, 200);
  assert.deepEqual(k.state().cards.map((c) => [c.rule, c.title, c.template ?? null]), [["nightly", "Nightly job finished", null]]);
  k.close();
});

test("an fyi notice not taken yet is still offered just before its day is over", () => {
  const k = new Clock(twoRules, "2026-11-02T08:00:00Z");
  receipt(k, { notice: [{ title: "F", fyi: true }] });
  k.advance(k.now + 24 * 60 * 60_000 - 1);
  assert.deepEqual([fyiExpiry(k, k.now), fyiExpiry(k, k.now + 1)], [[], ["fyiExpire:1"]], "its offer ends a millisecond later");
  assert.equal(next(k)?.title, "F");
  k.close();
});

test("who closed a card: the owner who resolved it, or who answered a budget card", () => {
  const k = new Clock({ ...twoRules, rules: [{ ...twoRules.rules[0], budget: { cost: 1, per: "day" } }] }, "2026-11-02T08:00:00Z");
  receipt(k, { ...ask("Q"), usage: { cost: 2 } });
  assert.deepEqual(k.cards().map((c) => [c.id, c.title, c.state]), [[1, "Q", "open"], [2, '"alerts" used up today\'s budget and is paused', "open"]]);
  k.commit({ kind: "resolve", keyHash: K.owner, card: 1, reason: null });
  k.commit({ kind: "answer", keyHash: K.owner, card: 2, choice: 1, text: null, by: null, ref: null });
  assert.deepEqual(k.cards().map((c) => [c.id, c.state, c.by, c.choice, c.result]), [[1, "closed", "owner", null, "No longer needed"], [2, "closed", "owner", 1, "Kept paused"]]);
  k.close();
});

describe("over HTTP", () => {
  const f = hubEachTest();

  /** Runs one event through a worker whose receipt asks a question; returns the card id. */
  async function askCard(id = "e1", receipt: Record<string, unknown> = { ask: [{ title: "Deploy?", text: "v2 is ready", options: ["yes", "no"], recommend: 0, about: "deploy note" }] }) {
    await f.call("POST", "/v1/events", f.keys.source, { id, type: "alert.deploy", subject: "#7" });
    const job = (await f.call("GET", `/v1/work?claim=${id}`, f.keys.worker)).body.job;
    await f.call("POST", `/v1/runs/${job.run}/started`, job.token, { session: `sess-${id}` });
    await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done", ...receipt });
    return (await f.state()).cards.at(-1)!.id;
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
    // A channel (here one without answerers) never answers as the owner: why would say "by you" (round 56, F56b-2).
    const asOwner = await f.call("POST", `/v1/cards/${id}/answer`, f.keys.channel2, { choice: 1, by: "owner", ref: "x" });
    assert.deepEqual([asOwner.status, asOwner.body.error], [403, "by: owner is the owner's name; a channel relays the answers of its own answerers, never the owner's"]);
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
    const st = await f.state();
    const card = st.recentCards.find((c) => c.id === id)!;
    assert.equal(card.state, "closed");
    assert.equal(card.result, "Done");
  });

  test("the owner answers with text; a notice closes as handled; fyi cannot be answered", async () => {
    const id = await askCard("e1", {
      ask: [{ title: "Q", options: ["a", "b"] }],
      notice: [{ title: "N", text: "note" }, { title: "F", fyi: true }],
    });
    const st = await f.state();
    const notice = st.cards.find((c) => c.title === "N")!;
    const fyi = st.recentCards.find((c) => c.title === "F")!;
    const ask = st.cards.find((c) => c.title === "Q")!;
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
    const st = await f.state();
    assert.equal(st.recentCards[0].result, "No longer needed: fixed upstream");
  });

  test("a receipt resolves an earlier card of the same source and group; others are rejected", async () => {
    const first = await askCard("e1");
    await f.call("POST", "/v1/events", f.keys.source, { id: "e2", type: "alert.deploy" });
    const job: Job = (await f.call("GET", "/v1/work?claim=e2", f.keys.worker)).body.job;
    assert.deepEqual(job.context.open.map((c) => c.card), [first]);
    const r = await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done", resolve: [{ card: first, reason: "verified in logs" }] });
    assert.deepEqual(r.body, { rejected: [] });
    const st = await f.state();
    assert.equal(st.recentCards.find((c) => c.id === first)!.result, "No longer needed: verified in logs");
  });

  test("a job's context lists the newest contextOpenCardsMax open cards of its group, oldest first", async () => {
    // 150 open notices from three runs: the next job carries the newest 100 (each job carried all of them before:
    // issue 30's fixture, 1,000 open cards, made every job row 112 KB)
    for (let i = 0; i < 3; i++) await askCard(`m${i}`, { notice: Array.from({ length: 50 }, (_, k) => ({ title: `notice ${i}-${k}`, key: `m-${i}-${k}` })) });
    const open = (await f.state()).cards.map((c) => c.id);
    assert.equal(open.length, 150);
    await f.call("POST", "/v1/events", f.keys.source, { id: "m3", type: "alert.deploy", subject: "#7" });
    const job: Job = (await f.call("GET", "/v1/work?claim=m3", f.keys.worker)).body.job;
    assert.equal(contextOpenCardsMax, 100);
    assert.deepEqual(job.context.open.map((c) => c.card), open.slice(-contextOpenCardsMax));
  });

  test("a failed delivery is retried later; a wrong version is refused", async () => {
    const id = await askCard();
    await next();
    const tooNew = await f.call("POST", `/v1/cards/${id}/failed`, f.keys.channel, { version: 5, error: "x" });
    assert.equal(tooNew.status, 400);
    const r = await f.call("POST", `/v1/cards/${id}/failed`, f.keys.channel, { version: 1, error: "HTTP 500" });
    assert.deepEqual(r.body, { ok: true });
    assert.deepEqual((await next()).body, { card: null }, "not again at once");
    const st = await f.state();
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
});
