/**
 * The worker survives faults of its own files (issue 14, item 6): a `worker/claim` that became a folder while `serve`
 * runs, a run folder that cannot be made. It logs the fault, keeps reporting the runs in hand, claims again once the
 * fault is gone, and reports a run it cannot prepare as "not run" instead of dying with it.
 */
import { test, afterEach } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { baseRules, hubFixture, tempDir, until, type Fixture } from "./helpers.js";
import { homePaths, newKey, readMasterKey, writeFileAtomic } from "../src/host/home.js";
import { registerKeysLocally, startServe, type Running } from "../src/host/serve.js";
import { Worker } from "../src/worker/worker.js";
import type { State } from "../src/protocol/responses.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const rules = {
  ...baseRules,
  agents: { bot: { worker: "w1", use: "command", command: ["node", "-e", "console.log('Done: ok')"] } },
  rules: [{ name: "alerts", when: { source: "shop", types: ["alert.*"] }, to: "bot", cwd: "/tmp", prompt: "handle it", parallel: 2 }],
};

async function state(url: string, owner: string): Promise<State> {
  const res = await fetch(`${url}/v1/state`, { headers: { authorization: `Bearer ${owner}` } });
  return (await res.json()) as State;
}

async function post(url: string, key: string, event: object): Promise<void> {
  const res = await fetch(`${url}/v1/events`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(event) });
  assert.equal(res.status, 200);
}

const runState = async (url: string, owner: string, id: number) => (await state(url, owner)).runs.find((r) => r.id === id);

