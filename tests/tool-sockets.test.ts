/**
 * Who can reach the sockets of the tool host and of the agents' tool bridge (issue 26, findings 1 and 14): a real hub,
 * a real worker, real `command` agents in real bubblewrap, real service plugins (the example hello-service and small
 * ones written here), and attackers that do what an agent or a plugin could.
 *
 * - A service plugin's socket is inside the hub's home, which every sandbox hides: a sandboxed agent whose rule offers
 *   no tools reaches it neither by its path nor by scanning /tmp and the home (the reported case: it called `Execute`
 *   of a plugin set to `deny`, which ran with no audit fact); nor does another plugin's sandbox, a service's included
 *   (each sees only its own socket's folder); a home too deep for a socket address still gets its services.
 * - A run's tools socket answers only its own run's processes: an agent with `"sandbox": false` that finds another
 *   run's socket gets nothing from it, by raw MCP, by answering the proof as the relay does, through the relay, or
 *   through a link — while each run's own agent is served.
 */
import { test, afterEach } from "node:test";
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { baseRules, engine, engineUnderTmp, hubFixture, tempDir, until, type Fixture } from "./helpers.js";
import { engineBinds, examples, probeBwrap, processesIn } from "./tools-helpers.js";
import { callFacts, streamCalls } from "./tool-calls-helpers.js";
import { Worker } from "../src/worker/worker.js";
import { ToolHost, ToolRegistry } from "../src/tools/index.js";
import type { State } from "../src/protocol/responses.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const bwrapWorks = (await probeBwrap("bwrap")).ok;
const noSandbox = bwrapWorks ? false : "bubblewrap cannot make a sandbox here";

/** Where a module of the engine's node_modules is, for scripts written here (agents and plugins import by path). */
const engineModule = (name: string) => JSON.stringify(join(engine, "node_modules", name));

/**
 * The unix socket paths process `pid` listens on, as bound (/proc/net/unix: the listening sockets among its open
 * files). These are what a service plugin made of CORLINMAN_PLUGIN_ADDR.
 */
function listeningPaths(pid: number): string[] {
  const held = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) held.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  const out: string[] = [];
  for (const line of readFileSync("/proc/net/unix", "utf8").split("\n").slice(1)) {
    const cols = line.trim().split(/\s+/);
    // Flags 00010000: a listening socket; Inode is column 7, the path column 8.
    if (cols.length >= 8 && cols[3] === "00010000" && held.has(cols[6]!)) out.push(cols.slice(7).join(" "));
  }
  return out.sort();
}

/** Installs hello-service in `plugins` with its script by absolute path (its .proto is found from the example's folder). */
function installHelloService(plugins: string): string {
  const dir = join(plugins, "hello-service");
  mkdirSync(dir, { recursive: true });
  const main = join(examples, "hello-service", "main.mjs");
  writeFileSync(join(dir, "manifest.toml"), readFileSync(join(examples, "hello-service", "manifest.toml"), "utf8").replace('args = ["main.mjs"]', `args = [${JSON.stringify(main)}]`));
  return dir;
}

/**
 * What every attacker script here starts with: `found(roots)` lists the unix sockets under `roots` (links not
 * followed, a bounded walk), `execute(path)` calls PluginBridge.Execute of hello-service's `greet` on a socket and
 * answers the first event it got (or the error), `reach(path)` answers whether a unix connect succeeded.
 */
const attackerKit = String.raw`
import { readdirSync, lstatSync } from "node:fs";
import { join } from "node:path";
import { connect } from "node:net";
import { createRequire } from "node:module";
const need = createRequire(import.meta.url);
const grpc = need(GRPC);
const protoLoader = need(PROTO_LOADER);
const def = protoLoader.loadSync(PROTO, { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true });
const { PluginBridge } = grpc.loadPackageDefinition(def).corlinman.v1;
export function found(roots, depth = 6) {
  const out = [];
  let budget = 20000;
  const walk = (dir, d) => {
    let names = [];
    try { names = readdirSync(dir); } catch { return; }
    for (const n of names) {
      if (--budget < 0) return;
      const p = join(dir, n);
      let st;
      try { st = lstatSync(p); } catch { continue; }
      if (st.isSocket()) out.push(p);
      else if (st.isDirectory() && d < depth && n !== "node_modules" && n !== ".git") walk(p, d + 1);
    }
  };
  for (const r of roots) walk(r, 0);
  return out.sort();
}
export function execute(path) {
  return new Promise((resolve) => {
    const client = new PluginBridge("unix:" + path, grpc.credentials.createInsecure());
    const stream = client.Execute({ call_id: "mallory", plugin: "hello-service", tool: "greet", args_json: Buffer.from('{"name":"Mallory"}'), session_key: "mallory" }, { deadline: Date.now() + 3000 });
    const done = (v) => { stream.cancel(); client.close(); resolve(v); };
    stream.on("data", (ev) => done(ev.kind === "result" ? "result " + ev.result.result_json.toString() : ev.kind));
    stream.on("error", (e) => done("error " + (e.code === 14 ? "unavailable" : e.code)));
    stream.on("end", () => done("end"));
  });
}
export function reach(path) {
  return new Promise((resolve) => {
    const s = connect(path);
    s.once("connect", () => { s.destroy(); resolve(true); });
    s.once("error", () => resolve(false));
  });
}
`;

