/**
 * One plugin model (issue 27, point 1), the cases seen on main, as a user meets them: a real hub over HTTP, real CLI
 * child processes (`npm run build` first), real plugin processes and a local HTTP server. The CLI and the hub hold one
 * truth about plugins: after a broken edit both use the last good version; a removed declarative tool is "definition
 * missing"; `plugins list` shows every kind; `plugins reload` names what the watcher loaded since it was last asked;
 * a service plugin starts with `serve`, its stderr in the hub's log; a broken code plugin is rejected at start.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { baseRules, engine, hubFixture, makeHome, serveFixture, tempDir, until, type Fixture } from "./helpers.js";
import { copyExample, editJson, localServer, minimalManifest, sendJson, writeFiles } from "./declarative-helpers.js";
import { cliLines as cli, examples, syncManifest, toolToml, writePlugin } from "./tools-helpers.js";
import type { Plugins, PluginsReload } from "../src/protocol/responses.js";

const nothing: PluginsReload = { loaded: [], replaced: [], unloaded: [], rejected: [] };

/** The hub's records of one kind: `[id, status]`, in the hub's order. */
async function records(f: Fixture, kind: string): Promise<[string, string][]> {
  const all = (await f.call("GET", "/v1/plugins", f.keys.owner)).body as Plugins;
  return all.filter((p) => p.kind === kind).map((p) => [p.manifest.id, p.status]);
}

/** Waits until the hub lists plugin `id` of `kind` with `status`. */
async function hubSays(f: Fixture, kind: string, id: string, status: string): Promise<void> {
  await until(async () => (await records(f, kind)).some(([i, s]) => i === id && s === status), 10_000, () => `${kind} ${id} ${status}`);
}

/** The broken edits of a good declarative plugin the issue names, each undone by copying the example again. */
const brokenDeclarative: [string, (dir: string) => void][] = [
  ["a tool file that is not JSON", (d) => writeFileSync(join(d, "tools", "github_issue.json"), "{")],
  ["a tool file missing", (d) => rmSync(join(d, "tools", "github_issue.json"))],
  ["apiVersion outside 1.x", (d) => editJson(d, "plugin.json", (m) => ({ ...m, apiVersion: "2.0" }))],
  ["an id differing from its folder", (d) => editJson(d, "plugin.json", (m) => ({ ...m, id: "other" }))],
  ["an unknown panel node type", (d) => editJson(d, "panels/main.json", (p) => ({ ...p, body: [{ type: "iframe" }] }))],
  ["an asset provides does not name", (d) => writeFileSync(join(d, "prompts", "extra.md"), "Extra.")],
  ["an unknown manifest field", (d) => editJson(d, "plugin.json", (m) => ({ ...m, colour: "red" }))],
];

test("after a broken edit of a good plugin.json, plugins invoke uses the last good version, as the hub does; with no hub too", async () => {
  const server = await localServer((_req, res) => sendJson(res, 200, { served: true }));
  const f = await hubFixture();
  try {
    const dir = copyExample(f.home.plugins);
    await hubSays(f, "declarative", "example", "loaded");
    const args = ["--args", JSON.stringify({ url: `${server.url}/x` })];
    for (const [what, breakIt] of brokenDeclarative) {
      breakIt(dir);
      await hubSays(f, "declarative", "example", "rejected");
      assert.deepEqual(await cli(["plugins", "invoke", "example.http_fetch", ...args], f.home.dir), { code: 0, out: ['{"served":true}'], err: [] }, what);
      rmSync(dir, { recursive: true });
      copyExample(f.home.plugins);
      await hubSays(f, "declarative", "example", "loaded");
    }
    // The hub gone, the CLI alone keeps the same rule: a broken edit leaves the last good version in use.
    brokenDeclarative[2]![1](dir);
    await f.running.close();
    assert.deepEqual(await cli(["plugins", "invoke", "example.http_fetch", ...args], f.home.dir), { code: 0, out: ['{"served":true}'], err: [] }, "no hub");
  } finally {
    await f.close();
    await server.close();
  }
});

