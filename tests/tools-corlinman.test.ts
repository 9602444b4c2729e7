/**
 * corlinman's own plugins, unchanged (issue 34): fixtures written here that reproduce what its QA scenarios, its test
 * plugins and its docs do — none of its files is copied. The tool host's side: the QA runner's echo plugin (declared
 * `sync`) with the scenarios' arguments and `expect` blocks, a short task id, FailoverReason names in error codes, and
 * `plugins conformance` checks that test what they say.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { spawn } from "node:child_process";
import { conformance, type ConformanceLine } from "../src/tools/index.js";
import { groupLeftAfter, processGroupMembers } from "../src/tools/conformance-kit.js";
import { examples, hostFixture, nodePlugin, running, syncManifest, toolToml, until, writePlugin } from "./tools-helpers.js";

/**
 * The echo plugin corlinman's QA runner writes for its plugin scenarios, in our words: `mode` "echo" (the default)
 * answers `{"echo": <arguments>}`, `mode` "task" answers `{"task_id": <arguments.task_id>}`. Declared `sync`.
 */
const qaEcho = nodePlugin(`
  const a = req.params.arguments;
  if ((a.mode ?? "echo") === "task") return { jsonrpc: "2.0", id: req.id, result: { task_id: a.task_id } };
  return { jsonrpc: "2.0", id: req.id, result: { echo: a } };`);

/** The value at a dotted `path` of `v` (the scenarios' `success_json_contains[].path`). */
const at = (v: unknown, path: string): unknown => path.split(".").reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], v);

test("issue 34 #1, #2: the QA scenarios' echo plugin declared sync meets plugin-sync-echo-success and plugin-async-accepted-for-later (a task_id from a sync plugin, qa-task-1234, is accepted)", async () => {
  const f = hostFixture();
  try {
    writePlugin(f.root, "qa-echo", syncManifest("qa-echo", "node", ["main.js"], toolToml("echo")), { "main.js": qaEcho });
    f.registry.rescan();
    // plugin-sync-echo-success: arguments {mode: echo, payload: "hello", number: 42}; expect echo.payload = "hello", echo.number = 42.
    const sync = await f.host.call("qa-echo.echo", { mode: "echo", payload: "hello", number: 42 }, { sessionKey: "qa" });
    assert.equal(sync.status, "ok");
    const result = sync.status === "ok" ? sync.result : null;
    assert.deepEqual([at(result, "echo.payload"), at(result, "echo.number")], ["hello", 42]);
    // plugin-async-accepted-for-later: arguments {mode: task, task_id: qa-task-1234}; expect accepted_task_id = qa-task-1234.
    const task = await f.host.call("qa-echo.echo", { mode: "task", task_id: "qa-task-1234" }, { sessionKey: "qa" });
    assert.deepEqual([task.status, "taskId" in task && task.taskId], ["accepted", "qa-task-1234"]);
  } finally {
    await f.close();
  }
});

test("issue 34 #2: the task ids of corlinman's material (task_xyz789, abc-123) are accepted from an async plugin; one that cannot go into a URL is not", async () => {
  const f = hostFixture();
  try {
    const answer = (task: string) => nodePlugin(`return { jsonrpc: "2.0", id: req.id, result: { task_id: ${JSON.stringify(task)} } };`);
    writePlugin(f.root, "docs-async", syncManifest("docs-async", "node", ["main.js"], toolToml("job"), "async"), { "main.js": answer("task_xyz789") });
    writePlugin(f.root, "abc", syncManifest("abc", "node", ["main.js"], toolToml("job"), "async"), { "main.js": answer("abc-123") });
    writePlugin(f.root, "slash", syncManifest("slash", "node", ["main.js"], toolToml("job"), "async"), { "main.js": answer("a/b") });
    f.registry.rescan();
    for (const [tool, id] of [["docs-async.job", "task_xyz789"], ["abc.job", "abc-123"]] as const) {
      const r = await f.host.call(tool, {}, { sessionKey: "s" });
      assert.deepEqual([r.status, "taskId" in r && r.taskId], ["accepted", id]);
    }
    const bad = await f.host.call("slash.job", {}, { sessionKey: "s" });
    assert.deepEqual([bad.status, "message" in bad && bad.message], ["error", "plugin slash gave an unusable task_id: it must be 1 to 200 letters, digits or . _ ~ - (it goes into the callback's URL)"]);
  } finally {
    await f.close();
  }
});

