/**
 * `agent-autoloop plugins invoke <plugin>.<tool> --args JSON [--json]` and `plugins conformance <folder>` (issue 16) as
 * a user runs them: real child processes of bin/agent-autoloop.js (`npm run build` first), real plugin processes
 * (the examples of examples/tool-plugins and small ones written here), a real hub over HTTP when one runs, the home's
 * SQLite file when none does. Exit 0 with the tool's result on stdout as one line of JSON; 1 with the error's code and
 * message on stderr; 2 with the reason on stderr and the plugin not started. Every call is audited either way.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { baseRules, hubFixture, makeHome, tempDir } from "./helpers.js";
import { buildHelloRust, cliLines as cli, examples, nodePlugin, syncManifest, toolToml, writePlugin } from "./tools-helpers.js";
import { recordedCalls, streamCalls } from "./tool-calls-helpers.js";

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Copies the hello examples into `plugins`; hello-rust built when cargo exists (returns whether it was). */
function helloPlugins(plugins: string): boolean {
  for (const name of ["hello-python", "hello-node", "hello-bash"]) cpSync(join(examples, name), join(plugins, name), { recursive: true });
  return buildHelloRust(plugins);
}

/** A plugin that notes each start in `started` and answers per `handler` (a nodePlugin body). */
function noting(handler: string): string {
  return `require("node:fs").appendFileSync("started", "x");\n${nodePlugin(handler)}`;
}

/** The plugins of the refusal and failure cases, written into `plugins`. */
function casePlugins(plugins: string): void {
  const nameSchema = 'type = "object"\nrequired = ["name"]\n\n[capabilities.tools.parameters.properties.name]\ntype = "string"';
  writePlugin(plugins, "strict", syncManifest("strict", "node", ["main.js"], toolToml("greet", nameSchema)), {
    "main.js": noting('return { jsonrpc: "2.0", id: req.id, result: { content: "hi " + req.params.arguments.name } };'),
  });
  writePlugin(plugins, "grumpy", syncManifest("grumpy", "node", ["main.js"], toolToml("greet")), {
    "main.js": noting('return { jsonrpc: "2.0", id: req.id, error: { code: -32602, message: "missing required param: name" } };'),
  });
  writePlugin(plugins, "slow", syncManifest("slow", "node", ["main.js"], `[communication]\ntimeout_ms = 300\n\n${toolToml("wait")}`), {
    "main.js": `setInterval(() => {}, 1000);\n${noting("return undefined;")}`,
  });
  writePlugin(plugins, "chatty", syncManifest("chatty", "node", ["main.js"], toolToml("work")), {
    "main.js": noting(`
      process.stdout.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/progress", params: { request_id: req.params.request_id, percent: 50, message: "half done" } }) + "\\n");
      return { jsonrpc: "2.0", id: req.id, result: { done: true } };`),
  });
  writePlugin(plugins, "banned", syncManifest("banned", "node", ["main.js"], toolToml("rm")), { "main.js": noting('return { jsonrpc: "2.0", id: req.id, result: 1 };') });
  // Denied too, and its manifest lists no tools: asking it for them (tools/list) would start it before the deny.
  writePlugin(plugins, "banned-listing", syncManifest("banned-listing", "node", ["main.js"]), {
    "main.js": noting('return { jsonrpc: "2.0", id: req.id, result: req.method === "tools/list" ? { tools: [{ name: "rm", inputSchema: { type: "object" } }] } : 1 };'),
  });
  // Allowed, its manifest lists no tools: asked for them after the decision, it has no tool "nope".
  writePlugin(plugins, "listing", syncManifest("listing", "node", ["main.js"]), {
    "main.js": noting('return { jsonrpc: "2.0", id: req.id, result: req.method === "tools/list" ? { tools: [{ name: "rm", inputSchema: { type: "object" } }] } : 1 };'),
  });
  // An async plugin: answers a task id at once, then completes the task through the callback URL it was sent.
  writePlugin(plugins, "later", syncManifest("later", "node", ["main.js"], `[communication]\ntimeout_ms = 20000\n\n${toolToml("job")}\n${toolToml("never")}`, "async"), {
    "main.js": noting(`
      const task = "task-" + req.params.request_id.replace(/[^A-Za-z0-9]/g, "").padEnd(16, "0");
      if (req.params.name === "job") setTimeout(() => fetch(req.params.callback_url + task, { method: "POST", headers: { "content-type": "application/json" },
        body: JSON.stringify({ status: "success", result: { content: "later, " + req.params.arguments.name } }) }), 200);
      return { jsonrpc: "2.0", id: req.id, result: { task_id: task } };`),
  });
  writePlugin(plugins, "quick", syncManifest("quick", "node", ["main.js"], `[communication]\ntimeout_ms = 1000\n\n${toolToml("never")}`, "async"), {
    "main.js": noting('return { jsonrpc: "2.0", id: req.id, result: { task_id: "never-called-back-01" } };'),
  });
}

