/**
 * Loading one declarative plugin folder, fail-closed (spec declarative-plugins.md §1–§2; issue 18): `plugin.json`
 * valid against its published schema, `id` equal to the folder's name, `apiVersion` inside this host's window (`1.x`),
 * every asset named in `provides` present and valid against its kind's schema, no asset that `provides` does not name,
 * and what schemas cannot say (names equal to file names, templates of HTTP tools, references between assets). Any
 * error refuses the whole plugin, and every error found is reported (file, JSON pointer, reason; at most
 * `pluginErrorsMax`). Loading reads files and runs nothing of the plugin.
 */
import { createHash } from "node:crypto";
import { basename, join } from "node:path";
import type { ErrorObject } from "ajv";
import { t, type Lang } from "../i18n/messages.js";
import { escapedLine, textForbiddenClass } from "../kernel/text.js";
import * as validators from "../protocol/plugin-validators.generated.js";
import { apiVersionPattern, assetNamePattern } from "../protocol/plugin-limits.js";
import type {
  AssetKind, CardTemplate, HttpTool, IntentFile, Panel, PluginManifest, Setting, SettingsFile, UiNode, Workflow, FormField,
} from "../protocol/plugin-schemas.js";
import { declarativeApiMajor, declarativeApiWindow } from "./version.js";
import { pluginAssetsMax, pluginErrorsMax, pluginFolderEntriesMax, pluginTotalMaxBytes } from "./limits.js";
import { listPluginFolder, parsePluginJson, pointer, pointerSegment, readPluginFile, schemaErrors } from "./read.js";
import { checkToolTemplates } from "./template.js";
import type { DeclarativeOrigin, IntentEntry, LoadedPlugin, PluginError } from "./types.js";
import { Slicer } from "./slice.js";

/** The outcome of loading one folder. A refused folder keeps its plugin.json when that was a JSON object (to list it). */
export type LoadOutcome =
  | { ok: true; plugin: LoadedPlugin }
  | { ok: false; id: string; digest: string; errors: PluginError[]; manifest: Record<string, unknown> | null };

type Validator = ((value: unknown) => boolean) & { errors?: ErrorObject[] | null };

/** The asset kinds that are folders of files, with their file extension. */
const folderKinds = { tools: ".json", workflows: ".json", intents: ".json", prompts: ".md", panels: ".json", cards: ".json" } as const;
type FolderKind = keyof typeof folderKinds;
/** The tool plugin manifests (src/tools): a folder with one of them is a tool plugin, not a declarative one. */
const toolManifestNames = ["manifest.toml", "plugin-manifest.toml"];
const assetName = new RegExp(assetNamePattern);
const promptForbidden = new RegExp(`[${textForbiddenClass}]`, "u");

/** What one load collects: errors, the digest of every byte read, and the bytes counted. */
class Reading {
  readonly errors: PluginError[] = [];
  private readonly hash = createHash("sha256");
  private bytes = 0;
  constructor(readonly dir: string, readonly lang: Lang, readonly slicer: Slicer) {}

  /** Records an error of `file` (its name written with escapes: a name the plugin chose adds no line; round 30, F30b-4). */
  error(file: string, at: string, reason: string): void {
    this.errors.push({ file: escapedLine(file), pointer: at, reason });
  }

  /** The text of `rel` (added to the digest), or null with its error recorded. */
  text(rel: string): string | null {
    const file = join(this.dir, rel);
    const r = readPluginFile(file, this.lang);
    if (!r.ok) {
      this.error(file, "", r.reason);
      return null;
    }
    this.bytes += r.bytes.length;
    this.hash.update(`${rel}\0${r.bytes.length}\0`).update(r.bytes);
    return r.text;
  }

