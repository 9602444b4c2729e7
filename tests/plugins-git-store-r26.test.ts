/**
 * Issue 26 round 26, F26b-1 (reported cases kept): "always allow" is bound to the digest of the plugin's files, but the
 * walk that makes it left out a top-level `.git` by name and counted any other entry by its kind. Changed code then ran
 * with no card: the entry point in `.git` (`args = [".git/main.py"]`), a link into it (`main.py -> .git/real.py`), a
 * `.git` that was a link to a folder a sandboxed agent writes, and a FIFO `main.py` hard-linked to the agent's folder.
 * The kind: an entry the digest stands for without its content. Now nothing in git's store may run (a link into it and
 * an entry point naming it are refused), a `.git` that is a link or a file is checked as any entry, and an entry that
 * is neither file, folder nor link refuses the plugin. Varied: a folder link into `.git`, a `.git` gitfile, a socket,
 * an env value naming `.git`, a declarative plugin; a clone's `.git` with hard-linked objects still loads.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { linkSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { tempDir } from "./helpers.js";
import { copyExample } from "./declarative-helpers.js";
import { nodePlugin, syncManifest, toolToml, writePlugin } from "./tools-helpers.js";
import { ToolRegistry } from "../src/tools/registry.js";
import { namesGitStore } from "../src/tools/manifest-rules.js";
import { filesListed, pluginFiles, FileHashCache, plainDigest } from "../src/plugins/files.js";
import { check } from "../src/protocol/validate.js";

const echo = nodePlugin(`return { jsonrpc: "2.0", id: req.id, result: { hi: true } };`);
const mkfifo = (path: string) => execFileSync("mkfifo", [path]);
/** A unix socket file left in place (python's bind does not remove it at exit). */
const socketFile = (path: string) => execFileSync("python3", ["-c", "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])", path]);

