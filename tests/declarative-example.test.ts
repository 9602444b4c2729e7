/**
 * examples/declarative-plugins/example as a user meets it (issue 18), and the document's §5 checklist (spec
 * declarative-plugins.md §5) run as written, with an `Authorization` header added, against a real
 * `agent-autoloop serve --plugins <dir>` child process (`npm run build` first): (1) reload with no errors, (2) the
 * plugin's tools and its entry in the listings, (3) move the folder away → reload → built-ins fully working: the tool
 * plugins and code plugins still listed, an event still routed and run to the end by the local worker. The CLI's
 * `plugins reload`, `plugins settings` and `plugins set` (a secret from stdin, never printed) run as child processes
 * too. The example's HTTP tool runs against a local server.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { baseRules, engine, makeHome, serveProcess, tempDir, until, type ServeProcess } from "./helpers.js";
import { examplePlugin, localServer, sendJson } from "./declarative-helpers.js";
import { examples } from "./tools-helpers.js";
import { DeclarativeCatalog } from "../src/declarative/index.js";
import { ToolHost, ToolRegistry } from "../src/tools/index.js";
import type { Plugins, PluginsReload, State, Tools } from "../src/protocol/responses.js";

const cleanup: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const f of cleanup.reverse()) await f();
});

const bin = join(engine, "bin", "agent-autoloop.js");

/** Runs the CLI on `home` with `stdin`; exit code and output lines. */
function cli(args: string[], home: string, stdin = ""): Promise<{ code: number; out: string[]; err: string[] }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [bin, ...args], { env: { ...process.env, AGENT_AUTOLOOP_HOME: home, AGENT_AUTOLOOP_LANG: "en" }, encoding: "utf8" }, (e, stdout, stderr) => {
      const lines = (s: string) => s.split("\n").filter((l) => l !== "");
      resolve({ code: e ? Number((e as { code?: number }).code ?? 1) : 0, out: lines(stdout), err: lines(stderr) });
    });
    child.stdin!.end(stdin);
  });
}

test("the §5 checklist against a real serve --plugins, and the CLI's reload, settings and set", async () => {
  // The run's cwd must not hold the serve --plugins folder (issue 26: a sandboxed agent that can write above it could
  // plant a plugin the hub runs), so the rule runs in a folder of its own rather than baseRules' /tmp.
  const cwd = tempDir("aa-decl-example-cwd-");
  cleanup.push(() => rmSync(cwd, { recursive: true, force: true }));
  const rules = {
    ...baseRules,
    agents: { ...baseRules.agents, bot: { worker: "w1", use: "command", command: ["echo", "done"] } },
    rules: baseRules.rules.map((r) => (r.name === "alerts" ? { ...r, cwd } : r)),
  };
  const { dir, keys } = makeHome(rules, { worker: { name: "w1", key: "", capacity: 1 } });
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  // The local worker uses the w1 key makeHome registered.
  const config = JSON.parse(readFileSync(join(dir, "config.json"), "utf8"));
  config.worker.key = keys.worker;
  const { writeFileAtomic } = await import("../src/host/home.js");
  writeFileAtomic(join(dir, "config.json"), JSON.stringify(config));
  // A tool plugin of the home, to see it untouched.
  mkdirSync(join(dir, "plugins"), { recursive: true });
  cpSync(join(examples, "hello-python"), join(dir, "plugins", "hello-python"), { recursive: true });
  const work = tempDir("aa-decl-example-");
  cleanup.push(() => rmSync(work, { recursive: true, force: true }));
  const plugins = join(work, "plugins");
  cpSync(examplePlugin, join(plugins, "example"), { recursive: true });

  const serve: ServeProcess = await serveProcess(dir, undefined, undefined, undefined, ["--plugins", plugins]);
  cleanup.push(() => serve.stop());
  assert.match(serve.output(), new RegExp(`declarative plugin example: loaded \\(${plugins}/example\\)`));
  const curl = async (method: string, path: string) => {
    const res = await fetch(serve.url + path, { method, headers: { authorization: `Bearer ${keys.owner}` } });
    return { status: res.status, body: await res.json() };
  };

  // 1) manifest and assets valid: the reload answers without errors.
  assert.deepEqual(await curl("POST", "/api/plugins/reload"), { status: 200, body: { loaded: [], replaced: [], unloaded: [], rejected: [] } });
  // 2) what is registered.
  const tools = (await curl("GET", "/api/tools")).body as Tools;
  assert.deepEqual(tools.filter((x) => x.pluginId === "example").map((x) => [x.name, x.kind, x.approval]), [["example.http_fetch", "http", "prompt"], ["example.github_issue", "http", "prompt"]]);
  const listed = (await curl("GET", "/api/plugins")).body as Plugins;
  assert.deepEqual(listed.filter((p) => p.manifest.id === "example").map((p) => [p.kind, p.status, p.errors, p.manifest.version]), [["declarative", "loaded", [], "0.1.0"]]);

  // The CLI: reload, settings, set (a secret from stdin: never printed, never in the hub's output).
  assert.deepEqual(await cli(["plugins", "reload"], dir), { code: 0, out: ["nothing changed"], err: [] });
  assert.deepEqual(await cli(["plugins", "settings", "example"], dir), {
    code: 0, out: ["token (secret): -, in effect now", "repo (string): -, in effect after the next reload (agent-autoloop plugins reload)"], err: [],
  });
  const secret = "ghp_example_secret_value";
  assert.deepEqual(await cli(["plugins", "set", "example", "token", "-"], dir, `${secret}\n`), { code: 0, out: ["example token is now ••••••, in effect now"], err: [] });
  assert.deepEqual(await cli(["plugins", "set", "example", "repo", "me/mine"], dir), {
    code: 0, out: ["example repo is now me/mine, in effect after the next reload (agent-autoloop plugins reload)"], err: [],
  });
  assert.deepEqual((await cli(["plugins", "settings", "example", "--json"], dir)).out.join("\n").includes(secret), false);
  assert.deepEqual(await cli(["plugins", "set", "example", "nope", "x"], dir), { code: 1, out: [], err: ["agent-autoloop: plugin example has no setting nope"] });

  // 3) move the folder away → reload → built-ins fully working.
  renameSync(join(plugins, "example"), join(work, "example"));
  assert.deepEqual(await curl("POST", "/api/plugins/reload"), { status: 200, body: { loaded: [], replaced: [], unloaded: ["example"], rejected: [] } });
  assert.deepEqual(((await curl("GET", "/api/tools")).body as Tools).map((x) => x.name), ["hello-python.greet"]);
  const after = (await curl("GET", "/api/plugins")).body as Plugins;
  assert.deepEqual(after.filter((p) => p.kind === "declarative"), []);
  assert.deepEqual(after.filter((p) => p.kind === "tool").map((p) => [p.manifest.id, p.status]), [["hello-python", "loaded"]]);
  for (const [kind, id] of [["agent", "command"], ["agent", "claude"], ["channel", "file"], ["source", "github"]]) {
    assert.ok(after.some((p) => p.kind === kind && p.manifest.id === id && p.status === "loaded"), `${kind} ${id}`);
  }
  const posted = await fetch(`${serve.url}/v1/events`, {
    method: "POST", headers: { authorization: `Bearer ${keys.source}`, "content-type": "application/json" }, body: JSON.stringify({ id: "e1", type: "alert.disk" }),
  });
  assert.deepEqual(await posted.json(), { event: 1, duplicate: false, routed: ["alerts"], paused: [] });
  let runs: State["runs"] = [];
  await until(async () => (runs = ((await curl("GET", "/v1/state")).body as State).runs)[0]?.state === "done", 30_000, () => `the run to end (runs: ${JSON.stringify(runs)}; hub: ${serve.output()})`);
  // Back again: loaded by watching alone, as new.
  renameSync(join(work, "example"), join(plugins, "example"));
  await until(async () => ((await curl("GET", "/api/plugins")).body as Plugins).some((p) => p.manifest.id === "example" && p.status === "loaded"), 10_000, "the plugin back");
  assert.doesNotMatch(serve.output(), new RegExp(secret));
  assert.match(readFileSync(join(dir, "secrets.env"), "utf8"), new RegExp(`^AGENT_AUTOLOOP_PLUGIN_SECRET__example__token="${secret}"$`, "m"));
});

