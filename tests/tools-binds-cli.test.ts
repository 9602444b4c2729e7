/**
 * Issue 26 round 6 (F1v, F8): `plugins invoke` runs a sandboxed plugin where the owner's shell is, and checked its
 * writable binds against that shell's view — its PATH, its HOME, the plugin roots it could guess from the running hub's
 * plugin list. A hostile plugin wrote into an empty `serve --plugins` folder (planting a service the hub then started
 * as itself), into a folder only on the hub's PATH, into the hub user's home, and with the hub down into any of them.
 * Every `serve` now records what it runs code from (`code-folders.json` in the home) and every tool host of the home
 * checks against it; a writable bind of a dot-folder in the hub user's home (`~/.config/systemd/user`) is refused too.
 * A real hub, the real CLI, real bubblewrap and plugin processes.
 */
import { test } from "node:test";
import { createServer } from "node:net";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { nodePlugin, probeBwrap, syncManifest, tempDir, toolToml, writePlugin } from "./tools-helpers.js";
import { initHome, runCli } from "./cli-homes.js";
import { engine, serveProcess } from "./helpers.js";
import { checkBinds } from "../src/tools/binds.js";
import { bindRefusal } from "../src/tools/process.js";
import { deviceRefusalText } from "../src/tools/devices.js";
import { hubCodeFolders, hubCodeProblem } from "../src/worker/hub-code.js";
import { configuredPlaces, goPlaces } from "../src/worker/runtime-places.js";
import { pthFolders } from "../src/worker/plugin-programs.js";

/** A plugin that writes `text` to `write` (a path inside its sandbox) and says how that went. */
const writer = nodePlugin(`
  const fs = require("node:fs");
  const a = req.params.arguments ?? {};
  let wrote = null;
  if (a.write) { try { fs.mkdirSync(require("node:path").dirname(a.write), { recursive: true }); fs.writeFileSync(a.write, a.text); wrote = true; } catch (e) { wrote = e.code; } }
  return { jsonrpc: "2.0", id: req.id, result: { wrote } };`);

/** Writes the home plugin `evil`, sandboxed, with one bind `bind` (TOML string). */
function evil(home: string, bind: string): void {
  const plugins = join(home, "plugins");
  rmSync(join(plugins, "evil"), { recursive: true, force: true });
  mkdirSync(plugins, { recursive: true });
  writePlugin(plugins, "evil", syncManifest("evil", "node", ["main.js"], `[sandbox]\nbinds = [${JSON.stringify(bind)}]\n\n${toolToml("go")}`), { "main.js": writer });
}

