/**
 * The shapes of a declarative plugin (spec declarative-plugins.md §1–§3; issue 18) as JSON Schema 2020-12 built with
 * TypeBox: the manifest `plugin.json`, and each asset kind — HTTP tools (`tools/*.json`), workflows
 * (`workflows/*.json`, the step schema), intents (`intents/*.json`), panels and cards (`panels/*.json`,
 * `cards/*.json`, with the closed UI vocabulary `section · list · kv · form · markdown · doc-ref · actions ·
 * chart-lite`) and settings (`settings.json`). `npm run schema` publishes each as a file of `protocol/declarative/`
 * and compiles the validators the loader runs (plugin-validators.generated.ts), so the published files and the loader
 * cannot drift. Prompts (`prompts/*.md`) are plain Markdown text with no front matter: they have no schema.
 *
 * Unlike the /v1 answers, every object here is closed (`additionalProperties: false`): an unknown field or UI node
 * type refuses the whole plugin (fail-closed), so a typo never silently does nothing. A file may name its schema in a
 * top-level `$schema` (editors use it).
 */
import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { linePattern, textPattern } from "./schema.js";
import { patternText } from "./shapes.js";
import { toolPluginNameMaxChars } from "../kernel/limits.js";
import {
  pluginIdMaxChars, assetNameMaxChars, pluginLineMaxChars, pluginTextMaxChars, pluginMarkdownMaxChars,
  networkHostsMax, providedNamesMax, httpUrlMaxChars, httpHeadersMax, httpValueMaxChars, httpTimeoutMsMax,
  workflowStepsMax, intentsMax, formFieldsMax, uiItemsMax, chartPointsMax, settingsMax, pluginIdPattern,
  assetNamePattern, settingKeyPattern, localIdPattern, apiVersionPattern, networkHostPattern, headerNamePattern,
  authRefPattern, resultPathPattern, artifactFilePattern, qualifiedToolPattern,
} from "./plugin-limits.js";

export * from "./plugin-limits.js";

// ── building blocks ──────────────────────────────────────────────────────────────────────────────────────────
const line = (max = pluginLineMaxChars, min = 1) => Type.String({ minLength: min, maxLength: max, pattern: linePattern, ...patternText("pattern.oneLine") });
const text = (max = pluginTextMaxChars) => Type.String({ maxLength: max, pattern: textPattern, ...patternText("pattern.noControlText") });
/** A closed object: an unknown field is an error. */
const closed = <P extends Parameters<typeof Type.Object>[0]>(props: P, description?: string) =>
  Type.Object(props, { additionalProperties: false, ...(description ? { description } : {}) });
/** A `$schema` a file may name at its top (for editors); not read. */
const schemaRef = Type.Optional(Type.String({ maxLength: 1000 }));
const list = <T extends TSchema>(t: T, max: number, min = 0) => Type.Array(t, { minItems: min, maxItems: max });
/** A string that is one of `values` (published as `enum`). */
const oneOf = <T extends string>(values: readonly T[]) => Type.Unsafe<T>({ type: "string", enum: [...values] });

const pluginId = () => Type.String({ minLength: 1, maxLength: pluginIdMaxChars, pattern: pluginIdPattern, ...patternText("pattern.pluginId") });
const assetName = () => Type.String({ minLength: 1, maxLength: assetNameMaxChars, pattern: assetNamePattern, ...patternText("pattern.assetName") });
const localId = () => Type.String({ minLength: 1, maxLength: assetNameMaxChars, pattern: localIdPattern, ...patternText("pattern.assetName") });
const settingKey = () => Type.String({ minLength: 1, maxLength: assetNameMaxChars, pattern: settingKeyPattern, ...patternText("pattern.settingKey") });
const names = (item: TSchema) => Type.Optional(Type.Array(item, { maxItems: providedNamesMax, uniqueItems: true }));

