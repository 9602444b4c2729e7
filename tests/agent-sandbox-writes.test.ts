/**
 * What a sandboxed agent can change (issue 26, finding 2): nothing that the hub's user later runs outside the sandbox.
 * The reported case: an agent wrote a `.pth` into `~/.local/lib/python3.x/site-packages`, and the next call of the
 * README's own hello-python plugin (no `[sandbox]`) ran it with the hub's rights and read master.key. The same kind
 * through other interpreters and programs the hub's user runs: a Python install under the home (a venv, as
 * ~/miniconda3), `~/.npmrc` (npm's `node-options` for a plugin started with `npm exec`), `~/.gitconfig` (a smudge
 * filter that `agent-autoloop add` runs while cloning), shell profiles, `~/.ssh/config`, Node's module folders, a
 * system folder when the hub runs as root. Each plant is tried by a real `command` agent in the real sandbox; each
 * chain that runs code is then driven end to end (the CLI's `plugins invoke`, `add`), and must not run it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync, realpathSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { hubFixture, makeHome, serveFixture, baseRules, engine, tempDir, until, untilLatestRun } from "./helpers.js";
import { sandboxKit } from "./sandbox-kit.js";
import { homePaths } from "../src/host/home.js";
import { cliLines, examples, syncManifest, toolToml, writePlugin } from "./tools-helpers.js";
import { refusedRuns } from "./sandbox-helpers.js";
import { sandboxAround } from "../src/worker/launch-sandbox.js";

const kit = sandboxKit();
const { removed, setEnv, setup } = kit;

/** Python's `major.minor` here (the folder name of its site-packages). */
const pyVersion = execFileSync("python3", ["-c", "import sys; print('%d.%d' % sys.version_info[:2])"], { encoding: "utf8" }).trim();

/**
 * The planting agent: for each `[path, text]` of `<cwd>/plants.json`, makes the missing folders above it and appends the text; notes
 * "written" or the error's code per path in `<cwd>/tried.json`; prints "Done: planted".
 */
const plant = String.raw`
const fs = require("fs"), path = require("path");
const plants = JSON.parse(fs.readFileSync("plants.json", "utf8"));
const tried = {};
for (const [p, text] of plants) {
  // Folder by folder: a recursive mkdir reports ENOENT where the file system refuses the write.
  const missing = [];
  for (let d = path.dirname(p); !fs.existsSync(d); d = path.dirname(d)) missing.unshift(d);
  try { for (const d of missing) fs.mkdirSync(d); fs.appendFileSync(p, text); tried[p] = "written"; } catch (e) { tried[p] = e.code || String(e); }
}
fs.writeFileSync(path.join(process.cwd(), "tried.json"), JSON.stringify(tried));
console.log("Done: planted");
`;

