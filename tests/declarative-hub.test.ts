/**
 * Declarative plugins in a real hub (issue 18): loaded at start from `<home>/plugins` and `serve --plugins` folders
 * with refusals in the start log; `POST /v1/plugins/reload` (owner; also `/api/plugins/reload`) answers exactly what
 * the rescan did; what was registered stays registered when a new version is refused; file changes are picked up by
 * watching; `GET /v1/plugins` (also `/api/plugins`) lists every plugin of every kind; the HTTP tools show in
 * `GET /v1/tools` with kind `http` and approval `prompt` unless rules.json says otherwise. Every answer is checked
 * against the published shape.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { baseRules, hubFixture, tempDir, until } from "./helpers.js";
import { copyExample, editJson, examplePlugin, localServer, minimalManifest, sendJson, writeFiles } from "./declarative-helpers.js";
import { examples } from "./tools-helpers.js";
import { HubClient } from "../src/protocol/client.js";
import type { PluginView, Plugins, PluginsReload, Tools } from "../src/protocol/responses.js";

const nothing: PluginsReload = { loaded: [], replaced: [], unloaded: [], rejected: [] };

test("start, reload and listing: the exact answers, aliases, the owner's key, refusals logged, the old version kept", async () => {
  const extra = tempDir("aa-decl-serve-");
  const logs: string[] = [];
  copyExample(extra);
  writeFiles(join(extra, "broken"), { "plugin.json": '{ "id": "broken", ' });
  const f = await hubFixture({ ...baseRules, approvals: [{ plugin: "example", tool: "example.github_issue", mode: "auto" }] }, {}, "", {
    log: (l: string) => logs.push(l), pluginDirs: [extra],
  });
  try {
    // At start: the example loaded, the broken one refused with its error in the log.
    assert.deepEqual(logs.filter((l) => l.includes("declarative plugin") || l.startsWith("  ")), [
      `declarative plugin example: loaded (${extra}/example)`,
      "declarative plugin broken: refused (1 errors)",
      `  ${extra}/broken/plugin.json: is not valid JSON (line 1, column 19)`,
    ]);
    const owner = f.keys.owner;
    // Only the owner: no key 401, another kind 403; nothing reloaded by those.
    assert.equal((await f.call("POST", "/v1/plugins/reload", null)).status, 401);
    assert.equal((await f.call("POST", "/api/plugins/reload", f.keys.worker)).status, 403);
    assert.equal((await f.call("GET", "/api/plugins", f.keys.source)).status, 403);
    const brokenError = { id: "broken", errors: [`${extra}/broken/plugin.json: is not valid JSON (line 1, column 19)`] };
    assert.deepEqual(await f.call("POST", "/v1/plugins/reload", owner), { status: 200, body: { ...nothing, rejected: [brokenError] } });

    // A new plugin in the home, a fixed one, a changed one, in one reload.
    mkdirSync(f.home.plugins, { recursive: true });
    writeFiles(join(f.home.plugins, "notes"), { "plugin.json": minimalManifest("notes", { provides: { prompts: ["hello"] } }), "prompts/hello.md": "Say hello." });
    writeFiles(join(extra, "broken"), { "plugin.json": minimalManifest("broken") });
    editJson(join(extra, "example"), "tools/http_fetch.json", (t) => ({ ...t, description: "Fetch it" }));
    const r = await f.call("POST", "/api/plugins/reload", owner);
    assert.deepEqual(r, { status: 200, body: { loaded: ["broken", "notes"], replaced: ["example"], unloaded: [], rejected: [] } });
    assert.deepEqual(await new HubClient(f.url, owner).pluginsReload(), nothing, "the typed client; nothing changed since");

    // A refused new version: the old one stays registered — its tools listed and its entry `rejected` with why.
    editJson(join(extra, "example"), "plugin.json", (m) => ({ ...m, apiVersion: "2.0" }));
    const refused = (await f.call("POST", "/v1/plugins/reload", owner)).body as PluginsReload;
    assert.deepEqual(refused, { ...nothing, rejected: [{ id: "example", errors: [`${extra}/example/plugin.json#/apiVersion: 2.0 is outside this host's window 1.x`] }] });
    const tools = (await f.call("GET", "/v1/tools", owner)).body as Tools;
    const fetch = { type: "object", properties: { url: { type: "string" } }, required: ["url"] };
    assert.deepEqual(tools.filter((x) => x.pluginId === "example"), [
      { name: "example.http_fetch", pluginId: "example", kind: "http", description: "Fetch it", parameters: fetch, approval: "prompt", disableModelInvocation: false },
      {
        name: "example.github_issue", pluginId: "example", kind: "http", description: "The title of a GitHub issue, read with the token of this plugin's settings",
        parameters: tools.find((x) => x.name === "example.github_issue")!.parameters, approval: "auto", disableModelInvocation: false,
      },
    ]);
    const listed = (await f.call("GET", "/v1/plugins", owner)).body as Plugins;
    const example = listed.find((p) => p.kind === "declarative" && p.manifest.id === "example")!;
    assert.deepEqual([example.status, example.errors, example.manifest.apiVersion, example.origin, example.dir], ["rejected", refused.rejected[0]!.errors, "1.0", "serve", join(extra, "example")]);

    // Gone: unloaded, and its tools with it.
    rmSync(join(f.home.plugins, "notes"), { recursive: true });
    editJson(join(extra, "example"), "plugin.json", (m) => ({ ...m, apiVersion: "1.0" }));
    assert.deepEqual((await f.call("POST", "/v1/plugins/reload", owner)).body, { ...nothing, replaced: ["example"], unloaded: ["notes"] });
  } finally {
    await f.close();
    rmSync(extra, { recursive: true, force: true });
  }
});

test("GET /v1/plugins lists every plugin of every kind: declarative, tool, agent, channel, source", async () => {
  const f = await hubFixture();
  try {
    mkdirSync(f.home.plugins, { recursive: true });
    copyExample(f.home.plugins);
    writeFiles(join(f.home.plugins, "half"), { "plugin.json": minimalManifest("half", { provides: { panels: ["main"] } }) });
    cpSync(join(examples, "hello-python"), join(f.home.plugins, "hello-python"), { recursive: true });
    writeFiles(join(f.home.plugins, "mine"), { "agent.ts": "export default {};" });
    // Every kind is reloaded (issue 27), a tool plugin named by its manifest's name.
    assert.deepEqual((await f.call("POST", "/v1/plugins/reload", f.keys.owner)).body, {
      ...nothing, loaded: ["example", "hello-python"], rejected: [
        { id: "half", errors: [`${f.home.plugins}/half/plugin.json#/provides/panels/0: names main, but panels/main.json does not exist`] },
        { id: "mine", errors: [`${join(f.home.plugins, "mine", "agent.ts")}: not an agent plugin: command must be a function`] },
      ],
    });
    const r = await f.call("GET", "/api/plugins", f.keys.owner);
    assert.equal(r.status, 200);
    const all = r.body as Plugins;
    assert.deepEqual(await new HubClient(f.url, f.keys.owner).plugins(), all);
    const of = (kind: PluginView["kind"]) => all.filter((p) => p.kind === kind);
    // Each is a record of the common plugin layer (issue 27): the digest in use, the last good one, what shadows it.
    for (const p of all) assert.ok(p.status === "shadowed" || (p.status === "loaded") === /^[0-9a-f]{64}$/.test(p.digest ?? ""), `${p.kind} ${p.manifest.id}`);
    const bare = (p: PluginView | undefined) => {
      if (!p) return p;
      const { digest: _d, lastGood: _l, shadowedBy, ...rest } = p;
      assert.equal(shadowedBy, null);
      return rest;
    };
    assert.deepEqual(all.map((p) => p.kind), [...of("declarative"), ...of("tool"), ...of("agent"), ...of("channel"), ...of("source")].map((p) => p.kind), "by kind");
    const example = of("declarative")[0]!;
    assert.deepEqual({ ...bare(example), manifest: undefined, prompts: undefined }, {
      kind: "declarative", manifest: undefined, status: "loaded", errors: [], origin: "home", dir: join(f.home.plugins, "example"), prompts: undefined,
      // What rules can name (issue 18), by the <plugin>/<name> a rule writes.
      workflows: [{ ref: "example/triage", title: "Triage an issue", steps: ["fetch", "draft", "confirm", "save"] }],
      intents: [{ ref: "example/ask", includes_any: ["example report", "示例报告"], slots: ["topic", "depth"] }],
    });
    assert.deepEqual(example.prompts, [{ ref: "example/writer", text: readFileSync(join(examplePlugin, "prompts", "writer.md"), "utf8") }]);
    assert.deepEqual([example.manifest.id, example.manifest.name, example.manifest.apiVersion], ["example", "Example", "1.0"]);
    assert.deepEqual(bare(of("declarative")[1]), {
      kind: "declarative", manifest: minimalManifest("half", { provides: { panels: ["main"] } }), status: "rejected",
      errors: [`${f.home.plugins}/half/plugin.json#/provides/panels/0: names main, but panels/main.json does not exist`], origin: "home", dir: join(f.home.plugins, "half"),
    });
    assert.deepEqual(bare(of("tool").find((p) => p.manifest.id === "hello-python")), {
      kind: "tool", status: "loaded", errors: [], origin: "home", dir: join(f.home.plugins, "hello-python"),
      manifest: { id: "hello-python", name: "hello-python", version: "0.1.0", description: "", author: "", plugin_type: "sync", manifest_version: 1, tools: ["greet"], tools_from: "listed" },
    });
    // An installed code plugin is loaded and checked by its kind's shape (issue 27): this one is not an agent plugin.
    assert.deepEqual(bare(of("agent").find((p) => p.manifest.id === "mine")), {
      kind: "agent", manifest: { id: "mine", name: "mine" }, status: "rejected", errors: [`${join(f.home.plugins, "mine", "agent.ts")}: not an agent plugin: command must be a function`],
      origin: "home", dir: join(f.home.plugins, "mine"),
    });
    for (const [kind, id] of [["agent", "claude"], ["agent", "command"], ["channel", "feishu"], ["channel", "file"], ["source", "github"]] as const) {
      const p = of(kind).find((x) => x.manifest.id === id);
      assert.deepEqual(p && [p.status, p.origin, p.errors], ["loaded", "builtin", []], `${kind} ${id}`);
    }
  } finally {
    await f.close();
  }
});

test("watching: a plugin folder added, edited, broken and moved away is picked up without a reload request", async () => {
  const f = await hubFixture();
  try {
    const list = async () => ((await f.call("GET", "/v1/plugins", f.keys.owner)).body as Plugins).filter((p) => p.kind === "declarative").map((p) => [p.manifest.id, p.status, p.manifest.version]);
    const dir = copyExample(join(f.home.plugins));
    await until(async () => JSON.stringify(await list()) === JSON.stringify([["example", "loaded", "0.1.0"]]), 10_000, "the new plugin");
    editJson(dir, "plugin.json", (m) => ({ ...m, version: "0.2.0" }));
    await until(async () => JSON.stringify(await list()) === JSON.stringify([["example", "loaded", "0.2.0"]]), 10_000, "the edit");
    editJson(dir, "panels/main.json", (p) => ({ ...p, body: [{ type: "iframe" }] }));
    await until(async () => JSON.stringify(await list()) === JSON.stringify([["example", "rejected", "0.2.0"]]), 10_000, "the refusal");
    const away = tempDir("aa-decl-away-");
    renameSync(dir, join(away, "example"));
    await until(async () => (await list()).length === 0, 10_000, "the unload");
    rmSync(away, { recursive: true, force: true });
  } finally {
    await f.close();
  }
});

test("settings: shown with their values, a secret only as set or not; set through the hub, a secret only into secrets.env; hot at once, others on reload", async () => {
  const logs: string[] = [];
  const server = await localServer((req, res) => sendJson(res, 200, { auth: req.headers.authorization ?? null }));
  const f = await hubFixture(baseRules, {}, "", { log: (l: string) => logs.push(l) });
  try {
    const owner = f.keys.owner;
    copyExample(f.home.plugins);
    writeFiles(join(f.home.plugins, "keyed"), {
      "plugin.json": minimalManifest("keyed", { requires: { network: [`127.0.0.1:${server.port}`] }, provides: { tools: ["hot", "cold"], settings: ["hot_key", "cold_key", "n", "flag", "pick"] } }),
      "settings.json": [
        { key: "hot_key", label: "Hot", type: "secret", effect: "hot" }, { key: "cold_key", label: "Cold", type: "secret" },
        { key: "n", label: "N", type: "number", default: 3 }, { key: "flag", label: "Flag", type: "boolean" }, { key: "pick", label: "Pick", type: "select", options: ["a", "b"] },
      ],
      "tools/hot.json": { name: "hot", parameters: { type: "object" }, http: { url: `${server.url}/`, authRef: "hot_key", resultPath: "auth" } },
      "tools/cold.json": { name: "cold", parameters: { type: "object" }, http: { url: `${server.url}/`, authRef: "cold_key", resultPath: "auth" } },
    });
    assert.deepEqual((await f.call("POST", "/v1/plugins/reload", owner)).body, { ...nothing, loaded: ["example", "keyed"] });
    const client = new HubClient(f.url, owner);
    assert.deepEqual(await client.pluginSettings("example"), {
      plugin: "example", group: "plugin:example", settings: [
        { key: "token", label: "GitHub token", type: "secret", effect: "hot", description: "A fine-grained token with read access to issues; stored only in the home's secrets file", options: null, default: null, value: null, set: false },
        { key: "repo", label: "Default repository", type: "string", effect: "reload", description: null, options: null, default: "octocat/Hello-World", value: null, set: false },
      ],
    });
    const secret = "s3cret-XYZ-123";
    assert.deepEqual(await f.call("POST", "/v1/plugins/example/settings/token", owner, { value: secret }), {
      status: 200, body: { plugin: "example", setting: { key: "token", label: "GitHub token", type: "secret", effect: "hot", description: "A fine-grained token with read access to issues; stored only in the home's secrets file", options: null, default: null, value: null, set: true } },
    });
    assert.equal((await client.pluginSettingSet("example", "repo", "me/mine")).setting.value, "me/mine");
    assert.equal(readFileSync(f.home.secrets, "utf8"), `AGENT_AUTOLOOP_PLUGIN_SECRET__example__token="${secret}"\n`);
    assert.equal(statSync(f.home.secrets).mode & 0o777, 0o600);
    assert.deepEqual(JSON.parse(readFileSync(join(f.home.dir, "plugin-settings.json"), "utf8")), { example: { repo: "me/mine" } });
    // Values by type; refusals name the field and write nothing.
    for (const [key, value] of [["n", "4.5"], ["flag", "true"], ["pick", "b"]] as const) await client.pluginSettingSet("keyed", key, value);
    assert.deepEqual((await client.pluginSettings("keyed")).settings.map((s) => [s.key, s.value, s.set]), [["hot_key", null, false], ["cold_key", null, false], ["n", 4.5, true], ["flag", true, true], ["pick", "b", true]]);
    const refusals: [string, string, unknown, number, string][] = [
      ["keyed", "n", { value: "four" }, 400, "value: must be number"],
      ["keyed", "flag", { value: "yes" }, 400, "value: must be true or false"],
      ["keyed", "pick", { value: "c" }, 400, 'value: must be one of ["a","b"]'],
      ["example", "repo", { value: "a\nb" }, 400, "value: wrong format, expected one line, no control characters"],
      ["example", "token", { value: "two\nlines" }, 400, "value: a secret is one line of 1 to 4096 characters, no control characters, no spaces at either end"],
      ["example", "token", { value: " padded" }, 400, "value: a secret is one line of 1 to 4096 characters, no control characters, no spaces at either end"],
      ["example", "token", { secret }, 400, "value: required"],
      ["example", "nope", { value: "x" }, 404, "plugin example has no setting nope"],
      ["ghost", "x", { value: "x" }, 404, "no such declarative plugin loaded: ghost"],
    ];
    for (const [plugin, key, body, status, error] of refusals) {
      assert.deepEqual(await f.call("POST", `/v1/plugins/${plugin}/settings/${key}`, owner, body), { status, body: { error } }, `${plugin} ${key}`);
    }
    assert.deepEqual((await f.call("GET", "/v1/plugins/ghost/settings", owner)), { status: 404, body: { error: "no such declarative plugin loaded: ghost" } });
    assert.equal((await f.call("GET", "/v1/plugins/example/settings", f.keys.worker)).status, 403);
    assert.equal(readFileSync(f.home.secrets, "utf8"), `AGENT_AUTOLOOP_PLUGIN_SECRET__example__token="${secret}"\n`, "nothing written by a refusal");

    // A hot secret is used at once; one that takes effect on reload after the next reload.
    const host = await f.running.hub.toolHost();
    const call = async (tool: string) => {
      const { durationMs: _, ...o } = await host.call(`keyed.${tool}`, {}, { sessionKey: "test" });
      return o;
    };
    assert.deepEqual(await call("hot"), { status: "refused", code: "tools.auth_missing", message: "authRef hot_key: plugin keyed has no value for it yet (agent-autoloop plugins set keyed hot_key …)" });
    await client.pluginSettingSet("keyed", "hot_key", "hot-1");
    await client.pluginSettingSet("keyed", "cold_key", "cold-1");
    assert.deepEqual(await call("hot"), { status: "ok", result: "Bearer [redacted]" });
    assert.equal(server.seen.at(-1)!.headers.authorization, "Bearer hot-1");
    assert.equal((await call("cold")).status, "refused", "not before the next reload");
    await client.pluginsReload();
    assert.deepEqual(await call("cold"), { status: "ok", result: "Bearer [redacted]" });
    assert.equal(server.seen.at(-1)!.headers.authorization, "Bearer cold-1");
    await client.pluginSettingSet("keyed", "cold_key", "cold-2");
    await call("cold");
    assert.equal(server.seen.at(-1)!.headers.authorization, "Bearer cold-1", "still the value of the last reload");
    await client.pluginSettingSet("keyed", "hot_key", null);
    assert.equal((await call("hot")).status, "refused", "unset");
    assert.doesNotMatch(readFileSync(f.home.secrets, "utf8"), /hot-1/);

    // The secrets are nowhere else: not in answers, the log, the listing, the database or its log of facts.
    const everything = JSON.stringify([logs, (await f.call("GET", "/v1/plugins", owner)).body, await client.pluginSettings("example"), await f.state()]);
    for (const s of [secret, "hot-1", "cold-1", "cold-2"]) assert.ok(!everything.includes(s), s);
    for (const file of readdirSync(f.home.dir).filter((n) => n.startsWith("hub.db"))) {
      const bytes = readFileSync(join(f.home.dir, file));
      for (const s of [secret, "hot-1", "cold-1", "cold-2"]) assert.equal(bytes.includes(s), false, `${file} holds ${s}`);
    }
  } finally {
    await f.close();
    await server.close();
  }
});