// ── the manifest (§2) ────────────────────────────────────────────────────────────────────────────────────────
/** `plugin.json`: who the plugin is, the host window it needs, what it may reach, and every asset by name. */
export const PluginManifest = closed({
  $schema: schemaRef,
  id: pluginId(),
  name: line(),
  version: line(32),
  apiVersion: Type.String({ pattern: apiVersionPattern, ...patternText("pattern.apiVersion") }),
  description: Type.Optional(text()),
  author: Type.Optional(line()),
  requires: Type.Optional(closed({
    network: Type.Optional(Type.Array(Type.String({ maxLength: 262, pattern: networkHostPattern, ...patternText("pattern.networkHost") }), { maxItems: networkHostsMax, uniqueItems: true })),
  })),
  provides: Type.Optional(closed({
    tools: names(assetName()),
    workflows: names(assetName()),
    intents: names(assetName()),
    prompts: names(assetName()),
    panels: names(assetName()),
    cards: names(assetName()),
    settings: names(settingKey()),
  })),
}, "plugin.json of a declarative plugin (spec declarative-plugins.md §2)");
export type PluginManifest = Static<typeof PluginManifest>;

/** The asset kinds `provides` names, each a folder of files (settings: keys of `settings.json`). */
export const assetKinds = ["tools", "workflows", "intents", "prompts", "panels", "cards", "settings"] as const;
export type AssetKind = (typeof assetKinds)[number];

// ── HTTP tools (§3.1) ────────────────────────────────────────────────────────────────────────────────────────
/** An object of string values (headers, query parameters) whose names follow `names`. */
const strings = (names: Record<string, unknown>) => Type.Unsafe<Record<string, string>>({
  type: "object", maxProperties: httpHeadersMax, propertyNames: { type: "string", ...names },
  additionalProperties: { type: "string", maxLength: httpValueMaxChars },
});

/** The request an HTTP tool makes; strings may hold `{{param.<name>}}` (and header values `{{auth}}`). */
export const HttpRequest = closed({
  method: Type.Optional(oneOf(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"] as const)),
  url: Type.String({ minLength: 1, maxLength: httpUrlMaxChars }),
  headers: Type.Optional(strings({ pattern: headerNamePattern, maxLength: 100, ...patternText("pattern.headerName") })),
  query: Type.Optional(strings({ minLength: 1, maxLength: 200 })),
  body: Type.Optional(Type.Unknown({ description: "a JSON value sent as application/json; strings may hold {{param.<name>}}" })),
  authRef: Type.Optional(Type.String({ maxLength: 200, pattern: authRefPattern, ...patternText("pattern.authRef") })),
  resultPath: Type.Optional(Type.String({ maxLength: 500, pattern: resultPathPattern, ...patternText("pattern.resultPath") })),
  timeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: httpTimeoutMsMax })),
});
export type HttpRequest = Static<typeof HttpRequest>;

/** `tools/<name>.json`: a declarative HTTP tool. `parameters` is the JSON Schema of its arguments (an object). */
export const HttpTool = closed({
  $schema: schemaRef,
  name: assetName(),
  description: Type.Optional(text()),
  parameters: Type.Object({ type: Type.Literal("object") }, { additionalProperties: true, description: "a JSON Schema of type object" }),
  http: HttpRequest,
}, "tools/<name>.json of a declarative plugin (spec declarative-plugins.md §3.1)");
export type HttpTool = Static<typeof HttpTool>;

// ── forms, UI nodes, panels and cards (§3.4) ─────────────────────────────────────────────────────────────────
/** One field of a `form` node, a `hitl` step's form, or an intent's slot. */
export const FormField = closed({
  name: Type.String({ minLength: 1, maxLength: assetNameMaxChars, pattern: "^[A-Za-z_][A-Za-z0-9_]*$", ...patternText("pattern.identifier") }),
  label: line(),
  type: Type.Optional(oneOf(["text", "textarea", "number", "select", "checkbox"] as const)),
  required: Type.Optional(Type.Boolean()),
  options: Type.Optional(list(line(), formFieldsMax, 1)),
  placeholder: Type.Optional(line()),
  default: Type.Optional(Type.Union([line(pluginLineMaxChars, 0), Type.Number(), Type.Boolean()])),
});
export type FormField = Static<typeof FormField>;
/** A reference to the one published FormField (form-field.schema.json), compiled once for every place that holds one. */
const formField = Type.Unsafe<FormField>({ $ref: "form-field.schema.json" });