/** Broken edits of a good manifest.toml. */
const brokenManifests: [string, (text: string) => string][] = [
  ["TOML that does not parse", (m) => m.replace('name = "hello-node"', 'name = "hello-node')],
  ["an unknown plugin_type", (m) => m.replace('plugin_type = "sync"', 'plugin_type = "daemon"')],
  ["an unknown field", (m) => `colour = "blue"\n${m}`],
  ["a tool without a name", (m) => m.replace('name = "greet"', 'title = "greet"')],
];

test("after a broken edit of a good manifest.toml, plugins invoke uses the last good version, as the hub does; with no hub too", async () => {
  const f = await hubFixture();
  try {
    const dir = join(f.home.plugins, "hello-node");
    mkdirSync(f.home.plugins, { recursive: true });
    cpSync(join(examples, "hello-node"), dir, { recursive: true });
    const good = readFileSync(join(dir, "manifest.toml"), "utf8");
    await hubSays(f, "tool", "hello-node", "loaded");
    const ada = ["--args", '{"name":"Ada"}'];
    for (const [what, breakIt] of brokenManifests) {
      writeFileSync(join(dir, "manifest.toml"), breakIt(good));
      await hubSays(f, "tool", "hello-node", "rejected");
      assert.deepEqual(await cli(["plugins", "invoke", "hello-node.greet", ...ada], f.home.dir), { code: 0, out: ['{"content":"hello, Ada"}'], err: [] }, what);
      writeFileSync(join(dir, "manifest.toml"), good);
      await hubSays(f, "tool", "hello-node", "loaded");
    }
    writeFileSync(join(dir, "manifest.toml"), brokenManifests[0]![1](good));
    await f.running.close();
    assert.deepEqual(await cli(["plugins", "invoke", "hello-node.greet", ...ada], f.home.dir), { code: 0, out: ['{"content":"hello, Ada"}'], err: [] }, "no hub");
  } finally {
    await f.close();
  }
});

test("invoking a tool of a removed declarative plugin, or a tool its new version dropped, says definition missing", async () => {
  const f = await hubFixture();
  try {
    const dir = copyExample(f.home.plugins);
    writeFiles(join(f.home.plugins, "other"), minimalFiles("other", ["ping"]));
    await hubSays(f, "declarative", "example", "loaded");
    await hubSays(f, "declarative", "other", "loaded");
    rmSync(dir, { recursive: true });
    await until(async () => !(await records(f, "declarative")).some(([id]) => id === "example"), 10_000, "the unload");
    const url = ["--args", '{"url":"http://127.0.0.1:9/x"}'];
    assert.deepEqual(await cli(["plugins", "invoke", "example.http_fetch", ...url], f.home.dir), { code: 2, out: [], err: ["refused: definition missing: example.http_fetch"] });
    // A new version without the tool.
    writeFiles(join(f.home.plugins, "other"), { "plugin.json": minimalManifest("other") });
    rmSync(join(f.home.plugins, "other", "tools"), { recursive: true });
    await until(async () => ((await f.call("GET", "/v1/tools", f.keys.owner)).body as { name: string }[]).every((t) => t.name !== "other.ping"), 10_000, "the tool gone");
    assert.deepEqual(await cli(["plugins", "invoke", "other.ping", "--args", "{}"], f.home.dir), { code: 2, out: [], err: ["refused: definition missing: other.ping"] });
  } finally {
    await f.close();
  }
});

/** A declarative plugin with HTTP tools `tools` (GET of a fixed local URL). */
function minimalFiles(id: string, tools: string[]): Record<string, unknown> {
  const files: Record<string, unknown> = { "plugin.json": minimalManifest(id, { requires: { network: ["127.0.0.1"] }, provides: { tools } }) };
  for (const name of tools) {
    files[`tools/${name}.json`] = { name, description: name, parameters: { type: "object" }, http: { method: "GET", url: "http://127.0.0.1:9/ping" } };
  }
  return files;
}

