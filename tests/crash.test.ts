/** Real SIGKILLs of a real hub under HTTP load (sim/crash.ts); the nightly run does 1,000. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { crash } from "../sim/crash.js";

test("20 SIGKILLs under load: every acknowledged event survives, integrity and replay hold", async () => {
  const r = await crash(20, 12648430);
  assert.equal(r.kills, 20);
  assert.ok(r.acknowledged > 0);
  assert.ok(r.checkedAgain >= r.acknowledged, "every acknowledged event was sent again and found");
});
