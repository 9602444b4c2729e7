/**
 * The CLI and the home it belongs to (issue 14, items 9 and 10): it finds this home's running hub through the record
 * the hub keeps beside `hub.pid`, checks the home id the hub answers with before it sends any key, never writes the
 * database behind a running hub, and does not take a zombie or a reused pid for a live hub. Also the smaller holes of
 * the same kinds: `add` and its git arguments, built-in plugins, reserved source names, `mcp` on an over-long line,
 * and text from outside printed raw. Every command runs as a real child process of bin/agent-autoloop.js.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync, execFileSync, type ChildProcess } from "node:child_process";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { cliBin, cliEnv, cliHomes, runCli } from "./cli-homes.js";
import { engine, tempDir, until, hubFixture } from "./helpers.js";
import { hashKey, hashText } from "../src/kernel/credentials.js";
import { canonicalJson } from "../src/host/http.js";
import { processAlive, processInfo } from "../src/host/lock.js";
import { fileErrorMessage } from "../src/host/home-files.js";
import { writeFileAtomic } from "../src/host/home.js";

const bin = cliBin;
const homes = cliHomes("aa-cli-home-");
const { root, children } = homes;

const envFor = cliEnv;

const cli = runCli;

/** A new home made by `init`, with `listen` set (nothing listens on port 1) and no local worker or channels. */
function newHome(listen = "127.0.0.1:1"): string {
  return homes.newHome(listen);
}

/** Starts `serve --listen 127.0.0.1:0` on a home as a child process. */
async function serve(home: string): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const child = spawn(process.execPath, [bin, "serve", "--listen", "127.0.0.1:0"], { env: envFor(home), stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const url = (await until(() => /listening on (http:\/\/\S+)/.exec(out)?.[1], 15_000, `the hub to listen (output: ${out})`))!;
  return { child, url, output: () => out };
}

/** Stops a hub with SIGTERM. @returns its exit code, or the signal that ended it. */
async function stop(child: ChildProcess): Promise<number | string | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode ?? child.signalCode;
  child.kill("SIGTERM");
  return new Promise((r) => child.once("exit", (code, signal) => r(code ?? signal)));
}

