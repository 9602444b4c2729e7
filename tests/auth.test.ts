/**
 * Who may do what (protocol.md 谁能做什么) at the kernel: the exact refusal for a missing, unknown or wrong kind of
 * key, in both languages of the message catalog. Pure: the Clock kernel on a real SQLite file.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Clock, K } from "./clock.js";
import { baseRules, hubFixture } from "./helpers.js";
import type { Input } from "../src/kernel/types.js";
import { shown } from "../src/i18n/messages.js";

/** One input per permission-table row: [input for a key hash, the kinds it takes]. */
const rows: [(keyHash: string | null) => Input, string[]][] = [
  [(keyHash) => ({ kind: "event", keyHash, event: { id: "e", type: "alert.x" } }), ["source"]],
  [(keyHash) => ({ kind: "work", keyHash, claim: "c", running: [], capacity: 1 }), ["worker"]],
  [(keyHash) => ({ kind: "cardsNext", keyHash }), ["channel"]],
  [(keyHash) => ({ kind: "answer", keyHash, card: 1, choice: 0, text: null, by: "x", ref: "r" }), ["channel", "owner"]],
  [(keyHash) => ({ kind: "tell", keyHash, body: { key: "k", text: "t" } }), ["source", "worker"]],
  [(keyHash) => ({ kind: "pause", keyHash, rule: "alerts", reason: null, until: null }), ["owner"]],
];

const names = {
  en: { source: "source", worker: "worker", channel: "channel", owner: "owner" },
  zh: { source: "来源", worker: "接单程序", channel: "通道", owner: "本人" },
} as const;

for (const lang of ["en", "zh"] as const) {
  test(`a missing, unknown or wrong kind of key is refused with words that name the kinds (${lang})`, () => {
    const k = new Clock(baseRules, "2026-11-02T08:00:00Z");
    k.env.lang = lang;
    const before = k.seq();
    for (const [input, allowed] of rows) {
      const missing = k.commit(input(null));
      assert.deepEqual([missing.status, missing.body], [401, { error: lang === "en" ? "missing Authorization: Bearer <key>" : "缺少 Authorization: Bearer <密钥>" }]);
      const unknown = k.commit(input("0".repeat(64)));
      assert.deepEqual([unknown.status, unknown.body], [401, { error: lang === "en" ? "unknown key" : "密钥不对" }]);
      for (const kind of ["source", "worker", "channel", "owner"] as const) {
        if (allowed.includes(kind)) continue;
        const d = k.commit(input(K[kind]));
        const expected = allowed.map((a) => names[lang][a as keyof typeof names.en]).join("/");
        const error = lang === "en"
          ? `wrong kind of key (${names.en[kind]}); this needs a key of kind ${expected}`
          : `这把密钥是${names.zh[kind]}的，这里要${expected}的`;
        assert.deepEqual([d.status, d.body], [403, { error }], `${input(null).kind} with a ${kind} key`);
      }
    }
    assert.equal(k.seq(), before, "no refusal wrote a fact");
    k.close();
  });
}

test("a run token that is not given at all is 401 (no credential), before the run is looked up; a wrong one stays 403", () => {
  const k = new Clock(baseRules, "2026-11-02T08:00:00Z");
  const run = k.claimed("t1");
  const before = k.seq();
  for (const id of [run, 999]) {
    const started = k.commit({ kind: "started", run: id, token: "", session: null, link: null });
    assert.deepEqual([started.status, started.body], [401, { error: "missing Authorization: Bearer <key>" }]);
    const result = k.commit({ kind: "result", run: id, token: "", result: { outcome: "done" }, hash: "h" });
    assert.deepEqual([result.status, result.body], [401, { error: "missing Authorization: Bearer <key>" }]);
  }
  const wrong = k.commit({ kind: "result", run, token: "x", result: { outcome: "done" }, hash: "h" });
  assert.equal(wrong.status, 403);
  assert.equal(k.seq(), before, "no refusal wrote a fact");
  k.close();
});

test("over HTTP a wrong kind of key gets the kernel's own words, checked before the body (zh)", async () => {
  const f = await hubFixture(baseRules, {}, "", { lang: "zh" });
  try {
    const state = await f.call("GET", "/v1/state", f.keys.source);
    assert.deepEqual([state.status, state.body], [403, { error: "这把密钥是来源的，这里要本人的" }]);
    const answer = await f.call("POST", "/v1/cards/1/answer", f.keys.worker, undefined, "not json");
    assert.deepEqual([answer.status, answer.body], [403, { error: "这把密钥是接单程序的，这里要通道/本人的" }]);
    // The kinds are texts of their own in params (issue 27 #2): a client in English words them in English.
    const res = await fetch(`${f.url}/v1/cards/1/answer`, { method: "POST", headers: { authorization: `Bearer ${f.keys.worker}` } });
    const body = await res.json() as { error: string; code: string; params: unknown };
    assert.deepEqual(body, {
      error: "这把密钥是接单程序的，这里要通道/本人的", code: "auth.kind",
      params: {
        actual: { code: "key.kindName.worker", params: {} },
        expected: { code: "key.kindName.or", params: { list: { code: "key.kindName.channel", params: {} }, kind: { code: "key.kindName.owner", params: {} } } },
      },
    });
    assert.equal(shown("en", body, body.error), "wrong kind of key (worker); this needs a key of kind channel/owner");
  } finally {
    await f.close();
  }
});