test("a sandboxed agent cannot plant code the hub's user runs later: the issue's .pth in ~/.local for hello-python, a venv under the home, ~/.npmrc for npm exec, ~/.gitconfig for add, shell profiles, ssh, Node's folders, system folders", async () => {
  const home = realpathSync(tempDir("aa-user-home-"));
  const leak = realpathSync(tempDir("aa-leak-"));
  const cwd = realpathSync(tempDir("aa-plant-cwd-"));
  removed.push(home, leak, cwd);
  // The hub user's home as it was before the agent: a profile, an ssh and a config folder, a Python install (as
  // ~/miniconda3 would be) whose interpreter is first on the hub's PATH and which also reads the user's site-packages.
  writeFileSync(join(home, ".bashrc"), "# the user's own\n");
  mkdirSync(join(home, ".ssh"), { mode: 0o700 });
  mkdirSync(join(home, ".config"));
  execFileSync("python3", ["-m", "venv", "--without-pip", "--system-site-packages", join(home, "venv")]);
  setEnv({ HOME: home });
  setEnv({ PATH: `${join(home, "venv", "bin")}:${process.env.PATH}` });

  const fx = await setup({ use: "command", command: [process.execPath, "-e", plant] }, cwd);
  const master = fx.home.masterKey;
  const steal = (name: string) => `import shutil; shutil.copy(${JSON.stringify(master)}, ${JSON.stringify(join(leak, name))})\n`;
  writeFileSync(join(cwd, "evil-npm.js"), `require("fs").copyFileSync(${JSON.stringify(master)}, ${JSON.stringify(join(leak, "npm"))});\n`);
  writeFileSync(join(cwd, "evil-git.sh"), `#!/bin/sh\ncp ${master} ${join(leak, "git")}\ncat\n`, { mode: 0o755 });
  writeFileSync(join(cwd, "attributes"), "* filter=evil\n");
  const systemProbe = `/usr/local/lib/aa-planted-${process.pid}.pth`;
  const tmpProbe = `/tmp/aa-planted-${process.pid}`;
  removed.push(systemProbe, tmpProbe);
  const sitePackages = `lib/python${pyVersion}/site-packages`;
  const plants: [string, string][] = [
    [join(home, ".local", sitePackages, "aa-planted.pth"), steal("python-user-site")], // the case
    [join(home, "venv", sitePackages, "aa-planted.pth"), steal("python-venv")],
    [join(home, ".npmrc"), `node-options=--require=${join(cwd, "evil-npm.js")}\n`],
    [join(home, ".gitconfig"), `[core]\n\tattributesFile = ${join(cwd, "attributes")}\n[filter "evil"]\n\tsmudge = ${join(cwd, "evil-git.sh")}\n`],
    [join(home, ".config", "git", "config"), `[core]\n\tfsmonitor = ${join(cwd, "evil-git.sh")}\n`],
    [join(home, ".bashrc"), `cp ${master} ${leak}/bashrc\n`],
    [join(home, ".profile"), `cp ${master} ${leak}/profile\n`],
    [join(home, ".bash_profile"), `cp ${master} ${leak}/bash_profile\n`],
    [join(home, ".ssh", "config"), `Host *\n  ProxyCommand ${join(cwd, "evil-git.sh")}\n`],
    [join(home, ".node_modules", "aa-planted.js"), "planted"],
    [join(home, "node_modules", "aa-planted.js"), "planted"],
    [systemProbe, "planted"],
  ];
  const allowed: [string, string][] = [[join(cwd, "work.txt"), "the agent's own work"], [tmpProbe, "a temporary file"]];
  writeFileSync(join(cwd, "plants.json"), JSON.stringify([...plants, ...allowed]));
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  const st = await untilLatestRun(fx, "done", 30_000);
  assert.equal(st.runs[0].summary, "Done: planted");
  const tried = JSON.parse(readFileSync(join(cwd, "tried.json"), "utf8")) as Record<string, string>;
  const refused = process.getuid?.() === 0 ? "EROFS" : "EACCES";
  assert.deepEqual(tried, {
    ...Object.fromEntries(plants.map(([p]) => [p, p === systemProbe ? refused : "EROFS"])),
    ...Object.fromEntries(allowed.map(([p]) => [p, "written"])),
  });
  assert.equal(readFileSync(join(home, ".bashrc"), "utf8"), "# the user's own\n");

  // The chains, driven as the hub's user drives them: nothing planted runs, nothing reaches the leak folder.
  cpSync(join(examples, "hello-python"), join(fx.home.plugins, "hello-python"), { recursive: true });
  writePlugin(fx.home.plugins, "hello-npx", syncManifest("hello-npx", "npm", ["exec", "--offline", "--", "node", "main.js"], `[entry_point.env]\nnpm_config_update_notifier = "false"\n\n${toolToml("greet")}`), {
    "main.js": readFileSync(join(examples, "hello-node", "main.js"), "utf8"),
  });
  const ada = ["--args", '{"name":"Ada"}'];
  assert.deepEqual(await cliLines(["plugins", "invoke", "hello-python.greet", ...ada], fx.home.dir), { code: 0, out: ['{"content":"hello, Ada"}'], err: [] });
  const npx = await cliLines(["plugins", "invoke", "hello-npx.greet", ...ada], fx.home.dir);
  assert.deepEqual([npx.code, npx.out], [0, ['{"content":"hello, Ada"}']], JSON.stringify(npx));
  const repo = join(cwd, "repo");
  mkdirSync(repo);
  execFileSync("git", ["init", "-q"], { cwd: repo });
  writeFileSync(join(repo, "README.md"), "a plugin\n");
  execFileSync("git", ["-c", "user.name=a", "-c", "user.email=a@example.com", "add", "."], { cwd: repo });
  execFileSync("git", ["-c", "user.name=a", "-c", "user.email=a@example.com", "commit", "-qm", "x"], { cwd: repo });
  await cliLines(["add", repo], fx.home.dir);
  assert.ok(existsSync(join(fx.home.plugins, "repo", "README.md")), "add cloned the repository");
  assert.deepEqual(readdirSync(leak), [], "no planted code ran");
});