/**
 * A plugin that starts a child sleeping 60 s, notes both pids in `pids`, and answers after `answerMs` (ending the
 * child then).
 */
const napper = (answerMs: number) => nodePlugin(`
  const child = require("node:child_process").spawn("sleep", ["60"], { stdio: "ignore" });
  require("node:fs").appendFileSync("pids", process.pid + " " + child.pid + "\\n");
  setTimeout(() => { child.kill(); process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: req.id, result: {} }) + "\\n"); }, ${answerMs});
  return undefined;`);

/** Asserts that every process a `napper` in `dir` noted is gone; @returns how many it noted. */
function allEnded(dir: string): number {
  const pids = readFileSync(join(dir, "pids"), "utf8").split(/\s+/).filter(Boolean).map(Number);
  for (const pid of pids) assert.equal(running(pid), false, `pid ${pid}`);
  return pids.length;
}

const verdicts = (lines: ConformanceLine[]) => lines.map((l) => `${l.verdict} ${l.check}`);
const line = (lines: ConformanceLine[], check: string) => lines.find((l) => l.check === check)!;

test("issue 34 #9: conformance forces a timeout — a plugin that sleeps past its timeout: the good call fails, the group check is ok and no process of it is left", async () => {
  const f = hostFixture();
  try {
    // It starts a child that would sleep 60 s, notes both pids, and answers only after 5 s: past its 400 ms timeout.
    const sleeper = writePlugin(f.root, "sleeper", syncManifest("sleeper", "node", ["main.js"], `[communication]\ntimeout_ms = 400\n\n${toolToml("nap")}`), {
      "main.js": napper(5000),
    });
    const lines = await conformance(sleeper, { lang: "en" });
    assert.deepEqual(verdicts(lines).slice(0, 3), ["ok the manifest reads and is valid", "ok tool list", "fail a good call"]);
    assert.deepEqual([line(lines, "a timeout ends its whole process group").verdict, line(lines, "a timeout ends its whole process group").detail], [
      "ok", "timed out after 400 ms; no process of its group is left",
    ]);
    assert.ok(allEnded(sleeper) >= 2);
  } finally {
    await f.close();
  }
});

test("issue 34 #9: conformance forces a timeout on a plugin that answers in time (half its good call's time), and its sleeping child goes with the group", async () => {
  const f = hostFixture();
  try {
    // It answers after 600 ms, a child sleeping meanwhile: the forced timeout (about 300 ms) comes while both run.
    const slow = writePlugin(f.root, "slow", syncManifest("slow", "node", ["main.js"], toolToml("nap")), {
      "main.js": napper(600),
    });
    const lines = await conformance(slow, { lang: "en" });
    assert.equal(line(lines, "a good call").verdict, "ok");
    const timeout = line(lines, "a timeout ends its whole process group");
    assert.equal(timeout.verdict, "ok");
    assert.match(timeout.detail, /^timed out after \d+ ms; no process of its group is left$/);
    assert.ok(allEnded(slow) >= 4, "the good call and the forced one");
  } finally {
    await f.close();
  }
});

test("issue 34 #9: the group check gives a killed group its moment to go (a process seen at once is not yet 'left')", async () => {
  // a group whose only process ends 300 ms after it starts: the first look sees it, the check waits it out; one that
  // stays is named once the wait is over (the verification from outside saw 1 FIX in 30 runs for a plugin with no child)
  const brief = spawn("sleep", ["0.3"], { detached: true, stdio: "ignore" });
  const stays = spawn("sleep", ["30"], { detached: true, stdio: "ignore" });
  try {
    assert.deepEqual(processGroupMembers(brief.pid!), [brief.pid]);
    assert.deepEqual(await groupLeftAfter(brief.pid!, 5_000), []);
    assert.deepEqual(await groupLeftAfter(stays.pid!, 200), [stays.pid]);
  } finally {
    process.kill(-stays.pid!, "SIGKILL");
  }
});

