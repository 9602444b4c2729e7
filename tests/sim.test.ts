/**
 * The seeded simulation (sim/simulation.ts): seed 24301 for 200,000 steps, as the protocol asks of `npm test`.
 * Any violation names the step; `npm run sim -- 24301 200000` reproduces it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { simulate } from "../sim/simulation.js";

test("simulation: seed 24301, 200,000 steps, invariants after every transition, replay equal to the live projection", () => {
  const r = simulate(24301, 200_000);
  assert.equal(r.steps, 200_000);
  assert.equal(r.scenarios, Math.ceil(200_000 / 128));
  assert.equal(r.replays, r.scenarios);
  assert.ok(r.facts > 200_000);
});
