/**
 * Hostile round 43, F43b-1 and F43b-2 (High) and F43b-5 (Medium): what a plugin's code imports by name comes from its
 * own folder. Node looks for a package above the importing file too — the nearest `package.json` (a package's imports
 * of its own name, whatever the name) and every `node_modules` up to `/` — so a file an agent's `writable` entry or
 * another local user put above a plugin ran in `serve` and in an unsandboxed tool plugin trusted with "always allow".
 * And a shipped `__pycache__/*.pyc` compiled unchecked ran instead of the `.py` beside it. Real loaders, a real tool
 * host and real Node and Python processes; each planted module writes a marker when it runs.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, linkSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { engineDir } from "../src/common/paths.js";
import { join } from "node:path";
import { tempDir } from "./helpers.js";
import { hostFixture, syncManifest, toolToml, writePlugin } from "./tools-helpers.js";

/** Writes `files` (path → content) under `dir`. */
function write(dir: string, files: Record<string, string>): void {
  for (const [f, content] of Object.entries(files)) {
    mkdirSync(join(dir, f, ".."), { recursive: true });
    writeFileSync(join(dir, f), content);
  }
}

/** A call's outcome without its duration. */
const pick = (r: object) => { const { durationMs: _, ...rest } = r as { durationMs?: number }; return rest; };
/** A planted module that leaves `marker` when it runs, as ES module source. */
const plantedEsm = (marker: string) => `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "ran");\nexport default (s) => "planted:" + s;\n`;
/** The same as CommonJS. */
const plantedCjs = (marker: string) => `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "ran");\nmodule.exports = (s) => "planted:" + s;\n`;
/** The package the plugins bring along (`tinyfmt`, CommonJS, which requires `cjsdep`). */
const shipped = {
  "node_modules/tinyfmt/package.json": '{"name":"tinyfmt","main":"index.js"}',
  "node_modules/tinyfmt/index.js": 'const dep = require("cjsdep");\nmodule.exports = (s) => "fmt:" + s + dep;\n',
  "node_modules/cjsdep/package.json": '{"name":"cjsdep","main":"index.js"}',
  "node_modules/cjsdep/index.js": 'module.exports = "+dep";\n',
};
/** A tool plugin's main.js answering every call with "npm ran me" (started by `npm run start`). */
const npmEcho = `require("node:readline").createInterface({ input: process.stdin }).on("line", (text) => {\n  const r = JSON.parse(text);\n  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: r.id, result: { content: "npm ran me" } }) + "\\n");\n});\n`;

/** A channel plugin that imports `tinyfmt` by name and uses the SDK. */
const channel = `import fmt from "tinyfmt";\nimport { eachCard } from "agent-autoloop/sdk";\nexport const said = fmt("x");\nexport default async function fmtchan() {}\nvoid eachCard;\n`;

/** The refusal of `specifier`, found at `found`, for the plugin in `plugin`, as the loader words it (`file` the entry). */
function refused(file: string, plugin: string, specifier: string, found: string): string {
  return `${file}: failed to load: ${plugin}: the plugin imports "${specifier}", which resolves to ${found}, outside the plugin's folder — a package.json, node_modules or tsconfig.json above a plugin, or a link leading out of it, could choose what code runs (an agent's or another user's, perhaps), so it is refused. A plugin's code imports what its folder holds (its node_modules too), Node's own modules and agent-autoloop/sdk: put what it needs inside the folder, and remove what is at ${found} unless you put it there yourself (and look at who wrote it)`;
}