test("issue 34 #9: an accepted task is reported as such, not as killed after 1 s", async () => {
  const f = hostFixture();
  try {
    const later = writePlugin(f.root, "later", syncManifest("later", "node", ["main.js"], `[communication]\ntimeout_ms = 2000\n\n${toolToml("job")}`, "async"), {
      "main.js": nodePlugin(`
        setInterval(() => {}, 1000);
        setTimeout(() => require("node:fs").writeFileSync("worked", "yes"), 1500);
        return { jsonrpc: "2.0", id: req.id, result: { task_id: "task_xyz789" } };`),
    });
    const lines = await conformance(later, { lang: "en" });
    assert.match(line(lines, "a good call").detail, /→ \{"status":"accepted","taskId":"task_xyz789"\}$/);
    const exit = line(lines, "exits on its own when its input ends");
    assert.deepEqual([exit.verdict, exit.detail], ["skip", "accepted as a task: its process may work on until the call's timeout (2000 ms)"]);
    await until(() => existsSync(join(later, "worked")), 10_000, "the task's work after 1.5 s: it was not killed after 1 s");
  } finally {
    await f.close();
  }
});

/**
 * An MCP server as corlinman's MCP adapter answers (a plain stdio JSON-RPC server written here): `say` succeeds with
 * `{content, isError: false}`, `fail` is a tool error, `{content, isError: true}`.
 */
const mcpServer = `const rl = require("node:readline").createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\\n");
rl.on("line", (line) => {
  const req = JSON.parse(line);
  if (req.method === "initialize") return send({ id: req.id, result: { protocolVersion: req.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "adapter", version: "1.0.0" } } });
  if (req.method === "tools/list") return send({ id: req.id, result: { tools: [{ name: "say", inputSchema: { type: "object" } }, { name: "fail", inputSchema: { type: "object" } }] } });
  if (req.method === "tools/call" && req.params.name === "say") return send({ id: req.id, result: { content: [{ type: "text", text: "said" }], isError: false } });
  if (req.method === "tools/call") return send({ id: req.id, result: { content: [{ type: "text", text: "disk full" }], isError: true } });
  if (req.id !== undefined) send({ id: req.id, result: {} });
});
`;

test("issue 34 #6: an MCP plugin's success keeps isError: false; its tool error is JSON-RPC -32603, as corlinman's MCP adapter gives them", async () => {
  const f = hostFixture();
  try {
    writePlugin(f.root, "adapter", `manifest_version = 3\nname = "adapter"\nversion = "1.0.0"\nplugin_type = "mcp"\n\n[entry_point]\ncommand = "node"\nargs = ["server.js"]\n\n[mcp]\ntools_allowlist = { mode = "all" }\n`, { "server.js": mcpServer });
    f.registry.rescan();
    const ok = await f.host.call("adapter.say", {}, { sessionKey: "s" });
    assert.deepEqual([ok.status, ok.status === "ok" && ok.result], ["ok", { content: [{ type: "text", text: "said" }], isError: false }]);
    const bad = await f.host.call("adapter.fail", {}, { sessionKey: "s" });
    assert.deepEqual([bad.status, "code" in bad && bad.code, "message" in bad && bad.message], ["error", -32603, "disk full"]);
  } finally {
    await f.close();
  }
});

test("issue 34 #8: a service plugin's error event shows corlinman's FailoverReason name (FORMAT), not FAILOVER_REASON_FORMAT", async () => {
  const f = hostFixture();
  try {
    const main = join(examples, "hello-service", "main.mjs");
    writePlugin(f.root, "hello-service", readFileSync(join(examples, "hello-service", "manifest.toml"), "utf8").replace('args = ["main.mjs"]', `args = [${JSON.stringify(main)}]`));
    f.registry.rescan();
    await f.host.start();
    const refuse = await f.host.call("hello-service.refuse", {}, { sessionKey: "s" });
    assert.deepEqual([refuse.status, "code" in refuse && refuse.code], ["error", "FORMAT"]);
  } finally {
    await f.close();
  }
});
