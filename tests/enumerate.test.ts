/** Every ordering (8!) of two workers, two source events and one question card (sim/enumerate.ts). */
import { test } from "node:test";
import assert from "node:assert/strict";
import { enumerate } from "../sim/enumerate.js";
import type { Fact } from "../src/kernel/types.js";

test("all 40,320 orderings keep the invariants, drain, and replay to the same projection", () => {
  const r = enumerate();
  assert.equal(r.orderings, 40_320);
  // The inputs of each prefix once and of each ordering's drain: a kernel that hands out a job, offers a card or
  // leaves one open where it did not (or the other way round) changes this count.
  assert.equal(r.transitions, 304_650);
});

test("an ordering reached through prefixes shared with others writes the same log as the ordering run alone", () => {
  const shared = new Map<string, readonly Fact[]>();
  // Far apart; two that part after event-alert → w1-claim (720–1,439), where the worker holds a job across the walk;
  // and 24 neighbours (0–23) that share all but their last four actions.
  const sample = (i: number) => i % 4_999 === 0 || i === 40_319 || i === 800 || i === 1_200 || i < 24;
  const r = enumerate(sample, (order, log) => shared.set(order.join(" "), log));
  assert.equal(r.orderings, 35);
  assert.equal(shared.size, 35);
  // Ordering i is the i-th permutation of the actions (ordering 0, in their own order) by the factorial number system.
  const actions = ["event-alert", "event-order", "w1-claim", "w1-result", "w2-claim", "w2-result", "channel-deliver", "owner-answer"];
  const nth = (i: number) => {
    const rest = [...actions];
    const out: string[] = [];
    for (let k = rest.length; k > 0; k--) {
      const f = [1, 1, 2, 6, 24, 120, 720, 5040][k - 1]!;
      out.push(rest.splice(Math.floor(i / f), 1)[0]!);
      i %= f;
    }
    return out.join(" ");
  };
  assert.deepEqual([...shared.keys()], [...Array.from({ length: 24 }, (_, i) => i), 800, 1_200, 4_999, 9_998, 14_997, 19_996, 24_995, 29_994, 34_993, 39_992, 40_319].map(nth));
  assert.equal(nth(40_319), [...actions].reverse().join(" "));
  for (let i = 0; i < 40_320; i++) {
    if (!sample(i)) continue;
    let alone: [string, readonly Fact[]] | undefined;
    assert.equal(enumerate((j) => j === i, (order, log) => (alone = [order.join(" "), log])).orderings, 1);
    assert.ok(alone && shared.has(alone[0]), `ordering ${i}`);
    assert.deepEqual(alone[1], shared.get(alone[0]), `ordering ${i}: ${alone[0]}`);
    // Both events taken and both runs reported (a third when the question was answered), whatever the ordering.
    assert.equal(alone[1].filter((f) => f.kind === "event").length, 2);
    assert.ok(alone[1].filter((f) => f.kind === "result").length >= 2);
  }
});