test("issue 26 r6 F1v (reported cases): plugins invoke refuses writable binds of what the hub runs code from — its empty serve --plugins folder, its PATH, its HOME — though the owner's shell has other ones, with the hub running or down", async (t) => {
  if (!(await probeBwrap("bwrap")).ok) return t.skip("bubblewrap cannot run here");
  const base = tempDir("aa-binds-cli-");
  const home = initHome(join(base, "home"), "127.0.0.1:0");
  const ext = join(base, "ext");
  const bin = join(base, "hub-bin");
  const hubUser = join(base, "hub-user");
  for (const d of [ext, bin, join(hubUser, ".config", "systemd", "user")]) mkdirSync(d, { recursive: true });
  // The hub runs with a PATH folder and a HOME the owner's shell (this test's environment) does not have.
  const hubEnv = { ...process.env, AGENT_AUTOLOOP_LANG: "en", DISPLAY: "", WAYLAND_DISPLAY: "", PATH: `${bin}:${process.env.PATH}`, HOME: hubUser };
  let hub = await serveProcess(home, undefined, hubEnv, "127.0.0.1:0", ["--plugins", ext]);
  try {
    const recorded = JSON.parse(readFileSync(join(home, "code-folders.json"), "utf8")) as { folders: string[]; homes: string[] };
    assert.deepEqual([recorded.folders.includes(ext), recorded.folders.includes(bin), recorded.homes.includes(hubUser)], [true, true, true]);
    const code = (p: string) => `refused: plugin evil binds ${p} writable: it lies inside or holds ${p}, where the hub loads or runs code outside every sandbox (the engine, node, a folder on PATH, a plugin root such as serve --plugins or the home's plugins); what the plugin writes there would run as the hub's user. Bind it read-only ("…:ro"), or bind a folder of data elsewhere`;
    const cases: [string, string, string][] = [
      [`${ext}:/x:rw`, code(ext), join(ext, "planted")],
      [`${bin}:/x:rw`, code(bin), join(bin, "planted")],
      [`${hubUser}:/x:rw`, `refused: plugin evil binds ${hubUser}: it is the user's home (or holds it); bind only the folders the plugin needs`, join(hubUser, "planted")],
    ];
    const invokeAll = async (when: string) => {
      for (const [bind, said, planted] of cases) {
        evil(home, bind);
        const r = await runCli(home, ["plugins", "invoke", "evil.go", "--args", JSON.stringify({ write: "/x/planted", text: "x" })]);
        assert.deepEqual([r.code, r.err.split("\n").at(-1), existsSync(planted)], [2, said, false], `${when}: ${bind}\n${r.err}`);
      }
    };
    await invokeAll("hub running");
    await hub.stop();
    await invokeAll("hub down");
    // A fine bind still works from the owner's shell.
    const data = join(base, "data");
    mkdirSync(data);
    evil(home, `${data}:/x:rw`);
    const ok = await runCli(home, ["plugins", "invoke", "evil.go", "--args", JSON.stringify({ write: "/x/kept", text: "x" })]);
    assert.deepEqual([ok.code, ok.out, readFileSync(join(data, "kept"), "utf8")], [0, '{"wrote":true}', "x"], ok.err);
    hub = await serveProcess(home, undefined, hubEnv, "127.0.0.1:0", ["--plugins", ext]);
  } finally {
    await hub.stop();
    rmSync(base, { recursive: true, force: true });
  }
});