test("plugins list shows every kind: declarative, tool and code plugins, from the hub's records when one runs", async () => {
  const made = makeHome();
  mkdirSync(made.home.plugins, { recursive: true });
  copyExample(made.home.plugins);
  cpSync(join(examples, "hello-python"), join(made.home.plugins, "hello-python"), { recursive: true });
  // The columns of a line (each padded to its widest cell, two spaces apart).
  const cells = (out: string[], origin: string) => out.filter((l) => l.includes(`(${origin})`)).map((l) => l.split(/\s{2,}/));
  const local = await cli(["plugins", "list"], made.dir);
  assert.deepEqual(cells(local.out, "home"), [
    ["example", "0.1.0", "declarative", "http_fetch,github_issue", "(home)", "ok"],
    ["hello-python", "0.1.0", "sync", "greet", "(home)", "ok"],
  ], local.err.join("\n"));
  assert.deepEqual(cells(local.out, "builtin").find((c) => c[0] === "claude"), ["claude", "-", "agent", "-", "(builtin)", "ok"]);
  const f = await serveFixture(made);
  try {
    // The hub's records: a plugin broken since the hub loaded it is listed as the hub uses it.
    editJson(join(made.home.plugins, "example"), "plugin.json", (m) => ({ ...m, apiVersion: "2.0" }));
    await hubSays(f, "declarative", "example", "rejected");
    const r = await cli(["plugins", "list"], made.dir);
    assert.deepEqual(cells(r.out, "home"), [
      ["example", "0.1.0", "declarative", "http_fetch,github_issue", "(home)", "error"],
      ["hello-python", "0.1.0", "sync", "greet", "(home)", "ok"],
    ]);
    assert.ok(r.err.includes(`${made.home.plugins}/example/plugin.json#/apiVersion: 2.0 is outside this host's window 1.x`), r.err.join("\n"));
  } finally {
    await f.close();
  }
});

test("plugins --help names only subcommands that exist", async () => {
  const r = await cli(["plugins", "--help"], tempDir());
  const commands = r.out.slice(r.out.indexOf("Commands:") + 1).flatMap((l) => /^ {2}([a-z]+)/.exec(l)?.[1] ?? []).filter((c) => c !== "help");
  // The description, wrapped over lines between the usage and the options.
  const described = r.out.slice(r.out.findIndex((l) => l.startsWith("Usage:")) + 1, r.out.indexOf("Options:")).join(" ");
  const named = described.slice(described.indexOf(":") + 1).split(",").map((w) => w.trim());
  assert.deepEqual(named.filter((c) => !commands.includes(c)), [], described);
  assert.deepEqual(named.sort(), [...commands].sort(), described);
});

test("plugins reload right after a plugin is made says it is loaded, though the watcher loaded it first; of every kind, a tool plugin by its manifest name", async () => {
  const f = await hubFixture();
  try {
    mkdirSync(f.home.plugins, { recursive: true });
    writeFiles(join(f.home.plugins, "notes"), { "plugin.json": minimalManifest("notes") });
    writePlugin(f.home.plugins, "tp-folder", syncManifest("tp", "node", ["main.js"], toolToml("go")));
    writeFiles(join(f.home.plugins, "mine"), { "agent.ts": 'export default { command: () => ["true"], read: () => ({ text: "", finished: true }) };\n' });
    await hubSays(f, "declarative", "notes", "loaded");
    await hubSays(f, "tool", "tp", "loaded");
    assert.deepEqual(await cli(["plugins", "reload"], f.home.dir), { code: 0, out: ["loaded: mine, notes, tp"], err: [] });
    assert.deepEqual(await cli(["plugins", "reload"], f.home.dir), { code: 0, out: ["nothing changed"], err: [] });
    writeFileSync(join(f.home.plugins, "tp-folder", "main.js"), "// changed\n");
    rmSync(join(f.home.plugins, "notes"), { recursive: true });
    assert.deepEqual((await f.call("POST", "/v1/plugins/reload", f.keys.owner)).body, { ...nothing, replaced: ["tp"], unloaded: ["notes"] });
  } finally {
    await f.close();
  }
});

