/**
 * What a launched agent can read (issue 14, item 1): a `command` agent that tries, as an attacker would, the files next
 * to its context file (job.json with the run token, ../../../config.json, ../../../master.key, spec.json), every file
 * under the hub's home it can find, the environment of every process it can see, and its own environment. It must
 * find none of the hub's secrets, and no file of the worker may keep an agent's environment values.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, statSync, mkdirSync, writeFileSync, realpathSync, rmSync, existsSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { hubFixture, baseRules, engine, tempDir, until, untilLatestRun } from "./helpers.js";
import { sandboxKit, workerLogText } from "./sandbox-kit.js";
import { Worker } from "../src/worker/worker.js";
import { homePaths, writeFileAtomic } from "../src/host/home.js";
import { readOnlyPaths } from "../src/worker/hub-code.js";

const kit = sandboxKit();
/** Sets variables in the worker's environment (the agent's parent) for one test. */
const plant = kit.setEnv;

/**
 * The attacking agent: collects everything it can read into `<cwd>/seen.json` and prints "Done: …".
 * The hub's home is guessed as the highest folder above the context file below the temporary folder (or "/").
 */
const attack = String.raw`
const fs = require("fs"), path = require("path");
const got = { env: process.env, files: {}, tried: {} };
const read = (f) => { try { const st = fs.statSync(f); if (!st.isFile() || (st.size > 20e6)) return false; const t = fs.readFileSync(f, "utf8"); got.files[f] = t.slice(0, 200000); return true; } catch (e) { got.tried[f] = e.code || String(e); return false; } };
const walk = (d, depth) => {
  let names = [];
  try { names = fs.readdirSync(d); } catch (e) { got.tried[d] = e.code || String(e); return; }
  for (const n of names) {
    const p = path.join(d, n);
    let st; try { st = fs.statSync(p); } catch { continue; }
    if (st.isDirectory()) { if (depth < 12) walk(p, depth + 1); } else if (st.isFile()) read(p);
  }
};
const ctx = process.env.AGENT_AUTOLOOP_CONTEXT;
const here = path.dirname(ctx);
read(ctx);
for (let d = here, i = 0; i < 6; d = path.dirname(d), i++) {
  for (const n of ["job.json", "spec.json", "result.json", "config.json", "master.key", "secrets.env", "hub.db", "claim", "1/spec.json"]) read(path.join(d, n));
}
let top = here;
while (path.dirname(top) !== require("os").tmpdir() && path.dirname(top) !== top && path.dirname(top) !== "/") top = path.dirname(top);
walk(top, 0);
for (const p of fs.readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
  read("/proc/" + p + "/environ"); read("/proc/" + p + "/cmdline");
  try { for (const fd of fs.readdirSync("/proc/" + p + "/fd")) read("/proc/" + p + "/fd/" + fd); } catch {}
}
fs.writeFileSync(path.join(process.cwd(), "seen.json"), JSON.stringify(got));
console.log("Done: looked around");
`;

/** A hub whose rule "alerts" runs `agent` (a rules.json agent entry) in `cwd`, its config.json and secrets.env full of keys, and a worker for it. */
async function setup(agent: Record<string, unknown>, cwd: string) {
  const rules = { ...baseRules, agents: { ...baseRules.agents, bot: { worker: "w1", ...agent } }, rules: [{ ...baseRules.rules[0], cwd }] };
  const fx = await hubFixture(rules);
  kit.hub(fx);
  // config.json as `init` writes it for `serve`: the owner, the local worker's and the channels' keys.
  writeFileAtomic(fx.home.config, JSON.stringify({
    listen: "127.0.0.1:0", publicUrl: null, owner: fx.keys.owner,
    worker: { name: "w1", key: fx.keys.worker, capacity: 1 },
    channels: { ch1: { use: "file", key: fx.keys.channel, path: join(fx.home.dir, "cards.txt") } },
  }));
  writeFileAtomic(fx.home.secrets, "AGENT_AUTOLOOP_SECRET_SHOP=webhook-secret-a1b2c3d4e5f6\n");
  const w = kit.worker(fx);
  return fx;
}

/** Every file under `dir`, with its text. */
function filesUnder(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    const st = statSync(p);
    if (st.isDirectory()) for (const [k, v] of filesUnder(p)) out.set(k, v);
    else if (st.isFile()) out.set(p, readFileSync(p, "latin1"));
  }
  return out;
}

