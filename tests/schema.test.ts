/**
 * protocol/schema.json: up to date with the definitions the hub validates with and answers by, the compiled
 * validators up to date with it, and real traffic — requests and every kind of answer — matching it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv2020Module from "ajv/dist/2020.js";
import { schemaDocument } from "../src/protocol/schema-document.js";
import { fileSchemaDocument, fileSchemas, fileValidatorModule, mcpValidatorsModule, metaValidatorsModule, responseValidatorsModule, validatorsModule, type FileSchema } from "../scripts/validators.js";
import { endpoints } from "../src/protocol/endpoints.js";
import { asShape } from "../src/protocol/response-check.js";
import type { CardFactRow, EventFactRow, RulesFactRow, RunFactRow, TimerFactRow } from "../src/protocol/responses.js";
import type { CardRow, EventRow, RulesMeta, RunRow, TimerRow } from "../src/kernel/types.js";
import { checkAnswer, hubFixture, engine } from "./helpers.js";

const Ajv2020 = ((Ajv2020Module as unknown as { default?: unknown }).default ?? Ajv2020Module) as typeof Ajv2020Module.default;
const published = JSON.parse(readFileSync(join(engine, "protocol", "schema.json"), "utf8"));

test("protocol/schema.json is what `npm run schema` writes from the hub's own definitions", () => {
  assert.deepEqual(published, JSON.parse(JSON.stringify(schemaDocument())));
});

test("the hub's compiled validators are what `npm run schema` writes from the same definitions", () => {
  assert.equal(readFileSync(join(engine, "src", "protocol", "validators.generated.ts"), "utf8"), validatorsModule());
});

test("the clients' compiled answer validators are what `npm run schema` writes from the same definitions", () => {
  assert.equal(readFileSync(join(engine, "src", "protocol", "responses.generated.ts"), "utf8"), responseValidatorsModule());
});

test("the MCP server's compiled argument validators are what `npm run schema` writes from src/protocol/mcp-tools.ts", () => {
  assert.equal(readFileSync(join(engine, "src", "protocol", "mcp-validators.generated.ts"), "utf8"), mcpValidatorsModule());
});

test("the precompiled meta-schema validators are what `npm run schema` writes from Ajv's meta-schemas", () => {
  assert.equal(readFileSync(join(engine, "src", "protocol", "meta-validators.generated.ts"), "utf8"), metaValidatorsModule());
});

test("protocol/rules.schema.json, config.schema.json and manifest.schema.json and their compiled validators are what `npm run schema` writes", () => {
  for (const file of Object.keys(fileSchemas) as FileSchema[]) {
    assert.deepEqual(JSON.parse(readFileSync(join(engine, "protocol", file), "utf8")), JSON.parse(JSON.stringify(fileSchemaDocument(file))), file);
    assert.equal(readFileSync(join(engine, fileSchemas[file].module), "utf8"), fileValidatorModule(file), fileSchemas[file].module);
  }
});

test("the published schema holds every endpoint's query, body and answer, and every reference in it resolves", () => {
  const ajv = new Ajv2020({ strict: false });
  ajv.addSchema(published, "s");
  for (const [name, spec] of Object.entries(endpoints)) {
    for (const def of [spec.response, "query" in spec ? spec.query : null, "body" in spec ? spec.body : null]) {
      if (def === null) continue;
      assert.ok(published.$defs[def], `${name}: ${def} is published`);
      assert.doesNotThrow(() => ajv.getSchema(`s#/$defs/${def}`), `${name}: ${def} compiles with its references`);
    }
  }
});

/** Compile-time: the kernel's rows are rows the timeline can read (npm test typechecks this file). */
export function kernelRowsReadAsFactRows(run: RunRow, card: CardRow, event: EventRow, timer: TimerRow, rules: RulesMeta): [RunFactRow, CardFactRow, EventFactRow, TimerFactRow, RulesFactRow] {
  return [run, card, event, timer, rules];
}

test("a hub that checks its answers finds one that is not the endpoint's shape", () => {
  assert.equal(checkAnswer("resume", 200, { changed: true, rule: "r" }), null);
  assert.equal(checkAnswer("resume", 409, { error: "x" }), null);
  assert.match(checkAnswer("resume", 200, { changed: "yes", rule: "r" }) ?? "", /^resume 200 changed: type/);
  assert.match(checkAnswer("state", 400, { message: "x" }) ?? "", /^state 400 error: required/);
});

test("jobs, cards, results and facts seen over HTTP match the published schema", async () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema(published, "s");
  const check = (def: string, value: unknown) => {
    const ok = ajv.validate(`s#/$defs/${def}`, value);
    assert.equal(ok, true, `${def}: ${ajv.errorsText()} in ${JSON.stringify(value).slice(0, 300)}`);
  };
  const f = await hubFixture();
  try {
    const event = { id: "s1", type: "alert.x", subject: "#1", summary: "s", detail: "d", link: "https://x.example/1" };
    check("EventIn", event);
    await f.call("POST", "/v1/events", f.keys.source, event);
    const job = (await f.call("GET", "/v1/work?claim=s", f.keys.worker)).body.job;
    check("Job", job);
    const result = { outcome: "done", summary: "ok", usage: { input: 1, output: 2, cost: 0.1 }, ask: [{ title: "Q", options: ["a", "b"] }], later: [{ key: "k", at: "2030-01-01T00:00:00Z" }], notice: [{ title: "n", fyi: true }] };
    check("Result", result);
    await f.call("POST", `/v1/runs/${job.run}/result`, job.token, result);
    for (let card = (await f.call("GET", "/v1/cards/next", f.keys.channel)).body.card; card; card = (await f.call("GET", "/v1/cards/next", f.keys.channel)).body.card) {
      check("Card", card);
    }
    const state = (await f.call("GET", "/v1/state", f.keys.owner)).body;
    check("State", state);
    const why = (await f.call("GET", `/v1/runs/${job.run}/why`, f.keys.owner)).body;
    check("Why", why);
    const rows = why.facts.flatMap((fact: { changes: [string, string | number, object | null][] }) => fact.changes);
    const read = (table: string, shape: "RunFactRow" | "CardFactRow" | "EventFactRow" | "TimerFactRow") =>
      rows.filter(([t, , row]: [string, unknown, object | null]) => t === table && row).map(([, , row]: [string, unknown, object]) => asShape(shape, row));
    for (const [table, shape] of [["runs", "RunFactRow"], ["cards", "CardFactRow"], ["events", "EventFactRow"], ["timers", "TimerFactRow"]] as const) {
      const got = read(table, shape);
      assert.ok(got.length > 0 && got.every((r: unknown) => r !== undefined), `every ${table} row of why reads as ${shape}`);
    }
    const res = await fetch(`${f.url}/v1/stream?after=0`, { headers: { authorization: `Bearer ${f.keys.owner}` } });
    const reader = res.body!.getReader();
    let text = "";
    while ((text.match(/\n\n/g) ?? []).length < f.seq()) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    for (const block of text.split("\n\n").filter((b) => b.startsWith("event: fact"))) {
      check("Fact", JSON.parse(block.split("\n").find((l) => l.startsWith("data: "))!.slice(6)));
    }
  } finally {
    await f.close();
  }
});
