/**
 * A wake that comes while a long poll makes its first decisions (src/host/long-polls.ts). On arrival a poll decides,
 * and decides again while commits woke the workers meanwhile, a few rounds at most; then it is held. A wake during its
 * last round was lost: the poll was held and waited for the next wake or its timeout though its work was there (the
 * capacity run of issue 32 once ended with one run still unclaimed under heavy load). The hub's side is scripted here:
 * which decision finds work, and when the other commits wake the workers, cannot be forced over HTTP.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { LongPolls, type LongPollHub, type PollAnswer, type PollInput } from "../src/host/long-polls.js";
import type { Committed } from "../src/host/committed.js";

const worker = { kind: "worker", name: "w" } as const;
const input: PollInput = { kind: "work", keyHash: "h", claim: "c1", running: [], capacity: 1 };
const nothing: Committed<PollAnswer> = { status: 200, body: { job: null, cancel: [] }, facts: [], committed: [], park: true };
const job: Committed<PollAnswer> = { status: 200, body: { job: { run: 7 } as never, cancel: [] }, facts: [], committed: [] };

/** A hub whose first `busy` decisions find nothing while another commit wakes the workers, and whose next one finds the job. */
function scripted(busy: number): { hub: LongPollHub; polls: LongPolls; decisions: () => number } {
  let n = 0;
  const hub: LongPollHub = {
    submit: async () => {
      n += 1;
      if (n > busy) return job;
      polls.wakeAll("worker:"); // another input of the same group commit queued work for the workers
      return nothing;
    },
    claimed: () => {},
  };
  const polls = new LongPolls(hub);
  return { hub, polls, decisions: () => n };
}

test("a poll woken during each of its first decisions is held and decides again at once: the job comes without waiting out the poll", async () => {
  for (const busy of [1, 3, 4, 5, 9]) {
    const { polls, decisions } = scripted(busy);
    const t0 = performance.now();
    const answer = await polls.poll(input, 20_000, undefined, worker as never, "worker:w");
    assert.deepEqual([answer.body, decisions()], [job.body, busy + 1], `woken during ${busy} decisions`);
    assert.ok(performance.now() - t0 < 10_000, `woken during ${busy} decisions: answered after ${performance.now() - t0} ms`);
  }
});

test("a poll that finds nothing and is not woken is held until its wait runs out, then answers with its last decision", async () => {
  let n = 0;
  const polls = new LongPolls({ submit: async () => ((n += 1), nothing), claimed: () => {} });
  const answer = await polls.poll(input, 300, undefined, worker as never, "worker:w");
  assert.deepEqual([answer.body, n], [nothing.body, 1]);
});
