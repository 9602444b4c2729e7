/**
 * `npm run sim:enumerate`: every ordering (8! = 40,320) of the actions of two workers, two source events and one
 * question card against the real kernel, all from the same starting database (each prefix applied once, for every
 * ordering that shares it), with the invariants checked after every action, then everything drained and the log
 * replayed (protocol.md 一致性和复现). It proves these finite scenarios only.
 */
import { Store } from "../src/host/store.js";
import { parseRules } from "../src/protocol/rules-file.js";
import { hashKey } from "../src/kernel/credentials.js";
import type { Env, Fact, Input } from "../src/kernel/types.js";
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

/** What an enumeration did: the orderings run to their end, and the inputs committed (a shared prefix's once). */
export interface EnumerateReport { orderings: number; transitions: number }

/**
 * Runs every ordering, or those `pick` chooses (the mutation run uses a sample to stay within a nightly budget).
 * @param pick which orderings run, by index in a fixed order (ordering i is the i-th leaf of the depth-first walk:
 *   the permutations of `actions` in lexicographic order of their positions); all of them when omitted.
 * @param each called at the end of each ordering that ran (after its drain and replay) with the ordering and the
 *   whole log: the tests compare an ordering reached through shared prefixes with the same one run alone.
 * @throws naming the ordering (or, for a break during a prefix, the prefix every ordering under it shares) and the
 *   invariant that broke.
 */
export function enumerate(pick: (i: number) => boolean = () => true, each?: (order: readonly string[], log: readonly Fact[]) => void): EnumerateReport {
  const env: Env = { master: Buffer.alloc(32, 7), lang: "en", publicUrl: null };
  const now0 = Date.parse("2026-11-02T08:00:00Z");
  // The starting database, built once; each prefix of an ordering is a trial on it, undone after (`Store.trial`).
  const store = new Store({ path: ":memory:", master: env.master, fingerprint: "enum" });
  for (const [kind, name, hash] of [["source", "shop", K.src], ["worker", "w1", K.w1], ["worker", "w2", K.w2], ["channel", "ch", K.ch], ["owner", "owner", K.own]] as const) {
    store.commit([{ input: { kind: "keyNew", keyHash: null, local: true, keyKind: kind, name, newHash: hash }, now: now0 }], env);
  }
  const parsed = parseRules(JSON.stringify(rules), { timezone: "UTC" });
  if (!parsed.ok) throw new Error(parsed.error);
  store.commit([{ input: { kind: "rules", rules: parsed.rules, hash: "r" }, now: now0 }], env);
  const replay = new ReplayTarget();

  let transitions = 0;
  let orderings = 0;
  let now = now0;
  let jobs = new Map<string, { run: number; token: string }>();
  let order: Action[] = [];
  /** The ordering reached, or the prefix of those that share it. */
  const named = () => `${order.length === actions.length ? "ordering" : "orderings beginning"} ${order.join(" → ")}`;
  const apply = (input: Input) => {
    now += 1000;
    const [d] = store.commit([{ input, now }], env);
    transitions++;
    const problem = d!.status >= 500 ? `answered ${d!.status}` : invariantProblem(store);
    if (problem) throw new Error(`${named()}: after ${input.kind}: ${problem}`);
    return d!;
  };
  /** Claims for worker `w`; whether it got a job. */
  const claim = (w: "w1" | "w2", id: string): boolean => {
    const job = (apply({ kind: "work", keyHash: K[w], claim: id, running: [], capacity: 1 }).body as { job: { run: number; token: string } | null }).job;
    if (job) jobs.set(w, job);
    return job !== null;
  };
  /** Reports the job of worker `w` done with `receipt`; whether it had one. */
  const result = (w: "w1" | "w2", receipt: Record<string, unknown>): boolean => {
    const job = jobs.get(w);
    if (!job) return false;
    apply({ kind: "result", run: job.run, token: job.token, result: { outcome: "done", ...receipt } as never, hash: `${w}-${now}` });
    jobs.delete(w);
    return true;
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
  /**
   * The end of an ordering: finish everything that is left, pass by pass, until a pass finds nothing to claim, report
   * or answer, then check that every run ended and that the log replays to the live projection. After such a pass the
   * old drain's further passes only polled for work again, seconds later, with no job to hand out, no card open and
   * no tick sent (a poll writes a heartbeat at most once a minute; an ordering ends well within one); the bound of 10
   * only stops a drain gone wrong.
   */
  const finish = () => {
    for (let i = 0; i < 10; i++) {
      let moved = false;
      for (const w of ["w1", "w2"] as const) {
        if (!jobs.has(w)) moved = claim(w, `${w}-drain-${now}`) || moved;
        moved = result(w, {}) || moved;
      }
      for (const card of store.view.where("cards", "state = 'open'").map((x) => x.row)) {
        apply({ kind: "answer", keyHash: K.own, card: card.id, choice: 0, text: null, by: null, ref: null });
        moved = true;
      }
      if (!moved) break;
    }
    const left = store.view.where("runs", "state NOT IN ('done', 'nothing', 'cancelled')").map((x) => x.row);
    if (left.length > 0) throw new Error(`${named()}: runs left after draining: ${left.map((r) => `${r.id}:${r.state}`).join(", ")}`);
    const diff = replay.diff(store);
    if (diff) throw new Error(`${named()}: replay of ${diff} differs`);
    orderings++;
    each?.(order, store.factsAfter(0, Number.MAX_SAFE_INTEGER));
  };
  const factorial = (n: number): number => (n <= 1 ? 1 : n * factorial(n - 1));
  /**
   * Depth first over the tree of orderings, in the order of `actions` (ordering i is the i-th leaf): each prefix is
   * applied and checked once, in a trial of its own, for all the orderings that share it (the state after a prefix is
   * the same whichever ordering reaches it: the kernel is deterministic and the clock moves by the actions alone).
   * A subtree runs only when `pick` chooses one of its leaves.
   */
  const visit = (rest: readonly Action[], first: number) => {
    if (rest.length === 0) return finish();
    const size = factorial(rest.length - 1);
    rest.forEach((a, i) => {
      const from = first + i * size;
      if (!Array.from({ length: size }, (_, j) => from + j).some(pick)) return;
      const saved = { now, jobs: new Map(jobs), order };
      store.trial(() => {
        order = [...order, a];
        step(a);
        visit([...rest.slice(0, i), ...rest.slice(i + 1)], from);
      });
      ({ now, order } = saved);
      jobs = saved.jobs;
    });
  };
  visit(actions, 0);
  replay.close();
  store.close();
  return { orderings, transitions };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const t0 = performance.now();
  const r = enumerate();
  console.log(`${r.orderings} orderings, ${r.transitions} transitions, invariants held and every replay matched; ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