/**
 * The trying agent: for each path of `writes.json` (in its cwd), appends a line; writes "written" or the error's code
 * per path as JSON to the file its first argument names, and prints "Done: tried".
 */
const tryWrites = String.raw`
const fs = require("fs");
const tried = {};
for (const p of JSON.parse(fs.readFileSync("writes.json", "utf8"))) {
  try { fs.appendFileSync(p, "x\n"); tried[p] = "written"; } catch (e) { tried[p] = e.code || String(e); }
}
fs.writeFileSync(process.argv[2], JSON.stringify(tried));
console.log("Done: tried");
`;

test("what a sandboxed agent may still write: its cwd, its own temporary folders (not the host's /tmp), its plugin's state (a folder made when missing, a file that exists) and the agent's writable; a cwd that is the home is read-only", async () => {
  const home = realpathSync(tempDir("aa-user-home-"));
  const cwd = realpathSync(tempDir("aa-writes-cwd-"));
  const hostTmp = realpathSync(tempDir("aa-writes-host-tmp-"));
  removed.push(home, cwd, hostTmp);
  mkdirSync(join(home, "cache"));
  // The reports go to a writable folder: the host's /tmp is not the sandbox's (issue 26 round 2, finding 9).
  const reports = join(home, "cache");
  mkdirSync(join(home, "project"));
  writeFileSync(join(home, ".mystate.json"), "{}\n");
  setEnv({ HOME: home });
  const agent = { worker: "w1", use: "stateful", writable: ["~/cache"] };
  const rules = {
    ...baseRules, agents: { ...baseRules.agents, bot: agent },
    rules: [{ ...baseRules.rules[0], cwd, prompt: join(reports, "cwd.json") }, { ...baseRules.rules[0], name: "at-home", when: { source: "shop", types: ["home.*"] }, cwd: "~", prompt: join(reports, "home.json") }],
  };
  const fx = await hubFixture(rules);
  kit.hub(fx);
  const pluginDir = join(fx.home.plugins, "stateful");
  mkdirSync(pluginDir, { recursive: true });
  writeFileSync(join(pluginDir, "run.cjs"), tryWrites);
  // The prompt is the report's path: the agent gets it as its argument.
  writeFileSync(join(pluginDir, "agent.mjs"), `export default {
    command: (turn) => [process.execPath, ${JSON.stringify(join(pluginDir, "run.cjs"))}, turn.prompt.split("\\n").find((l) => l.startsWith("/"))],
    state: (env) => ({ folders: ["~/.mystate", env.HOME + "/.made/deep"], files: ["~/.mystate.json", "~/.absent.json"] }),
    read: (stdout, code) => code === null ? { started: true } : { started: true, finished: true, text: stdout.trim() },
  };`);
  const w = kit.worker(fx);
  const writes = [
    join(cwd, "work.txt"), join(home, ".mystate", "session.json"), join(home, ".made", "deep", "log"), join(home, ".mystate.json"),
    join(home, "cache", "c.bin"), `/tmp/aa-private-${process.pid}.txt`, `/var/tmp/aa-private-${process.pid}.txt`,
    join(home, ".absent.json"), join(home, "other.txt"), join(home, "project", "p.txt"), join(home, ".cache"), join(hostTmp, "tmp.txt"),
  ];
  writeFileSync(join(cwd, "writes.json"), JSON.stringify(writes));
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  const st = await untilLatestRun(fx, "done", 30_000);
  assert.equal(st.runs[0].summary, "Done: tried");
  assert.deepEqual(JSON.parse(readFileSync(join(reports, "cwd.json"), "utf8")), {
    ...Object.fromEntries(writes.slice(0, 7).map((p) => [p, "written"])),
    ...Object.fromEntries(writes.slice(7, 11).map((p) => [p, "EROFS"])),
    // The rest of the home is hidden (issue 26 round 11, F8/F10): a folder of it is not there at all.
    [join(home, "project", "p.txt")]: "ENOENT",
    // A folder of the host's /tmp is not there at all.
    [join(hostTmp, "tmp.txt")]: "ENOENT",
  });
  assert.deepEqual(readdirSync(hostTmp), [], "nothing reached the host's /tmp");
  assert.deepEqual([existsSync(`/tmp/aa-private-${process.pid}.txt`), existsSync(`/var/tmp/aa-private-${process.pid}.txt`)], [false, false], "the sandbox's /tmp and /var/tmp are its own");
  assert.equal(readFileSync(join(home, ".mystate.json"), "utf8"), "{}\nx\n", "the state file was written in place");

  // The home itself as the cwd (the starter rule's "~"): it stays read-only; the state inside it does not.
  const atHome = [join(home, "in-home.txt"), join(home, ".mystate", "again.json")];
  writeFileSync(join(home, "writes.json"), JSON.stringify(atHome));
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e2", type: "home.x" });
  await until(async () => (await fx.state()).runs.filter((r) => r.state === "done").length === 2, 30_000, "the run at home");
  assert.deepEqual(JSON.parse(readFileSync(join(reports, "home.json"), "utf8")), { [atHome[0]!]: "EROFS", [atHome[1]!]: "written" });
});