/**
 * The UI node types (spec §3.4 词汇边界): a closed vocabulary; anything else refuses the plugin. A type is added here
 * and its fields in `UiNodeFields`; the compiler then names every place that must handle it: its schema
 * (`nodeShapes` below) and each renderer's `switch` (tests/ui-node-kind.test.ts).
 */
export const uiNodeTypes = ["section", "list", "kv", "form", "markdown", "doc-ref", "actions", "chart-lite"] as const;
export type UiNodeType = (typeof uiNodeTypes)[number];

/** Each node type's fields beside `type` (a type of `uiNodeTypes` without its fields is an error at `UiNode`). */
export interface UiNodeFields {
  section: { title?: string; children: UiNode[] };
  list: { title?: string; items: string[] };
  kv: { title?: string; kv: [string, string | number | boolean][] };
  form: { id: string; title?: string; fields: FormField[]; submit?: string };
  markdown: { markdown: string };
  "doc-ref": { docId: string; title?: string };
  actions: { actions: { id: string; label: string; style?: "primary" | "secondary" | "danger" }[] };
  "chart-lite": { title?: string; chart: { kind: "bar" | "line"; labels: string[]; series: number[] } };
}

/** A UI node of a panel or card: one of `uiNodeTypes` with its fields, told apart by `type`. */
export type UiNode = { [K in UiNodeType]: { type: K } & UiNodeFields[K] }[UiNodeType];

/** A reference to the one published UI node (ui-node.schema.json), compiled once for panels, cards and sections. */
const nodeRef = { $ref: "ui-node.schema.json" };
/** A node type's schema: its fields (beside `type`) and which of them are required. */
interface NodeShape {
  props: Record<string, TSchema>;
  required: string[];
}
const shape = (props: Record<string, TSchema>, required: string[]): NodeShape => ({ props, required });
const title = Type.Optional(line());
/** Each node type's schema (held to `uiNodeTypes`: a type without its schema is an error here). */
const nodeShapes: Readonly<Record<UiNodeType, NodeShape>> = {
  section: shape({ title, children: { type: "array", maxItems: uiItemsMax, items: nodeRef } as unknown as TSchema }, ["children"]),
  list: shape({ title, items: list(line(pluginTextMaxChars), uiItemsMax) }, ["items"]),
  kv: shape({
    title,
    kv: list(Type.Unsafe<[string, string | number | boolean]>({
      type: "array", minItems: 2, maxItems: 2,
      prefixItems: [line(), { anyOf: [line(pluginTextMaxChars, 0), { type: "number" }, { type: "boolean" }] }],
    }), uiItemsMax),
  }, ["kv"]),
  form: shape({ id: localId(), title, fields: list(formField, formFieldsMax, 1), submit: Type.Optional(line()) }, ["id", "fields"]),
  markdown: shape({ markdown: text(pluginMarkdownMaxChars) }, ["markdown"]),
  "doc-ref": shape({ docId: line(), title }, ["docId"]),
  actions: shape({
    actions: list(closed({ id: localId(), label: line(), style: Type.Optional(oneOf(["primary", "secondary", "danger"] as const)) }), uiItemsMax, 1),
  }, ["actions"]),
  "chart-lite": shape({
    title,
    chart: closed({
      kind: oneOf(["bar", "line"] as const),
      labels: list(line(), chartPointsMax),
      series: list(Type.Number(), chartPointsMax),
    }),
  }, ["chart"]),
};
/**
 * One node of the vocabulary, chosen by its `type` (`oneOf` with a discriminator: an unknown type is one error naming
 * it, and a known type is checked against its own shape only). A `section` holds nodes (a reference to this schema).
 */