// Node keeps what it read of package.json files and lookups for the life of the process: every case below has new
// folders of its own.
test("hostile round 43, F43b-1 and F43b-2 (reported cases): a package.json named like a package a code plugin imports, or a node_modules holding it, above the plugin is refused with where Node found it; the planted code never runs", async () => {
  const { PluginLoader } = await import("../src/plugins/code.js");
  const load = (root: string) => new PluginLoader([{ dir: root, origin: "serve" }], "en").loadModule("channel", "fmtchan");
  const made: string[] = [];
  const scene = (above: Record<string, string> | ((marker: string) => Record<string, string>), plugin: Record<string, string>) => {
    const dir = realpathSync(tempDir("aa-import-above-"));
    made.push(dir);
    write(dir, typeof above === "function" ? above(join(dir, "PWNED")) : above);
    write(join(dir, "plugins", "fmtchan"), plugin);
    return { dir, root: join(dir, "plugins"), plugin: join(dir, "plugins", "fmtchan"), marker: join(dir, "PWNED") };
  };
  try {
    // Control: what it brings along, and the engine's SDK.
    assert.equal((await load(scene({}, { "channel.mjs": channel, ...shipped }).root)).said, "fmt:x+dep");
    const plantedDep = (m: string) => ({ "node_modules/cjsdep/package.json": '{"name":"cjsdep","main":"index.js"}', "node_modules/cjsdep/index.js": plantedCjs(m) });
    const cases: { what: string; above: (m: string) => Record<string, string>; plugin: Record<string, string>; specifier: string; found: string }[] = [
      // F43b-1: ~/package.json named tinyfmt (an agent's writable file): self-reference wins over the plugin's own copy.
      { what: "package.json named tinyfmt", above: (m) => ({ "package.json": JSON.stringify({ name: "tinyfmt", type: "module", exports: "./evil.js" }), "evil.js": plantedEsm(m) }), plugin: { "channel.mjs": channel, ...shipped }, specifier: "tinyfmt", found: "evil.js" },
      // F43b-2: the plugin's node_modules left behind (add left it out), a node_modules above supplies the package.
      { what: "node_modules above", above: (m) => ({ "node_modules/tinyfmt/package.json": '{"name":"tinyfmt","main":"index.js"}', "node_modules/tinyfmt/index.js": plantedCjs(m) }), plugin: { "channel.mjs": channel }, specifier: "tinyfmt", found: "node_modules/tinyfmt/index.js" },
      // CommonJS: a package the plugin ships requires one it does not bring, found above … (imported dynamically: Node 20
      // reports a CommonJS module's throw under a static import twice, the second time as an unhandled rejection)
      { what: "a shipped package's require", above: plantedDep, plugin: { "channel.mjs": `const { default: fmt } = await import("tinyfmt");\nexport const said = fmt("x");\nexport default async function fmtchan() {}\n`, "node_modules/tinyfmt/package.json": shipped["node_modules/tinyfmt/package.json"], "node_modules/tinyfmt/index.js": shipped["node_modules/tinyfmt/index.js"] }, specifier: "cjsdep", found: "node_modules/cjsdep/index.js" },
      // … and the plugin's own createRequire.
      { what: "createRequire", above: plantedDep, plugin: { "channel.mjs": `import { createRequire } from "node:module";\nexport const said = createRequire(import.meta.url)("cjsdep");\nexport default async function fmtchan() {}\n` }, specifier: "cjsdep", found: "node_modules/cjsdep/index.js" },
    ];
    for (const c of cases) {
      const s = scene(c.above, c.plugin);
      await assert.rejects(load(s.root), { message: refused(join(s.plugin, "channel.mjs"), s.plugin, c.specifier, join(s.dir, c.found)) }, c.what);
      assert.equal(existsSync(s.marker), false, c.what);
    }
  } finally {
    for (const d of made) rmSync(d, { recursive: true, force: true });
  }
});