test("issue 26 r26 F26b-1 (reported cases): nothing in .git runs, a .git link out and a FIFO refuse the plugin, with why; a clone's .git still loads", () => {
  const root = realpathSync(tempDir("aa-gitstore-"));
  const proj = realpathSync(tempDir("aa-gitstore-proj-"));
  try {
    // (a) the entry point in .git; its env naming .git.
    writePlugin(root, "gitentry", syncManifest("gitentry", "node", [".git/main.js"], toolToml("hi")), { ".git/main.js": echo });
    writePlugin(root, "gitenv", syncManifest("gitenv", "node", ["main.js"], `[entry_point.env]\nNODE_PATH = "./.git/lib"\n\n${toolToml("hi")}`), { "main.js": echo });
    // (c) a file link into .git, and a folder link to .git itself.
    writePlugin(root, "gitlink", syncManifest("gitlink", "node", ["main.js"], toolToml("hi")), { ".git/real.js": echo });
    symlinkSync(".git/real.js", join(root, "gitlink", "main.js"));
    writePlugin(root, "gitdir", syncManifest("gitdir", "node", ["lib/main.js"], toolToml("hi")), { ".git/main.js": echo });
    symlinkSync(".git", join(root, "gitdir", "lib"));
    // (b) .git a link to a folder an agent writes.
    writePlugin(root, "gitout", syncManifest("gitout", "node", ["main.js"], toolToml("hi")), { "main.js": echo });
    mkdirSync(join(proj, ".gitstore"));
    symlinkSync(join(proj, ".gitstore"), join(root, "gitout", ".git"));
    // (d) a FIFO entry point hard-linked to the agent's folder; a socket deeper in.
    writePlugin(root, "fifo", syncManifest("fifo", "python3", ["main.py"], toolToml("hi")));
    mkfifo(join(proj, "pipe"));
    linkSync(join(proj, "pipe"), join(root, "fifo", "main.py"));
    writePlugin(root, "sock", syncManifest("sock", "node", ["main.js"], toolToml("hi")), { "main.js": echo, "run/.keep": "" });
    socketFile(join(root, "sock", "run", "s"));
    // Load: a .git that is a gitfile (a file, digested), and a real clone whose objects are hard links.
    writePlugin(root, "gitfile", syncManifest("gitfile", "node", ["main.js"], toolToml("hi")), { "main.js": echo, ".git": `gitdir: ${proj}/elsewhere\n` });
    const origin = writePlugin(proj, "origin", syncManifest("cloned", "node", ["main.js"], toolToml("hi")), { "main.js": echo });
    const git = (cwd: string, ...args: string[]) => execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd, stdio: "pipe" });
    git(origin, "init", "-q");
    git(origin, "add", ".");
    git(origin, "commit", "-qm", "one");
    git(proj, "clone", "-q", "--local", origin, join(root, "cloned"));

    const registry = new ToolRegistry([{ dir: root, origin: "home" }], "en");
    registry.rescan();
    const byName = new Map(registry.list().map((r) => [r.name, r]));
    const status = (n: string) => `${n}:${byName.get(n)?.status}`;
    assert.deepEqual(["cloned", "fifo", "gitdir", "gitentry", "gitenv", "gitfile", "gitlink", "gitout", "sock"].map(status), [
      "cloned:ok", "fifo:rejected", "gitdir:rejected", "gitentry:rejected", "gitenv:rejected", "gitfile:ok", "gitlink:rejected", "gitout:rejected", "sock:rejected",
    ]);
    const said = (n: string) => byName.get(n)!.errors.map((e) => e.replaceAll(`${root}/`, "<root>/").replace(proj, "<proj>"));
    assert.deepEqual(said("gitentry"), ["<root>/gitentry/manifest.toml:7: entry_point.args[0]: names the plugin folder's .git, whose content is not part of the plugin's digest and may not run"]);
    assert.deepEqual(said("gitenv"), ["<root>/gitenv/manifest.toml:10: entry_point.env.NODE_PATH: names the plugin folder's .git, whose content is not part of the plugin's digest and may not run"]);
    assert.deepEqual(said("gitlink"), [`<root>/gitlink: main.js in the plugin's folder is a symbolic link leading into .git (<root>/gitlink/.git/real.js): what .git holds is not part of the plugin's digest and may not run, so the plugin is not used; keep the file outside .git`]);
    assert.deepEqual(said("gitdir"), [`<root>/gitdir: lib in the plugin's folder is a symbolic link leading into .git (<root>/gitdir/.git): what .git holds is not part of the plugin's digest and may not run, so the plugin is not used; keep the file outside .git`]);
    assert.deepEqual(said("gitout"), [`<root>/gitout: .git in the plugin's folder is a symbolic link leading out of the folder or nowhere (<proj>/.gitstore): what it leads to would run without being part of the plugin's digest, so the plugin is not used; copy what it needs into the folder`]);
    assert.deepEqual(said("fifo"), [`<root>/fifo: main.py in the plugin's folder is a fifo, not a file, folder or link: it has no content to digest (an interpreter reads from a FIFO whatever its writer sends), so the plugin is not used; remove it`]);
    assert.deepEqual(said("sock"), [`<root>/sock: run/s in the plugin's folder is a socket, not a file, folder or link: it has no content to digest (an interpreter reads from a FIFO whatever its writer sends), so the plugin is not used; remove it`]);
    assert.deepEqual(registry.list().filter((r) => r.status === "ok").map((r) => r.name).sort(), ["cloned", "gitfile"]);

    // A gitfile is digested as a file: its change is a change of the plugin.
    const before = byName.get("gitfile")!.digest;
    writeFileSync(join(root, "gitfile", ".git"), "gitdir: /somewhere/else\n");
    registry.rescan();
    assert.notEqual(registry.list().find((r) => r.name === "gitfile")!.digest, before);

    // A FIFO put into a loaded plugin later refuses it at the next rescan (the watcher's walk is the same).
    mkfifo(join(root, "cloned", "later.py"));
    registry.rescan();
    assert.equal(registry.list().find((r) => r.name === "cloned")!.status, "rejected");

    // Declarative plugins are walked the same way.
    const decl = realpathSync(tempDir("aa-gitstore-decl-"));
    try {
      copyExample(decl, "withfifo");
      mkfifo(join(decl, "withfifo", "note"));
      const walked = pluginFiles(join(decl, "withfifo"), new FileHashCache());
      assert.deepEqual(walked, { ok: false, why: "special", path: "note", kind: "fifo" });
      copyExample(decl, "plain");
      const plain = pluginFiles(join(decl, "plain"), new FileHashCache());
      assert.equal(plain.ok && plainDigest(plain.files).length, 64);
    } finally {
      rmSync(decl, { recursive: true, force: true });
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
    rmSync(proj, { recursive: true, force: true });
  }
});

