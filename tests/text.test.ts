/**
 * Text that could drive a terminal or hide what it says (issue 14, item 10): C1 controls (U+0080–U+009F), bidi
 * embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), the deprecated format controls after them
 * (U+206A–U+206F) and lone surrogates are refused in every text field of every /v1 input — the same kind of refusal
 * as C0 controls — and line separators (U+2028, U+2029) in one-line fields. The hub's own parts neutralise what
 * they relay from elsewhere instead of having it refused: the github adapter, any installed adapter's summary and
 * detail, the channels' reports (here), the worker's summary, error and session (tests/worker.test.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { linePattern, textPattern } from "../src/protocol/schema.js";
import { definitions } from "../src/protocol/definitions.js";
import { validatedNames } from "../scripts/validators.js";
import { check } from "../src/protocol/validate.js";
import { parseReceipt } from "../src/worker/receipt.js";
import { isName, isOldKeyName } from "../src/kernel/rules.js";
import { parseRules } from "../src/protocol/rules-file.js";
import { neutralise, relayed } from "../src/kernel/text.js";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { baseRules, githubExamples, hubFixture } from "./helpers.js";
import { channelHub } from "../src/host/channels.js";

/** Every kind refused everywhere, with a name for failure messages. */
const refused: [string, string][] = [
  ["U+0080", "\u0080"], ["U+0085 NEL", "\u0085"], ["U+009B CSI", "\u009b"], ["U+009F", "\u009f"],
  ["U+202A LRE", "\u202a"], ["U+202B RLE", "\u202b"], ["U+202C PDF", "\u202c"], ["U+202D LRO", "\u202d"], ["U+202E RLO", "\u202e"],
  ["U+2066 LRI", "\u2066"], ["U+2067 RLI", "\u2067"], ["U+2068 FSI", "\u2068"], ["U+2069 PDI", "\u2069"], ["U+206F NODS", "\u206f"],
  ["lone high surrogate", "\ud800"], ["lone low surrogate", "\udfff"],
];
/** Kept: marks and joiners real text needs (Arabic and Hebrew marks, emoji sequences), and CJK. */
const kept = "ok \u200e\u200f\u061c \u200d 👩‍💻 中文 ";

type Node = Record<string, unknown>;
/** Every string schema under `node`, with its path. */
function strings(node: unknown, path: string, out: [string, Node][] = []): [string, Node][] {
  if (!node || typeof node !== "object") return out;
  const n = node as Node;
  if (n.type === "string") out.push([path, n]);
  for (const [k, v] of Object.entries(n)) {
    if (k === "properties") for (const [p, s] of Object.entries(v as Node)) strings(s, `${path}.${p}`, out);
    else if (k === "items" || k === "anyOf") strings(v, path + "[]", out);
    else if (Array.isArray(v)) v.forEach((x, i) => strings(x, `${path}[${i}]`, out));
  }
  return out;
}

test("every string field of every /v1 input refuses C1 controls, bidi controls and lone surrogates; one-line fields also line separators", () => {
  let fields = 0;
  for (const name of validatedNames) {
    for (const [path, s] of strings(definitions[name], name)) {
      fields++;
      if (s.enum || s.const !== undefined) continue;
      assert.equal(typeof s.pattern, "string", `${path} has a pattern`);
      const re = new RegExp(s.pattern as string, "u");
      for (const [what, ch] of refused) assert.ok(!re.test(`a${ch}b`), `${path} refuses ${what}`);
      if (s.pattern === linePattern) {
        assert.ok(!re.test("a\u2028b") && !re.test("a\u2029b"), `${path} refuses line separators`);
        assert.ok(re.test(kept), `${path} keeps ${kept}`);
      }
      if (s.pattern === textPattern) assert.ok(re.test(`${kept}\n\t\u2028`), `${path} keeps ${kept}, line breaks and tabs`);
    }
  }
  assert.ok(fields > 40, `${fields} string fields`);
});