const envSecrets = {
  GH_TOKEN: "ghp_secretGitHubToken0123456789",
  GIT_CONFIG_VALUE_0: "Authorization: Bearer git-secret-0123456789",
  ANTHROPIC_API_KEY: "sk-ant-secret-anthropic-0123456789",
  OPENAI_API_KEY: "sk-secret-openai-0123456789",
  SOME_PASSWORD: "hunter2-secret-0123456789",
};

test("a command agent that looks for the hub's secrets finds none: not the run token, keys, master key, webhook secrets or the worker's environment", async () => {
  plant(envSecrets);
  const cwd = tempDir("aa-attack-cwd-");
  const fx = await setup({ use: "command", command: ["node", "-e", attack] }, cwd);
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  const st = await untilLatestRun(fx, "done", 30_000);
  assert.equal(st.runs[0].summary, "Done: looked around");
  const seen = JSON.parse(readFileSync(join(cwd, "seen.json"), "utf8")) as { env: Record<string, string>; files: Record<string, string>; tried: Record<string, string> };
  const job = JSON.parse(readFileSync(join(fx.home.worker, "runs", "1-1", "job.json"), "utf8")) as { token: string };
  const secrets: Record<string, string> = {
    "run token": job.token,
    "owner key": fx.keys.owner,
    "worker key": fx.keys.worker,
    "channel key": fx.keys.channel,
    "master key": readFileSync(fx.home.masterKey, "utf8").trim(),
    "webhook secret": "webhook-secret-a1b2c3d4e5f6",
    ...envSecrets,
  };
  const text = JSON.stringify(seen);
  const found = Object.entries(secrets).filter(([, v]) => text.includes(v)).map(([k]) => k);
  assert.deepEqual(found, [], `the agent read: ${Object.keys(seen.files).filter((p) => Object.values(secrets).some((s) => seen.files[p]!.includes(s))).join(", ")}`);
  // It did try: the files the attack of the issue read are not there for it.
  for (const file of [join(fx.home.worker, "runs", "1-1", "job.json"), fx.home.config, fx.home.masterKey, fx.home.secrets, fx.home.database]) {
    assert.equal(seen.tried[file], "ENOENT", file);
  }
  // What it does see: its context file, and an environment of allowlisted names only.
  assert.ok(seen.files[seen.env.AGENT_AUTOLOOP_CONTEXT!]?.includes('"rule": "alerts"'), "the context file is readable");
  assert.deepEqual(Object.keys(seen.env).filter((k) => /TOKEN|KEY|PASSWORD|SECRET|^GH_|^GIT_/.test(k)), []);
});

test("an agent's environment values are in no file: spec.json keeps the names of the variables it passed", async () => {
  plant(envSecrets);
  const cwd = tempDir("aa-attack-cwd-");
  const fx = await setup({ use: "command", command: ["node", "-e", 'console.log("Done: " + (process.env.GH_TOKEN ? "has" : "has no") + " GH_TOKEN")'], env: ["GH_TOKEN"] }, cwd);
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  const st = await untilLatestRun(fx, "done", 30_000);
  assert.equal(st.runs[0].summary, "Done: has GH_TOKEN", "an agent gets the variables its entry names");
  const spec = JSON.parse(readFileSync(join(fx.home.worker, "runs", "1-1", "1", "spec.json"), "utf8")) as { env: unknown; sandboxed: boolean };
  assert.equal(spec.sandboxed, true);
  assert.ok(Array.isArray(spec.env) && spec.env.includes("GH_TOKEN") && spec.env.includes("PATH"), `names only: ${JSON.stringify(spec.env)}`);
  for (const [file, content] of filesUnder(fx.home.dir)) {
    for (const [name, value] of Object.entries(envSecrets)) assert.ok(!content.includes(value), `${file} holds ${name}`);
  }
});

test('"sandbox": false runs the agent without bubblewrap (it sees the home: the owner chose so); its environment is still the allowlist', async () => {
  plant(envSecrets);
  const cwd = tempDir("aa-open-cwd-");
  const probe = 'const fs=require("fs");console.log("Done: home " + (fs.existsSync(require("path").resolve(process.argv[1])) ? "visible" : "hidden") + ", GH_TOKEN " + (process.env.GH_TOKEN ? "set" : "unset"))';
  const fx = await setup({ use: "command", command: [process.execPath, "-e", probe, "{context}/../../../../../master.key"], sandbox: false }, cwd);
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  const st = await untilLatestRun(fx, "done", 30_000);
  assert.equal(st.runs[0].summary, "Done: home visible, GH_TOKEN unset");
  const spec = JSON.parse(readFileSync(join(fx.home.worker, "runs", "1-1", "1", "spec.json"), "utf8")) as { argv: string[]; sandboxed: boolean };
  assert.equal(spec.sandboxed, false);
  assert.equal(spec.argv[0], process.execPath);
});

