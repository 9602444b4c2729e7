/**
 * Deadlines in isolation and a timer that never spins (issue 14, items 2 and 3): the real hub (its single timer,
 * its group commit, a real SQLite file) with a clock the test can move. A deadline whose handler breaks an
 * invariant is logged, answered 500 and leaves the others alone; a past time that changes nothing never re-arms
 * the timer at once. Damage is made by hand in the log and the database (appendRawFact, a trigger); what the tests read
 * is the hub's answers (GET /v1/state through its HTTP app, decisions) and what the kernel tells its timer.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { Hub } from "../src/host/hub.js";
import { createApp } from "../src/host/http.js";
import { homePaths, readMasterKey } from "../src/host/home.js";
import { hashKey } from "../src/kernel/credentials.js";
import { dueKeys, nextDeadline } from "../src/kernel/decide.js";
import type { DueRow, Input } from "../src/kernel/types.js";
import type { State, WorkAnswer } from "../src/protocol/responses.js";
import { appendRawFact } from "../sim/simulation.js";
import { baseRules, tempDir, until } from "./helpers.js";

const H = { source: hashKey("src"), worker: hashKey("wrk"), channel: hashKey("chn"), owner: hashKey("own") };

/** A hub on a fresh home with `baseRules`; `clock()` is the real time plus `skewMs`, and is counted. */
async function hubWithClock() {
  const dir = tempDir("aa-deadlines-");
  const home = homePaths(dir);
  mkdirSync(home.dir, { recursive: true });
  readMasterKey(home, true);
  writeFileSync(home.rules, JSON.stringify(baseRules));
  const lines: string[] = [];
  const c = { skewMs: 0, reads: 0 };
  const hub = new Hub({ home, lang: "en", clock: () => { c.reads++; return Date.now() + c.skewMs; }, log: (l) => lines.push(l) });
  await hub.start();
  for (const [keyKind, name, newHash] of [["source", "shop", H.source], ["worker", "w1", H.worker], ["channel", "ch1", H.channel], ["owner", "owner", H.owner]] as const) {
    await hub.submit({ kind: "keyNew", keyHash: null, local: true, keyKind, name, newHash });
  }
  const app = createApp(hub);
  return {
    hub, lines, clock: c,
    submit: (input: Input) => hub.submit(input),
    /** GET /v1/state as the owner, through the hub's HTTP app (no socket). */
    async state(): Promise<State> {
      const res = await app.request("/v1/state", { headers: { authorization: "Bearer own" } });
      assert.equal(res.status, 200);
      return (await res.json()) as State;
    },
    async close() {
      await hub.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** How often the hub read its clock during `ms` of real time while nothing came in: every timer fire reads it. */
async function clockReadsWhileIdle(h: Awaited<ReturnType<typeof hubWithClock>>, ms: number): Promise<number> {
  const before = h.clock.reads;
  await new Promise((r) => setTimeout(r, ms));
  return h.clock.reads - before;
}

test("a deadline naming a run that does not exist fails alone: logged with its invariant and stack, retried later; the later beside it fires", async () => {
  const h = await hubWithClock();
  try {
    await h.submit({ kind: "event", keyHash: H.source, event: { id: "e1", type: "alert.x" } });
    const job = (await h.submit({ kind: "work", keyHash: H.worker, claim: "c1", running: [], capacity: 1 })).body as { job: { run: number; token: string } };
    const now = h.hub.now();
    // The broken row comes due first, a real `later` 1.5 s after it.
    appendRawFact(h.hub.store, "corrupt", [["due", "retry:999", { at: now, kind: "retry", ref: "999" } satisfies DueRow]], now);
    await h.submit({ kind: "result", run: job.job.run, token: job.job.token, hash: "r1", result: { outcome: "done", later: [{ key: "t", at: new Date(now + 1500).toISOString() }] } });
    const fired = (await until(async () => (await h.state()).active.find((r) => r.state === "queued"), 15_000, "the later timer to fire"))!;
    assert.ok(dueKeys(h.hub.store.view, Number.MAX_SAFE_INTEGER, 100).includes("retry:999"), "the failing deadline is kept");
    assert.ok(nextDeadline(h.hub.store.view)! > now, "and was moved on, not retried at once (no other deadline comes sooner)");
    const claim = (await h.submit({ kind: "work", keyHash: H.worker, claim: "c2", running: [], capacity: 1 })).body as WorkAnswer;
    assert.deepEqual([claim.job?.run, claim.job?.context.timers.map((t) => t.key)], [fired.id, ["t"]], "the run the later timer made");
    const logged = h.lines.filter((l) => l.includes("invariant"));
    assert.ok(logged.length >= 1 && logged.length <= 3, `a few failures logged, not a storm: ${logged.length}`);
    assert.match(logged[0]!, /^internal error in tick: invariant retry-deadline-names-waiting-run\n.*\n\s+at /s);
  } finally {
    await h.close();
  }
});

test("an idle hub whose cards wait for channels that do not poll (silent, failing) reads its clock a bounded number of times", async () => {
  const h = await hubWithClock();
  try {
    // A card for ch1 and ch2 (a broken rules file: a hub alert for every channel). ch1 takes it and fails to send
    // it (a failing webhook: retried in 30 s); ch2 never polls (a channel not running).
    await h.submit({ kind: "rulesError", error: "rules.json:1:1: broken", missing: false });
    const offered = (await h.submit({ kind: "cardsNext", keyHash: H.channel })).body as { card: { id: number; version: number } };
    await h.submit({ kind: "failed", keyHash: H.channel, card: offered.card.id, version: offered.card.version, error: "HTTP 500" });
    // An hour later nobody has polled: both offers lie in the past.
    h.clock.skewMs = 60 * 60_000 - 60_000;
    h.hub.arm();
    const reads = await clockReadsWhileIdle(h, 1500);
    assert.ok(reads <= 10, `the clock was read ${reads} times in 1.5 s of idling`);
  } finally {
    await h.close();
  }
});

test("in one group commit, the input that throws is answered 500 and writes nothing; the inputs before and after it stand", async () => {
  const h = await hubWithClock();
  try {
    const now = h.hub.now();
    appendRawFact(h.hub.store, "corrupt", [["due", "retry:999", { at: now - 1, kind: "retry", ref: "999" } satisfies DueRow]], now);
    h.hub.store.commit([], h.hub.env); // reads the end of the log again, past the fact made by hand
    const seq = (await h.state()).seq;
    const [a, bad, b] = h.hub.store.commit([
      { input: { kind: "event", keyHash: H.source, event: { id: "before", type: "other.x" } }, now },
      { input: { kind: "tick", due: "retry:999" } as Input, now },
      { input: { kind: "event", keyHash: H.source, event: { id: "after", type: "other.x" } }, now },
    ], h.hub.env);
    assert.deepEqual([a!.status, bad!.status, b!.status], [200, 500, 200]);
    assert.deepEqual([a!.committed.length, bad!.committed.length, b!.committed.length], [1, 0, 1]);
    assert.equal((await h.state()).seq, seq + 2);
    assert.deepEqual([nextDeadline(h.hub.store.view), dueKeys(h.hub.store.view, now - 1, 100)], [now - 1, ["retry:999"]], "the deadline is untouched");
  } finally {
    await h.close();
  }
});

test("a failing deadline whose failure cannot be recorded either: the timer waits 5 s instead of firing again at once", async () => {
  const h = await hubWithClock();
  try {
    const now = h.hub.now();
    appendRawFact(h.hub.store, "corrupt", [["due", "retry:999", { at: now, kind: "retry", ref: "999" } satisfies DueRow]], now);
    // SQLite refuses to write that row again (as a full disk or a damaged page would refuse it).
    h.hub.store.db.exec(`CREATE TEMP TRIGGER refuse BEFORE INSERT ON v_due WHEN NEW.key = 'retry:999' BEGIN SELECT RAISE(ABORT, 'refused'); END`);
    h.hub.arm();
    await until(() => h.lines.some((l) => l.startsWith("timer: a past deadline changed nothing")), 10_000, "the timer to give up for now");
    assert.deepEqual(h.lines.filter((l) => l.startsWith("internal error")).map((l) => l.split("\n")[0]), [
      "internal error in tick: invariant retry-deadline-names-waiting-run",
      "internal error in dueFailed: SqliteError: refused",
    ]);
    assert.equal(h.lines.at(-1), "timer: a past deadline changed nothing; trying again in 5 s");
    const reads = await clockReadsWhileIdle(h, 1500);
    assert.ok(reads <= 10, `the clock was read ${reads} times in 1.5 s`);
  } finally {
    await h.close();
  }
});