test("a service plugin starts with serve, with CORLINMAN_PLUGIN_ADDR, before any run; its stderr is in the hub's log as plugin.<name>", async () => {
  const logs: string[] = [];
  const made = makeHome();
  mkdirSync(made.home.plugins, { recursive: true });
  // Its script by absolute path: it imports gRPC from the engine's packages.
  const main = join(examples, "hello-service", "main.mjs");
  writePlugin(made.home.plugins, "hello-service", readFileSync(join(examples, "hello-service", "manifest.toml"), "utf8").replace('args = ["main.mjs"]', `args = [${JSON.stringify(main)}]`));
  const f = await serveFixture(made, { log: (l) => logs.push(l) });
  try {
    await until(() => logs.find((l) => l.startsWith("plugin.hello-service: hello-service listening on ")), 10_000, () => logs.join("\n"));
  } finally {
    await f.close();
  }
});

test("a broken code plugin is rejected at start with the reason, of each kind, not at its first use", async () => {
  const made = makeHome({
    ...baseRules,
    sources: { ...baseRules.sources, hooks: { name: "Hooks", adapter: "bad-source" } },
    agents: { ...baseRules.agents, bad: { worker: "w1", use: "bad-agent" } },
  });
  writeFiles(join(made.home.plugins, "bad-agent"), { "agent.ts": "export default { command: 7 };\n" });
  writeFiles(join(made.home.plugins, "bad-source"), { "source.ts": "export default { events: [] };\n" });
  // Installed and named nowhere: loaded and checked all the same; a good one beside it loads.
  writeFiles(join(made.home.plugins, "bad-channel"), { "channel.ts": "export default 7;\n", "agent.ts": 'export default { command: () => ["true"], read: () => null };\n' });
  const f = await serveFixture(made);
  try {
    const all = (await f.call("GET", "/v1/plugins", f.keys.owner)).body as Plugins;
    const of = (kind: string, id: string) => all.find((p) => p.kind === kind && p.manifest.id === id);
    assert.deepEqual([of("agent", "bad-agent")?.status, of("agent", "bad-agent")?.errors], [
      "rejected", [`${join(made.home.plugins, "bad-agent", "agent.ts")}: not an agent plugin: command must be a function`],
    ]);
    assert.deepEqual([of("source", "bad-source")?.status, of("source", "bad-source")?.errors], [
      "rejected", [`${join(made.home.plugins, "bad-source", "source.ts")}: not a source plugin: the default export must be a function`],
    ]);
    assert.deepEqual([of("channel", "bad-channel")?.status, of("channel", "bad-channel")?.errors], [
      "rejected", [`${join(made.home.plugins, "bad-channel", "channel.ts")}: not a channel plugin: the default export must be a function`],
    ]);
    assert.deepEqual([of("agent", "bad-channel")?.status, of("agent", "bad-channel")?.errors], ["loaded", []]);
  } finally {
    await f.close();
  }
});

