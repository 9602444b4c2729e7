/**
 * A worker's polls of one claim, in the order the worker sent them (CI, agent-secrets F25a-1: run "r" stayed claimed,
 * its result refused for its token). The worker gives up a poll when a run of its own ends and asks again under the
 * same claim id; under load the given-up request reached the hub *after* the later one had claimed the run and been
 * answered, claimed again and issued a new token, so the token the worker held stopped working. Each poll now says
 * its place (`seq`); one that comes after a later one of its claim decides nothing. Real hub over HTTP.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { hubFixture } from "./helpers.js";
import type { Job } from "../src/protocol/responses.js";
import { claimSeqsPerWorkerMax } from "../src/host/long-polls.js";

test("a poll that reaches the hub after a later one of its claim (seq) decides nothing: the token the later one handed out stays valid, and a poll without seq is decided as before", async () => {
  const f = await hubFixture();
  try {
    assert.equal((await f.call("POST", "/v1/events", f.keys.source, { id: "o1", type: "alert.x", subject: "a" })).status, 200);
    const later = await f.call("GET", "/v1/work?claim=c1&seq=200&capacity=1", f.keys.worker);
    const job = later.body.job as Job;
    assert.ok(job, JSON.stringify(later.body));
    // The given-up poll, sent before (seq 100), arrives now: no job, and the run's token is not replaced.
    const stale = await f.call("GET", "/v1/work?claim=c1&seq=100&capacity=1", f.keys.worker);
    assert.deepEqual([stale.status, stale.body], [200, { job: null, cancel: [] }]);
    // The same seq again is not later either.
    assert.deepEqual((await f.call("GET", "/v1/work?claim=c1&seq=200&capacity=1", f.keys.worker)).body, { job: null, cancel: [] });
    // Round 46, F46-2: another worker key making up claim ids (more than the hub keeps of one key) does not make the
    // hub forget this worker's claim: each key's memory is its own.
    const other = (await f.call("POST", "/v1/keys/worker/w2", f.keys.owner)).body as { key?: string };
    assert.equal(typeof other.key, "string", JSON.stringify(other));
    for (let i = 0; i <= claimSeqsPerWorkerMax; i++) assert.equal((await f.call("GET", `/v1/work?claim=made-up-${i}&seq=${1000 + i}&capacity=0`, other.key!)).status, 200);
    assert.deepEqual((await f.call("GET", "/v1/work?claim=c1&seq=150&capacity=1", f.keys.worker)).body, { job: null, cancel: [] });
    assert.equal((await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done", summary: "ok" })).status, 200);
    // A lost answer asked for again with a later seq gets the job back (with a new token), as without seq.
    assert.equal((await f.call("POST", "/v1/events", f.keys.source, { id: "o2", type: "alert.x", subject: "b" })).status, 200);
    const first = (await f.call("GET", "/v1/work?claim=c2&seq=300&capacity=1", f.keys.worker)).body.job as Job;
    const again = (await f.call("GET", "/v1/work?claim=c2&seq=301&capacity=1", f.keys.worker)).body.job as Job;
    assert.deepEqual([again.run, again.token === first.token], [first.run, false]);
    assert.equal((await f.call("POST", `/v1/runs/${again.run}/result`, first.token, { outcome: "done" })).status, 403);
    assert.equal((await f.call("POST", `/v1/runs/${again.run}/result`, again.token, { outcome: "done" })).status, 200);
    // A worker that sends no seq (an older worker): decided as before.
    assert.equal((await f.call("POST", "/v1/events", f.keys.source, { id: "o3", type: "alert.x", subject: "c" })).status, 200);
    const plain = (await f.call("GET", "/v1/work?claim=c3&capacity=1", f.keys.worker)).body.job as Job;
    const replay = (await f.call("GET", "/v1/work?claim=c3&capacity=1", f.keys.worker)).body.job as Job;
    assert.deepEqual([replay.run, replay.token === plain.token], [plain.run, false]);
  } finally {
    await f.close();
  }
});