test("issue 26 (the kind of round 47 through a plugin's own manifest): a sandboxed plugin's writable bind of the install prefix of a program a trusted plugin names by absolute path (~/venv/lib for ~/venv/bin/python3) is refused by plugins invoke; read-only it runs", async (t) => {
  if (!(await probeBwrap("bwrap")).ok) return t.skip("bubblewrap cannot run here");
  const base = tempDir("aa-binds-programs-");
  try {
    const home = initHome(join(base, "home"), "127.0.0.1:0");
    const venv = join(base, "venv");
    for (const d of [join(venv, "bin"), join(venv, "lib")]) mkdirSync(d, { recursive: true });
    writeFileSync(join(venv, "bin", "python3"), "#!/bin/sh\n", { mode: 0o755 });
    writePlugin(join(home, "plugins"), "fmt", syncManifest("fmt", join(venv, "bin", "python3"), ["main.py"], toolToml("go")), { "main.py": "" });
    evil(home, `${join(venv, "lib")}:/x:rw`);
    const r = await runCli(home, ["plugins", "invoke", "evil.go", "--args", JSON.stringify({ write: "/x/planted.py", text: "x" })]);
    const folder = join(venv, "lib");
    assert.deepEqual([r.code, r.err.split("\n").at(-1), existsSync(join(folder, "planted.py"))], [2, `refused: plugin evil binds ${folder} writable: it lies inside or holds ${folder}, where the hub loads or runs code outside every sandbox (the engine, node, a folder on PATH, a plugin root such as serve --plugins or the home's plugins); what the plugin writes there would run as the hub's user. Bind it read-only ("…:ro"), or bind a folder of data elsewhere`, false], r.err);
    evil(home, `${join(venv, "lib")}:/x:ro`);
    const ro = await runCli(home, ["plugins", "invoke", "evil.go", "--args", "{}"]);
    assert.deepEqual([ro.code, ro.out], [0, '{"wrote":null}'], ro.err);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test("issue 26 r6 F8: a writable bind in a dot-folder right in a home of the hub's user (~/.config/systemd/user, ~/.bashrc, ~/.npmrc) is refused; read-only it passes, marked broad", () => {
  const base = tempDir("aa-binds-dot-");
  try {
    const user = join(base, "user");
    const plugin = join(base, "plugins", "p");
    for (const d of [join(user, ".config", "systemd", "user"), join(user, ".local", "lib"), join(user, "work"), plugin]) mkdirSync(d, { recursive: true });
    for (const f of [".bashrc", ".npmrc"]) writeFileSync(join(user, f), "");
    const mounts = [
      join(user, ".config", "systemd", "user"), join(user, ".config"), join(user, ".bashrc"), join(user, ".npmrc"), join(user, ".local", "lib"), join(user, "work"),
    ].map((host) => ({ host, relative: false, container: "/x", readOnly: false }));
    const checked = checkBinds({ mounts }, plugin, { hidden: [], userHomes: [user] });
    assert.deepEqual(checked.map((b) => [b.refused, b.folder ?? null]), [
      ["homeDotFolder", join(user, ".config")], ["homeDotFolder", join(user, ".config")], ["homeDotFolder", join(user, ".bashrc")],
      ["homeDotFolder", join(user, ".npmrc")], ["homeDotFolder", join(user, ".local")], [null, null],
    ]);
    const ro = checkBinds({ mounts: mounts.map((m) => ({ ...m, readOnly: true })) }, plugin, { hidden: [], userHomes: [user] });
    assert.deepEqual(ro.map((b) => [b.refused, b.broad ?? null]), [[null, null], [null, "inHome"], [null, "inHome"], [null, "inHome"], [null, null], [null, "inHome"]]);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test("issue 26 round 47, F47a-4 and round 48, F48a-2 (reported cases: a plugin's writable binds of ~/miniconda3/lib/…/site-packages, its bin on the hub's PATH, ~/go/pkg/mod, and ~/gocode/pkg/mod with GOPATH set by go env -w): refused as an agent's writable is — a PATH folder's install prefix, Go's places, a home's go, R, perl5, package.json, node_modules, a file at its top", () => {
  const base = tempDir("aa-binds-r47-");
  try {
    const user = join(base, "user");
    const plugin = join(base, "plugins", "p");
    const conda = join(user, "miniconda3");
    for (const d of [join(conda, "bin"), join(conda, "lib", "python3.11", "site-packages"), join(user, "go", "pkg", "mod"), join(user, "R"), join(user, "perl5"), join(user, "node_modules"), join(user, "work"), plugin]) mkdirSync(d, { recursive: true });
    writeFileSync(join(user, "package.json"), "{}");
    // Round 48, F48a-2: the owner's `go env -w GOPATH=~/gocode`; a workspace file at the home's top (F48a-3).
    mkdirSync(join(user, "gocode", "pkg", "mod"), { recursive: true });
    mkdirSync(join(user, ".config", "go"), { recursive: true });
    writeFileSync(join(user, ".config", "go", "env"), `GOPATH=${join(user, "gocode")}\n`);
    writeFileSync(join(user, "go.work"), "");
    const runtimePlaces = goPlaces({}, user);
    const hubCode = () => hubCodeFolders({ engine, execPath: process.execPath, path: join(conda, "bin"), nodePath: "", userHome: user, tsxCache: null, cwd: base, runtimePlaces }, []);
    const sources = [join(conda, "lib", "python3.11", "site-packages"), join(user, "go", "pkg", "mod"), join(user, "R"), join(user, "perl5"), join(user, "package.json"), join(user, "node_modules"), join(user, "work"),
      join(user, "gocode", "pkg", "mod"), join(user, "go.work")];
    const checked = checkBinds({ mounts: sources.map((host) => ({ host, relative: false, container: "/x", readOnly: false })) }, plugin, { hidden: [], userHomes: [user], hubCode });
    assert.deepEqual(checked.map((b) => [b.refused, b.folder ?? null]), [
      ["hubCode", join(conda, "lib")], ["hubCode", join(user, "go")], ["homeDotFolder", join(user, "R")], ["homeDotFolder", join(user, "perl5")],
      ["homeDotFolder", join(user, "package.json")], ["homeDotFolder", join(user, "node_modules")], [null, null],
      ["hubCode", join(user, "gocode")], ["homeDotFolder", join(user, "go.work")],
    ]);
    // Read-only, each passes.
    const ro = checkBinds({ mounts: sources.map((host) => ({ host, relative: false, container: "/x", readOnly: true })) }, plugin, { hidden: [], userHomes: [user], hubCode });
    assert.deepEqual(ro.map((b) => b.refused), sources.map(() => null));
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test("issue 26 r6 (inspect said allowed, launch refused): a device bind the device policy does not pass is refused by the bind check itself, with the policy's reason", () => {
  const plugin = tempDir("aa-binds-dev-");
  try {
    const checked = checkBinds({ mounts: ["/dev/pts", "/dev/null"].map((host) => ({ host, relative: false, container: host, readOnly: false })) }, plugin, { hidden: [], userHomes: [] });
    assert.deepEqual(checked.map((b) => [b.source, b.refused, b.device ?? null]), [["/dev/pts", "device", "notPassable"], ["/dev/null", null, null]]);
    assert.equal(bindRefusal("p", checked, "en")?.message, `plugin p binds device /dev/pts, which ${deviceRefusalText("en", "notPassable")}`);
  } finally {
    rmSync(plugin, { recursive: true, force: true });
  }
});

test("issue 26 r7 F12, F13: what the hub runs code from includes the engine's node_modules where it leads when it is a link, and every node_modules above a plugin root", () => {
  const root = realpathSync(tempDir("aa-hubcode-r7-"));
  try {
    for (const d of ["engine", "shared/node_modules/better-sqlite3", "srv/ext", "srv/node_modules/@grpc", "node/bin"]) mkdirSync(join(root, d), { recursive: true });
    writeFileSync(join(root, "node", "bin", "node"), "");
    // F12: the engine's node_modules is a link to a folder elsewhere (a worktree, a linking package manager).
    symlinkSync(join(root, "shared", "node_modules"), join(root, "engine", "node_modules"));
    const origin = { engine: join(root, "engine"), execPath: join(root, "node", "bin", "node"), path: "", nodePath: "", userHome: join(root, "user"), tsxCache: null, cwd: root };
    const folders = hubCodeFolders(origin, [join(root, "srv", "ext")]);
    assert.deepEqual(hubCodeProblem([join(root, "shared", "node_modules", "better-sqlite3")], folders), { why: "inside", folder: join(root, "shared", "node_modules") });
    // F13: a node_modules above the serve --plugins folder, where Node looks for what a plugin there lacks.
    assert.deepEqual(hubCodeProblem([join(root, "srv", "node_modules", "@grpc")], folders), { why: "inside", folder: join(root, "srv", "node_modules") });
    // A folder beside them is fine.
    mkdirSync(join(root, "srv", "data"));
    assert.equal(hubCodeProblem([join(root, "srv", "data")], folders), null);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("issue 26 r7 F14: a bind of a socket, of a folder holding one (a few levels down) or of a folder in /run is refused in any mode, read-only too; a regular file beside it passes", async () => {
  const base = realpathSync(tempDir("aa-binds-sock-"));
  const server = createServer();
  try {
    mkdirSync(join(base, "tmux-0", "deep"), { recursive: true });
    const socket = join(base, "tmux-0", "deep", "default");
    await new Promise<void>((r) => server.listen(socket, () => r()));
    writeFileSync(join(base, "resolv.conf"), "nameserver 127.0.0.53\n");
    const plugin = join(base, "plugin");
    mkdirSync(plugin);
    const mounts = [socket, join(base, "tmux-0"), base, join(base, "resolv.conf"), ...(existsSync("/run") ? ["/run"] : [])]
      .map((host) => ({ host, relative: false, container: "/x", readOnly: true }));
    const checked = checkBinds({ mounts }, plugin, { hidden: [], userHomes: [] });
    assert.deepEqual(checked.map((b) => [b.refused, b.socket ?? b.folder ?? null]), [
      ["socket", socket], ["socket", socket], ["socket", socket], [null, null], ...(existsSync("/run") ? [["socketFolder", "/run"]] : []),
    ]);
    assert.equal(bindRefusal("p", checked, "en")?.message, `plugin p binds ${socket}: it is or holds the socket ${socket}; connecting needs no write permission and reaches services running as someone else (D-Bus, systemd, docker, tmux). Bind only the files and folders the plugin needs`);
  } finally {
    server.close();
    rmSync(base, { recursive: true, force: true });
  }
});

test("round 48 (where Go runs code from): the defaults, GOPATH entries with their pkg/mod, GOMODCACHE, GOCACHE and GOROOT from the environment and from Go's environment file ($GOENV, $XDG_CONFIG_HOME/go/env, ~/.config/go/env); relative ones left out, as Go ignores them; GOENV=off reads no file", () => {
  const base = tempDir("aa-go-places-");
  try {
    const home = join(base, "u");
    mkdirSync(join(home, ".config", "go"), { recursive: true });
    writeFileSync(join(home, ".config", "go", "env"), 'GOPATH=/srv/gp1:rel/gp\nGOCACHE="/srv/gocache"\nGOFLAGS=-mod=mod\n');
    writeFileSync(join(base, "other-env"), "GOROOT=/opt/go-other\n");
    const defaults = [join(home, "go"), join(home, "go", "pkg", "mod")];
    assert.deepEqual(goPlaces({}, home), [...defaults, "/srv/gp1", "/srv/gp1/pkg/mod", "/srv/gocache"]);
    assert.deepEqual(goPlaces({ GOMODCACHE: "/srv/mc", GOPATH: "/a:/b" }, home), [...defaults, "/a", "/a/pkg/mod", "/b", "/b/pkg/mod", "/srv/mc", "/srv/gp1", "/srv/gp1/pkg/mod", "/srv/gocache"]);
    assert.deepEqual(goPlaces({ GOENV: join(base, "other-env") }, home), [...defaults, "/opt/go-other"]);
    assert.deepEqual(goPlaces({ GOENV: "off", GOROOT: "/opt/go" }, home), [...defaults, "/opt/go"]);
    assert.deepEqual(goPlaces({ XDG_CONFIG_HOME: join(base, "nowhere") }, home), defaults);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test("round 49 and round 51, F51a-2/3 (where other runtimes keep code, as configured): npm's cache and prefix, pnpm's store, yarn's cache, cargo's target-dir, uv's folders, Maven's repository, conda's package and environment folders, and the search paths of the environment; ~ and $HOME taken from the home; relative ones left out; a FIFO in a file's place not waited on", () => {
  const base = tempDir("aa-runtime-places-");
  try {
    const home = join(base, "u");
    for (const d of [".cargo", ".config/uv", ".config/pnpm", ".m2"]) mkdirSync(join(home, d), { recursive: true });
    // Round 51, F51a-2/3: pnpm's cache-dir (in either file), a value in single quotes.
    writeFileSync(join(home, ".npmrc"), "registry=https://registry.npmjs.org/\ncache=~/npmcache\nprefix = ${HOME}/npmglobal\ncache-dir='/srv/pnpm-cache'\n");
    writeFileSync(join(home, ".config", "pnpm", "rc"), "store-dir=/srv/pnpm-store\n");
    writeFileSync(join(home, ".yarnrc.yml"), "cacheFolder: \"/srv/yarn-cache\"\nnodeLinker: node-modules\n");
    writeFileSync(join(home, ".cargo", "config.toml"), '[build]\ntarget-dir = "/srv/cargo-target"\n');
    writeFileSync(join(home, ".config", "uv", "uv.toml"), 'cache-dir = "/srv/uv-cache"\n');
    writeFileSync(join(home, ".m2", "settings.xml"), "<settings><localRepository> /srv/m2repo </localRepository></settings>");
    writeFileSync(join(home, ".condarc"), "channels:\n  - conda-forge\npkgs_dirs:\n  - /srv/conda/pkgs\nenvs_dirs:\n  - ~/envs\n");
    const env = { PYTHONPATH: "/srv/py:rel/py", LD_LIBRARY_PATH: "/srv/lib", CARGO_TARGET_DIR: "/srv/ct" };
    assert.deepEqual(configuredPlaces(env, home), [
      "/srv/ct", "/srv/py", "/srv/lib", join(home, "npmcache"), join(home, "npmglobal"), "/srv/pnpm-cache", "/srv/pnpm-store", "/srv/yarn-cache", "/srv/cargo-target", "/srv/uv-cache", "/srv/m2repo",
      "/srv/conda/pkgs", join(home, "envs"),
    ]);
    // Under `npm test` the hub's environment names npm's own user's file (npm_config_userconfig): both files are read,
    // the home's too, which a plugin's npm reads (its environment has no npm_config_*). A fresh CI run failed so.
    writeFileSync(join(base, "other-npmrc"), "cache=/srv/other-cache\n");
    const both = configuredPlaces({ npm_config_userconfig: join(base, "other-npmrc") }, home);
    assert.deepEqual(both.filter((p) => p.includes("cache")), ["/srv/other-cache", join(home, "npmcache"), "/srv/pnpm-cache", "/srv/yarn-cache", "/srv/uv-cache"]);
    rmSync(join(home, ".npmrc"));
    execFileSync("mkfifo", [join(home, ".npmrc")]);
    assert.equal(configuredPlaces({}, home).includes(join(home, "npmcache")), false, "the FIFO was not read (nor waited on)");
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});


test("issue 26 round 55, F55-2/2b/6 (reported cases: a setuptools editable finder's MAPPING, a .pth import line appending to sys.path, a pyenv-like shims prefix): the folders they put on Python's path are found", () => {
  const base = tempDir("aa-pth-r55-");
  try {
    const site = join(base, "venv", "lib", "python3.11", "site-packages");
    const pyenvSite = join(base, "pyenv", "versions", "3.12.1", "lib", "python3.12", "site-packages");
    for (const d of [site, pyenvSite]) mkdirSync(d, { recursive: true });
    writeFileSync(join(site, "__editable___edpkg_0_1_finder.py"), "MAPPING: dict[str, str] = {'edpkg': '/srv/proj/edpkg'}\nNAMESPACES: dict[str, list[str]] = {}\nPATH_PLACEHOLDER = '__editable__.edpkg-0.1.finder' + \".__path_hook__\"\n");
    writeFileSync(join(site, "__editable__.edpkg-0.1.pth"), "import __editable___edpkg_0_1_finder; __editable___edpkg_0_1_finder.install()\n");
    writeFileSync(join(site, "z.pth"), "import sys; sys.path.append('/srv/proj5')\n# a comment\nrel/dir\n/abs/dir\n");
    writeFileSync(join(pyenvSite, "p.pth"), "/srv/pyenv-proj\n");
    assert.deepEqual(pthFolders(join(base, "venv")), ["/srv/proj/edpkg", "/srv/proj5", join(site, "rel", "dir"), "/abs/dir"]);
    assert.deepEqual(pthFolders(join(base, "pyenv")), ["/srv/pyenv-proj"]);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