/** `attackerKit` with its module paths filled in, written as `<dir>/kit.mjs`. */
function writeKit(dir: string): void {
  writeFileSync(join(dir, "kit.mjs"), attackerKit
    .replace("GRPC", engineModule("@grpc/grpc-js"))
    .replace("PROTO_LOADER", engineModule("@grpc/proto-loader"))
    .replace("PROTO", JSON.stringify(join(engine, "src", "tools", "plugin-bridge.proto"))));
}

/** A command agent's script that lists the tools its run offers (through AGENT_AUTOLOOP_TOOLS_MCP) and ends. */
function listerScript(): string {
  return [
    `import { Client } from ${engineModule("@modelcontextprotocol/sdk/dist/esm/client/index.js")};`,
    `import { StdioClientTransport } from ${engineModule("@modelcontextprotocol/sdk/dist/esm/client/stdio.js")};`,
    `const [command, ...args] = JSON.parse(process.env.AGENT_AUTOLOOP_TOOLS_MCP);`,
    `const client = new Client({ name: "lister", version: "1" });`,
    `await client.connect(new StdioClientTransport({ command, args }));`,
    `const { tools } = await client.listTools();`,
    `console.log("Done: " + tools.map((t) => t.name).join(","));`,
    `await client.close();`,
  ].join("\n");
}

/** Posts an event and waits until the run it started (the newest) is `state`; answers that run. */
async function runOf(f: Fixture, source: string, key: string, id: string, type: string, state: string, ms = 60_000): Promise<State["runs"][number]> {
  const before = (await f.state()).runs.length;
  const posted = await f.call("POST", "/v1/events", key, { id, type, subject: id });
  assert.equal(posted.status, 200, JSON.stringify(posted.body));
  return until(async () => {
    const s = await f.state();
    return s.runs.length > before && s.runs[0]?.state === state && s.runs[0];
  }, ms, `the run of ${id} (from ${source}) to be ${state}`);
}

