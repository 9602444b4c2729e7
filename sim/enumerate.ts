/**
 * `npm run sim:enumerate`: every ordering (8! = 40,320) of the actions of two workers, two source events and one
 * question card against the real kernel, each from the same starting database, with the invariants checked after
 * every action, then everything drained and the log replayed (protocol.md 一致性和复现). It proves these finite
 * scenarios only.
 */
import { Store } from "../src/host/store.js";
import { parseRules } from "../src/protocol/rules-file.js";
import { hashKey } from "../src/kernel/credentials.js";
import type { Env, Input } from "../src/kernel/types.js";
import { ReplayTarget, invariantProblem } from "./simulation.js";

const K = { src: hashKey("src"), w1: hashKey("w1"), w2: hashKey("w2"), ch: hashKey("ch"), own: hashKey("own") };
const rules = {
  timezone: "UTC",
  sources: { shop: {} },
  agents: { a1: { worker: "w1", use: "command", command: ["x"] }, a2: { worker: "w2", use: "command", command: ["x"] } },
  channels: { ch: { answerers: ["alice"] } },
  rules: [
    { name: "alerts", when: { source: "shop", types: ["alert.*"] }, to: "a1" },
    { name: "orders", when: { source: "shop", types: ["order.*"] }, to: "a2" },
  ],
};

/** The eight actions; each does what it can in the state it finds (doing nothing is a valid transition). */
const actions = ["event-alert", "event-order", "w1-claim", "w1-result", "w2-claim", "w2-result", "channel-deliver", "owner-answer"] as const;
type Action = (typeof actions)[number];

function permutations<T>(xs: readonly T[]): T[][] {
  if (xs.length <= 1) return [xs.slice()];
  const out: T[][] = [];
  xs.forEach((x, i) => {
    for (const rest of permutations([...xs.slice(0, i), ...xs.slice(i + 1)])) out.push([x, ...rest]);
  });
  return out;
}

export interface EnumerateReport { orderings: number; transitions: number }

/**
 * Runs every ordering, or every `every`-th one (the mutation run uses a sample to stay within a nightly budget).
 * @param every 1 for all 8! orderings; n > 1 for orderings 0, n, 2n, … in a fixed order.
 * @throws naming the ordering and the invariant that broke.
 */
export function enumerate(every = 1): EnumerateReport {
  const env: Env = { master: Buffer.alloc(32, 7), lang: "en", publicUrl: null };
  const now0 = Date.parse("2026-11-02T08:00:00Z");
  // The starting database, built once; each ordering is a trial on it, undone after (`Store.trial`).
  const base = new Store({ path: ":memory:", master: env.master, fingerprint: "enum" });
  for (const [kind, name, hash] of [["source", "shop", K.src], ["worker", "w1", K.w1], ["worker", "w2", K.w2], ["channel", "ch", K.ch], ["owner", "owner", K.own]] as const) {
    base.commit([{ input: { kind: "keyNew", keyHash: null, local: true, keyKind: kind, name, newHash: hash }, now: now0 }], env);
  }
  const parsed = parseRules(JSON.stringify(rules), { timezone: "UTC" });
  if (!parsed.ok) throw new Error(parsed.error);
  base.commit([{ input: { kind: "rules", rules: parsed.rules, hash: "r" }, now: now0 }], env);
  const replay = new ReplayTarget();

  let transitions = 0;
  const orders = permutations(actions).filter((_, i) => i % every === 0);
  for (const order of orders) base.trial(() => {
    const store = base;
    let now = now0;
    const jobs = new Map<string, { run: number; token: string }>();
    const apply = (input: Input) => {
      now += 1000;
      const [d] = store.commit([{ input, now }], env);
      transitions++;
      const problem = d!.status >= 500 ? `answered ${d!.status}` : invariantProblem(store);
      if (problem) throw new Error(`ordering ${order.join(" → ")}: after ${input.kind}: ${problem}`);
      return d!;
    };
    const claim = (w: "w1" | "w2", id: string) => {
      const job = (apply({ kind: "work", keyHash: K[w], claim: id, running: [], capacity: 1 }).body as { job: { run: number; token: string } | null }).job;
      if (job) jobs.set(w, job);
    };
    const result = (w: "w1" | "w2", receipt: Record<string, unknown>) => {
      const job = jobs.get(w);
      if (!job) return;
      apply({ kind: "result", run: job.run, token: job.token, result: { outcome: "done", ...receipt } as never, hash: `${w}-${now}` });
      jobs.delete(w);
    };
    const step = (a: Action) => {
      switch (a) {
        case "event-alert": apply({ kind: "event", keyHash: K.src, event: { id: "A", type: "alert.x" } }); break;
        case "event-order": apply({ kind: "event", keyHash: K.src, event: { id: "B", type: "order.x" } }); break;
        case "w1-claim": claim("w1", `w1-${now}`); break;
        case "w1-result": result("w1", { ask: [{ title: "Q", options: ["yes", "no"] }] }); break;
        case "w2-claim": claim("w2", `w2-${now}`); break;
        case "w2-result": result("w2", {}); break;
        case "channel-deliver": {
          const card = (apply({ kind: "cardsNext", keyHash: K.ch }).body as { card: { id: number; version: number } | null }).card;
          if (card) apply({ kind: "delivered", keyHash: K.ch, card: card.id, version: card.version, ref: `m${card.id}` });
          break;
        }
        case "owner-answer": {
          const open = store.view.where("cards", "state = 'open' ORDER BY key")[0]?.row;
          if (open) apply({ kind: "answer", keyHash: K.own, card: open.id, choice: 0, text: null, by: null, ref: null });
          break;
        }
      }
    };
    for (const a of order) step(a);
    // drain: finish everything that is left
    for (let i = 0; i < 10; i++) {
      for (const w of ["w1", "w2"] as const) {
        if (!jobs.has(w)) claim(w, `${w}-drain-${now}`);
        result(w, {});
      }
      for (const card of store.view.where("cards", "state = 'open'").map((x) => x.row)) {
        apply({ kind: "answer", keyHash: K.own, card: card.id, choice: 0, text: null, by: null, ref: null });
      }
    }
    const left = store.view.where("runs", "state NOT IN ('done', 'nothing', 'cancelled')").map((x) => x.row);
    if (left.length > 0) throw new Error(`ordering ${order.join(" → ")}: runs left after draining: ${left.map((r) => `${r.id}:${r.state}`).join(", ")}`);
    const diff = replay.diff(store);
    if (diff) throw new Error(`ordering ${order.join(" → ")}: replay of ${diff} differs`);
  });
  replay.close();
  base.close();
  return { orderings: orders.length, transitions };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const t0 = performance.now();
  const r = enumerate();
  console.log(`${r.orderings} orderings, ${r.transitions} transitions, invariants held and every replay matched; ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
