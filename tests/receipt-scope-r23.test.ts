/**
 * Issue 26 hostile round 23, F23-2: a later run's receipt closed the worker's warning about what an earlier run of the
 * same rule planted ("The agent wrote files your git would run") and its "receipt voided" notice — the owner's only
 * word of a planted repository. The kind: cards the hub or a worker made (`system`) inside a receipt's `resolve` scope.
 * The worker's own notices now come as `workerNotice` (cards of the hub's, made whatever the outcome and the rule's
 * `tell`); no receipt resolves any card with a `system`. A real kernel over a real store.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Store } from "../src/host/store.js";
import { parseRules } from "../src/protocol/rules-file.js";
import { hashKey } from "../src/kernel/credentials.js";
import type { Env, Input } from "../src/kernel/types.js";
import type { Result } from "../src/protocol/schema.js";

const env: Env = { master: Buffer.alloc(32, 5), lang: "en", publicUrl: null };
const K = { src: hashKey("src"), w: hashKey("w") };

function opened(tell?: string) {
  const store = new Store({ path: ":memory:", master: env.master, fingerprint: "test" });
  let now = 1_000_000;
  const one = (input: Input) => {
    const d = store.commit([{ input, now: (now += 1000) }], env)[0]!;
    assert.equal(d.status, 200, JSON.stringify(d.body));
    return d.body as Record<string, unknown>;
  };
  one({ kind: "keyNew", keyHash: null, local: true, keyKind: "source", name: "shop", newHash: K.src });
  one({ kind: "keyNew", keyHash: null, local: true, keyKind: "worker", name: "w", newHash: K.w });
  const parsed = parseRules(JSON.stringify({
    timezone: "UTC", sources: { shop: {} }, agents: { a: { worker: "w", use: "command", command: ["x"] } },
    rules: [{ name: "r", when: { source: "shop", types: ["alert.*"] }, to: "a", ...(tell ? { tell } : {}) }],
  }), { timezone: "UTC" });
  if (!parsed.ok) throw new Error(parsed.error);
  one({ kind: "rules", rules: parsed.rules, hash: "h" });
  /** One event, claimed and ended with `result`; the answer to the result. */
  let n = 0;
  const run = (result: Result) => {
    n++;
    one({ kind: "event", keyHash: K.src, event: { id: `e${n}`, type: "alert.x" } });
    const job = one({ kind: "work", keyHash: K.w, claim: `c${n}`, running: [], capacity: 1 }).job as { run: number; token: string };
    return one({ kind: "result", run: job.run, token: job.token, result, hash: `h${n}` });
  };
  const cards = () => store.view.where("cards", "1 ORDER BY key").map((x) => ({ id: x.row.id, title: x.row.title, state: x.row.state, system: x.row.system }));
  return { store, run, cards };
}

test("issue 26 r23 F23-2 (reported case): a later run's receipt cannot close the worker's warning or its voided-receipt notice; an agent's own notice it can", () => {
  const { run, cards } = opened();
  run({
    outcome: "done",
    notice: [{ title: "an agent's notice" }],
    workerNotice: [{ title: "The agent wrote files your git would run", text: "/p/.git: a repository the agent made" }, { title: "The receipt of run 1 could not be read and was voided" }],
  });
  assert.deepEqual(cards(), [
    { id: 1, title: "The agent wrote files your git would run", state: "open", system: "worker" },
    { id: 2, title: "The receipt of run 1 could not be read and was voided", state: "open", system: "worker" },
    { id: 3, title: "an agent's notice", state: "open", system: null },
  ]);
  const answer = run({ outcome: "done", resolve: [{ card: 1, reason: "verified: nothing to worry about" }, { card: 2 }, { card: 3 }] });
  assert.deepEqual(answer.rejected, [
    { card: 1, reason: "卡片 1 是中台自己的提醒，只有你能结案" },
    { card: 2, reason: "卡片 2 是中台自己的提醒，只有你能结案" },
  ]);
  assert.deepEqual(cards().map((c) => c.state), ["open", "open", "closed"]);
});

test("issue 26 r23 F23-2: the worker's notices are made when the run fails or is cancelled and when the rule says tell: never", () => {
  for (const [tell, outcome] of [["never", "done"], [undefined, "failed"], [undefined, "cancelled"], ["never", "failed"]] as const) {
    const { run, cards } = opened(tell);
    run({ outcome, notice: [{ title: "an agent's notice" }], workerNotice: [{ title: "The agent wrote files your git would run" }] });
    const made = cards().filter((c) => c.system === "worker").map((c) => c.title);
    assert.deepEqual(made, ["The agent wrote files your git would run"], `${tell} ${outcome}`);
  }
});

test("issue 26 r28 F28a-2 (reported case: a run posted the worker's warning text first; the next run's real warning was dropped as its duplicate and the receipt closed the agent's copy): the worker's cards are never the agents' duplicates", () => {
  const { run, cards } = opened();
  const warning = { title: "The agent wrote files your git would run", text: "/p/.vscode/tasks.json: kept read-only in the work tree, but what git holds for it changed" };
  run({ outcome: "done", notice: [warning] });
  run({ outcome: "done", resolve: [{ card: 1 }], workerNotice: [warning] });
  assert.deepEqual(cards(), [
    { id: 1, title: warning.title, state: "closed", system: null },
    { id: 2, title: warning.title, state: "open", system: "worker" },
  ]);
  // The same warning twice in one result is one card; about another run it is another card (round 29, F29a-8).
  run({ outcome: "done", workerNotice: [warning, warning] });
  assert.deepEqual(cards().map((c) => [c.id, c.state, c.system]), [[1, "closed", null], [2, "open", "worker"], [3, "open", "worker"]]);
});

test("issue 26 r29 F29a-8 (reported case: a harmless index change's warning, read and left open, swallowed the same words about a later run's dangerous change): a worker's card about one run never stands for another run's", () => {
  const { run, cards } = opened();
  const warning = { title: "The agent wrote files your git would run", text: "/p/.vscode/settings.json: kept read-only in the work tree, but what git holds for it changed" };
  run({ outcome: "done", workerNotice: [warning] });
  run({ outcome: "done", workerNotice: [warning] });
  assert.deepEqual(cards().map((c) => [c.id, c.state, c.system]), [[1, "open", "worker"], [2, "open", "worker"]]);
});