const rules = { ...baseRules, approvals: [{ plugin: "banned", mode: "deny" }, { plugin: "banned-listing", mode: "deny" }, { plugin: "hello-python", tool: "hello-python.greet", mode: "prompt" }] };

const started = (plugins: string, name: string) => existsSync(join(plugins, name, "started"));

test("through a running hub: each hello plugin with §3.5's exact output, exit codes 0/1/2, progress on stderr, prompt not asked of the owner, async results waited for; every call audited", async () => {
  const f = await hubFixture(rules);
  try {
    const plugins = f.home.plugins;
    mkdirSync(plugins, { recursive: true });
    const rust = helloPlugins(plugins);
    casePlugins(plugins);
    const dir = f.home.dir;
    const ada = ["--args", '{"name":"Ada"}'];
    // §3.5, in every language: stdout exactly the result, nothing on stderr. hello-python's approval is `prompt`:
    // the owner is not asked about their own call.
    for (const name of ["hello-python", "hello-node", "hello-bash", ...(rust ? ["hello-rust"] : [])]) {
      assert.deepEqual(await cli(["plugins", "invoke", `${name}.greet`, ...ada], dir), { code: 0, out: ['{"content":"hello, Ada"}'], err: [] }, name);
    }
    // A tool error, a timeout: exit 1 with code and message.
    assert.deepEqual(await cli(["plugins", "invoke", "grumpy.greet"], dir), { code: 1, out: [], err: ["error -32602: missing required param: name"] });
    assert.deepEqual(await cli(["plugins", "invoke", "slow.wait"], dir), { code: 1, out: [], err: ["timeout: plugin slow did not answer within 300 ms; its whole process group was ended"] });
    // Progress on stderr, the result on stdout.
    assert.deepEqual(await cli(["plugins", "invoke", "chatty.work"], dir), { code: 0, out: ['{"done":true}'], err: ["progress: 50% half done"] });
    // Refused, the plugin not started: no such plugin, no such tool, arguments failing the schema, deny.
    assert.deepEqual(await cli(["plugins", "invoke", "nope.greet"], dir), { code: 2, out: [], err: ["refused: no such tool plugin: nope"] });
    assert.deepEqual(await cli(["plugins", "invoke", "strict.wave"], dir), { code: 2, out: [], err: ["refused: plugin strict has no tool wave"] });
    assert.deepEqual(await cli(["plugins", "invoke", "strict.greet", "--args", '{"name":7}'], dir), { code: 2, out: [], err: ["refused: wrong arguments for strict.greet: name: must be string"] });
    assert.deepEqual(await cli(["plugins", "invoke", "strict.greet", "--args", "{name}"], dir), { code: 2, out: [], err: ["refused: --args is not valid JSON: not valid JSON at line 1, column 2"] });
    assert.deepEqual(await cli(["plugins", "invoke", "banned.rm"], dir), { code: 2, out: [], err: ["refused: approvals[0] of rules.json denies banned.rm"] });
    assert.deepEqual(await cli(["plugins", "invoke", "banned-listing.rm"], dir), { code: 2, out: [], err: ["refused: approvals[1] of rules.json denies banned-listing.rm"] });
    assert.deepEqual(["strict", "banned", "banned-listing"].map((n) => started(plugins, n)), [false, false, false], "a refused call starts no plugin");
    // Allowed, then the plugin's own tool list says no: refused, and audited as an error (its tool list ran).
    assert.deepEqual(await cli(["plugins", "invoke", "listing.nope"], dir), { code: 2, out: [], err: ["refused: plugin listing has no tool nope"] });
    assert.equal(started(plugins, "listing"), true);
    // --json: what went wrong as one JSON line on stdout too; a success prints the result alone.
    assert.deepEqual(await cli(["plugins", "invoke", "banned.rm", "--json"], dir), {
      code: 2, out: ['{"status":"refused","code":"tools.denied","message":"approvals[0] of rules.json denies banned.rm"}'], err: ["refused: approvals[0] of rules.json denies banned.rm"],
    });
    assert.deepEqual((await cli(["plugins", "invoke", "grumpy.greet", "--json"], dir)).out, ['{"status":"error","code":-32602,"message":"missing required param: name"}']);
    assert.deepEqual(await cli(["plugins", "invoke", "hello-bash.greet", ...ada, "--json"], dir), { code: 0, out: ['{"content":"hello, Ada"}'], err: [] });
    // Async: the task id is parked, the plugin calls back, the CLI prints the result; no callback within the timeout: exit 1.
    assert.deepEqual(await cli(["plugins", "invoke", "later.job", ...ada], dir), { code: 0, out: ['{"content":"later, Ada"}'], err: [] });
    assert.deepEqual(await cli(["plugins", "invoke", "quick.never"], dir), { code: 1, out: [], err: ["timeout: no callback came within 1000 ms"] });

    // Audited: each call the hub decided is a fact, by plugin and status, with the owner's session key.
    const s = await f.state();
    const count = (plugin: string, status: string) => s.toolCalls.find((c) => c.plugin === plugin && c.status === status)?.count ?? 0;
    assert.deepEqual(
      [count("hello-python", "ok"), count("hello-bash", "ok"), count("grumpy", "error"), count("slow", "timeout"), count("banned", "denied"), count("banned-listing", "denied"), count("listing", "error"), count("later", "ok"), count("quick", "timeout")],
      [1, 2, 2, 1, 2, 1, 1, 1, 1],
    );
    assert.equal((await streamCalls(f)).find((c) => c.id === 1)?.sessionKey, "owner:owner");
    // `status` shows them by plugin and status for today.
    const status = (await cli(["status"], dir)).out;
    const from = status.indexOf("Tool calls today (by plugin and status):");
    assert.ok(from > 0, status.join("\n"));
    assert.deepEqual(status.slice(from + 1, from + 4), ["  banned: denied 2", "  banned-listing: denied 1", "  chatty: ok 1"]);
  } finally {
    await f.close();
  }
});

