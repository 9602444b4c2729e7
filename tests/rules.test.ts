import { test } from "node:test";
import assert from "node:assert/strict";
import { globMatch } from "../src/kernel/rules.js";
import { parseRules } from "../src/protocol/rules-file.js";
import { hubFixture, baseRules } from "./helpers.js";

const tz = { timezone: "UTC" };

test("a JSONC rule file with comments and trailing commas is normalized with every default", () => {
  const r = parseRules(`// top comment
{
  "sources": { "shop": { "name": "Shop", }, },
  "agents": { "a": { "worker": "w", "use": "command", "command": ["x", "{prompt}"], }, }, /* block */
  "channels": { "c": {} },
  "rules": [ { "name": "r", "when": { "source": "shop" }, "to": "a", }, ],
}`, tz);
  assert.equal(r.ok, true);
  if (!r.ok) return;
  assert.deepEqual(r.rules.rules[0], {
    name: "r", source: "shop", types: ["*"], cron: null, to: "a", cwd: null, skill: null, prompt: null, group: "r",
    parallel: null, resume: false, tell: "needed", emits: null, channels: null, budget: null,
  });
  assert.deepEqual(r.rules.agents.a, { id: "a", name: "a", worker: "w", use: "command", model: null, effort: null, access: "edit", command: ["x", "{prompt}"], program: null, sandbox: true, env: [], writable: [], readable: [], devices: [], network: "own", loopbackPorts: [] });
  assert.deepEqual(r.rules.channels.c, { id: "c", name: "c", answerers: null, links: false });
  assert.equal(r.rules.timezone, "UTC");
});

test("errors name the field with line and column", () => {
  const cases: [string, RegExp, number, number][] = [
    ['{\n  "rules": [ { "name": "r", "when": { "source": "nope" }, "to": "a" } ]\n}', /^rules\[0\]\.when\.source: no source "nope" in sources$/, 2, 49],
    ['{\n  "sources": {},\n  "bogus": 1\n}', /^bogus: unknown field/, 3, 12],
    ['{\n  "rules": [\n', /^JSON: /, 3, 1],
    ['{ "timezone": "Mars/Olympus" }', /^timezone: unknown time zone Mars\/Olympus$/, 1, 15],
    ['{ "agents": { "a": { "worker": "w", "use": "command" } } }', /^agents\.a\.command: required for use "command"$/, 1, 20],
    ['{ "agents": { "a": { "worker": "w", "use": "x", "access": "root" } } }', /^agents\.a\.access: must be read, edit or full$/, 1, 59],
    ['{ "sources": {"s": {}}, "agents": { "a": { "worker": "w", "use": "x" } }, "rules": [{ "name": "r", "when": { "cron": "nope" }, "to": "a" }] }', /^rules\[0\]\.when\.cron: not a cron expression: nope$/, 1, 118],
    ['{ "sources": {"s": {}}, "agents": { "a": { "worker": "w", "use": "x" } }, "rules": [{ "name": "r", "when": { "source": "s" }, "to": "a" }, { "name": "r", "when": { "source": "s" }, "to": "a" }] }', /another rule is already named "r"/, 1, 150],
    ['{ "sources": {"s": {}}, "agents": { "a": { "worker": "w", "use": "x" } }, "rules": [{ "name": "r", "when": { "source": "s" }, "to": "a", "parallel": 0 }] }', /parallel: must be a whole number/, 1, 150],
    ['{ "sources": {"schedule": {}} }', /"schedule" is the source of cron rules/, 1, 27],
  ];
  for (const [text, error, line, column] of cases) {
    const r = parseRules(text, tz);
    assert.equal(r.ok, false, text);
    if (r.ok) continue;
    assert.match(r.error, error, text);
    assert.deepEqual([r.line, r.column], [line, column], `${text}: ${r.error}`);
  }
});

test("type globs: * is any run of characters, ? one, the rest literal", () => {
  assert.equal(globMatch("alert.*", "alert.cpu.high"), true);
  assert.equal(globMatch("alert.*", "alerts"), false);
  assert.equal(globMatch("a?c", "abc"), true);
  assert.equal(globMatch("a.c", "abc"), false);
  assert.equal(globMatch("*", ""), true);
});

