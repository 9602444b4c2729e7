/**
 * Loading declarative plugins fail-closed (issue 18; spec declarative-plugins.md §1–§2): the example plugin loads with
 * every asset; each fail-closed case of the contract — a missing asset, an asset not named, invalid JSON, an unknown
 * field or UI node type, a wrong id or apiVersion — and each check the schemas cannot make refuses the whole plugin
 * with every error (file, JSON pointer, reason); a refused new version leaves the old one registered; the named limits
 * hold; the published schema files are what the loader validates with and accept the example.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { execFileSync, spawn } from "node:child_process";
import { join } from "node:path";
import Ajv2020Module from "ajv/dist/2020.js";
import { DeclarativeCatalog, declarativeLimits, type DeclarativeRoot } from "../src/declarative/index.js";
import { pluginRoots } from "../src/plugins/index.js";
import { pluginSchemaDocument, pluginSchemaFiles, type PluginSchemaFile } from "../src/protocol/plugin-schemas.js";
import { pluginValidatorsModule } from "../scripts/validators.js";
import { copyExample, editJson, examplePlugin, minimalManifest, writeFiles } from "./declarative-helpers.js";
import { engine, removeAfterKill, tempDir, until } from "./helpers.js";

const Ajv2020 = ((Ajv2020Module as unknown as { default?: unknown }).default ?? Ajv2020Module) as typeof Ajv2020Module.default;

/** A catalog of one root `dir`. */
function catalog(dir: string, origin: DeclarativeRoot["origin"] = "home", log?: (l: string) => void): DeclarativeCatalog {
  return new DeclarativeCatalog({ roots: [{ dir, origin }], lang: "en", log });
}

/**
 * The errors of the example plugin after `edit` (given its folder), with the root's path left out of each, or [] when
 * it loads.
 */
