/**
 * Issue 26 #3: a plugin cannot undo its own sandbox through `[sandbox] binds`. Every bind source is resolved with
 * realpath; `/`, the user's home (or what contains it), the hub's home and every hidden path (or what contains or is
 * inside one), and a writable bind of the plugin's own folder (or what contains it) or of its manifest are refused
 * before anything starts; hidden paths are mounted after the binds. Real bubblewrap, real plugin processes.
 */
import { test } from "node:test";
import { makeTsxCache, tsxCacheDir } from "../src/common/tsx-cache.js";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { makeHome } from "./helpers.js";
import { cliLines, hostFixture, nodePlugin, probeBwrap, syncManifest, tempDir, toolToml, writePlugin, type HostFixture } from "./tools-helpers.js";

const sandboxed = async () => (await probeBwrap("bwrap")).ok;

/** A plugin that reads `read` (a path inside its sandbox) and, when `write` is set, writes that file: its answer says what happened. */
const reader = nodePlugin(`
  const fs = require("node:fs");
  const a = req.params.arguments ?? {};
  const out = {};
  try { out.read = fs.readFileSync(a.read, "utf8"); } catch (e) { out.read = e.code; }
  if (a.write) { try { fs.writeFileSync(a.write, a.text); out.wrote = true; } catch (e) { out.wrote = e.code; } }
  return { jsonrpc: "2.0", id: req.id, result: out };`);

/** A hub home with its master key, a user's home, and a host that hides the hub's home and knows the user's. */
function setup(): { f: HostFixture; hub: string; user: string; cleanup(): Promise<void> } {
  const base = tempDir("aa-binds-");
  const hub = join(base, "hubs", "hub-home");
  const user = join(base, "users", "alice");
  mkdirSync(hub, { recursive: true });
  mkdirSync(user, { recursive: true });
  writeFileSync(join(hub, "master.key"), "top secret");
  writeFileSync(join(user, ".npmrc"), "token=npm");
  const f = hostFixture({ env: { ...process.env, HOME: user }, hiddenPaths: [hub] });
  return { f, hub, user, async cleanup() { await f.close(); rmSync(base, { recursive: true, force: true }); } };
}

/** A sandboxed plugin `name` running `reader` with these binds (TOML strings), and extra files. */
function bindPlugin(f: HostFixture, name: string, binds: string[], files: Record<string, string> = {}): string {
  const manifest = syncManifest(name, "node", ["main.js"], `[sandbox]\nbinds = [${binds.map((b) => JSON.stringify(b)).join(", ")}]\n\n${toolToml("go")}`);
  return writePlugin(f.root, name, manifest, { "main.js": reader, ...files });
}

test("issue 26 #3 (reported case): a writable bind of the plugin's own folder is refused, so the plugin cannot delete its [sandbox] and read the master key", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const { f, hub, cleanup } = setup();
  try {
    const dir = bindPlugin(f, "undo", [".:/self:rw"]);
    const manifest = readFileSync(join(dir, "manifest.toml"), "utf8");
    f.registry.rescan();
    const unsandboxed = manifest.replace(/\[sandbox\]\nbinds = \[[^\]]*\]\n/, "");
    const first = await f.host.call("undo.go", { read: "/self/manifest.toml", write: "/self/manifest.toml", text: unsandboxed }, { sessionKey: "s" });
    assert.equal(first.status, "refused", JSON.stringify(first));
    assert.ok((first as { message: string }).message.includes("sandbox.binds[0]: the plugin's own folder, or anything inside it, is never bound writable (its manifest defines the sandbox, its files are what \"always allow\" trusts); keep what the plugin writes in a folder outside every plugin folder"), (first as { message: string }).message);
    assert.equal(readFileSync(join(dir, "manifest.toml"), "utf8"), manifest, "the manifest is unchanged");
    f.registry.rescan();
    const second = await f.host.call("undo.go", { read: join(hub, "master.key") }, { sessionKey: "s" });
    assert.equal(second.status, "refused", `still refused, the master key unread: ${JSON.stringify(second)}`);
    // The same through a symlink in the plugin folder (kept by `add` and by git): refused when it would start.
    const linked = bindPlugin(f, "undo2", [`${join(f.root, "undo2", "me")}:/self:rw`]);
    symlinkSync(".", join(linked, "me"));
    f.registry.rescan();
    const viaLink = await f.host.call("undo2.go", { write: "/self/manifest.toml", text: unsandboxed }, { sessionKey: "s" });
    assert.deepEqual([viaLink.status, "code" in viaLink && viaLink.code, "message" in viaLink && viaLink.message], ["refused", "tools.bind_refused",
      `plugin undo2 binds ${linked} writable: it is the plugin's own folder, holds it or lies inside it, where its manifest and code are (what defines the plugin and what is trusted); bind it read-only ("…:ro"), and bind a folder outside every plugin folder for what the plugin writes`]);
    assert.ok(readFileSync(join(linked, "manifest.toml"), "utf8").includes("[sandbox]"));
  } finally {
    await cleanup();
  }
});

