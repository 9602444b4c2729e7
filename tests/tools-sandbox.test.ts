/**
 * The sandbox without Docker (spec tool-plugins.md §7): bubblewrap namespaces and mounts, the allowlisted environment,
 * hidden host paths, cgroup placement (v1 here; v2 checked on a folder laid out like one), and refusal — never a
 * silent unsandboxed run — when bubblewrap or a cgroup controller is missing.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { userInfo } from "node:os";
import { join } from "node:path";
import { createCgroup } from "../src/tools/cgroup.js";
import { engineBinds, everythingServer, examples, hostFixture, leftovers, nodePlugin, probeBwrap, syncManifest, tempDir, toolToml, writePlugin } from "./tools-helpers.js";

const sandboxed = async () => (await probeBwrap("bwrap")).ok;

/** A plugin that reports what it can see: a TCP port, the environment, a file, its capabilities. */
const probe = (port: number, file: string) => nodePlugin(`
  const fs = require("node:fs");
  const sock = require("node:net").connect(${port}, "127.0.0.1");
  const read = (p) => { try { return fs.readFileSync(p, "utf8"); } catch (e) { return e.code; } };
  const caps = read("/proc/self/status").split("\\n").find((l) => l.startsWith("CapEff")) ?? "";
  const answer = (net) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: req.id, result: { net, env: process.env, secret: read(${JSON.stringify(file)}), caps, cwd: process.cwd() } }) + "\\n");
  sock.on("connect", () => { sock.destroy(); answer("connected"); });
  sock.on("error", (e) => answer(e.code));
  return undefined;`);

test("sandboxed: no network, no caller secrets, hidden paths empty, no capabilities, cwd /workspace; network = host connects", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const server = createServer((s) => s.end()).listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  const port = (server.address() as { port: number }).port;
  const home = tempDir();
  writeFileSync(join(home, "master.key"), "top secret");
  const f = hostFixture({ env: { ...process.env, HUB_SECRET: "s3cret", AGENT_AUTOLOOP_OWNER_KEY: "k" }, hiddenPaths: [home] });
  try {
    const main = probe(port, join(home, "master.key"));
    writePlugin(f.root, "none", syncManifest("none", "node", ["main.js"], `[sandbox]\nnetwork = "none"\n\n${toolToml("go")}`), { "main.js": main });
    writePlugin(f.root, "open", syncManifest("open", "node", ["main.js"], `[sandbox]\nnetwork = "host"\n\n${toolToml("go")}`), { "main.js": main });
    f.registry.rescan();
    const none = await f.host.call("none.go", {}, { sessionKey: "s" });
    const open = await f.host.call("open.go", {}, { sessionKey: "s" });
    assert.equal(none.status, "ok", JSON.stringify(none));
    const seen = (none as { result: { net: string; env: Record<string, string>; secret: string; caps: string; cwd: string } }).result;
    assert.equal(seen.net, "ECONNREFUSED", "the sandbox has only a loopback of its own");
    assert.deepEqual(Object.keys(seen.env).filter((k) => !["PWD", "SHLVL", "_"].includes(k)).sort(), ["HOME", "PATH", "PYTHONDONTWRITEBYTECODE", "PYTHONNOUSERSITE", "PYTHONPYCACHEPREFIX", "TSX_DISABLE_CACHE"].concat(process.env.LANG ? ["LANG"] : [], process.env.TZ ? ["TZ"] : []).sort());
    assert.equal(seen.secret, "ENOENT", "a hidden path is an empty folder inside");
    assert.equal(seen.caps, "CapEff:\t0000000000000000");
    assert.equal(seen.cwd, "/workspace");
    assert.equal((open as { result: { net: string } }).result.net, "connected");
  } finally {
    server.close();
    await f.close();
    rmSync(home, { recursive: true, force: true });
  }
});

test("sandboxed: the §3 hello-python plugin runs unchanged inside a sandbox with limits", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const f = hostFixture();
  try {
    cpSync(join(examples, "hello-python"), join(f.root, "hello-python"), { recursive: true });
    const file = join(f.root, "hello-python", "manifest.toml");
    writeFileSync(file, readFileSync(file, "utf8") + '\n[sandbox]\nmemory = "256m"\ncpus = 0.5\npids = 64\nread_only_root = true\ncap_drop = ["ALL"]\nnetwork = "none"\nbinds = []\n');
    f.registry.rescan();
    const r = await f.host.call("hello-python.greet", { name: "Ada" }, { sessionKey: "s" });
    assert.equal(r.status === "ok" && JSON.stringify(r.result), '{"content":"hello, Ada"}', JSON.stringify(r));
    assert.deepEqual(leftovers(), []);
  } finally {
    await f.close();
  }
});