test("issue 26 r26 F26b-1: which entry point values name .git", () => {
  const named = [".git/main.py", "./.git/x", "/workspace/.git/x", ".git", "exec(open('.git/x').read())", "exec(open(\".git/x\"))", "--script=.git/run", "a:.git/lib", ".git\\x", "cat .git/x"];
  const not = ["main.py", ".gitignore", "x.git/y", "lib.git", ".github/x", "git/main.py", "my.git", "sub/.git/x", "/w/.git/config", "git -C /w commit"];
  assert.deepEqual(named.filter((v) => !namesGitStore(v)), []);
  assert.deepEqual(not.filter((v) => namesGitStore(v)), []);
});

test("issue 26 r28 F28b-1 (reported case: a link replaced by a file holding link:<its text>, valid Python, kept the digest and ran with no card): each kind of entry stands apart", () => {
  const dir = realpathSync(tempDir("aa-kinds-"));
  try {
    writeFileSync(join(dir, "real.py"), "print('hi')\n");
    symlinkSync("real.py", join(dir, "main.py"));
    mkdirSync(join(dir, "lib"));
    const digest = () => {
      const r = pluginFiles(dir, new FileHashCache());
      assert.ok(r.ok, JSON.stringify(r));
      return plainDigest(r.files);
    };
    const seen = new Set([digest()]);
    rmSync(join(dir, "main.py"));
    writeFileSync(join(dir, "main.py"), "link:real.py");
    assert.ok(!seen.has(digest()), "a file in a link's place");
    seen.add(digest());
    rmSync(join(dir, "lib"), { recursive: true });
    writeFileSync(join(dir, "lib"), "kind:folder");
    assert.ok(!seen.has(digest()), "a file in a folder's place");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("issue 26 r30 F30b-1 (reported case: s -> . and main.py -> s/s/s/s/s/../../../../../<outside>/evil.py, a harmless copy where the text reads): a link is judged by where the kernel leads it, not by its text made shorter", () => {
  const outside = realpathSync(tempDir("aa-r30-outside-"));
  const dir = join(outside, "a", "b", "c", "d", "plugin");
  try {
    mkdirSync(join(dir, "tmp", "lkx"), { recursive: true });
    mkdirSync(join(outside, "tmp", "lkx"), { recursive: true });
    writeFileSync(join(dir, "tmp", "lkx", "evil.py"), "print('the harmless copy')\n");
    writeFileSync(join(outside, "tmp", "lkx", "evil.py"), "print('outside the plugin')\n");
    symlinkSync(".", join(dir, "s"));
    // Read as text, `s/s/s/s/s/../../../../..` is the plugin folder; the kernel follows each `s` (the folder itself)
    // first, then climbs five folders: `outside`.
    const text = "s/s/s/s/s/../../../../../tmp/lkx/evil.py";
    symlinkSync(text, join(dir, "main.py"));
    assert.equal(readFileSync(join(dir, "main.py"), "utf8"), "print('outside the plugin')\n", "the kernel's reading");
    const r = pluginFiles(dir, new FileHashCache());
    assert.deepEqual(r, { ok: false, why: "link", path: "main.py", target: join(outside, "tmp", "lkx", "evil.py") });
  } finally {
    rmSync(outside, { recursive: true, force: true });
  }
});

test("issue 26 r30 F30b-1 (the kind): no source resolves a path with Node's JavaScript realpath, which shortens `..` as text before following links; the kernel's (`realpathSync.native`) only", () => {
  const src = join(import.meta.dirname, "..", "src");
  const files = execFileSync("find", [src, "-name", "*.ts"], { encoding: "utf8" }).split("\n").filter(Boolean);
  const found = files.flatMap((f) => [...readFileSync(f, "utf8").matchAll(/\brealpath(Sync)?\(/g)].map(() => f.slice(src.length + 1)));
  assert.deepEqual(found, []);
});

test("issue 26 r30 F30b-3 (reported case: every agent's call of a plugin with a subfolder or a link was refused, `files[0]: wrong format`): the hub's tool-call body takes the file list the host makes, folders and links too", () => {
  const dir = realpathSync(tempDir("aa-r30-kinds-"));
  try {
    writeFileSync(join(dir, "real.py"), "print('hi')\n");
    symlinkSync("real.py", join(dir, "main.py"));
    mkdirSync(join(dir, "lib"));
    writeFileSync(join(dir, "lib", "util.py"), "x = 1\n");
    const r = pluginFiles(dir, new FileHashCache());
    assert.ok(r.ok, JSON.stringify(r));
    const files = filesListed(r.files, "real.py", "0".repeat(64));
    assert.deepEqual(files.map((f) => f.slice(17)), ["lib", "lib/util.py", "main.py", "real.py"]);
    const body = { tool: "p.go", argsDigest: `sha256:${"a".repeat(64)}`, preview: "{}", files };
    const checked = check("ToolCallBody", body, "en");
    assert.ok(checked.ok, JSON.stringify(checked));
    assert.equal(check("ToolCallBody", { ...body, files: ["folder x"] }, "en").ok, false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("issue 26 r30 F30b-4 (reported case: tools/x<LF>worker local connected<ESC>[31mRED.json printed as two lines by plugins reload, list and inspect): a declarative plugin's error names its file with every control character escaped", async () => {
  const root = realpathSync(tempDir("aa-r30-decl-"));
  try {
    const dir = copyExample(root, "nm");
    const name = "x\nworker local connected\u001b[31mRED.json";
    writeFileSync(join(dir, "tools", name), "{}");
    const { loadPlugin } = await import("../src/declarative/load.js");
    const out = await loadPlugin(dir, "home", "en");
    assert.equal(out.ok, false);
    const files = out.ok ? [] : out.errors.map((e) => e.file).filter((f) => f.startsWith(join(dir, "tools")));
    assert.deepEqual(files, [join(dir, "tools", "x\\u{a}worker local connected\\u{1b}[31mRED.json")]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("issue 26 r31 F31b-1 (reported case: main.py -> ~/project/ln/real.py with ~/project/ln a link back into the plugin, which an agent swapped between the check and the start): a link whose text leaves the plugin's folder is refused even when it ends inside", () => {
  const outside = realpathSync(tempDir("aa-r31-project-"));
  const dir = realpathSync(tempDir("aa-r31-plugin-"));
  try {
    writeFileSync(join(dir, "real.py"), "print('the plugin')\n");
    symlinkSync(dir, join(outside, "ln"));
    symlinkSync(join(outside, "ln", "real.py"), join(dir, "main.py"));
    assert.deepEqual(pluginFiles(dir, new FileHashCache()), { ok: false, why: "link", path: "main.py", target: join(outside, "ln", "real.py") });
    // The relative form of the report.
    rmSync(join(dir, "main.py"));
    const relative = join("..", basename(outside), "ln", "real.py");
    symlinkSync(relative, join(dir, "main.py"));
    assert.deepEqual(pluginFiles(dir, new FileHashCache()), { ok: false, why: "link", path: "main.py", target: join(outside, "ln", "real.py") });
    // A link within the folder still loads.
    rmSync(join(dir, "main.py"));
    symlinkSync("real.py", join(dir, "main.py"));
    assert.equal(pluginFiles(dir, new FileHashCache()).ok, true);
  } finally {
    rmSync(outside, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  }
});