export const UiNodeSchema = {
  description: `a UI node: ${uiNodeTypes.slice(0, -1).join(", ")} or ${uiNodeTypes.at(-1)} (spec declarative-plugins.md §3.4)`,
  type: "object",
  required: ["type"],
  discriminator: { propertyName: "type" },
  oneOf: uiNodeTypes.map((type) => ({
    type: "object", additionalProperties: false, required: ["type", ...nodeShapes[type].required],
    properties: { type: { const: type }, ...nodeShapes[type].props },
  })),
};
const nodes = (max = uiItemsMax) => Type.Unsafe<UiNode[]>({ type: "array", maxItems: max, items: nodeRef });

/** `panels/<name>.json`: a panel of the console's plugin view. */
export const Panel = closed({ $schema: schemaRef, id: assetName(), title: line(), body: nodes() }, "panels/<name>.json of a declarative plugin (spec declarative-plugins.md §3.4)");
export type Panel = Static<typeof Panel>;

/** `cards/<name>.json`: a card template (`kind` is its name). */
export const CardTemplate = closed({ $schema: schemaRef, kind: assetName(), title: Type.Optional(line()), data: nodes() }, "cards/<name>.json of a declarative plugin (spec declarative-plugins.md §3.4)");
export type CardTemplate = Static<typeof CardTemplate>;

// ── workflows (§3.2; they run: issue 18) ─────────────────────────────────────────────────────────────────────
const step = (type: string, props: Record<string, TSchema>, required: string[]) => ({
  type: "object", additionalProperties: false, required: ["id", "type", ...required],
  properties: { id: localId(), type: { const: type }, title, ...props },
});
/**
 * One step of a workflow, chosen by its `type`: `prompt` (a template, or a prompt asset by name, filled with the run's
 * context: one turn of the rule's agent), `tool` (a call of `<plugin>.<tool>` with arguments), `hitl` (an ask card:
 * options, or a form, or a card template), `artifact` (a file of the run's folder written from an earlier step's
 * output).
 */
export const WorkflowStepSchema = {
  description: "a workflow step: prompt, tool, hitl or artifact",
  type: "object",
  required: ["type"],
  discriminator: { propertyName: "type" },
  oneOf: [
    step("prompt", { prompt: text(pluginMarkdownMaxChars), promptRef: assetName() }, []),
    step("tool", { tool: Type.String({ maxLength: 2 * toolPluginNameMaxChars + 1, pattern: qualifiedToolPattern, ...patternText("pattern.qualifiedTool") }), args: Type.Record(Type.String(), Type.Unknown()) }, ["tool"]),
    step("hitl", {
      text: text(), options: list(line(), formFieldsMax, 1), form: list(formField, formFieldsMax, 1), card: assetName(),
      // The options that go on to the next step; any other answer ends the workflow there (issue 26 round 53, F53b-1).
      continueOn: list(line(), formFieldsMax, 1),
    }, []),
    step("artifact", { from: localId(), file: Type.String({ pattern: artifactFilePattern, ...patternText("pattern.artifactFile") }) }, ["from", "file"]),
  ],
};
/** A workflow step (see WorkflowStepSchema). */
export type WorkflowStep =
  | { id: string; type: "prompt"; title?: string; prompt?: string; promptRef?: string }
  | { id: string; type: "tool"; title?: string; tool: string; args?: Record<string, unknown> }
  | { id: string; type: "hitl"; title?: string; text?: string; options?: string[]; form?: FormField[]; card?: string; continueOn?: string[] }
  | { id: string; type: "artifact"; title?: string; from: string; file: string };

/** `workflows/<name>.json`: steps run in order; `intentId` binds it to an intent of the same plugin. */
export const Workflow = closed({
  $schema: schemaRef,
  id: assetName(),
  title: Type.Optional(line()),
  description: Type.Optional(text()),
  intentId: Type.Optional(localId()),
  steps: Type.Unsafe<WorkflowStep[]>({ type: "array", minItems: 1, maxItems: workflowStepsMax, items: { $ref: "#/$defs/WorkflowStep" } }),
}, "workflows/<name>.json of a declarative plugin (spec declarative-plugins.md §3.2)");
export type Workflow = Static<typeof Workflow>;