test("a sandboxed agent whose rule offers no tools cannot reach a service plugin's socket: not by its path, not by scanning /tmp and the homes; nothing runs, nothing is recorded", { skip: noSandbox }, async () => {
  const project = tempDir("aa-sock-project-");
  cleanups.push(() => rmSync(project, { recursive: true, force: true }));
  writeKit(project);
  writeFileSync(join(project, "lister.mjs"), listerScript());
  const attacker = join(project, "mallory.mjs");
  const f = await hubFixture({
    ...baseRules,
    // hello-service is denied: no call of it may run, and every call the hub decides is a fact.
    approvals: [{ plugin: "hello-service", mode: "deny" }],
    agents: {
      ...baseRules.agents,
      lister: { worker: "w1", use: "command", command: ["node", join(project, "lister.mjs")] },
      mallory: { worker: "w1", use: "command", command: ["node", attacker] },
    },
    rules: [
      { name: "starts", when: { source: "shop", types: ["alert.*"] }, to: "lister", cwd: project, tools: ["hello-service.*"] },
      { name: "probes", when: { source: "crm", types: ["ticket.*"] }, to: "mallory", cwd: project },
    ],
  });
  cleanups.push(() => f.close());
  const serviceDir = installHelloService(f.home.plugins);
  const w = new Worker({ url: f.url, key: f.keys.worker, name: "w1", capacity: 2, home: f.home, lang: "en" });
  cleanups.push(() => w.stop());
  void w.run();

  // A run that offers tools makes the worker's tool host, which starts hello-service and keeps it running.
  // Denied whole, it is offered none of them (issue 26 round 9: never listed for an agent); the host starts all the same.
  const listed = await runOf(f, "shop", f.keys.source, "start-1", "alert.x", "done");
  assert.equal(listed.summary, "Done:");
  const pid = await until(() => processesIn(serviceDir)[0], 20_000, "hello-service to run");
  const ours = await until(() => { const p = listeningPaths(pid); return p.length > 0 && p; }, 20_000, "hello-service's socket");
  assert.equal(ours.length, 1);

  // The attacker knows the socket's path, and where the tool host kept its sockets before (<tmp>/aa-tools-<pid>/),
  // and looks through /tmp, the hub's home and the user's home for any other.
  const oldPath = join("/tmp", `aa-tools-${process.pid}`, "hello-service.sock");
  writeFileSync(attacker, [
    `import { homedir } from "node:os";`,
    `import { found, execute } from "./kit.mjs";`,
    `const known = ${JSON.stringify([...ours, oldPath])};`,
    `const scanned = found(["/tmp", ${JSON.stringify(f.home.dir)}]).concat(found([homedir()], 3));`,
    // Every socket of this hub's pid or home the scan found is dialled too (others' are only listed).
    `const mine = scanned.filter((p) => p.includes(${JSON.stringify(`aa-tools-${process.pid}`)}) || p.startsWith(${JSON.stringify(f.home.dir)}));`,
    `const answered = [];`,
    `for (const p of [...known, ...mine]) { const r = await execute(p); if (!r.startsWith("error")) answered.push(p + " " + r); }`,
    `console.log("Done: " + JSON.stringify({ answered, seen: scanned.filter((p) => ${JSON.stringify(ours)}.includes(p) || p.startsWith(${JSON.stringify(f.home.dir)})) }));`,
  ].join("\n"));
  const probe = await runOf(f, "crm", f.keys.source2, "probe-1", "ticket.x", "done");
  assert.equal(probe.summary, 'Done: {"answered":[],"seen":[]}');
  // No call of the denied plugin reached the hub, and the service is still ours alone.
  assert.deepEqual(await streamCalls(f), []);
  assert.deepEqual(listeningPaths(pid), ours);
  assert.ok(ours[0]!.startsWith(join(f.home.dir, "sockets") + "/"), `the service's socket is inside the home: ${ours[0]}`);
});

/**
 * A sandboxed service plugin in node whose tool `probe` tells what it can reach: its own address, the unix sockets a
 * scan of `/tmp`, `/run`, `/workspace`, the home and `/proc/1/root` finds, and which of `arguments.targets` (and the
 * scanned ones) a connect reaches.
 */
function proberService(): string {
  return [
    `import { found, reach } from "./kit.mjs";`,
    `import { createRequire } from "node:module";`,
    `const need = createRequire(import.meta.url);`,
    `const grpc = need(${engineModule("@grpc/grpc-js")});`,
    `const protoLoader = need(${engineModule("@grpc/proto-loader")});`,
    `const def = protoLoader.loadSync(${JSON.stringify(join(engine, "src", "tools", "plugin-bridge.proto"))}, { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true });`,
    `const { PluginBridge } = grpc.loadPackageDefinition(def).corlinman.v1;`,
    `const server = new grpc.Server();`,
    `server.addService(PluginBridge.service, { Execute: async (call) => {`,
    `  const args = JSON.parse(call.request.args_json.toString() || "{}");`,
    `  const scanned = found(["/tmp", "/run", "/workspace", "/proc/1/root/tmp", ...(args.roots ?? [])]);`,
    `  const reached = [];`,
    `  for (const p of [...(args.targets ?? []), ...scanned]) if (await reach(p)) reached.push(p);`,
    `  call.write({ result: { call_id: call.request.call_id, result_json: Buffer.from(JSON.stringify({ addr: process.env.CORLINMAN_PLUGIN_ADDR, scanned, reached })), duration_ms: 0 } });`,
    `  call.end();`,
    `} });`,
    `server.bindAsync("unix:" + process.env.CORLINMAN_PLUGIN_ADDR, grpc.ServerCredentials.createInsecure(), (e) => { if (e) { console.error(e.message); process.exit(1); } });`,
  ].join("\n");
}

/** A sandboxed sync plugin in node whose tool `probe` answers as the prober service's. */
function proberSync(): string {
  return [
    `import { found, reach } from "./kit.mjs";`,
    `import { createInterface } from "node:readline";`,
    `for await (const line of createInterface({ input: process.stdin })) {`,
    `  const req = JSON.parse(line);`,
    `  const args = req.params.arguments ?? {};`,
    `  const scanned = found(["/tmp", "/run", "/workspace", "/proc/1/root/tmp", ...(args.roots ?? [])]);`,
    `  const reached = [];`,
    `  for (const p of [...(args.targets ?? []), ...scanned]) if (await reach(p)) reached.push(p);`,
    `  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: req.id, result: { addr: process.env.CORLINMAN_PLUGIN_ADDR ?? null, scanned, reached } }) + "\\n");`,
    `  break;`,
    `}`,
  ].join("\n");
}