test("a sandboxed launch is refused, saying why, when it would leave the hub user's home, the worker's home or the hub's code writable, or a writable folder or a device is missing", async () => {
  const home = realpathSync(tempDir("aa-user-home-"));
  removed.push(home);
  setEnv({ HOME: home });
  const cwd = realpathSync(tempDir("aa-refused-cwd-"));
  removed.push(cwd);
  const above = join(home, "..");
  const gpu = existsSync("/dev/nvidia0") ? "/dev/nvidia9" : "/dev/nvidia0";
  const cases: [string, Record<string, unknown>, string, (hub: string) => string][] = [
    ["holds-home", {}, above, () => `cwd ${above} holds ${home}, the home of the hub's user, which the sandbox keeps read-only (shell profiles, ~/.gitconfig, ~/.npmrc, ~/.local and whatever else that user runs later): choose a folder inside it, or set "sandbox": false on agent holds-home`],
    ["missing", { writable: ["~/not-made"] }, cwd, () => `~/not-made in "writable" of agent missing does not exist on worker w1: make it, or take it out of "writable"`],
    ["hub-home", { writable: ["HUB/worker"] }, cwd, (hub) => `${hub}/worker in "writable" of agent hub-home lies inside the worker's home ${hub}, which the sandbox hides`],
    ["engine", { writable: [join(engine, "dist")] }, cwd, () => `${join(engine, "dist")} in "writable" of agent engine lies inside ${realpathSync(engine)}, which the sandbox keeps read-only because the hub runs code or programs from there`],
    ["the-home", { writable: [above] }, cwd, () => `${above} in "writable" of agent the-home is or holds ${home}, the home of the hub's user, which the sandbox keeps read-only: name a folder inside it`],
    ["no-gpu", { devices: [gpu] }, cwd, () => `device ${gpu} of agent no-gpu does not exist on this computer: take it out of "devices"`],
  ];
  const hub = realpathSync(tempDir("aa-hub-home-"));
  removed.push(hub);
  const rules = {
    ...baseRules,
    agents: Object.fromEntries(cases.map(([id, extra]) => [id, {
      worker: "w1", use: "command", command: [process.execPath, "-e", 'console.log("Done: ran")'],
      ...JSON.parse(JSON.stringify(extra).replaceAll("HUB", hub)),
    }])),
    rules: cases.map(([id, , dir]) => ({ name: id, when: { source: "shop", types: [`${id}.*`] }, to: id, cwd: dir })),
  };
  const fx = await serveFixture(makeHome(rules));
  kit.hub(fx);
  const errors = await refusedRuns(fx, cases.map(([id]) => id), homePaths(hub), kit.workers);
  assert.deepEqual(errors, Object.fromEntries(cases.map(([id, , , why]) => [id, why(hub)])));
});

/**
 * The device probe (Python: it has shared memory and ptys at hand): lists /dev, opens each path of `<cwd>/open.json`
 * for reading and writing, makes a POSIX shared memory block (/dev/shm, as browsers need) and a pseudo-terminal, and
 * writes what happened to `<cwd>/dev.json`.
 */
const deviceProbe = String.raw`
import json, os, pty
from multiprocessing import shared_memory
seen = {"dev": sorted(os.listdir("/dev")), "open": {}}
for p in json.load(open("open.json")):
    try:
        os.close(os.open(p, os.O_RDWR)); seen["open"][p] = "opened"
    except OSError as e:
        seen["open"][p] = os.strerror(e.errno)
m = shared_memory.SharedMemory(create=True, size=4096); m.buf[0] = 7; seen["shm"] = m.buf[0]; m.close(); m.unlink()
master, slave = pty.openpty(); seen["pty"] = os.ttyname(slave).startswith("/dev/pts/")
json.dump(seen, open("dev.json", "w"))
print("Done: looked at /dev")
`;

