/**
 * `serve` says when a worker or a channel connects (its first poll, or its first after going silent) and when one goes
 * silent (no poll for `workerOnlineMs`, while none of its polls is held), one line each, and nothing otherwise.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Presence } from "../src/host/presence.js";
import { workerOnlineMs } from "../src/kernel/limits.js";
import { hubFixture, until } from "./helpers.js";

/** A Presence on a clock the test moves; `check` is what its timer runs. */
function presence(lang: "en" | "zh" = "en") {
  const lines: string[] = [];
  const clock = { now: Date.parse("2026-12-01T10:00:00Z") };
  const p = new Presence({ clock: () => clock.now, silentAfterMs: workerOnlineMs, log: (l) => lines.push(l), lang, timers: false });
  return { p, lines, clock };
}

test("a part connects once, stays quiet while it polls, goes silent once, and connects again", () => {
  const { p, lines, clock } = presence();
  p.pollStarted("worker", "w1");
  p.pollEnded("worker", "w1");
  p.pollStarted("worker", "w1");
  p.pollStarted("channel", "slack");
  assert.deepEqual(lines, ["worker w1 connected", "channel slack connected"]);
  clock.now += 50_000;
  p.pollEnded("worker", "w1");
  clock.now += workerOnlineMs - 1;
  p.check();
  assert.equal(lines.length, 2, "not yet: the worker's last poll ended less than 3 min ago, the channel's poll is held");
  clock.now += 1;
  p.check();
  assert.deepEqual(lines.slice(2), ["worker w1 went silent: no poll for 180 s"]);
  clock.now += 10 * workerOnlineMs;
  p.check();
  assert.equal(lines.length, 3, "said once; a held poll is never silent, however long");
  p.pollEnded("channel", "slack");
  clock.now += workerOnlineMs;
  p.check();
  p.check();
  p.pollStarted("worker", "w1");
  assert.deepEqual(lines.slice(3), ["channel slack went silent: no poll for 180 s", "worker w1 connected"]);
  assert.equal(p.nextCheckAt(), clock.now + workerOnlineMs, "the next look is for the worker; the silent channel needs none");
});

test("the lines follow the hub's language", () => {
  const { p, lines, clock } = presence("zh");
  p.pollStarted("channel", "feishu");
  p.pollEnded("channel", "feishu");
  clock.now += workerOnlineMs;
  p.check();
  assert.deepEqual(lines, ["通道 feishu 连上了", "通道 feishu 没动静了：180 秒没来轮询"]);
});

test("serve prints a line when a worker or channel connects or goes silent, and is quiet otherwise", async () => {
  const lines: string[] = [];
  const f = await hubFixture(undefined, {}, "", { log: (l) => lines.push(l), presenceSilentMs: 300 });
  try {
    const said = () => lines.filter((l) => / (connected|went silent: .*)$/.test(l));
    assert.equal((await f.call("GET", "/v1/work?claim=a", f.keys.worker)).status, 200);
    assert.equal((await f.call("GET", "/v1/cards/next", f.keys.channel)).status, 200);
    assert.equal((await f.call("GET", "/v1/state", f.keys.owner)).status, 200);
    await until(() => said().length === 4, 10_000, "both to go silent");
    // Each part connects, then goes silent 300 ms after its poll; on a loaded machine the worker may go silent
    // before the channel connects, so the order is checked per part.
    const four = said().map((l) => l.replace(/\d+ s$/, "N s"));
    assert.deepEqual([...four].sort(), ["channel ch1 connected", "channel ch1 went silent: no poll for N s", "worker w1 connected", "worker w1 went silent: no poll for N s"]);
    for (const part of ["worker w1", "channel ch1"]) assert.ok(four.indexOf(`${part} connected`) < four.indexOf(`${part} went silent: no poll for N s`), part);
    await f.call("GET", "/v1/work?claim=b", f.keys.worker);
    assert.deepEqual(said().slice(4), ["worker w1 connected"]);
    assert.deepEqual(lines.filter((l) => !said().includes(l)), [], "nothing else was printed");
  } finally {
    await f.close();
  }
});

test("GET /v1/state gives each worker's slots as its last GET /v1/work said them: capacity (free now) plus running", async () => {
  const f = await hubFixture();
  try {
    const slots = async () => (await f.state()).workers.map((w) => [w.name, w.slots, w.free]);
    assert.equal((await f.call("GET", "/v1/work?claim=a&capacity=3", f.keys.worker)).status, 200);
    assert.deepEqual(await slots(), [["w1", 3, 3]]);
    // Two runs in hand (ids the hub need not know: the worker's word is what is shown), one slot free.
    assert.equal((await f.call("GET", "/v1/work?claim=b&capacity=1&running=7,8", f.keys.worker)).status, 200);
    assert.deepEqual(await slots(), [["w1", 3, 1]]);
    // No capacity given is one, as GET /v1/work reads it; a channel's poll says nothing of workers.
    await f.call("GET", "/v1/work?claim=c", f.keys.worker);
    await f.call("GET", "/v1/cards/next", f.keys.channel);
    assert.deepEqual(await slots(), [["w1", 1, 1]]);
  } finally {
    await f.close();
  }
  // A hub that started after the worker's last poll does not know its slots (kept in memory, like presence).
  const { p } = presence();
  assert.equal(p.capacityOf("w1"), null);
  p.pollStarted("channel", "w1");
  assert.equal(p.capacityOf("w1"), null, "a channel of the same name is not the worker");
});
