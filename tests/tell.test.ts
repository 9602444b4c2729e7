/**
 * POST /v1/tell to the letter (protocol.md 来源: 直接告诉你): every refusal's words, who a notice is deduplicated
 * for, what an ask card keeps, and titles when a source is not declared in rules.json.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Clock, K } from "./clock.js";
import { baseRules } from "./helpers.js";
import { hashKey } from "../src/kernel/credentials.js";
import type { TellBody } from "../src/protocol/schema.js";

const rules = {
  ...baseRules,
  elsewhere: [
    { name: "weekly", source: "shop", to: "bot", where: "the Claude app", cwd: "/tmp", prompt: "Go on." },
    { name: "daily", to: "bot", where: "cron" },
    { name: "other-worker", to: "bot2", cwd: "/tmp", skill: "x" },
    { name: "t", to: "bot" }, { name: "t:k:u", to: "bot" }, { name: "t\\", to: "bot" },
  ],
};
const ask = { title: "Delete old branches?", text: "12 branches", options: ["yes", "no"] };

function clock(): Clock {
  const k = new Clock(rules, "2026-11-02T08:00:00Z");
  k.commit({ kind: "keyNew", keyHash: null, local: true, keyKind: "source", name: "crm", newHash: hashKey("crm") });
  k.commit({ kind: "keyNew", keyHash: null, local: true, keyKind: "source", name: "ghost", newHash: hashKey("ghost") });
  k.commit({ kind: "keyNew", keyHash: null, local: true, keyKind: "source", name: "constructor", newHash: hashKey("constructor") });
  return k;
}
const tell = (k: Clock, keyHash: string, body: TellBody) => {
  const d = k.commit({ kind: "tell", keyHash, body });
  return [d.status, d.body];
};

test("every refusal names what is wrong", () => {
  const k = clock();
  assert.deepEqual(tell(k, K.source, { task: "weekly", key: "k", text: "t" }), [403, { error: "task: a source key speaks only for its own source" }]);
  assert.deepEqual(tell(k, K.worker, { key: "k", text: "t" }), [400, { error: "task: required" }]);
  assert.deepEqual(tell(k, K.worker, { task: "missing", key: "k", text: "t" }), [404, { error: "no such elsewhere task: missing" }]);
  assert.deepEqual(tell(k, K.worker, { task: "other-worker", key: "k", text: "t" }), [403, { error: 'task "other-worker" is not given to this worker' }]);
  assert.deepEqual(tell(k, K.worker, { task: "weekly", ask, key: "k" }), [400, { error: "give either ask or key and text, not both" }]);
  assert.deepEqual(tell(k, K.worker, { task: "weekly", ask, text: "t" }), [400, { error: "give either ask or key and text, not both" }]);
  assert.deepEqual(tell(k, K.worker, { task: "daily", ask }), [400, { error: "ask: only an elsewhere task with cwd can ask" }]);
  assert.deepEqual(tell(k, K.source, { text: "t" }), [400, { error: "key: required" }]);
  assert.deepEqual(tell(k, K.source, { key: "k" }), [400, { error: "text: required" }]);
  assert.deepEqual(k.state().cards, [], "no refusal made a card");
  k.close();
});

test("an fyi notice is sent once per key and speaker: sources and tasks do not share keys", () => {
  const k = clock();
  assert.deepEqual(tell(k, K.source, { key: "k", text: "from shop" }), [200, { card: 1, duplicate: false }]);
  assert.deepEqual(tell(k, hashKey("crm"), { key: "k", text: "from crm" }), [200, { card: 2, duplicate: false }]);
  assert.deepEqual(tell(k, K.worker, { task: "daily", key: "k", text: "from daily" }), [200, { card: 3, duplicate: false }]);
  assert.deepEqual(tell(k, K.worker, { task: "weekly", key: "k", text: "from weekly" }), [200, { card: 4, duplicate: false }]);
  assert.deepEqual(tell(k, hashKey("crm"), { key: "k", text: "again" }), [200, { card: 2, duplicate: true }]);
  assert.deepEqual(tell(k, hashKey("ghost"), { key: "k", text: "from a source rules.json does not declare" }), [200, { card: 5, duplicate: false }]);
  assert.deepEqual(tell(k, K.source, { key: "k2", text: "titled", title: "Nightly report" }), [200, { card: 6, duplicate: false }]);
  assert.deepEqual(tell(k, hashKey("constructor"), { key: "k", text: "named like what every object inherits" }), [200, { card: 7, duplicate: false }]);
  const cards = k.state().recentCards.sort((a, b) => a.id - b.id).map((c) => [c.id, c.fyi, c.title, c.text]);
  assert.deepEqual(cards, [
    [1, true, "Shop", "from shop"], [2, true, "CRM", "from crm"], [3, true, "daily", "from daily"], [4, true, "weekly", "from weekly"],
    [5, true, "ghost", "from a source rules.json does not declare"], [6, true, "Nightly report", "titled"],
    [7, true, "constructor", "named like what every object inherits"],
  ]);
  k.close();
});

test("an ask from a task keeps its recommendation and what it is about, and is asked once while open", () => {
  const k = clock();
  assert.deepEqual(tell(k, K.worker, { task: "weekly", ask: { ...ask, recommend: 1, about: "branches older than 90 days" } }), [200, { card: 1, duplicate: false }]);
  assert.deepEqual(tell(k, K.worker, { task: "weekly", ask }), [200, { card: 1, duplicate: true }]);
  const [card] = k.state().cards;
  assert.deepEqual([card.kind, card.title, card.text, card.options, card.recommend, card.about, card.rule], ["ask", ask.title, ask.text, ask.options, 1, "branches older than 90 days", "weekly"]);
  assert.deepEqual(tell(k, K.worker, { task: "weekly", ask: { ...ask, title: "Another?" } }), [200, { card: 2, duplicate: false }]);
  const second = k.state().cards.find((c) => c.id === 2)!;
  assert.deepEqual([second.recommend, second.about], [null, null]);
  k.close();
});

test("task names with the key format's own characters in them never share a notice key", () => {
  const k = clock();
  assert.deepEqual(tell(k, K.worker, { task: "t:k:u", key: "c", text: "from t:k:u" }), [200, { card: 1, duplicate: false }]);
  assert.deepEqual(tell(k, K.worker, { task: "t", key: "u:k:c", text: "from t" }), [200, { card: 2, duplicate: false }]);
  assert.deepEqual(tell(k, K.worker, { task: "t\\", key: ":k:c", text: "from t\\" }), [200, { card: 3, duplicate: false }]);
  assert.deepEqual(tell(k, K.worker, { task: "t", key: "\\:k:c", text: "from t again" }), [200, { card: 4, duplicate: false }]);
  assert.deepEqual(tell(k, K.worker, { task: "t:k:u", key: "c", text: "again" }), [200, { card: 1, duplicate: true }]);
  assert.deepEqual(tell(k, K.worker, { task: "daily", key: "k", text: "plain" }), [200, { card: 5, duplicate: false }]);
  k.close();
});

test('a notice key a log already holds is sent once: ":" and "\\" in a task name escaped, every other name as it always was', () => {
  // The keys as a log holds them (this hub's, or one from before task names were escaped): a task that tells the same
  // key again gets the card the log names, not a second notice.
  const k = clock();
  const logged = [
    ["\u0000\u0000fyi:task:daily:k:k", "daily", "k"], ["\u0000\u0000fyi:task:t:k:\\:k:c", "t", "\\:k:c"], ["\u0000\u0000fyi:task:t:k:u:k:c", "t", "u:k:c"],
    ["\u0000\u0000fyi:task:t\\:k\\:u:k:c", "t:k:u", "c"], ["\u0000\u0000fyi:task:t\\\\:k::k:c", "t\\", ":k:c"],
  ] as const;
  k.appendRaw("tell", logged.map(([key], i) => ["cardkeys", key, { card: 101 + i }]));
  logged.forEach(([, task, key], i) => {
    assert.deepEqual(tell(k, K.worker, { task, key, text: "again" }), [200, { card: 101 + i, duplicate: true }], `task ${task}, key ${key}`);
  });
  k.close();
});