test("issue 26 #3: every bind form that reaches `/`, a home, a hidden path or the plugin's own definition is refused with why; fine binds work and hidden paths stay hidden under them", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const { f, hub, user, cleanup } = setup();
  try {
    const outside = join(dirname(dirname(user)), "outside");
    mkdirSync(outside);
    writeFileSync(join(outside, "x.txt"), "outside");
    symlinkSync(hub, join(outside, "to-hub"));
    const tsxCache = tsxCacheDir();
    assert.equal(makeTsxCache(tsxCache), null);
    // A link in the plugin folder that leads out of it refuses the whole plugin before any bind is looked at (issue 26
    // round 2 #6: what the digest covers is what can run); binds through such links are refused all the same.
    const linkOut = (name: string, target: string) => (dir: string) => `plugin p has no valid manifest: ${dir}: ${name} in the plugin's folder is a symbolic link leading out of the folder or nowhere (${target}): what it leads to would run without being part of the plugin's digest, so the plugin is not used; copy what it needs into the folder`;
    const refused: { binds: string[]; files?: Record<string, string>; links?: Record<string, string>; code?: string; why: (dir: string) => string }[] = [
      { binds: [`${user}:/h:ro`], why: () => `plugin p binds ${user}: it is the user's home (or holds it); bind only the folders the plugin needs` },
      { binds: [`${dirname(user)}:/h:ro`], why: () => `plugin p binds ${dirname(user)}: it is the user's home (or holds it); bind only the folders the plugin needs` },
      { binds: [`${hub}:/k:ro`], why: () => `plugin p binds ${hub}: it is a path the host hides from every sandbox (the hub's home, with its keys), or is inside or holds one` },
      { binds: [`${join(hub, "master.key")}:/k:ro`], why: () => `plugin p binds ${join(hub, "master.key")}: it is a path the host hides from every sandbox (the hub's home, with its keys), or is inside or holds one` },
      { binds: [`${dirname(hub)}:/k:ro`], why: () => `plugin p binds ${dirname(hub)}: it is a path the host hides from every sandbox (the hub's home, with its keys), or is inside or holds one` },
      // tsx's compile cache: the home's TypeScript plugins compiled (hostile round 41, F41b-3).
      { binds: [`${tsxCache}:/tsx:ro`], why: () => `plugin p binds ${tsxCache}: it is a path the host hides from every sandbox (the hub's home, with its keys), or is inside or holds one` },
      // Through a symlink, absolute or in the plugin folder (kept by `add` and by git): the real path counts.
      { binds: [`${join(outside, "to-hub")}:/k:ro`], why: () => `plugin p binds ${hub}: it is a path the host hides from every sandbox (the hub's home, with its keys), or is inside or holds one` },
      { binds: ["./keys:/k:ro"], links: { keys: hub }, code: "tools.unknown_plugin", why: linkOut("keys", hub) },
      { binds: ["keys/master.key:/k:ro"], links: { keys: hub }, code: "tools.unknown_plugin", why: linkOut("keys", hub) },
      { binds: ["./root:/r:ro"], links: { root: "/" }, code: "tools.unknown_plugin", why: linkOut("root", "/") },
      // The plugin's own folder read-write through a symlink; the folder holding it (other spellings: the manifest test).
      { binds: [`${join(f.root, "p", "self")}:/self:rw`], links: { self: "." }, why: (dir) => `plugin p binds ${dir} writable: it is the plugin's own folder, holds it or lies inside it, where its manifest and code are (what defines the plugin and what is trusted); bind it read-only ("…:ro"), and bind a folder outside every plugin folder for what the plugin writes` },
      { binds: [`${f.root}:/plugins:rw`], why: () => `plugin p binds ${f.root} writable: it is the plugin's own folder, holds it or lies inside it, where its manifest and code are (what defines the plugin and what is trusted); bind it read-only ("…:ro"), and bind a folder outside every plugin folder for what the plugin writes` },
    ];
    for (const c of refused) {
      rmSync(join(f.root, "p"), { recursive: true, force: true });
      const dir = bindPlugin(f, "p", c.binds, c.files);
      for (const [name, target] of Object.entries(c.links ?? {})) symlinkSync(target, join(dir, name));
      f.registry.rescan();
      const r = await f.host.call("p.go", { read: "/k/master.key" }, { sessionKey: "s" });
      assert.deepEqual([r.status, "code" in r && r.code, "message" in r && r.message], ["refused", c.code ?? "tools.bind_refused", c.why(dir)], c.binds.join(" "));
      // The check says the same before any call (what the hub's card is made from).
      const checked = await f.host.check("p.go", {});
      assert.deepEqual([checked.ok, !checked.ok && checked.code], [false, c.code ?? "tools.bind_refused"], c.binds.join(" "));
    }

    // Fine binds: the plugin folder read-only, a folder of its own writable, a folder in the user's home read-only.
    rmSync(join(f.root, "p"), { recursive: true, force: true });
    // Data the plugin writes lies outside every plugin folder (issue 26 round 5, F6).
    const data = join(outside, "data");
    mkdirSync(data);
    writeFileSync(join(data, "note.txt"), "data");
    const dir = bindPlugin(f, "p", [".:/self:ro", `${data}:/data:rw`, `${outside}:/out:ro`, `./sub:${hub}:ro`], { "sub/note.txt": "sub" });
    f.registry.rescan();
    const own = await f.host.call("p.go", { read: "/self/manifest.toml", write: "/self/manifest.toml", text: "x" }, { sessionKey: "s" });
    assert.equal(own.status, "ok", JSON.stringify(own));
    assert.deepEqual([(own as { result: { read: string; wrote: unknown } }).result.read.startsWith('name = "p"'), (own as { result: { wrote: unknown } }).result.wrote], [true, "EROFS"]);
    const wrote = await f.host.call("p.go", { read: "/data/note.txt", write: "/data/new.txt", text: "made" }, { sessionKey: "s" });
    assert.deepEqual((wrote as { result: unknown }).result, { read: "data", wrote: true });
    assert.equal(readFileSync(join(data, "new.txt"), "utf8"), "made");
    const out = await f.host.call("p.go", { read: "/out/x.txt" }, { sessionKey: "s" });
    assert.deepEqual((out as { result: unknown }).result, { read: "outside" });
    // A bind whose container is a hidden path: the hidden path is mounted after it, so it stays empty.
    const hidden = await f.host.call("p.go", { read: join(hub, "note.txt") }, { sessionKey: "s" });
    assert.deepEqual((hidden as { result: unknown }).result, { read: "ENOENT" });
    // The binds the hub's card and `plugins inspect` show: real sources, modes, and a warning for the broad ones.
    const checked = await f.host.check("p.go", {});
    assert.ok(checked.ok);
    assert.deepEqual(checked.binds, [
      { source: dir, container: "/self", readOnly: true },
      { source: data, container: "/data", readOnly: false, broad: "writable" },
      { source: outside, container: "/out", readOnly: true },
      { source: join(dir, "sub"), container: hub, readOnly: true },
    ]);
    rmSync(join(f.root, "p"), { recursive: true, force: true });
    bindPlugin(f, "p", ["/etc:/etc2:ro", `${outside}:/out:rw`, `${join(user, ".npmrc")}:/npmrc:ro`]);
    f.registry.rescan();
    const broad = await f.host.check("p.go", {});
    assert.ok(broad.ok);
    assert.deepEqual(broad.binds, [
      { source: "/etc", container: "/etc2", readOnly: true, broad: "topLevel" },
      { source: outside, container: "/out", readOnly: false, broad: "writable" },
      { source: join(user, ".npmrc"), container: "/npmrc", readOnly: true, broad: "inHome" },
    ]);
  } finally {
    await cleanup();
  }
});