test("a plugin that asks for a sandbox never runs without one: no bubblewrap, or no cgroup controller, refuses with the fix", async () => {
  const noCgroups = tempDir();
  const f = hostFixture({ bwrap: "/nonexistent/bwrap" });
  const g = hostFixture({ cgroups: { root: noCgroups, self: "" } });
  try {
    for (const x of [f, g]) {
      writePlugin(x.root, "boxed", syncManifest("boxed", "sh", ["-c", "touch started"], `[sandbox]\nmemory = "64m"\n\n${toolToml("go")}`));
      x.registry.rescan();
    }
    const r = await f.host.call("boxed.go", {}, { sessionKey: "s" });
    assert.deepEqual([r.status, "code" in r && r.code, "message" in r && r.message], [
      "refused", "tools.sandbox_unavailable", "plugin boxed asks for a sandbox but bubblewrap cannot run (ENOENT). Install it: apt-get install bubblewrap",
    ]);
    if (await sandboxed()) {
      const c = await g.host.call("boxed.go", {}, { sessionKey: "s" });
      assert.deepEqual([c.status, "code" in c && c.code, "message" in c && c.message], [
        "refused", "tools.cgroup_unavailable",
        "plugin boxed limits memory but no cgroup memory controller can be used (not mounted, not delegated). Run as root with cgroup v1 memory mounted, or delegate the cgroup v2 memory controller to this user",
      ]);
    }
    assert.equal(existsSync(join(f.root, "boxed", "started")) || existsSync(join(g.root, "boxed", "started")), false);
  } finally {
    await f.close();
    await g.close();
    rmSync(noCgroups, { recursive: true, force: true });
  }
});

test("a bind whose host folder is missing is refused before the start", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const f = hostFixture();
  try {
    writePlugin(f.root, "b", syncManifest("b", "true", [], `[sandbox]\nbinds = ["./vendor:/workspace/vendor:ro"]\n\n${toolToml("go")}`));
    f.registry.rescan();
    const r = await f.host.call("b.go", {}, { sessionKey: "s" });
    assert.deepEqual([r.status, "message" in r && r.message], ["refused", `plugin b binds ${join(f.root, "b", "vendor")}, which does not exist`]);
  } finally {
    await f.close();
  }
});