test("the example's http_fetch against a local server; github_issue asks for its token first", async () => {
  const server = await localServer((req, res) => sendJson(res, 200, { got: req.url }));
  cleanup.push(() => server.close());
  const catalog = new DeclarativeCatalog({ roots: [{ dir: join(engine, "examples", "declarative-plugins"), origin: "serve" }], lang: "en" });
  assert.deepEqual(await catalog.reload() satisfies PluginsReload, { loaded: ["example"], replaced: [], unloaded: [], rejected: [] });
  const host = new ToolHost(new ToolRegistry([], "en"), { lang: "en", data: catalog });
  cleanup.push(() => host.close());
  const { durationMs: _, ...fetched } = await host.call("example.http_fetch", { url: `${server.url}/hello?x=1` }, { sessionKey: "test" });
  assert.deepEqual(fetched, { status: "ok", result: { got: "/hello?x=1" } });
  assert.equal(server.seen.at(-1)!.headers.accept, "application/json");
  const { durationMs: __, ...issue } = await host.call("example.github_issue", { owner: "octocat", repo: "Hello-World", number: 1 }, { sessionKey: "test" });
  assert.deepEqual(issue, { status: "refused", code: "tools.auth_missing", message: "authRef token: plugin example has no value for it yet (agent-autoloop plugins set example token …)" });
});

test("plugins invoke reaches a declarative plugin's HTTP tool through the tool host: a result, an undeclared host, arguments refused", async () => {
  const server = await localServer((req, res) => sendJson(res, 200, { got: req.url }));
  cleanup.push(() => server.close());
  const { dir } = makeHome();
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(examplePlugin, join(dir, "plugins", "example"), { recursive: true });
  const args = JSON.stringify({ url: `${server.url}/invoked?q=1` });
  assert.deepEqual(await cli(["plugins", "invoke", "example.http_fetch", "--args", args], dir), { code: 0, out: ['{"got":"/invoked?q=1"}'], err: [] });
  assert.deepEqual(await cli(["plugins", "invoke", "example.http_fetch", "--args", JSON.stringify({ url: "http://evil.example/" })], dir), {
    code: 2, out: [], err: ["refused: network not declared: evil.example"],
  });
  assert.deepEqual(await cli(["plugins", "invoke", "example.http_fetch", "--args", "{}"], dir), {
    code: 2, out: [], err: ["refused: wrong arguments for example.http_fetch: url: required"],
  });
});
