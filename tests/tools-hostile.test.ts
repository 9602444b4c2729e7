/**
 * Hostile tool plugins (issue 16): each gets a clear error naming it, and nothing of it is left running. Plugins
 * that flood stdout, never answer, answer twice, exit mid-call, write junk or a wrong id; sandboxed ones that
 * fork-bomb under `pids`, write outside their binds, or go over their memory.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { toolLimits } from "../src/tools/index.js";
import { canonicalJson, toolArgsDigest, toolArgsPreview } from "../src/protocol/tool-calls.js";
import { hostFixture, leftovers, nodePlugin, pidsIn, probeBwrap, running, syncManifest, tempDir, toolToml, writePlugin } from "./tools-helpers.js";

/** Runs `main.js` (a Node script) as plugin `name` with tool `go` and optional extra manifest TOML; returns the outcome. */
async function callScript(script: string, extra = "", files: Record<string, string> = {}) {
  const f = hostFixture();
  try {
    writePlugin(f.root, "bad", syncManifest("bad", "node", ["main.js"], `${extra}\n${toolToml("go")}`), { "main.js": script, ...files });
    f.registry.rescan();
    const r = await f.host.call("bad.go", {}, { sessionKey: "s" });
    return { r, pids: pidsIn(join(f.root, "bad", "pids")), logs: [...f.logs], root: f.root };
  } finally {
    await f.close();
  }
}

const reportPid = 'require("node:fs").appendFileSync("pids", process.pid + "\\n");';

test("a plugin that floods stdout is ended at the named limit", async () => {
  const { r, pids } = await callScript(`${reportPid}
    const line = JSON.stringify({ jsonrpc: "2.0", method: "notifications/progress", params: { message: "x".repeat(60000) } }) + "\\n";
    const flood = () => { while (process.stdout.write(line)); process.stdout.once("drain", flood); };
    flood();`);
  assert.deepEqual([r.status, "message" in r && r.message], ["error", `plugin bad wrote more than ${toolLimits.stdoutMaxBytes} bytes to stdout without answering; it was ended`]);
  assert.deepEqual(pids.filter(running), []);
});

test("a stdout line longer than the named limit is refused without being held whole", async () => {
  const { r, pids } = await callScript(`${reportPid}
    const chunk = "a".repeat(1 << 20);
    const more = () => { while (process.stdout.write(chunk)); process.stdout.once("drain", more); };
    more();`);
  assert.deepEqual([r.status, "message" in r && r.message], ["error", `plugin bad wrote a stdout line longer than ${toolLimits.stdoutLineMaxBytes} bytes; it was ended`]);
  assert.deepEqual(pids.filter(running), []);
});

test("a plugin that never answers times out", async () => {
  const { r, pids } = await callScript(`${reportPid} setInterval(() => {}, 1000);`, "[communication]\ntimeout_ms = 400\n");
  assert.deepEqual([r.status, "message" in r && r.message], ["timeout", "plugin bad did not answer within 400 ms; its whole process group was ended"]);
  assert.deepEqual(pids.filter(running), []);
});

test("a plugin that answers twice: the first answer counts, the rest is logged as ignored", async () => {
  const { r, pids, logs } = await callScript(nodePlugin(`${reportPid}
    process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: req.id, result: { n: 1 } }) + "\\n");
    return { jsonrpc: "2.0", id: req.id, result: { n: 2 } };`));
  assert.equal(r.status === "ok" && JSON.stringify(r.result), '{"n":1}');
  assert.deepEqual(logs, ["plugin.bad output after the response was ignored"]);
  assert.deepEqual(pids.filter(running), []);
});

