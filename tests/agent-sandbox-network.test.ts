/**
 * Issue 26 round 33, F33a-1: a sandboxed agent whose run went on while a hub run by hand was stopped listened on the
 * hub's own address; the owner's open console tab sent it the cookie and, reloaded, its page secret. The kind: a
 * sandboxed agent shared the computer's network, so it could listen where the computer's programs and browsers look,
 * and reach every loopback service. Now (where pasta is installed) a sandboxed agent has a network of its own
 * (src/worker/sandbox-network.ts): its listeners are seen by nothing outside, and of the computer's loopback it reaches
 * only the ports its rule names (`loopbackPorts`) and those of the loopback URLs in its environment. `"network": "host"`
 * gives it the computer's network again.
 *
 * As root (CI) the launch takes the `attach` way (bwrap makes the namespace, pasta joins it); the `wrap` way (an
 * ordinary user: pasta runs bwrap) is tried with the run's supervisor started as user nobody.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { createServer, connect, type Server } from "node:net";
import { execFileSync, spawn } from "node:child_process";
import { join } from "node:path";
import { baseRules, freePort, hubFixture, tempDir, until, untilLatestRun } from "./helpers.js";
import { sandboxKit } from "./sandbox-kit.js";
import { findProgram } from "../src/sdk/index.js";
import { attachArgv, loopbackPortsIn, networkArgv, networkPrograms, pastaOptions, resolvConf, sandboxDnsAddress, sandboxNetwork } from "../src/worker/sandbox-network.js";
import { stopGroup, supervisorScript } from "../src/worker/supervise.js";
import { sandboxArgv } from "../src/worker/sandbox.js";
import { parseRules } from "../src/protocol/rules-file.js";

const kit = sandboxKit();
const { removed } = kit;
const pasta = findProgram("pasta");
const bwrap = findProgram("bwrap");
const noPasta = !pasta || !bwrap || process.platform !== "linux" ? "pasta or bubblewrap missing" : false;

/** A TCP server on 127.0.0.1:`port` answering `text` to each connection; closed after the test. */
async function sayer(text: string, port = 0): Promise<{ port: number; server: Server }> {
  const server = createServer((s) => s.end(text));
  await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
  kit.cleanups.push(() => new Promise((r) => server.close(r)));
  return { port: (server.address() as { port: number }).port, server };
}

/**
 * The agent: reads what ports `a` (not named), `b` (named in loopbackPorts) and `c` (in its environment's URL) answer,
 * listens on `q` (a port the hub left: the reported case) and writes `listening` into its cwd, then waits for the test
 * to write `seen` (at most 10 s), and writes everything into `net.json`.
 */
const agentScript = String.raw`
const net = require("net"), fs = require("fs");
const [a, b, c, q] = process.argv.slice(1).map(Number);
const ask = (port) => new Promise((r) => { const s = net.connect(port, "127.0.0.1"); let d = ""; s.on("data", (x) => d += x); s.on("end", () => r(d)); s.on("error", (e) => r(e.code)); setTimeout(() => { s.destroy(); r("timeout"); }, 3000); });
(async () => {
  const out = { a: await ask(a), b: await ask(b), c: await ask(c) };
  const srv = net.createServer((s) => s.end("THE AGENT"));
  out.listen = await new Promise((r) => { srv.on("error", (e) => r(e.code)); srv.listen(q, "127.0.0.1", () => r("ok")); });
  fs.writeFileSync("listening", "1");
  for (let i = 0; i < 100 && !fs.existsSync("seen"); i++) await new Promise((r) => setTimeout(r, 100));
  srv.close();
  fs.writeFileSync("net.json", JSON.stringify(out));
  console.log("Done: net");
})();
`;

/** What a connection from this computer to 127.0.0.1:`port` gets: the text, or the error's code. */
function hostAsk(port: number): Promise<string> {
  return new Promise((r) => {
    const s = connect(port, "127.0.0.1");
    let d = "";
    s.on("data", (x) => (d += x));
    s.on("end", () => r(d));
    s.on("error", (e: NodeJS.ErrnoException) => r(e.code ?? e.message));
  });
}