  /** The value of JSON file `rel` when it is valid against `validate`, else null with every error recorded. */
  json<T>(rel: string, validate: Validator): { value: T | null; raw: unknown } {
    const text = this.text(rel);
    if (text === null) return { value: null, raw: undefined };
    const file = join(this.dir, rel);
    const parsed = parsePluginJson(text, this.lang);
    if (!parsed.ok) {
      this.error(file, parsed.pointer ?? "", parsed.reason);
      return { value: null, raw: undefined };
    }
    if (validate(parsed.value)) return { value: parsed.value as T, raw: parsed.value };
    this.errors.push(...schemaErrors(file, validate.errors ?? [], this.lang));
    return { value: null, raw: parsed.value };
  }

  get total(): number {
    return this.bytes;
  }

  digest(): string {
    return this.hash.digest("hex");
  }
}

/** The names of one kind a manifest's `provides` holds, taken even from a manifest that failed its schema (usable ones only). */
function providedNames(raw: unknown, kind: AssetKind): string[] {
  const provides = (raw as { provides?: Record<string, unknown> } | null)?.provides;
  const list = provides && typeof provides === "object" ? provides[kind] : undefined;
  return Array.isArray(list) ? list.filter((n): n is string => typeof n === "string" && (kind === "settings" || assetName.test(n))) : [];
}

/**
 * The entries of a folder (dot names left out, sorted), null when it does not exist, or "tooMany" (its error recorded)
 * when it holds more than `pluginFolderEntriesMax`.
 */
function entries(r: Reading, dir: string): { name: string; folder: boolean; link: boolean }[] | "tooMany" | null {
  const list = listPluginFolder(dir);
  if (list === "tooMany") r.error(dir, "", t(r.lang, "decl.folder.tooManyEntries", { limit: pluginFolderEntriesMax }));
  if (list === "tooMany" || list === null) return list;
  return list.map((e) => ({ name: e.name, folder: e.isDirectory(), link: e.isSymbolicLink() }));
}

/**
 * Loads the plugin in folder `dir` (its `id` must be the folder's name). Never throws: a folder that cannot be read is
 * refused with the reason.
 */
export async function loadPlugin(dir: string, origin: DeclarativeOrigin, lang: Lang, slicer = new Slicer()): Promise<LoadOutcome> {
  const id = basename(dir);
  const r = new Reading(dir, lang, slicer);
  let result: LoadedPlugin | null = null;
  let raw: unknown;
  try {
    ({ result, raw } = await read(r, id, origin));
  } catch (e) {
    r.error(dir, "", t(lang, "decl.file.read", { error: (e as NodeJS.ErrnoException).code ?? (e as Error).message }));
  }
  if (r.total > pluginTotalMaxBytes) r.error(dir, "", t(lang, "decl.file.totalTooLarge", { limit: pluginTotalMaxBytes }));
  const digest = r.digest();
  if (result && r.errors.length === 0) return { ok: true, plugin: { ...result, digest } };
  let errors = r.errors;
  if (errors.length > pluginErrorsMax) {
    const more = errors.length - pluginErrorsMax;
    errors = [...errors.slice(0, pluginErrorsMax), { file: dir, pointer: "", reason: t(lang, "decl.errors.more", { count: more }) }];
  }
  const manifest = typeof raw === "object" && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : null;
  return { ok: false, id, digest, errors, manifest };
}

/** The files of a plugin's folder itself that the loader reads (a folder or link in their place is refused on reading). */
const topFiles = ["plugin.json", "settings.json"];

