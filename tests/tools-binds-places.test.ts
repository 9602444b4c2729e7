/**
 * Issue 26 round 5: where a plugin's writable bind may not go. F6: a manifest that is a link into a subfolder the
 * plugin binds writable (or a hard link) let the plugin delete its own `[sandbox]`; F5: a writable bind of
 * /proc/sys/kernel set host sysctls (hub run as root); F1: a writable bind of a `serve --plugins` folder or of a folder
 * on the hub's PATH planted code the hub ran as itself. Each refused with a text naming the bind and what to do. Real
 * bubblewrap, real plugin processes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { engine, hostFixture, nodePlugin, probeBwrap, syncManifest, tempDir, toolToml, writePlugin, type HostFixture } from "./tools-helpers.js";

const sandboxed = async () => (await probeBwrap("bwrap")).ok;

/** A plugin that writes `text` to `write` (a path inside its sandbox) and says how that went. */
const writer = nodePlugin(`
  const fs = require("node:fs");
  const a = req.params.arguments ?? {};
  let wrote = null;
  if (a.write) { try { fs.mkdirSync(require("node:path").dirname(a.write), { recursive: true }); fs.writeFileSync(a.write, a.text); wrote = true; } catch (e) { wrote = e.code; } }
  return { jsonrpc: "2.0", id: req.id, result: { wrote } };`);

/** The manifest of a sandboxed plugin `name` with these binds (TOML strings). */
function manifestWith(name: string, binds: string[]): string {
  return syncManifest(name, "node", ["main.js"], `[sandbox]\nbinds = [${binds.map((b) => JSON.stringify(b)).join(", ")}]\n\n${toolToml("go")}`);
}

/** Rewrites plugin `name` in `f.root` with these binds, rescans, and returns its folder. */
function plugin(f: HostFixture, name: string, binds: string[]): string {
  rmSync(join(f.root, name), { recursive: true, force: true });
  const dir = writePlugin(f.root, name, manifestWith(name, binds), { "main.js": writer });
  f.registry.rescan();
  return dir;
}

/** What a call of `<name>.go` gave: status, code, message. */
async function refusal(f: HostFixture, name: string, args: Record<string, unknown> = {}): Promise<unknown[]> {
  const r = await f.host.call(`${name}.go`, args, { sessionKey: "s" });
  return [r.status, "code" in r ? r.code : null, "message" in r ? r.message : null];
}

test("issue 26 r5 F6 (reported case): a manifest that links into a subfolder the plugin binds writable is refused at load; the plugin cannot delete its [sandbox]", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const f = hostFixture();
  try {
    const dir = join(f.root, "evilsub");
    mkdirSync(join(dir, "d"), { recursive: true });
    const manifest = manifestWith("evilsub", ["d:/d:rw"]);
    writeFileSync(join(dir, "d", "manifest.toml"), manifest);
    symlinkSync("d/manifest.toml", join(dir, "manifest.toml"));
    writeFileSync(join(dir, "main.js"), writer);
    f.registry.rescan();
    const rec = f.registry.list().find((r) => r.dir === dir)!;
    assert.deepEqual([rec.status, rec.errors], ["rejected", [
      `${join(dir, "manifest.toml")}: the manifest is a symbolic link (to d/manifest.toml): whatever can write where it leads (a folder the plugin binds writable) could rewrite the plugin's sandbox; put the manifest file itself in the plugin's folder`,
    ]]);
    const r = await refusal(f, "evilsub", { write: "/d/manifest.toml", text: 'name = "evilsub"' });
    assert.equal(r[0], "refused", JSON.stringify(r));
    assert.equal(readFileSync(join(dir, "d", "manifest.toml"), "utf8"), manifest, "the sandbox's definition is unchanged");

    // The same folder with a real manifest: the writable bind of its subfolder is refused when the manifest is read.
    rmSync(join(dir, "manifest.toml"));
    writeFileSync(join(dir, "manifest.toml"), manifest);
    f.registry.rescan();
    const sub = f.registry.list().find((r) => r.dir === dir)!;
    assert.deepEqual([sub.status, sub.errors], ["rejected", [
      `${join(dir, "manifest.toml")}:10: sandbox.binds[0]: the plugin's own folder, or anything inside it, is never bound writable (its manifest defines the sandbox, its files are what "always allow" trusts); keep what the plugin writes in a folder outside every plugin folder`,
    ]]);
  } finally {
    await f.close();
  }
});