async function runAgent(agent: Record<string, unknown>, cwd: string): Promise<{ net: Record<string, string>; fromHost: string }> {
  const rules = { ...baseRules, agents: { ...baseRules.agents, bot: { worker: "w1", use: "command", ...agent } }, rules: [{ ...baseRules.rules[0], cwd }] };
  const fx = await hubFixture(rules);
  kit.hub(fx);
  kit.worker(fx);
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  await until(() => existsSync(join(cwd, "listening")), 30_000, "the agent listening");
  const q = Number((agent.command as string[]).at(-1));
  const fromHost = await hostAsk(q);
  writeFileSync(join(cwd, "seen"), "1");
  assert.equal((await untilLatestRun(fx, "done", 30_000)).runs[0].summary, "Done: net");
  return { net: JSON.parse(readFileSync(join(cwd, "net.json"), "utf8")) as Record<string, string>, fromHost };
}

test("issue 26 r33 F33a-1 (reported case: the agent listens on the port the hub left): a sandboxed agent's listener is seen by nothing outside; of the computer's loopback it reaches only the ports named in loopbackPorts and in its environment's URLs", { skip: noPasta }, async () => {
  const a = await sayer("A: not named");
  const b = await sayer("B: named");
  const c = await sayer("C: in the environment");
  // The hub's port while it is down: free now, as after `serve` stopped.
  const q = await freePort();
  kit.setEnv({ AA_NET_MODEL_URL: `http://127.0.0.1:${c.port}/v1` });
  const cwd = realpathSync(tempDir("aa-net-cwd-"));
  removed.push(cwd);
  const { net, fromHost } = await runAgent({ command: [process.execPath, "-e", agentScript, String(a.port), String(b.port), String(c.port), String(q)], loopbackPorts: [b.port], env: ["AA_NET_MODEL_URL"] }, cwd);
  assert.deepEqual(net, { a: "ECONNREFUSED", b: "B: named", c: "C: in the environment", listen: "ok" });
  assert.equal(fromHost, "ECONNREFUSED", "the agent's listener is not on the computer's loopback");
});

test("issue 26 round 40, F40a-1 (reported case: a rule with no loopbackPorts and no loopback URL): the sandbox reaches no port of the computer's loopback (pasta's own default would forward every one it listens on)", { skip: noPasta }, async () => {
  const a = await sayer("A: a service of the computer on loopback");
  const q = await freePort();
  const cwd = realpathSync(tempDir("aa-net-cwd-"));
  removed.push(cwd);
  const port = String(a.port);
  const { net } = await runAgent({ command: [process.execPath, "-e", agentScript, port, port, port, String(q)] }, cwd);
  assert.deepEqual(net, { a: "ECONNREFUSED", b: "ECONNREFUSED", c: "ECONNREFUSED", listen: "ok" });
});

test("issue 26 round 40, F40a-1 (the kind): pasta's four forwarding directions are always named, never left at pasta's default (auto: every port)", () => {
  const named = (argv: string[]) => Object.fromEntries(["-t", "-u", "-T", "-U"].map((o) => [o, argv.flatMap((a, i) => (a === o ? [argv[i + 1]] : []))]));
  assert.deepEqual(named(pastaOptions([])), { "-t": ["none"], "-u": ["none"], "-T": ["none"], "-U": ["none"] });
  assert.deepEqual(named(pastaOptions([5432, 4000])), { "-t": ["none"], "-u": ["none"], "-T": ["5432", "4000"], "-U": ["none"] });
  const net = { pasta: "/usr/bin/pasta", ports: [], resolv: "/r" };
  // both ways: an ordinary user's (pasta runs bwrap) and root's (pasta joins bwrap's namespace)
  for (const argv of [networkArgv({ ...net, mode: "wrap" }, ["bwrap"], 4, 1000, 1000), attachArgv({ ...net, mode: "attach" }, "/proc/self/fd/3", "p")]) {
    assert.deepEqual(named(argv), { "-t": ["none"], "-u": ["none"], "-T": ["none"], "-U": ["none"] });
  }
});

test("issue 26 r33 F33a-1: \"network\": \"host\" gives a sandboxed agent the computer's network (every loopback port, its listeners seen outside)", { skip: noPasta }, async () => {
  const a = await sayer("A: not named");
  const q = await freePort();
  const cwd = realpathSync(tempDir("aa-net-host-"));
  removed.push(cwd);
  const { net, fromHost } = await runAgent({ command: [process.execPath, "-e", agentScript, String(a.port), String(a.port), String(a.port), String(q)], network: "host" }, cwd);
  assert.deepEqual(net, { a: "A: not named", b: "A: not named", c: "A: not named", listen: "ok" });
  assert.equal(fromHost, "THE AGENT");
});

