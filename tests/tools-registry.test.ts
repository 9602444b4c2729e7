/**
 * Discovery of tool plugins: roots (built-in, then home, which wins a clash and reports it), a broken manifest
 * rejecting that plugin only and keeping its last good version, reading files only, and the watcher.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { ToolRegistry, toolPlugins, formatClash } from "../src/tools/index.js";
import { PluginRegistry, watchPlugins } from "../src/plugins/index.js";
import { examples, hostFixture, syncManifest, tempDir, toolToml, until, writePlugin } from "./tools-helpers.js";

/** The one watcher of the common plugin layer over a tool registry alone. */
function watchRegistry(reg: ToolRegistry, pollMs?: number) {
  return watchPlugins(new PluginRegistry({ roots: reg.roots, lang: "en", loaders: [toolPlugins(reg)] }), pollMs);
}

test("the examples are found in a built-in root, each ok, read from files only", () => {
  const reg = new ToolRegistry([{ dir: examples, origin: "builtin" }], "en");
  const r = reg.rescan();
  assert.deepEqual(r.added.sort(), ["hello-bash", "hello-node", "hello-python", "hello-rust", "hello-service"]);
  assert.deepEqual(reg.list().map((p) => [p.name, p.status, p.origin, p.manifest?.plugin_type]), [
    ["hello-bash", "ok", "builtin", "sync"], ["hello-node", "ok", "builtin", "sync"], ["hello-python", "ok", "builtin", "sync"],
    ["hello-rust", "ok", "builtin", "sync"], ["hello-service", "ok", "builtin", "service"],
  ]);
  assert.equal(reg.rescan().added.length, 0, "an unchanged rescan reports nothing");
});

