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

test("issue 26 r29 review: a pattern means what it means in JavaScript (\\u escapes, \\cX, Unicode \\s and \\S, . without line terminators, [^]); work past the budget is left to the plugin", { timeout: 60_000 }, () => {
  const cases: [string, string][] = [
    ["^[^\\u0000-\\u001f]*$", "a\u0001"], ["^[^\\u0000-\\u001f]*$", "abc"], ["^\\S+$", "a\u00a0b"], ["^\\S+$", "ab"],
    ["^.*$", "a\rb"], ["^.*$", "a\u2028b"], ["^.*$", "ab"], ["^\\s*$", "\u00a0 \u3000"], ["^[\\s]*$", "\ufeff"],
    ["^\\u{1F600}$", "😀"], ["^\\cJ$", "\n"], ["[^]", ""], ["[^]", "x"], ["^\\d{3}-[\\w.]+$", "123-a.b"], ["^\\d+$", "١٢"],
  ];
  const hub = cases.map(([p, v], i) => checkArguments(`r29-js-${i}`, { type: "object", properties: { s: { type: "string", pattern: p } } }, { s: v }, "en") === null);
  assert.deepEqual(hub, cases.map(([p, v]) => new RegExp(p, "u").test(v)));
  // RE2 is linear in the string but times the program's size: (a|aa){1000} on 20,000 characters took 2.2 s — left unchecked.
  assert.equal(checkArguments("r29-work", { type: "object", properties: { s: { type: "string", pattern: "(a|aa){1000}$" } } }, { s: "a".repeat(20_000) }, "en"), null);
  assert.equal(checkArguments("r29-work", { type: "object", properties: { s: { type: "string", pattern: "(a|aa){1000}$" } } }, { s: "b" }, "en"), "s: wrong format, expected (a|aa){1000}$");
});
