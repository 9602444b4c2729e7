/**
 * The simulation's invariant checks (sim/simulation.ts `invariantProblem`): each one finds the fault it is for.
 * A real kernel makes a projection with an active run, a queued run, an answered card and ended runs; then one
 * projection row at a time is broken by hand (inside a savepoint, rolled back after) and the check must name it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { Store } from "../src/host/store.js";
import { parseRules } from "../src/protocol/rules-file.js";
import { hashKey, runToken } from "../src/kernel/credentials.js";
import type { Env, Input } from "../src/kernel/types.js";
import { invariantProblem } from "../sim/simulation.js";
import { baseRules } from "./helpers.js";
import type { WorkAnswer } from "../src/protocol/responses.js";

const master = randomBytes(32);
const env: Env = { master, lang: "en", publicUrl: null };

function prepared(): Store {
  const parsed = parseRules(JSON.stringify(baseRules), { timezone: "UTC" });
  if (!parsed.ok) throw new Error(parsed.error);
  const store = new Store({ path: ":memory:", master, fingerprint: "test" });
  let now = 1_000_000;
  const one = (input: Input) => {
    const d = store.commit([{ input, now: (now += 1000) }], env)[0]!;
    assert.equal(d.status, 200, JSON.stringify(d.body));
    return d.body;
  };
  one({ kind: "keyNew", keyHash: null, local: true, keyKind: "source", name: "shop", newHash: hashKey("src") });
  one({ kind: "keyNew", keyHash: null, local: true, keyKind: "worker", name: "w1", newHash: hashKey("wrk") });
  one({ kind: "rules", rules: parsed.rules, hash: "h" });
  // Run 1 ends with usage and a question; run 2 is claimed (active); run 3 is queued behind it in the rule's one lane.
  one({ kind: "event", keyHash: hashKey("src"), event: { id: "e1", type: "alert.x", subject: "#1" } });
  const j1 = (one({ kind: "work", keyHash: hashKey("wrk"), claim: "c1", running: [], capacity: 1 }) as WorkAnswer).job!;
  const t1 = runToken(master, j1.run, j1.attempt, 1);
  one({ kind: "result", run: j1.run, token: t1, hash: "r1", result: { outcome: "done", usage: { input: 10, output: 5, cost: 0.01 }, ask: [{ title: "q", options: ["a", "b"] }] } });
  one({ kind: "event", keyHash: hashKey("src"), event: { id: "e2", type: "alert.x", subject: "#2" } });
  one({ kind: "work", keyHash: hashKey("wrk"), claim: "c2", running: [], capacity: 1 });
  one({ kind: "event", keyHash: hashKey("src"), event: { id: "e3", type: "alert.x", subject: "#3" } });
  return store;
}

test("a sound projection has no problem; each broken row is named by its check", () => {
  const store = prepared();
  try {
    assert.equal(invariantProblem(store), null);
    const runs = store.db.prepare(`SELECT key, state, data ->> 'lane' AS lane FROM v_runs ORDER BY key`).all();
    assert.deepEqual(runs, [{ key: 1, state: "done", lane: "" }, { key: 2, state: "claimed", lane: "" }, { key: 3, state: "queued", lane: "" }]);
    const lane = `alerts\u0000`;
    const broken = (sql: string, ...params: unknown[]) => {
      store.db.exec("SAVEPOINT broken");
      try {
        store.db.prepare(sql).run(...params);
        return invariantProblem(store);
      } finally {
        store.db.exec("ROLLBACK TO broken");
        store.db.exec("RELEASE broken");
      }
    };
    const setRun = (id: number, path: string, json: string) => broken(`UPDATE v_runs SET data = json_set(data, '${path}', json(?)) WHERE key = ?`, json, id);
    assert.equal(broken(
      `UPDATE v_runs SET data = json_set(data, '$.state', 'running', '$.claim', 'c3', '$.worker', 'w1', '$.job', json('{}')) WHERE key = 3`,
    ), "two active runs in lane alerts/");
    assert.equal(broken(`UPDATE v_lanes SET data = json_set(data, '$.active', json('null')) WHERE key = ?`, lane), "active run 2 is not its lane's active run");
    assert.equal(broken(`UPDATE v_groups SET data = json_set(data, '$.active', json('[]')) WHERE key = 'alerts'`), "active run 2 is not in group alerts");
    assert.equal(setRun(2, "$.claim", "null"), "active run 2 has no claim");
    assert.equal(setRun(2, "$.job", "null"), "active run 2 has no claim");
    assert.equal(broken(`UPDATE v_groups SET data = json_set(data, '$.active', json('[2, 9]')) WHERE key = 'alerts'`), "group alerts holds run 9 in state undefined");
    assert.equal(broken(`UPDATE v_groups SET data = json_set(data, '$.active', json('[2, 1]')) WHERE key = 'alerts'`), "group alerts holds run 1 in state done");
    assert.equal(broken(`UPDATE v_lanes SET data = json_set(data, '$.queued', 1) WHERE key = ?`, lane), "lane alerts/ queues run 1 in state done");
    assert.equal(setRun(3, "$.state", '"waiting"'), "waiting run 3 has no retry deadline");
    assert.equal(broken(`INSERT INTO v_due (key, data) VALUES ('retry:1', '{"at":0,"kind":"retry","ref":"1"}')`), "retry deadline of run 1 in state done");
    assert.equal(broken(`INSERT INTO v_sessions (key, data) VALUES ('s-old', '{"run":1}')`), "session s-old names run 1 in state done");
    assert.equal(broken(`INSERT INTO v_sessions (key, data) VALUES ('s-gone', '{"run":9}')`), "session s-gone names run 9 in state undefined");
    assert.equal(broken(`UPDATE v_meta SET data = json_set(data, '$.openCards', 0) WHERE key = 'totals'`), "totals.openCards 0 but 1 open cards");
    assert.equal(broken(`UPDATE v_events SET data = json_set(data, '$.sid', 'e1') WHERE key = 2`), "event shop\u0000e1 recorded twice");
    const bucket = (store.db.prepare(`SELECT key FROM v_usage`).get() as { key: number }).key;
    const sum = `"rounds":1,"tokens":15,"costNanos":10000000,"missingTokens":0,"missingCost":0`;
    const kept = `{${sum},"rules":[{"rule":"alerts",${sum}}]}`;
    assert.equal(broken(`UPDATE v_usage SET data = json_set(data, '$.tokens', 14)`), `usage bucket ${bucket} holds ${kept.replace('"tokens":15', '"tokens":14')} but its runs sum to ${kept}`);
    // A rule's sums are checked too: wrong, or under another rule's name.
    assert.equal(broken(`UPDATE v_usage SET data = json_set(data, '$.rules[0].tokens', 14)`), `usage bucket ${bucket} holds ${kept.replace(/"tokens":15(?=,"costNanos":10000000,"missingTokens":0,"missingCost":0}])/, '"tokens":14')} but its runs sum to ${kept}`);
    assert.equal(broken(`UPDATE v_usage SET data = json_set(data, '$.rules[0].rule', 'pages')`), `usage bucket ${bucket} holds ${kept.replace("alerts", "pages")} but its runs sum to ${kept}`);
    assert.equal(broken(`DELETE FROM v_usage`), "0 usage buckets kept but runs end in 1");
    // Usage is recounted only when a transition changed runs: without run changes the buckets are not read.
    store.db.exec("SAVEPOINT broken");
    store.db.prepare(`DELETE FROM v_usage`).run();
    assert.equal(invariantProblem(store, false), null);
    store.db.exec("ROLLBACK TO broken");
    store.db.exec("RELEASE broken");
    assert.equal(invariantProblem(store), null, "every break was rolled back");
  } finally {
    store.close();
  }
});