/** Reads and checks everything; the plugin when nothing was wrong so far (the caller checks `r.errors`). */
async function read(r: Reading, id: string, origin: DeclarativeOrigin): Promise<{ result: LoadedPlugin | null; raw: unknown }> {
  const { dir, lang } = r;
  const listed = entries(r, dir);
  if (listed === "tooMany") return { result: null, raw: undefined };
  const top = listed ?? [];
  for (const e of top) {
    if (toolManifestNames.includes(e.name)) r.error(join(dir, e.name), "", t(lang, "decl.folder.toolPlugin", { file: e.name }));
    // plugin.json and settings.json are read below, which says what is wrong with one that is a folder or a link.
    else if (topFiles.includes(e.name)) continue;
    else if ((e.folder || e.link) && !(e.name in folderKinds)) r.error(join(dir, e.name), "", t(lang, "decl.folder.unknown"));
    else if (e.link && e.name in folderKinds) r.error(join(dir, e.name), "", t(lang, "decl.file.symlink"));
  }
  const manifestFile = join(dir, "plugin.json");
  const { value: manifest, raw } = r.json<PluginManifest>("plugin.json", validators.manifest as Validator);
  // Checked on the file as written, even when it failed its schema elsewhere: every error at once.
  const m = (typeof raw === "object" && raw !== null ? raw : {}) as { id?: unknown; apiVersion?: unknown; requires?: { network?: unknown } };
  if (typeof m.id === "string" && m.id !== id) r.error(manifestFile, "/id", t(lang, "decl.manifest.id", { folder: id }));
  if (typeof m.apiVersion === "string" && new RegExp(apiVersionPattern).test(m.apiVersion) && Number(m.apiVersion.split(".")[0]) !== declarativeApiMajor) {
    r.error(manifestFile, "/apiVersion", t(lang, "decl.manifest.apiVersion", { version: m.apiVersion, window: declarativeApiWindow }));
  }
  const declared = m.requires?.network;
  const network = Array.isArray(declared) ? declared.filter((h): h is string => typeof h === "string") : [];
  const count = Object.keys(folderKinds).concat("settings").reduce((n, k) => n + providedNames(raw, k as AssetKind).length, 0);
  if (count > pluginAssetsMax) r.error(manifestFile, "/provides", t(lang, "decl.manifest.tooManyAssets", { count, limit: pluginAssetsMax }));

  const assets = { tools: new Map<string, HttpTool>(), workflows: new Map<string, Workflow>(), intents: new Map<string, IntentFile>(), prompts: new Map<string, string>(), panels: new Map<string, Panel>(), cards: new Map<string, CardTemplate>() };
  const present = new Map<FolderKind, Set<string>>(Object.keys(folderKinds).map((k) => [k as FolderKind, new Set<string>()]));
  // A plugin naming too many assets is refused on that alone: none of them is read.
  for (const [kind, ext] of count > pluginAssetsMax ? [] : Object.entries(folderKinds) as [FolderKind, string][]) {
    const names = providedNames(raw, kind);
    const inFolder = top.some((e) => e.name === kind && e.folder) ? entries(r, join(dir, kind)) : null;
    if (inFolder === "tooMany") continue;
    const files = inFolder ?? [];
    const found = new Set<string>();
    for (const f of files) {
      const file = join(dir, kind, f.name);
      if (!f.name.endsWith(ext) || f.folder) r.error(file, "", t(lang, "decl.asset.extension", { kind, ext }));
      else if (!names.includes(f.name.slice(0, -ext.length))) r.error(file, "", t(lang, "decl.asset.unnamed", { kind }));
      else found.add(f.name.slice(0, -ext.length));
    }
    present.set(kind, found);
    for (const [i, name] of names.entries()) {
      const rel = `${kind}/${name}${ext}`;
      if (!found.has(name)) {
        r.error(manifestFile, pointer("provides", kind, i), t(lang, "decl.asset.missing", { name, file: rel }));
        continue;
      }
      await r.slicer.breathe();
      if (kind === "prompts") {
        const text = r.text(rel);
        if (text !== null && promptForbidden.test(text)) r.error(join(dir, rel), "", t(lang, "decl.file.control"));
        else if (text !== null) assets.prompts.set(name, text);
        continue;
      }
      const { value } = r.json<never>(rel, validators[validatorOf[kind]] as Validator);
      if (value !== null) (assets[kind] as Map<string, unknown>).set(name, value);
    }
  }

  const settingNames = providedNames(raw, "settings");
  let settings: Setting[] = [];
  const hasSettingsFile = top.some((e) => e.name === "settings.json");
  if (hasSettingsFile) settings = (r.json<SettingsFile>("settings.json", validators.settings as Validator)).value ?? [];
  else if (settingNames.length > 0) r.error(manifestFile, "/provides/settings", t(lang, "decl.settings.missing", { keys: settingNames.join(", ") }));
  checkSettings(r, id, settings, settingNames, hasSettingsFile);

  const secretKeys = new Set(settings.filter((s) => s.type === "secret").map((s) => s.key));
  for (const [name, tool] of assets.tools) {
    const file = join(dir, "tools", `${name}.json`);
    if (tool.name !== name) r.error(file, "/name", t(lang, "decl.asset.name", { name }));
    r.errors.push(...checkToolTemplates(file, tool, network, secretKeys, lang));
    const problem = await schemaProblem(tool.parameters);
    if (problem !== null) r.error(file, "/parameters", t(lang, "decl.tool.parameters", { error: problem }));
  }
  const intents = new Map<string, IntentEntry>();
  for (const [name, list] of assets.intents) {
    const file = join(dir, "intents", `${name}.json`);
    list.forEach((intent, i) => {
      const other = intents.get(intent.id);
      if (other) r.error(file, pointer(i, "id"), t(lang, "decl.intent.duplicate", { id: intent.id, file: other.file }));
      else intents.set(intent.id, { file, intent });
      checkFields(r, file, intent.slots ?? [], [i, "slots"]);
    });
  }
  const provided = (kind: FolderKind, name: string) => present.get(kind)!.has(name) && providedNames(raw, kind).includes(name);
  for (const [name, wf] of assets.workflows) checkWorkflow(r, join(dir, "workflows", `${name}.json`), name, wf, id, provided, intents);
  for (const [name, panel] of assets.panels) {
    const file = join(dir, "panels", `${name}.json`);
    if (panel.id !== name) r.error(file, "/id", t(lang, "decl.asset.name", { name }));
    checkNodes(r, file, panel.body, ["body"]);
  }
  for (const [name, card] of assets.cards) {
    const file = join(dir, "cards", `${name}.json`);
    if (card.kind !== name) r.error(file, "/kind", t(lang, "decl.asset.name", { name }));
    checkNodes(r, file, card.data, ["data"]);
  }
  if (!manifest) return { result: null, raw };
  return {
    raw,
    result: {
      id, dir, origin, digest: "", manifest, tools: assets.tools, workflows: assets.workflows, intents, prompts: assets.prompts,
      panels: assets.panels, cards: assets.cards, settings,
    },
  };
}