/** A stranger: an HTTP server that records what it is sent and answers like a hub of `homeId` (or without a home id). */
async function stranger(homeId: string | null): Promise<{ url: string; seen: { path: string; auth: string | null }[]; close(): Promise<void> }> {
  const seen: { path: string; auth: string | null }[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    seen.push({ path: req.url ?? "", auth: req.headers.authorization ?? null });
    req.resume();
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (homeId) headers["x-agent-autoloop-home"] = homeId;
    if (req.url === "/v1/health") res.writeHead(200, headers).end('{"ok":true}');
    else res.writeHead(401, headers).end('{"error":"unknown key"}');
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

const homeIdOf = (home: string) => readFileSync(join(home, "home.id"), "utf8").trim();

test("init makes a random home id; a home made before gets one at its first CLI use", async () => {
  const a = newHome();
  const b = newHome();
  assert.match(homeIdOf(a), /^[A-Za-z0-9_-]{22}$/);
  assert.notEqual(homeIdOf(a), homeIdOf(b));
  rmSync(join(a, "home.id"));
  const r = await cli(a, ["status"]);
  assert.equal(r.code, 1);
  assert.match(homeIdOf(a), /^[A-Za-z0-9_-]{22}$/);
});

test("a hub on --listen 127.0.0.1:0 records its URL and home id beside hub.pid; key new and key remove go through it, and a removed key's held long poll ends at once", async () => {
  const home = newHome();
  const { child, url } = await serve(home);
  const record = JSON.parse(readFileSync(join(home, "hub.json"), "utf8"));
  assert.deepEqual({ pid: record.pid, url: record.url, home: record.home }, { pid: child.pid, url, home: homeIdOf(home) });
  assert.equal(readFileSync(join(home, "hub.pid"), "utf8").split("\n")[0], String(child.pid));
  const health = await fetch(`${url}/v1/health`);
  assert.equal(health.headers.get("x-agent-autoloop-home"), homeIdOf(home));
  const refused = await fetch(`${url}/v1/nothing`);
  assert.equal(refused.headers.get("x-agent-autoloop-home"), homeIdOf(home), "on every answer, refusals too");

  const made = await cli(home, ["key", "new", "channel", "ch1"]);
  assert.equal(made.code, 0, made.err);
  const key = made.out;
  const auth = { authorization: `Bearer ${key}` };
  const first = await fetch(`${url}/v1/cards/next?wait=0`, { headers: auth });
  assert.equal(first.status, 200, "the running hub knows the new key: it was made through the hub, not behind it");
  assert.deepEqual(await first.json(), { card: null });

  const held = fetch(`${url}/v1/cards/next?wait=20`, { headers: auth });
  await new Promise((r) => setTimeout(r, 300)); // let the hub take the poll
  const removed = await cli(home, ["key", "remove", "channel", "ch1"]);
  assert.deepEqual([removed.code, removed.out], [0, "removed"], removed.err);
  const ended = await held;
  assert.equal(ended.status, 401, "the held long poll ends at once, not with 200 after its wait");
  assert.deepEqual(await ended.json(), { error: "unknown key", code: "auth.unknown", params: {} });

  const status = await cli(home, ["status"]);
  assert.equal(status.code, 0, status.err);
  assert.match(status.out, new RegExp(`^hub ${url.replace(/[.]/g, "\\.")} · rules v1`));
  assert.equal(await stop(child), 0);
  assert.equal(existsSync(join(home, "hub.json")), false, "the record goes with the hub");
  assert.equal(existsSync(join(home, "hub.pid")), false);
});

test("the CLI never sends this home's keys to a stranger on the configured address or AGENT_AUTOLOOP_URL", async () => {
  const other = await stranger("another-homes-id-0000x");
  const bare = await stranger(null);
  const home = newHome(other.url.replace("http://", ""));
  const ours = homeIdOf(home);
  try {
    // No hub holds this home's lock, so this home's hub is not running: that comes first (issue 15).
    const otherHome = `agent-autoloop: this home's hub is not running (${home}): the hub at ${other.url} serves another home (another-homes-id-0000x), not this one (${ours}); nothing was sent to it. Start it with agent-autoloop serve`;
    for (const args of [["status"], ["answer", "1", "0"], ["resolve", "1"], ["stop", "1"], ["pause", "r"], ["resume", "r"], ["run", "r"], ["why", "1"]]) {
      const r = await cli(home, args);
      assert.deepEqual([r.code, r.err], [1, otherHome], args.join(" "));
    }
    const viaEnv = await cli(home, ["status"], { AGENT_AUTOLOOP_URL: bare.url });
    assert.equal(viaEnv.code, 1);
    assert.equal(viaEnv.err, `agent-autoloop: the server at ${bare.url} does not say which home it serves, so it is not this home's hub (${ours}, ${home}), or a hub from before home ids (restart it); nothing was sent to it`);
    // No hub of this home runs: keys are made and removed in the home itself, under its lock.
    const made = await cli(home, ["key", "new", "source", "demo"]);
    assert.equal(made.code, 0, made.err);
    assert.deepEqual((await cli(home, ["key", "remove", "source", "demo"])).out, "removed");
    assert.equal(existsSync(join(home, "hub.pid")), false, "the lock is released");

    const mcp = spawn(process.execPath, [bin, "mcp"], { env: envFor(home), stdio: ["pipe", "pipe", "pipe"] });
    children.push(mcp);
    const replies = lines(mcp);
    mcp.stdin!.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } } }) + "\n");
    await replies.next();
    mcp.stdin!.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
    mcp.stdin!.write(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "status", arguments: {} } }) + "\n");
    const call = await replies.next();
    assert.equal(call.result.isError, true);
    assert.equal(call.result.content[0].text, otherHome.replace(/^agent-autoloop: /, ""));
    mcp.stdin!.end();

    assert.deepEqual([...other.seen, ...bare.seen].filter((s) => s.auth !== null), [], "no request carried a key");
    assert.deepEqual([...new Set(other.seen.map((s) => s.path))], ["/v1/health"]);
  } finally {
    await other.close();
    await bare.close();
  }
});

