/**
 * Conformance of tool plugins to the contract (later `agent-autoloop plugins conformance <folder>`): every example
 * passes; a plugin written exactly to §3 (no error for an unknown tool) gets a warning; broken ones get failures.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { conformance, type ConformanceLine } from "../src/tools/index.js";
import { examples, hostFixture, nodePlugin, syncManifest, toolToml, writePlugin } from "./tools-helpers.js";

const verdicts = (lines: ConformanceLine[]) => lines.map((l) => `${l.verdict} ${l.check}`);

for (const name of ["hello-python", "hello-node", "hello-bash"]) {
  test(`conformance: ${name} passes every check`, async () => {
    const lines = await conformance(join(examples, name), { lang: "en" });
    assert.deepEqual(verdicts(lines), [
      "ok the manifest reads and is valid", "ok tool list", "ok a good call", "ok the response echoes the request's id",
      "ok stdout carries only JSON-RPC", "ok exits on its own when its input ends", "ok a timeout ends its whole process group",
      "ok a call of a tool that does not exist", "ok arguments failing the schema are refused by the host; the plugin is not started",
    ]);
    assert.match(lines[2]!.detail, /^greet \{"name":"conformance"\} → \{"status":"ok","result":\{"content":"hello, conformance"\}\}$/);
  });
}

test("conformance: hello-service (a service plugin) answers a call", async () => {
  const f = hostFixture();
  try {
    const manifest = readFileSync(join(examples, "hello-service", "manifest.toml"), "utf8").replace('args = ["main.mjs"]', `args = [${JSON.stringify(join(examples, "hello-service", "main.mjs"))}]`);
    const dir = writePlugin(f.root, "hello-service", manifest);
    const lines = await conformance(dir, { lang: "en", socketDir: join(f.root, ".s") });
    assert.deepEqual(verdicts(lines), ["ok the manifest reads and is valid", "ok a good call"]);
  } finally {
    await f.close();
  }
});

test("conformance: a §3-style plugin that greets any tool gets a warning; one that answers id 1 and prints junk fails", async () => {
  const f = hostFixture();
  try {
    const lax = writePlugin(f.root, "lax", syncManifest("lax", "node", ["main.js"], toolToml("greet")), {
      "main.js": nodePlugin('if (req.method === "tools/call") return { jsonrpc: "2.0", id: req.id, result: { content: "hello" } };'),
    });
    assert.deepEqual(verdicts(await conformance(lax, { lang: "en" })), [
      "ok the manifest reads and is valid", "ok tool list", "ok a good call", "ok the response echoes the request's id",
      "ok stdout carries only JSON-RPC", "ok exits on its own when its input ends", "ok a timeout ends its whole process group",
      "warn a call of a tool that does not exist", "skip arguments failing the schema are refused by the host; the plugin is not started",
    ]);
    const one = writePlugin(f.root, "one", syncManifest("one", "node", ["main.js"], toolToml("t")), {
      "main.js": nodePlugin('return { jsonrpc: "2.0", id: 1, result: {} };'),
    });
    const lines = await conformance(one, { lang: "en" });
    assert.deepEqual(verdicts(lines).slice(2, 5), ["fail a good call", "fail the response echoes the request's id", "ok stdout carries only JSON-RPC"]);
    assert.equal(lines[3]!.detail, "plugin one answered with id 1, expected 4242");
    const noisy = writePlugin(f.root, "noisy", syncManifest("noisy", "node", ["main.js"], toolToml("t")), {
      "main.js": nodePlugin('console.log("debug: got a request"); return { jsonrpc: "2.0", id: req.id, result: {} };'),
    });
    const n = await conformance(noisy, { lang: "en" });
    assert.deepEqual(n.slice(2, 5).map((l) => [l.verdict, l.detail]).slice(1), [
      ["skip", "plugin noisy wrote a line that is not JSON to stdout: debug: got a request"],
      ["fail", "plugin noisy wrote a line that is not JSON to stdout: debug: got a request"],
    ]);
    const broken = writePlugin(f.root, "broken", 'name = "broken"\nversion = "1"\nplugin_type = "sync"\n');
    assert.deepEqual((await conformance(broken, { lang: "en" })).map((l) => [l.verdict, l.detail]), [["fail", `${join(broken, "manifest.toml")}:1: entry_point: required`]]);
  } finally {
    await f.close();
  }
});