test("a broken edit keeps the old rules running and shows one card with line and column; the fix clears it", async () => {
  const f = await hubFixture();
  try {
    f.writeRules('{\n  "sources": { "shop": {} },\n  "rules": [ { "name": "x", "to": "nobody" } ]\n}');
    await f.running.hub.reloadRules();
    await f.running.hub.reloadRules(); // the same error again: still one card
    const st = (await f.call("GET", "/v1/state", f.keys.owner)).body;
    assert.equal(st.cards.length, 1);
    assert.equal(st.cards[0].title, "rules.json has an error; the old rules keep running");
    assert.match(st.cards[0].text, /rules\.json:3:14: rules\[0\]\.when: required/);
    assert.equal(st.rulesVersion, 1);
    const ev = await f.call("POST", "/v1/events", f.keys.source, { id: "still", type: "alert.x" });
    assert.deepEqual(ev.body.routed, ["alerts"], "the old rules still route");
    f.writeRules(baseRules);
    await f.running.hub.reloadRules();
    const fixed = (await f.call("GET", "/v1/state", f.keys.owner)).body;
    assert.equal(fixed.cards.length, 0);
    assert.equal(fixed.rulesVersion, 1, "the same rules as before: no new version");
  } finally {
    await f.close();
  }
});

test("a deleted rules file keeps the old rules running with one card; putting it back clears it", async () => {
  const f = await hubFixture();
  try {
    const { unlinkSync } = await import("node:fs");
    unlinkSync(f.home.rules);
    await f.running.hub.reloadRules();
    await f.running.hub.reloadRules();
    const st = await f.state();
    assert.deepEqual(st.cards.map((c) => c.title), ["rules.json cannot be read; the old rules keep running"]);
    assert.match(st.cards[0].text, /rules\.json: no such file \(ENOENT\)$/);
    assert.deepEqual((await f.call("POST", "/v1/events", f.keys.source, { id: "x", type: "alert.x" })).body.routed, ["alerts"]);
    f.writeRules(baseRules);
    await f.running.hub.reloadRules();
    assert.deepEqual((await f.call("GET", "/v1/state", f.keys.owner)).body.cards, []);
  } finally {
    await f.close();
  }
});

test("a hub that never loaded rules does not start without a readable rules file", async () => {
  const { homePaths, readMasterKey, writeFileAtomic } = await import("../src/host/home.js");
  const { startServe } = await import("../src/host/serve.js");
  const { tempDir } = await import("./helpers.js");
  const home = homePaths(tempDir());
  readMasterKey(home, true);
  writeFileAtomic(home.config, JSON.stringify({ listen: "127.0.0.1:0", publicUrl: null, owner: "x", worker: null, channels: {} }));
  await assert.rejects(startServe(home, { lang: "en", log: () => {} }), /cannot load rules .*rules\.json: no such file \(ENOENT\).*A hub that never loaded rules does not start/);
});

test("a deleted rule cancels its unclaimed runs with a notice; a claimed run keeps its job", async () => {
  const f = await hubFixture();
  try {
    await f.call("POST", "/v1/events", f.keys.source, { id: "1", type: "alert.a" });
    const job = (await f.call("GET", "/v1/work?claim=c", f.keys.worker)).body.job;
    await f.call("POST", "/v1/events", f.keys.source, { id: "2", type: "alert.b" });
    f.writeRules({ ...baseRules, rules: baseRules.rules.filter((r) => r.name !== "alerts") });
    await f.running.hub.reloadRules();
    const st = await f.state();
    assert.equal(st.rulesVersion, 2);
    assert.deepEqual(st.runs.map((r) => [r.id, r.state]), [[2, "cancelled"], [1, "claimed"]]);
    assert.equal(st.cards.length, 1);
    assert.equal(st.cards[0].title, 'Rule "alerts" is gone; run 2 is cancelled');
    const res = await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done", summary: "finished anyway" });
    assert.equal(res.status, 200);
    const after = await f.state();
    assert.equal(after.runs.find((r) => r.id === 1)!.state, "done");
  } finally {
    await f.close();
  }
});
