/**
 * The simulation and the enumeration at the size the mutation run affords on 2 cores (sim/mutate.ts): seed 24301
 * for 8,192 steps (64 scenarios), and every 37th of the 8! orderings. `npm test` runs both in full
 * (tests/sim.test.ts, tests/enumerate.test.ts); this file is not part of it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { simulate } from "./simulation.js";
import { enumerate } from "./enumerate.js";

test("simulation: seed 24301, 8,192 steps, invariants after every transition, replay equal to the live projection", () => {
  const r = simulate(24301, 8192);
  assert.equal(r.scenarios, 64);
  assert.equal(r.replays, 64);
});

test("every 37th ordering of two workers, two events and one question keeps the invariants and replays", () => {
  const r = enumerate((i) => i % 37 === 0);
  assert.equal(r.orderings, Math.ceil(40_320 / 37));
  // As tests/enumerate.test.ts pins the full walk's count: a kernel that answers these scenarios otherwise changes it.
  assert.equal(r.transitions, 10_147);
});
