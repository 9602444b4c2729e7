/**
 * Reading tool plugin manifests (spec tool-plugins.md §2 and the later manifest versions): defaults, migration,
 * strict validation naming the key and its line, sandbox fields checked at load, named limits, the digest.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { readManifest, formatProblem, toolLimits } from "../src/tools/index.js";
import { parseMemory, parseBind } from "../src/tools/sandbox-spec.js";
import { readToml, placeOf } from "../src/tools/toml.js";
import { examples } from "./tools-helpers.js";
import { pluginEnv } from "../src/tools/env.js";

const enc = (s: string) => new TextEncoder().encode(s);
const base = `name = "p"\nversion = "0.1.0"\nplugin_type = "sync"\n\n[entry_point]\ncommand = "python3"\n`;

/** The problems of a manifest as `<line>: <message>` strings. */
function problems(text: string): string[] {
  const r = readManifest(enc(text), "en");
  assert.equal(r.ok, false, "expected the manifest to be refused");
  return r.ok ? [] : r.problems.map((p) => formatProblem("m.toml", p));
}

function load(text: string) {
  const r = readManifest(enc(text), "en");
  if (!r.ok) assert.fail(r.problems.map((p) => formatProblem("m.toml", p)).join("\n"));
  return r.manifest;
}

test("the §3.1 manifest loads with every default of the public implementation, migrated to version 3", () => {
  const bytes = readFileSync(join(examples, "hello-python", "manifest.toml"));
  const r = readManifest(bytes, "en");
  assert.ok(r.ok);
  assert.equal(r.digest, createHash("sha256").update(bytes).digest("hex"));
  assert.deepEqual(r.manifest, {
    manifest_version: 3, declared_version: 1, name: "hello-python", version: "0.1.0", description: "", author: "",
    plugin_type: "sync",
    entry_point: { command: "python3", args: ["main.py"], env: {} },
    communication: { timeout_ms: null },
    capabilities: {
      tools: [{ name: "greet", description: "Greet a person", parameters: { type: "object", required: ["name"], properties: { name: { type: "string" } } } }],
      disable_model_invocation: false,
    },
    sandbox: null, mcp: null, protocols: ["openai_function"], hooks: [], skill_refs: [], meta: {},
  });
});

test("the full §2 schema loads: sandbox values are read at load (256m in bytes, binds parsed)", () => {
  const m = load(`name = "my-plugin"
version = "0.1.0"
description = "Does something useful"
author = "Alice"
plugin_type = "sync"

[entry_point]
command = "python"
args = ["main.py"]

[communication]
timeout_ms = 30000

[[capabilities.tools]]
name = "greet"
description = "Greet someone by name"

[capabilities.tools.parameters]
type = "object"
required = ["name"]

[capabilities.tools.parameters.properties.name]
type = "string"
description = "The person to greet"

[capabilities]
disable_model_invocation = false

[sandbox]
memory = "256m"
cpus = 0.5
read_only_root = true
cap_drop = ["ALL"]
network = "none"
binds = ["/host:/container:ro", "./vendor:/workspace/vendor:ro"]

[meta]
last_touched_version = "0.1.0"
last_touched_at = "2026-04-20T10:00:00Z"
`);
  assert.equal(m.communication.timeout_ms, 30000);
  assert.deepEqual(m.sandbox, {
    memoryBytes: 268435456, cpus: 0.5, pids: null, read_only_root: true, cap_drop: ["ALL"], network: "none",
    binds: ["/host:/container:ro", "./vendor:/workspace/vendor:ro"],
    mounts: [
      { host: "/host", relative: false, container: "/container", readOnly: true },
      { host: "./vendor", relative: true, container: "/workspace/vendor", readOnly: true },
    ],
  });
  assert.equal(m.author, "Alice");
});

test("manifest versions: 1 and 2 migrate to 3 with lists kept; a version newer than 3 is refused naming it", () => {
  const v2 = load(`manifest_version = 2\n${base}protocols = ["openai_function", "block"]\nhooks = ["message.weird"]\nskill_refs = ["a"]\n`.replace('[entry_point]\ncommand = "python3"\n', "") + '[entry_point]\ncommand = "x"\n');
  assert.equal(v2.manifest_version, 3);
  assert.equal(v2.declared_version, 2);
  assert.deepEqual([v2.protocols, v2.hooks, v2.skill_refs], [["openai_function", "block"], ["message.weird"], ["a"]]);
  assert.deepEqual(problems(`manifest_version = 99\n${base}`), ["m.toml:1: manifest_version: 99 is newer than this host knows (1 to 3); upgrade agent-autoloop"]);
  assert.deepEqual(problems(`manifest_version = 0\n${base}`), ["m.toml:1: manifest_version: must be 1 to 3"]);
  assert.deepEqual(problems(`manifest_version = 3\nprotocols = ["custom"]\n${base}`), ['m.toml:2: protocols[0]: must be one of "openai_function", "block"']);
});