test("issue 26 r33 F33a-1: rules.json refuses a network other than own or host and a port outside 1–65535, naming the field", () => {
  const checkRulesText = (text: string) => {
    const parsed = parseRules(text, { timezone: "UTC" });
    return parsed.ok ? (assert.deepEqual(parsed.rules.agents.bot!.loopbackPorts, [5432]), "ok") : parsed.error;
  };
  const agents = (bot: Record<string, unknown>) => JSON.stringify({ ...baseRules, agents: { ...baseRules.agents, bot: { worker: "w1", use: "command", command: ["true"], ...bot } } });
  assert.match(checkRulesText(agents({ network: "none" })), /agents\.bot\.network: must be own or host/);
  assert.match(checkRulesText(agents({ loopbackPorts: [0] })), /agents\.bot\.loopbackPorts\[0\]: must be a whole number from 1 to 65535/);
  assert.match(checkRulesText(agents({ loopbackPorts: [70000] })), /agents\.bot\.loopbackPorts\[0\]: must be a whole number from 1 to 65535/);
  assert.equal(checkRulesText(agents({ network: "own", loopbackPorts: [5432, 5432] })), "ok");
});

test("issue 26 r33 F33a-1: the loopback ports of an environment's URLs (127.0.0.1, localhost, [::1] only: pasta forwards to the computer's 127.0.0.1 and ::1, so 127.0.0.2 would open another service's port — the round-39 review, R39-6)", () => {
  assert.deepEqual(loopbackPortsIn({
    ANTHROPIC_BASE_URL: "http://127.0.0.1:4000/v1", HTTPS_PROXY: "http://user:pw@localhost:3128", X: "ws://[::1]:9229/abc", Y: "https://api.example.com:8443", Z: "http://127.0.0.1/", W: "http://127.0.0.1:99999", V: "http://127.0.0.1:5000, http://127.2.3.4:5001, http://127.0.0.2:5002",
  }), [4000, 3128, 9229, 5000]);
});

test("issue 26 r33 F33a-1: what a network of its own needs on this computer (doctor and the worker ask the same): pasta; for an ordinary user also an env that takes --default-signal", () => {
  const bin = realpathSync(tempDir("aa-net-bin-"));
  removed.push(bin);
  assert.deepEqual(networkPrograms(1000, bin), { shared: "noPasta" });
  assert.deepEqual(networkPrograms(0, bin), { shared: "noPasta" });
  writeFileSync(join(bin, "pasta"), "#!/bin/sh\n");
  writeFileSync(join(bin, "env"), "#!/bin/sh\n# an env without the option\n");
  chmodSync(join(bin, "pasta"), 0o755);
  chmodSync(join(bin, "env"), 0o755);
  assert.deepEqual(networkPrograms(1000, bin), { shared: "noEnv" });
  assert.deepEqual(networkPrograms(0, bin), { pasta: join(bin, "pasta"), mode: "attach" });
  writeFileSync(join(bin, "env"), "#!/bin/sh\n# --default-signal\n");
  assert.deepEqual(networkPrograms(1000, bin), { pasta: join(bin, "pasta"), mode: "wrap", env: join(bin, "env") });
});