/**
 * A prober plugin `<plugins>/<name>` (`type` service or sync), sandboxed with the host's network: its script and the
 * attacker kit in its folder (the sandbox's `/tmp` is its own; the folder is `/workspace`).
 */
function installProber(plugins: string, name: string, type: "service" | "sync"): void {
  const dir = join(plugins, name);
  mkdirSync(dir, { recursive: true });
  writeKit(dir);
  writeFileSync(join(dir, "main.mjs"), type === "service" ? proberService() : proberSync());
  writeFileSync(join(dir, "manifest.toml"), [
    `name = "${name}"`, `version = "0.1.0"`, `plugin_type = "${type}"`, "",
    "[entry_point]", `command = "node"`, `args = ["main.mjs"]`, "",
    // The kit loads the engine's modules by path: bound read-only (the sandbox root shows the system folders only).
    "[sandbox]", `network = "host"`, `binds = [${engineBinds}]`, "",
    "[[capabilities.tools]]", `name = "probe"`,
  ].join("\n"));
}

/** A tool host over `plugins` as the worker makes it: the home hidden from every sandbox, sockets where it decides. */
function workerLikeHost(plugins: string, home: string): { host: ToolHost; registry: ToolRegistry; logs: string[] } {
  const registry = new ToolRegistry([{ dir: plugins, origin: "home" }], "en");
  registry.rescan();
  const logs: string[] = [];
  const host = new ToolHost(registry, { lang: "en", hiddenPaths: [home], log: (s, l) => logs.push(`${s} ${l}`) });
  return { host, registry, logs };
}

test("another plugin's sandbox cannot reach a service's socket: a sandboxed service sees only its own, a sandboxed sync plugin none", { skip: noSandbox || engineUnderTmp }, async () => {
  const top = tempDir("aa-sock-plugins-");
  cleanups.push(() => rmSync(top, { recursive: true, force: true }));
  const home = join(top, "home");
  const plugins = join(home, "plugins");
  mkdirSync(plugins, { recursive: true });
  const helloDir = installHelloService(plugins);
  installProber(plugins, "prober-svc", "service");
  installProber(plugins, "prober-sync", "sync");
  // What a killed host left (its pid is gone) is removed when the next one makes its folder; a live host's stays.
  const gone = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }).stdout;
  mkdirSync(join(home, "sockets", `${gone}-left`, "1"), { recursive: true });
  mkdirSync(join(home, "sockets", `${process.ppid}-live`), { recursive: true });
  const { host, logs } = workerLikeHost(plugins, home);
  cleanups.push(() => host.close());
  await host.start();
  assert.deepEqual(host.statuses().map((s) => [s.plugin, s.state]).sort(), [["hello-service", "running"], ["prober-svc", "running"]], logs.join("\n"));
  const hello = listeningPaths(processesIn(helloDir)[0]!);
  assert.equal(hello.length, 1);
  const targets = [...hello, join("/tmp", `aa-tools-${process.pid}`, "hello-service.sock")];

  const svc = await host.call("prober-svc.probe", { targets, roots: [home] }, { sessionKey: "s" });
  assert.equal(svc.status, "ok", JSON.stringify(svc));
  const seen = (svc as { result: { addr: string; scanned: string[]; reached: string[] } }).result;
  // Its own socket's folder is all it is given, at a short path of its own; nothing else answers.
  assert.deepEqual(seen, { addr: "/run/corlinman/plugin.sock", scanned: ["/run/corlinman/plugin.sock"], reached: ["/run/corlinman/plugin.sock"] });

  const sync = await host.call("prober-sync.probe", { targets, roots: [home] }, { sessionKey: "s" });
  assert.equal(sync.status, "ok", JSON.stringify(sync));
  assert.deepEqual((sync as { result: unknown }).result, { addr: null, scanned: [], reached: [] });
  assert.ok(hello[0]!.startsWith(join(home, "sockets") + "/"), hello[0]);
  const folders = readdirSync(join(home, "sockets"));
  assert.deepEqual([folders.length, folders.includes(`${process.ppid}-live`), folders.includes(`${gone}-left`)], [2, true, false]);
  assert.match(folders.find((n) => n !== `${process.ppid}-live`)!, new RegExp(`^${process.pid}-\\w{6}$`));
});

