/**
 * Tool parameter schemas of different plugins never share a namespace of `$id`s (a reviewer's finding on the shared
 * Ajv of the manifest check): a schema naming JSON Schema's own meta-schema as its `$id` once removed that meta-schema
 * from the process's checker, so every later check of every plugin failed until a restart; two plugins declaring the
 * same `$id` made the second one's tool uncallable.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { checkSchema } from "../src/tools/manifest.js";
import { checkArguments } from "../src/tools/arguments.js";

const usable = { type: "object", properties: { name: { type: "string" } }, required: ["name"] };

test("a schema whose $id is a meta-schema's is checked on its own, and every schema after it still is", () => {
  for (const id of ["https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft/2020-12/meta/core"]) {
    assert.equal(checkSchema({ $id: id, type: "string" }), null, id);
    assert.equal(checkSchema(usable), null, `after ${id}`);
    assert.equal(checkSchema({ $schema: "http://json-schema.org/draft-07/schema#", ...usable }), null, `draft-07 after ${id}`);
    assert.match(checkSchema({ type: 5 }) ?? "", /^schema is invalid: data\/type must be equal to one of the allowed values/, `a broken one after ${id}`);
  }
});

test("two plugins' schemas with the same $id are each checked and each checks its own arguments", () => {
  const a = { $id: "https://example.com/params", type: "object", properties: { n: { type: "string" } }, required: ["n"] };
  const b = { $id: "https://example.com/params", type: "object", properties: { n: { type: "number" } }, required: ["n"] };
  assert.equal(checkSchema(a), null);
  assert.equal(checkSchema(b), null);
  assert.equal(checkArguments("plugin-a\0tool", a, { n: "x" }, "en"), null);
  assert.equal(checkArguments("plugin-b\0tool", b, { n: 3 }, "en"), null);
  assert.notEqual(checkArguments("plugin-b\0tool", b, { n: "x" }, "en"), null);
  // One of them naming the meta-schema's $id is no call's business either.
  assert.equal(checkArguments("plugin-c\0tool", { $id: "https://json-schema.org/draft/2020-12/schema", type: "string" }, "x", "en"), null);
  assert.equal(checkArguments("plugin-d\0tool", usable, { name: "Ada" }, "en"), null);
});