test("cgroup v2 where its controllers are delegated; v1 for the others; limits written in each one's files", () => {
  const root = tempDir();
  try {
    // v2 (unified) offers memory and pids to our cgroup's children; cpu only exists as v1.
    mkdirSync(join(root, "unified", "svc"), { recursive: true });
    writeFileSync(join(root, "unified", "cgroup.controllers"), "memory pids\n");
    writeFileSync(join(root, "unified", "svc", "cgroup.subtree_control"), "memory pids\n");
    mkdirSync(join(root, "cpu,cpuacct", "grp"), { recursive: true });
    writeFileSync(join(root, "cpu,cpuacct", "cgroup.procs"), "");
    const sys = { root, self: "3:cpu,cpuacct:/grp\n0::/svc\n" };
    const made = createCgroup("p-1", { memoryBytes: 64 << 20, cpus: 0.5, pids: 10 }, sys);
    assert.ok(made.ok);
    const v2 = join(root, "unified", "svc", "agent-autoloop-tools", "p-1");
    const v1 = join(root, "cpu,cpuacct", "grp", "agent-autoloop-tools", "p-1");
    assert.deepEqual(made.cgroup.procsFiles, [join(v2, "cgroup.procs"), join(v1, "cgroup.procs")]);
    assert.deepEqual(["memory.max", "pids.max"].map((x) => readFileSync(join(v2, x), "utf8")), ["67108864", "10"]);
    assert.deepEqual(["cpu.cfs_period_us", "cpu.cfs_quota_us"].map((x) => readFileSync(join(v1, x), "utf8")), ["100000", "50000"]);
    writeFileSync(join(v2, "memory.events"), "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n");
    assert.equal(made.cgroup.oomKilled(), true);
    const none = createCgroup("p-2", { memoryBytes: null, cpus: null, pids: 5 }, { root, self: "0::/other\n" });
    assert.deepEqual(none.ok ? null : none.failure, { controller: "pids", error: "not mounted, not delegated" });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("sandboxed long-lived plugins: a service reaches its socket through the host's bind; an MCP server runs with no network", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  // The example service and the MCP server load the engine's files (the `.proto`, node_modules): bound read-only.
  const f = hostFixture();
  try {
    const service = readFileSync(join(examples, "hello-service", "manifest.toml"), "utf8")
      .replace('args = ["main.mjs"]', `args = [${JSON.stringify(join(examples, "hello-service", "main.mjs"))}]`) + `\n[sandbox]\nnetwork = "none"\nread_only_root = true\nbinds = [${engineBinds}]\n`;
    writePlugin(f.root, "hello-service", service);
    writePlugin(f.root, "every", `manifest_version = 3\nname = "every"\nversion = "1"\nplugin_type = "mcp"\n[entry_point]\ncommand = "node"\nargs = [${JSON.stringify(everythingServer)}, "stdio"]\n[mcp]\ntools_allowlist = { mode = "allow", names = ["echo"] }\n[sandbox]\nmemory = "512m"\nbinds = [${engineBinds}]\n`);
    f.registry.rescan();
    await f.host.start();
    const greet = await f.host.call("hello-service.greet", { name: "Ada" }, { sessionKey: "s" });
    assert.equal(greet.status === "ok" && JSON.stringify(greet.result), '{"content":"hello, Ada"}', JSON.stringify(greet));
    const echo = await f.host.call("every.echo", { message: "boxed" }, { sessionKey: "s" });
    assert.deepEqual(echo.status === "ok" && echo.result, { content: [{ type: "text", text: "Echo: boxed" }], isError: false }, JSON.stringify(echo));
  } finally {
    await f.close();
  }
  assert.deepEqual(leftovers(), [], "the MCP server's cgroup went with it");
});

/** A plugin that reads each path of its arguments' `paths` (text, or the error's code) and answers them by path. */
const reader = nodePlugin(`
  const fs = require("node:fs");
  const read = (p) => { try { return fs.readFileSync(p, "utf8"); } catch (e) { return e.code; } };
  return { jsonrpc: "2.0", id: req.id, result: Object.fromEntries(req.params.arguments.paths.map((p) => [p, read(p)])) };`);

test("sandboxed: the hub user's home is hidden (~/.npmrc, ~/.ssh, ~/.claude, and the home the password database names); binds of folders in it show those; programs installed in it on PATH still run", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const home = realpathSync(tempDir("aa-user-home-"));
  const files: Record<string, string> = {
    ".npmrc": "//registry.npmjs.org/:_authToken=npm-secret-0123\n", ".ssh/id_ed25519": "ssh-secret-0123\n", ".claude/.credentials.json": "claude-secret-0123\n",
    "data/model.bin": "weights\n", "cache/index": "cached\n", "tools/bin/greet-tool": "#!/bin/sh\ncat \"$(dirname \"$0\")/../lib/greeting.txt\"\n", "tools/lib/greeting.txt": "hello from the home\n",
  };
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(join(home, p, ".."), { recursive: true });
    writeFileSync(join(home, p), text, { mode: 0o755 });
  }
  const passwd = userInfo().homedir;
  const passwdFile = readdirSync(passwd).map((n) => join(passwd, n)).find((p) => statSync(p).isFile());
  const f = hostFixture({ env: { ...process.env, HOME: home, PATH: `${join(home, "tools", "bin")}:${process.env.PATH}` } });
  try {
    writePlugin(f.root, "peek", syncManifest("peek", "node", ["main.js"], `[sandbox]\nbinds = ["${home}/data:/data:ro", "${home}/cache:${home}/cache"]\n\n${toolToml("read")}`), { "main.js": reader });
    writePlugin(f.root, "greeter", syncManifest("greeter", "node", ["main.js"], `[sandbox]\n\n${toolToml("greet")}`), {
      "main.js": nodePlugin('return { jsonrpc: "2.0", id: req.id, result: { content: require("node:child_process").execFileSync("greet-tool", { encoding: "utf8" }).trim() } };'),
    });
    f.registry.rescan();
    const secrets = [".npmrc", ".ssh/id_ed25519", ".claude/.credentials.json"].map((p) => join(home, p));
    const paths = [...secrets, ...(passwdFile && passwd !== home ? [passwdFile] : []), "/data/model.bin", join(home, "cache", "index"), join(home, "data", "model.bin")];
    const r = await f.host.call("peek.read", { paths }, { sessionKey: "s" });
    assert.equal(r.status, "ok", JSON.stringify(r));
    assert.deepEqual((r as { result: unknown }).result, {
      ...Object.fromEntries(paths.filter((p) => p.startsWith(home) || p === passwdFile).map((p) => [p, "ENOENT"])),
      "/data/model.bin": "weights\n", [join(home, "cache", "index")]: "cached\n",
    });
    const g = await f.host.call("greeter.greet", {}, { sessionKey: "s" });
    assert.equal(g.status === "ok" && JSON.stringify(g.result), '{"content":"hello from the home"}', JSON.stringify(g));
  } finally {
    await f.close();
    rmSync(home, { recursive: true, force: true });
  }
});