test("a home too deep for a socket address still gets its services: the host reaches them through the folder's descriptor", { skip: noSandbox || engineUnderTmp }, async () => {
  const top = tempDir("aa-sock-deep-");
  cleanups.push(() => rmSync(top, { recursive: true, force: true }));
  const home = join(top, "h".repeat(60), "o".repeat(40));
  const plugins = join(home, "plugins");
  mkdirSync(plugins, { recursive: true });
  const helloDir = installHelloService(plugins);
  installProber(plugins, "prober-svc", "service");
  const { host, logs } = workerLikeHost(plugins, home);
  cleanups.push(() => host.close());
  await host.start();
  assert.deepEqual(host.statuses().map((s) => [s.plugin, s.state]).sort(), [["hello-service", "running"], ["prober-svc", "running"]], logs.join("\n"));
  // The socket lies in the home, deeper than a socket address holds: hello-service (no sandbox) was given the path
  // through the host's descriptor of its folder; the sandboxed one its own short path.
  const sockets = readdirSync(join(home, "sockets"));
  assert.equal(sockets.length, 1);
  const hostDir = join(home, "sockets", sockets[0]!);
  assert.ok(Buffer.byteLength(join(hostDir, "1", "plugin.sock")) > 107);
  const said = logs.find((l) => l.startsWith("plugin.hello-service hello-service listening on "));
  assert.match(said ?? "", new RegExp(`^plugin\\.hello-service hello-service listening on /proc/${process.pid}/fd/\\d+/plugin\\.sock$`));
  assert.equal(listeningPaths(processesIn(helloDir)[0]!).length, 1);
  const greet = await host.call("hello-service.greet", { name: "Ada" }, { sessionKey: "s" });
  assert.equal(greet.status === "ok" && JSON.stringify(greet.result), '{"content":"hello, Ada"}');
  const svc = await host.call("prober-svc.probe", {}, { sessionKey: "s" });
  assert.deepEqual(svc.status === "ok" && svc.result, { addr: "/run/corlinman/plugin.sock", scanned: ["/run/corlinman/plugin.sock"], reached: ["/run/corlinman/plugin.sock"] });
  await host.close();
  assert.equal(existsSync(hostDir), false, "the host's socket folder goes with it");
});

/** A sync node plugin `echo` whose tool `say` answers `said <text>`. */
function installEcho(plugins: string): void {
  const dir = join(plugins, "echo");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "main.js"), String.raw`
const rl = require("readline").createInterface({ input: process.stdin });
rl.on("line", (l) => {
  const r = JSON.parse(l);
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: r.id, result: { content: "said " + r.params.arguments.text } }) + "\n");
});
`);
  writeFileSync(join(dir, "manifest.toml"), [
    `name = "echo"`, `version = "0.1.0"`, `plugin_type = "sync"`,
    `[entry_point]`, `command = "node"`, `args = ["main.js"]`,
    `[[capabilities.tools]]`, `name = "say"`,
  ].join("\n") + "\n");
}