test("a sandboxed agent sees its plugin's own files when the plugin is installed in the home, and nothing else of the home", async () => {
  const cwd = tempDir("aa-plugin-cwd-");
  const fx = await setup({ use: "local-tool" }, cwd);
  const pluginDir = join(fx.home.plugins, "local-tool");
  mkdirSync(pluginDir, { recursive: true });
  writeFileSync(join(pluginDir, "run.cjs"), 'const fs=require("fs"),p=require("path");console.log("Done: " + fs.readdirSync(p.dirname(__dirname)).join(",") + " / " + fs.readdirSync(p.join(__dirname, "../..")).sort().join(","))');
  writeFileSync(join(pluginDir, "agent.mjs"), `export default {
    command: () => [process.execPath, ${JSON.stringify(join(pluginDir, "run.cjs"))}],
    read: (stdout, code) => code === null ? { started: true } : { started: true, finished: true, text: stdout.trim() },
  };`);
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  const st = await untilLatestRun(fx, "done", 30_000);
  assert.equal(st.runs[0].summary, "Done: local-tool / plugins,worker", "the plugins folder holds only this plugin; the home only the folders leading to what is shown");
});

test("a sandboxed agent whose rule works inside the worker's home is not started: the run fails saying why", async () => {
  // A worker with a home of its own (as on another computer): the rule's folder lies inside it.
  const workerHome = homePaths(tempDir("aa-worker-home-"));
  const inside = join(workerHome.dir, "work");
  mkdirSync(inside);
  const rules = { ...baseRules, agents: { ...baseRules.agents, bot: { worker: "w1", use: "command", command: [process.execPath, "-e", 'console.log("Done: ran")'] } }, rules: [{ ...baseRules.rules[0], cwd: inside }] };
  const fx = await hubFixture(rules);
  kit.hub(fx);
  const w = new Worker({ url: fx.url, key: fx.keys.worker, name: "w1", capacity: 1, home: workerHome, lang: "en" });
  kit.workers.push(w);
  void w.run();
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  const st = await untilLatestRun(fx, "waiting", 30_000);
  assert.equal(st.runs[0].error, `cwd ${inside} is inside the worker's home ${realpathSync(workerHome.dir)}, which the sandbox hides from agents: choose another folder, or set "sandbox": false on agent bot`);
});

test("without bubblewrap on PATH agents run without the sandbox, and the worker says so once in its log", async () => {
  const cwd = tempDir("aa-nobwrap-cwd-");
  const emptyBin = tempDir("aa-empty-bin-");
  const lines: string[] = [];
  const path = process.env.PATH;
  process.env.PATH = emptyBin;
  try {
    const rules = { ...baseRules, agents: { ...baseRules.agents, bot: { worker: "w1", use: "command", command: [process.execPath, "-e", 'console.log("Done: ran")'] } }, rules: [{ ...baseRules.rules[0], cwd }] };
    const fx = await hubFixture(rules);
    kit.hub(fx);
    const w = new Worker({ url: fx.url, key: fx.keys.worker, name: "w1", capacity: 1, home: fx.home, lang: "en", log: (l) => lines.push(l) });
    kit.workers.push(w);
    void w.run();
    await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
    await untilLatestRun(fx, "done", 30_000);
    await fx.call("POST", "/v1/events", fx.keys.source, { id: "e2", type: "alert.y" });
    await until(async () => (await fx.state()).runs.filter((r) => r.state === "done").length === 2, 30_000, "two runs done");
    const spec = JSON.parse(readFileSync(join(fx.home.worker, "runs", "2-1", "1", "spec.json"), "utf8")) as { sandboxed: boolean };
    assert.equal(spec.sandboxed, false);
    assert.deepEqual(lines, ["worker w1: agents run without a sandbox and can read this home: bubblewrap (bwrap) is not installed: install it (Debian and Ubuntu: apt-get install bubblewrap)"]);
  } finally {
    process.env.PATH = path;
  }
});

/**
 * The attack of the hardening review (F1): an agent that changes what the hub later runs or loads outside the sandbox
 * (its code in dist/, node_modules/ or plugins/, the node binary, a program on the hub's PATH, a module on its
 * NODE_PATH, tsx's compile cache) would run its code with the hub's rights at the next start. Each try here makes a new
 * file (nothing of the engine or of node is changed even when the sandbox fails), except node itself, which is only
 * asked whether it could be written (access W_OK), and an existing engine file, only opened for writing.
 */