test("the refusal names the field, as for other control characters", () => {
  const noControl = { id: "pattern.noControl" };
  assert.deepEqual(check("EventIn", { id: "a\u202eb", type: "x" }, "en"), { ok: false, error: "id: wrong format, expected no control characters", text: { id: "field.pattern", params: { field: "id", what: noControl } } });
  assert.deepEqual(check("Result", { outcome: "done", ask: [{ title: "Q", options: ["a", "b\u0085"] }] }, "en"), { ok: false, error: "ask[0].options[1]: wrong format, expected no control characters", text: { id: "field.pattern", params: { field: "ask[0].options[1]", what: noControl } } });
  assert.deepEqual(check("Answer", { text: "x\u2066" }, "en"), { ok: false, error: "text: wrong format, expected no control characters except line breaks and tabs", text: { id: "field.pattern", params: { field: "text", what: { id: "pattern.noControlText" } } } });
  assert.equal(check("EventIn", { id: `${kept}`, type: "x", detail: `${kept}\nline two` }, "en").ok, true);
  const receipt = parseReceipt(JSON.stringify({ notice: [{ title: "\u2067hidden" }] }), "en");
  assert.deepEqual(receipt, { ok: false, error: "receipt: notice[0].title: wrong format, expected no control characters" });
});

test("names in rules.json refuse the same characters; new key names are ASCII, and old keys with such names stay removable", () => {
  for (const [what, ch] of refused) {
    const r = parseRules(JSON.stringify({ ...baseRules, rules: [{ ...baseRules.rules[0], name: `a${ch}b` }] }), { timezone: "UTC" });
    assert.equal(r.ok, false, `a rule name with ${what}`);
    assert.equal(isName(`a${ch}b`), false, `a new key name with ${what}`);
  }
  const display = parseRules(JSON.stringify({ ...baseRules, sources: { shop: { name: "Shop\u202e" } } }), { timezone: "UTC" });
  assert.equal(display.ok, false, "a display name");
  assert.equal(isOldKeyName("a\u202eb"), true, "a key made before names were checked can still be removed");
});

test("relayed keeps a text of exactly its field's length whole and cuts a longer one to that length, ending in …", () => {
  assert.equal(relayed("abc", true, 3), "abc");
  assert.equal(relayed("abcd", true, 3), "ab…");
  assert.equal(relayed("a\u0007b\nc", true, 3), "ab c".slice(0, 2) + "…", "neutralised first: 'ab c' is 4 codepoints");
  assert.equal(relayed("😀😀😀", false, 3), "😀😀😀", "codepoints, not UTF-16 units");
});

test("neutralise removes what is refused; in one-line text a run of line breaks, tabs and separators becomes one space", () => {
  const all = refused.map(([, ch]) => ch).join("-"); // apart: "\ud800\udfff" together would be a pair
  assert.equal(neutralise(`a${all}b\u0007\u001b[31m`, false), `a${"-".repeat(refused.length - 1)}b[31m`);
  assert.equal(neutralise("one\r\n\ttwo\u2028\u2029three\u0085four", true), "one two three four");
  assert.equal(neutralise("keep\nlines\tand tabs\u2028", false), "keep\nlines\tand tabs\u2028");
  assert.equal(neutralise(kept, true), kept);
  assert.equal(neutralise("👩‍💻\ud83d", true), "👩‍💻", "a lone surrogate goes, a pair stays");
});

test("over HTTP: refused with 400 naming the field, nothing recorded — body fields, the claim id and key names", async () => {
  const f = await hubFixture();
  try {
    const seq = f.seq();
    const ev = await f.call("POST", "/v1/events", f.keys.source, { id: "e1", type: "alert.x", summary: "pay \u202egnp.exe" });
    assert.deepEqual([ev.status, ev.body], [400, { error: "summary: wrong format, expected no control characters" }]);
    const tell = await f.call("POST", "/v1/tell", f.keys.source, { key: "k", text: "\u009b31mred" });
    assert.deepEqual([tell.status, tell.body], [400, { error: "text: wrong format, expected no control characters except line breaks and tabs" }]);
    const claim = await f.call("GET", `/v1/work?claim=${encodeURIComponent("c\u2066")}`, f.keys.worker);
    assert.deepEqual([claim.status, claim.body], [400, { error: "claim: no control characters" }]);
    const key = await f.call("POST", `/v1/keys/source/${encodeURIComponent("x\u202e")}`, f.keys.owner);
    assert.equal(key.status, 400);
    assert.equal(f.seq(), seq);
  } finally {
    await f.close();
  }
});