test("add accepts every name a plugin of its kind may have: a tool plugin's folder or repository may hold _ and capitals; a code or declarative plugin's may not", async () => {
  const made = makeHome();
  const from = tempDir();
  const copy = (name: string) => {
    cpSync(join(examples, "hello-python"), join(from, name), { recursive: true });
    return join(from, name);
  };
  const installed = () => (existsSync(made.home.plugins) ? readdirSync(made.home.plugins).filter((n) => !n.startsWith(".") && n !== "node_modules").sort() : []);
  const toolDone = (name: string) =>
    `installed tool plugin folder ${name} in ${join(made.home.plugins, name)}; agent-autoloop plugins list shows its name and tools; offer them to a rule's agent with "tools": ["<name>.<tool>"] in rules.json`;
  // A local folder, and a git repository whose name has capitals (names are lowercased).
  assert.deepEqual(await cli(["add", copy("my_tools")], made.dir), { code: 0, out: [toolDone("my_tools")], err: [] });
  const repo = copy("Hello_Repo.git");
  const git = (...args: string[]) => execFileSync("git", ["-C", repo, "-c", "user.name=t", "-c", "user.email=t@t", ...args], { stdio: "ignore" });
  git("init", "-q");
  git("add", ".");
  git("commit", "-q", "-m", "plugin");
  assert.deepEqual(await cli(["add", repo], made.dir), { code: 0, out: [toolDone("hello_repo")], err: [] });
  // A declarative plugin: its id is its folder's name.
  writeFiles(join(from, "notes"), { "plugin.json": minimalManifest("notes") });
  assert.deepEqual(await cli(["add", join(from, "notes")], made.dir), {
    code: 0, out: [`installed declarative plugin notes in ${join(made.home.plugins, "notes")}; a running hub loads it within 2 s; offer its tools to a rule's agent with "tools": ["notes.*"] in rules.json`], err: [],
  });
  // Names the kind does not allow: refused, nothing installed.
  writeFiles(join(from, "my_notes"), { "plugin.json": minimalManifest("my_notes") });
  writeFiles(join(from, "my_agent"), { "agent.ts": 'export default { command: () => ["true"], read: () => null };\n' });
  for (const name of ["my_notes", "my_agent"]) {
    assert.deepEqual(await cli(["add", join(from, name)], made.dir), { code: 1, out: [], err: [`agent-autoloop: plugin names use lowercase letters, digits and -; the folder name gives "${name}"`] }, name);
  }
  // A name no plugin of any kind may have is refused before anything is copied.
  assert.deepEqual(await cli(["add", copy("two.parts")], made.dir), { code: 1, out: [], err: ['agent-autoloop: plugin names use lowercase letters, digits and -; the folder name gives "two.parts"'] });
  assert.deepEqual(installed(), ["hello_repo", "my_tools", "notes"]);
  // What add installed is what the plugin model finds: the tool plugins by their manifests' name.
  const list = await cli(["plugins", "list"], made.dir);
  assert.deepEqual(list.out.filter((l) => l.includes("(home)")).map((l) => l.split(/\s{2,}/).slice(0, 3)), [["hello-python", "0.1.0", "sync"], ["hello-python", "0.1.0", "sync"], ["notes", "1.0.0", "declarative"]]);
});

test("plugins inspect shows a plugin of any kind: a declarative one with its tools, a code one, a refused one with its last good version in use", async () => {
  const made = makeHome();
  mkdirSync(made.home.plugins, { recursive: true });
  const dir = copyExample(made.home.plugins);
  const description = (JSON.parse(readFileSync(join(dir, "plugin.json"), "utf8")) as { description: string }).description;
  const r = await cli(["plugins", "inspect", "example"], made.dir);
  const digest = /sha256 ([0-9a-f]{64})/.exec(r.out[3] ?? "")?.[1];
  assert.deepEqual(r, {
    code: 0, err: [], out: [
      "example 0.1.0 — declarative (home): ok", "  why: in use: no other folder of its kind has its name", `  folder: ${dir}`,
      `  files: sha256 ${digest} (the version in use)`, `  description: ${description}`, "  tools: example.http_fetch, example.github_issue",
    ],
  });
  assert.equal((JSON.parse((await cli(["plugins", "inspect", "example", "--json"], made.dir)).out.join("\n")) as { kind: string; digest: string }).digest, digest);
  // Refused as it is now: the version read before stays in use, and inspect says so.
  editJson(dir, "plugin.json", (m) => ({ ...m, apiVersion: "2.0" }));
  const broken = await cli(["plugins", "inspect", "example"], made.dir);
  assert.deepEqual(broken.out.slice(0, 4), [
    "example 0.1.0 — declarative (home): error",
    `  why: it is not loaded as it is now (${dir}/plugin.json#/apiVersion: 2.0 is outside this host's window 1.x); its last good version stays in use until it is fixed`,
    `  folder: ${dir}`, `  files: sha256 ${digest} (the version in use)`,
  ]);
  const agent = await cli(["plugins", "inspect", "claude"], made.dir);
  assert.deepEqual(agent.out.slice(0, 3), ["claude - — agent (builtin): ok", "  why: in use: no other folder of its kind has its name", `  folder: ${join(engine, "plugins", "claude")}`]);
  assert.deepEqual(await cli(["plugins", "inspect", "nope"], made.dir), { code: 1, out: [], err: [`agent-autoloop: no plugin named nope (looked among the built-in ones and in ${made.home.plugins})`] });
});