test("issue 26 r5 F6: other forms — a hard-linked manifest, an absolute writable bind inside the plugin folder, a manifest turned into a link after load — are refused", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const f = hostFixture();
  const outside = tempDir("aa-hardlink-");
  try {
    // A hard link: its other name lies in a folder the plugin binds writable.
    const hard = join(f.root, "hard");
    mkdirSync(hard);
    writeFileSync(join(outside, "manifest.toml"), manifestWith("hard", [`${outside}:/o:rw`]));
    linkSync(join(outside, "manifest.toml"), join(hard, "manifest.toml"));
    writeFileSync(join(hard, "main.js"), writer);
    f.registry.rescan();
    const rec = f.registry.list().find((r) => r.dir === hard)!;
    assert.deepEqual([rec.status, rec.errors], ["rejected", [
      `${join(hard, "manifest.toml")}: the manifest has 2 names (hard links): whatever can write another of them could rewrite the plugin's sandbox; give the plugin a copy of its own (cp, not ln)`,
    ]]);
    // An absolute writable bind of a folder inside the plugin's own: refused before it starts, on its real path.
    const dir = plugin(f, "abs", [`${join(f.root, "abs", "d")}:/d:rw`]);
    mkdirSync(join(dir, "d"));
    assert.deepEqual(await refusal(f, "abs", { write: "/d/x", text: "x" }), ["refused", "tools.bind_refused",
      `plugin abs binds ${join(dir, "d")} writable: it is the plugin's own folder, holds it or lies inside it, where its manifest and code are (what defines the plugin and what is trusted); bind it read-only ("…:ro"), and bind a folder outside every plugin folder for what the plugin writes`]);
    // Loaded with a real manifest, then replaced by a link before any rescan: the start looks again and refuses.
    const later = plugin(f, "later", []);
    const text = readFileSync(join(later, "manifest.toml"), "utf8");
    writeFileSync(join(outside, "later.toml"), text);
    rmSync(join(later, "manifest.toml"));
    symlinkSync(join(outside, "later.toml"), join(later, "manifest.toml"));
    const r = await f.host.call("later.go", {}, { sessionKey: "s" });
    assert.deepEqual([r.status, "code" in r && r.code, "message" in r && r.message], ["refused", "tools.manifest_link",
      `plugin later is not started: its manifest ${join(later, "manifest.toml")} is no regular file of its own (a symbolic link, or a file with other hard links), so whoever writes where it leads could rewrite its sandbox; put the manifest file itself in the plugin's folder`], JSON.stringify(r));
  } finally {
    await f.close();
    rmSync(outside, { recursive: true, force: true });
  }
});

test("issue 26 r5 F5 (reported case and variants): binds of the host's /proc, and writable binds in or holding a system folder, are refused", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const f = hostFixture();
  try {
    const proc = (p: string) => `plugin p binds ${p}: the host's /proc shows every process of the computer (with their command lines) and the kernel's settings; the sandbox has a /proc of its own — remove the bind`;
    const system = (p: string, folder: string) => `plugin p binds ${p} writable: it lies in (or holds) the system folder ${folder} — the kernel's settings, programs, libraries, configuration, services' state; writable, it changes the computer outside the sandbox. Bind it read-only ("…:ro"), or bind a folder of data (under /var only /var/tmp and /var/www)`;
    const cases: [string, string][] = [
      ["/proc/sys/kernel:/k:rw", proc("/proc/sys/kernel")],
      ["/proc:/hostproc:ro", proc("/proc")],
      ["/proc/self/root:/r:ro", proc("/")],
      ["/sys/kernel:/s:rw", system("/sys/kernel", "/sys")],
      ["/etc:/e:rw", system("/etc", "/etc")],
      ["/usr/local:/u", system("/usr/local", "/usr")],
      ["/lib:/l:rw", system("/usr/lib", "/usr")],
      ["/var/lib:/v:rw", system("/var/lib", "/var")],
      ["/var:/v:rw", system("/var", "/var")],
      ["/run:/r:rw", system("/run", "/run")],
    ];
    for (const [bind, why] of cases) {
      plugin(f, "p", [bind]);
      const r = await refusal(f, "p");
      // /proc/self/root is / on the host: refused as the whole file system.
      assert.deepEqual(r, ["refused", "tools.bind_refused", bind.startsWith("/proc/self/root") ? "plugin p binds /: the whole file system is never bound" : why], bind);
    }
    // Read-only binds of system folders stay allowed (shown as broad), and /var/tmp is writable.
    const scratch = tempDir("aa-var-");
    rmSync(scratch, { recursive: true });
    const varTmp = join("/var/tmp", `aa-${process.pid}`);
    mkdirSync(varTmp, { recursive: true });
    try {
      plugin(f, "p", ["/etc:/e:ro", "/sys/class:/c:ro", `${varTmp}:/v:rw`]);
      const ok = await f.host.call("p.go", { write: "/v/x.txt", text: "made" }, { sessionKey: "s" });
      assert.deepEqual([ok.status, (ok as { result?: unknown }).result], ["ok", { wrote: true }], JSON.stringify(ok));
      assert.equal(readFileSync(join(varTmp, "x.txt"), "utf8"), "made");
    } finally {
      rmSync(varTmp, { recursive: true, force: true });
    }
  } finally {
    await f.close();
  }
});