test("issue 15: this home's hub was SIGKILLed and another home's hub answers on its config.json listen: status and doctor say this home's hub is not running, where it was last, and send nothing", async () => {
  const a = newHome();
  const b = newHome();
  const hubA = await serve(a);
  hubA.child.kill("SIGKILL");
  await new Promise((r) => hubA.child.once("exit", r));
  assert.equal(existsSync(join(a, "hub.json")), true, "a SIGKILLed hub leaves its record behind");
  const hubB = await serve(b);
  try {
    const config = JSON.parse(readFileSync(join(a, "config.json"), "utf8"));
    writeFileSync(join(a, "config.json"), JSON.stringify({ ...config, listen: hubB.url.replace("http://", "") }));
    const reason = `last at ${hubA.url} (hub.json); the hub at ${hubB.url} serves another home (${homeIdOf(b)}), not this one (${homeIdOf(a)}); nothing was sent to it`;
    const status = await cli(a, ["status"]);
    assert.deepEqual([status.code, status.err], [1, `agent-autoloop: this home's hub is not running (${a}): ${reason}. Start it with agent-autoloop serve`]);
    const doctor = await cli(a, ["doctor"]);
    assert.equal(doctor.code, 0, doctor.out + doctor.err);
    assert.ok(doctor.out.split("\n").includes(`ok   hub: not running (${reason}); start it with agent-autoloop serve`), doctor.out);
    // Its record gone too, the address alone tells the same.
    rmSync(join(a, "hub.json"));
    const bare = await cli(a, ["status"]);
    assert.deepEqual([bare.code, bare.err], [1, `agent-autoloop: this home's hub is not running (${a}): the hub at ${hubB.url} serves another home (${homeIdOf(b)}), not this one (${homeIdOf(a)}); nothing was sent to it. Start it with agent-autoloop serve`]);
  } finally {
    assert.equal(await stop(hubB.child), 0);
  }
});

