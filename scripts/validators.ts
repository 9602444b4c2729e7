/**
 * The protocol's validators, compiled ahead of time (Ajv standalone code) from the TypeBox definitions in
 * src/protocol/ (schema.ts, responses.ts), so that a starting hub loads neither TypeBox nor Ajv's compiler nor
 * compiles a schema (docs/measurements.md: start time and idle memory): the hub's input validators in
 * src/protocol/validators.generated.ts, and the answers' validators clients check with in
 * src/protocol/responses.generated.ts (a module of its own, so the hub does not load them and a client loads only
 * them). `npm run schema` writes both; tests/schema.test.ts checks that the committed files are what this writes.
 */
import Ajv2020Module from "ajv/dist/2020.js";
import standaloneModule from "ajv/dist/standalone/index.js";
import { definitions } from "../src/protocol/definitions.js";
import { endpoints } from "../src/protocol/endpoints.js";
import { pluginSchemaDocument, pluginSchemaFiles, type PluginSchemaFile } from "../src/protocol/plugin-schemas.js";
import { RulesFile } from "../src/protocol/rules-schema.js";
import { ConfigFile } from "../src/protocol/config-schema.js";
import { ManifestFile } from "../src/tools/manifest-schema.js";
import { mcpToolArguments } from "../src/protocol/mcp-tools.js";
import { createRequire } from "node:module";

const Ajv2020 = ((Ajv2020Module as unknown as { default?: unknown }).default ?? Ajv2020Module) as typeof Ajv2020Module.default;
const standaloneCode = ((standaloneModule as unknown as { default?: unknown }).default ?? standaloneModule) as typeof standaloneModule.default;

/** The definitions the hub and the worker validate input with (request bodies and receipts). */
export const validatedNames = [
  "EventIn", "TellBody", "Started", "Result", "CancelRun", "Delivered", "Failed", "Answer", "ResolveCard", "PauseBody",
  "ResumeBody", "RunNowBody", "Receipt", "WorkQuery", "CardsNextQuery", "StateQuery", "EventsQuery", "SearchQuery", "StreamQuery",
  "ToolCallBody", "ToolOutcomeBody", "PluginCallbackBody", "ToolWaitQuery", "ToolInvokeBody", "PluginSettingBody", "PluginEventBody", "ArtifactBody",
  "TranscriptBody", "TranscriptQuery",
] as const satisfies readonly (keyof typeof definitions)[];

/** The answers clients check: every endpoint's answer, the refusal, and the rows of facts `why` reads. */
export const checkedResponseNames = [
  "ErrorBody", ...new Set(Object.values(endpoints).map((e) => e.response)),
  "RunFactRow", "CardFactRow", "EventFactRow", "TimerFactRow", "RulesFactRow", "ToolCallFactRow", "TrustFactRow",
] as const satisfies readonly (keyof typeof definitions)[];

/**
 * The source of src/protocol/validators.generated.ts: one named export per validated definition, compiled with
 * the options the hub always used (JSON Schema 2020-12, first error only, lengths in code points, `verbose` so an
 * error carries its schema's description).
 * @throws Error when a definition does not compile.
 */
export function validatorsModule(): string {
  return compiled(validatedNames, true);
}

/**
 * The source of src/protocol/responses.generated.ts: one named export per checked answer; without `verbose`, since a
 * mismatch only needs the field and the keyword.
 * @throws Error when a definition does not compile.
 */
export function responseValidatorsModule(): string {
  return compiled(checkedResponseNames, false);
}

function compiled(names: readonly (keyof typeof definitions)[], verbose: boolean): string {
  // Without `verbose`, error messages are left out too (a mismatch is reported from its keyword and parameters), and
  // a shape referenced from several answers is compiled once and called, not copied into each.
  const ajv = new Ajv2020({ allErrors: false, strict: false, verbose, messages: verbose, inlineRefs: verbose, code: { source: true, esm: true } });
  // Shapes used in several answers carry `$id` and are referenced by it: add them all, each under its id.
  for (const [name, schema] of Object.entries(definitions)) if ("$id" in schema || names.includes(name as keyof typeof definitions)) ajv.addSchema(schema, "$id" in schema ? undefined : name);
  return finish(standaloneCode(ajv, Object.fromEntries(names.map((n) => [n, n]))), "src/protocol/definitions.ts");
}

/** Ajv's standalone code as an ES module of this project, with the header saying where it comes from. */
function finish(generated: string, from: string): string {
  let code = generated;
  // Ajv's ESM output still requires its runtime helpers (the code-point counter, deep equality); import them instead.
  const imports: string[] = [];
  code = code.replace(/const (func\d+) = require\("ajv\/dist\/runtime\/(\w+)"\)\.default;/g, (_all, local: string, helper: string) => {
    imports.push(`import ${helper} from "ajv/dist/runtime/${helper}.js";`, `const ${local} = ${helper}.default ?? ${helper};`);
    return "";
  });
  code = code.replace(/^"use strict";/, ""); // a module is strict already
  // Every character outside ASCII as its \u escape (they sit in strings: schemas' descriptions): one such character
  // makes V8 keep the whole module's source as two bytes a character, for the life of the process (issue 32:
  // rules-validator.generated.ts's 267 KB held 535 KB in every hub for one "…").
  code = code.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  const head = [
    `// Generated by \`npm run schema\` (scripts/validators.ts) from ${from}. Do not edit.`,
    "// @ts-nocheck",
    ...imports,
  ];
  return `${head.join("\n")}\n${code}\n`;
}