test("worker/claim made a folder while serve runs: the worker logs it, claims nothing new, and claims again once it is fixed", async () => {
  const dir = tempDir();
  const home = homePaths(dir);
  mkdirSync(home.dir, { recursive: true });
  readMasterKey(home, true);
  const keys = { source: newKey(), worker: newKey(), owner: newKey() };
  registerKeysLocally(home, [
    { kind: "source", name: "shop", key: keys.source }, { kind: "worker", name: "w1", key: keys.worker }, { kind: "owner", name: "owner", key: keys.owner },
  ], "en");
  writeFileSync(home.rules, JSON.stringify(rules));
  writeFileAtomic(home.config, JSON.stringify({ listen: "127.0.0.1:0", publicUrl: null, owner: keys.owner, worker: { name: "w1", key: keys.worker, capacity: 2 }, channels: {} }));
  const log: string[] = [];
  const running: Running = await startServe(home, { lang: "en", log: (line) => log.push(line) });
  cleanups.push(async () => {
    await running.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const { url } = running;
  const claim = join(home.worker, "claim");
  await until(() => existsSync(claim), 10_000, "the worker's first claim");
  rmSync(claim);
  mkdirSync(claim);

  // The job answering the claim already kept on disk still comes; the next claim id cannot be kept.
  await post(url, keys.source, { id: "e1", type: "alert.x", subject: "#1" });
  await until(async () => (await runState(url, keys.owner, 1))?.state === "done", 20_000, "run 1 to be done");
  await until(() => log.some((l) => l.includes("Not claiming")), 10_000, "the fault in the log");
  assert.match(log.find((l) => l.includes("Not claiming"))!,
    /^worker w1: EISDIR: illegal operation on a directory, rename '.*claim\.\d+\.[0-9a-f]{12}\.tmp' -> '.*claim'\. Not claiming new runs \(the runs in hand are watched and reported as usual\); trying again in 1 s$/);

  await post(url, keys.source, { id: "e2", type: "alert.x", subject: "#2" });
  await new Promise((r) => setTimeout(r, 2500)); // a few fault retries
  assert.equal((await runState(url, keys.owner, 2))?.state, "queued", "no claim while the claim id cannot be kept");
  assert.equal((await state(url, keys.owner)).workers[0]!.online, true);

  rmSync(claim, { recursive: true });
  await until(async () => (await runState(url, keys.owner, 2))?.state === "done", 60_000, "run 2 to be done once the claim file can be written");
  assert.deepEqual(log.filter((l) => l.startsWith("worker w1:")).map((l) => l.replace(/: EISDIR.*/, ": EISDIR")), ["worker w1: EISDIR", "worker w1: its files can be written again; claiming goes on"]);
  assert.match(readFileSync(claim, "utf8"), /^[0-9a-f-]{36}$/);
});

test("a run whose folder cannot be made is tried again, then reported 'not run' with the reason; the worker goes on", async () => {
  const fx: Fixture = await hubFixture(rules);
  cleanups.push(() => fx.close());
  const log: string[] = [];
  mkdirSync(join(fx.home.worker, "runs"), { recursive: true });
  writeFileSync(join(fx.home.worker, "runs", "1-1"), "a file where run 1's folder goes");
  const w = new Worker({ url: fx.url, key: fx.keys.worker, name: "w1", capacity: 2, home: fx.home, lang: "en", log: (l) => log.push(l), faultRetryFirstMs: 100 });
  cleanups.push(() => w.stop());
  void w.run();
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x", subject: "#1" });
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e2", type: "alert.x", subject: "#2" });
  await until(async () => (await runState(fx.url, fx.keys.owner, 2))?.state === "done", 20_000, "run 2 to be done meanwhile");
  const run1 = await until(async () => {
    const r = await runState(fx.url, fx.keys.owner, 1);
    return r?.state === "waiting" && r;
  }, 20_000, "run 1 to be reported not run");
  assert.match(run1.error!, /^the worker could not go on with this run: EEXIST: file already exists, mkdir '.*\/runs\/1-1'$/);
  const folder = join(fx.home.worker, "runs", "1-1");
  assert.deepEqual(log.map((l) => l.replaceAll(folder, "<folder>").replace(new RegExp(`\\.${process.pid}\\.[0-9a-f]{12}\\.tmp`), ".<pid>.<random>.tmp")), [
    ...[0.1, 0.2, 0.4, 0.8].map((s) => `run 1: EEXIST: file already exists, mkdir '<folder>'. Trying again in ${s} s`),
    // reported all the same; only the records a restarted worker would use could not be kept
    "run 1: ENOTDIR: not a directory, open '<folder>/result.json.<pid>.<random>.tmp'",
    "run 1: ENOTDIR: not a directory, open '<folder>/submitted.<pid>.<random>.tmp'",
  ]);

  // Started again by hand, its next attempt has a folder of its own and runs.
  assert.equal((await fx.call("POST", "/v1/rules/alerts/run", fx.keys.owner, { subject: "#1" })).status, 200);
  await until(async () => (await runState(fx.url, fx.keys.owner, 1))?.state === "done", 20_000, "run 1 to be done");
});

test("a torn job.json left by an older worker is named in the log when a worker starts, not skipped silently", async () => {
  const fx: Fixture = await hubFixture(rules);
  cleanups.push(() => fx.close());
  const folder = join(fx.home.worker, "runs", "5-1");
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, "job.json"), '{"run":5,"attempt":1,"tok');
  const log: string[] = [];
  const w = new Worker({ url: fx.url, key: fx.keys.worker, name: "w1", capacity: 2, home: fx.home, lang: "en", log: (l) => log.push(l) });
  cleanups.push(() => w.stop());
  void w.run();
  await until(() => log.length > 0, 10_000, "a log line");
  assert.deepEqual(log, [`worker w1: ${join(folder, "job.json")} cannot be read (Unterminated string in JSON at position 25); that run is not picked up and is left for you`]);
});

test("worker/claim made a FIFO: the worker does not block on it (nor the hub beside it), says so, and claims once it is gone", async () => {
  const fx: Fixture = await hubFixture(rules);
  cleanups.push(() => fx.close());
  mkdirSync(fx.home.worker, { recursive: true });
  const claim = join(fx.home.worker, "claim");
  execFileSync("mkfifo", [claim]);
  const log: string[] = [];
  const w = new Worker({ url: fx.url, key: fx.keys.worker, name: "w1", capacity: 2, home: fx.home, lang: "en", log: (l) => log.push(l), faultRetryFirstMs: 100 });
  cleanups.push(() => w.stop());
  void w.run();
  await until(() => log.length > 0, 10_000, "a log line");
  assert.equal(log[0], `worker w1: ${claim}: not a regular file. Not claiming new runs (the runs in hand are watched and reported as usual); trying again in 0.1 s`);
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x", subject: "#1" });
  rmSync(claim);
  await until(async () => (await runState(fx.url, fx.keys.owner, 1))?.state === "done", 20_000, "run 1 to be done");
  assert.deepEqual(log.slice(1), ["worker w1: its files can be written again; claiming goes on"]);
});