test("a sandboxed agent gets a /dev of its own: the usual devices, /dev/shm and ptys, none of the host's others; rules.json devices adds the ones named", async () => {
  const cwd = realpathSync(tempDir("aa-dev-cwd-"));
  removed.push(cwd);
  // Host devices an agent must not reach without asking (when this computer has them), and ones it may ask for.
  const host = ["/dev/console", "/dev/loop0", "/dev/tty1", "/dev/kmsg", "/dev/btrfs-control"].filter((d) => existsSync(d));
  const asked = ["/dev/kvm", "/dev/fuse", "/dev/net/tun"].filter((d) => existsSync(d));
  writeFileSync(join(cwd, "open.json"), JSON.stringify(["/dev/null", "/dev/zero", ...host, ...asked]));
  const agent = { use: "command", command: ["python3", "-c", deviceProbe] };
  const rules = {
    ...baseRules, agents: { ...baseRules.agents, bot: { worker: "w1", ...agent }, asks: { worker: "w1", ...agent, devices: asked.map((d) => d === "/dev/net/tun" ? "/dev/net" : d) } },
    rules: [{ ...baseRules.rules[0], cwd }, { ...baseRules.rules[0], name: "asks", when: { source: "shop", types: ["asks.*"] }, to: "asks", cwd }],
  };
  const fx = await hubFixture(rules);
  kit.hub(fx);
  const w = kit.worker(fx);
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  assert.equal((await untilLatestRun(fx, "done", 30_000)).runs[0].summary, "Done: looked at /dev");
  const plain = JSON.parse(readFileSync(join(cwd, "dev.json"), "utf8")) as { dev: string[]; open: Record<string, string>; shm: number; pty: boolean };
  assert.deepEqual(plain, {
    dev: ["core", "fd", "full", "null", "ptmx", "pts", "random", "shm", "stderr", "stdin", "stdout", "tty", "urandom", "zero"],
    open: Object.fromEntries(["/dev/null", "/dev/zero", ...host, ...asked].map((d) => [d, d === "/dev/null" || d === "/dev/zero" ? "opened" : "No such file or directory"])),
    shm: 7, pty: true,
  });
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e2", type: "asks.x" });
  await until(async () => (await fx.state()).runs.filter((r) => r.state === "done").length === 2, 30_000, "the run with devices");
  const opted = JSON.parse(readFileSync(join(cwd, "dev.json"), "utf8")) as { dev: string[]; open: Record<string, string> };
  assert.deepEqual(opted.open, Object.fromEntries(["/dev/null", "/dev/zero", ...host, ...asked].map((d) => [d, host.includes(d) ? "No such file or directory" : "opened"])));
  assert.deepEqual(opted.dev.filter((d) => !plain.dev.includes(d)), [...new Set(asked.map((d) => d.split("/")[2]!))].sort());
});

test("access read: the run's cwd is read-only in the sandbox too (edit: writable), whatever the CLI enforces itself; the plugin is told the sandbox around it", async () => {
  // Writes a file in its cwd and says what happened.
  const writer = String.raw`
const fs = require("fs");
let r;
try { fs.writeFileSync("mine.txt", "x"); r = "written"; } catch (e) { r = e.code; }
console.log("Done: " + r);
`;
  for (const [access, expected] of [["read", "EROFS"], ["edit", "written"], ["full", "written"]] as const) {
    const cwd = realpathSync(tempDir("aa-read-cwd-"));
    removed.push(cwd);
    const fx = await setup({ use: "command", access, command: [process.execPath, "-e", writer] }, cwd);
    await fx.call("POST", "/v1/events", fx.keys.source, { id: `e-${access}`, type: "alert.x" });
    const ran = await until(async () => { const s = await fx.state(); return s.runs[0] && ["done", "failed", "waiting"].includes(s.runs[0].state) && s.runs[0]; }, 30_000, "the run to end");
    assert.deepEqual([ran.state, ran.summary, ran.error], ["done", `Done: ${expected}`, null], access);
    assert.equal(existsSync(join(cwd, "mine.txt")), expected === "written", access);
    await kit.end();
  }
  // The sandbox a plugin is told of: none without one; closed as root (no user namespace can map root's ids inside a
  // sandbox without capabilities: Codex's own sandbox fails there); nestable for an ordinary user.
  const plan = { bwrap: "/usr/bin/bwrap", writable: [], homes: [], readOnly: [], hide: "/h", alsoHide: [], show: [], devices: [], cwd: "/w" };
  assert.deepEqual([sandboxAround(null, 0), sandboxAround(plan, 0), sandboxAround(plan, 1000), sandboxAround(null, 1000)], ["none", "closed", "nestable", "none"]);
});