/** Starts `script` (Node) under a supervisor run as user nobody, in the `wrap` way with loopback port `port` reached. */
async function wrapLaunch(script: string, port: number): Promise<{ dir: string; pid: number; uid: number }> {
  const dir = realpathSync(tempDir("aa-net-wrap-"));
  removed.push(dir);
  chmodSync(dir, 0o777);
  mkdirSync(join(dir, "res"), { mode: 0o755 });
  const resolv = resolvConf(join(dir, "res"));
  const uid = Number(execFileSync("id", ["-u", "nobody"], { encoding: "utf8" }));
  const gid = Number(execFileSync("id", ["-g", "nobody"], { encoding: "utf8" }));
  const inner = [bwrap!, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--ro-bind", resolv, "/etc/resolv.conf", "--unshare-pid", "--new-session", "--die-with-parent", "--cap-drop", "ALL", "--json-status-fd", "3", "--", process.execPath, "-e", script];
  const network = { pasta: pasta!, mode: "wrap" as const, ports: [port], resolv, env: findProgram("env")!, ...(findProgram("setpriv") ? { setpriv: findProgram("setpriv")! } : {}) };
  const spec = { argv: networkArgv(network, inner, 4, uid, gid), cwd: dir, env: { PATH: process.env.PATH ?? "" }, sandboxed: true, lang: "en", bindSources: [], network };
  const sup = spawn("runuser", ["-u", "nobody", "--", process.execPath, supervisorScript, dir], { stdio: ["pipe", "ignore", "inherit"], cwd: dir });
  sup.stdin!.end(JSON.stringify(spec));
  kit.cleanups.push(() => stopGroup(dir, 1000));
  const pid = await until(() => existsSync(join(dir, "pid.json")) && (JSON.parse(readFileSync(join(dir, "pid.json"), "utf8")) as { pgid: number }).pgid, 20_000, "pid.json");
  return { dir, pid, uid };
}

const exitOf = (dir: string) => until(() => existsSync(join(dir, "exit.json")) && (JSON.parse(readFileSync(join(dir, "exit.json"), "utf8")) as Record<string, unknown>), 20_000, "exit.json");
const wrapSkip = noPasta || process.getuid?.() !== 0 ? "needs root (to start the supervisor as nobody) and pasta" : false;

test("issue 26 r33 F33a-1 (the wrap way, an ordinary user): pasta runs bwrap; the supervisor records the agent's process by the computer's number, its exit code comes back, DNS goes to pasta's forwarding address", { skip: wrapSkip }, async () => {
  const b = await sayer("B: named");
  const script = `const net=require("net"),fs=require("fs");const s=net.connect(${b.port},"127.0.0.1");let d="";s.on("data",x=>d+=x);s.on("end",()=>{console.log(JSON.stringify({uid:process.getuid(),b:d,resolv:fs.readFileSync("/etc/resolv.conf","utf8").trim().split("\\n").pop()}));setTimeout(()=>process.exit(7),1500)});s.on("error",e=>{console.log(e.code);process.exit(3)});`;
  const { dir, pid, uid } = await wrapLaunch(script, b.port);
  // The recorded group is the agent's process on this computer (not pasta's, not bwrap's number inside pasta).
  assert.match(readFileSync(`/proc/${pid}/cmdline`, "utf8"), /node/);
  // bwrap reports its child's number before the child's setsid() (--new-session): the group is the child's soon after
  // (a direct read failed once on a loaded machine, 8804 !== 8812).
  const pgid = () => Number(/^NSpgid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
  await until(() => pgid() === pid, 5_000, `the agent's own process group (${pgid()})`);
  assert.deepEqual(await exitOf(dir), { code: 7, signal: null, error: null });
  assert.deepEqual(JSON.parse(readFileSync(join(dir, "stdout"), "utf8").trim()), { uid, b: "B: named", resolv: `nameserver ${sandboxDnsAddress}` });
});

test("issue 26 r33 F33a-1 (the wrap way): pasta ended under a running agent (it answers 0 then) is recorded as the agent killed, never as its success", { skip: wrapSkip }, async () => {
  const { dir, pid } = await wrapLaunch("setTimeout(() => {}, 60000)", 9);
  const bwrapPid = Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
  const pastaPid = Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${bwrapPid}/status`, "utf8"))?.[1]);
  assert.match(readFileSync(`/proc/${pastaPid}/comm`, "utf8"), /^pas(ta|st)/);
  process.kill(pastaPid, "SIGTERM");
  assert.deepEqual(await exitOf(dir), { code: null, signal: "SIGKILL", error: null });
});

/**
 * Starts `sh -c script` in a root (`attach`) launch under the real supervisor, in folder `dir` (bound writable): bwrap
 * makes the network namespace and waits; the supervisor joins `pastaPath` (default: the real pasta) and lets it go.
 * `extra` goes into bwrap's arguments (a setup failure).
 */
function attachLaunch(script: string, extra: string[] = [], pastaPath = pasta!): { dir: string; done: Promise<Record<string, unknown>> } {
  const dir = realpathSync(tempDir("aa-net-attach-"));
  removed.push(dir);
  mkdirSync(join(dir, "res"));
  const resolv = resolvConf(join(dir, "res"));
  const inner = [bwrap!, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--bind", dir, dir, ...extra, "--unshare-pid", "--new-session", "--die-with-parent", "--cap-drop", "ALL", "--json-status-fd", "3", "--chdir", dir, "--", "sh", "-c", script];
  const network = { pasta: pastaPath, mode: "attach" as const, ports: [], resolv, ...(findProgram("setpriv") ? { setpriv: findProgram("setpriv")! } : {}) };
  const spec = { argv: networkArgv(network, inner, 4, 0, 0), cwd: dir, env: { PATH: process.env.PATH ?? "" }, sandboxed: true, lang: "en", bindSources: [], network };
  const sup = spawn(process.execPath, [supervisorScript, dir], { stdio: ["pipe", "ignore", "inherit"], cwd: dir });
  sup.stdin!.end(JSON.stringify(spec));
  // A test that fails midway leaves no sandbox running.
  kit.cleanups.push(() => stopGroup(dir, 1000));
  return { dir, done: exitOf(dir) };
}

/** The pasta processes whose pid file lies in `dir` (left behind by a launch there). */
function pastasIn(dir: string): number[] {
  return readdirSync("/proc").filter((p) => /^\d+$/.test(p)).filter((p) => {
    try {
      return readFileSync(`/proc/${p}/cmdline`, "utf8").includes(dir);
    } catch {
      return false;
    }
  }).map(Number);
}

const attachSkip = noPasta || process.getuid?.() !== 0 ? "needs root (the attach way) and pasta" : false;

test("issue 26 r33 (the round-39 review, R39-1, R39-4): a root launch stopped while pasta joins never starts its agent, and no pasta is left", { skip: attachSkip }, async () => {
  const { dir, done } = attachLaunch("touch started; sleep 30");
  await until(() => existsSync(join(dir, "pid.json")), 20_000, "pid.json");
  await stopGroup(dir, 2000);
  const exit = await done;
  assert.equal(exit.error, null);
  assert.ok(exit.signal === "SIGTERM" || exit.signal === "SIGKILL", JSON.stringify(exit));
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(existsSync(join(dir, "started")), false, "the agent never started");
  await until(() => pastasIn(dir).length === 0, 5_000, "no pasta left");
});

test("issue 26 r33 (R39-1): a root launch's recorded group becomes the agent's own once pasta has joined, so a stop gives the agent its SIGTERM", { skip: attachSkip }, async () => {
  const { dir, done } = attachLaunch("trap 'echo term > got; exit 3' TERM; touch started; while :; do sleep 0.1; done");
  await until(() => existsSync(join(dir, "started")), 20_000, "the agent started");
  const pid = await until(() => {
    const p = JSON.parse(readFileSync(join(dir, "pid.json"), "utf8")) as { pgid: number };
    // bwrap's own group first; then its child's, which leads a group of its own.
    const parent = /^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${p.pgid}/status`, "utf8"))?.[1];
    return readFileSync(`/proc/${parent}/comm`, "utf8").trim() === "bwrap" && /^NSpgid:\s+(\d+)/m.exec(readFileSync(`/proc/${p.pgid}/status`, "utf8"))?.[1] === String(p.pgid) && p.pgid;
  }, 10_000, "the agent's own group recorded");
  assert.ok(pid > 1);
  await stopGroup(dir, 5000);
  assert.deepEqual(await done, { code: 3, signal: null, error: null });
  assert.equal(readFileSync(join(dir, "got"), "utf8"), "term\n");
  await until(() => pastasIn(dir).length === 0, 5_000, "no pasta left");
});