/** The export name of each published plugin schema file's validator in src/protocol/plugin-validators.generated.ts. */
export const pluginValidatorNames: Record<PluginSchemaFile, string> = {
  "plugin.schema.json": "manifest",
  "tool.schema.json": "tool",
  "workflow.schema.json": "workflow",
  "intents.schema.json": "intents",
  "panel.schema.json": "panel",
  "card.schema.json": "card",
  "ui-node.schema.json": "uiNode",
  "form-field.schema.json": "formField",
  "settings.schema.json": "settings",
};

/**
 * The source of src/protocol/plugin-validators.generated.ts: one named export per published plugin schema file
 * (protocol/declarative/), compiled with every error (a refused plugin lists them all), discriminators (one error for
 * an unknown UI node or step type) and `verbose` (an error carries its schema's description).
 * @throws Error when a schema does not compile.
 */
export function pluginValidatorsModule(): string {
  const ajv = new Ajv2020({ allErrors: true, strict: false, verbose: true, discriminator: true, code: { source: true, esm: true } });
  for (const file of Object.keys(pluginSchemaFiles) as PluginSchemaFile[]) ajv.addSchema(pluginSchemaDocument(file), pluginValidatorNames[file]);
  // The node and field files are compiled as parts of the others, not exported on their own.
  const exported = Object.values(pluginValidatorNames).filter((n) => n !== "uiNode" && n !== "formField");
  return finish(standaloneCode(ajv, Object.fromEntries(exported.map((n) => [n, n]))), "src/protocol/plugin-schemas.ts");
}

/**
 * The files people write (issue 27 "One way to check files"): each published as `protocol/<file>` and compiled to a
 * module of its own exporting `validate` (a hub that reads config.json loads neither of the others), with every error
 * (`allErrors`: the first in the file is told for rules.json and config.json, all of them for a manifest) and
 * `verbose` (an error carries its schema node, whose `x-messages` word it: src/protocol/file-problems.ts).
 */
export const fileSchemas = {
  "rules.schema.json": { schema: RulesFile, module: "src/protocol/rules-validator.generated.ts", from: "src/protocol/rules-schema.ts" },
  "config.schema.json": { schema: ConfigFile, module: "src/protocol/config-validator.generated.ts", from: "src/protocol/config-schema.ts" },
  "manifest.schema.json": { schema: ManifestFile, module: "src/tools/manifest-validator.generated.ts", from: "src/tools/manifest-schema.ts" },
} as const;
export type FileSchema = keyof typeof fileSchemas;

/** The published document of a file's schema: JSON Schema 2020-12 with its address, for editors' `$schema`. */
export function fileSchemaDocument(file: FileSchema): Record<string, unknown> {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: `https://agent-autoloop.dev/protocol/${file}`,
    ...(JSON.parse(JSON.stringify(fileSchemas[file].schema)) as Record<string, unknown>),
  };
}

/**
 * The source of a file's validator module.
 * @throws Error when the schema does not compile.
 */
export function fileValidatorModule(file: FileSchema): string {
  const ajv = new Ajv2020({ allErrors: true, strict: false, verbose: true, messages: false, code: { source: true, esm: true } });
  ajv.addSchema(fileSchemaDocument(file), "validate");
  return finish(standaloneCode(ajv, { validate: "validate" }), fileSchemas[file].from);
}

/**
 * The source of src/protocol/mcp-validators.generated.ts: one named export per tool of `agent-autoloop mcp`
 * (src/protocol/mcp-tools.ts), compiled like the hub's input validators (first error only, `verbose` so an error
 * carries its schema's description): the MCP server refuses bad arguments with the hub's own field-naming texts.
 * @throws Error when a schema does not compile.
 */
export function mcpValidatorsModule(): string {
  const ajv = new Ajv2020({ allErrors: false, strict: false, verbose: true, messages: true, inlineRefs: true, code: { source: true, esm: true } });
  for (const [name, schema] of Object.entries(mcpToolArguments)) ajv.addSchema(JSON.parse(JSON.stringify(schema)) as object, name);
  return finish(standaloneCode(ajv, Object.fromEntries(Object.keys(mcpToolArguments).map((n) => [n, n]))), "src/protocol/mcp-tools.ts");
}

/**
 * The source of src/protocol/meta-validators.generated.ts: the JSON Schema meta-schemas (draft 2020-12, and draft-07,
 * which tool schemas may declare) compiled ahead of time with the options of the Ajv instances that check tool and
 * declarative parameter schemas (first error only, not strict). Ajv compiles a meta-schema at its first schema check
 * otherwise: 60–240 ms of every `check`, `plugins invoke` and hub start that reads a manifest (src/protocol/meta-schemas.ts).
 * @throws Error when a meta-schema does not compile.
 */
export function metaValidatorsModule(): string {
  const ajv = new Ajv2020({ allErrors: false, strict: false, code: { source: true, esm: true } });
  ajv.addMetaSchema(createRequire(import.meta.url)("ajv/dist/refs/json-schema-draft-07.json") as object);
  // The ids under which Ajv keeps them (src/protocol/meta-schemas.ts puts these functions there).
  const ids = { draft2020: "https://json-schema.org/draft/2020-12/schema", draft07: "http://json-schema.org/draft-07/schema" };
  return finish(standaloneCode(ajv, ids), "Ajv's own meta-schemas (ajv/dist/refs/)");
}