test("a plugin that exits mid-call, one that writes junk, one that answers another id: plugin errors naming it", async () => {
  const exit = await callScript(`${reportPid} process.stderr.write("giving up\\n"); process.exit(3);`);
  assert.deepEqual([exit.r.status, "message" in exit.r && exit.r.message, exit.logs], ["error", "plugin bad exited before answering (exit 3)", ["plugin.bad giving up"]]);
  const junk = await callScript(`${reportPid} console.log("Loading model..."); setInterval(() => {}, 1000);`);
  assert.deepEqual([junk.r.status, "message" in junk.r && junk.r.message], ["error", "plugin bad wrote a line that is not JSON to stdout: Loading model..."]);
  const array = await callScript(`${reportPid} console.log("[1,2]"); setInterval(() => {}, 1000);`);
  assert.deepEqual([array.r.status, "message" in array.r && array.r.message], ["error", "plugin bad wrote something that is not a JSON-RPC object to stdout: [1,2]"]);
  const wrong = await callScript(nodePlugin(`${reportPid} return { jsonrpc: "2.0", id: 999999, result: {} };`));
  assert.match("message" in wrong.r ? wrong.r.message : "", /^plugin bad answered with id 999999, expected \d+$/);
  const noVersion = await callScript(nodePlugin(`${reportPid} return { id: req.id, result: {} };`));
  assert.deepEqual("message" in noVersion.r && noVersion.r.message, 'plugin bad sent a response that is not JSON-RPC 2.0: jsonrpc must be "2.0"');
  const badError = await callScript(nodePlugin(`${reportPid} return { jsonrpc: "2.0", id: req.id, error: "no" };`));
  assert.deepEqual("message" in badError.r && badError.r.message, "plugin bad sent a response that is not JSON-RPC 2.0: error must be {code: integer, message: string}");
  for (const x of [exit, junk, array, wrong, noVersion, badError]) assert.deepEqual(x.pids.filter(running), []);
  const err = await callScript(nodePlugin('return { jsonrpc: "2.0", id: req.id, error: { code: -32602, message: "missing required param: name" } };'));
  assert.deepEqual([err.r.status, "code" in err.r && err.r.code, "message" in err.r && err.r.message], ["error", -32602, "missing required param: name"]);
});

test("a result or error data nested far deeper than the named limit is a plugin error naming it; deep arguments are refused before it starts", async () => {
  const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
  const result = await callScript(nodePlugin(`${reportPid} process.stdout.write('{"jsonrpc":"2.0","id":' + req.id + ',"result":${deep}}\\n'); return undefined;`));
  assert.deepEqual([result.r.status, "message" in result.r && result.r.message], ["error", `plugin bad sent a response that is not JSON-RPC 2.0: result: nested deeper than ${toolLimits.resultDepthMax} levels`]);
  const data = await callScript(nodePlugin(`${reportPid} process.stdout.write('{"jsonrpc":"2.0","id":' + req.id + ',"error":{"code":1,"message":"m","data":${deep}}}\\n'); return undefined;`));
  assert.deepEqual([data.r.status, "message" in data.r && data.r.message], ["error", `plugin bad sent a response that is not JSON-RPC 2.0: error.data: nested deeper than ${toolLimits.resultDepthMax} levels`]);
  const id = await callScript(nodePlugin(`${reportPid} process.stdout.write('{"jsonrpc":"2.0","id":${deep},"result":1}\\n'); return undefined;`));
  assert.match("message" in id.r ? id.r.message : "", /^plugin bad answered with id \[…\], expected \d+$/);
  for (const x of [result, data, id]) assert.deepEqual(x.pids.filter(running), []);
  const f = hostFixture();
  try {
    writePlugin(f.root, "bad", syncManifest("bad", "node", ["main.js"], toolToml("go")), { "main.js": `${reportPid}` });
    f.registry.rescan();
    const args = JSON.parse(`{"a":${deep}}`) as unknown;
    const refusal = `wrong arguments for bad.go: arguments: nested deeper than ${toolLimits.argumentsDepthMax} levels`;
    assert.deepEqual(await f.host.check("bad.go", args), { ok: false, status: "refused", code: "tools.invalid_arguments", message: refusal });
    const r = await f.host.call("bad.go", args, { sessionKey: "s" });
    assert.deepEqual([r.status, "message" in r && r.message], ["refused", refusal]);
    assert.equal(existsSync(join(f.root, "bad", "pids")), false, "nothing started");
    assert.match(toolArgsDigest(args), /^sha256:[0-9a-f]{64}$/);
    assert.equal(toolArgsPreview(args), `{"a":${"[".repeat(506)}…`);
    assert.equal(canonicalJson({ b: 1, a: [1, { d: 2, c: [] }, null, "x"] }), '{"a":[1,{"c":[],"d":2},null,"x"],"b":1}');
  } finally {
    await f.close();
  }
});

test("a command that does not exist is a clear error", async () => {
  const f = hostFixture();
  try {
    writePlugin(f.root, "ghost", syncManifest("ghost", "no-such-program-here", [], toolToml("go")));
    f.registry.rescan();
    const r = await f.host.call("ghost.go", {}, { sessionKey: "s" });
    assert.deepEqual([r.status, "message" in r && r.message], ["error", "plugin ghost could not be started: ENOENT"]);
  } finally {
    await f.close();
  }
});