const tamper = String.raw`
const fs = require("fs");
const [execPath, existing, ...fresh] = JSON.parse(process.argv[1]);
const tried = {};
for (const f of fresh) { try { fs.writeFileSync(f, "planted", { flag: "wx" }); tried[f] = "written"; } catch (e) { tried[f] = e.code || String(e); } }
try { fs.accessSync(execPath, fs.constants.W_OK); tried[execPath] = "writable"; } catch (e) { tried[execPath] = e.code || String(e); }
try { fs.closeSync(fs.openSync(existing, "r+")); tried[existing] = "opened for writing"; } catch (e) { tried[existing] = e.code || String(e); }
fs.writeFileSync(require("path").join(process.cwd(), "tried.json"), JSON.stringify(tried));
console.log("Done: tried");
`;

test("a sandboxed agent cannot change what the hub runs outside the sandbox: the engine (dist, node_modules, plugins), node, the folders of PATH and NODE_PATH, tsx's cache", async () => {
  const cwd = tempDir("aa-tamper-cwd-");
  const bin = tempDir("aa-tamper-bin-"); // first on the hub's PATH: where it finds ps, git, bwrap and the agents' CLIs
  const modules = tempDir("aa-tamper-modules-");
  const path = process.env.PATH;
  const nodePath = process.env.NODE_PATH;
  process.env.PATH = `${bin}:${path}`;
  process.env.NODE_PATH = modules;
  const probe = `sandbox-probe-${process.pid}-${Date.now()}`;
  const tsxCache = join(tmpdir(), `tsx-${process.getuid!()}`);
  mkdirSync(tsxCache, { recursive: true });
  const fresh = [
    join(engine, "dist", "plugins", "command", `${probe}.js`), join(engine, "node_modules", `${probe}.js`), join(engine, "plugins", `${probe}.ts`),
    join(engine, `${probe}.js`), join(bin, "ps"), join(modules, `${probe}.js`), join(tsxCache, probe),
  ];
  const existing = join(engine, "dist", "plugins", "command", "agent.js");
  try {
    const fx = await setup({ use: "command", command: [process.execPath, "-e", tamper, JSON.stringify([realpathSync(process.execPath), existing, ...fresh])] }, cwd);
    await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
    const st = await untilLatestRun(fx, "done", 30_000);
    assert.equal(st.runs[0].summary, "Done: tried");
    const tried = JSON.parse(readFileSync(join(cwd, "tried.json"), "utf8")) as Record<string, string>;
    // tsx's cache is not there at all (round 34, F34b-1: hidden, not shown read-only): the sandbox's own /tmp lacks it.
    const expected = Object.fromEntries([...fresh, realpathSync(process.execPath), existing].map((f) => [f, f.startsWith(tsxCache) ? "ENOENT" : "EROFS"]));
    assert.deepEqual(tried, expected);
  } finally {
    process.env.PATH = path;
    if (nodePath === undefined) delete process.env.NODE_PATH;
    else process.env.NODE_PATH = nodePath;
    for (const f of fresh) rmSync(f, { force: true });
  }
  assert.deepEqual(fresh.filter((f) => existsSync(f)), []);
});

/** Reads, lists and writes tsx's cache from inside the sandbox; what happened to each, in `<cwd>/<argv[2]>`. */
const cacheLook = String.raw`
const fs = require("fs");
const [cache, name, out] = process.argv.slice(1);
const got = {};
try { got.read = fs.readFileSync(cache + "/" + name, "utf8"); } catch (e) { got.read = e.code; }
try { got.list = fs.readdirSync(cache); } catch (e) { got.list = e.code; }
try { fs.writeFileSync(cache + "/" + name + ".agent", "planted"); got.write = "written"; } catch (e) { got.write = e.code; }
fs.writeFileSync(require("path").join(process.cwd(), out), JSON.stringify(got));
console.log("Done: looked");
`;