/** Reads JSON lines from a child's stdout, one at a time. */
function lines(child: ChildProcess): { next(): Promise<any> } {
  let buf = "";
  const queue: string[] = [];
  let wake: (() => void) | null = null;
  child.stdout!.on("data", (d) => {
    buf += d;
    for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
      queue.push(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
    wake?.();
  });
  child.once("exit", () => wake?.());
  return {
    async next() {
      while (queue.length === 0) {
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the child exited (${child.exitCode ?? child.signalCode}) without answering`);
        await new Promise<void>((r) => (wake = r));
        wake = null;
      }
      return JSON.parse(queue.shift()!);
    },
  };
}

/** A zombie (a child whose parent never reaps it) and that live parent. */
async function zombie(): Promise<{ zombie: number; parent: number; done(): void }> {
  const sh = spawn("sh", ["-c", "sleep 0.2 & echo $!; exec sleep 120"], { stdio: ["ignore", "pipe", "ignore"] });
  children.push(sh);
  let out = "";
  sh.stdout!.on("data", (d) => (out += d));
  const pid = Number(await until(() => /^(\d+)\n/.exec(out)?.[1], 5_000, "the background pid"));
  await until(() => execFileSync("ps", ["-o", "stat=", "-p", String(pid)], { encoding: "utf8" }).trim().startsWith("Z"), 5_000, "the zombie");
  return { zombie: pid, parent: sh.pid!, done: () => sh.kill("SIGKILL") };
}

test("processes are described the same through /proc and through ps (the way on macOS)", async (t) => {
  if (!existsSync("/proc/self/stat")) return t.skip("no /proc here: ps is the only way");
  const z = await zombie();
  try {
    for (const via of ["proc", "ps"] as const) {
      assert.equal(processInfo(z.zombie, via)?.state, "Z", via);
      assert.equal(processAlive(z.zombie, null), false);
      assert.equal(processInfo(2 ** 22 + 12345, via), null, `${via}: no such process`);
      assert.equal(processInfo(0, via), null);
    }
    assert.equal(processInfo(z.parent, "ps")?.state, "S");
    assert.equal(processInfo(z.parent, "ps")!.start, processInfo(z.parent, "ps")!.start, "the same start time each time");
    const start = processInfo(z.parent)!.start;
    assert.equal(processAlive(z.parent, start), true);
    assert.equal(processAlive(z.parent, null), true);
    assert.equal(processAlive(z.parent, `${start}0`), false, "another start time: a reused pid");
    assert.equal(processAlive(0, null), false, "0 would name this process group");
    assert.equal(processAlive(-1, null), false);
  } finally {
    z.done();
  }
});

test("a zombie or a reused pid in hub.pid is not a live hub; a live pid without its start time still is", async () => {
  const z = await zombie();
  const home = newHome();
  const pidFile = join(home, "hub.pid");
  const other = await stranger("another-homes-id-0000x");
  try {
    writeFileSync(pidFile, `${z.zombie}\n`);
    writeFileSync(join(home, "hub.json"), JSON.stringify({ pid: z.zombie, start: null, url: other.url, home: homeIdOf(home) }));
    const down = await cli(home, ["status"]);
    assert.equal(down.code, 1);
    assert.match(down.err, /^agent-autoloop: cannot reach the hub at http:\/\/127\.0\.0\.1:1: /, "the zombie's record is not used");
    const made = await cli(home, ["key", "new", "source", "demo"]);
    assert.equal(made.code, 0, made.err);
    const hub = await serve(home);
    assert.equal(await stop(hub.child), 0, hub.output());

    // The parent is alive, but it is not the process that wrote this start time: the pid was reused.
    writeFileSync(pidFile, `${z.parent}\n1\n`);
    writeFileSync(join(home, "hub.json"), JSON.stringify({ pid: z.parent, start: "1", url: other.url, home: homeIdOf(home) }));
    assert.equal((await cli(home, ["key", "remove", "source", "demo"])).out, "removed");
    const again = await serve(home);
    assert.equal(await stop(again.child), 0, again.output());
    assert.deepEqual(other.seen, [], "records of dead or reused pids are never followed");

    // A pid file from before start times were kept, naming a live process: taken for a hub, and nothing is written.
    writeFileSync(pidFile, `${z.parent}\n`);
    const locked = await cli(home, ["key", "new", "source", "demo"]);
    assert.equal(locked.code, 1);
    assert.match(locked.err, new RegExp(`^agent-autoloop: a process holds this home \\(pid ${z.parent} in hub\\.pid\\) and no hub of this home answers \\(cannot reach the hub at http://127\\.0\\.0\\.1:1: .*\\); nothing was written$`));
    const second = spawnSync(process.execPath, [bin, "serve", "--listen", "127.0.0.1:0"], { env: envFor(home), encoding: "utf8" });
    assert.equal(second.status, 1);
    assert.match(second.stderr, new RegExp(`^agent-autoloop: another hub already runs on this home \\(pid ${z.parent}\\)`));
    assert.equal(readFileSync(pidFile, "utf8"), `${z.parent}\n`);
  } finally {
    z.done();
    await other.close();
  }
});

function gitRepo(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const git = (...args: string[]) => execFileSync("git", ["-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", ...args], { stdio: "ignore" });
  git("init", "-q");
  writeFileSync(join(dir, "agent.mjs"), 'export default { command: () => ["true"], read: () => ({ text: "Done: mine" }) };\n');
  git("add", ".");
  git("commit", "-q", "-m", "plugin");
  return dir;
}

test("add passes its URL after --, and refuses to shadow a built-in plugin unless --replace", async () => {
  const home = newHome();
  const marker = join(root, "upload-pack-ran");
  const hostile = `--upload-pack=touch ${marker};git-upload-pack #/x/evil`;
  const r = await cli(home, ["add", "--", hostile]);
  assert.equal(r.code, 1);
  assert.equal(r.err, `agent-autoloop: git clone failed: fatal: repository '${hostile}' does not exist`);
  assert.equal(existsSync(marker), false);
  assert.equal(existsSync(join(home, "plugins", "evil")), false);

  const repo = gitRepo(join(root, "repos", "command"));
  const shadow = await cli(home, ["add", repo]);
  assert.equal(shadow.code, 1);
  assert.equal(shadow.err, `agent-autoloop: command is a built-in plugin: installing ${repo} would replace it wherever "command" is used; add --replace to do that`);
  assert.equal(existsSync(join(home, "plugins", "command")), false);
  const replaced = await cli(home, ["add", "--replace", repo]);
  assert.equal(replaced.code, 0, replaced.err);
  assert.equal(replaced.out, `installed plugin command in ${join(home, "plugins", "command")} in place of the built-in one; a running hub imports it within seconds (and at every start), whether or not a rule names it: its code runs in the hub's process, as you, with the keys; use it with "use": "command" or "adapter": "command" in rules.json`);
  assert.ok(existsSync(join(home, "plugins", "command", "agent.mjs")));
  const mine = await cli(home, ["add", gitRepo(join(root, "repos", "mine"))]);
  assert.equal(mine.out, `installed plugin mine in ${join(home, "plugins", "mine")}; a running hub imports it within seconds (and at every start), whether or not a rule names it: its code runs in the hub's process, as you, with the keys; use it with "use": "mine" or "adapter": "mine" in rules.json`);
});

test("add on a home that is not set up says to run init first and makes nothing (no home, no plugins folder)", async () => {
  const home = join(root, "never-initialised");
  const plugin = join(root, "plain-plugin");
  mkdirSync(plugin, { recursive: true });
  writeFileSync(join(plugin, "agent.ts"), "export default {};\n");
  const r = await cli(home, ["add", plugin]);
  assert.deepEqual([r.code, r.err], [1, `agent-autoloop: ${home} is not set up yet; run agent-autoloop init first`]);
  assert.equal(existsSync(home), false);
});

test("the reserved sources schedule and elsewhere get no keys, from the CLI or over HTTP", async () => {
  const home = newHome();
  for (const name of ["schedule", "elsewhere"]) {
    const r = await cli(home, ["key", "new", "source", name]);
    assert.deepEqual([r.code, r.err], [1, `agent-autoloop: "${name}" is a source name the hub uses for its own events (schedule: cron rules; elsewhere: elsewhere tasks); it gets no key`]);
  }
  assert.equal((await cli(home, ["key", "new", "worker", "schedule"])).code, 0, "only source names are reserved");
  const f = await hubFixture();
  try {
    for (const name of ["schedule", "elsewhere"]) {
      const r = await f.call("POST", `/v1/keys/source/${name}`, f.keys.owner);
      assert.deepEqual([r.status, r.body], [400, { error: `"${name}" is a source name the hub uses for its own events (schedule: cron rules; elsewhere: elsewhere tasks); it gets no key` }]);
    }
    assert.equal((await f.call("POST", "/v1/keys/channel/elsewhere", f.keys.owner)).status, 200);
    assert.deepEqual((await f.call("DELETE", "/v1/keys/source/schedule", f.keys.owner)).body, { ok: true, changed: false }, "removing stays possible");
  } finally {
    await f.close();
  }
});

test("mcp answers a line over 10 MiB and a line that is not JSON with JSON-RPC errors, and goes on", async () => {
  const f = await hubFixture();
  try {
    const mcp = spawn(process.execPath, [bin, "mcp"], { env: envFor(f.home.dir, { AGENT_AUTOLOOP_URL: f.url }), stdio: ["pipe", "pipe", "pipe"] });
    children.push(mcp);
    const replies = lines(mcp);
    mcp.stdin!.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { pad: "x".repeat(11 * 1024 * 1024) } }) + "\n");
    assert.deepEqual(await replies.next(), { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error: line over 10485760 bytes, skipped" } });
    mcp.stdin!.write("not json\n");
    assert.deepEqual(await replies.next(), { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error: not JSON" } });
    mcp.stdin!.write('{"jsonrpc":"2.0","id":3,"method":"ping"}\n');
    assert.deepEqual(await replies.next(), { jsonrpc: "2.0", id: 3, result: {} });
    mcp.stdin!.end();
    await new Promise((r) => mcp.once("exit", r));
  } finally {
    await f.close();
  }
});

test("status and why print C1 controls, escapes and bidi overrides from agents and sources as \\u escapes, never raw", async () => {
  const f = await hubFixture();
  try {
    // Straight into the hub, past the HTTP checks: text recorded before a check existed, or by another hub
    // implementation, must not reach the terminal raw either.
    const hub = f.running.hub;
    await hub.submit({ kind: "event", keyHash: hashKey(f.keys.source), event: { id: "1", type: "alert.x", summary: "safe\u202Egnp.exe" } });
    const job = (await f.call("GET", "/v1/work?claim=x", f.keys.worker)).body.job;
    const title = "Invoice \u202Efdp.exe";
    const result = {
      outcome: "done" as const, summary: "ok \u009b31m red \u0085 next \u2066iso\u2069",
      ask: [{ title, text: "line \u001b[2J cleared\r over", options: ["yes \u200f", "no"] }],
    };
    const posted = await hub.submit({ kind: "result", run: job.run, token: job.token, result, hash: hashText(canonicalJson(result)) });
    assert.equal(posted.status, 200, JSON.stringify(posted.body));
    const raw = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
    const status = await cli(f.home.dir, ["status"], { AGENT_AUTOLOOP_URL: f.url });
    assert.equal(status.code, 0, status.err);
    assert.doesNotMatch(status.out, raw);
    assert.match(status.out, /#1 ask \[alerts\] Invoice \\u202efdp\.exe\n {6}line \\u001b\[2J cleared\\u000d over\n {6}0\) yes \\u200f\n/);
    assert.match(status.out, / {6}ok \\u009b31m red \\u0085 next \\u2066iso\\u2069\n/);
    const json = await cli(f.home.dir, ["status", "--json"], { AGENT_AUTOLOOP_URL: f.url });
    assert.doesNotMatch(json.out, raw);
    assert.equal(JSON.parse(json.out).cards[0].title, title, "--json stays exact: the escapes are JSON's own");
    const why = await cli(f.home.dir, ["why", "1"], { AGENT_AUTOLOOP_URL: f.url });
    assert.equal(why.code, 0, why.err);
    assert.doesNotMatch(why.out, raw);
    assert.match(why.out, /event from shop: alert\.x — safe\\u202egnp\.exe/);
    assert.match(why.out, /card #1 question: Invoice \\u202efdp\.exe/);
    const answered = await cli(f.home.dir, ["answer", "1", "0"], { AGENT_AUTOLOOP_URL: f.url });
    assert.equal(answered.out, "card 1: answered — Invoice \\u202efdp.exe");
    const refused = await cli(f.home.dir, ["pause", "no\u202Erule"], { AGENT_AUTOLOOP_URL: f.url });
    assert.equal(refused.err, "agent-autoloop: no such rule: no\\u202erule", "error messages too");
  } finally {
    await f.close();
  }
});

test("a folder where the home keeps a file, or a file where it keeps a folder: serve, key new and init say which, what is wrong and what to do, and leave no lock behind", async () => {
  const notFile = (p: string) => `agent-autoloop: ${p} is a folder where agent-autoloop keeps a file: move or remove that folder, then try again`;
  const notFolder = (p: string) => `agent-autoloop: ${p} is a file where agent-autoloop keeps a folder: move or remove that file, then try again`;
  for (const name of ["hub.json", "hub.pid", "config.json", "secrets.env", "master.key", "home.id", "hub.db", "hub.db-wal", "rules.json"]) {
    const home = newHome();
    rmSync(join(home, name), { force: true });
    mkdirSync(join(home, name));
    const served = await cli(home, ["serve", "--listen", "127.0.0.1:0"]);
    assert.deepEqual([served.code, served.err], [1, notFile(join(home, name))], `serve with a folder ${name}`);
    if (name !== "hub.pid") assert.equal(existsSync(join(home, "hub.pid")), false, `serve with a folder ${name} leaves no lock`);
    if (name !== "hub.json") assert.equal(existsSync(join(home, "hub.json")), false, `serve with a folder ${name} leaves no record`);
    if (name === "config.json") continue; // without config.json the CLI says there is no home here
    const key = await cli(home, ["key", "new", "source", "x"]);
    assert.deepEqual([key.code, key.err], [1, notFile(join(home, name))], `key new with a folder ${name}`);
    // doctor gives the same advice, not "run agent-autoloop init" (which refuses the same way: issue 15).
    const doctor = await cli(home, ["doctor"]);
    assert.equal(doctor.code, 1, `doctor with a folder ${name}`);
    assert.equal(doctor.out.split("\n")[0], `FIX  ${notFile(join(home, name)).replace(/^agent-autoloop: /, "")}`, `doctor with a folder ${name}`);
  }
  for (const name of ["worker", "plugins"]) {
    const home = newHome();
    rmSync(join(home, name), { recursive: true, force: true });
    writeFileSync(join(home, name), "");
    const served = await cli(home, ["serve", "--listen", "127.0.0.1:0"]);
    assert.deepEqual([served.code, served.err], [1, notFolder(join(home, name))], `serve with a file ${name}`);
    assert.equal(existsSync(join(home, "hub.pid")), false);
    const doctor = await cli(home, ["doctor"]);
    assert.deepEqual([doctor.code, doctor.out.split("\n")[0]], [1, `FIX  ${notFolder(join(home, name)).replace(/^agent-autoloop: /, "")}`], `doctor with a file ${name}`);
  }
  const fresh = join(root, "fresh-home");
  mkdirSync(join(fresh, "master.key"), { recursive: true });
  const init = await cli(fresh, ["init"]);
  assert.deepEqual([init.code, init.err], [1, notFile(join(fresh, "master.key"))]);
});

test("a start that fails after taking the home's lock releases it: a listen address in use", async () => {
  const home = newHome();
  const busy = createServer();
  await new Promise<void>((r) => busy.listen(0, "127.0.0.1", r));
  try {
    const r = await cli(home, ["serve", "--listen", `127.0.0.1:${(busy.address() as AddressInfo).port}`]);
    assert.equal(r.code, 1);
    assert.match(r.err, /EADDRINUSE/);
    assert.deepEqual([existsSync(join(home, "hub.pid")), existsSync(join(home, "hub.json"))], [false, false]);
  } finally {
    busy.close();
  }
});

test("file system errors are said as the file meant (a rename's target, a temporary file's real name), what is wrong and what to do", () => {
  const dir = tempDir("aa-file-errors-");
  mkdirSync(join(dir, "hub.json"));
  writeFileSync(join(dir, "plugins"), "");
  const thrown = (f: () => void) => {
    try {
      f();
    } catch (e) {
      return e;
    }
    assert.fail("no error");
  };
  const errno = (code: string, path: string) => Object.assign(new Error(`${code}: …, open '${path}'`), { code, path });
  assert.deepEqual([
    fileErrorMessage(thrown(() => writeFileAtomic(join(dir, "hub.json"), "{}")), "en"),
    fileErrorMessage(thrown(() => writeFileSync(join(dir, "plugins", "x"), "")), "en"),
    fileErrorMessage(errno("EACCES", join(dir, "config.json.4242.tmp")), "en"),
    fileErrorMessage(errno("EROFS", join(dir, "hub.pid.4242.0a1b2c.tmp")), "en"),
    fileErrorMessage(errno("ENOSPC", join(dir, "hub.db")), "en"),
    fileErrorMessage(errno("ECONNREFUSED", join(dir, "x")), "en"),
    fileErrorMessage(new Error("plain"), "en"),
  ], [
    `${join(dir, "hub.json")} is a folder where agent-autoloop keeps a file: move or remove that folder, then try again`,
    `${join(dir, "plugins", "x")}: a part of this path is a file where a folder belongs: move or remove that file, then try again`,
    `${join(dir, "config.json")}: permission denied. The user running agent-autoloop must be able to read and write it: chown or chmod it, or run agent-autoloop as its owner`,
    `${join(dir, "hub.pid")}: the file system is read-only; agent-autoloop must be able to write in its home`,
    `${join(dir, "hub.db")}: no space left on the disk (or over quota): free some space, then try again`,
    null,
    null,
  ]);
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A process of this engine holding a home's lock as `serve` does while it starts ("hub": its address not recorded
 * yet) or as `key new` does while it writes the database ("keys"); resolves once it holds it.
 */
async function holdLock(home: string, as: "hub" | "keys"): Promise<ChildProcess> {
  const marker = join(root, `held-${as}-${Date.now()}`);
  const src = (f: string) => JSON.stringify(pathToFileURL(join(engine, "src", f)).href);
  const script = as === "hub"
    ? `const { lockHome } = await import(${src("host/serve.ts")}); const { homePaths } = await import(${src("host/home.ts")});
       await lockHome(homePaths(process.argv[1]), "en"); require("fs").writeFileSync(process.argv[2], ""); setInterval(() => {}, 1000);`
    : `const { changeKeys } = await import(${src("cli/connect.ts")}); const { homePaths } = await import(${src("host/home.ts")});
       await changeKeys(homePaths(process.argv[1]), "en", async () => {}, () => { require("fs").writeFileSync(process.argv[2], ""); Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000); });`;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=commonjs", "-e", `(async () => { ${script} })()`, home, marker], { env: envFor(home), stdio: "ignore" });
  children.push(child);
  await until(() => existsSync(marker), 15_000, `the ${as} lock to be held`);
  return child;
}

test("serve and key new say what holds the home's lock: the command line changing keys, or a hub still starting; a port-0 address is never tried", async () => {
  const home = newHome("127.0.0.1:0");
  const keys = await holdLock(home, "keys");
  try {
    const served = await cli(home, ["serve", "--listen", "127.0.0.1:0"]);
    assert.deepEqual([served.code, served.err], [1, `agent-autoloop: agent-autoloop key new or key remove (pid ${keys.pid}) is changing this home's keys right now: try again in a moment (${home})`]);
    const key = await cli(home, ["key", "new", "source", "x"]);
    assert.deepEqual([key.code, key.err], [1, `agent-autoloop: agent-autoloop key new or key remove (pid ${keys.pid}) is changing this home's keys right now; nothing was written: try again in a moment`]);
  } finally {
    keys.kill("SIGKILL");
  }
  const hub = await holdLock(home, "hub");
  try {
    const key = await cli(home, ["key", "new", "source", "x"]);
    assert.deepEqual([key.code, key.err], [1, `agent-autoloop: the hub of this home (pid ${hub.pid}) is starting and has not said its address yet; nothing was written: try again in a moment`]);
    const status = await cli(home, ["status"]);
    assert.deepEqual([status.code, status.err], [1, `agent-autoloop: the hub of this home (pid ${hub.pid}) is starting and has not said its address yet: try again in a moment`]);
    const served = await cli(home, ["serve", "--listen", "127.0.0.1:0"]);
    assert.deepEqual([served.code, served.err], [1, `agent-autoloop: another hub already runs on this home (pid ${hub.pid}): ${home}`]);
  } finally {
    hub.kill("SIGKILL");
  }
  await until(() => hub.exitCode !== null || hub.signalCode !== null, 5000, "the holder to end");
  const none = await cli(home, ["status"]);
  assert.deepEqual([none.code, none.err], [1, "agent-autoloop: no hub runs on this home: start it with agent-autoloop serve (config.json's listen has port 0, so the hub's address is known only once it runs)"]);
});

test("a hub (re)started while plugins invoke records a call with no hub running waits for that moment's lock, and starts", async () => {
  // The owner's invoke waits for a parked call's callback across a hub restart, taking the lock a moment per poll.
  const home = newHome("127.0.0.1:0");
  const marker = join(root, `held-invoke-${Date.now()}`);
  const src = (f: string) => JSON.stringify(pathToFileURL(join(engine, "src", f)).href);
  const script = `const { tryLockHome } = await import(${src("host/lock.ts")}); const { homePaths } = await import(${src("host/home.ts")});
    const lock = tryLockHome(homePaths(process.argv[1]), "invoke"); require("fs").writeFileSync(process.argv[2], "");
    setTimeout(() => { lock.release(); setInterval(() => {}, 1000); }, 2500);`;
  const holder = spawn(process.execPath, ["--import", "tsx", "--input-type=commonjs", "-e", `(async () => { ${script} })()`, home, marker], { env: envFor(home), stdio: "ignore" });
  children.push(holder);
  await until(() => existsSync(marker), 15_000, "the invoke lock to be held");
  const hub = await serve(home);
  try {
    assert.match(hub.output(), /^listening on http:\/\/127\.0\.0\.1:\d+\n/);
  } finally {
    await stop(hub.child);
    holder.kill("SIGKILL");
  }
});