test("issue 26 #3: the manifest refuses `/` and a writable bind of the plugin folder itself when it is read, naming the bind and its line", () => {
  const { f, cleanup } = setup();
  try {
    for (const [bind, message] of [
      ["/:/host:ro", "sandbox.binds[0]: the whole file system (/) is never bound"],
      ["/./:/host:ro", "sandbox.binds[0]: the whole file system (/) is never bound"],
      ["//:/host:ro", "sandbox.binds[0]: the whole file system (/) is never bound"],
      ["./:/self:rw", "sandbox.binds[0]: the plugin's own folder, or anything inside it, is never bound writable (its manifest defines the sandbox, its files are what \"always allow\" trusts); keep what the plugin writes in a folder outside every plugin folder"],
      [".:/self", "sandbox.binds[0]: the plugin's own folder, or anything inside it, is never bound writable (its manifest defines the sandbox, its files are what \"always allow\" trusts); keep what the plugin writes in a folder outside every plugin folder"],
      ["./manifest.toml:/m", "sandbox.binds[0]: the plugin's own folder, or anything inside it, is never bound writable (its manifest defines the sandbox, its files are what \"always allow\" trusts); keep what the plugin writes in a folder outside every plugin folder"],
      ["plugin-manifest.toml:/m:rw", "sandbox.binds[0]: the plugin's own folder, or anything inside it, is never bound writable (its manifest defines the sandbox, its files are what \"always allow\" trusts); keep what the plugin writes in a folder outside every plugin folder"],
      [".:/self:rw", "sandbox.binds[0]: the plugin's own folder, or anything inside it, is never bound writable (its manifest defines the sandbox, its files are what \"always allow\" trusts); keep what the plugin writes in a folder outside every plugin folder"],
      ["./data:/d", "sandbox.binds[0]: the plugin's own folder, or anything inside it, is never bound writable (its manifest defines the sandbox, its files are what \"always allow\" trusts); keep what the plugin writes in a folder outside every plugin folder"],
      ["sub/data:/d:rw", "sandbox.binds[0]: the plugin's own folder, or anything inside it, is never bound writable (its manifest defines the sandbox, its files are what \"always allow\" trusts); keep what the plugin writes in a folder outside every plugin folder"],
      ["./manifest.toml:/m:rw", "sandbox.binds[0]: the plugin's own folder, or anything inside it, is never bound writable (its manifest defines the sandbox, its files are what \"always allow\" trusts); keep what the plugin writes in a folder outside every plugin folder"],
    ] as const) {
      rmSync(join(f.root, "p"), { recursive: true, force: true });
      const dir = bindPlugin(f, "p", [bind]);
      f.registry.rescan();
      const rec = f.registry.list().find((r) => r.dir === dir)!;
      assert.deepEqual([rec.status, rec.errors], ["rejected", [`${join(dir, "manifest.toml")}:10: ${message}`]], bind);
      // rescan keeps nothing of the bad one: a fresh folder each time
      rmSync(dir, { recursive: true, force: true });
      f.registry.rescan();
    }
  } finally {
    void cleanup();
  }
});