test("issue 26 r34 F34b-1 (reported case: an agent grepped /tmp/tsx-<uid> and read a source plugin of the hidden home, compiled, with its constant and its path): tsx's compile cache is hidden from agents — in their own folder, and with the shared /tmp as their cwd", async () => {
  const cache = join(tmpdir(), `tsx-${process.getuid!()}`);
  mkdirSync(cache, { recursive: true });
  const name = `aa-r34-${process.pid}-${Date.now()}.mjs`;
  writeFileSync(join(cache, name), 'const hookSecret = "sk_live_OWNER_PRIVATE_MARKER"; // /home/owner/.agent-autoloop/plugins/mysrc/source.ts\n');
  try {
    const own = tempDir("aa-r34-cwd-");
    kit.removed.push(own);
    for (const cwd of [own, realpathSync(tmpdir())]) {
      const out = `${name}.${cwd === realpathSync(tmpdir()) ? "tmp" : "own"}.json`;
      const fx = await setup({ use: "command", command: [process.execPath, "-e", cacheLook, cache, name, out] }, cwd);
      await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
      const st = await untilLatestRun(fx, "done", 30_000);
      assert.equal(st.runs[0].summary, "Done: looked");
      const got = JSON.parse(readFileSync(join(cwd, out), "utf8")) as Record<string, unknown>;
      rmSync(join(cwd, out));
      // Under the shared /tmp the cache is an empty folder of the sandbox's own; else not there.
      assert.deepEqual(got, cwd === realpathSync(tmpdir()) ? { read: "ENOENT", list: [], write: "written" } : { read: "ENOENT", list: "ENOENT", write: "ENOENT" }, cwd);
      assert.equal(existsSync(join(cache, `${name}.agent`)), false, "nothing reached the host's cache");
      await kit.end(); // the next hub
    }
  } finally {
    rmSync(join(cache, name), { force: true });
    rmSync(join(cache, `${name}.agent`), { force: true });
  }
});

test("a sandboxed agent whose rule works inside a folder the sandbox keeps read-only (the engine) is not started: the run fails saying why", async () => {
  const inside = join(engine, "examples");
  const fx = await setup({ use: "command", command: [process.execPath, "-e", 'console.log("Done: ran")'] }, inside);
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  const st = await untilLatestRun(fx, "waiting", 30_000);
  assert.equal(st.runs[0].error, `cwd ${inside} lies inside ${realpathSync(engine)}, which the sandbox keeps read-only because the hub runs code or programs from there: choose another folder, or set "sandbox": false on agent bot`);
});

test("what stays read-only: the engine and the targets of its node_modules links, node and Node's global module folders, node_modules above the engine, PATH and NODE_PATH folders (relative ones from the hub's folder), the parts of the install prefix of each PATH folder and of node that exist (round 47), tsx's cache; nested paths once", () => {
  const root = realpathSync(tempDir("aa-readonly-"));
  const dirs = ["top/node_modules", "top/engine/node_modules/@scope", "linked/pkg", "scoped", "node/bin", "node/lib/node", "user/.node_modules", "user/.node_libraries", "bin", "hubdir/rel-bin", "modules", "tsx-0", "progs",
    "conda/bin", "conda/lib/python3.12/site-packages", "user/bin", "user/lib", "user/share", "tools/sbin", "venvlink-target/bin", "nodir/shims-not"];
  for (const d of dirs) mkdirSync(join(root, d), { recursive: true });
  writeFileSync(join(root, "node", "bin", "node"), "");
  symlinkSync(join(root, "linked", "pkg"), join(root, "top", "engine", "node_modules", "pkg"));
  symlinkSync(join(root, "scoped"), join(root, "top", "engine", "node_modules", "@scope", "s"));
  mkdirSync(join(root, "top", "engine", "node_modules", "plain"));
  // A PATH folder reached through a link: its prefix by where it leads too.
  symlinkSync(join(root, "venvlink-target", "bin"), join(root, "venvbin"));
  const paths = readOnlyPaths({
    engine: join(root, "top", "engine"), execPath: join(root, "node", "bin", "node"),
    path: [join(root, "progs"), "rel-bin", join(root, "missing"), join(root, "top", "engine", "node_modules", ".bin"), "",
      join(root, "conda", "bin"), join(root, "user", "bin"), join(root, "tools", "sbin"), join(root, "venvbin"), join(root, "nodir", "shims-not")].join(":"),
    nodePath: join(root, "modules"), userHome: join(root, "user"), tsxCache: join(root, "tsx-0"), cwd: join(root, "hubdir"),
  });
  assert.deepEqual(paths.filter((p) => p.startsWith(root)).sort(), [
    "progs", "hubdir/rel-bin", "linked/pkg", "modules", "node/bin/node", "node/lib", "scoped", "top/engine", "top/node_modules", "tsx-0", "user/.node_libraries", "user/.node_modules",
    "conda/bin", "conda/lib", "user/bin", "user/lib", "user/share", "tools/sbin", "venvlink-target/bin", "nodir/shims-not",
  ].map((d) => join(root, d)).sort());
  rmSync(root, { recursive: true, force: true });
});