test("a declarative plugin whose id is a tool plugin's name: the tool plugin wins and the clash is reported — GET /v1/plugins, the hub's log, plugins list and doctor; never silent", async () => {
  const made = makeHome();
  const declDir = copyExample(made.home.plugins);
  const toolDir = join(made.home.plugins, "example-tool");
  cpSync(join(examples, "hello-python"), toolDir, { recursive: true });
  const manifest = join(toolDir, "manifest.toml");
  writeFileSync(manifest, readFileSync(manifest, "utf8").replace('name = "hello-python"', 'name = "example"'));
  const clash = `plugin example: the tool plugin ${toolDir} (home) wins over the declarative plugin ${declDir} (home) of the same id: both would name their tools example.<tool>; rename one`;

  // No hub: the CLI's own reading says it, in the list (the declarative plugin shadowed) and at the tool plugin in doctor.
  const list = await cli(["plugins", "list"], made.dir);
  assert.deepEqual(list.out.filter((l) => l.startsWith("example ")).map((l) => l.split(/\s{2,}/)), [
    ["example", "0.1.0", "declarative", "http_fetch,github_issue", "(home)", "shadowed"],
    ["example", "0.1.0", "sync", "greet", "(home)", "ok"],
  ], list.out.join("\n"));
  assert.deepEqual(list.err, [clash]);
  const doctor = await cli(["plugins", "doctor"], made.dir);
  assert.deepEqual(doctor.out.slice(0, 3), [
    `example (${toolDir})`,
    `  ok   the manifest reads and is valid: ${toolDir}/manifest.toml`,
    `  warn name clash: ${clash}`,
  ], doctor.out.join("\n"));
  assert.equal(doctor.code, 0);

  // The hub: its record of the declarative plugin is shadowed by the tool plugin (nothing of it in use), and its log says so once.
  const logged: string[] = [];
  const f = await serveFixture(made, { log: (l) => logged.push(l) });
  try {
    const all = (await f.call("GET", "/v1/plugins", f.keys.owner)).body as Plugins;
    const decl = all.find((p) => p.kind === "declarative" && p.manifest.id === "example")!;
    assert.deepEqual([decl.status, decl.digest, decl.shadowedBy], ["shadowed", null, { dir: toolDir, origin: "home", kind: "tool" }]);
    assert.deepEqual(all.filter((p) => p.kind === "tool").map((p) => [p.manifest.id, p.status, p.shadowedBy]), [["example", "loaded", null]]);
    assert.deepEqual(logged.filter((l) => l.includes("clash")), [`declarative plugins clash: ${clash}`]);
    // Its panels are not served either: one id is one plugin.
    assert.equal((await f.call("GET", "/v1/plugins/example/ui", f.keys.owner)).status, 404);
    // The tool plugin's folder gone, the declarative plugin is back in use, and reload says it.
    rmSync(toolDir, { recursive: true });
    const report = (await f.call("POST", "/v1/plugins/reload", f.keys.owner)).body as PluginsReload;
    assert.deepEqual(report, { ...nothing, loaded: ["example"], unloaded: ["example"] });
    assert.deepEqual(await records(f, "declarative"), [["example", "loaded"]]);
  } finally {
    await f.close();
  }
});
