/**
 * The rules file is watched while the hub runs (README: "The hub picks up edits while it runs"). Apart from
 * tests/rules.test.ts because it waits on the file watcher's polling, which the mutation run cannot afford per mutant.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { hubFixture, baseRules, until } from "./helpers.js";

test("the rules file is watched: an edit takes effect while the hub runs", async () => {
  const f = await hubFixture();
  try {
    f.writeRules({ ...baseRules, rules: [{ ...baseRules.rules[0], name: "renamed" }] });
    await until(async () => (await f.call("GET", "/v1/state", f.keys.owner)).body.rulesVersion === 2, 20_000, "the watcher to load the edit");
    const ev = await f.call("POST", "/v1/events", f.keys.source, { id: "w", type: "alert.x" });
    assert.deepEqual(ev.body.routed, ["renamed"]);
  } finally {
    await f.close();
  }
});