/** The generated validator of each folder kind (prompts have none: they are Markdown). */
const validatorOf = { tools: "tool", workflows: "workflow", intents: "intents", panels: "panel", cards: "card" } as const;

/** settings.json against `provides.settings`: the same keys both ways, each once; groups, defaults and options. */
function checkSettings(r: Reading, id: string, settings: Setting[], named: string[], hasFile: boolean): void {
  const { dir, lang } = r;
  const file = join(dir, "settings.json");
  const seen = new Set<string>();
  settings.forEach((s, i) => {
    if (seen.has(s.key)) r.error(file, pointer(i, "key"), t(lang, "decl.settings.duplicate", { key: s.key }));
    seen.add(s.key);
    if (!named.includes(s.key)) r.error(file, pointer(i, "key"), t(lang, "decl.settings.unnamed", { key: s.key }));
    if (s.group !== undefined && s.group !== `plugin:${id}`) r.error(file, pointer(i, "group"), t(lang, "decl.settings.group", { id }));
    if (s.type === "secret" && s.default !== undefined) r.error(file, pointer(i, "default"), t(lang, "decl.settings.secretDefault"));
    if (s.type === "select" && !s.options) r.error(file, pointer(i, "options"), t(lang, "decl.field.options"));
    const want = s.type === "number" ? "number" : s.type === "boolean" ? "boolean" : "string";
    if (s.default !== undefined && s.type !== "secret" && typeof s.default !== want) r.error(file, pointer(i, "default"), t(lang, "decl.settings.defaultType", { type: want }));
  });
  if (!hasFile) return;
  named.forEach((key, i) => {
    if (!seen.has(key)) r.error(join(dir, "plugin.json"), pointer("provides", "settings", i), t(lang, "decl.settings.notDeclared", { key }));
  });
}