test("a run's tools socket answers only its own run's processes: an agent with \"sandbox\": false gets nothing from another run's socket, however it asks", async () => {
  const { project, go, sdk, f } = await victimAndMallory("aa-sock-runs-");
  // The runs' folders, which an agent without a sandbox finds in the home as anyone would.
  const runs = join(f.home.worker, "runs");
  // Victim: lists its tools, waits until the attacker is done, then calls one: its own socket serves it throughout.
  writeFileSync(join(project, "victim.mjs"), [
    `import { existsSync } from "node:fs";`,
    `import { Client } from ${sdk("index.js")};`,
    `import { StdioClientTransport } from ${sdk("stdio.js")};`,
    `const [command, ...args] = JSON.parse(process.env.AGENT_AUTOLOOP_TOOLS_MCP);`,
    `const client = new Client({ name: "victim", version: "1" });`,
    `await client.connect(new StdioClientTransport({ command, args }));`,
    `const { tools } = await client.listTools();`,
    // at most 2 minutes: a test that failed before writing `go` leaves no agent looping (one ran 84 min after a failure)
    `for (let i = 0; i < 2400 && !existsSync(${JSON.stringify(go)}); i++) await new Promise((r) => setTimeout(r, 50));`,
    `const r = await client.callTool({ name: "echo.say", arguments: { text: "victim" } });`,
    `console.log("Done: " + tools.map((t) => t.name).join(",") + " " + r.content[0].text);`,
    `await client.close();`,
  ].join("\n"));
  // Attacker (no sandbox): finds the other run's socket in the home and tries it four ways; then uses its own.
  writeFileSync(join(project, "mallory.mjs"), [
    `import { readdirSync, existsSync, symlinkSync, writeFileSync } from "node:fs";`,
    `import { join } from "node:path";`,
    `import { connect } from "node:net";`,
    `import { Client } from ${sdk("index.js")};`,
    `import { StdioClientTransport } from ${sdk("stdio.js")};`,
    `const [command, ...args] = JSON.parse(process.env.AGENT_AUTOLOOP_TOOLS_MCP);`,
    `const own = args[args.indexOf("--socket") + 1];`,
    `const runs = ${JSON.stringify(runs)};`,
    `const others = readdirSync(runs).map((r) => join(runs, r, "agent", "tools.sock")).filter((p) => p !== own && existsSync(p));`,
    `const lines = (o) => o.map((m) => JSON.stringify({ jsonrpc: "2.0", ...m }) + "\\n").join("");`,
    `const mcp = [{ id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "m", version: "1" } } }, { method: "notifications/initialized" }, { id: 2, method: "tools/list" }, { id: 3, method: "tools/call", params: { name: "echo.say", arguments: { text: "mallory" } } }];`,
    // Raw: MCP straight away. Mimic: whatever the server sends first is answered as the relay would, its proof included.
    `function talk(path, mimic) { return new Promise((resolve) => {`,
    `  const got = []; let buf = ""; const s = connect(path);`,
    `  s.on("connect", () => { if (!mimic) s.write(lines(mcp)); });`,
    `  s.on("data", (d) => { buf += d; let i; while ((i = buf.indexOf("\\n")) >= 0) { const m = JSON.parse(buf.slice(0, i)); buf = buf.slice(i + 1); got.push(m);`,
    `    if (mimic && m.method && m.params?.challenge) { process.title = "agent-autoloop tools mcp proof " + m.params.challenge; s.write(lines([{ method: m.method.replace("prove", "proved") }]) + lines(mcp)); } } });`,
    `  s.on("error", () => {}); s.on("close", () => resolve(got));`,
    `  setTimeout(() => { s.destroy(); }, 4000);`,
    `}); }`,
    `const served = (got) => got.filter((m) => m.id === 2 || m.id === 3).map((m) => m.error ? "error" : JSON.stringify(m.result).slice(0, 40));`,
    `async function relay(path) { const c = new Client({ name: "m", version: "1" }); try { await c.connect(new StdioClientTransport({ command, args: [...args.slice(0, args.indexOf("--socket") + 1), path, ...args.slice(args.indexOf("--socket") + 2)] })); const r = await c.listTools(); return "listed " + r.tools.length; } catch (e) { return "refused: " + e.message; } finally { await c.close().catch(() => {}); } }`,
    `const out = [];`,
    `for (const p of others) {`,
    `  const link = join(${JSON.stringify(project)}, "link.sock"); symlinkSync(p, link);`,
    `  out.push({ raw: served(await talk(p, false)), mimic: served(await talk(p, true)), relay: await relay(p), link: await relay(link) });`,
    `}`,
    `const c = new Client({ name: "mallory", version: "1" });`,
    `await c.connect(new StdioClientTransport({ command, args }));`,
    `const mine = await c.callTool({ name: "echo.say", arguments: { text: "mallory" } });`,
    `await c.close();`,
    `writeFileSync(${JSON.stringify(go)}, "");`,
    `console.log("Done: " + JSON.stringify({ others: others.length, out, mine: mine.content[0].text }));`,
  ].join("\n"));
  const attack = await attackWhileVictimWaits(f, runs);
  const refusal = "MCP error -32603: this run's tools answer only its own agent: the process that connected is not one of the run's";
  assert.equal(attack.summary, `Done: ${JSON.stringify({ others: 1, out: [{ raw: [], mimic: [], relay: `refused: ${refusal}`, link: `refused: ${refusal}` }], mine: "said mallory" })}`);
  const victim = await until(async () => (await f.state()).runs.find((r) => r.state === "done" && r.summary?.startsWith("Done: echo.say")), 30_000, "the victim's run");
  assert.equal(victim.summary, "Done: echo.say said victim");
  // Each run's calls are its own agent's: one each.
  assert.deepEqual((await callFacts(f, victim.id)).map((c) => [c.tool, c.status]), [["echo.say", "ok"]]);
  assert.deepEqual((await callFacts(f, attack.id)).map((c) => [c.tool, c.status]), [["echo.say", "ok"]]);
});