test("sandboxed: device binds work (/dev/zero, read-only or not, /dev/kvm, the /dev/net folder) or are refused with the reason (a block device, a terminal, /dev itself, a device node outside /dev, a GPU this computer lacks)", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const f = hostFixture();
  const odd = realpathSync(tempDir("aa-odd-dev-"));
  try {
    const opener = nodePlugin(`
      const fs = require("node:fs");
      const open = (p) => { try { const fd = fs.openSync(p, p === "/dev/zero" ? "r" : "r+"); const b = Buffer.alloc(4, 9); if (p === "/dev/zero") fs.readSync(fd, b, 0, 4, null); fs.closeSync(fd); return p === "/dev/zero" ? [...b].join(",") : "opened"; } catch (e) { return e.code; } };
      return { jsonrpc: "2.0", id: req.id, result: Object.fromEntries(req.params.arguments.paths.map((p) => [p, open(p)])) };`);
    const works: [string, string[], string[]][] = [
      ["zero", ["/dev/zero:/dev/zero"], ["/dev/zero"]],
      ["zero-ro", ["/dev/zero:/dev/zero:ro"], ["/dev/zero"]],
      ...(existsSync("/dev/kvm") ? [["kvm", ["/dev/kvm:/dev/kvm"], ["/dev/kvm"]] as [string, string[], string[]]] : []),
      ...(existsSync("/dev/net/tun") ? [["tun", ["/dev/net:/dev/net"], ["/dev/net/tun"]] as [string, string[], string[]]] : []),
    ];
    for (const [name, binds] of works) writePlugin(f.root, name, syncManifest(name, "node", ["main.js"], `[sandbox]\nbinds = ${JSON.stringify(binds)}\n\n${toolToml("open")}`), { "main.js": opener });
    if (process.getuid?.() === 0) execFileSync("mknod", [join(odd, "null"), "c", "1", "3"]);
    const gpu = existsSync("/dev/nvidia0") ? null : "/dev/nvidia0";
    const refused: [string, string, string][] = [
      ...(existsSync("/dev/loop0") ? [["loop", "/dev/loop0", "is not among the devices a sandbox passes through (GPUs and accelerators, KVM, FUSE, TUN, sound, cameras, USB serial adapters): others can reach the hub's files or a person's terminal"] as [string, string, string]] : []),
      ["console", "/dev/console", "is not among the devices a sandbox passes through (GPUs and accelerators, KVM, FUSE, TUN, sound, cameras, USB serial adapters): others can reach the hub's files or a person's terminal"],
      ["whole", "/dev", "is not among the devices a sandbox passes through (GPUs and accelerators, KVM, FUSE, TUN, sound, cameras, USB serial adapters): others can reach the hub's files or a person's terminal"],
      ...(process.getuid?.() === 0 ? [["odd", join(odd, "null"), "is not a device path under /dev/"] as [string, string, string]] : []),
    ];
    for (const [name, dev] of refused) writePlugin(f.root, name, syncManifest(name, "true", [], `[sandbox]\nbinds = ["${dev}:/dev/x"]\n\n${toolToml("open")}`));
    if (gpu) writePlugin(f.root, "gpu", syncManifest("gpu", "true", [], `[sandbox]\nbinds = ["/dev/nvidia0:/dev/nvidia0", "/dev/nvidiactl:/dev/nvidiactl"]\n\n${toolToml("open")}`));
    f.registry.rescan();
    for (const [name, , paths] of works) {
      const r = await f.host.call(`${name}.open`, { paths }, { sessionKey: "s" });
      assert.deepEqual(r.status === "ok" && r.result, Object.fromEntries(paths.map((p) => [p, p === "/dev/zero" ? "0,0,0,0" : "opened"])), `${name}: ${JSON.stringify(r)}`);
    }
    for (const [name, dev, why] of refused) {
      const r = await f.host.call(`${name}.open`, { paths: [] }, { sessionKey: "s" });
      assert.deepEqual([r.status, "code" in r && r.code, "message" in r && r.message], ["refused", "tools.device_refused", `plugin ${name} binds device ${dev}, which ${why}`]);
    }
    if (gpu) {
      const r = await f.host.call("gpu.open", { paths: [] }, { sessionKey: "s" });
      assert.deepEqual([r.status, "message" in r && r.message], ["refused", "plugin gpu binds /dev/nvidia0, which does not exist"]);
    }
  } finally {
    await f.close();
    rmSync(odd, { recursive: true, force: true });
  }
});