test("hostile round 42, F42b-1 (reported case: a package.json named agent-autoloop above a plugins root): agent-autoloop/sdk resolves from the engine, whatever lies above the plugin; the planted SDK never runs", async () => {
  const { PluginLoader } = await import("../src/plugins/code.js");
  const { engineDir } = await import("../src/common/paths.js");
  const planted = { name: "agent-autoloop", type: "module", exports: { "./sdk": "./sdk.js" } };
  // The package.json form (with a byte-order mark too: F43b-3), then the node_modules form; each in folders of its own.
  // The BOM form stops the plugin loading (tsx, which reads the package scope to know how to compile a .ts file,
  // cannot parse it): a file above a plugin can keep it from loading, never choose its code.
  const forms: { files: (m: string) => Record<string, string>; loads: boolean }[] = [
    { files: (m) => ({ "package.json": JSON.stringify(planted), "sdk.js": plantedEsm(m) }), loads: true },
    { files: (m) => ({ "package.json": "\uFEFF" + JSON.stringify(planted), "sdk.js": plantedEsm(m) }), loads: false },
    { files: (m) => ({ "node_modules/agent-autoloop/package.json": JSON.stringify(planted), "node_modules/agent-autoloop/sdk.js": plantedEsm(m) }), loads: true },
  ];
  for (const { files: form, loads } of forms) {
    const above = realpathSync(tempDir("aa-sdk-shadow-"));
    try {
      const marker = join(above, "PWNED");
      write(above, form(marker));
      const root = join(above, "plugins");
      cpSync(join(engineDir, "examples", "plugins", "hello-channel"), join(root, "hello-channel"), { recursive: true });
      const loading = new PluginLoader([{ dir: root, origin: "serve" }], "en").loadModule("channel", "hello-channel");
      if (loads) assert.equal(typeof (await loading).default, "function");
      else await assert.rejects(loading, { message: `${join(root, "hello-channel", "channel.ts")}: failed to load: Error parsing: ${join(above, "package.json")}` });
      assert.equal(existsSync(marker), false, Object.keys(form(marker)).join(", "));
    } finally {
      rmSync(above, { recursive: true, force: true });
    }
  }
});

test("hostile round 43, F43b-1 (reported case: an unsandboxed Node tool plugin under 'always allow'): its imports by name come from its folder; a package.json above named like its package is refused, the manifest's NODE_OPTIONS kept", async () => {
  const f = hostFixture();
  try {
    const root = realpathSync(f.root);
    const marker = join(root, "PWNED");
    const main = `import fmt from "tinyfmt";\nimport { createInterface } from "node:readline";\nconst lines = createInterface({ input: process.stdin });\nlines.on("line", (text) => {\n  const r = JSON.parse(text);\n  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: r.id, result: { content: fmt(process.env.NODE_OPTIONS.includes("--max-old-space-size=99") ? "kept" : "lost") } }) + "\\n");\n});\n`;
    writePlugin(f.root, "fmttool", syncManifest("fmttool", "node", ["main.mjs"], `[entry_point.env]\nNODE_OPTIONS = "--max-old-space-size=99"\n\n${toolToml("fmt")}`), { "main.mjs": main, ...shipped });
    f.registry.rescan();
    const call = () => f.host.call("fmttool.fmt", {}, { sessionKey: "s" });
    assert.deepEqual(pick(await call()), { status: "ok", result: { content: "fmt:kept+dep" } });
    write(root, { "package.json": JSON.stringify({ name: "tinyfmt", type: "module", exports: "./evil.js" }), "evil.js": plantedEsm(marker) });
    const r = await call();
    assert.equal(JSON.stringify(pick(r)), JSON.stringify({ status: "error", code: "tools.plugin_exited", message: "plugin fmttool exited before answering (exit 1)" }));
    assert.ok(f.logs.some((l) => l.includes(`the plugin imports "tinyfmt", which resolves to ${join(root, "evil.js")}, outside the plugin's folder`)), f.logs.join("\n"));
    assert.equal(existsSync(marker), false);
  } finally {
    await f.close();
  }
});