test("issue 26 r5 F1 (reported cases and variants): a writable bind in or holding a plugin root (serve --plugins), a PATH folder or the engine is refused; nothing is planted", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const base = tempDir("aa-hubcode-");
  const ext = join(base, "ext");
  const bin = join(base, "cargo", "bin");
  mkdirSync(join(ext, "sub"), { recursive: true });
  mkdirSync(bin, { recursive: true });
  const later = join(base, "later", "plugins");
  const f = hostFixture({ roots: [ext, later], env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } });
  try {
    const code = (p: string, folder: string) => `plugin p binds ${p} writable: it lies inside or holds ${folder}, where the hub loads or runs code outside every sandbox (the engine, node, a folder on PATH, a plugin root such as serve --plugins or the home's plugins); what the plugin writes there would run as the hub's user. Bind it read-only ("…:ro"), or bind a folder of data elsewhere`;
    // The reported cases: the plugin root, planted with an unsandboxed plugin; the PATH folder, with a python3 shim.
    plugin(f, "p", [`${ext}:/ext:rw`]);
    assert.deepEqual(await refusal(f, "p", { write: "/ext/planted/manifest.toml", text: 'name = "planted"' }), ["refused", "tools.bind_refused", code(ext, ext)]);
    assert.equal(existsSync(join(ext, "planted")), false, "nothing planted in the plugin root");
    plugin(f, "p", [`${bin}:/cb:rw`]);
    assert.deepEqual(await refusal(f, "p", { write: "/cb/python3", text: "#!/bin/sh\n" }), ["refused", "tools.bind_refused", code(bin, bin)]);
    assert.equal(existsSync(join(bin, "python3")), false, "no shim on the hub's PATH");
    // Variants: inside a root, holding a PATH folder, holding a root that does not exist yet, inside the engine.
    for (const [bind, why] of [
      [`${join(ext, "sub")}:/s:rw`, code(join(ext, "sub"), ext)],
      [`${dirname(bin)}:/c:rw`, code(dirname(bin), bin)],
      // Round 47: the parts of a PATH folder's install prefix count as the folder does (`cargo/lib` beside `cargo/bin`).
      [`${join(dirname(bin), "lib")}:/cl:rw`, code(join(dirname(bin), "lib"), join(dirname(bin), "lib"))],
      [`${join(base, "later")}:/l:rw`, code(join(base, "later"), later)],
      [`${join(engine, "docs")}:/d:rw`, code(join(engine, "docs"), engine)],
    ]) {
      mkdirSync(bind.split(":")[0]!, { recursive: true });
      plugin(f, "p", [bind]);
      assert.deepEqual(await refusal(f, "p"), ["refused", "tools.bind_refused", why], bind);
    }
    assert.equal(existsSync(later), false);
    // Read-only, they are fine.
    plugin(f, "p", [`${ext}:/ext:ro`, `${bin}:/cb:ro`]);
    const ro = await f.host.call("p.go", { write: "/ext/x", text: "x" }, { sessionKey: "s" });
    assert.deepEqual([ro.status, (ro as { result?: unknown }).result], ["ok", { wrote: "EROFS" }], JSON.stringify(ro));
  } finally {
    await f.close();
    rmSync(base, { recursive: true, force: true });
  }
});

test("issue 26 round 50, F50a-2 (reported case: a sandboxed plugin's writable bind of a pnpm project, whose node_modules/.pnpm files are hard links into the store): the plugin cannot write the store's file through it; the project's own files stay writable", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const f = hostFixture();
  const base = tempDir("aa-bind-store-");
  try {
    const store = join(base, "store");
    const site = join(base, "site");
    const file = join("node_modules", ".pnpm", "prettier@3.3.3", "node_modules", "prettier", "index.cjs");
    mkdirSync(store);
    mkdirSync(join(site, file, ".."), { recursive: true });
    writeFileSync(join(store, "index.cjs"), "the store\n");
    writeFileSync(join(site, "node_modules", ".modules.yaml"), `storeDir: ${store}\n`);
    linkSync(join(store, "index.cjs"), join(site, file));
    plugin(f, "p", [`${site}:/site:rw`]);
    const wrote = async (path: string) => ((await f.host.call("p.go", { write: path, text: "the plugin's\n" }, { sessionKey: "s" })) as { result?: { wrote: unknown } }).result?.wrote;
    assert.deepEqual([await wrote(`/site/${file}`), await wrote("/site/build.js")], ["EROFS", true]);
    assert.equal(readFileSync(join(store, "index.cjs"), "utf8"), "the store\n");
  } finally {
    await f.close();
    rmSync(base, { recursive: true, force: true });
  }
});