test("the github adapter removes those characters from what it relays instead of losing the delivery", async () => {
  const secret = "s3cret";
  const rules = { ...baseRules, sources: { ...baseRules.sources, gh: { name: "GitHub", adapter: "github" } }, rules: [...baseRules.rules, { name: "gh", when: { source: "gh", types: ["issues.*"] }, to: "bot" }] };
  const f = await hubFixture(rules, {}, `AGENT_AUTOLOOP_SECRET_GH="${secret}"\n`);
  try {
    const payload = structuredClone(githubExamples("issues").find((e) => e.action === "opened")!);
    payload.issue!.title = "fix \u202egnp.exe\u2028now";
    payload.issue!.body = "a\u0085b\u2066c\nd";
    const body = JSON.stringify(payload);
    const res = await fetch(`${f.url}/v1/in/gh`, { method: "POST", headers: { "x-github-event": "issues", "x-hub-signature-256": "sha256=" + createHmac("sha256", secret).update(body).digest("hex") }, body });
    assert.equal(res.status, 200, await res.clone().text());
    const job = (await f.call("GET", "/v1/work?claim=g", f.keys.worker)).body.job;
    const e = job.context.events[0];
    assert.deepEqual([e.summary, e.detail], ["fix gnp.exe now", "abc\nd"]);
  } finally {
    await f.close();
  }
});

test("a channel's reports relay its platform's text: control characters removed, an error over 2,000 characters cut, instead of the report refused", async () => {
  const f = await hubFixture({ ...baseRules, channels: { ch1: { name: "One", answerers: ["ou_alice"] } } });
  const ac = new AbortController();
  try {
    await f.call("POST", "/v1/events", f.keys.source, { id: "c1", type: "alert.x" });
    const job = (await f.call("GET", "/v1/work?claim=c", f.keys.worker)).body.job;
    await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done", ask: [{ title: "Q", options: ["a", "b"], key: "q" }], notice: [{ title: "N" }] });
    const hub = channelHub(f.url, f.keys.channel, ac.signal);
    const first = (await hub.nextCard(0)).card!;
    const second = (await hub.nextCard(0)).card!;
    await hub.delivered(first.id, first.version, "msg\u202e-1"); // the answer names the same message
    await hub.answer(first.id, { text: "yes \u001b[2J\u2067please", by: "ou_\u202ealice", ref: "msg-\u009b1" });
    await hub.failed(second.id, second.version, "\u009b" + "x".repeat(3000));
    const st = await f.state();
    const cards = [...st.cards, ...st.recentCards];
    const a = cards.find((c) => c.id === first.id)!;
    const b = cards.find((c) => c.id === second.id)!;
    assert.deepEqual([a.deliveries.ch1.ref, a.answer, a.by], ["msg-1", "yes [2Jplease", "ou_alice"]);
    assert.equal(b.deliveries.ch1.error, "x".repeat(1999) + "…");
  } finally {
    ac.abort();
    await f.close();
  }
});

test("an installed source adapter's summary and detail are relayed by the hub with those characters removed and cut to their limits; its ids are still checked", async () => {
  const rules = { ...baseRules, sources: { ...baseRules.sources, relay: { name: "Relay", adapter: "relay-source" } }, rules: [...baseRules.rules, { name: "r", when: { source: "relay", types: ["relay.*"] }, to: "bot" }] };
  const f = await hubFixture(rules, {}, "AGENT_AUTOLOOP_SECRET_RELAY=s\n");
  try {
    mkdirSync(join(f.home.plugins, "relay-source"), { recursive: true });
    writeFileSync(join(f.home.plugins, "relay-source", "source.mjs"), `export default ({ body }) => body === "bad id"
      ? [{ id: "r\\u202e2", type: "relay.x" }]
      : [{ id: "r1", type: "relay.x", summary: "sum \\u001b[1m\\u202eevil\\nnext" + "s".repeat(300), detail: "d\\u0085e\\u2066f\\n" + "x".repeat(5000) }];`);
    const res = await fetch(`${f.url}/v1/in/relay`, { method: "POST", body: "{}" });
    assert.equal(res.status, 200, await res.clone().text());
    const e = (await f.call("GET", "/v1/work?claim=r", f.keys.worker)).body.job.context.events[0];
    assert.equal(e.summary, ("sum [1mevil next" + "s".repeat(300)).slice(0, 199) + "…");
    assert.equal(e.detail, ("def\n" + "x".repeat(5000)).slice(0, 3999) + "…");
    const bad = await fetch(`${f.url}/v1/in/relay`, { method: "POST", body: "bad id" });
    assert.deepEqual([bad.status, await bad.json()], [400, {
      error: "event 0 from the adapter is invalid: id: wrong format, expected no control characters",
      code: "in.bad", params: { n: 0, error: { code: "field.pattern", params: { field: "id", what: { code: "pattern.noControl", params: {} } } } },
    }]);
  } finally {
    await f.close();
  }
});