/** Form fields (a form node, a hitl step's form, an intent's slots): names once each, options for a select. */
function checkFields(r: Reading, file: string, fields: FormField[], at: (string | number)[]): void {
  const seen = new Set<string>();
  fields.forEach((f, i) => {
    if (seen.has(f.name)) r.error(file, pointer(...at, i, "name"), t(r.lang, "decl.field.duplicate", { what: "field", id: f.name }));
    seen.add(f.name);
    if (f.type === "select" && !f.options) r.error(file, pointer(...at, i, "options"), t(r.lang, "decl.field.options"));
  });
}

/** The UI nodes of a panel or card: form and action ids once each in the file, fields, chart lengths (a case per node type). */
function checkNodes(r: Reading, file: string, nodes: UiNode[], at: (string | number)[]): void {
  const ids = { form: new Set<string>(), action: new Set<string>() };
  const walk = (list: UiNode[], path: (string | number)[]) => list.forEach((n, i) => {
    const here = [...path, i];
    switch (n.type) {
      case "section":
        walk(n.children, [...here, "children"]);
        break;
      case "form":
        if (ids.form.has(n.id)) r.error(file, pointer(...here, "id"), t(r.lang, "decl.field.duplicate", { what: "form", id: n.id }));
        ids.form.add(n.id);
        checkFields(r, file, n.fields, [...here, "fields"]);
        break;
      case "actions":
        n.actions.forEach((a, j) => {
          if (ids.action.has(a.id)) r.error(file, pointer(...here, "actions", j, "id"), t(r.lang, "decl.field.duplicate", { what: "action", id: a.id }));
          ids.action.add(a.id);
        });
        break;
      case "chart-lite":
        if (n.chart.labels.length !== n.chart.series.length) r.error(file, pointer(...here, "chart"), t(r.lang, "decl.chart.lengths"));
        break;
      case "list":
      case "kv":
      case "markdown":
      case "doc-ref":
        break; // the schema says all there is to check
      default:
        // The schema refused every other type; a type of `uiNodeTypes` without its case here fails to compile.
        n satisfies never;
    }
  });
  walk(nodes, at);
}