test("issue 26 #3: plugins inspect lists each bind's real source and mode, warns of broad ones and says why a bind is refused", async () => {
  const home = makeHome().dir;
  try {
    const dir = join(home, "plugins", "p");
    mkdirSync(dir, { recursive: true });
    // The link to the home lies outside the plugin's folder (one inside leading out refuses the plugin: tools-trust).
    const keys = join(dirname(home), `${basename(home)}-keys`);
    symlinkSync(home, keys);
    writeFileSync(join(dir, "manifest.toml"), syncManifest("p", "node", ["main.js"], `[sandbox]\nbinds = ["/etc:/etc2:ro", "${join(dirname(home), `${basename(home)}-data`)}:/data:rw", "${keys}:/k:ro"]\n\n${toolToml("go")}`));
    writeFileSync(join(dir, "main.js"), reader);
    mkdirSync(`${home}-data`);
    const r = await cliLines(["plugins", "inspect", "p"], home);
    assert.equal(r.code, 0, r.err.join("\n"));
    const at = r.out.findIndex((l) => l.startsWith("  sandbox:"));
    assert.deepEqual(r.out.slice(at + 1, at + 4), [
      "    bind: /etc → /etc2 (read-only) ⚠ broad: a whole top-level folder",
      `    bind: ${home}-data → /data (writable) ⚠ broad: writable outside the plugin's folder`,
      `    bind refused: plugin p binds ${home}: it is a path the host hides from every sandbox (the hub's home, with its keys), or is inside or holds one`,
    ]);
  } finally {
    rmSync(home, { recursive: true, force: true });
    rmSync(`${home}-keys`, { force: true });
    rmSync(`${home}-data`, { recursive: true, force: true });
  }
});