test("issue 26 r33 (R39-3): bwrap's own setup failure while pasta joins is a setup failure (started again), not a network one", { skip: attachSkip }, async () => {
  for (let i = 0; i < 3; i++) {
    const { dir, done } = attachLaunch("touch started", ["--ro-bind", "/nonexistent-aa-r39", "/mnt/aa-r39"]);
    assert.deepEqual(await done, { code: 1, signal: null, error: null, setupFailed: true });
    await until(() => pastasIn(dir).length === 0, 5_000, "no pasta left");
  }
});

test("issue 26 r33: a pasta that cannot join ends the launch before its agent runs, saying why", { skip: attachSkip }, async () => {
  const bin = realpathSync(tempDir("aa-net-fakepasta-"));
  removed.push(bin);
  writeFileSync(join(bin, "pasta"), "#!/bin/sh\necho \"Couldn't open tap device\" >&2\nexit 1\n");
  chmodSync(join(bin, "pasta"), 0o755);
  const { dir, done } = attachLaunch("touch started", [], join(bin, "pasta"));
  const exit = await done;
  assert.deepEqual(exit, { code: 127, signal: null, error: "the sandbox's network could not be set up (pasta: Couldn't open tap device); the agent was not started. \"network\": \"host\" in the agent's rules.json entry gives it the computer's network instead (docs/guide/sandbox.md)" });
  assert.equal(existsSync(join(dir, "started")), false);
});

