/**
 * `GET /v1/tools` (issue 16), also at `/api/tools`: a real hub over HTTP lists the tools of its home's tool plugins
 * for the owner — name, plugin, kind, description, parameters and the approval mode its current rules give — reading
 * the plugin folders at each request, asking a manifest without tools with tools/list once per manifest digest, and
 * ending the MCP servers it started when it closes. Every answer is checked against the published shape.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { baseRules, hubFixture, until } from "./helpers.js";
import { examples, nodePlugin, processesIn, syncManifest, toolToml, writePlugin } from "./tools-helpers.js";
import { HubClient } from "../src/protocol/client.js";

const rules = (approvals: unknown[]) => ({ ...baseRules, approvals });

/** A stdio MCP server (newline-delimited JSON-RPC) offering `echo` and `add`. */
const smallMcpServer = `const send = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
const tools = [{ name: "echo", description: "Echoes back the input", inputSchema: { type: "object", properties: { message: { type: "string" } } } }, { name: "add", inputSchema: { type: "object" } }];
require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  if (m.method === "initialize") return send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "small", version: "1" } } });
  if (m.method === "tools/list") return send({ jsonrpc: "2.0", id: m.id, result: { tools } });
  send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no" } });
});
`;

test("GET /v1/tools lists every tool of the home's plugins with plugin, kind and approval mode; /api/tools is the same", async () => {
  const logs: string[] = [];
  const f = await hubFixture(rules([
    { plugin: "hello-python", tool: "hello-python.greet", mode: "prompt", allow_session_keys: ["alerts:*"] },
    // prompt, not deny: a plugin denied whole is not asked for its tools at all (hostile round 40, F40b-2)
    { plugin: "lister", mode: "prompt" },
  ]), {}, "", { log: (l: string) => logs.push(l) });
  let every = "";
  try {
    const plugins = f.home.plugins;
    mkdirSync(plugins, { recursive: true });
    // Outside the plugin's folder: a file it wrote inside would change its digest (issue 26 #4) and so its cached list.
    const asked = join(f.home.dir, "lister-asked");
    assert.deepEqual(await f.call("GET", "/v1/tools", f.keys.owner), { status: 200, body: [] }, "no plugins: no tools");
    cpSync(join(examples, "hello-python"), join(plugins, "hello-python"), { recursive: true });
    cpSync(join(examples, "hello-service"), join(plugins, "hello-service"), { recursive: true });
    const lister = writePlugin(plugins, "lister", syncManifest("lister", "node", ["main.js"]), {
      "main.js": nodePlugin(`
        require("node:fs").appendFileSync(${JSON.stringify(asked)}, req.method + "\\n");
        return { jsonrpc: "2.0", id: req.id, result: { tools: [{ name: "add", inputSchema: { type: "object", properties: { a: { type: "number" } } } }] } };`),
    });
    writePlugin(plugins, "secret", syncManifest("secret", "bash", ["main.sh"], `${toolToml("wipe")}\n[capabilities]\ndisable_model_invocation = true\n`));
    writePlugin(plugins, "broken", `colour = "blue"\n${syncManifest("broken", "node", ["main.js"], toolToml("x"))}`);
    writePlugin(plugins, "mute", syncManifest("mute", "node", ["-e", "process.exit(3)"]));
    // An MCP server in its own folder (the review sandbox shows the plugin's folder and the system folders, not the
    // engine's node_modules: issue 26 round 12, F12-6), offering two tools, one allowed.
    every = writePlugin(plugins, "every", `manifest_version = 3\nname = "every"\nversion = "1.0.0"\nplugin_type = "mcp"\n\n[entry_point]\ncommand = "node"\nargs = ["server.js"]\n\n[mcp]\ntools_allowlist = { mode = "allow", names = ["echo"] }\n`, { "server.js": smallMcpServer });

    const greet = { type: "object", required: ["name"], properties: { name: { type: "string" } } };
    const r = await f.call("GET", "/v1/tools", f.keys.owner);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const echo = r.body.find((x: { name: string }) => x.name === "every.echo");
    assert.deepEqual(r.body, [
      { ...echo, name: "every.echo", pluginId: "every", kind: "mcp", approval: "auto", disableModelInvocation: false },
      { name: "hello-python.greet", pluginId: "hello-python", kind: "sync", description: "Greet a person", parameters: greet, approval: "prompt", disableModelInvocation: false },
      ...([
        ["greet", "Greet a person (with a progress event first)", greet], ["count", "How many calls this process has served: state kept between calls", { type: "object" }],
        ["refuse", "Answers with an error event", { type: "object" }], ["ask", "Asks for the owner's approval first", { type: "object" }],
        ["crash", "Exits mid-call (to show supervision)", { type: "object" }],
      ] as const).map(([tool, description, parameters]) => ({
        name: `hello-service.${tool}`, pluginId: "hello-service", kind: "service", description, parameters, approval: "auto", disableModelInvocation: false,
      })),
      { name: "lister.add", pluginId: "lister", kind: "sync", description: "", parameters: { type: "object", properties: { a: { type: "number" } } }, approval: "prompt", disableModelInvocation: false },
      { name: "secret.wipe", pluginId: "secret", kind: "sync", description: "", parameters: { type: "object" }, approval: "auto", disableModelInvocation: true },
    ]);
    assert.match(echo.description, /echo/i);
    assert.equal(echo.parameters.type, "object");
    // The broken plugin and the one whose tools/list fails are left out; the log says why the latter is missing.
    assert.ok(logs.some((l) => l.startsWith("GET /v1/tools leaves out the tools of plugin mute: ")), logs.join("\n"));
    // The same through the other path and the typed client. The lister, trusted by no one, was asked only in the review
    // sandbox (issue 26 round 11, F5; tools-review.test.ts): the home hidden there, its note never reached the home.
    assert.deepEqual((await f.call("GET", "/api/tools", f.keys.owner)).body, r.body);
    assert.deepEqual(await new HubClient(f.url, f.keys.owner).tools(), r.body);
    assert.equal(existsSync(asked), false, "asked in the review sandbox, which hides the home");

    // A changed manifest, a removed plugin and changed approvals show at the next request.
    writeFileSync(join(plugins, "hello-python", "manifest.toml"), readFileSync(join(plugins, "hello-python", "manifest.toml"), "utf8").replace('description = "Greet a person"', 'description = "Say hello"'));
    rmSync(join(plugins, "secret"), { recursive: true });
    f.writeRules(rules([{ plugin: "hello-python", mode: "deny" }]));
    const after = (await until(async () => {
      const b = (await f.call("GET", "/v1/tools", f.keys.owner)).body as { name: string; description: string; approval: string }[];
      return b.find((x) => x.name === "hello-python.greet")?.approval === "deny" ? b : null;
    }))!;
    assert.deepEqual(after.map((x) => x.name), ["every.echo", "hello-python.greet", ...["greet", "count", "refuse", "ask", "crash"].map((x) => `hello-service.${x}`), "lister.add"]);
    assert.deepEqual([after[1]!.description, after.at(-1)!.approval], ["Say hello", "auto"]);
    // The MCP plugin, trusted by no one and not autostarted, was asked in the review sandbox by a server started for
    // that and stopped (issue 26 round 11, F5): none of its processes stays.
    assert.deepEqual(processesIn(every), [], "the review's MCP server was stopped");
    // The listing answered from the service's manifest; `serve` starts a service plugin once its watcher finds it
    // (spec tool-plugins.md §6), whether before or after the listing: the CI run of f1a2dbe saw it either way.
    assert.ok(await until(() => processesIn(join(plugins, "hello-service")).length > 0), "serve starts the service plugin it found");
  } finally {
    await f.close();
  }
  assert.deepEqual(processesIn(every), [], "the hub ended the MCP server it started");
  assert.deepEqual(processesIn(join(f.home.plugins, "hello-service")), [], "the hub ended the service plugin it started");
});
