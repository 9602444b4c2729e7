/**
 * Queued runs say why they wait (issue 30): GET /v1/state gives each queued run the one thing a claim would check
 * first (kernel/runs.ts waitsFor, the test `claimable` makes) — its worker, its group's limit, its lane's run, its
 * rule's pause, a rule gone — and `status` words it; a claim by the named worker then takes the run.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { hubFixture } from "./helpers.js";
import { formatStatus } from "../src/cli/status.js";
import type { State } from "../src/protocol/responses.js";

test("a queued run says what it waits for, as a claim would find it, and status words it", async () => {
  const f = await hubFixture();
  try {
    const waits = async () => {
      const s = await f.state();
      return Object.fromEntries([...s.active, ...s.runs].filter((r) => r.state === "queued").map((r) => [r.id, r.waits]));
    };
    // Rule per-subject (source crm): one lane per subject, two runs at a time, its agent on worker w2.
    const post = (id: string, subject: string) => f.call("POST", "/v1/events", f.keys.source2, { id, type: "ticket.x", subject });
    await post("a1", "a");
    assert.deepEqual(await waits(), { 1: { why: "worker", worker: "w2" } });
    // w1 asks for work: the run is not its agent's, so it stays queued and still waits for w2.
    assert.equal((await f.call("GET", "/v1/work?claim=x", f.keys.worker)).body.job, null);
    const job = (await f.call("GET", "/v1/work?claim=c1", f.keys.worker2)).body.job;
    assert.equal(job.run, 1);
    // The same lane as run 1: behind it.
    await post("a2", "a");
    assert.deepEqual(await waits(), { 2: { why: "lane", run: 1 } });
    // Another lane takes the group's second place; a third lane then finds both taken.
    await post("b1", "b");
    assert.equal((await f.call("GET", "/v1/work?claim=c2", f.keys.worker2)).body.job.run, 3);
    await post("c1", "c");
    assert.deepEqual(await waits(), { 2: { why: "lane", run: 1 }, 4: { why: "group", limit: 2 } });
    const text = formatStatus((await f.state()) as State, "en", f.url);
    assert.ok(text.includes("      queued: waits for run #1 of its lane to end"), text);
    assert.ok(text.includes("      queued: its group runs 2 at a time, all taken"), text);
    // Paused: that comes first, whatever else holds it.
    await f.call("POST", "/v1/rules/per-subject/pause", f.keys.owner, {});
    assert.deepEqual(await waits(), { 2: { why: "paused" }, 4: { why: "paused" } });
    assert.ok(formatStatus((await f.state()) as State, "zh", f.url).includes("      排队中：规则暂停了，恢复后才运行"));
    await f.call("POST", "/v1/rules/per-subject/resume", f.keys.owner, {});
    // Run 1 ends: both queued runs now wait only for w2, and w2's next claim takes the older.
    await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done" });
    assert.deepEqual(await waits(), { 2: { why: "worker", worker: "w2" }, 4: { why: "worker", worker: "w2" } });
    assert.equal((await f.call("GET", "/v1/work?claim=c3", f.keys.worker2)).body.job.run, 2);
  } finally {
    await f.close();
  }
});