test("hostile round 43, F43b-5 (reported case: a shipped __pycache__ .pyc compiled unchecked): the plugin's Python runs the .py the owner reads", async () => {
  const f = hostFixture();
  try {
    const main = `import json, sys\nimport helper\nfor line in sys.stdin:\n    r = json.loads(line)\n    print(json.dumps({"jsonrpc": "2.0", "id": r["id"], "result": {"content": helper.said}}), flush=True)\n`;
    const dir = writePlugin(f.root, "pyc", syncManifest("pyc", "python3", ["main.py"], toolToml("say")), { "main.py": main, "helper.py": 'said = "planted"\n' });
    execFileSync("python3", ["-c", "import py_compile; py_compile.compile('helper.py', invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)"], { cwd: dir });
    writeFileSync(join(dir, "helper.py"), 'said = "hello from helper.py"\n');
    // What Python does by itself: the compiled file wins.
    assert.equal(execFileSync("python3", ["-c", "import helper; print(helper.said)"], { cwd: dir, encoding: "utf8", env: { PATH: process.env.PATH!, PYTHONDONTWRITEBYTECODE: "1" } }).trim(), "planted");
    f.registry.rescan();
    assert.deepEqual(pick(await f.host.call("pyc.say", {}, { sessionKey: "s" })), { status: "ok", result: { content: "hello from helper.py" } });
  } finally {
    await f.close();
  }
});

test("hostile round 43, F43b-2 (reported case: add left the plugin's node_modules out): add copies what a local plugin folder brings along, and the installed plugin loads it from there", async () => {
  const { addPlugin } = await import("../src/cli/add.js");
  const { homePaths } = await import("../src/common/paths.js");
  const { PluginLoader } = await import("../src/plugins/code.js");
  const src = join(realpathSync(tempDir("aa-add-src-")), "fmtchan2");
  const h = homePaths(realpathSync(tempDir("aa-add-home-")));
  try {
    write(src, { "channel.mjs": channel, ...shipped });
    addPlugin(h, src, false, "en");
    assert.equal(readFileSync(join(h.plugins, "fmtchan2", "node_modules", "tinyfmt", "index.js"), "utf8"), shipped["node_modules/tinyfmt/index.js"]);
    assert.equal((await new PluginLoader(h.plugins, "en").loadModule("channel", "fmtchan2")).said, "fmt:x+dep");
  } finally {
    rmSync(join(src, ".."), { recursive: true, force: true });
    rmSync(h.dir, { recursive: true, force: true });
  }
});

test("hostile round 43, F43b-5 (the kind: compiled code beside the source the owner reads): plugins inspect names a plugin's compiled files", async () => {
  const { makeHome } = await import("./helpers.js");
  const { cliLines } = await import("./tools-helpers.js");
  const made = makeHome();
  try {
    const dir = writePlugin(made.home.plugins, "compiled", syncManifest("compiled", "python3", ["main.py"], toolToml("say")), {
      "main.py": "import helper\n", "helper.py": "said = 1\n", "helper.cpython-311-x86_64-linux-gnu.so": "\x7fELF", "__pycache__/helper.cpython-311.pyc": "x", "lib/libx.so.1.2": "x", "README.md": "so\n",
    });
    assert.ok(existsSync(dir));
    const r = await cliLines(["plugins", "inspect", "compiled"], made.dir);
    assert.ok(r.out.includes("  ⚠ 3 compiled file(s) you cannot read as source: __pycache__/helper.cpython-311.pyc, helper.cpython-311-x86_64-linux-gnu.so, lib/libx.so.1.2 — Python imports an extension module (x.*.so) before the x.py of the same name; know where they come from before you trust the plugin (a shipped __pycache__ is never used)"), r.out.join("\n"));
  } finally {
    rmSync(made.dir, { recursive: true, force: true });
  }
});

