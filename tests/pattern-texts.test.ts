/**
 * Every string pattern the hub, the CLI or the plugin loader can refuse with says what it asks for in both languages
 * (issue 15, one message catalog): the schema names the catalog message in `x-text` (issue 27 #2: a refusal carries
 * it as the `{what}` of `field.pattern`), and its English text is exactly the pattern's description in
 * protocol/schema.json, so English refusals and the published schema stay as they were.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { ErrorObject } from "ajv";
import { definitions } from "../src/protocol/definitions.js";
import * as pluginSchemas from "../src/protocol/plugin-schemas.js";
import { describeError, saidError } from "../src/protocol/describe.js";
import { catalogEntries, render, type Said } from "../src/i18n/messages.js";
import * as pluginValidators from "../src/protocol/plugin-validators.generated.js";
import { schemaErrors } from "../src/declarative/read.js";

/** Every `{pattern, description, x-text}` of a schema, walked through every nested schema, by description. */
function patterns(schema: unknown, out = new Map<string, { pattern: string; text: Said | undefined }>()): Map<string, { pattern: string; text: Said | undefined }> {
  if (Array.isArray(schema)) schema.forEach((s) => patterns(s, out));
  else if (schema && typeof schema === "object") {
    const o = schema as Record<string, unknown>;
    if (typeof o.pattern === "string") out.set(String(o.description), { pattern: o.pattern, text: o["x-text"] as Said | undefined });
    for (const v of Object.values(o)) patterns(v, out);
  }
  return out;
}

/**
 * Words a Chinese text may share with the English one: literal syntax a sender types (`javascript:`, `env:NAME`,
 * `plugin:<id>`, the example path `data.items[0].name`, `http(s)`, `sha256:`, a tool call's file stand-ins `folder` and
 * `link:`).
 */
const literalWords = new Set(["javascript", "data", "env", "plugin", "items", "name", "http", "sha", "folder", "link"]);
/** The English words of a text: lowercase runs of three letters or more (acronyms such as ISO, URL, UTF stay; placeholders do not count). */
const englishWords = (text: string) => (text.replace(/\{\w+\}/g, "").match(/[a-z]{3,}/g) ?? []).filter((w) => !literalWords.has(w));

const refusal = (parentSchema: Record<string, unknown>, pattern: string, lang: "zh" | "en") =>
  describeError({ keyword: "pattern", instancePath: "/f", schemaPath: "#", params: { pattern }, parentSchema } as ErrorObject, lang);

test("every pattern of the protocol and of declarative plugins names its catalog text (x-text), whose English is its description", () => {
  const all = patterns([definitions, pluginSchemas]);
  assert.ok(all.size >= 30, `found ${all.size} patterns`);
  for (const [description, { pattern, text }] of all) {
    assert.notEqual(description, "undefined", `pattern ${pattern} has no description`);
    assert.ok(text !== undefined && text.id.startsWith("pattern."), `${description}: no x-text`);
    assert.equal(render("en", text), description, "the published schema says what the English refusal says");
    const schema = { description, "x-text": text };
    assert.equal(refusal(schema, pattern, "en"), `f: wrong format, expected ${description}`);
    const zh = refusal(schema, pattern, "zh");
    assert.ok(zh.startsWith("f：格式不对，应为 "), zh);
    assert.deepEqual(englishWords(zh), [], `${description} → ${zh}`);
    assert.deepEqual(saidError({ keyword: "pattern", instancePath: "/f", schemaPath: "#", params: { pattern }, parentSchema: schema } as ErrorObject), { id: "field.pattern", params: { field: "f", what: text } });
  }
  // A schema of someone else's (a plugin's own tool parameters): its description as it is, else the pattern.
  assert.equal(refusal({ description: "a ticket id" }, "^T-\\d+$", "zh"), "f：格式不对，应为 a ticket id");
  assert.equal(refusal({}, "^T-\\d+$", "en"), "f: wrong format, expected ^T-\\d+$");
});

test("every pattern text of the catalog is Chinese in zh", () => {
  const texts = catalogEntries().filter(([id]) => id.startsWith("pattern."));
  assert.ok(texts.length >= 30);
  for (const [id, { zh, en }] of texts) {
    assert.notEqual(zh, en, id);
    assert.deepEqual(englishWords(zh), [], `${id}: ${zh}`);
  }
});

test("a declarative plugin's pattern errors use the catalog too (plugin.json through its real validator)", () => {
  const validate = pluginValidators.manifest as ((v: unknown) => boolean) & { errors?: ErrorObject[] | null };
  assert.equal(validate({ id: "Bad Id", name: "n", version: "1", apiVersion: "1.0" }), false);
  const reasons = (lang: "zh" | "en") => schemaErrors("plugin.json", validate.errors ?? [], lang).map((e) => e.reason);
  assert.deepEqual(reasons("en"), ["wrong format, expected lowercase letters, digits and -"]);
  assert.deepEqual(reasons("zh"), ["格式不对，应为 小写字母、数字和 -"]);
});