test("issue 26 r25 F25a-2 (reported case: a rule's cwd in ~/.agent-autoloop-backups, and a writable folder in another home of the user's): refused like the worker's home — a folder an agent writes is shown, never hidden", async (t) => {
  const { probeBwrap } = await import("./tools-helpers.js");
  if (!(await probeBwrap("bwrap")).ok) return t.skip("bubblewrap cannot run here");
  const userHome = realpathSync(tempDir("aa-r25-user-"));
  kit.removed.push(userHome);
  kit.setEnv({ HOME: userHome });
  const backups = join(userHome, ".agent-autoloop-backups");
  mkdirSync(join(backups, "work"), { recursive: true });
  mkdirSync(join(userHome, ".agent-autoloop-second", "work"), { recursive: true });
  const cwd = realpathSync(tempDir("aa-r25-cwd-"));
  kit.removed.push(cwd);
  const command = [process.execPath, "-e", 'console.log("Done: ran")'];
  const rules = {
    ...baseRules,
    agents: { ...baseRules.agents, bot: { worker: "w1", use: "command", command }, other: { worker: "w1", use: "command", command, writable: [join(userHome, ".agent-autoloop-second", "work")] } },
    rules: [{ ...baseRules.rules[0], cwd: join(backups, "work") }, { name: "other", when: { source: "shop", types: ["other.*"] }, to: "other", cwd }],
  };
  const fx = kit.hub(await hubFixture(rules));
  kit.worker(fx);
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e2", type: "other.x" });
  const st = await until(async () => {
    const s = await fx.state();
    return s.runs.length === 2 && s.runs.every((r) => r.state === "waiting") && s;
  }, 30_000, "both runs refused");
  const errors = Object.fromEntries(st.runs.map((r) => [r.rule, r.error]));
  assert.equal(errors.alerts, `cwd ${join(backups, "work")} is inside the worker's home ${backups}, which the sandbox hides from agents: choose another folder, or set "sandbox": false on agent bot`);
  assert.match(errors.other ?? "", new RegExp(`^${join(userHome, ".agent-autoloop-second", "work").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} in "writable" of agent other lies inside the worker's home `));
});

test("issue 26 r25 F25a-1 (reported case: another rule's agent replaced this rule's cwd, a writable entry and a readable one with links to ~/.ssh, ~/.config, ~/.bashrc and the home): refused, naming where the link leads; a link elsewhere still works", async (t) => {
  const { probeBwrap } = await import("./tools-helpers.js");
  if (!(await probeBwrap("bwrap")).ok) return t.skip("bubblewrap cannot run here");
  const userHome = realpathSync(tempDir("aa-r25-user-"));
  kit.removed.push(userHome);
  kit.setEnv({ HOME: userHome });
  for (const d of [".ssh", ".config", "proj", "real-work"]) mkdirSync(join(userHome, d));
  writeFileSync(join(userHome, ".bashrc"), "# the owner's\n");
  // What the other rule's agent left in ~/proj, where it works: each of this rule's folders replaced by a link.
  symlinkSync(join(userHome, ".ssh"), join(userHome, "proj", "docs"));
  symlinkSync(join(userHome, ".config"), join(userHome, "proj", "shared"));
  symlinkSync(join(userHome, ".bashrc"), join(userHome, "proj", "rc"));
  symlinkSync(userHome, join(userHome, "proj", "refs"));
  symlinkSync(join(userHome, "real-work"), join(userHome, "work"));
  const command = [process.execPath, "-e", 'console.log("Done: ran")'];
  const agent = (extra: object) => ({ worker: "w1", use: "command", command, ...extra });
  const cwd = join(userHome, "real-work");
  const rule = (name: string, to: string, at: string) => ({ name, when: { source: "shop", types: [`${name}.*`] }, to, cwd: at });
  const rules = {
    ...baseRules,
    agents: { bot: agent({}), w: agent({ writable: [join(userHome, "proj", "shared")] }), f: agent({ writable: [join(userHome, "proj", "rc")] }), r: agent({ readable: [join(userHome, "proj", "refs")] }) },
    rules: [rule("docs", "bot", join(userHome, "proj", "docs")), rule("w", "w", cwd), rule("f", "f", cwd), rule("r", "r", cwd), rule("fine", "bot", join(userHome, "work"))],
  };
  const fx = kit.hub(await hubFixture(rules));
  kit.worker(fx, { capacity: 5 });
  for (const id of ["docs", "w", "f", "r", "fine"]) await fx.call("POST", "/v1/events", fx.keys.source, { id, type: `${id}.x` });
  let seen: unknown = null;
  const st = await until(async () => {
    const s = await fx.state();
    seen = s.runs.map((r) => [r.rule, r.state, r.error]);
    return s.runs.length === 5 && s.runs.every((r) => r.state === "waiting" || r.state === "done") && s;
  }, 120_000, () => `every run refused or done (full runs timed out with run "r" claimed: its files say how far its attempt got): ${JSON.stringify(seen)}; the worker's run folders: ${JSON.stringify(runFolders(fx.home.worker))}; the worker's log: ${workerLogText()}`);
  const by = Object.fromEntries(st.runs.map((r) => [r.rule, r.state === "done" ? "done" : r.error]));
  const led = (path: string, agentId: string, real: string) => `${path} of agent ${agentId} leads through a link to ${real} (a home or a dot-folder in one), which the sandbox keeps from agents; another agent may have put the link there: look at it, and name the folder itself`;
  assert.deepEqual(by, {
    docs: led(join(userHome, "proj", "docs"), "bot", join(userHome, ".ssh")),
    w: led(join(userHome, "proj", "shared"), "w", join(userHome, ".config")),
    f: led(join(userHome, "proj", "rc"), "f", join(userHome, ".bashrc")),
    r: led(join(userHome, "proj", "refs"), "r", userHome),
    fine: "done",
  });
  assert.deepEqual(readdirSync(join(userHome, ".ssh")), [], "nothing made in ~/.ssh (the guard's empty .vscode, .claude… before)");
});