test("hostile round 44, F44b-1 / F44a-1 (reported case: a tsconfig.json above a tsx tool plugin whose paths turn a package name into a file): the planted path is refused, whatever loader turned the name into it: the plugin's own package loads, the planted file never runs", async () => {
  const f = hostFixture();
  try {
    const root = realpathSync(f.root);
    const marker = join(root, "PWNED");
    const main = `import fmt from "tinyfmt";\nimport { createInterface } from "node:readline";\ncreateInterface({ input: process.stdin }).on("line", (text: string) => {\n  const r = JSON.parse(text);\n  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: r.id, result: { content: fmt("ts") } }) + "\\n");\n});\n`;
    // tsx named by its path on the command line (the manifest's: an `--import` by path is not confined).
    const tsx = pathToFileURL(join(engineDir, "node_modules", "tsx", "dist", "loader.mjs")).href;
    // As CommonJS (no package.json: how tsx compiles main.ts then) and as an ES module.
    writePlugin(f.root, "tscjs", syncManifest("tscjs", "node", ["--import", tsx, "main.ts"], toolToml("fmt")), { "main.ts": main, ...shipped });
    writePlugin(f.root, "tsesm", syncManifest("tsesm", "node", ["--import", tsx, "main.ts"], toolToml("fmt")), { "main.ts": main, "package.json": '{"type":"module"}', ...shipped });
    f.registry.rescan();
    const call = (name: string) => f.host.call(`${name}.fmt`, {}, { sessionKey: "s" });
    for (const name of ["tscjs", "tsesm"]) assert.deepEqual(pick(await call(name)), { status: "ok", result: { content: "fmt:ts+dep" } }, name);
    write(root, { "tsconfig.json": JSON.stringify({ compilerOptions: { baseUrl: ".", paths: { tinyfmt: ["./evil.ts"] } } }), "evil.ts": plantedEsm(marker) });
    // tsx tries the planted path first, is refused, and falls back to the name, which the plugin brings along.
    for (const name of ["tscjs", "tsesm"]) assert.deepEqual(pick(await call(name)), { status: "ok", result: { content: "fmt:ts+dep" } }, name);
    assert.equal(existsSync(marker), false);
  } finally {
    await f.close();
  }
});

test("hostile round 44, F44b-2 (reported case: node -r dotenv/config with a package.json above named dotenv): the confinement is loaded before the manifest's preloads, which are refused outside the folder", async () => {
  const f = hostFixture();
  try {
    const root = realpathSync(f.root);
    const marker = join(root, "PWNED");
    const main = `require("node:readline").createInterface({ input: process.stdin }).on("line", (text) => {\n  const r = JSON.parse(text);\n  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: r.id, result: { content: process.env.FROM_DOTENV ?? "none" } }) + "\\n");\n});\n`;
    const dotenv = { "node_modules/dotenv/package.json": '{"name":"dotenv","exports":{"./config":"./config.js"}}', "node_modules/dotenv/config.js": 'process.env.FROM_DOTENV = "own dotenv";\n' };
    for (const [name, args, env] of [["pre-args", ["-r", "dotenv/config", "main.js"], ""], ["pre-env", ["main.js"], '[entry_point.env]\nNODE_OPTIONS = "-r dotenv/config"\n']] as const) {
      writePlugin(f.root, name, syncManifest(name, "node", [...args], `${env}\n${toolToml("get")}`), { "main.js": main, ...dotenv });
    }
    f.registry.rescan();
    for (const name of ["pre-args", "pre-env"]) assert.deepEqual(pick(await f.host.call(`${name}.get`, {}, { sessionKey: "s" })), { status: "ok", result: { content: "own dotenv" } }, name);
    write(root, { "package.json": JSON.stringify({ name: "dotenv", exports: { "./config": "./evil.cjs" } }), "evil.cjs": plantedCjs(marker) });
    for (const name of ["pre-args", "pre-env"]) {
      assert.deepEqual(pick(await f.host.call(`${name}.get`, {}, { sessionKey: "s" })), { status: "error", code: "tools.plugin_exited", message: `plugin ${name} exited before answering (exit 1)` }, name);
    }
    assert.ok(f.logs.some((l) => l.includes(`the plugin imports "dotenv/config", which resolves to ${join(root, "evil.cjs")}, outside the plugin's folder`)), f.logs.join("\n"));
    assert.equal(existsSync(marker), false);
  } finally {
    await f.close();
  }
});