// ── intents (§3.3) ───────────────────────────────────────────────────────────────────────────────────────────
/** One intent: an event matches when its summary or detail holds any of `includes_any`; `slots` are asked first. */
export const Intent = closed({
  id: localId(),
  domain: Type.Optional(line()),
  description: Type.Optional(text()),
  includes_any: list(line(), intentsMax, 1),
  slots: Type.Optional(list(formField, formFieldsMax)),
});
export type Intent = Static<typeof Intent>;

/** `intents/<name>.json`: an array of intents (the agent-intent overlay shape). */
export const IntentFile = Type.Array(Intent, { minItems: 1, maxItems: intentsMax, description: "intents/<name>.json of a declarative plugin (spec declarative-plugins.md §3.3)" });
export type IntentFile = Static<typeof IntentFile>;

// ── settings (§3.6) ──────────────────────────────────────────────────────────────────────────────────────────
/** One setting a plugin declares; `secret` values live only in the home's secrets file. */
export const Setting = closed({
  key: settingKey(),
  group: Type.Optional(Type.String({ maxLength: 100, pattern: "^plugin:[a-z0-9][a-z0-9-]*$", ...patternText("pattern.pluginGroup") })),
  label: line(),
  type: oneOf(["string", "secret", "number", "boolean", "select"] as const),
  effect: Type.Optional(oneOf(["hot", "reload"] as const)),
  description: Type.Optional(text()),
  options: Type.Optional(list(line(), formFieldsMax, 1)),
  default: Type.Optional(Type.Union([line(pluginLineMaxChars, 0), Type.Number(), Type.Boolean()])),
});
export type Setting = Static<typeof Setting>;

/** `settings.json`: the settings a plugin declares (they show in the settings centre under `plugin:<id>`). */
export const SettingsFile = Type.Array(Setting, { maxItems: settingsMax, description: "settings.json of a declarative plugin (spec declarative-plugins.md §3.6)" });
export type SettingsFile = Static<typeof SettingsFile>;

/**
 * The published schema files (`protocol/declarative/<file>`), each a JSON Schema 2020-12 document; references name
 * another file of the folder (`ui-node.schema.json`, resolved against the document's `$id`) or a `$defs` entry of the
 * same document. The loader validates each asset file against its kind's document.
 */
export const pluginSchemaFiles = {
  "plugin.schema.json": { root: PluginManifest, defs: {} },
  "tool.schema.json": { root: HttpTool, defs: {} },
  "workflow.schema.json": { root: Workflow, defs: { WorkflowStep: WorkflowStepSchema } },
  "intents.schema.json": { root: IntentFile, defs: {} },
  "panel.schema.json": { root: Panel, defs: {} },
  "card.schema.json": { root: CardTemplate, defs: {} },
  "ui-node.schema.json": { root: UiNodeSchema, defs: {} },
  "form-field.schema.json": { root: FormField, defs: {} },
  "settings.schema.json": { root: SettingsFile, defs: {} },
} as const;
export type PluginSchemaFile = keyof typeof pluginSchemaFiles;

/** The published document of `file`: `$schema`, `$id`, the root shape and its `$defs` (without their own `$id`). */
export function pluginSchemaDocument(file: PluginSchemaFile): Record<string, unknown> {
  const { root, defs } = pluginSchemaFiles[file];
  const plain = (s: unknown) => {
    const copy = JSON.parse(JSON.stringify(s)) as Record<string, unknown>;
    delete copy.$id;
    return copy;
  };
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: `https://agent-autoloop.dev/protocol/declarative/${file}`,
    ...plain(root),
    ...(Object.keys(defs).length > 0 ? { $defs: Object.fromEntries(Object.entries(defs).map(([k, v]) => [k, plain(v)])) } : {}),
  };
}