/**
 * The two runs of the socket attacks: a hub whose rule `victims` (source shop) starts the agent `victim`
 * (`<project>/victim.mjs`, sandboxed) and whose rule `attacks` (source crm) starts `mallory` (`<project>/mallory.mjs`,
 * `"sandbox": false`), both offered echo's tools; `go` is the file mallory writes when done, `sdk` an MCP client module.
 */
async function victimAndMallory(prefix: string): Promise<{ project: string; go: string; sdk: (p: string) => string; f: Fixture }> {
  const project = tempDir(prefix);
  cleanups.push(() => rmSync(project, { recursive: true, force: true }));
  const go = join(project, "go");
  const sdk = (p: string) => engineModule(`@modelcontextprotocol/sdk/dist/esm/client/${p}`);
  const f = await hubFixture({
    ...baseRules,
    approvals: [{ plugin: "echo", mode: "auto" }],
    agents: {
      ...baseRules.agents,
      victim: { worker: "w1", use: "command", command: ["node", join(project, "victim.mjs")] },
      mallory: { worker: "w1", use: "command", command: ["node", join(project, "mallory.mjs")], sandbox: false },
    },
    rules: [
      { name: "victims", when: { source: "shop", types: ["alert.*"] }, to: "victim", cwd: project, tools: ["echo.*"] },
      { name: "attacks", when: { source: "crm", types: ["ticket.*"] }, to: "mallory", cwd: project, tools: ["echo.*"] },
    ],
  });
  cleanups.push(() => f.close());
  return { project, go, sdk, f };
}

/**
 * Installs echo, answers its approval cards "always allow" while the test runs, starts the worker, starts the victim's
 * run and waits for its tools socket; then starts mallory's run. @returns mallory's run once done.
 */