test("hostile round 44, F44a-3 (reported case: a code plugin's file is a link leading out of its folder): refused, as an import and as the entry itself", async () => {
  const { PluginLoader } = await import("../src/plugins/code.js");
  const dir = realpathSync(tempDir("aa-import-link-"));
  try {
    const marker = join(dir, "PWNED");
    write(dir, { "elsewhere/lib.mjs": plantedEsm(marker), "elsewhere/channel.mjs": `import "./lib.mjs";\nexport default async function c() {}\n` });
    write(join(dir, "plugins", "linked"), { "channel.mjs": `import run from "./lib.mjs";\nexport const said = run("x");\nexport default async function linked() {}\n` });
    symlinkSync(join(dir, "elsewhere", "lib.mjs"), join(dir, "plugins", "linked", "lib.mjs"));
    mkdirSync(join(dir, "plugins", "entry"));
    symlinkSync(join(dir, "elsewhere", "channel.mjs"), join(dir, "plugins", "entry", "channel.mjs"));
    const load = (name: string) => new PluginLoader([{ dir: join(dir, "plugins"), origin: "serve" }], "en").loadModule("channel", name);
    const plugin = join(dir, "plugins", "linked");
    await assert.rejects(load("linked"), { message: refused(join(plugin, "channel.mjs"), plugin, "./lib.mjs", join(dir, "elsewhere", "lib.mjs")) });
    const entry = join(dir, "plugins", "entry", "channel.mjs");
    await assert.rejects(load("entry"), { message: `${entry}: this entry file is a link leading out of the plugin's folder ${join(dir, "plugins", "entry")}, to ${join(dir, "elsewhere", "channel.mjs")} — a plugin's code is what its folder holds (a link's target can be changed after you read it), so it is refused. Copy the file into the plugin's folder` });
    assert.equal(existsSync(marker), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("hostile rounds 44–45, F44a-2, F45a-1, F45a-2 (reported cases: another user's node_modules/.bin and .npmrc above a trusted plugin started by npm, directly or through env or a script): no plugin without [sandbox] starts while such a place above it is another user's or writable by others", async () => {
  const f = hostFixture();
  try {
    const root = realpathSync(f.root);
    const marker = join(root, "PWNED");
    const files = { "main.js": npmEcho, "package.json": JSON.stringify({ private: true, scripts: { start: "node main.js" } }), "run.sh": "exec npm run --silent start\n" };
    writePlugin(f.root, "npmtool", syncManifest("npmtool", "npm", ["run", "--silent", "start"], toolToml("go")), files);
    writePlugin(f.root, "envnpm", syncManifest("envnpm", "/usr/bin/env", ["npm", "run", "--silent", "start"], toolToml("go")), files);
    writePlugin(f.root, "shnpm", syncManifest("shnpm", "sh", ["run.sh"], toolToml("go")), files);
    f.registry.rescan();
    const names = ["npmtool", "envnpm", "shnpm"];
    const call = (name: string) => f.host.call(`${name}.go`, {}, { sessionKey: "s" });
    const bin = join(root, "node_modules", ".bin");
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(root, ".npmrc"), "fund=false\n", { mode: 0o644 });
    // The owner's own places above (this user's, writable by no one else): the plugins run.
    for (const name of names) assert.deepEqual(pick(await call(name)), { status: "ok", result: { content: "npm ran me" } }, name);
    const refusedFor = (name: string, path: string) => ({ status: "refused", code: "tools.path_refused", message: `plugin ${name} was not started: ${path} above it is another user's or writable (or movable) by others — npm, npx, Node and tsx read such files from the folders above a plugin (a .npmrc's node-options, a node_modules/.bin first on PATH, a package scope), so it could choose what the plugin runs. Remove it (and look at who put it there), keep the folders above the plugin writable by you alone, or give the plugin a [sandbox]` });
    // F45a-1: a .npmrc others can write, whose node-options would replace the confinement.
    writeFileSync(join(root, ".npmrc"), `node-options=--require=${join(root, "evil.cjs")}\n`);
    writeFileSync(join(root, "evil.cjs"), plantedCjs(marker));
    execFileSync("chmod", ["0666", join(root, ".npmrc")]);
    for (const name of names) assert.deepEqual(pick(await call(name)), refusedFor(name, join(root, ".npmrc")), name);
    rmSync(join(root, ".npmrc"));
    // F44a-2: a .bin others can write, whose node would run in place of Node.
    writeFileSync(join(bin, "node"), `#!/bin/sh\necho ran > ${JSON.stringify(marker)}\nexec ${JSON.stringify(process.execPath)} "$@"\n`, { mode: 0o755 });
    execFileSync("chmod", ["0777", bin]);
    for (const name of names) assert.deepEqual(pick(await call(name)), refusedFor(name, bin), name);
    assert.equal(existsSync(marker), false);
  } finally {
    await f.close();
  }
});

test("hostile round 45, F45a-3 (reported case: a plugin's own .npmrc says userconfig=<a file outside>, which its author later filled with node-options): no plugin without [sandbox] starts while its .npmrc names a configuration file outside its folder; one inside it is the plugin's", async () => {
  const f = hostFixture();
  try {
    const root = realpathSync(f.root);
    const marker = join(root, "PWNED");
    const outside = join(root, "author-npmrc");
    writeFileSync(outside, `node-options=--require=${join(root, "evil.cjs")}\n`);
    writeFileSync(join(root, "evil.cjs"), plantedCjs(marker));
    const files = { "main.js": npmEcho, "package.json": JSON.stringify({ private: true, scripts: { start: "node main.js" } }), "own-npmrc": "fund=false\n" };
    const cases: [string, string, string | null][] = [
      ["userout", `userconfig=${outside}`, `userconfig=${outside}`],
      ["globalrel", "globalconfig = ../author-npmrc", "globalconfig=../author-npmrc"],
      ["home", "userconfig=~/.npmrc-of-someone", "userconfig=~/.npmrc-of-someone"],
      ["inside", "userconfig=./own-npmrc", null],
    ];
    for (const [name, line] of cases) writePlugin(f.root, name, syncManifest(name, "npm", ["run", "--silent", "start"], toolToml("go")), { ...files, ".npmrc": `fund=false\n${line}\n` });
    f.registry.rescan();
    for (const [name, , setting] of cases) {
      const r = pick(await f.host.call(`${name}.go`, {}, { sessionKey: "s" }));
      assert.deepEqual(r, setting === null ? { status: "ok", result: { content: "npm ran me" } } : { status: "refused", code: "tools.path_refused", message: `plugin ${name} was not started: ${setting} in its own .npmrc makes npm read a configuration file outside the plugin's folder, which the plugin's digest does not cover: whoever can change that file chooses what the plugin runs (node-options, for one). Put the settings in the plugin's own .npmrc` }, name);
    }
    assert.equal(existsSync(marker), false);
  } finally {
    await f.close();
  }
});

test("hostile round 45, F45a-4 (reported case: npm's esbuild links its binary between two of its packages): a hard link whose every name is in the plugin's folder is the plugin's; one with a name outside is still refused", async () => {
  const f = hostFixture();
  try {
    const echo = `require("node:readline").createInterface({ input: process.stdin }).on("line", (t) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: JSON.parse(t).id, result: { content: "linked" } }) + "\\n"));\n`;
    const dir = writePlugin(f.root, "linked", syncManifest("linked", "node", ["main.js"], toolToml("go")), { "main.js": echo, "node_modules/a/bin/tool": "x", "node_modules/b/bin/tool": "" });
    rmSync(join(dir, "node_modules", "b", "bin", "tool"));
    linkSync(join(dir, "node_modules", "a", "bin", "tool"), join(dir, "node_modules", "b", "bin", "tool"));
    f.registry.rescan();
    assert.deepEqual(pick(await f.host.call("linked.go", {}, { sessionKey: "s" })), { status: "ok", result: { content: "linked" } });
    const outside = join(realpathSync(f.root), "outside-name");
    linkSync(join(dir, "main.js"), outside);
    f.registry.rescan();
    const r = await f.host.call("linked.go", {}, { sessionKey: "s" });
    assert.equal(r.status, "refused", JSON.stringify(r));
    assert.match(JSON.stringify(r), /main\.js in the plugin's folder has 2 names \(a hard link\), not all of them in the plugin's folder/);
  } finally {
    await f.close();
  }
});