test("home wins a clash over built-in and the clash is reported; a same-root clash goes to the first folder", () => {
  const builtin = tempDir();
  const home = tempDir();
  try {
    writePlugin(builtin, "greeter", syncManifest("greeter", "true", [], toolToml("a")));
    writePlugin(home, "greeter-local", syncManifest("greeter", "true", [], toolToml("b")));
    writePlugin(home, "zz-greeter", syncManifest("greeter", "true", [], toolToml("c")));
    const reg = new ToolRegistry([{ dir: builtin, origin: "builtin" }, { dir: home, origin: "home" }], "en");
    const r = reg.rescan();
    assert.equal(reg.get("greeter")?.dir, join(home, "greeter-local"));
    assert.deepEqual(reg.list().map((p) => [p.dir, p.status, p.shadowedBy?.dir ?? null]).sort(), [
      [join(builtin, "greeter"), "shadowed", join(home, "greeter-local")],
      [join(home, "greeter-local"), "ok", null],
      [join(home, "zz-greeter"), "shadowed", join(home, "greeter-local")],
    ].sort());
    assert.deepEqual(r.clashes.map((c) => formatClash(c, "en")), [
      `plugin greeter: ${join(home, "greeter-local")} (home) wins over ${join(builtin, "greeter")} (builtin)`,
      `plugin greeter: ${join(home, "greeter-local")} (home) wins over ${join(home, "zz-greeter")} (home)`,
    ]);
  } finally {
    rmSync(builtin, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  }
});

test("a broken manifest rejects that plugin only; a plugin that was good keeps its last good version", () => {
  const f = hostFixture();
  try {
    writePlugin(f.root, "good", syncManifest("good", "true", [], toolToml("t")));
    const dir = writePlugin(f.root, "flaky", syncManifest("flaky", "true", [], toolToml("t")));
    writePlugin(f.root, "never", 'name = "never"\nversion = 1\n');
    f.registry.rescan();
    const goodDigest = f.registry.get("flaky")!.digest;
    writeFileSync(join(dir, "manifest.toml"), syncManifest("flaky", "true", [], toolToml("t")) + "\nmystery = 1\n");
    const r = f.registry.rescan();
    assert.deepEqual(r.rejected, ["flaky"]);
    const flaky = f.registry.list().find((p) => p.name === "flaky")!;
    assert.equal(flaky.status, "rejected");
    assert.deepEqual(flaky.errors, [`${join(dir, "manifest.toml")}:12: capabilities.tools[0].mystery: unknown field`]);
    assert.equal(flaky.digest, goodDigest, "the last good version stays in use");
    assert.equal(f.registry.get("flaky")?.manifest?.capabilities.tools[0]?.name, "t");
    const never = f.registry.list().find((p) => p.dir.endsWith("never"))!;
    assert.deepEqual([never.status, never.manifest, f.registry.get("never")], ["rejected", null, null]);
    assert.deepEqual(never.errors, [
      `${join(f.root, "never", "manifest.toml")}:2: version: must be string`,
      `${join(f.root, "never", "manifest.toml")}:1: plugin_type: required`,
      `${join(f.root, "never", "manifest.toml")}:1: entry_point: required`,
    ]);
    assert.equal(f.registry.get("good")?.status, "ok");
    assert.deepEqual(f.registry.rescan().rejected, [], "the same broken file is not reported again");
  } finally {
    void f.close();
  }
});

test("a manifest that is not a regular file (a FIFO, a folder, a dangling symlink) is listed as rejected with why, never skipped or waited on", () => {
  const f = hostFixture();
  try {
    for (const name of ["fifo", "folder", "dangling"]) mkdirSync(join(f.root, name));
    execFileSync("mkfifo", [join(f.root, "fifo", "manifest.toml")]);
    mkdirSync(join(f.root, "folder", "manifest.toml"));
    symlinkSync(join(f.root, "nowhere.toml"), join(f.root, "dangling", "plugin-manifest.toml"));
    const r = f.registry.rescan();
    assert.deepEqual(r.rejected, ["dangling", "fifo", "folder"]);
    assert.deepEqual(f.registry.list().map((p) => [p.name, p.status, p.errors]), [
      // A manifest that is a link is refused as one, wherever it leads (issue 26 round 5, F6).
      ["dangling", "rejected", [`${join(f.root, "dangling", "plugin-manifest.toml")}: the manifest is a symbolic link (to ${join(f.root, "nowhere.toml")}): whatever can write where it leads (a folder the plugin binds writable) could rewrite the plugin's sandbox; put the manifest file itself in the plugin's folder`,
        `${join(f.root, "dangling")}: plugin-manifest.toml in the plugin's folder is a symbolic link leading out of the folder or nowhere (${join(f.root, "nowhere.toml")}): what it leads to would run without being part of the plugin's digest, so the plugin is not used; copy what it needs into the folder`]],
      ["fifo", "rejected", [`${join(f.root, "fifo", "manifest.toml")}: cannot be read: ENOTREG`]],
      ["folder", "rejected", [`${join(f.root, "folder", "manifest.toml")}: cannot be read: ENOTREG`]],
    ]);
  } finally {
    void f.close();
  }
});

test("plugin-manifest.toml (the public implementation's name) is found; both names in one folder are refused", () => {
  const f = hostFixture();
  try {
    const dir = join(f.root, "legacy");
    mkdirSync(dir);
    writeFileSync(join(dir, "plugin-manifest.toml"), syncManifest("legacy", "true", [], toolToml("t")));
    f.registry.rescan();
    assert.equal(f.registry.get("legacy")?.manifestPath, join(dir, "plugin-manifest.toml"));
    writeFileSync(join(dir, "manifest.toml"), syncManifest("legacy", "true", [], toolToml("t")));
    f.registry.rescan();
    assert.deepEqual(f.registry.list().map((p) => [p.status, p.errors]), [["rejected", [`${dir}: the folder has both manifest.toml and plugin-manifest.toml: keep one`]]]);
  } finally {
    void f.close();
  }
});

test("discovery and listing never run plugin code, even for a manifest without tools", async () => {
  const f = hostFixture();
  try {
    writePlugin(f.root, "noisy", syncManifest("noisy", "sh", ["run.sh"]), { "run.sh": "touch ran\n" });
    f.registry.rescan();
    watchRegistry(f.registry, 50).close();
    assert.equal(f.registry.list()[0]?.status, "ok");
    assert.equal(existsSync(join(f.root, "noisy", "ran")), false);
  } finally {
    await f.close();
  }
});

test("the watcher picks up a changed, an added and a removed manifest, and a root made later (poll)", async () => {
  const f = hostFixture();
  const later = join(tempDir(), "later-root");
  const reg = new ToolRegistry([{ dir: f.root, origin: "home" }, { dir: later, origin: "home" }], "en");
  const dir = writePlugin(f.root, "w", syncManifest("w", "true", [], toolToml("one")));
  reg.rescan();
  const w = watchRegistry(reg);
  try {
    writeFileSync(join(dir, "manifest.toml"), syncManifest("w", "true", [], toolToml("two")));
    await until(() => reg.get("w")?.manifest?.capabilities.tools[0]?.name === "two", 10_000, "the edit");
    writePlugin(f.root, "x", syncManifest("x", "true", [], toolToml("t")));
    await until(() => reg.get("x"), 10_000, "the new plugin");
    rmSync(join(f.root, "x"), { recursive: true });
    await until(() => reg.get("x") === null, 10_000, "the removal");
    writePlugin(later, "y", syncManifest("y", "true", [], toolToml("t")));
    await until(() => reg.get("y"), 10_000, "a root made after the watcher started");
  } finally {
    w.close();
    await f.close();
  }
});

test("diagnose: every folder's manifest, entry point, sandbox and clash, without running anything", async () => {
  const builtin = tempDir();
  const f = hostFixture({ roots: [builtin], bwrap: "/nonexistent/bwrap" });
  try {
    writePlugin(builtin, "dup", syncManifest("dup", "true", [], toolToml("t")));
    writePlugin(f.root, "dup", syncManifest("dup", "true", [], toolToml("t")));
    writePlugin(f.root, "lost", syncManifest("lost", "./bin/run", [], toolToml("t")));
    writePlugin(f.root, "boxed", syncManifest("boxed", "sh", ["-c", "touch ran"], `[sandbox]\n\n${toolToml("t")}`));
    writePlugin(f.root, "bad", 'name = "bad"\n');
    f.registry.rescan();
    const report = await f.host.diagnose();
    // Where sh and true are depends on this machine's PATH.
    const lines = report.map((d) => [d.plugin, d.lines.map((l) => `${l.verdict} ${l.check}: ${l.detail}`.replace(/found: \/\S*\/(sh|true)$/, "found: <PATH>/$1"))]);
    assert.deepEqual(lines, [
      ["bad", [`fail the manifest reads and is valid: ${join(f.root, "bad", "manifest.toml")}:1: version: required; ${join(f.root, "bad", "manifest.toml")}:1: plugin_type: required; ${join(f.root, "bad", "manifest.toml")}:1: entry_point: required`]],
      ["boxed", [
        `ok the manifest reads and is valid: ${join(f.root, "boxed", "manifest.toml")}`, `ok the entry point is found: <PATH>/sh`,
        "fail the sandbox it asks for can be made here: plugin boxed asks for a sandbox but bubblewrap cannot run (ENOENT). Install it: apt-get install bubblewrap",
      ]],
      ["dup", [
        `ok the manifest reads and is valid: ${join(builtin, "dup", "manifest.toml")}`,
        `warn name clash: plugin dup: ${join(f.root, "dup")} (home) wins over ${join(builtin, "dup")} (builtin)`,
        "ok the entry point is found: <PATH>/true",
      ]],
      ["dup", [
        `ok the manifest reads and is valid: ${join(f.root, "dup", "manifest.toml")}`,
        `ok name clash: plugin dup: ${join(f.root, "dup")} (home) wins over ${join(builtin, "dup")} (builtin)`,
        "ok the entry point is found: <PATH>/true",
      ]],
      ["lost", [`ok the manifest reads and is valid: ${join(f.root, "lost", "manifest.toml")}`, "fail the entry point is found: ./bin/run is not found (a relative path counts from the plugin folder, a name is looked up in PATH)"]],
    ]);
    assert.equal(existsSync(join(f.root, "boxed", "ran")), false);
  } finally {
    await f.close();
    rmSync(builtin, { recursive: true, force: true });
  }
});