test("mcp plugins: [mcp] defaults at version 3; below 3, or [mcp] on another type, is refused", () => {
  const mcp = `manifest_version = 3\nname = "m"\nversion = "1"\nplugin_type = "mcp"\n[entry_point]\ncommand = "node"\n`;
  assert.deepEqual(load(`${mcp}[mcp]\n`).mcp, {
    autostart: false, restart_policy: "on_crash", crash_loop_max: 3, crash_loop_window_secs: 60, handshake_timeout_ms: 5000,
    idle_shutdown_secs: 0, env_passthrough: { allow: [], deny: [] }, tools_allowlist: { mode: "allow", names: [] },
    resources_allowlist: { mode: "allow", patterns: [] },
  });
  assert.deepEqual(load(mcp).mcp?.restart_policy, "on_crash");
  const kept = load(`${mcp}[mcp]\nrestart_policy = "always"\ncrash_loop_max = 7\ncrash_loop_window_secs = 90\nhandshake_timeout_ms = 1234\nidle_shutdown_secs = 30\nautostart = true\n`).mcp!;
  assert.deepEqual([kept.restart_policy, kept.crash_loop_max, kept.crash_loop_window_secs, kept.handshake_timeout_ms, kept.idle_shutdown_secs, kept.autostart], ["always", 7, 90, 1234, 30, true]);
  assert.deepEqual(problems(mcp.replace("manifest_version = 3", "manifest_version = 2")), ["m.toml:4: plugin_type: an MCP plugin needs manifest_version = 3 or later (got 2)"]);
  assert.deepEqual(problems(mcp.replace("manifest_version = 3\n", "")), ["m.toml:3: plugin_type: an MCP plugin needs manifest_version = 3 or later (got 1)"]);
  assert.deepEqual(problems(`manifest_version = 3\n${base}[mcp]\n`), ['m.toml:8: mcp: [mcp] is only for plugin_type = "mcp" (this is sync)']);
  assert.deepEqual(problems(`${mcp}[mcp]\nmystery = 1\n`), ["m.toml:8: mcp.mystery: unknown field"]);
});

test("strict: unknown keys, empty names, wrong types are refused naming the key and its line", () => {
  assert.deepEqual(problems(`${base}colour = "red"\n`), ["m.toml:7: entry_point.colour: unknown field"]);
  assert.deepEqual(problems(`mystery = 1\n${base}`), ["m.toml:1: mystery: unknown field"]);
  assert.deepEqual(problems(base.replace('name = "p"', 'name = ""')), ["m.toml:1: name: must not be empty"]);
  assert.deepEqual(problems(base.replace('name = "p"', 'name = "   "')), ["m.toml:1: name: must not be empty"]);
  assert.deepEqual(problems(base.replace('name = "p"', 'name = "a.b"')), ["m.toml:1: name: letters, digits, _ and - only, starting with a letter or digit"]);
  assert.deepEqual(problems(base.replace('name = "p"\n', "")), ["m.toml:1: name: required"], "a missing key is placed at the table that lacks it (the top: 1:1)");
  assert.deepEqual(problems(base.replace('version = "0.1.0"', "version = 1")), ["m.toml:2: version: must be string"]);
  assert.deepEqual(problems(base.replace('"sync"', '"Sync"')), ['m.toml:3: plugin_type: must be one of "sync", "async", "service", "mcp"']);
  assert.deepEqual(problems(`${base}\n[communication]\ntimeout_ms = "5000"\n`), ["m.toml:9: communication.timeout_ms: must be integer"]);
  assert.deepEqual(problems(`${base}\n[communication]\ntimeout_ms = -1\n`), ["m.toml:9: communication.timeout_ms: must be 1 to 3600000"]);
  assert.deepEqual(problems(`${base}args = "main.py"\n`), ["m.toml:7: entry_point.args: must be array of strings"]);
  assert.deepEqual(problems(`${base}env = { 1X = "a" }\n`), ["m.toml:7: entry_point.env.1X: not a valid environment variable name"]);
  assert.deepEqual(problems(`${base}\n[[capabilities.tools]]\nname = "t"\nfoo = 1\n`), ["m.toml:10: capabilities.tools[0].foo: unknown field"]);
  assert.deepEqual(problems(`${base}\n[[capabilities.tools]]\nname = "t"\n\n[[capabilities.tools]]\nname = "t"\n`), ["m.toml:12: capabilities.tools[1].name: tool t is listed twice"]);
  assert.deepEqual(problems(`${base}\n[[capabilities.tools]]\nname = "t"\n[capabilities.tools.parameters]\ntype = 5\n`), [
    "m.toml:10: capabilities.tools[0].parameters: not a usable JSON Schema: schema is invalid: data/type must be equal to one of the allowed values, data/type must be array, data/type must match a schema in anyOf",
  ]);
  assert.deepEqual(problems(base.replace('[entry_point]\ncommand = "python3"\n', "")), ["m.toml:1: entry_point: required"]);
  assert.deepEqual(problems(`${base}\n[sandbox]\nmemory = 256\n`), ["m.toml:9: sandbox.memory: must be string"]);
  assert.deepEqual(problems("name = [\n"), ["m.toml:2: not valid TOML: a value expected"]);
});