test("issue 26 r26 F26a-3, F26a-4 (reported cases: another rule's agent replaced this rule's cwd with a link to /run/user/<uid>, and with one to another project's .git): a folder a rule names is never reached through a link in a folder agents write, nor is a git folder", async (t) => {
  const { probeBwrap } = await import("./tools-helpers.js");
  if (!(await probeBwrap("bwrap")).ok) return t.skip("bubblewrap cannot run here");
  const root = realpathSync(tempDir("aa-r26-"));
  kit.removed.push(root);
  const outer = join(root, "w");
  const runtime = join(root, "run-user-1005");
  const other = join(root, "other");
  for (const d of [outer, runtime, join(other, ".git", "hooks")]) mkdirSync(d, { recursive: true });
  mkdirSync(join(outer, "proj"));
  mkdirSync(join(outer, "repo"));
  // The outer rule's agent swaps the inner rules' folders for links (as the reported one did).
  const swap = `rm -rf proj repo && ln -s ${runtime} proj && ln -s ${join(other, ".git")} repo && echo "Done: swapped"`;
  const command = (script: string) => ["sh", "-c", script];
  const rules = {
    ...baseRules,
    agents: { outer: { worker: "w1", use: "command", command: command(swap) }, inner: { worker: "w1", use: "command", command: command('echo "Done: ran"') } },
    rules: [
      { name: "outer", when: { source: "shop", types: ["outer.*"] }, to: "outer", cwd: outer },
      { name: "proj", when: { source: "shop", types: ["proj.*"] }, to: "inner", cwd: join(outer, "proj") },
      { name: "repo", when: { source: "shop", types: ["repo.*"] }, to: "inner", cwd: join(outer, "repo") },
      { name: "git", when: { source: "shop", types: ["git.*"] }, to: "inner", cwd: join(other, ".git") },
    ],
  };
  const fx = kit.hub(await hubFixture(rules));
  kit.worker(fx);
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "o1", type: "outer.x" });
  await until(async () => (await fx.state()).runs.find((r) => r.rule === "outer")?.state === "done", 30_000, "the outer run");
  for (const id of ["proj", "repo", "git"]) await fx.call("POST", "/v1/events", fx.keys.source, { id, type: `${id}.x` });
  const st = await until(async () => {
    const s = await fx.state();
    return s.runs.filter((r) => r.rule !== "outer").length === 3 && s.runs.filter((r) => r.rule !== "outer").every((r) => r.state === "waiting") && s;
  }, 60_000, "the three runs refused");
  const by = Object.fromEntries(st.runs.map((r) => [r.rule, r.error]));
  const crossed = (name: string) => `${join(outer, name)} of agent inner goes through the link ${join(outer, name)}, which lies in ${outer}, a folder agents write: another agent may have put it there; look at it, and name the folder itself`;
  assert.equal(by.proj, crossed("proj"));
  assert.equal(by.repo, crossed("repo"));
  assert.equal(by.git, `${join(other, ".git")} of agent inner is the git folder ${join(other, ".git")} or lies inside one: git runs its hooks and configuration, which the sandbox keeps from agents; name the repository's work tree`);
  assert.deepEqual(readdirSync(runtime), [], "nothing made in the runtime folder");
});