const sandboxed = async () => (await probeBwrap("bwrap")).ok;

test("sandboxed: a fork bomb under pids is held to its limit and ended with everything it started", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const f = hostFixture();
  try {
    writePlugin(f.root, "bomb", syncManifest("bomb", "sh", ["main.sh"], `[communication]\ntimeout_ms = 1500\n\n[sandbox]\npids = 20\n\n${toolToml("go")}`), {
      "main.sh": "bomb() { bomb | bomb & }; bomb\nsleep 300\n",
    });
    writePlugin(f.root, "many", syncManifest("many", "python3", ["main.py"], `[sandbox]\npids = 20\n\n${toolToml("go")}`), {
      "main.py": [
        "import json, os, sys, time",
        "req = json.loads(sys.stdin.readline())",
        "children = 0",
        "for _ in range(50):",
        "    try:",
        "        pid = os.fork()",
        "    except OSError:",
        "        continue",
        "    if pid == 0:",
        "        time.sleep(300)",
        "        os._exit(0)",
        "    children += 1",
        'print(json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": {"children": children}}), flush=True)',
      ].join("\n"),
    });
    f.registry.rescan();
    const r = await f.host.call("bomb.go", {}, { sessionKey: "s" });
    assert.equal(r.status, "timeout");
    const many = await f.host.call("many.go", {}, { sessionKey: "s" });
    assert.equal(many.status, "ok", JSON.stringify(many));
    const children = (many as { result: { children: number } }).result.children;
    assert.ok(children < 20 && children > 0, `forks that worked: ${children} of 50, the limit is 20 processes`);
    assert.deepEqual(leftovers(), [], "the call's cgroup is removed, so nothing is left in it");
  } finally {
    await f.close();
  }
});

test("sandboxed: writes outside the binds fail, writes to a writable bind land", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const outside = tempDir();
  // The writable bind lies outside every plugin folder (issue 26 round 5, F6).
  const out = tempDir();
  const f = hostFixture({ hiddenPaths: [] });
  try {
    writePlugin(f.root, "writer", syncManifest("writer", "node", ["main.js"], `[sandbox]\nread_only_root = true\nbinds = ["${out}:/data"]\n\n${toolToml("go")}`), {
      "main.js": nodePlugin(`
        const fs = require("node:fs");
        const tryWrite = (p) => { try { fs.writeFileSync(p, "x"); return "written"; } catch (e) { return e.code; } };
        return { jsonrpc: "2.0", id: req.id, result: {
          outside: tryWrite(${JSON.stringify(join(outside, "escaped"))}), etc: tryWrite("/etc/escaped"), root: tryWrite("/escaped"),
          own: tryWrite("/workspace/manifest.toml"), bind: tryWrite("/data/ok"), tmp: tryWrite("/tmp/ok"),
        } };`),
    });
    f.registry.rescan();
    const r = await f.host.call("writer.go", {}, { sessionKey: "s" });
    assert.equal(r.status, "ok", JSON.stringify(r));
    assert.deepEqual((r as { result: unknown }).result, { outside: "ENOENT", etc: "EROFS", root: "EROFS", own: "EROFS", bind: "written", tmp: "written" });
    assert.equal(existsSync(join(outside, "escaped")), false);
    assert.equal(readFileSync(join(out, "ok"), "utf8"), "x");
  } finally {
    await f.close();
    rmSync(outside, { recursive: true, force: true });
    rmSync(out, { recursive: true, force: true });
  }
});

test("sandboxed: going over the memory limit reports oom", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const f = hostFixture();
  try {
    writePlugin(f.root, "hog", syncManifest("hog", "node", ["main.js"], `[sandbox]\nmemory = "64m"\n\n${toolToml("go")}`), {
      "main.js": nodePlugin("const keep = []; for (;;) keep.push(Buffer.alloc(8 << 20, 1));"),
    });
    f.registry.rescan();
    const r = await f.host.call("hog.go", {}, { sessionKey: "s" });
    assert.deepEqual([r.status, "message" in r && r.message], ["oom", "plugin hog went over its memory limit 67108864 B and was killed by the kernel"]);
    assert.deepEqual(leftovers(), []);
  } finally {
    await f.close();
  }
});