async function attackWhileVictimWaits(f: Fixture, runs: string) {
  installEcho(f.home.plugins);
  // The owner lets echo through for good at its first use (a card; "always allow").
  let answering = true;
  cleanups.push(() => {
    answering = false;
  });
  void (async () => {
    while (answering) {
      const open = (await f.state().catch(() => null))?.cards.filter((c) => c.state === "open" && c.title === "Allow echo.say?") ?? [];
      for (const c of open) await f.call("POST", `/v1/cards/${c.id}/answer`, f.keys.owner, { choice: 1 });
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const w = new Worker({ url: f.url, key: f.keys.worker, name: "w1", capacity: 2, home: f.home, lang: "en" });
  cleanups.push(() => w.stop());
  void w.run();
  const posted = await f.call("POST", "/v1/events", f.keys.source, { id: "victim-1", type: "alert.x", subject: "v" });
  assert.equal(posted.status, 200);
  await until(() => existsSync(runs) && readdirSync(runs).some((r) => existsSync(join(runs, r, "agent", "tools.sock"))), 20_000, "the victim's socket");
  const attack = await runOf(f, "crm", f.keys.source2, "attack-1", "ticket.x", "done", 90_000);
  return attack;
}

/** nsjoin.py <pid> <command...>: joins the pid namespace of <pid> (its user namespace first when not root), orphans a
 * child there — re-parented to that namespace's init — and execs <command> in it. */
const nsjoinPy = `import ctypes, fcntl, os, sys
libc = ctypes.CDLL(None, use_errno=True)
pfd = os.open(f"/proc/{sys.argv[1]}/ns/pid", os.O_RDONLY)
if os.geteuid() != 0 and libc.setns(fcntl.ioctl(pfd, 0xb701), 0x10000000) != 0:
    sys.exit("setns user: " + os.strerror(ctypes.get_errno()))
if libc.setns(pfd, 0x20000000) != 0:
    sys.exit("setns pid: " + os.strerror(ctypes.get_errno()))
if os.fork() == 0:
    if os.fork() == 0:
        import time; time.sleep(0.3)
        os.execvp(sys.argv[2], sys.argv[2:])
    os._exit(0)
os.wait()
`;

test("issue 26 round 2 #7 (reported case): an agent with \"sandbox\": false that enters another run's pid namespace and orphans a relay there is still turned away, relay or shell", { skip: noSandbox }, async () => {
  const { project, go, sdk, f } = await victimAndMallory("aa-sock-nsjoin-");
  const runs = join(f.home.worker, "runs");
  writeFileSync(join(project, "nsjoin.py"), nsjoinPy);
  // Victim (sandboxed): uses its tools, waits until the attacker is done, then uses them again.
  writeFileSync(join(project, "victim.mjs"), [
    `import { existsSync } from "node:fs";`,
    `import { Client } from ${sdk("index.js")};`,
    `import { StdioClientTransport } from ${sdk("stdio.js")};`,
    `const [command, ...args] = JSON.parse(process.env.AGENT_AUTOLOOP_TOOLS_MCP);`,
    `const client = new Client({ name: "victim", version: "1" });`,
    `await client.connect(new StdioClientTransport({ command, args }));`,
    // at most 2 minutes: a test that failed before writing `go` leaves no agent looping (one ran 84 min after a failure)
    `for (let i = 0; i < 2400 && !existsSync(${JSON.stringify(go)}); i++) await new Promise((r) => setTimeout(r, 50));`,
    `const r = await client.callTool({ name: "echo.say", arguments: { text: "victim" } });`,
    `console.log("Done: " + r.content[0].text);`,
    `await client.close();`,
  ].join("\n"));
  // Attacker (no sandbox): finds a process of the victim in another pid namespace, enters it and orphans there (a) the
  // relay itself, (b) a shell that starts the relay as its child; each talks MCP to the victim's socket through FIFOs.
  writeFileSync(join(project, "mallory.mjs"), [
    `import { readdirSync, readFileSync, readlinkSync, existsSync, writeFileSync } from "node:fs";`,
    `import { execFileSync } from "node:child_process";`,
    `import { join } from "node:path";`,
    `const [node, cli] = JSON.parse(process.env.AGENT_AUTOLOOP_TOOLS_MCP);`,
    `const own = process.env.AGENT_AUTOLOOP_CONTEXT.replace(/\\/agent\\/context\\.json$/, "");`,
    `const runs = ${JSON.stringify(runs)};`,
    `const sock = readdirSync(runs).map((d) => join(runs, d, "agent", "tools.sock")).find((p) => existsSync(p) && !p.startsWith(own));`,
    `const victimRun = sock.match(/runs\\/(\\d+)-/)[1];`,
    `const myNs = readlinkSync("/proc/self/ns/pid");`,
    `let target = null;`,
    `for (const p of readdirSync("/proc").filter((x) => /^\\d+$/.test(x))) {`,
    `  try { if (readFileSync("/proc/" + p + "/environ", "utf8").includes("AGENT_AUTOLOOP_RUN=" + victimRun + "\\0") && readlinkSync("/proc/" + p + "/ns/pid") !== myNs) { target = p; break; } } catch {}`,
    `}`,
    `const msgs = [{ id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } } }, { method: "notifications/initialized", params: {} }, { id: 2, method: "tools/list", params: {} }, { id: 3, method: "tools/call", params: { name: "echo.say", arguments: { text: "mallory via the victim" } } }].map((m) => JSON.stringify({ jsonrpc: "2.0", ...m })).join("\\n") + "\\n";`,
    `const out = {};`,
    `for (const how of ["relay", "shell"]) {`,
    `  const d = join(${JSON.stringify(project)}, how); execFileSync("sh", ["-c", "mkdir -p " + d + " && mkfifo " + d + "/in"]);`,
    `  const relay = node + " " + cli + " tools mcp --socket " + sock + " --lang en < " + d + "/in > " + d + "/out 2>&1";`,
    `  const cmd = how === "relay" ? ["bash", "-c", "exec " + relay] : ["sh", "-c", relay + "; true"];`,
    `  execFileSync("python3", [${JSON.stringify(join(project, "nsjoin.py"))}, target, ...cmd], { stdio: "ignore" });`,
    `  execFileSync("sh", ["-c", "( cat; sleep 6 ) > " + d + "/in"], { input: msgs });`,
    `  const got = readFileSync(d + "/out", "utf8");`,
    `  out[how] = got.includes("answer only its own agent") && !got.includes('"tools":[') ? "turned away" : got.includes('"tools":[') ? "SERVED " + got.slice(0, 120) : "other: " + got.slice(0, 200);`,
    `}`,
    `writeFileSync(${JSON.stringify(go)}, "");`,
    `console.log("Done: " + JSON.stringify({ target: target !== null, out }));`,
  ].join("\n"));
  const attack = await attackWhileVictimWaits(f, runs);
  assert.equal(attack.summary, `Done: ${JSON.stringify({ target: true, out: { relay: "turned away", shell: "turned away" } })}`);
  const victim = await until(async () => (await f.state()).runs.find((r) => r.state === "done" && r.summary?.startsWith("Done: said")), 30_000, "the victim's run");
  assert.equal(victim.summary, "Done: said victim", "the victim's own relay is still served");
  // No call of the victim's run but its own.
  assert.deepEqual((await callFacts(f, victim.id)).map((c) => [c.tool, c.status]), [["echo.say", "ok"]]);
});
