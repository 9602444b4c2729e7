/**
 * Cards on the real kernel and a real SQLite file, with the clock in the test's hands (protocol.md 通道, 回执):
 * which cards are equal while open, what each channel is offered after a change, what a delivery report and a
 * failure report record, and when a channel's poll is written to the log.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Clock, K } from "./clock.js";
import { baseRules } from "./helpers.js";

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

const card = (k: Clock, id: number) => k.store.view.get("cards", id)!;
const allCards = (k: Clock) => k.store.view.where("cards", "1 ORDER BY key").map(({ row }) => row);
const next = (k: Clock, key = K.channel) => (k.commit({ kind: "cardsNext", keyHash: key }).body as { card: any }).card;
const ask = (title: string, more: Record<string, unknown> = {}) => ({ ask: [{ title, options: ["a", "b"], ...more }] });

test("an equal card is made once while open: same rule, lane and key, else title and text; again once it is not open", () => {
  const k = new Clock(twoRules, "2026-11-02T08:00:00Z");
  receipt(k, ask("Q", { text: "a" }));
  receipt(k, ask("Q", { text: "a" }));
  assert.equal(allCards(k).length, 1, "the same title and text while the first is open");
  receipt(k, ask("Q", { text: "b" }));
  receipt(k, ask("Q"));
  receipt(k, ask("Q", { text: "" }));
  assert.deepEqual(allCards(k).map((c) => [c.id, c.title, c.text]), [[1, "Q", "a"], [2, "Q", "b"], [3, "Q", ""]], "no text is the same as an empty text");
  receipt(k, ask("X", { key: "k1" }));
  receipt(k, ask("Y", { key: "k1" }));
  receipt(k, ask("X"));
  assert.deepEqual(allCards(k).slice(3).map((c) => [c.id, c.title, c.key]), [[4, "X", "k1"], [5, "X", null]], "a key decides equality instead of the title");
  receipt(k, ask("Q", { text: "a" }), "other.x");
  assert.deepEqual([card(k, 6).rule, card(k, 6).title], ["other", "Q"], "another rule's card in the same lane is not equal");
  receipt(k, ask("Q", { text: "a" }), "lane.x", "s1");
  receipt(k, ask("Q", { text: "a" }), "lane.x", "s2");
  receipt(k, ask("Q", { text: "a" }), "lane.x", "s2");
  assert.deepEqual(allCards(k).slice(6).map((c) => [c.id, c.rule, c.lane]), [[7, "lanes", "s1"], [8, "lanes", "s2"]], "another lane's card is not equal");
  assert.equal(k.state().totals.openCards, 8);
  // no longer open: the same card can be made again
  k.commit({ kind: "answer", keyHash: K.owner, card: 1, choice: 0, text: null, by: null, ref: null });
  assert.equal(k.state().totals.openCards, 7);
  k.commit({ kind: "resolve", keyHash: K.owner, card: 4, reason: null });
  assert.equal(k.state().totals.openCards, 6);
  const job = k.claim("after-answer").job!;
  k.result(job.run, { outcome: "done", ...ask("Q", { text: "a" }), notice: [{ title: "Z", key: "k1" }] });
  assert.deepEqual(allCards(k).slice(8).map((c) => [c.id, c.kind, c.title, c.state]), [[9, "ask", "Q", "open"], [10, "notice", "Z", "open"]]);
  assert.equal(card(k, 1).state, "closed", "the answered card closed when its run ended");
  assert.equal(k.state().totals.openCards, 8);
  k.close();
});

test("an fyi notice: the same run never sends the same one twice, another run may", () => {
  const k = new Clock(twoRules, "2026-11-02T08:00:00Z");
  receipt(k, { notice: [{ title: "F", fyi: true }, { title: "F", fyi: true }, { title: "G", fyi: true, key: "g" }, { title: "H", fyi: true, key: "g" }] });
  assert.deepEqual(allCards(k).map((c) => [c.id, c.title, c.state, c.run]), [[1, "F", "closed", 1], [2, "G", "closed", 1]]);
  receipt(k, { notice: [{ title: "F", fyi: true }, { title: "F" }] });
  assert.deepEqual(allCards(k).slice(2).map((c) => [c.id, c.title, c.fyi, c.state, c.run]), [[3, "F", true, "closed", 2], [4, "F", false, "open", 2]]);
  assert.deepEqual(k.state().totals.openCards, 1, "an fyi notice is never an open card");
  k.close();
});

test("after a change a channel that shows the card gets the update; one that never got it gets nothing", () => {
  const k = new Clock(twoRules, "2026-11-02T08:00:00Z");
  k.commit({ kind: "keyNew", keyHash: null, local: true, keyKind: "channel", name: "ch2", newHash: "h-ch2" });
  receipt(k, ask("Q"));
  assert.equal(next(k).id, 1);
  k.commit({ kind: "delivered", keyHash: K.channel, card: 1, version: 1, ref: "m1" });
  k.commit({ kind: "answer", keyHash: K.owner, card: 1, choice: 1, text: null, by: null, ref: null });
  const upd = next(k);
  assert.deepEqual([upd.id, upd.version, upd.ref, upd.state, upd.choice], [1, 2, "m1", "answered", 1]);
  assert.equal(next(k, "h-ch2"), null, "ch2 never got the card and it is no longer open");
  k.commit({ kind: "delivered", keyHash: K.channel, card: 1, version: 2, ref: "m1" });
  // its run ends: the card closes, the update goes to ch1 only
  const job = k.claim("c-answer").job!;
  k.result(job.run, { outcome: "done" });
  assert.deepEqual([next(k).version, card(k, 1).state], [3, "closed"]);
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
  assert.deepEqual([next(k, "h-ch2").id, next(k, "h-ch2")], [1, null], "ch2 still gets the open card, not the resolved one");
  assert.equal(next(k), null, "ch1 never got card 2");
  k.close();
});

test("a delivery report: the reported version ends the offer, an older one brings the newest back, a repeat writes nothing", () => {
  const k = new Clock(twoRules, "2026-11-02T08:00:00Z");
  receipt(k, ask("Q"));
  assert.equal(next(k).version, 1);
  // answered while ch1 sends version 1: the card is no longer open and ch1 has no message yet
  k.commit({ kind: "answer", keyHash: K.owner, card: 1, choice: 0, text: null, by: null, ref: null });
  k.commit({ kind: "delivered", keyHash: K.channel, card: 1, version: 1, ref: "m1" });
  const again = next(k);
  assert.deepEqual([again.version, again.ref, again.state], [2, "m1", "answered"], "the newest version is offered at once");
  k.commit({ kind: "delivered", keyHash: K.channel, card: 1, version: 2, ref: "m1" });
  k.now += 60_000;
  assert.equal(next(k), null, "the newest version was delivered: not offered again");
  assert.deepEqual(card(k, 1).deliveries.ch1, { ref: "m1", version: 2, failures: 0, firstFailedAt: null, gaveUp: false, error: null });
  const seq = k.store.seq;
  k.commit({ kind: "delivered", keyHash: K.channel, card: 1, version: 2, ref: "m1" });
  assert.equal(k.store.seq, seq, "a repeated report writes nothing");
  assert.equal(next(k), null, "and offers nothing");
  // a late report of an older version while the newest is offered does not offer it again
  const job = k.claim("c-answer").job!;
  k.result(job.run, { outcome: "done" });
  assert.equal(next(k).version, 3);
  k.commit({ kind: "delivered", keyHash: K.channel, card: 1, version: 2, ref: "m1" });
  assert.equal(next(k), null, "version 3 stays leased");
  k.now += 60_000;
  assert.equal(next(k).version, 3, "and is offered again when its lease ends");
  // another message for an older version: the ref changes, the version stays the newest reported
  k.commit({ kind: "delivered", keyHash: K.channel, card: 1, version: 1, ref: "m0" });
  assert.deepEqual([card(k, 1).deliveries.ch1.ref, card(k, 1).deliveries.ch1.version], ["m0", 2]);
  k.close();
});

test("a failed update is recorded without a retry; the next delivery report clears the error", () => {
  const k = new Clock(twoRules, "2026-11-02T08:00:00Z");
  receipt(k, ask("Q"));
  next(k);
  k.commit({ kind: "delivered", keyHash: K.channel, card: 1, version: 1, ref: "m1" });
  k.commit({ kind: "answer", keyHash: K.owner, card: 1, choice: 0, text: null, by: null, ref: null });
  assert.equal(next(k).version, 2);
  k.commit({ kind: "failed", keyHash: K.channel, card: 1, version: 2, error: null });
  assert.deepEqual(card(k, 1).deliveries.ch1, { ref: "m1", version: 1, failures: 1, firstFailedAt: null, gaveUp: false, error: "failed" });
  k.now += 60 * 60_000;
  assert.equal(next(k), null, "an update that failed is not retried");
  const seq = k.store.seq;
  k.commit({ kind: "delivered", keyHash: K.channel, card: 1, version: 1, ref: "m1" });
  assert.equal(k.store.seq, seq + 1, "a report of the same message clears the error");
  assert.deepEqual(card(k, 1).deliveries.ch1, { ref: "m1", version: 1, failures: 1, firstFailedAt: null, gaveUp: false, error: null });
  k.close();
});

test("a first send that fails: retries 30 s doubling to 15 min, the last one at the hour, then given up; a later delivery still counts", () => {
  const k = new Clock(twoRules, "2026-11-02T08:00:00Z");
  receipt(k, ask("Q"));
  const first = k.now;
  const gaps: number[] = [];
  for (let card = next(k); card; card = next(k)) {
    k.commit({ kind: "failed", keyHash: K.channel, card: 1, version: 1, error: `HTTP ${gaps.length}` });
    const row = k.store.view.get("outbox", `ch1\u00001`);
    if (!row) break;
    gaps.push((row.nextAt - k.now) / 1000);
    k.now = row.nextAt - 1;
    assert.equal(next(k), null, "not before its time");
    k.now += 1;
  }
  assert.deepEqual(gaps, [30, 60, 120, 240, 480, 900, 900, 870]);
  assert.equal(k.now - first, 60 * 60_000);
  assert.deepEqual(card(k, 1).deliveries.ch1, { ref: null, version: 0, failures: 9, firstFailedAt: first, gaveUp: true, error: "HTTP 8" });
  k.commit({ kind: "delivered", keyHash: K.channel, card: 1, version: 1, ref: "m1" });
  assert.deepEqual(card(k, 1).deliveries.ch1, { ref: "m1", version: 1, failures: 9, firstFailedAt: first, gaveUp: false, error: null });
  k.close();
});

test("a channel's polls are written at most once a minute", () => {
  const k = new Clock(twoRules, "2026-11-02T08:00:00Z");
  const seq = k.store.seq;
  assert.equal(next(k), null);
  assert.equal(k.store.seq, seq + 1, "the first poll is written");
  k.now += 59_999;
  next(k);
  assert.equal(k.store.seq, seq + 1, "not again within the minute");
  k.now += 1;
  next(k);
  assert.equal(k.store.seq, seq + 2);
  assert.equal(k.state().channels.find((c: any) => c.id === "ch1").seenAt, "2026-11-02T08:01:00.000Z");
  k.close();
});

test("the channel sees the earliest offer first; the owner's view has no ref and no link", () => {
  const k = new Clock({ ...twoRules, channels: { ch1: { name: "One", links: true } } }, "2026-11-02T08:00:00Z");
  k.env.publicUrl = "https://hub.example";
  receipt(k, { notice: [{ title: "A" }] });
  receipt(k, { notice: [{ title: "B" }] });
  const a = next(k);
  assert.equal(a.id, 1);
  assert.match(a.link, /^https:\/\/hub\.example\/c\/1\/[A-Za-z0-9_-]{43}$/);
  k.commit({ kind: "failed", keyHash: K.channel, card: 1, version: 1, error: "x" });
  assert.equal(next(k).id, 2, "card 1 waits for its retry");
  k.now += 29_999;
  assert.equal(next(k), null, "card 2 is leased and card 1 waits for 30 s from its failure");
  k.now += 1;
  assert.equal(next(k).id, 1);
  const owner = k.state().cards[0];
  assert.deepEqual([owner.ref, owner.link], [null, null]);
  k.env.publicUrl = null;
  k.now += 60_000;
  assert.equal(next(k).link, null, "no link without a public address");
  k.close();
});

test("an answer becomes an event of the card's lane at the asking run's depth, and a run on the asking run's session", () => {
  const k = new Clock(twoRules, "2026-11-02T08:00:00Z");
  k.commit({ kind: "event", keyHash: K.source, event: { id: "deep", type: "lane.x", subject: "s1", hops: 3 } as never });
  const job = k.claim("c1").job!;
  k.commit({ kind: "started", run: job.run, token: job.token, session: "sess-s1", link: null });
  k.result(job.run, { outcome: "done", ...ask("Q") });
  receipt(k, ask("R")); // rule alerts, lane "", no session
  k.commit({ kind: "answer", keyHash: K.owner, card: 1, choice: 1, text: null, by: null, ref: null });
  k.commit({ kind: "answer", keyHash: K.owner, card: 2, choice: 0, text: null, by: null, ref: null });
  const events = k.store.view.where("events", "1 ORDER BY key").map(({ row }) => row).filter((e) => e.internal === "answer");
  assert.deepEqual(events.map((e) => [e.source, e.sid, e.type, e.subject, e.summary, e.hops, e.routed, e.internal]), [
    ["shop", "card:1:answer", "card.answer", "s1", "Q", 3, ["lanes"], "answer"],
    ["shop", "card:2:answer", "card.answer", null, "R", 0, ["alerts"], "answer"],
  ]);
  const a = k.claim("c3").job!;
  assert.deepEqual([k.run(a.run).lane, k.run(a.run).hops, k.run(a.run).answers, a.session], ["s1", 3, [1], "sess-s1"]);
  assert.deepEqual(k.run(a.run).sessionHint, { session: "sess-s1", agent: "bot" });
  const b = k.claim("c4").job!;
  assert.deepEqual([k.run(b.run).lane, k.run(b.run).answers, k.run(b.run).sessionHint], ["", [2], null]);
  k.close();
});

test("an answer to a card whose rule is gone is recorded, and nothing runs", () => {
  const k = new Clock(twoRules, "2026-11-02T08:00:00Z");
  receipt(k, ask("Q"));
  k.loadRules({ ...twoRules, rules: twoRules.rules.filter((r) => r.name !== "alerts") });
  const seqRuns = k.store.view.where("runs", "1").length;
  const r = k.commit({ kind: "answer", keyHash: K.owner, card: 1, choice: 1, text: "ok", by: null, ref: null });
  assert.equal(r.status, 200);
  assert.deepEqual([card(k, 1).state, card(k, 1).choice, card(k, 1).answer, card(k, 1).by], ["answered", 1, "ok", "owner"]);
  assert.equal(k.store.view.where("runs", "1").length, seqRuns);
  assert.deepEqual(k.store.view.where("events", "1").filter(({ row }) => row.internal === "answer"), []);
  k.close();
});

test("resolving an answered card keeps its answer and who gave it", () => {
  const k = new Clock(twoRules, "2026-11-02T08:00:00Z");
  receipt(k, ask("Q"));
  k.commit({ kind: "answer", keyHash: K.owner, card: 1, choice: null, text: "wait", by: null, ref: null });
  k.commit({ kind: "resolve", keyHash: K.owner, card: 1, reason: null });
  assert.deepEqual([card(k, 1).state, card(k, 1).answer, card(k, 1).by, card(k, 1).result], ["closed", "wait", "owner", "No longer needed"]);
  k.close();
});

test("a card a channel has not taken yet waits for it past a day; an fyi notice does not", () => {
  const k = new Clock(twoRules, "2026-11-02T08:00:00Z");
  receipt(k, { notice: [{ title: "N" }, { title: "F", fyi: true }] });
  assert.deepEqual(k.store.view.where("due", "1").map(({ row }) => row).filter((d) => d.kind === "fyiExpire").map((d) => d.ref), ["2"]);
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
  const got = next(k, "h-ch2");
  assert.deepEqual([got.id, got.link], [1, null]);
  assert.match(next(k).link, /^https:\/\/hub\.example\/c\/1\//);
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
  answer(1);
  answer(3);
  const job = k.claim("c1", K.worker2).job!;
  assert.deepEqual([job.rule, k.run(job.run).group, k.run(job.run).lane, job.session], [{ name: "sweep", cwd: "/srv", skill: "tidy", prompt: null }, "sweep", "", null]);
  k.commit({ kind: "started", run: job.run, token: job.token, session: "s-sweep", link: null });
  answer(2);
  const answers = k.store.view.where("events", "1 ORDER BY key").map(({ row }) => [row.source, row.routed]);
  assert.deepEqual(answers, [["elsewhere", ["sweep"]], ["shop", ["report"]], ["elsewhere", ["sweep"]]]);
  const other = k.commit({ kind: "work", keyHash: K.worker2, claim: "c2", running: [job.run], capacity: 2 }).body as any;
  assert.equal(other.job.rule.name, "report", "the task's group is busy, another task's is not");
  k.result(job.run, { outcome: "done", session: "s-sweep" });
  const second = k.claim("c3", K.worker2).job!;
  assert.deepEqual([second.rule.name, k.run(second.run).answers, second.session], ["sweep", [2], null]);
  k.close();
});

test("an fyi notice not taken yet is still offered just before its day is over", () => {
  const k = new Clock(twoRules, "2026-11-02T08:00:00Z");
  receipt(k, { notice: [{ title: "F", fyi: true }] });
  k.advance(k.now + 24 * 60 * 60_000 - 1);
  assert.deepEqual(k.store.view.where("due", "1").map(({ row }) => row).filter((d) => d.kind === "fyiExpire").map((d) => d.ref), ["1"]);
  assert.equal(next(k).title, "F");
  k.close();
});

test("who closed a card: the owner who resolved it, or who answered a budget card", () => {
  const k = new Clock({ ...twoRules, rules: [{ ...twoRules.rules[0], budget: { cost: 1, per: "day" } }] }, "2026-11-02T08:00:00Z");
  receipt(k, { ...ask("Q"), usage: { cost: 2 } });
  assert.deepEqual(allCards(k).map((c) => [c.id, c.system, c.state]), [[1, null, "open"], [2, "budget", "open"]]);
  k.commit({ kind: "resolve", keyHash: K.owner, card: 1, reason: null });
  k.commit({ kind: "answer", keyHash: K.owner, card: 2, choice: 1, text: null, by: null, ref: null });
  assert.deepEqual(allCards(k).map((c) => [c.id, c.state, c.by, c.choice, c.result]), [[1, "closed", "owner", null, "No longer needed"], [2, "closed", "owner", 1, "Kept paused"]]);
  k.close();
});