test("issue 26 r33 (R39-2, the wrap way): the agent ends with its supervisor (pasta runs with a parent-death signal)", { skip: wrapSkip || (findProgram("setpriv") ? false : "setpriv missing") }, async () => {
  const { dir, pid } = await wrapLaunch("setTimeout(() => {}, 60000)", 9);
  const supervisor = (JSON.parse(readFileSync(join(dir, "pid.json"), "utf8")) as { supervisor: number }).supervisor;
  process.kill(supervisor, "SIGKILL");
  await until(() => !existsSync(`/proc/${pid}`) || /^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8")), 10_000, "the agent gone");
  await until(() => pastasIn(dir).length === 0, 5_000, "no pasta left");
});

test("issue 26 round 39, F39a-4 (reported case: a passed variable's text named the hub's URL): the hub's own port is never forwarded, named or found", { skip: noPasta }, () => {
  const folder = realpathSync(tempDir("aa-net-hubport-"));
  removed.push(folder);
  const env = { MYSVC_A: "http://127.0.0.1:5555/x", MYSVC_C: "see http://localhost:18739/v1 for the hub" };
  const got = sandboxNetwork([18739, 6000], env, folder, 0, process.env.PATH ?? "", loopbackPortsIn({ hub: "http://127.0.0.1:18739" }));
  assert.ok("network" in got);
  assert.deepEqual(got.network.ports, [5555, 6000]);
});

test("issue 26 r33 (the round-39 review, R39-10): the wrap way with the worker's own command line (sandboxArgv): the folders bound by descriptor pass through pasta and env, the agent writes its cwd", { skip: wrapSkip }, async () => {
  const dir = realpathSync(tempDir("aa-net-wrapfd-"));
  const hidden = realpathSync(tempDir("aa-net-hidden-"));
  removed.push(dir, hidden);
  chmodSync(dir, 0o777);
  writeFileSync(join(hidden, "secret"), "no");
  mkdirSync(join(dir, "res"), { mode: 0o755 });
  const network = { pasta: pasta!, mode: "wrap" as const, ports: [], resolv: resolvConf(join(dir, "res")), env: findProgram("env")!, ...(findProgram("setpriv") ? { setpriv: findProgram("setpriv")! } : {}) };
  const script = `const fs=require("fs");let s;try{s=fs.readFileSync(${JSON.stringify(join(hidden, "secret"))},"utf8")}catch(e){s=e.code}fs.writeFileSync("wrote","yes");console.log(JSON.stringify({secret:s,resolv:fs.readFileSync("/etc/resolv.conf","utf8").trim().split("\\n").pop()}))`;
  const launch = sandboxArgv({ bwrap: bwrap!, hide: hidden, show: [], cwd: dir, writable: [dir], network }, [process.execPath, "-e", script]);
  assert.deepEqual(launch.sources, [network.resolv, dir]);
  const spec = { argv: launch.argv, cwd: dir, env: { PATH: process.env.PATH ?? "" }, sandboxed: true, lang: "en", bindSources: launch.sources, network };
  const sup = spawn("runuser", ["-u", "nobody", "--", process.execPath, supervisorScript, dir], { stdio: ["pipe", "ignore", "inherit"], cwd: dir });
  sup.stdin!.end(JSON.stringify(spec));
  assert.deepEqual(await exitOf(dir), { code: 0, signal: null, error: null });
  assert.equal(readFileSync(join(dir, "wrote"), "utf8"), "yes");
  assert.deepEqual(JSON.parse(readFileSync(join(dir, "stdout"), "utf8").trim().split("\n").pop()!), { secret: "ENOENT", resolv: `nameserver ${sandboxDnsAddress}` });
});