async function errorsAfter(edit: (dir: string) => void, id = "example"): Promise<string[]> {
  const root = tempDir("aa-decl-");
  try {
    const dir = copyExample(root, id);
    edit(dir);
    const report = await catalog(root).reload();
    assert.deepEqual([report.loaded, report.replaced, report.unloaded], [report.rejected.length > 0 ? [] : [id], [], []]);
    return (report.rejected[0]?.errors ?? []).map((e) => e.split(`${root}/`).join(""));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

test("the example plugin loads with every asset by name", async () => {
  const root = tempDir("aa-decl-");
  try {
    copyExample(root);
    const c = catalog(root);
    assert.deepEqual(await c.reload(), { loaded: ["example"], replaced: [], unloaded: [], rejected: [] });
    const p = c.get("example")!;
    assert.deepEqual(
      [[...p.tools.keys()], [...p.workflows.keys()], [...p.intents.keys()], [...p.prompts.keys()], [...p.panels.keys()], [...p.cards.keys()], p.settings.map((s) => s.key)],
      [["http_fetch", "github_issue"], ["triage"], ["ask"], ["writer"], ["main"], ["note"], ["token", "repo"]],
    );
    assert.deepEqual([p.id, p.origin, p.manifest.apiVersion, p.dir], ["example", "home", "1.0", join(root, "example")]);
    assert.match(p.digest, /^[0-9a-f]{64}$/);
    assert.equal(p.prompts.get("writer"), readFileSync(join(examplePlugin, "prompts", "writer.md"), "utf8"));
    // The panel uses every node type of the vocabulary.
    const types = new Set<string>();
    const walk = (nodes: { type: string; children?: unknown[] }[]) => nodes.forEach((n) => { types.add(n.type); if (n.children) walk(n.children as never); });
    walk(p.panels.get("main")!.body);
    assert.deepEqual([...types].sort(), ["actions", "chart-lite", "doc-ref", "form", "kv", "list", "markdown", "section"]);
    assert.deepEqual(p.workflows.get("triage")!.steps.map((s) => s.type), ["tool", "prompt", "hitl", "artifact"]);
    // A reload of an unchanged folder changes nothing.
    assert.deepEqual(await c.reload(), { loaded: [], replaced: [], unloaded: [], rejected: [] });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("every fail-closed case of the contract refuses the whole plugin, with every error at once", async () => {
  const errors = await errorsAfter((dir) => {
    editJson(dir, "plugin.json", (m) => ({ ...m, id: "other", apiVersion: "2.0", colour: "blue", provides: { ...m.provides, tools: [...m.provides.tools, "gone"] } }));
    writeFiles(dir, { "tools/extra.json": {}, "workflows/triage.json": '{ "id": "triage",\n  "steps": [ }' });
    editJson(dir, "panels/main.json", (p) => ({ ...p, body: [{ type: "iframe", src: "https://evil.example" }, ...p.body.slice(1)] }));
    editJson(dir, "tools/http_fetch.json", (t) => ({ ...t, retries: 3 }));
  });
  assert.deepEqual(errors, [
    "example/plugin.json#/colour: unknown field",
    "example/plugin.json#/id: must equal the folder's name example",
    "example/plugin.json#/apiVersion: 2.0 is outside this host's window 1.x",
    "example/tools/extra.json: is not named in provides.tools",
    "example/tools/http_fetch.json#/retries: unknown field",
    "example/plugin.json#/provides/tools/2: names gone, but tools/gone.json does not exist",
    "example/workflows/triage.json: is not valid JSON (line 2, column 14)",
    "example/panels/main.json#/body/0/type: unknown type \"iframe\" (known: section, list, kv, form, markdown, doc-ref, actions, chart-lite)",
  ]);
});

/** One case: what is done to the example, and the one error it must give. */
const cases: [string, (dir: string) => void, string[]][] = [
  ["apiVersion without a minor", (d) => editJson(d, "plugin.json", (m) => ({ ...m, apiVersion: "1" })), ["example/plugin.json#/apiVersion: wrong format, expected <major>.<minor>, e.g. 1.0"]],
  ["a missing plugin.json field", (d) => editJson(d, "plugin.json", (m) => ({ ...m, version: undefined })), ["example/plugin.json#/version: required"]],
  ["a network entry that is no host", (d) => editJson(d, "plugin.json", (m) => ({ ...m, requires: { network: ["https://x.example/"] } })), [
    "example/plugin.json#/requires/network/0: wrong format, expected a host name, *.domain, or an address, each with an optional :port",
    "example/tools/github_issue.json#/http/url: host api.github.com is not in requires.network",
  ]],
  ["an asset name with a dot", (d) => editJson(d, "plugin.json", (m) => ({ ...m, provides: { ...m.provides, prompts: ["writer", "a.b"] } })), [
    "example/plugin.json#/provides/prompts/1: wrong format, expected letters, digits, _ and -",
  ]],
  ["a file of the wrong kind in an asset folder", (d) => writeFiles(d, { "prompts/notes.txt": "x" }), ["example/prompts/notes.txt: prompts/ holds only *.md files"]],
  ["a folder inside an asset folder", (d) => mkdirSync(join(d, "panels", "more")), ["example/panels/more: panels/ holds only *.json files"]],
  ["an unknown folder", (d) => mkdirSync(join(d, "tool")), ["example/tool: unknown folder (a declarative plugin's folders are tools, workflows, intents, prompts, panels and cards)"]],
  ["a tool plugin's manifest too", (d) => writeFiles(d, { "manifest.toml": 'name = "example"' }), ["example/manifest.toml: the folder also holds a tool plugin's manifest.toml: a folder is one kind of plugin"]],
  ["a symbolic link as an asset", (d) => { rmSync(join(d, "prompts", "writer.md")); symlinkSync("/etc/hostname", join(d, "prompts", "writer.md")); }, [
    "example/prompts/writer.md: is a symbolic link: files inside a plugin are not followed through links",
  ]],
  ["a file over the size limit", (d) => writeFiles(d, { "prompts/writer.md": "x".repeat(declarativeLimits.pluginFileMaxBytes + 1) }), [
    `example/prompts/writer.md: is larger than ${declarativeLimits.pluginFileMaxBytes} bytes`,
  ]],
  ["JSON nested too deep", (d) => writeFiles(d, { "cards/note.json": `${"[".repeat(40)}${"]".repeat(40)}` }), [`example/cards/note.json: is nested deeper than ${declarativeLimits.pluginJsonDepthMax} levels`]],
  ["a file that is not UTF-8", (d) => writeFileSync(join(d, "prompts", "writer.md"), Buffer.from([0x68, 0xff, 0x69])), ["example/prompts/writer.md: is not UTF-8 text"]],
  ["a prompt with a control character", (d) => writeFiles(d, { "prompts/writer.md": "Hi\u001b[2J there" }), ["example/prompts/writer.md: holds control characters (only line breaks and tabs are allowed)"]],
  ["an unknown field of a UI node", (d) => editJson(d, "cards/note.json", (c) => ({ ...c, data: [{ type: "markdown", markdown: "x", html: "<b>x</b>" }] })), ["example/cards/note.json#/data/0/html: unknown field"]],
  ["an unknown node inside a section", (d) => editJson(d, "panels/main.json", (p) => ({ ...p, body: [{ type: "section", children: [{ type: "script", code: "x" }] }] })), [
    "example/panels/main.json#/body/0/children/0/type: unknown type \"script\" (known: section, list, kv, form, markdown, doc-ref, actions, chart-lite)",
  ]],
  ["a kv row of three", (d) => editJson(d, "panels/main.json", (p) => ({ ...p, body: [{ type: "kv", kv: [["a", "b", "c"]] }] })), ["example/panels/main.json#/body/0/kv/0: at most 2 items"]],
  ["a chart whose labels and series differ", (d) => editJson(d, "panels/main.json", (p) => ({ ...p, body: [{ type: "chart-lite", chart: { kind: "bar", labels: ["a"], series: [1, 2] } }] })), [
    "example/panels/main.json#/body/0/chart: labels and series must be as long as each other",
  ]],
  ["two actions with one id", (d) => editJson(d, "cards/note.json", (c) => ({ ...c, data: [{ type: "actions", actions: [{ id: "a", label: "A" }, { id: "a", label: "B" }] }] })), [
    "example/cards/note.json#/data/0/actions/1/id: action a appears twice in this file",
  ]],
  ["a select without options", (d) => editJson(d, "intents/ask.json", (l) => [{ ...l[0], slots: [{ name: "x", label: "X", type: "select" }] }]), ["example/intents/ask.json#/0/slots/0/options: a select needs options"]],
  ["a panel whose id is not its file's name", (d) => editJson(d, "panels/main.json", (p) => ({ ...p, id: "other" })), ["example/panels/main.json#/id: must equal the file's name main"]],
  ["a card whose kind is not its file's name", (d) => editJson(d, "cards/note.json", (c) => ({ ...c, kind: "other" })), ["example/cards/note.json#/kind: must equal the file's name note"]],
  ["a tool whose name is not its file's name", (d) => editJson(d, "tools/http_fetch.json", (t) => ({ ...t, name: "fetch" })), ["example/tools/http_fetch.json#/name: must equal the file's name http_fetch"]],
  ["a settings key not in provides", (d) => editJson(d, "settings.json", (s) => [...s, { key: "extra", label: "Extra", type: "string" }]), ["example/settings.json#/2/key: setting extra is not named in provides.settings"]],
  ["a provided setting settings.json lacks", (d) => editJson(d, "plugin.json", (m) => ({ ...m, provides: { ...m.provides, settings: ["token", "repo", "more"] } })), [
    "example/plugin.json#/provides/settings/2: settings.json declares no setting more",
  ]],
  ["settings named but no settings.json", (d) => rmSync(join(d, "settings.json")), [
    "example/plugin.json#/provides/settings: provides.settings names token, repo, but there is no settings.json",
    "example/tools/github_issue.json#/http/authRef: setting token is not a secret setting of this plugin",
  ]],
  ["a secret with a default", (d) => editJson(d, "settings.json", (s) => [{ ...s[0], default: "abc" }, s[1]]), ["example/settings.json#/0/default: a secret setting has no default"]],
  ["an intent id twice", (d) => writeFiles(d, { "intents/ask.json": [{ id: "ask", includes_any: ["a"] }, { id: "ask", includes_any: ["b"] }] }), [
    "example/intents/ask.json#/1/id: intent id ask is also in " + "example/intents/ask.json",
  ]],
  ["a workflow step of an unknown type", (d) => editJson(d, "workflows/triage.json", (w) => ({ ...w, steps: [{ id: "x", type: "shell", run: "rm -rf /" }] })), [
    "example/workflows/triage.json#/steps/0/type: unknown type \"shell\" (known: prompt, tool, hitl, artifact)",
  ]],
  ["workflow references that do not resolve", (d) => editJson(d, "workflows/triage.json", (w) => ({
    ...w, intentId: "nope",
    steps: [
      { id: "a", type: "prompt", promptRef: "nope" },
      { id: "a", type: "hitl", card: "nope" },
      { id: "b", type: "tool", tool: "example.nope" },
      { id: "c", type: "artifact", from: "d", file: "out.md" },
      { id: "d", type: "prompt" },
      { id: "e", type: "hitl", options: ["x"], card: "note" },
    ],
  })), [
    "example/workflows/triage.json#/intentId: this plugin provides no intent nope",
    "example/workflows/triage.json#/steps/0/promptRef: this plugin provides no prompt nope",
    "example/workflows/triage.json#/steps/1/id: step id a is used twice",
    "example/workflows/triage.json#/steps/1/card: this plugin provides no card nope",
    "example/workflows/triage.json#/steps/2/tool: this plugin provides no tool nope",
    "example/workflows/triage.json#/steps/3/from: step d does not come before it",
    "example/workflows/triage.json#/steps/4: a prompt step needs prompt or promptRef (one of them)",
    "example/workflows/triage.json#/steps/5: a hitl step needs one of options, form or card",
  ]],
  // Issue 26 round 55, F55-1 (reported case: a form step with continueOn answered "NO" went on to the tool step).
  ["continueOn beside a form, and one no option names", (d) => editJson(d, "workflows/triage.json", (w) => ({
    ...w,
    steps: [
      { id: "a", type: "hitl", form: [{ name: "ok", label: "Send?" }], continueOn: ["Send"] },
      { id: "b", type: "hitl", options: ["Send", "Cancel"], continueOn: ["Send", "send"] },
    ],
  })), [
    "example/workflows/triage.json#/steps/0/continueOn: continueOn is for options or a card: a form's answer is no option, so a form step with continueOn would never go on",
    "example/workflows/triage.json#/steps/1/continueOn/1: \"send\" is not one of this step's options",
  ]],
  ["placeholders that name nothing when the step runs", (d) => editJson(d, "workflows/triage.json", (w) => ({
    ...w,
    steps: [
      { id: "a", type: "prompt", prompt: "{{steps.b}} {{event.summary}} {{slots.topic}} {{param.x}} {{ event.body }}" },
      { id: "b", type: "tool", tool: "example.http_fetch", args: { url: "{{steps.a}}", deep: [{ "x/y": "{{steps.b}}" }] } },
      { id: "c", type: "hitl", text: "{{steps.c}}", options: ["ok"] },
    ],
  })), [
    "example/workflows/triage.json#/steps/0/prompt: {{steps.b}} names nothing: only {{event.<source|type|subject|summary|detail|link>}}, {{steps.<id>}} of an earlier step, {{slots.<name>}}",
    "example/workflows/triage.json#/steps/0/prompt: {{param.x}} names nothing: only {{event.<source|type|subject|summary|detail|link>}}, {{steps.<id>}} of an earlier step, {{slots.<name>}}",
    "example/workflows/triage.json#/steps/0/prompt: {{ event.body }} names nothing: only {{event.<source|type|subject|summary|detail|link>}}, {{steps.<id>}} of an earlier step, {{slots.<name>}}",
    "example/workflows/triage.json#/steps/1/args/deep/0/x~1y: {{steps.b}} names nothing: only {{event.<source|type|subject|summary|detail|link>}}, {{steps.<id>}} of an earlier step, {{slots.<name>}}",
    "example/workflows/triage.json#/steps/2/text: {{steps.c}} names nothing: only {{event.<source|type|subject|summary|detail|link>}}, {{steps.<id>}} of an earlier step, {{slots.<name>}}",
  ]],
  ["an artifact file with a folder", (d) => editJson(d, "workflows/triage.json", (w) => ({ ...w, steps: [{ id: "a", type: "prompt", prompt: "x" }, { id: "b", type: "artifact", from: "a", file: "../x.md" }] })), [
    "example/workflows/triage.json#/steps/1/file: wrong format, expected a file name: letters, digits, _ . -, no folder",
  ]],
];

for (const [name, edit, expected] of cases) {
  test(`refused: ${name}`, async () => {
    assert.deepEqual(await errorsAfter(edit), expected);
  });
}

/** HTTP tool templates: what is refused when the plugin loads. */
const tool = (http: Record<string, unknown>, properties: Record<string, unknown> = { q: { type: "string" } }) => (d: string) =>
  editJson(d, "tools/http_fetch.json", (t) => ({ ...t, parameters: { type: "object", properties }, http }));
const templateCases: [string, (dir: string) => void, string[]][] = [
  ["a placeholder in the host", tool({ url: "https://{{param.q}}.example.com/x" }), ["example/tools/http_fetch.json#/http/url: a placeholder may be the whole url, or stand in its path, query or fragment; never in its scheme or host"]],
  ["a placeholder after the host's name", tool({ url: "http://127.0.0.1{{param.q}}/x" }), ["example/tools/http_fetch.json#/http/url: a placeholder may be the whole url, or stand in its path, query or fragment; never in its scheme or host"]],
  ["a url that is not absolute", tool({ url: "/api/{{param.q}}" }), ["example/tools/http_fetch.json#/http/url: must be an absolute http:// or https:// URL"]],
  ["a file: url", tool({ url: "file:///etc/passwd" }), ["example/tools/http_fetch.json#/http/url: must be an absolute http:// or https:// URL"]],
  ["a user name in the url", tool({ url: "http://me@127.0.0.1/x" }), ["example/tools/http_fetch.json#/http/url: a URL holds no user name or password (use authRef)"]],
  ["an undeclared literal host", tool({ url: "https://evil.example/x?q={{param.q}}" }), ["example/tools/http_fetch.json#/http/url: host evil.example is not in requires.network"]],
  ["an expression", tool({ url: "http://127.0.0.1/{{param.q.toUpperCase()}}" }), [
    "example/tools/http_fetch.json#/http/url: {{param.q.toUpperCase()}} is not a placeholder this host knows: only {{param.<name>}} (and {{auth}} in a header value)",
  ]],
  ["a parameter that is not declared", tool({ url: "http://127.0.0.1/{{param.other}}" }), ["example/tools/http_fetch.json#/http/url: {{param.other}} names no property of parameters.properties"]],
  ["the credential in the url", tool({ url: "http://127.0.0.1/{{auth}}", authRef: "token" }), ["example/tools/http_fetch.json#/http/url: {{auth}} may only stand in a header value"]],
  ["the credential in the body", tool({ method: "POST", url: "http://127.0.0.1/", authRef: "token", body: { k: "{{auth}}" } }), ["example/tools/http_fetch.json#/http/body/k: {{auth}} may only stand in a header value"]],
  ["the credential without authRef", tool({ url: "http://127.0.0.1/", headers: { "X-Key": "{{auth}}" } }), ["example/tools/http_fetch.json#/http: uses {{auth}} but there is no http.authRef"]],
  ["authRef of a setting that is not a secret", tool({ url: "http://127.0.0.1/", authRef: "repo" }), ["example/tools/http_fetch.json#/http/authRef: setting repo is not a secret setting of this plugin"]],
  ["an Authorization header beside authRef", tool({ url: "http://127.0.0.1/", authRef: "token", headers: { Authorization: "Basic x" } }), [
    "example/tools/http_fetch.json#/http/headers/Authorization: with authRef the credential goes in Authorization: Bearer; a header named Authorization must say where with {{auth}}",
  ]],
  ["a header the host sets", tool({ url: "http://127.0.0.1/", headers: { Host: "evil.example", "Content-Length": "1" } }), [
    "example/tools/http_fetch.json#/http/headers/Host: header Host is set by the host",
    "example/tools/http_fetch.json#/http/headers/Content-Length: header Content-Length is set by the host",
  ]],
  ["a header name that is no token", tool({ url: "http://127.0.0.1/", headers: { "X A": "1" } }), ["example/tools/http_fetch.json#/http/headers/X A: wrong format, expected an HTTP header name"]],
  ["a placeholder in a body key", tool({ method: "POST", url: "http://127.0.0.1/", body: { "{{param.q}}": 1 } }), ["example/tools/http_fetch.json#/http/body/{{param.q}}: a name holds no placeholder"]],
  ["a body on a GET", tool({ url: "http://127.0.0.1/", body: { a: 1 } }), ["example/tools/http_fetch.json#/http/body: a GET request has no body"]],
  ["a resultPath that is no path", tool({ url: "http://127.0.0.1/", resultPath: "data..items" }), [
    "example/tools/http_fetch.json#/http/resultPath: wrong format, expected a dot path with array indexes, e.g. data.items[0].name",
  ]],
  ["a timeout over the limit", tool({ url: "http://127.0.0.1/", timeoutMs: 300_001 }), ["example/tools/http_fetch.json#/http/timeoutMs: must be at most 300000"]],
  ["parameters that are not a usable schema", tool({ url: "http://127.0.0.1/" }, { q: { type: "strin" } }), [
    "example/tools/http_fetch.json#/parameters: not a usable JSON Schema: schema is invalid: data/properties/q/type must be equal to one of the allowed values, data/properties/q/type must be array, data/properties/q/type must match a schema in anyOf",
  ]],
];
for (const [name, edit, expected] of templateCases) {
  test(`refused HTTP tool: ${name}`, async () => {
    assert.deepEqual(await errorsAfter(edit), expected);
  });
}

test("apiVersion 1.x of any minor loads; a plugin with no assets loads", async () => {
  assert.deepEqual(await errorsAfter((d) => editJson(d, "plugin.json", (m) => ({ ...m, apiVersion: "1.7" }))), []);
  const root = tempDir("aa-decl-");
  try {
    writeFiles(join(root, "bare"), { "plugin.json": minimalManifest("bare"), "README.md": "notes", "icon.png": "x" });
    assert.deepEqual(await catalog(root).reload(), { loaded: ["bare"], replaced: [], unloaded: [], rejected: [] });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("a plugin naming more assets than the limit is refused without reading them", async () => {
  const many = Array.from({ length: declarativeLimits.pluginAssetsMax + 1 }, (_, i) => `p${i}`);
  assert.deepEqual(await errorsAfter((d) => editJson(d, "plugin.json", (m) => ({ ...m, provides: { ...m.provides, prompts: many.slice(0, 200), panels: many.slice(200) } }))), [
    `example/plugin.json#/provides: names ${many.length + 7} assets together; at most ${declarativeLimits.pluginAssetsMax}`,
  ]);
});

test("a folder holding more entries than pluginFolderEntriesMax is refused as a whole, its entries not looked at one by one", async () => {
  // Tens of thousands of files once made every reload, and every look of the watcher (each 500 ms), stat them all in one
  // go: the hub answered nothing for seconds at a time. Such a folder can never be valid (provides names at most
  // pluginAssetsMax), so it is refused on its count.
  const max = declarativeLimits.pluginFolderEntriesMax;
  assert.equal(typeof max, "number");
  const files = (prefix: string) => Object.fromEntries(Array.from({ length: max + 1 }, (_, i) => [`${prefix}x${i}.json`, "{}"]));
  assert.deepEqual(await errorsAfter((d) => writeFiles(d, files("cards/"))), [`example/cards: holds more than ${max} entries; not read`]);
  assert.deepEqual(await errorsAfter((d) => writeFiles(d, files(""))), [`example: holds more than ${max} entries; not read`]);
  const root = tempDir("aa-decl-");
  try {
    copyExample(root);
    const c = catalog(root);
    await c.reload();
    const before = await c.fingerprint();
    writeFiles(join(root, "example"), files("cards/"));
    // The watcher still sees the change (the folder's own times), without a line per file.
    const after = await c.fingerprint();
    assert.notEqual(after, before);
    assert.equal(after.split("\n").length < max, true);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("a file swapped for a FIFO or a link between its check and its opening is refused, never waited on nor followed (a tool plugin's manifest: never waited on)", async () => {
  // Another process swaps the asset, over and over, between a file, a FIFO and a link to a file outside the plugin,
  // while a reader (a process of its own: a read that blocks would hold it for good) reads it. The check and the open
  // were two steps: the open could meet a FIFO and wait forever for a writer (the hub's event loop with it), or follow a
  // link out of the plugin.
  const dir = tempDir("aa-decl-race-");
  const outside = join(dir, "outside.txt");
  writeFileSync(outside, "OUTSIDE");
  writeFileSync(join(dir, "file"), "{}");
  const swapper = spawn(process.execPath, ["-e", `
    const fs = require("node:fs"), { execFileSync } = require("node:child_process"), d = ${JSON.stringify(dir)};
    execFileSync("mkfifo", [d + "/fifo"]);
    for (;;) {
      fs.linkSync(d + "/file", d + "/p.tmp"); fs.renameSync(d + "/p.tmp", d + "/p.json");
      fs.linkSync(d + "/fifo", d + "/p.tmp"); fs.renameSync(d + "/p.tmp", d + "/p.json");
      fs.symlinkSync(${JSON.stringify(outside)}, d + "/p.tmp"); fs.renameSync(d + "/p.tmp", d + "/p.json");
    }`], { stdio: "ignore" });
  try {
    await until(() => existsSync(join(dir, "p.json")), 10_000, "the swapper's first file");
    const reader = spawn(process.execPath, ["--import", "tsx", "-e", `
      Promise.all([import("${join(engine, "src", "declarative", "read.ts")}"), import("${join(engine, "src", "plugins", "files.ts")}")]).then(([{ readPluginFile }, { readBounded }]) => {
        const seen = {};
        for (let i = 0; i < 30000; i++) {
          const r = readPluginFile(${JSON.stringify(join(dir, "p.json"))}, "en");
          const k = r.ok ? r.text : r.reason.split(":")[0];
          seen[k] = 1;
          // A tool plugin's manifest is read the same way (its links are followed: only waiting is wrong there).
          try { readBounded(${JSON.stringify(join(dir, "p.json"))}, 100); } catch {}
        }
        console.log(JSON.stringify(Object.keys(seen).sort()));
      });`], { cwd: engine, stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    reader.stdout.on("data", (c: Buffer) => (out += c.toString()));
    // Generous: 30,000 reads take about a second; a reader stuck on a FIFO never ends.
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => reader.kill("SIGKILL"), 60_000);
      reader.on("exit", (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    assert.equal(code, 0, "the reader ended (it was stuck opening a FIFO)");
    const seen = JSON.parse(out) as string[];
    assert.equal(seen.includes("OUTSIDE"), false, "a link out of the plugin was followed");
    assert.equal(seen.includes("{}"), true);
  } finally {
    swapper.kill("SIGKILL");
    removeAfterKill(dir);
  }
});

test("a key given twice in any JSON file of a plugin refuses it, naming the key (issue 26, finding 9)", async () => {
  // The reported case: `requires.network` given twice in plugin.json, the later one (the hub's own address) silently
  // winning over the one a reader of the file sees first. Varied: the same key written with an escape, a key twice
  // inside a nested object of a tool file, and in an object inside an array of a workflow.
  const replace = (file: string, from: string, to: string) => (dir: string) => {
    const text = readFileSync(join(dir, file), "utf8");
    assert.ok(text.includes(from), `${file} has ${from}`);
    writeFileSync(join(dir, file), text.replace(from, to));
  };
  // plugin.json cannot be used at all then (as when it is not JSON): each asset it names is also "not named".
  const notNamed = [
    "example/tools/github_issue.json: is not named in provides.tools", "example/tools/http_fetch.json: is not named in provides.tools",
    "example/workflows/triage.json: is not named in provides.workflows", "example/intents/ask.json: is not named in provides.intents",
    "example/prompts/writer.md: is not named in provides.prompts", "example/panels/main.json: is not named in provides.panels",
    "example/cards/note.json: is not named in provides.cards", "example/settings.json#/0/key: setting token is not named in provides.settings",
    "example/settings.json#/1/key: setting repo is not named in provides.settings",
  ];
  assert.deepEqual(await errorsAfter(replace("plugin.json", '"network": ["127.0.0.1", "localhost", "api.github.com"]', '"network": ["api.github.com"], "network": ["127.0.0.1"]')),
    ["example/plugin.json#/requires/network: given twice (line 8, column 59)", ...notNamed]);
  assert.deepEqual(await errorsAfter(replace("plugin.json", '"name": "Example",', '"name": "Example", "\\u006eame": "Other",')),
    ["example/plugin.json#/name: given twice (line 4, column 35)", ...notNamed]);
  assert.deepEqual(await errorsAfter(replace(join("tools", "http_fetch.json"), '"method": "GET",', '"method": "GET", "method": "POST",')),
    ["example/tools/http_fetch.json#/http/method: given twice (line 7, column 32)"]);
  assert.deepEqual(await errorsAfter(replace(join("workflows", "triage.json"), '"type": "tool", "tool"', '"type": "tool", "type": "prompt", "tool"')),
    ["example/workflows/triage.json#/steps/0/type: given twice (line 7, column 46)"]);
});

test("a plugin.json that is a FIFO, a folder or a dangling link is listed rejected, not skipped in silence (issue 26, finding 9)", async () => {
  const root = tempDir("aa-decl-");
  try {
    mkdirSync(join(root, "fifo"));
    execFileSync("mkfifo", [join(root, "fifo", "plugin.json")]);
    mkdirSync(join(root, "folder", "plugin.json"), { recursive: true });
    mkdirSync(join(root, "dangling"));
    symlinkSync(join(root, "nowhere.json"), join(root, "dangling", "plugin.json"));
    // A settings.json that is a folder: refused once, on reading, not also as an unknown folder.
    mkdirSync(join(root, "settings"));
    writeFileSync(join(root, "settings", "plugin.json"), JSON.stringify({ id: "settings", name: "S", version: "1.0.0", apiVersion: "1.0" }));
    mkdirSync(join(root, "settings", "settings.json"));
    mkdirSync(join(root, "none")); // no plugin.json at all: not a declarative plugin, passed over
    writeFileSync(join(root, "none", "manifest.toml"), "");
    const report = await catalog(root).reload();
    assert.deepEqual(report.loaded, []);
    assert.deepEqual(report.rejected.map((r) => [r.id, r.errors.map((e) => e.split(`${root}/`).join(""))]), [
      ["dangling", ["dangling/plugin.json: is a symbolic link: files inside a plugin are not followed through links"]],
      ["fifo", ["fifo/plugin.json: is not a regular file"]],
      ["folder", ["folder/plugin.json: is not a regular file"]],
      ["settings", ["settings/settings.json: is not a regular file"]],
    ]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("a folder name with a line break or a direction override cannot forge or reorder lines of the start log", async () => {
  const root = tempDir("aa-decl-");
  try {
    for (const id of ["evil\ndeclarative plugin bank: loaded", "rtl\u202egpj.exe"]) writeFiles(join(root, id), { "plugin.json": minimalManifest(id) });
    const lines: string[] = [];
    const report = await catalog(root, "home", (l) => lines.push(l)).reload();
    assert.equal(report.rejected.length, 2);
    assert.equal(lines.length > 0, true);
    for (const line of lines) assert.doesNotMatch(line, /[\n\r\u202e]/u, line);
    assert.equal(lines.some((l) => l.includes("evil\\u{a}declarative plugin bank")), true, lines.join("|"));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("a plugin with more errors than the limit lists that many and counts the rest", async () => {
  const errors = await errorsAfter((d) => writeFiles(d, Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`cards/x${i}.json`, "{}"]))));
  assert.equal(errors.length, declarativeLimits.pluginErrorsMax + 1);
  assert.equal(errors.at(-1), "example: and 50 more errors");
});

test("a refused new version leaves the old one registered; fixing it replaces it; removing it unloads it", async () => {
  const root = tempDir("aa-decl-");
  const logs: string[] = [];
  try {
    const dir = copyExample(root);
    const c = catalog(root, "home", (l) => logs.push(l.split(`${root}/`).join("")));
    await c.reload();
    const first = c.get("example")!;
    editJson(dir, "tools/http_fetch.json", (t) => ({ ...t, description: 7 }));
    assert.deepEqual(await c.reload(), {
      loaded: [], replaced: [], unloaded: [], rejected: [{ id: "example", errors: [`${dir}/tools/http_fetch.json#/description: must be string`] }],
    });
    assert.equal(c.get("example"), first, "the previous version stays registered");
    assert.deepEqual(c.list().map((r) => [r.id, r.status, r.errors.length, r.current === first]), [["example", "rejected", 1, true]]);
    editJson(dir, "tools/http_fetch.json", (t) => ({ ...t, description: "Fetch" }));
    assert.deepEqual(await c.reload(), { loaded: [], replaced: ["example"], unloaded: [], rejected: [] });
    assert.equal(c.get("example")!.tools.get("http_fetch")!.description, "Fetch");
    rmSync(dir, { recursive: true });
    assert.deepEqual(await c.reload(), { loaded: [], replaced: [], unloaded: ["example"], rejected: [] });
    assert.equal(c.get("example"), null);
    assert.deepEqual(c.list(), []);
    assert.deepEqual(logs, [
      "declarative plugin example: loaded (example)",
      "declarative plugin example: refused (1 errors); its previous version stays in use",
      "  example/tools/http_fetch.json#/description: must be string",
      "declarative plugin example: replaced (example)",
      "declarative plugin example: unloaded",
    ]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("roots: the home and serve --plugins folders load; the same id twice: the later root wins, the other is shadowed and the clash reported", async () => {
  const home = tempDir("aa-decl-home-");
  const extra = tempDir("aa-decl-serve-");
  const builtin = tempDir("aa-decl-builtin-");
  try {
    writeFiles(join(home, "shared"), { "plugin.json": minimalManifest("shared") });
    writeFiles(join(extra, "shared"), { "plugin.json": minimalManifest("shared") });
    writeFiles(join(extra, "own"), { "plugin.json": minimalManifest("own") });
    writeFiles(join(builtin, "own"), { "plugin.json": minimalManifest("own", { name: "built in" }) });
    // A broken copy of a later root does not win over a usable one (usable first), and is refused with why.
    writeFiles(join(extra, "kept"), { "plugin.json": "{" });
    writeFiles(join(home, "kept"), { "plugin.json": minimalManifest("kept") });
    writeFiles(join(home, "tool-only"), { "manifest.toml": 'name = "tool-only"' });
    const c = new DeclarativeCatalog({ roots: [{ dir: builtin, origin: "builtin" }, { dir: home, origin: "home" }, { dir: extra, origin: "serve" }], lang: "en" });
    assert.deepEqual(await c.reload(), {
      loaded: ["kept", "own", "shared"], replaced: [], unloaded: [],
      rejected: [{ id: "kept", errors: [`${extra}/kept/plugin.json: is not valid JSON (line 1, column 2)`] }],
    });
    assert.deepEqual(c.list().map((r) => [r.id, r.origin, r.status, r.shadowedBy?.origin ?? null]), [
      ["kept", "home", "loaded", null], ["own", "serve", "loaded", null], ["shared", "serve", "loaded", null],
      ["own", "builtin", "shadowed", "serve"], ["shared", "home", "shadowed", "serve"], ["kept", "serve", "rejected", "home"],
    ]);
    assert.equal(c.get("own")?.manifest.name, "own");
    assert.deepEqual(pluginRoots("/h/plugins", ["/x"]).map((r) => [r.dir, r.origin]), [[join(engine, "plugins"), "builtin"], ["/h/plugins", "home"], ["/x", "serve"]]);
  } finally {
    for (const d of [home, extra, builtin]) rmSync(d, { recursive: true, force: true });
  }
});

test("the published schema files are what `npm run schema` writes, the loader's validators are compiled from them, and they accept the example", () => {
  const folder = join(engine, "protocol", "declarative");
  assert.deepEqual(readdirSync(folder).sort(), Object.keys(pluginSchemaFiles).sort());
  for (const file of Object.keys(pluginSchemaFiles) as PluginSchemaFile[]) {
    assert.deepEqual(JSON.parse(readFileSync(join(folder, file), "utf8")), pluginSchemaDocument(file), file);
  }
  assert.equal(readFileSync(join(engine, "src", "protocol", "plugin-validators.generated.ts"), "utf8"), pluginValidatorsModule());
  // Anyone's JSON Schema 2020-12 validator can use the files as published (discriminators are only annotations there).
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  for (const file of Object.keys(pluginSchemaFiles)) ajv.addSchema(JSON.parse(readFileSync(join(folder, file), "utf8")));
  const base = "https://agent-autoloop.dev/protocol/declarative/";
  const check = (schema: string, rel: string) => {
    const validate = ajv.getSchema(base + schema)!;
    assert.ok(validate(JSON.parse(readFileSync(join(examplePlugin, rel), "utf8"))), `${rel}: ${JSON.stringify(validate.errors)}`);
  };
  check("plugin.schema.json", "plugin.json");
  for (const f of ["http_fetch", "github_issue"]) check("tool.schema.json", `tools/${f}.json`);
  check("workflow.schema.json", "workflows/triage.json");
  check("intents.schema.json", "intents/ask.json");
  check("panel.schema.json", "panels/main.json");
  check("card.schema.json", "cards/note.json");
  check("settings.schema.json", "settings.json");
  assert.equal(ajv.getSchema(`${base}panel.schema.json`)!({ id: "m", title: "t", body: [{ type: "iframe" }] }), false, "an unknown node is refused by the published schema too");
});

test("the docs' weather plugin, taken from docs/plugins/declarative-plugins.md itself, loads as written", async () => {
  const readme = readFileSync(join(engine, "docs", "plugins", "declarative-plugins.md"), "utf8");
  const heredoc = (file: string) => {
    const m = new RegExp(`cat > "\\$H/plugins/weather/${file.replace(".", "\\.")}" <<'JSON'\\n([\\s\\S]*?)\\nJSON\\n`).exec(readme);
    assert.ok(m, `the page writes ${file}`);
    return m[1]!;
  };
  const root = tempDir("aa-decl-readme-");
  try {
    writeFiles(join(root, "weather"), { "plugin.json": heredoc("plugin.json"), "tools/forecast.json": heredoc("tools/forecast.json") });
    const c = catalog(root);
    assert.deepEqual(await c.reload(), { loaded: ["weather"], replaced: [], unloaded: [], rejected: [] });
    assert.deepEqual(c.toolsOf("weather")!.tools.map((x) => x.name), ["forecast"]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