test("sandbox fields are checked at load: memory units, cpus, network, cap_drop, binds in -v form", () => {
  assert.deepEqual(
    ["256m", "256MB", "1.5g", "512k", "1048576", "8 m", "256mi", "-1m", "", "1x"].map(parseMemory),
    [268435456, 268435456, 1610612736, 524288, 1048576, 8388608, null, null, null, null],
  );
  assert.deepEqual(parseBind("./v:/data:ro"), { host: "./v", relative: true, container: "/data", readOnly: true });
  assert.deepEqual(["/a", "a:b", "a:/b:rx", ":/b", "/a:/", "a:/b:ro:x"].map(parseBind), ["form", "form", "form", "form", "form", "form"]);
  const sb = (body: string) => problems(`${base}\n[sandbox]\n${body}\n`);
  assert.deepEqual(sb('memory = "256mi"'), ["m.toml:9: sandbox.memory: must be a size like 256m (units b, k, kb, m, mb, g, gb, t, tb; steps of 1024), at least 4m"]);
  assert.deepEqual(sb('memory = "1k"'), ["m.toml:9: sandbox.memory: must be a size like 256m (units b, k, kb, m, mb, g, gb, t, tb; steps of 1024), at least 4m"]);
  assert.deepEqual(sb("cpus = 0"), ["m.toml:9: sandbox.cpus: must be 0 (excluded) to 1024"]);
  assert.deepEqual(sb('network = "nat"'), ['m.toml:9: sandbox.network: must be one of "none", "bridge", "host"']);
  assert.deepEqual(sb('cap_drop = ["NET_RAW", "FLY"]'), ["m.toml:9: sandbox.cap_drop[1]: not a known Linux capability"]);
  assert.deepEqual(sb('binds = ["vendor"]'), ["m.toml:9: sandbox.binds[0]: must be in Docker -v form host:/absolute/container/path[:ro|rw]"]);
  assert.deepEqual(sb("pids = 0"), ["m.toml:9: sandbox.pids: must be 1 to 65536"]);
  assert.equal(load(`${base}\n[sandbox]\n`).sandbox?.network, "none", "an empty [sandbox] still asks for a sandbox, network none");
});

test("path traversal in binds or the entry point is refused", () => {
  assert.deepEqual(problems(`${base}\n[sandbox]\nbinds = ["../../etc:/etc2", "/srv/../etc:/x", "./v:/workspace/../etc"]\n`), [
    "m.toml:9: sandbox.binds[0]: has a .. segment, which leaves the plugin folder",
    "m.toml:9: sandbox.binds[1]: has a .. segment, which leaves the plugin folder",
    "m.toml:9: sandbox.binds[2]: has a .. segment, which leaves the plugin folder",
  ]);
  assert.deepEqual(problems(base.replace('command = "python3"', 'command = "../other/run"')), ["m.toml:6: entry_point.command: has a .. segment, which leaves the plugin folder"]);
  assert.deepEqual(problems(`${base}args = ["../other/main.py"]\n`), ["m.toml:7: entry_point.args[0]: has a .. segment, which leaves the plugin folder"]);
});