test("issue 26 r13 F13-10, plugins: in a writable bind, the folders between the bind and a guarded git part are mount points — the plugin cannot rename the parent of a repository's hooks folder to put its own in place", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const { f, cleanup } = setup();
  try {
    const data = join(dirname(f.root), "data");
    const repo = join(data, "code", "repo");
    mkdirSync(join(repo, "scripts", "git-hooks"), { recursive: true });
    execFileSync("git", ["init", "-q", repo]);
    execFileSync("git", ["-C", repo, "config", "core.hooksPath", "scripts/git-hooks"]);
    writeFileSync(join(repo, "scripts", "git-hooks", "pre-commit"), "#!/bin/sh\n", { mode: 0o755 });
    const renamer = nodePlugin(`
      const fs = require("node:fs");
      const out = {};
      for (const [from, to] of req.params.arguments.moves) { try { fs.renameSync(from, to); out[from] = "moved"; } catch (e) { out[from] = e.code; } }
      return { jsonrpc: "2.0", id: req.id, result: out };`);
    writePlugin(f.root, "mv", syncManifest("mv", "node", ["main.js"], `[sandbox]\nbinds = [${JSON.stringify(`${data}:/data:rw`)}]\n\n${toolToml("go")}`), { "main.js": renamer });
    f.registry.rescan();
    const moves = [["/data/code/repo/scripts", "/data/code/repo/scripts-old"], ["/data/code/repo", "/data/code/repo-old"], ["/data/code", "/data/code-old"], ["/data/code/repo/scripts/git-hooks/pre-commit", "/data/x"]];
    const r = await f.host.call("mv.go", { moves }, { sessionKey: "s" });
    assert.deepEqual((r as { result: unknown }).result, {
      "/data/code/repo/scripts": "EBUSY", "/data/code/repo": "EBUSY", "/data/code": "EBUSY", "/data/code/repo/scripts/git-hooks/pre-commit": "EXDEV",
    }, JSON.stringify(r));
  } finally {
    await cleanup();
  }
});
