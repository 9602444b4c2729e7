/**
 * One hot path of the hub, `count` times on a fixed input, for scripts/instructions.ts to count under valgrind's
 * callgrind (issue 32: instruction counts do not move with the machine's load). Runs the built kernel and store
 * (dist/: `npm run build` first) on a fresh SQLite file in WAL mode, as the hub opens it: keys, rules and `2 * max`
 * events set up first, the same in every run, then `count` inputs of one kind:
 *
 *   node scripts/instruction-probe.mjs <event|claim|result|state> <count> <max>
 *
 * event: a new source event routed to a rule (one run queued); claim: a worker's claim of one queued run; result: a
 * claimed run's result with one notice; state: the owner's /v1/state summary built from the projection. Each counts
 * its share of the search index's work (brought up at the end).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Store } from "../dist/src/host/store.js";
import { buildState } from "../dist/src/host/state.js";
import { parseRules } from "../dist/src/protocol/rules-file.js";
import { hashKey } from "../dist/src/kernel/credentials.js";

const [op, countText, maxText] = process.argv.slice(2);
const count = Number(countText);
const max = Number(maxText);
if (!["event", "claim", "result", "state"].includes(op) || !(count >= 0 && count <= max)) {
  console.error("usage: instruction-probe.mjs <event|claim|result|state> <count> <max>, count <= max");
  process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), "aa-probe-"));
try {
  const env = { master: Buffer.alloc(32, 7), lang: "en", publicUrl: null };
  const store = new Store({ path: join(dir, "hub.db"), master: env.master });
  let now = Date.parse("2026-11-02T08:00:00Z");
  const apply = (input) => {
    now += 1000;
    const [d] = store.commit([{ input, now }], env);
    if (d.status >= 400) throw new Error(`${input.kind}: ${d.status} ${JSON.stringify(d.body)}`);
    return d.body;
  };
  const K = { src: hashKey("src"), w: hashKey("w"), own: hashKey("own") };
  for (const [kind, name, hash] of [["source", "shop", K.src], ["worker", "w", K.w], ["owner", "owner", K.own]]) {
    apply({ kind: "keyNew", keyHash: null, local: true, keyKind: kind, name, newHash: hash });
  }
  const rules = parseRules(JSON.stringify({
    timezone: "UTC", sources: { shop: {} }, agents: { a: { worker: "w", use: "command", command: ["x"] } },
    rules: [{ name: "alerts", when: { source: "shop", types: ["alert.*"] }, to: "a", parallel: 1000 }],
  }), { timezone: "UTC" });
  if (!rules.ok) throw new Error(rules.error);
  apply({ kind: "rules", rules: rules.rules, hash: "r" });
  const event = (i) => apply({ kind: "event", keyHash: K.src, event: { id: `e${i}`, type: "alert.x", subject: `order ${i}` } });
  const claim = (i) => apply({ kind: "work", keyHash: K.w, claim: `c${i}`, running: [], capacity: 1000 }).job;
  // The same set-up in every run of an op: what differs between two runs is `count` inputs of that op alone.
  for (let i = 0; i < 2 * max; i++) event(i);
  const jobs = [];
  if (op === "result" || op === "state") for (let i = 0; i < 2 * max; i++) jobs.push(claim(i));
  for (let i = 0; i < count; i++) {
    if (op === "event") event(2 * max + i);
    else if (op === "claim") claim(i);
    else if (op === "result") apply({ kind: "result", run: jobs[i].run, token: jobs[i].token, result: { outcome: "done", summary: `did ${i}`, notice: [{ title: `n${i}` }] }, hash: `h${i}` });
    else buildState(store.view, env, now, store.seq, null, {});
  }
  // The search index takes the inputs' rows in batches (store.ts): brought up here so both runs of an op have indexed
  // all of theirs, and the difference is `count` inputs' share of that work, not whichever batch fell into one run.
  store.searchUpToDate();
  store.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