test("named limits: a huge, a deep, a many-tools manifest is refused without harm", () => {
  const huge = `description = "${"x".repeat(toolLimits.manifestMaxBytes)}"\n${base}`;
  assert.deepEqual(problems(huge), [`m.toml: the manifest is larger than ${toolLimits.manifestMaxBytes} bytes`]);
  const deepInline = `${base}[capabilities]\nx = ${"[".repeat(5000)}${"]".repeat(5000)}\n`;
  // Thousands of levels: the parser runs out of stack before any level is counted, so the refusal has no place.
  assert.deepEqual(problems(deepInline), ["m.toml: not valid TOML: tables and arrays nested more than 24 levels deep"]);
  const deepArrays = `${base}[capabilities]\nx = ${"[".repeat(30)}${"]".repeat(30)}\n`;
  assert.deepEqual(problems(deepArrays), [`m.toml:8: capabilities.x${"[0]".repeat(23)}: nested deeper than 24 levels`]);
  const deepTables = `${base}[${Array.from({ length: 2000 }, () => "a").join(".")}]\n`;
  assert.match(problems(deepTables)[0]!, /^m\.toml:7: a\.a\.a.*: nested deeper than 24 levels$/);
  const tools = Array.from({ length: toolLimits.manifestToolsMax + 1 }, (_, i) => `[[capabilities.tools]]\nname = "t${i}"\n`).join("");
  assert.deepEqual(problems(`${base}${tools}`), [`m.toml:7: capabilities.tools: at most ${toolLimits.manifestToolsMax} items`]);
  assert.deepEqual(problems(`description = "${"é".repeat(4001)}"\n${base}`), ["m.toml:1: description: at most 4000 characters"]);
  assert.deepEqual(problems(base.replace('"python3"', '"python3"\nargs = [1, "a"]')), ["m.toml:7: entry_point.args[0]: must be string"]);
  const bad = readManifest(new Uint8Array([0xff, 0xfe, 0x00]), "en");
  assert.deepEqual(bad.ok ? null : bad.problems.map((p) => p.message), ["the manifest is not UTF-8 text"]);
});

test("problems read in Chinese when the language is zh", () => {
  const r = readManifest(enc(`${base}colour = 1\n`), "zh");
  assert.deepEqual(r.ok ? null : r.problems.map((p) => formatProblem("m.toml", p)), ["m.toml:7: entry_point.colour：不认识的字段"]);
});

test("key places: headers, arrays of tables, dotted and quoted keys, and keys inside multi-line values are told apart", () => {
  const text = `a = 1
b = """
c = 2
"""
arr = [
  "x = 1",
]
[t]
"q.k" = 1
d.e = 2
[[list]]
n = 1
[[list]]
  n = 2
[list.sub]
m = 3
`;
  const r = readToml(text, 24, "en");
  assert.ok(r.ok);
  const at = (...path: (string | number)[]) => { const p = placeOf(r.places, path); return `${p.line}:${p.column}`; };
  assert.deepEqual(
    [at("a"), at("b"), at("c"), at("arr"), at("arr", 0), at("x"), at("t"), at("t", "q.k"), at("t", "d"), at("t", "d", "e"), at("list"), at("list", 0, "n"), at("list", 1), at("list", 1, "n"), at("list", 1, "sub", "m"), at("list", 1, "sub", "zz")],
    ["1:1", "2:1", "1:1", "5:1", "6:3", "1:1", "8:1", "9:1", "10:1", "10:1", "11:1", "12:1", "13:1", "14:3", "16:1", "15:1"],
  );
});

test("env_passthrough deny globs match in linear time: a manifest's many-star glob against a long allowed name never stalls the host", { timeout: 20_000 }, () => {
  const name = Array.from({ length: 40 }, (_, i) => `V${i}`).join("_");
  const fixed = { PYTHONNOUSERSITE: "1", PYTHONDONTWRITEBYTECODE: "1", PYTHONPYCACHEPREFIX: "/dev/null/agent-autoloop-pycache", TSX_DISABLE_CACHE: "1" };
  const deny = `${"*_".repeat(40)}NOPE`;
  const m = load(`manifest_version = 3\nname = "m"\nversion = "1"\nplugin_type = "mcp"\n[entry_point]\ncommand = "node"\n[mcp]\nenv_passthrough = { allow = ["${name}", "KEEP_ME"], deny = ["${deny}", "KEEP_*_NOT", "?EEP_ME"] }\n`);
  assert.deepEqual(pluginEnv({ [name]: "x", KEEP_ME: "y", PATH: "/bin" }, m), { PATH: "/bin", [name]: "x", KEEP_ME: "y", ...fixed });
  const denied = load(`manifest_version = 3\nname = "m"\nversion = "1"\nplugin_type = "mcp"\n[entry_point]\ncommand = "node"\n[mcp]\nenv_passthrough = { allow = ["${name}"], deny = ["${"*_".repeat(39)}*"] }\n`);
  assert.deepEqual(pluginEnv({ [name]: "x" }, denied), fixed);
});
