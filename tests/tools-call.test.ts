/**
 * The one call API over sync and async plugins (spec tool-plugins.md §3–§5): the four hello examples with the exact
 * output of §3.5, the params and environment a plugin gets, progress and stderr, refusals that start nothing,
 * timeouts that leave nothing running, async task ids, and `tools/list` asked only when needed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { engineDir } from "../src/common/paths.js";
import { buildHelloRust, examples, hostFixture, nodePlugin, pidsIn, running, syncManifest, tempDir, toolToml, until, writePlugin } from "./tools-helpers.js";

const ada = { name: "Ada" };

for (const name of ["hello-python", "hello-node", "hello-bash"]) {
  test(`${name}.greet answers {"content":"hello, Ada"} (§3.5)`, async () => {
    const f = hostFixture({ roots: [examples] });
    try {
      f.registry.rescan();
      const r = await f.host.call(`${name}.greet`, ada, { sessionKey: "owner:test" });
      assert.equal(r.status, "ok", JSON.stringify(r));
      assert.equal(r.status === "ok" && JSON.stringify(r.result), '{"content":"hello, Ada"}');
    } finally {
      await f.close();
    }
  });
}

test("hello-rust.greet answers {\"content\":\"hello, Ada\"} (§3.5), built here when cargo exists", async (t) => {
  const root = tempDir();
  const f = hostFixture({ roots: [root] });
  try {
    if (!buildHelloRust(root)) return t.skip("cargo is not installed: hello-rust was not built");
    f.registry.rescan();
    const r = await f.host.call("hello-rust.greet", ada, { sessionKey: "owner:test" });
    assert.equal(r.status === "ok" && JSON.stringify(r.result), '{"content":"hello, Ada"}', JSON.stringify(r));
  } finally {
    await f.close();
    rmSync(root, { recursive: true, force: true });
  }
});

test("a call sends §4's params and callback_url, runs in the plugin folder with an allowlisted environment", async () => {
  const f = hostFixture({ env: { ...process.env, HUB_SECRET: "s3cret", AGENT_AUTOLOOP_KEY: "k", TZ: "UTC", LANG: "C.UTF-8" } });
  try {
    writePlugin(f.root, "echo", syncManifest("echo", "node", ["main.js"], `env = { PLUGIN_MODE = "test" }\n\n${toolToml("show")}`), {
      "main.js": nodePlugin('return { jsonrpc: "2.0", id: req.id, result: { req, cwd: process.cwd(), env: process.env } };'),
    });
    f.registry.rescan();
    const r = await f.host.call("echo.show", { x: 1 }, { sessionKey: "triage:repo#1", requestId: "req_abc", traceId: "0af7651916cd43dd8448eb211c80319c", callbackUrl: "http://127.0.0.1:1/v1/plugins/callback/" });
    assert.equal(r.status, "ok", JSON.stringify(r));
    const got = (r as { result: { req: { id: number; params: unknown; method: string; jsonrpc: string }; cwd: string; env: Record<string, string> } }).result;
    assert.deepEqual([got.req.jsonrpc, got.req.method, typeof got.req.id], ["2.0", "tools/call", "number"]);
    assert.deepEqual(got.req.params, {
      name: "show", arguments: { x: 1 }, session_key: "triage:repo#1", request_id: "req_abc", trace_id: "0af7651916cd43dd8448eb211c80319c",
      callback_url: "http://127.0.0.1:1/v1/plugins/callback/",
    });
    assert.equal(got.cwd, join(f.root, "echo"));
    assert.deepEqual(Object.keys(got.env).filter((k) => !["PWD", "SHLVL", "_"].includes(k)).sort(), [
      "AGENT_AUTOLOOP_IMPORT_REFUSED", "AGENT_AUTOLOOP_PLUGIN_FOLDER", "AGENT_AUTOLOOP_TOOL_HOST", "HOME", "LANG", "NODE_OPTIONS", "PATH", "PLUGIN_MODE",
      "PYTHONDONTWRITEBYTECODE", "PYTHONNOUSERSITE", "PYTHONPYCACHEPREFIX", "TSX_DISABLE_CACHE", "TZ",
    ]);
    // Hostile round 43: its Node imports by name confined to its folder (F43b-1), no compiled Python of its folder (F43b-5).
    assert.equal(got.env.AGENT_AUTOLOOP_PLUGIN_FOLDER, realpathSync(join(f.root, "echo")));
    assert.equal(got.env.NODE_OPTIONS, `--require="${join(realpathSync(engineDir), "dist", "src", "plugins", "import-confinement-start.cjs")}"`);
    assert.deepEqual([got.env.PYTHONDONTWRITEBYTECODE, got.env.PYTHONPYCACHEPREFIX, got.env.TSX_DISABLE_CACHE], ["1", "/dev/null/agent-autoloop-pycache", "1"]);
    // The tool host's mark (src/tools/orphans.ts): its pid, start time and home, no secret.
    assert.match(got.env.AGENT_AUTOLOOP_TOOL_HOST!, /^\d+:\d+:$/);
    assert.equal(got.env.PLUGIN_MODE, "test");
    // Issue 26 #2: a Python interpreter the plugin starts loads nothing from the user's site-packages.
    assert.equal(got.env.PYTHONNOUSERSITE, "1");
  } finally {
    await f.close();
  }
});

test("progress notifications are relayed and stderr goes to the log as plugin.<name> lines", async () => {
  const f = hostFixture();
  try {
    writePlugin(f.root, "slow", syncManifest("slow", "node", ["main.js"], toolToml("work")), {
      "main.js": nodePlugin(`
        process.stderr.write("starting\\nsecond line\\n");
        process.stdout.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/progress", params: { request_id: req.params.request_id, percent: 50, message: "half done" } }) + "\\n");
        return { jsonrpc: "2.0", id: req.id, result: { done: true } };`),
    });
    f.registry.rescan();
    const progress: unknown[] = [];
    const r = await f.host.call("slow.work", {}, { sessionKey: "s", onProgress: (p) => progress.push(p) });
    assert.equal(r.status === "ok" && JSON.stringify(r.result), '{"done":true}');
    assert.deepEqual(progress, [{ percent: 50, message: "half done" }]);
    assert.deepEqual(f.logs, ["plugin.slow starting", "plugin.slow second line"]);
  } finally {
    await f.close();
  }
});

test("refused calls start nothing: a bad name, an unknown plugin or tool, arguments failing the schema, a rejected plugin", async () => {
  const f = hostFixture();
  try {
    writePlugin(f.root, "marker", syncManifest("marker", "sh", ["-c", "touch started"], toolToml("greet", 'type = "object"\nrequired = ["name"]\nproperties = { name = { type = "string" } }')));
    writePlugin(f.root, "broken", 'name = "broken"\n');
    f.registry.rescan();
    const ctx = { sessionKey: "s" };
    const cases = await Promise.all([
      f.host.call("marker", ada, ctx), f.host.call("nobody.greet", ada, ctx), f.host.call("marker.wave", ada, ctx),
      f.host.call("marker.greet", {}, ctx), f.host.call("marker.greet", { name: 7 }, ctx), f.host.call("marker.greet", [], ctx),
      f.host.call("broken.x", {}, ctx),
    ]);
    assert.deepEqual(cases.map((c) => [c.status, "code" in c ? c.code : "", "message" in c ? c.message : ""]), [
      ["refused", "tools.bad_name", "a tool is named <plugin>.<tool>: marker"],
      ["refused", "tools.unknown_plugin", "no such tool plugin: nobody"],
      ["refused", "tools.unknown_tool", "plugin marker has no tool wave"],
      ["refused", "tools.invalid_arguments", "wrong arguments for marker.greet: name: required"],
      ["refused", "tools.invalid_arguments", "wrong arguments for marker.greet: name: must be string"],
      ["refused", "tools.invalid_arguments", "wrong arguments for marker.greet: arguments: must be object"],
      ["refused", "tools.unknown_plugin", `plugin broken has no valid manifest: ${join(f.root, "broken", "manifest.toml")}:1: version: required`],
    ]);
    assert.equal(existsSync(join(f.root, "marker", "started")), false, "the plugin never started");
  } finally {
    await f.close();
  }
});

test("communication.timeout_ms ends the call and its whole process group: no grandchild is left, not even one that left the group", async () => {
  const f = hostFixture();
  try {
    writePlugin(f.root, "hang", syncManifest("hang", "sh", ["main.sh"], `[communication]\ntimeout_ms = 500\n\n${toolToml("wait")}`), {
      "main.sh": "sleep 300 &\necho $! > pids\necho $$ >> pids\nsh -c 'sleep 300' &\necho $! >> pids\nsetsid sh -c 'echo $$ >> pids; exec sleep 300' &\nwait\n",
    });
    f.registry.rescan();
    const r = await f.host.call("hang.wait", {}, { sessionKey: "s" });
    assert.deepEqual([r.status, "message" in r && r.message], ["timeout", "plugin hang did not answer within 500 ms; its whole process group was ended"]);
    const pids = pidsIn(join(f.root, "hang", "pids"));
    assert.equal(pids.length, 4, "three in the group, one that left it with setsid");
    assert.deepEqual(pids.filter(running), [], "no process of the call is left");
  } finally {
    await f.close();
  }
});

test("the caller's timeout wins over the manifest's", async () => {
  const f = hostFixture();
  try {
    writePlugin(f.root, "hang", syncManifest("hang", "sleep", ["300"], toolToml("wait")));
    f.registry.rescan();
    const r = await f.host.call("hang.wait", {}, { sessionKey: "s", timeoutMs: 300 });
    assert.deepEqual([r.status, "message" in r && r.message], ["timeout", "plugin hang did not answer within 300 ms; its whole process group was ended"]);
  } finally {
    await f.close();
  }
});

test("async: a task_id result is accepted and its process may work on until the timeout; task ids that cannot go into a URL are refused; a task_id that is not a string is a sync answer, as in the original host", async () => {
  const f = hostFixture();
  try {
    const script = (task: unknown) => nodePlugin(`
      require("node:fs").writeFileSync("pid", String(process.pid));
      process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: req.id, result: { task_id: ${JSON.stringify(task)} } }) + "\\n");
      setTimeout(() => require("node:fs").writeFileSync("finished", "yes"), 300);
      setInterval(() => {}, 1000);
      return undefined;`);
    writePlugin(f.root, "later", syncManifest("later", "node", ["main.js"], `[communication]\ntimeout_ms = 3000\n\n${toolToml("job")}`, "async"), { "main.js": script("task_0123456789abcdef") });
    writePlugin(f.root, "short", syncManifest("short", "node", ["main.js"], toolToml("job"), "async"), { "main.js": script("task xyz 789") });
    // Only a string task_id parks a call: the original host takes any other result, a task_id of another type
    // included, as the call's answer (research notes, wire protocol), and plugins written for it keep working.
    writePlugin(f.root, "objectid", syncManifest("objectid", "node", ["main.js"], toolToml("job"), "async"), { "main.js": script({ id: "task_0123456789abcdef" }) });
    f.registry.rescan();
    const r = await f.host.call("later.job", {}, { sessionKey: "s" });
    assert.deepEqual([r.status, "taskId" in r && r.taskId], ["accepted", "task_0123456789abcdef"]);
    const pid = Number(readFileSync(join(f.root, "later", "pid"), "utf8"));
    await until(() => existsSync(join(f.root, "later", "finished")), 10_000, "the background work");
    await until(() => !running(pid), 10_000, "the task's process to be ended at its timeout");
    const s = await f.host.call("short.job", {}, { sessionKey: "s" });
    assert.deepEqual([s.status, "code" in s && s.code, "message" in s && s.message], [
      "error", "tools.bad_task_id",
      "plugin short gave an unusable task_id: it must be 1 to 200 letters, digits or . _ ~ - (it goes into the callback's URL)",
    ]);
    assert.equal(running(Number(readFileSync(join(f.root, "short", "pid"), "utf8"))), false);
    const o = await f.host.call("objectid.job", {}, { sessionKey: "s" });
    assert.deepEqual([o.status, "result" in o && o.result], ["ok", { task_id: { id: "task_0123456789abcdef" } }]);
  } finally {
    await f.close();
  }
});

test("a manifest without tools has them asked with tools/list when needed, once per manifest digest", async () => {
  // Trusted (the owner's "always allow"): asked as its manifest runs it, so it can note what it was asked in its own
  // folder; untrusted plugins are asked in the review sandbox (tools-review.test.ts).
  const f = hostFixture({ trusted: () => true });
  try {
    const dir = writePlugin(f.root, "lister", syncManifest("lister", "node", ["main.js"]), {
      "main.js": nodePlugin(`
        require("node:fs").appendFileSync("asked", req.method + "\\n");
        if (req.method === "tools/list") return { jsonrpc: "2.0", id: req.id, result: { tools: [{ name: "add", description: "Adds", inputSchema: { type: "object", required: ["a"], properties: { a: { type: "number" } } } }] } };
        return { jsonrpc: "2.0", id: req.id, result: { sum: req.params.arguments.a + 1 } };`),
    });
    f.registry.rescan();
    assert.equal(existsSync(join(dir, "asked")), false, "discovery asked nothing");
    const tools = await f.host.tools("lister");
    assert.deepEqual(tools.ok && [tools.source, tools.tools.map((x) => [x.qualifiedName, x.tool.parameters])], ["tools/list", [["lister.add", { type: "object", required: ["a"], properties: { a: { type: "number" } } }]]]);
    const bad = await f.host.call("lister.add", { a: "x" }, { sessionKey: "s" });
    assert.equal(bad.status, "refused");
    const ok = await f.host.call("lister.add", { a: 2 }, { sessionKey: "s" });
    assert.equal(ok.status === "ok" && JSON.stringify(ok.result), '{"sum":3}');
    assert.equal(readFileSync(join(dir, "asked"), "utf8"), "tools/list\ntools/call\n", "tools/list was asked once");
    writeFileSync(join(dir, "manifest.toml"), `${syncManifest("lister", "node", ["main.js"])}\n# changed\n`);
    f.registry.rescan();
    await f.host.tools("lister");
    assert.equal(readFileSync(join(dir, "asked"), "utf8"), "tools/list\ntools/call\ntools/list\n", "a changed manifest asks again");
  } finally {
    await f.close();
  }
});