test("issue 26 round 49, F49a-2 and round 50, F50a-1 (reported cases: pnpm's store, whose files pnpm hard-links into every project's node_modules/.pnpm; a project one folder down, a hoisted or bun node_modules) and the kind (uv's cache, hard-linked into a .venv or another virtual environment): an agent cannot write a store's file through its project; a project installed with copies stays writable", async () => {
  const store = realpathSync(tempDir("aa-store-"));
  const cwd = realpathSync(tempDir("aa-linked-cwd-"));
  const copies = realpathSync(tempDir("aa-copied-"));
  removed.push(store, cwd, copies);
  const sitePackages = join(".venv", "lib", `python${pyVersion}`, "site-packages");
  const pnpmFile = join("node_modules", ".pnpm", "is-number@7.0.0", "node_modules", "is-number", "index.js");
  mkdirSync(join(store, "files"), { recursive: true });
  writeFileSync(join(store, "files", "index.js"), "module.exports = 'the store';\n");
  writeFileSync(join(store, "files", "m.py"), "WHO = 'the store'\n");
  // pnpm's layout with hard links; uv's virtual environment with hard links; the same pnpm layout with copies.
  for (const [root, linked] of [[cwd, true], [copies, false]] as const) {
    mkdirSync(join(root, pnpmFile, ".."), { recursive: true });
    writeFileSync(join(root, "node_modules", ".modules.yaml"), `storeDir: ${store}\nlayoutVersion: 5\n`);
    if (linked) execFileSync("ln", [join(store, "files", "index.js"), join(root, pnpmFile)]);
    else writeFileSync(join(root, pnpmFile), "module.exports = 'the store';\n");
  }
  mkdirSync(join(cwd, sitePackages), { recursive: true });
  writeFileSync(join(cwd, ".venv", "pyvenv.cfg"), "home = /usr/bin\nuv = 0.4.30\n");
  execFileSync("ln", [join(store, "files", "m.py"), join(cwd, sitePackages, "m.py")]);
  // Round 50, F50a-1: a project one folder down with a hoisted (or bun's) node_modules, no pnpm layout file; a
  // virtual environment of another name that `uv pip` filled (its pyvenv.cfg does not name uv).
  const hoisted = join("web", "node_modules", "is-number", "index.js");
  const envLib = join("web", "env", "lib", `python${pyVersion}`, "site-packages", "m.py");
  mkdirSync(join(cwd, hoisted, ".."), { recursive: true });
  mkdirSync(join(cwd, envLib, ".."), { recursive: true });
  writeFileSync(join(cwd, "web", "env", "pyvenv.cfg"), "home = /usr/bin\n");
  execFileSync("ln", [join(store, "files", "index.js"), join(cwd, hoisted)]);
  execFileSync("ln", [join(store, "files", "m.py"), join(cwd, envLib)]);
  const fx = await setup({ use: "command", command: [process.execPath, "-e", plant], writable: [copies] }, cwd);
  const plants: [string, string][] = [[join(cwd, pnpmFile), "// the agent's\n"], [join(cwd, sitePackages, "m.py"), "WHO = 'the agent'\n"], [join(cwd, hoisted), "// the agent's\n"], [join(cwd, envLib), "WHO = 'the agent'\n"],
    [join(copies, pnpmFile), "// the agent's own copy\n"], [join(cwd, "work.txt"), "work"], [join(cwd, "web", "app.js"), "work"]];
  writeFileSync(join(cwd, "plants.json"), JSON.stringify(plants));
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  assert.equal((await untilLatestRun(fx, "done", 30_000)).runs[0].summary, "Done: planted");
  assert.deepEqual(JSON.parse(readFileSync(join(cwd, "tried.json"), "utf8")), Object.fromEntries(plants.map(([p], i) => [p, i < 4 ? "EROFS" : "written"])));
  assert.deepEqual([readFileSync(join(store, "files", "index.js"), "utf8"), readFileSync(join(store, "files", "m.py"), "utf8")], ["module.exports = 'the store';\n", "WHO = 'the store'\n"]);
});