test("issue 26 r26 F26a-1 (reported case: another run made the rule's program a link to a file in ~/.ssh): the program's package is not shown by a way through a folder agents write; a program in the home reached otherwise still is", async (t) => {
  const { probeBwrap } = await import("./tools-helpers.js");
  if (!(await probeBwrap("bwrap")).ok) return t.skip("bubblewrap cannot run here");
  const userHome = realpathSync(tempDir("aa-r26p-user-"));
  kit.removed.push(userHome);
  kit.setEnv({ HOME: userHome });
  for (const d of [".ssh", "p", "tools/pkg"]) mkdirSync(join(userHome, d), { recursive: true });
  writeFileSync(join(userHome, ".ssh", "id_ed25519"), "FAKE-PRIVATE-KEY\n", { mode: 0o600 });
  // A script in ~/.ssh stands for any file there the swapped link can lead to at the moment the worker looks.
  const reveal = `#!/bin/sh\ncat ${join(userHome, ".ssh", "id_ed25519")} 2>&1\necho "Done: looked"\n`;
  writeFileSync(join(userHome, ".ssh", "agent.sh"), reveal, { mode: 0o755 });
  // The owner's own tool in the home, in a package (package.json): shown, as before.
  writeFileSync(join(userHome, "tools", "pkg", "package.json"), "{}\n");
  writeFileSync(join(userHome, "tools", "pkg", "run.sh"), `#!/bin/sh\necho "Done: tool ran"\n`, { mode: 0o755 });
  symlinkSync(join(userHome, "tools", "pkg", "run.sh"), join(userHome, "tools", "run"));
  const cwd = join(userHome, "p");
  const command = (program: string) => ({ worker: "w1", use: "command", command: [program] });
  const rules = {
    ...baseRules,
    agents: { flip: { worker: "w1", use: "command", command: ["sh", "-c", `ln -s ${join(userHome, ".ssh", "agent.sh")} agent.sh && echo "Done: swapped"`] }, v: command(join(cwd, "agent.sh")), tool: command(join(userHome, "tools", "run")) },
    rules: [
      { name: "flip", when: { source: "shop", types: ["flip.*"] }, to: "flip", cwd },
      { name: "v", when: { source: "shop", types: ["v.*"] }, to: "v", cwd },
      { name: "tool", when: { source: "shop", types: ["tool.*"] }, to: "tool", cwd },
    ],
  };
  const fx = kit.hub(await hubFixture(rules));
  kit.worker(fx);
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "f1", type: "flip.x" });
  await until(async () => (await fx.state()).runs.find((r) => r.rule === "flip")?.state === "done", 30_000, "the flip run");
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "t1", type: "tool.x" });
  await until(async () => (await fx.state()).runs.find((r) => r.rule === "tool")?.state === "done", 30_000, "the tool run (a program in the home, in a package)");
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "v1", type: "v.x" });
  const run = await until(async () => {
    const r = (await fx.state()).runs.find((x) => x.rule === "v");
    return r && !["queued", "claimed", "running"].includes(r.state) && r;
  }, 60_000, "the v run to end");
  const outputs = filesUnder(join(fx.home.dir, "worker", "runs"));
  const leaked = [...outputs].filter(([, text]) => text.includes("FAKE-PRIVATE-KEY")).map(([f]) => f);
  assert.deepEqual(leaked, [], "no run's output holds the key");
  // Not shown, the link's target is not there: bwrap cannot start it, and the run waits to be retried.
  assert.deepEqual([run.state, run.error], ["waiting", `exit code 1: bwrap: execvp ${join(cwd, "agent.sh")}: No such file or directory`]);
});

/** Each run folder of the worker's home with the files and launch folders in it (what a stuck attempt got to). */
function runFolders(workerHome: string): Record<string, string[]> {
  const runs = join(workerHome, "runs");
  if (!existsSync(runs)) return {};
  return Object.fromEntries(readdirSync(runs).map((r) => [r, readdirSync(join(runs, r)).flatMap((n) => (statSync(join(runs, r, n)).isDirectory() ? [`${n}/: ${readdirSync(join(runs, r, n)).join(",")}`] : [n]))]));
}
