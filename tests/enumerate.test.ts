/** Every ordering (8!) of two workers, two source events and one question card (sim/enumerate.ts). */
import { test } from "node:test";
import assert from "node:assert/strict";
import { enumerate } from "../sim/enumerate.js";

test("all 40,320 orderings keep the invariants, drain, and replay to the same projection", () => {
  const r = enumerate();
  assert.equal(r.orderings, 40_320);
  assert.ok(r.transitions > 40_320 * 8);
});
