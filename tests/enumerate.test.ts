/** Every ordering (8!) of two workers, two source events and one question card (sim/enumerate.ts). */
import { test } from "node:test";
import assert from "node:assert/strict";
import { enumerate } from "../sim/enumerate.js";
import type { Fact } from "../src/kernel/types.js";

test("all 40,320 orderings keep the invariants, drain, and replay to the same projection", () => {
  const r = enumerate();
  assert.equal(r.orderings, 40_320);
  // Each prefix once (109,600 of them, a channel delivery two transitions when a card waits) and each ordering's
  // drain: a change of the kernel's answers in these scenarios changes this count.
  assert.equal(r.transitions, 304_650);
});

test("an ordering reached through prefixes shared with others writes the same log as the ordering run alone", () => {
  const shared = new Map<string, readonly Fact[]>();
  // Far apart, and two that part after event-alert → w1-claim (720–1,439), where the worker holds a job across the walk.
  const sample = (i: number) => i % 4_999 === 0 || i === 40_319 || i === 800 || i === 1_200;
  const r = enumerate(sample, (order, log) => shared.set(order.join(" "), log));
  assert.equal(r.orderings, 12);
  assert.equal(shared.size, 12);
  // Ordering i is the i-th permutation of the actions (ordering 0, in their own order) by the factorial number system.
  const actions = [...shared.keys()][0]!.split(" ");
  assert.equal(actions.length, 8);
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
  assert.deepEqual([...shared.keys()], [0, 800, 1_200, 4_999, 9_998, 14_997, 19_996, 24_995, 29_994, 34_993, 39_992, 40_319].map(nth));
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
