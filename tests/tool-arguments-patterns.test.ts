/**
 * Issue 26 hostile round 29, F29b-3: a plugin's argument schema `pattern` ran on the agent's (or, through a workflow, a
 * source's) string with JavaScript's backtracking engine in the hub's thread: `^(a+)+$` against 28 `a`s and a `!` held
 * every route 8.6 s, each more character doubling it. Patterns now run on RE2's linear-time engine (re2js); one it
 * cannot run is left to the plugin.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { checkArguments } from "../src/tools/arguments.js";

test("issue 26 r29 F29b-3 (reported case: pattern ^(a+)+$, 40 a's and a !): the check answers at once with the field named; patternProperties and propertyNames the same", { timeout: 60_000 }, () => {
  const evil = "^(a+)+$";
  const s = `${"a".repeat(40)}!`;
  assert.equal(checkArguments("r29-1", { type: "object", properties: { s: { type: "string", pattern: evil } } }, { s }, "en"), `s: wrong format, expected ${evil}`);
  assert.equal(checkArguments("r29-1", { type: "object", properties: { s: { type: "string", pattern: evil } } }, { s: "aaaa" }, "en"), null);
  // A key the agent chooses against a plugin's patternProperties / propertyNames.
  assert.equal(checkArguments("r29-2", { type: "object", patternProperties: { [evil]: { type: "number" } }, additionalProperties: false }, { [s]: 1 }, "en"), `${s}: unknown field`);
  assert.equal(checkArguments("r29-3", { type: "object", propertyNames: { pattern: evil } }, { [s]: 1 }, "en") !== null, true);
  // Each pattern of one schema is its own (the engine keeps one compiled expression per pattern).
  const two = { type: "object", properties: { a: { type: "string", pattern: "^[a-z]+$" }, b: { type: "string", pattern: "^[0-9]+$" } } };
  assert.deepEqual([checkArguments("r29-4", two, { a: "abc", b: "123" }, "en"), checkArguments("r29-4", two, { a: "abc", b: "abc" }, "en")], [null, "b: wrong format, expected ^[0-9]+$"]);
});

test("issue 26 r29 F29b-3: a pattern RE2 cannot run (a lookahead, a backreference) is not checked by the hub — the plugin checks its arguments itself", () => {
  const schema = { type: "object", properties: { e: { type: "string", pattern: "^(?!\\.)[a-z.]+$" }, r: { type: "string", pattern: "^(a)\\1$" } } };
  assert.equal(checkArguments("r29-5", schema, { e: ".starts-with-a-dot", r: "ab" }, "en"), null);
});