test("with no hub running: the call and its outcome are recorded in the home's database under its lock, never unaudited", async () => {
  const made = makeHome(rules);
  const { dir, home } = made;
  dirs.push(dir);
  mkdirSync(home.plugins, { recursive: true });
  helloPlugins(home.plugins);
  casePlugins(home.plugins);
  assert.deepEqual(await cli(["plugins", "invoke", "hello-python.greet", "--args", '{"name":"Ada"}'], dir), { code: 0, out: ['{"content":"hello, Ada"}'], err: [] });
  assert.deepEqual(await cli(["plugins", "invoke", "banned.rm"], dir), { code: 2, out: [], err: ["refused: approvals[0] of rules.json denies banned.rm"] });
  assert.deepEqual(await cli(["plugins", "invoke", "grumpy.greet"], dir), { code: 1, out: [], err: ["error -32602: missing required param: name"] });
  assert.ok(!readdirSync(home.dir).includes("hub.pid"), "the lock was released");
  const calls = await recordedCalls(made);
  assert.deepEqual(calls.map((c) => [c.id, c.tool, c.sessionKey, c.decision, c.status]), [
    [1, "hello-python.greet", "owner:owner", "allow", "ok"],
    [2, "banned.rm", "owner:owner", "deny", "denied"],
    [3, "grumpy.greet", "owner:owner", "allow", "error"],
  ]);
});

test("plugins conformance: one line per check on every example, exit 0; a plugin that breaks the contract fails with exit 1", async () => {
  const root = tempDir();
  dirs.push(root);
  const { dir } = makeHome(baseRules);
  dirs.push(dir);
  const rust = helloPlugins(root);
  // The examples where they are (hello-service needs the engine's node_modules), hello-rust where it was built.
  for (const name of ["hello-python", "hello-node", "hello-bash", ...(rust ? ["hello-rust"] : [])]) {
    const r = await cli(["plugins", "conformance", name === "hello-rust" ? join(root, name) : join(examples, name)], dir);
    assert.equal(r.code, 0, `${name}: ${r.out.join("\n")}`);
    assert.deepEqual(r.out.map((l) => l.split(":")[0]), [
      "ok   the manifest reads and is valid", "ok   tool list", "ok   a good call", "ok   the response echoes the request's id",
      "ok   stdout carries only JSON-RPC", "ok   exits on its own when its input ends", "ok   a timeout ends its whole process group",
      "ok   a call of a tool that does not exist", "ok   arguments failing the schema are refused by the host; the plugin is not started",
    ], name);
    assert.deepEqual(r.out.slice(4, 6), ["ok   stdout carries only JSON-RPC", "ok   exits on its own when its input ends"], `${name}: a check with nothing to say ends with it`);
    assert.match(r.out[2]!, /^ok {3}a good call: greet \{"name":"conformance"\} → \{"status":"ok","result":\{"content":"hello, conformance"\}/, name);
  }
  const service = await cli(["plugins", "conformance", join(examples, "hello-service")], dir);
  assert.equal(service.code, 0, service.out.join("\n"));
  // Its socket was in the home (hidden from agents: issue 26), and went with it.
  assert.deepEqual(readdirSync(join(dir, "sockets")), []);
  writePlugin(root, "liar", syncManifest("liar", "node", ["main.js"], toolToml("greet")), { "main.js": nodePlugin('process.stdout.write("hello\\n"); return { jsonrpc: "2.0", id: 1, result: {} };') });
  const liar = await cli(["plugins", "conformance", join(root, "liar")], dir);
  assert.equal(liar.code, 1);
  assert.ok(liar.out.some((l) => l.startsWith("FIX ")), liar.out.join("\n"));
});
