/**
 * The permission table (protocol.md 谁能做什么), every endpoint against every kind of key, and key removal.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { hubFixture, type Fixture } from "./helpers.js";

let f: Fixture;
let token = "";
let card = 0;
before(async () => {
  f = await hubFixture();
  await f.call("POST", "/v1/events", f.keys.source, { id: "p1", type: "alert.x" });
  const job = (await f.call("GET", "/v1/work?claim=perm", f.keys.worker)).body.job;
  token = job.token;
  await f.call("POST", "/v1/runs/1/result", token, { outcome: "done", ask: [{ title: "Q", options: ["a", "b"] }] });
  card = (await f.call("GET", "/v1/state", f.keys.owner)).body.cards[0].id;
});
after(async () => {
  await f.close();
});

type Kind = "source" | "worker" | "channel" | "owner" | "token" | "none" | "bogus";
const kinds: Kind[] = ["source", "worker", "channel", "owner", "token", "none", "bogus"];

test("each endpoint accepts exactly the kinds of key the table allows", async () => {
  const keyOf = (k: Kind): string | null =>
    k === "none" ? null : k === "bogus" ? "no-such-key" : k === "token" ? token : f.keys[k];
  // [method, path, body, the kinds that may call it]
  const table: [string, string, unknown, Kind[]][] = [
    ["POST", "/v1/events", { id: "perm-x", type: "zzz.none" }, ["source"]],
    ["GET", "/v1/work?claim=perm-probe&capacity=0", undefined, ["worker"]],
    ["GET", "/v1/cards/next", undefined, ["channel"]],
    ["GET", "/v1/state", undefined, ["owner"]],
    ["POST", `/v1/cards/${card}/resolve`, { reason: "probe" }, ["owner"]],
    ["POST", "/v1/runs/1/cancel", {}, ["owner"]],
    ["POST", "/v1/keys/source/probe", undefined, ["owner"]],
    ["DELETE", "/v1/keys/source/probe-none", undefined, ["owner"]],
  ];
  for (const [method, path, body, allowed] of table) {
    for (const k of kinds) {
      const r = await f.call(method, path, keyOf(k), body);
      const label = `${method} ${path} with ${k}`;
      if (allowed.includes(k)) {
        assert.notEqual(r.status, 401, label);
        assert.notEqual(r.status, 403, label);
      } else if (k === "none" || k === "bogus" || k === "token") {
        assert.equal(r.status, 401, label);
      } else {
        assert.equal(r.status, 403, label);
      }
    }
  }
});

test("run endpoints take only the run's own token", async () => {
  for (const key of [f.keys.source, f.keys.worker, f.keys.channel, f.keys.owner]) {
    const r = await f.call("POST", "/v1/runs/1/result", key, { outcome: "done" });
    assert.equal(r.status, 403);
    assert.match(r.body.error, /token/);
  }
  await f.call("POST", "/v1/events", f.keys.source, { id: "p2", type: "alert.x" });
  const other = (await f.call("GET", "/v1/work?claim=perm2", f.keys.worker)).body.job;
  const cross = await f.call("POST", "/v1/runs/1/started", other.token, {});
  assert.equal(cross.status, 403, "a token only reports its own run");
});

test("a card answer comes from a channel of that card or the owner, nobody else", async () => {
  for (const key of [f.keys.source, f.keys.worker]) {
    const r = await f.call("POST", `/v1/cards/${card}/answer`, key, { choice: 0 });
    assert.equal(r.status, 403);
  }
});

test("a worker cannot take another worker's run", async () => {
  await f.call("POST", "/v1/events", f.keys.source2, { id: "t1", type: "ticket.x", subject: "a" });
  const w1 = await f.call("GET", "/v1/work?claim=steal", f.keys.worker);
  assert.equal(w1.body.job, null);
});

test("removing a key ends its held long poll at once and refuses it afterwards", async () => {
  const key = (await f.call("POST", "/v1/keys/channel/ch2", f.keys.owner)).body.key as string;
  // drain what ch2 has, then hold a poll
  while ((await f.call("GET", "/v1/cards/next", key)).body.card) {
    // nothing to do with it here
  }
  const held = f.call("GET", "/v1/cards/next?wait=30", key);
  await new Promise((r) => setTimeout(r, 200));
  const t0 = Date.now();
  const removed = await f.call("DELETE", "/v1/keys/channel/ch2", f.keys.owner);
  assert.deepEqual(removed.body, { ok: true, changed: true });
  const r = await held;
  assert.equal(r.status, 401);
  assert.ok(Date.now() - t0 < 5000);
  assert.equal((await f.call("GET", "/v1/cards/next", key)).status, 401);
  const again = await f.call("DELETE", "/v1/keys/channel/ch2", f.keys.owner);
  assert.deepEqual(again.body, { ok: true, changed: false });
});

test("a new key for a name replaces the old one", async () => {
  const a = (await f.call("POST", "/v1/keys/source/rot", f.keys.owner)).body.key;
  const b = (await f.call("POST", "/v1/keys/source/rot", f.keys.owner)).body.key;
  assert.notEqual(a, b);
  assert.equal((await f.call("POST", "/v1/events", a, { id: "r", type: "x" })).status, 401);
  assert.equal((await f.call("POST", "/v1/events", b, { id: "r", type: "x" })).status, 200);
  const bad = await f.call("POST", "/v1/keys/robot/x", f.keys.owner);
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error, "kind must be source, worker, channel, owner or metrics");
  // A key's name is a name rules.json can use: "." and ".." could not be removed again (URLs drop them).
  const names = ["__proto__", "a b", "%E2%80%AE", "%C3%A9", "-x", "x".repeat(101), "a%2Fb", ".x"];
  for (const name of names) {
    const r = await f.call("POST", `/v1/keys/source/${name}`, f.keys.owner);
    assert.deepEqual([r.status, r.body.error], [400, "name: letters, digits, _ . - (at most 100), starting with a letter or digit"], name);
  }
  // Keys made before names were checked this way stay removable: removal takes what key names used to allow.
  for (const name of ["__proto__", "a b", "%E2%80%AE", "%C3%A9", "-x", ".x"]) {
    assert.deepEqual((await f.call("DELETE", `/v1/keys/source/${name}`, f.keys.owner)).body, { ok: true, changed: false }, name);
  }
  for (const name of ["x".repeat(101), "a%2Fb", "a%01b"]) {
    const r = await f.call("DELETE", `/v1/keys/source/${name}`, f.keys.owner);
    assert.deepEqual([r.status, r.body.error], [400, "name: 1 to 100 characters, no control characters or /"], name);
  }
  const longest = await f.call("POST", `/v1/keys/source/${"x".repeat(100)}`, f.keys.owner);
  assert.equal(longest.status, 200);
});
