/**
 * The precompiled meta-schema validators (src/protocol/meta-schemas.ts): an Ajv given them accepts and refuses exactly
 * the schemas, with exactly the errors, that the same Ajv compiling its meta-schemas itself does — for the tool host's
 * Ajv (draft 2020-12 and draft-07) and the declarative loader's (2020-12 only) — and it really uses them.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Ajv2020 } from "ajv/dist/2020.js";
import { schemaAjv } from "../src/tools/arguments.js";
import { checkSchema } from "../src/tools/manifest.js";
import { usePrecompiledMetaSchemas } from "../src/protocol/meta-schemas.js";
import { draft07, draft2020 } from "../src/protocol/meta-validators.generated.js";

const id2020 = "https://json-schema.org/draft/2020-12/schema";
const id07 = "http://json-schema.org/draft-07/schema";

/** Schemas a plugin might write, usable and broken, in both drafts. */
const schemas: unknown[] = [
  { type: "object", properties: { name: { type: "string", minLength: 1 } }, required: ["name"], additionalProperties: false },
  { type: "objekt" }, { type: 5 }, { type: ["string", "string"] }, { properties: { q: { type: "strin" } } }, { required: "x" },
  { required: [1] }, { minLength: -1 }, { maxItems: 1.5 }, { enum: [] }, { enum: [1, 1] }, { const: { a: [1, 2] } },
  { items: [{ type: "string" }] }, { prefixItems: [{ type: 1 }] }, { pattern: "^[a-z]+$" }, { pattern: 3 },
  { $defs: { x: { type: "nope" } }, $ref: "#/$defs/x" }, { anyOf: [] }, { oneOf: [{ type: "string" }, { minimum: "1" }] },
  { format: 3 }, { format: "email" }, { $id: "#bad#" }, { $anchor: "1x" }, { dependentRequired: { a: ["b", "b"] } },
  { unevaluatedProperties: 5 }, { properties: { a: { properties: { b: { properties: { c: { type: "x" } } } } } } },
  { $schema: `${id07}#`, type: "object", properties: { a: { type: "number", exclusiveMinimum: 3 } } },
  { $schema: `${id07}#`, type: "bogus" }, { $schema: `${id07}#`, definitions: { a: { type: 7 } } },
  { $schema: `${id07}#`, items: [{ type: "string" }, { type: "nope" }] },
  { $schema: "http://example.com/unknown-schema" }, { $schema: 3 }, true, false, {},
];

/** What an Ajv says of `schema`: its meta-schema check (or what it throws) and whether it compiles. */
function verdict(ajv: Ajv2020, schema: unknown): string {
  let checked: unknown;
  try {
    checked = [ajv.validateSchema(schema as object), ajv.errorsText(ajv.errors)];
  } catch (e) {
    checked = ["throws", (e as Error).message];
  }
  let compiled = "compiles";
  try {
    ajv.compile(schema as object);
  } catch (e) {
    compiled = (e as Error).message;
  } finally {
    if (typeof schema === "object") ajv.removeSchema(schema as object); // Ajv keeps a compiled schema (and its $id)
  }
  return JSON.stringify([checked, compiled]);
}

/** The same Ajv with its meta-schemas compiled by Ajv itself at the first check, as before they were precompiled. */
function compilingItself(ajv: Ajv2020): Ajv2020 {
  for (const id of [id2020, id07]) if (ajv.schemas[id]) ajv.schemas[id]!.validate = undefined;
  return ajv;
}

test("the tool host's Ajv, with the precompiled meta-schemas, judges every schema as Ajv compiling them itself does", () => {
  const fast = schemaAjv();
  const slow = compilingItself(schemaAjv());
  assert.equal(fast.getSchema(id2020), draft2020 as unknown);
  assert.equal(fast.getSchema(id07), draft07 as unknown);
  assert.notEqual(slow.getSchema(id2020), draft2020 as unknown);
  for (const s of schemas) assert.equal(verdict(fast, s), verdict(slow, s), JSON.stringify(s));
  // The manifest check says the same as before for a broken schema (tests/tools-manifest.test.ts pins its words).
  assert.equal(checkSchema({ type: 5 }), "schema is invalid: data/type must be equal to one of the allowed values, data/type must be array, data/type must match a schema in anyOf");
});

test("the declarative loader's Ajv (2020-12 only) judges every schema as before; a draft-07 schema is still unknown to it", () => {
  const fast = usePrecompiledMetaSchemas(new Ajv2020({ strict: false, allErrors: false }));
  const slow = new Ajv2020({ strict: false, allErrors: false });
  assert.equal(fast.getSchema(id2020), draft2020 as unknown);
  assert.equal(fast.schemas[id07], undefined);
  for (const s of schemas) assert.equal(verdict(fast, s), verdict(slow, s), JSON.stringify(s));
  assert.match(verdict(fast, { $schema: `${id07}#`, type: "object" }), /no schema with key or ref/);
});
