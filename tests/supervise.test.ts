/**
 * Every background loop of the hub runs under one supervisor (issue 14, item 6): a loop that throws or returns is
 * logged and started again with growing delays; an uncaught exception or unhandled rejection is logged with the part
 * it came from, restarts that part, and never ends the hub. The guard is process-wide, so those cases run in a real
 * `serve` child process (node:test fails any test during which an uncaught error happens in its own process).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { baseRules, makeHome, serveProcess, until } from "./helpers.js";
import { Supervisor } from "../src/worker/loops.js";
import type { State } from "../src/protocol/responses.js";

test("a loop that throws or returns is logged and restarted with a doubling delay up to the largest; stop() ends it", async () => {
  const lines: string[] = [];
  const sup = new Supervisor((l) => lines.push(l));
  let starts = 0;
  let sawAbort = false;
  sup.start("loop a", async (signal) => {
    starts++;
    if (starts <= 3) throw new Error(`boom ${starts}`);
    if (starts === 4) return;
    await new Promise<void>((r) => signal.addEventListener("abort", () => r(), { once: true }));
    sawAbort = true;
  }, { restartFirstMs: 20, restartMaxMs: 50 });
  await until(() => starts === 5, 5000, "the fifth start");
  assert.deepEqual(lines, [
    "loop a: Error: boom 1; restarting in 0.02 s",
    "loop a: Error: boom 2; restarting in 0.04 s",
    "loop a: Error: boom 3; restarting in 0.05 s",
    "loop a: returned; restarting in 0.05 s",
  ]);
  await sup.stop();
  assert.equal(sawAbort, true, "stop() aborted the loop's signal and waited for it");
  assert.equal(starts, 5, "not restarted after stop()");
});

test("a loop that ran long enough without failing starts again from the first delay", async () => {
  const lines: string[] = [];
  const sup = new Supervisor((l) => lines.push(l));
  let starts = 0;
  sup.start("loop b", async (signal) => {
    starts++;
    if (starts === 3) await new Promise((r) => setTimeout(r, 120));
    if (starts <= 4) throw new Error(`fail ${starts}`);
    await new Promise<void>((r) => signal.addEventListener("abort", () => r(), { once: true }));
  }, { restartFirstMs: 10, restartMaxMs: 1000, stableMs: 100 });
  await until(() => starts === 5, 5000, "the fifth start");
  await sup.stop();
  assert.deepEqual(lines, [
    "loop b: Error: fail 1; restarting in 0.01 s",
    "loop b: Error: fail 2; restarting in 0.02 s",
    "loop b: Error: fail 3; restarting in 0.01 s",
    "loop b: Error: fail 4; restarting in 0.02 s",
  ]);
});

test("a channel plugin that throws asynchronously or leaves a rejection unhandled: the hub stays up, the log names the channel, the channel restarts", async () => {
  const rules = {
    ...baseRules,
    agents: { bot: { worker: "local", use: "command", command: ["node", "-e", "console.log('all good')"] } },
    rules: [{ name: "alerts", when: { source: "shop", types: ["alert.*"] }, to: "bot", cwd: "/tmp" }],
    channels: { boom: { name: "Boom" } },
  };
  const channelKey = "c".repeat(43);
  const { dir, home, keys } = makeHome(rules, { worker: { name: "local", key: "w".repeat(43), capacity: 1 }, channels: { boom: { use: "boom", key: channelKey, counter: "" } } });
  const counter = join(dir, "starts");
  const config = JSON.parse(readFileSync(home.config, "utf8"));
  config.channels.boom.counter = counter;
  writeFileSync(home.config, JSON.stringify(config));
  mkdirSync(join(home.plugins, "boom"), { recursive: true });
  // 1st start: a timer callback throws; 2nd: a rejection nobody handles; 3rd: an EventEmitter "error" without a
  // listener; then it polls like a good channel.
  writeFileSync(join(home.plugins, "boom", "channel.mjs"), `import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { EventEmitter } from "node:events";
export default async function ({ hub, options, signal }) {
  const n = (existsSync(options.counter) ? Number(readFileSync(options.counter, "utf8")) : 0) + 1;
  writeFileSync(options.counter, String(n));
  if (n === 1) setTimeout(() => { throw new Error("async boom"); }, 10);
  if (n === 2) setTimeout(() => { Promise.reject(new Error("unhandled boom")); }, 10);
  if (n === 3) setTimeout(() => new EventEmitter().emit("error", new Error("emitter boom")), 10);
  while (!signal.aborted) await hub.nextCard(1).catch(() => {});
}
`);
  const hub = await serveProcess(dir);
  try {
    await until(() => existsSync(counter) && readFileSync(counter, "utf8") === "4", 30_000, () => `the channel's fourth start (output: ${hub.output()})`);
    const out = hub.output();
    assert.match(out, /^channel boom: uncaught exception: Error: async boom\n {4}at /m);
    assert.match(out, /^channel boom: unhandled rejection: Error: unhandled boom\n {4}at /m);
    assert.match(out, /^channel boom: uncaught exception: Error: emitter boom\n {4}at /m);
    assert.match(out, /^channel boom: stopped by an uncaught error; restarting in 1 s$/m);
    assert.match(out, /^channel boom: stopped by an uncaught error; restarting in 2 s$/m);
    assert.match(out, /^channel boom: stopped by an uncaught error; restarting in 4 s$/m);
    assert.equal(hub.child.exitCode, null, "the hub is still running");
    const health = await fetch(`${hub.url}/v1/health`);
    assert.equal(health.status, 200);
    await fetch(`${hub.url}/v1/events`, { method: "POST", headers: { authorization: `Bearer ${keys.source}`, "content-type": "application/json" }, body: JSON.stringify({ id: "after", type: "alert.x" }) });
    const state = await until(async () => {
      const s = (await (await fetch(`${hub.url}/v1/state`, { headers: { authorization: `Bearer ${keys.owner}` } })).json()) as State;
      return s.runs[0]?.state === "done" && s.channels.find((c) => c.id === "boom")?.seenAt && s;
    }, 20_000, "a run to finish and the restarted channel to poll");
    assert.equal(state.runs[0].summary, "all good");
  } finally {
    await hub.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the local worker meets a fault of its own files (claim is a folder): it logs it, pauses claiming with backoff instead of failing its loop, and claims again once the fault is gone", async () => {
  const rules = {
    ...baseRules,
    agents: { bot: { worker: "local", use: "command", command: ["node", "-e", "console.log('claimed after all')"] } },
    rules: [{ name: "alerts", when: { source: "shop", types: ["alert.*"] }, to: "bot", cwd: "/tmp" }],
    channels: {},
  };
  const { dir, home, keys } = makeHome(rules, { worker: { name: "local", key: "w".repeat(43), capacity: 1 } });
  mkdirSync(join(home.worker, "claim"), { recursive: true });
  const hub = await serveProcess(dir);
  try {
    const claim = join(home.worker, "claim");
    const paused = `worker local: ${claim}: not a regular file. Not claiming new runs (the runs in hand are watched and reported as usual); trying again in 1 s`;
    await until(() => hub.output().includes(paused), 20_000, "the worker to pause claiming");
    await new Promise((r) => setTimeout(r, 4000)); // retries at 1 s and 2 s meet the same fault
    assert.equal(hub.output().split(paused).length - 1, 1, `the same fault is logged once: ${hub.output()}`);
    assert.doesNotMatch(hub.output(), /^worker: .*restarting in/m, "the worker's loop itself never failed");
    await fetch(`${hub.url}/v1/events`, { method: "POST", headers: { authorization: `Bearer ${keys.source}`, "content-type": "application/json" }, body: JSON.stringify({ id: "e", type: "alert.x" }) });
    rmSync(join(home.worker, "claim"), { recursive: true });
    const run = await until(async () => {
      const s = await (await fetch(`${hub.url}/v1/state`, { headers: { authorization: `Bearer ${keys.owner}` } })).json();
      return s.runs[0]?.state === "done" && s.runs[0];
    }, 30_000, "the run to be claimed and finished");
    assert.equal(run.summary, "claimed after all");
    assert.match(hub.output(), /^worker local: its files can be written again; claiming goes on$/m);
    assert.equal(hub.child.exitCode, null);
  } finally {
    await hub.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