/** A workflow: its id is its file's name, step ids once each, and every reference resolves. */
function checkWorkflow(
  r: Reading, file: string, name: string, wf: Workflow, id: string, provided: (kind: FolderKind, name: string) => boolean, intents: Map<string, IntentEntry>,
): void {
  const lang = r.lang;
  if (wf.id !== name) r.error(file, "/id", t(lang, "decl.asset.name", { name }));
  if (wf.intentId !== undefined && !intents.has(wf.intentId)) r.error(file, "/intentId", t(lang, "decl.workflow.notProvided", { kind: "intent", name: wf.intentId }));
  const before = new Set<string>();
  wf.steps.forEach((s, i) => {
    const at = (...p: (string | number)[]) => pointer("steps", i, ...p);
    if (before.has(s.id)) r.error(file, at("id"), t(lang, "decl.workflow.duplicateStep", { id: s.id }));
    if (s.type === "prompt") {
      if ((s.prompt === undefined) === (s.promptRef === undefined)) r.error(file, at(), t(lang, "decl.workflow.prompt"));
      if (s.promptRef !== undefined && !provided("prompts", s.promptRef)) r.error(file, at("promptRef"), t(lang, "decl.workflow.notProvided", { kind: "prompt", name: s.promptRef }));
    } else if (s.type === "hitl") {
      if ([s.options, s.form, s.card].filter((x) => x !== undefined).length !== 1) r.error(file, at(), t(lang, "decl.workflow.hitl"));
      if (s.card !== undefined && !provided("cards", s.card)) r.error(file, at("card"), t(lang, "decl.workflow.notProvided", { kind: "card", name: s.card }));
      if (s.form) checkFields(r, file, s.form, ["steps", i, "form"]);
      // continueOn gates on an option (round 55, F55-1): a form's answer is no option, and an entry no option names
      // would never open the gate.
      if (s.continueOn && s.form) r.error(file, at("continueOn"), t(lang, "decl.workflow.continueOnForm"));
      s.continueOn?.forEach((o, k) => {
        if (s.options && !s.options.includes(o)) r.error(file, at("continueOn", k), t(lang, "decl.workflow.continueOnOption", { option: o }));
      });
    } else if (s.type === "tool") {
      const [plugin, tool] = [s.tool.slice(0, s.tool.indexOf(".")), s.tool.slice(s.tool.indexOf(".") + 1)];
      // A tool of another plugin is looked up when the step runs; one of this plugin must be here.
      if (plugin === id && !provided("tools", tool)) r.error(file, at("tool"), t(lang, "decl.workflow.notProvided", { kind: "tool", name: tool }));
    } else if (s.type === "artifact" && !before.has(s.from)) {
      r.error(file, at("from"), t(lang, "decl.workflow.from", { id: s.from }));
    }
    // Placeholders of the texts a step fills when it runs (src/worker/workflow.ts): each must name something then.
    const texts: [string, string][] = s.type === "prompt" ? [["prompt", s.prompt ?? ""]] : s.type === "hitl" ? [["text", s.text ?? ""]] : [];
    if (s.type === "tool") walkStrings(s.args ?? {}, pointer("steps", i, "args"), (text, where) => texts.push([where, text]));
    for (const [where, text] of texts) {
      for (const m of text.matchAll(/\{\{([^{}]*)\}\}/g)) {
        const [kind, name] = [m[1]!.trim().slice(0, m[1]!.trim().indexOf(".")), m[1]!.trim().slice(m[1]!.trim().indexOf(".") + 1)];
        const fine = kind === "event" ? workflowEventFields.includes(name) : kind === "steps" ? before.has(name) : kind === "slots" && /^[A-Za-z_][A-Za-z0-9_]*$/.test(name);
        if (!fine) r.error(file, where.startsWith("/") ? where : at(where), t(lang, "decl.workflow.placeholder", { placeholder: m[0] }));
      }
    }
    before.add(s.id);
  });
}

/** The fields of the start event a workflow's templates may name (`{{event.<field>}}`). */
const workflowEventFields = ["source", "type", "subject", "summary", "detail", "link"];

/** Calls `f` with every string inside `v` and its JSON pointer (from `at`). */
function walkStrings(v: unknown, at: string, f: (text: string, where: string) => void): void {
  if (typeof v === "string") f(v, at);
  else if (Array.isArray(v)) v.forEach((x, i) => walkStrings(x, `${at}/${i}`, f));
  else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) walkStrings(x, `${at}/${pointerSegment(k)}`, f);
}

let checker: Promise<import("ajv/dist/2020.js").Ajv2020> | null = null;

/**
 * Whether a tool's `parameters` is a JSON Schema (2020-12) by the meta-schema: null when it is, else Ajv's reason.
 * Checked against the meta-schema, not compiled (compiling hundreds of tools' schemas would slow every reload down):
 * the tool host compiles a schema at its tool's first call, and a schema that still cannot compile refuses that call.
 */
async function schemaProblem(schema: Record<string, unknown>): Promise<string | null> {
  // Ajv loads only when a plugin has tools (a hub without declarative tools never loads it).
  // Its meta-schema's validator is precompiled (protocol/meta-schemas.ts).
  checker ??= Promise.all([import("ajv/dist/2020.js"), import("../protocol/meta-schemas.js")])
    .then(([{ Ajv2020 }, meta]) => meta.usePrecompiledMetaSchemas(new Ajv2020({ strict: false, allErrors: false })));
  const ajv = await checker;
  return ajv.validateSchema(schema) ? null : `schema is invalid: ${ajv.errorsText(ajv.errors, { separator: ", " })}`;
}
