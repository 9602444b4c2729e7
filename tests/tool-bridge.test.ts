/**
 * The agents' tool bridge (issue 16 "Offered to agents"): a real hub over HTTP, real tool plugins (the example
 * hello-python and small ones written here) in the worker's home, the worker's bridge of a claimed run, and an MCP
 * client of @modelcontextprotocol/sdk speaking to it through the real relay process, as an agent's CLI does.
 *
 * - the tools listed are the rule's patterns resolved against the plugins, without `disable_model_invocation` ones;
 * - a call goes to the hub first: the first use of a plugin that is not built in asks the owner, whose answer while
 *   the call is held lets it through; then the plugin runs and its answer is the tool's result; outcomes are facts;
 * - a `deny` answers the reason; a `prompt` that is not answered in time answers "awaiting approval, card N …";
 *   a tool not offered is refused without asking the hub;
 * - a plugin's progress reaches the client as MCP progress; an async plugin's parked call ends with its callback;
 * - a declarative plugin's HTTP tools (kind http) against a local server: offered beside the tool plugins, asking first
 *   when no approvals entry names them, the kind on the card and in the audit;
 * - the relay reaches a bridge opened again on the same socket (a restarted worker) without a new handshake;
 * - a socket path longer than a socket address holds is still served at that path (Linux);
 * - through a worker: a `command` agent finds the server's command in AGENT_AUTOLOOP_TOOLS_MCP and calls a tool from
 *   inside its sandbox; the run's socket is gone when the run ends.
 */
import { test, afterEach } from "node:test";
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { baseRules, engine, hubFixture, tempDir, until, untilLatestRun, type Fixture } from "./helpers.js";
import { ToolBridges, bridgeLineDepthMax, bridgeLineMaxBytes, resultContent, toolsSocketName, type RunBridge } from "../src/worker/tool-bridge.js";
import { argumentsMaxBytes } from "../src/tools/limits.js";
import { Worker } from "../src/worker/worker.js";
import { timeline } from "../src/cli/why.js";
import type { Job, OwnerCard, Why } from "../src/protocol/responses.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { DeclarativeCatalog } from "../src/declarative/index.js";
import { localServer, minimalManifest, sendJson, writeFiles } from "./declarative-helpers.js";
import { callFacts, lastCallRow } from "./tool-calls-helpers.js";
import { connect as netConnect, type Socket } from "node:net";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { bridgeBufferedBytesPerRunMax, bridgeCallsInFlightPerRunMax, bridgeConnectionsPerRunMax } from "../src/kernel/limits.js";
import { proofTitlePrefix } from "../src/worker/peer.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A sync plugin in node: `run` reports progress 50% "half done", then answers `done: <n>`. */
const stepsMain = String.raw`
const rl = require("readline").createInterface({ input: process.stdin });
rl.on("line", (l) => {
  const r = JSON.parse(l);
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/progress", params: { request_id: r.params.request_id, percent: 50, message: "half done" } }) + "\n");
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: r.id, result: { content: "done: " + r.params.arguments.n } }) + "\n");
});
`;

/**
 * An async plugin in node: `wait` answers a task id, then completes the task itself through `callback_url` with
 * `later: <n>` (as a plugin that works in the background would).
 */
const laterMain = String.raw`
const rl = require("readline").createInterface({ input: process.stdin });
rl.on("line", async (l) => {
  const r = JSON.parse(l);
  const task = "task-" + r.params.request_id.replace(/[^A-Za-z0-9]/g, "").padEnd(16, "x");
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: r.id, result: { task_id: task } }) + "\n");
  await new Promise((ok) => setTimeout(ok, 300));
  const res = await fetch(r.params.callback_url + task, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ status: "success", result: { content: "later: " + r.params.arguments.n } }) });
  process.stderr.write("callback " + res.status + "\n");
});
`;

/** A plugin folder `<plugins>/<name>` with a manifest of one node tool (sync unless `type` says), `main.js` as given. */
function nodePlugin(plugins: string, name: string, tool: string, main: string, extra = "", type = "sync"): void {
  const dir = join(plugins, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "main.js"), main);
  writeFileSync(join(dir, "manifest.toml"), [
    `name = "${name}"`, `version = "0.1.0"`, `plugin_type = "${type}"`, extra,
    `[entry_point]`, `command = "node"`, `args = ["main.js"]`,
    `[[capabilities.tools]]`, `name = "${tool}"`, `description = "${tool} of ${name}"`,
  ].join("\n") + "\n");
}

/** A hub whose rule `alerts` offers `tools`, with these approvals, and the test plugins in its home. */
async function fixture(tools: string[], approvals: unknown[] = [], approvalWaitSeconds?: number): Promise<Fixture> {
  const f = await hubFixture({
    ...baseRules,
    approvals,
    ...(approvalWaitSeconds === undefined ? {} : { approvalWaitSeconds }),
    rules: [{ ...baseRules.rules[0], parallel: 10, tools }, baseRules.rules[1]],
  });
  cleanups.push(() => f.close());
  cpSync(join(engine, "examples", "tool-plugins", "hello-python"), join(f.home.plugins, "hello-python"), { recursive: true });
  nodePlugin(f.home.plugins, "steps", "run", stepsMain);
  nodePlugin(f.home.plugins, "secret", "wipe", stepsMain, "[capabilities]\ndisable_model_invocation = true");
  nodePlugin(f.home.plugins, "blocked", "rm", stepsMain);
  nodePlugin(f.home.plugins, "later", "wait", laterMain, "[communication]\ntimeout_ms = 20000", "async");
  return f;
}

let events = 0;
/** Posts an `alert.x` event and claims its run as worker w1. */
async function claim(f: Fixture, subject: string): Promise<Job> {
  events += 1;
  const posted = await f.call("POST", "/v1/events", f.keys.source, { id: `tb${events}`, type: "alert.x", subject });
  assert.equal(posted.status, 200, JSON.stringify(posted.body));
  const job = (await f.call("GET", `/v1/work?claim=tb-claim-${events}`, f.keys.worker)).body.job as Job | null;
  assert.ok(job, "a job to claim");
  return job;
}

/** Opens the run's bridge of a worker of the fixture's home (closed after the test) in an agent folder of its own. */
async function openBridge(f: Fixture, job: Job, bridges?: ToolBridges): Promise<{ b: ToolBridges; agentDir: string; bridge: RunBridge }> {
  const b = bridges ?? new ToolBridges({ url: f.url, home: f.home, lang: "en", log: () => {} });
  if (!bridges) cleanups.push(() => b.close());
  const agentDir = tempDir("aa-bridge-agent-");
  cleanups.push(() => rmSync(agentDir, { recursive: true, force: true }));
  // The relays this test starts are its children: the run's processes as far as the bridge can tell.
  return { b, agentDir, bridge: await b.open(job, agentDir, () => [process.pid]) };
}

/** Opens the run's bridge of a worker of the fixture's home, and an MCP client through the real relay. */
async function connect(f: Fixture, job: Job, bridges?: ToolBridges): Promise<{ client: Client; bridge: RunBridge; bridges: ToolBridges; agentDir: string }> {
  const { b, agentDir, bridge } = await openBridge(f, job, bridges);
  const client = new Client({ name: "test-agent", version: "1" });
  const [command, ...args] = bridge.offer.command;
  await client.connect(new StdioClientTransport({ command: command!, args, stderr: "pipe" }));
  cleanups.push(() => client.close());
  return { client, bridge, bridges: b, agentDir };
}

/** The text of a tool result. */
function textOf(r: unknown): string {
  return ((r as CallToolResult).content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("");
}

/** The open ask card of a call of `tool`, once the hub has made it. */
async function cardOf(f: Fixture, tool: string): Promise<OwnerCard> {
  return until(async () => (await f.state()).cards.find((c) => c.title === `Allow ${tool}?` && c.state === "open"), 10_000, `the card of ${tool}`);
}

async function answer(f: Fixture, card: number, choice: number): Promise<void> {
  const r = await f.call("POST", `/v1/cards/${card}/answer`, f.keys.owner, { choice });
  assert.equal(r.status, 200, JSON.stringify(r.body));
}

test("a run's tools: the rule's patterns without hidden tools; the first use asks, the answer while held lets the call run; the plugin's answer; progress; outcomes in why", async () => {
  const f = await fixture(["hello-python.greet", "steps.*", "secret.*"], [{ plugin: "hello-python", mode: "auto" }]);
  const job = await claim(f, "s1");
  const { client } = await connect(f, job);
  const listed = await client.listTools();
  assert.deepEqual(listed.tools.map((x) => [x.name, x.description, x.inputSchema]), [
    ["hello-python.greet", "Greet a person", { type: "object", required: ["name"], properties: { name: { type: "string" } } }],
    ["steps.run", "run of steps", { type: "object" }],
  ], "secret.wipe is hidden from agents; blocked.rm is not offered");
  assert.equal(listed.tools[0]!.annotations, undefined, "not read-only: the agent's access is not read");

  // First use of a plugin that is not built in: the owner is asked; "always allow" while the call is held.
  const call = client.callTool({ name: "hello-python.greet", arguments: { name: "Ada" } });
  const card = await cardOf(f, "hello-python.greet");
  assert.deepEqual(card.options, ["allow once", "always allow", "deny"]);
  await answer(f, card.id, 1);
  const r = await call;
  assert.deepEqual([r.isError ?? false, textOf(r)], [false, "hello, Ada"]);
  // Trusted now: the next call runs at once.
  const again = await client.callTool({ name: "hello-python.greet", arguments: { name: "Grace" } });
  assert.equal(textOf(again), "hello, Grace");

  const progress: { progress: number; total?: number; message?: string }[] = [];
  const stepsCall = client.callTool({ name: "steps.run", arguments: { n: 7 } }, undefined, { onprogress: (p) => progress.push(p) });
  await answer(f, (await cardOf(f, "steps.run")).id, 1);
  assert.equal(textOf(await stepsCall), "done: 7");
  assert.deepEqual(progress, [{ progress: 50, total: 100, message: "half done" }]);

  const why = (await f.call("GET", `/v1/runs/${job.run}/why`, f.keys.owner)).body as Why;
  const told = timeline(job.run, why.facts).map((l) => l.slice(l.indexOf(" ", l.indexOf(" ") + 1) + 1).replace(/\(\d+ ms\)/, "(… ms)").trim());
  assert.deepEqual(told.filter((l) => / tool |^tool |^plugin /.test(l)).map((l) => l.replace(/sha256 [0-9a-f]{64}/, "sha256 …")), [
    "wants to call tool hello-python.greet: asks you on card #1",
    "plugin hello-python trusted at files sha256 … (\"always allow\" by you)",
    "called tool hello-python.greet: allowed by the answer on card #1",
    "tool hello-python.greet finished (… ms)",
    "called tool hello-python.greet: allowed",
    "tool hello-python.greet finished (… ms)",
    "wants to call tool steps.run: asks you on card #2",
    "plugin steps trusted at files sha256 … (\"always allow\" by you)",
    "called tool steps.run: allowed by the answer on card #2",
    "tool steps.run finished (… ms)",
  ], told.join("\n"));
});

test("deny answers the reason; an unanswered prompt answers 'awaiting approval, card N'; a tool not offered is refused; access read marks tools read-only", async () => {
  // The tool denied by its own entry (a plugin denied whole is not even listed: issue 26 round 9, tool-calls.test.ts).
  const f = await fixture(["hello-python.greet", "blocked.rm"], [{ plugin: "blocked", tool: "blocked.rm", mode: "deny" }, { plugin: "hello-python", tool: "hello-python.greet", mode: "prompt" }], 1);
  const job = await claim(f, "s2");
  const { client } = await connect(f, job);
  const denied = await client.callTool({ name: "blocked.rm", arguments: {} });
  assert.deepEqual([denied.isError, textOf(denied)], [true, "blocked.rm is refused: approvals[0] of rules.json denies blocked.rm"]);
  const held = await client.callTool({ name: "hello-python.greet", arguments: { name: "Ada" } });
  const card = (await f.state()).cards.find((c) => c.title === "Allow hello-python.greet?")!;
  assert.deepEqual([held.isError, textOf(held)], [true, `awaiting approval, card ${card.id} — end your turn; you will be resumed`]);
  const other = await client.callTool({ name: "steps.run", arguments: {} });
  assert.deepEqual([other.isError, textOf(other)], [true, "steps.run is not one of the tools this run is offered (rules.json: the rule's tools)"]);
  const wrong = await client.callTool({ name: "hello-python.greet", arguments: { name: 7 } });
  assert.deepEqual([wrong.isError, textOf(wrong)], [true, "wrong arguments for hello-python.greet: name: must be string"]);
  // Refused here, before the hub decided: recorded all the same (denied, with the reason), in why and in status.
  const calls = await callFacts(f, job.run);
  assert.deepEqual(calls.map((c) => [c.tool, c.sessionKey, c.status, c.why, c.reason]).slice(2), [
    ["steps.run", job.sessionKey, "denied", "refused", "tools.not_offered: steps.run is not one of the tools this run is offered (rules.json: the rule's tools)"],
    ["hello-python.greet", job.sessionKey, "denied", "refused", "tools.invalid_arguments: wrong arguments for hello-python.greet: name: must be string"],
  ]);
  const counts = (await f.state()).toolCalls.filter((c) => (c.plugin === "steps" || c.plugin === "hello-python") && c.status === "denied").map((c) => [c.plugin, c.status, c.count]);
  assert.deepEqual(counts.sort(), [["hello-python", "denied", 1], ["steps", "denied", 1]]);

  const read = await claim(f, "s3");
  const readJob: Job = { ...read, agent: { ...read.agent, access: "read" } };
  const { client: reader } = await connect(f, readJob);
  assert.deepEqual((await reader.listTools()).tools.map((x) => x.annotations), [{ readOnlyHint: true }, { readOnlyHint: true }]);
});

test("a declarative plugin's HTTP tools (kind http) are offered like the others: they ask first when no approvals entry names them, allow once asks again, always allow trusts; the kind is on the card and in the audit", async () => {
  const api = await localServer((req, res) => sendJson(res, 200, { data: { city: decodeURIComponent(req.url.split("/")[2] ?? ""), temp: "21C" } }));
  cleanups.push(() => api.close());
  const root = tempDir("aa-bridge-http-");
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  writeFiles(join(root, "weather"), {
    "plugin.json": minimalManifest("weather", { requires: { network: [`127.0.0.1:${api.port}`] }, provides: { tools: ["now"] } }),
    "tools/now.json": {
      name: "now", description: "The weather now", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      http: { url: `${api.url}/weather/{{param.city}}`, resultPath: "data" },
    },
  });
  const catalog = new DeclarativeCatalog({ roots: [{ dir: root, origin: "home" }], lang: "en" });
  assert.deepEqual((await catalog.reload()).loaded, ["weather"]);
  const f = await fixture(["weather.*", "hello-python.greet"], [{ plugin: "hello-python", mode: "auto" }]);
  const job = await claim(f, "s7");
  const bridges = new ToolBridges({ url: f.url, home: f.home, lang: "en", log: () => {}, data: catalog });
  cleanups.push(() => bridges.close());
  const { client } = await connect(f, job, bridges);
  assert.deepEqual((await client.listTools()).tools.map((x) => [x.name, x.description, x.inputSchema]), [
    ["weather.now", "The weather now", { type: "object", properties: { city: { type: "string" } }, required: ["city"] }],
    ["hello-python.greet", "Greet a person", { type: "object", required: ["name"], properties: { name: { type: "string" } } }],
  ]);

  // Arguments that fail the tool's parameters are refused by the host before anyone is asked or anything is sent.
  const bad = await client.callTool({ name: "weather.now", arguments: { town: "Paris" } });
  assert.equal(bad.isError, true);
  assert.equal((await f.state()).cards.length, 0);
  const refused = await lastCallRow(f, job.run, 1);
  assert.deepEqual([refused.tool, refused.status, refused.why, refused.reason?.split(":")[0]], ["weather.now", "denied", "refused", "tools.invalid_arguments"], "recorded all the same");

  // No approvals entry names it: kind http asks first; "allow once" while the call is held lets this call run.
  const first = client.callTool({ name: "weather.now", arguments: { city: "Paris" } });
  const card1 = await cardOf(f, "weather.now");
  assert.equal(card1.text, `Run ${job.run} (session alerts:s7) wants to call tool weather.now (kind http).\nArguments (sorted keys): {"city":"Paris"}\n`
    + `Sends requests only to (requires.network): 127.0.0.1:${api.port}\n`
    + `No entry of rules.json's approvals names plugin weather: tools of kind http ask you first by default. "Always allow" trusts it (sha256 ${(await lastCallRow(f, job.run, 2)).manifestDigest}) until its definitions change.`);
  assert.equal(api.seen.length, 0, "nothing sent before the answer");
  await answer(f, card1.id, 0);
  assert.deepEqual(await first, { content: [{ type: "text", text: JSON.stringify({ city: "Paris", temp: "21C" }) }] });
  assert.deepEqual(api.seen.map((x) => [x.method, x.url]), [["GET", "/weather/Paris"]]);

  // Allow once trusted nothing: the next call asks again; "always allow" trusts the plugin at its digest.
  const second = client.callTool({ name: "weather.now", arguments: { city: "Oslo" } });
  const card2 = await cardOf(f, "weather.now");
  assert.notEqual(card2.id, card1.id);
  await answer(f, card2.id, 1);
  assert.equal(textOf(await second), JSON.stringify({ city: "Oslo", temp: "21C" }));
  const third = await client.callTool({ name: "weather.now", arguments: { city: "Rome" } });
  assert.equal(textOf(third), JSON.stringify({ city: "Rome", temp: "21C" }));

  // The audit: each call a fact with its kind, the arguments' digest (never the arguments), the outcome.
  const calls = (await callFacts(f, job.run)).filter((c) => [2, 3, 4].includes(c.id));
  assert.deepEqual(calls.map((c) => [c.tool, c.kind, c.caller, c.sessionKey, c.why, c.card, c.status]), [
    ["weather.now", "http", "agent", "alerts:s7", "answer", card1.id, "ok"],
    ["weather.now", "http", "agent", "alerts:s7", "answer", card2.id, "ok"],
    ["weather.now", "http", "agent", "alerts:s7", "default", null, "ok"],
  ], "the third call asked no one");
  // A call the owner was asked about keeps its arguments whole with the card (issue 26 #5: the card's page and the
  // console show them, as its text showed their preview); a call no one was asked about keeps only their digest.
  assert.ok(calls.every((c) => /^sha256:[0-9a-f]{64}$/.test(c.argsDigest)));
  assert.deepEqual(calls.map((c) => c.args), ['{"city":"Paris"}', '{"city":"Oslo"}', undefined]);
  assert.ok(!JSON.stringify(calls[2]).includes("Rome"));
  const why = (await f.call("GET", `/v1/runs/${job.run}/why`, f.keys.owner)).body as Why;
  const told = timeline(job.run, why.facts).map((l) => l.slice(l.indexOf(" ", l.indexOf(" ") + 1) + 1).replace(/\(\d+ ms\)/, "(… ms)").trim());
  assert.deepEqual(told.filter((l) => / tool |^tool |^plugin /.test(l)).map((l) => l.replace(/sha256 [0-9a-f]{64}/, "sha256 …")), [
    "tool weather.now refused: wrong arguments for weather.now: city: required",
    `wants to call tool weather.now: asks you on card #${card1.id}`,
    `called tool weather.now: allowed by the answer on card #${card1.id}`,
    "tool weather.now finished (… ms)",
    `wants to call tool weather.now: asks you on card #${card2.id}`,
    "plugin weather trusted at files sha256 … (\"always allow\" by you)",
    `called tool weather.now: allowed by the answer on card #${card2.id}`,
    "tool weather.now finished (… ms)",
    "called tool weather.now: allowed",
    "tool weather.now finished (… ms)",
  ], told.join("\n"));
});

test("an async plugin's call is parked; its callback through callback_url ends it, and the agent gets its result", async () => {
  const f = await fixture(["later.wait"], []);
  const job = await claim(f, "s6");
  const { client } = await connect(f, job);
  const call = client.callTool({ name: "later.wait", arguments: { n: 5 } });
  await answer(f, (await cardOf(f, "later.wait")).id, 1);
  const r = await call;
  assert.deepEqual([r.isError ?? false, textOf(r)], [false, "later: 5"]);
  const why = (await f.call("GET", `/v1/runs/${job.run}/why`, f.keys.owner)).body as Why;
  const told = timeline(job.run, why.facts).filter((l) => l.includes(" tool later.wait")).map((l) => l.replace(/^\d{2}-\d{2} \d{2}:\d{2}:\d{2}  /, "").replace(/ until .*$/, " until …").replace(/\(\d+ ms\)/, "(… ms)"));
  assert.deepEqual(told, [
    "wants to call tool later.wait: asks you on card #1",
    "called tool later.wait: allowed by the answer on card #1",
    "tool later.wait goes on as a background task, waited for until …",
    "tool later.wait finished (… ms)",
  ]);
});

test("a plugin's result as the model reads it: a string content, an MCP plugin's text blocks, else JSON", () => {
  assert.deepEqual(resultContent({ content: "hello, Ada" }), [{ type: "text", text: "hello, Ada" }]);
  assert.deepEqual(resultContent("plain"), [{ type: "text", text: "plain" }]);
  assert.deepEqual(resultContent({ content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] }), [{ type: "text", text: "a" }, { type: "text", text: "b" }]);
  assert.deepEqual(resultContent({ content: [{ type: "image", data: "…" }] }), [{ type: "text", text: '{"content":[{"type":"image","data":"…"}]}' }]);
  assert.deepEqual(resultContent({ rows: [1, 2] }), [{ type: "text", text: '{"rows":[1,2]}' }]);
  assert.deepEqual(resultContent(null), [{ type: "text", text: "null" }]);
});

test("a worker that opens the run's socket again (a restart) is reached by the same relay without a new handshake", async () => {
  const f = await fixture(["steps.*"], []);
  const job = await claim(f, "s4");
  const first = await connect(f, job);
  const firstCall = first.client.callTool({ name: "steps.run", arguments: { n: 1 } });
  await answer(f, (await cardOf(f, "steps.run")).id, 1);
  assert.equal(textOf(await firstCall), "done: 1");
  await first.bridges.close();
  assert.equal(existsSync(join(first.agentDir, toolsSocketName)), false, "the socket goes with its bridge");
  const later = new ToolBridges({ url: f.url, home: f.home, lang: "en", log: () => {} });
  cleanups.push(() => later.close());
  await later.open(job, first.agentDir, () => [process.pid]);
  assert.equal(textOf(await first.client.callTool({ name: "steps.run", arguments: { n: 2 } })), "done: 2");
  // The same relay as a command, agent-autoloop tools mcp --socket <path>: this test's child, so one of the run's
  // processes as the bridge was told (a process outside the run is turned away: tool-sockets.test.ts).
  const cli = new Client({ name: "cli", version: "1" });
  await cli.connect(new StdioClientTransport({ command: process.execPath, args: [join(engine, "bin", "agent-autoloop.js"), "tools", "mcp", "--socket", join(first.agentDir, toolsSocketName)] }));
  cleanups.push(() => cli.close());
  assert.equal(textOf(await cli.callTool({ name: "steps.run", arguments: { n: 3 } })), "done: 3");
});

test("a run folder whose socket path is longer than a socket address holds still gets its tools, at that path", async () => {
  const f = await fixture(["steps.*"], []);
  const job = await claim(f, "s5");
  const b = new ToolBridges({ url: f.url, home: f.home, lang: "en", log: () => {} });
  cleanups.push(() => b.close());
  const top = tempDir("aa-bridge-long-");
  cleanups.push(() => rmSync(top, { recursive: true, force: true }));
  const agentDir = join(top, "a".repeat(60), "b".repeat(60));
  mkdirSync(agentDir, { recursive: true });
  assert.ok(Buffer.byteLength(join(agentDir, toolsSocketName)) > 107);
  const bridge = await b.open(job, agentDir, () => [process.pid]);
  assert.equal(statSync(join(agentDir, toolsSocketName)).isSocket(), true);
  const client = new Client({ name: "test-agent", version: "1" });
  const [command, ...args] = bridge.offer.command;
  await client.connect(new StdioClientTransport({ command: command!, args }));
  cleanups.push(() => client.close());
  assert.deepEqual((await client.listTools()).tools.map((x) => x.name), ["steps.run"]);
});

test("through a worker: a command agent finds the server in AGENT_AUTOLOOP_TOOLS_MCP and calls a tool from its sandbox; the socket ends with the run", async () => {
  const project = tempDir("aa-bridge-project-");
  cleanups.push(() => rmSync(project, { recursive: true, force: true }));
  const agentScript = join(project, "agent.mjs");
  // The agent: an MCP client of the SDK that starts the command it was given and prints the tool's answer.
  writeFileSync(agentScript, [
    `import { Client } from ${JSON.stringify(join(engine, "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm", "client", "index.js"))};`,
    `import { StdioClientTransport } from ${JSON.stringify(join(engine, "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm", "client", "stdio.js"))};`,
    `const [command, ...args] = JSON.parse(process.env.AGENT_AUTOLOOP_TOOLS_MCP);`,
    `const client = new Client({ name: "cmd", version: "1" });`,
    `await client.connect(new StdioClientTransport({ command, args }));`,
    `const r = await client.callTool({ name: "hello-python.greet", arguments: { name: "Lin" } });`,
    // The command is the CLI's own: <node> <engine>/bin/agent-autoloop.js tools mcp --socket <run>/agent/tools.sock --lang en.
    `const words = [args[0].endsWith("/bin/agent-autoloop.js"), ...args.slice(1, 4), args[4].endsWith("/agent/${toolsSocketName}"), ...args.slice(5)];`,
    `console.log("Done: " + r.content[0].text + " " + JSON.stringify(words));`,
    `await client.close();`,
  ].join("\n"));
  const f = await hubFixture({
    ...baseRules,
    agents: { ...baseRules.agents, bot: { worker: "w1", use: "command", command: ["node", agentScript] } },
    rules: [{ ...baseRules.rules[0], cwd: project, tools: ["hello-python.greet"] }, baseRules.rules[1]],
  });
  cleanups.push(() => f.close());
  cpSync(join(engine, "examples", "tool-plugins", "hello-python"), join(f.home.plugins, "hello-python"), { recursive: true });
  const w = new Worker({ url: f.url, key: f.keys.worker, name: "w1", capacity: 1, home: f.home, lang: "en" });
  cleanups.push(() => w.stop());
  void w.run();
  const posted = await f.call("POST", "/v1/events", f.keys.source, { id: "tb-cmd", type: "alert.x", subject: "c1" });
  assert.equal(posted.status, 200);
  await answer(f, (await cardOf(f, "hello-python.greet")).id, 0);
  const state = await untilLatestRun(f, "done", 30_000);
  const run = state.runs[0]!;
  assert.equal(run.summary, 'Done: hello, Lin [true,"tools","mcp","--socket",true,"--lang","en"]');
  const sockets = join(f.home.worker, "runs", `${run.id}-1`, "agent", toolsSocketName);
  await until(() => !existsSync(sockets), 10_000, "the run's socket to go");
});

/**
 * One raw connection to a run's socket that proves itself as the F4 agent did: a child of this process (one of the
 * run's, as the test's bridge counts them) shows the challenge as its argv[0]. @returns the socket and how it ended
 * the exchange: admitted, or the refusal's message.
 */
async function rawConnection(socketPath: string): Promise<{ socket: Socket; outcome: string; closed: Promise<void> }> {
  const socket = netConnect(socketPath);
  socket.on("error", () => {});
  const closed = new Promise<void>((r) => socket.once("close", () => r()));
  let buf = "";
  const outcome = await new Promise<string>((resolve) => {
    socket.on("data", (d) => {
      buf += d.toString();
      const challenge = /"challenge":"([0-9a-f]+)"/.exec(buf);
      if (challenge && !buf.includes("proving")) {
        buf += "proving";
        const child = spawn("sleep", ["30"], { argv0: proofTitlePrefix + challenge[1], stdio: "ignore" });
        cleanups.push(() => void child.kill("SIGKILL"));
        setTimeout(() => socket.write('{"jsonrpc":"2.0","method":"agent-autoloop/proved"}\n'), 100);
      }
      if (buf.includes("agent-autoloop/admitted")) resolve("admitted");
      const refused = /"agent-autoloop\/refused","params":\{"message":"([^"]*)"/.exec(buf);
      if (refused) resolve(refused[1]!);
    });
    socket.once("close", () => resolve("closed"));
  });
  return { socket, outcome, closed };
}

test("issue 26 round 5, F4: a run's socket takes at most bridgeConnectionsPerRunMax connections and holds at most bridgeBufferedBytesPerRunMax bytes of unfinished lines in all; beyond, the connection is refused or closed and the log says why", async () => {
  const f = await fixture(["steps.run"]);
  const job = await claim(f, "flood");
  const logs: string[] = [];
  const bridges = new ToolBridges({ url: f.url, home: f.home, lang: "en", log: (l) => logs.push(l) });
  cleanups.push(() => bridges.close());
  const agentDir = tempDir("aa-bridge-flood-");
  cleanups.push(() => rmSync(agentDir, { recursive: true, force: true }));
  const bridge = await bridges.open(job, agentDir, () => [process.pid]);
  const socketPath = bridge.offer.command[bridge.offer.command.indexOf("--socket") + 1]!;

  const opened = await Promise.all(Array.from({ length: bridgeConnectionsPerRunMax + 5 }, () => rawConnection(socketPath)));
  const outcomes = opened.map((o) => o.outcome);
  const refusal = `run ${job.run} already has ${bridgeConnectionsPerRunMax} connections to its tools (bridgeConnectionsPerRunMax); this one is refused`;
  assert.deepEqual(outcomes.filter((o) => o === "admitted").length, bridgeConnectionsPerRunMax, outcomes.join(" | "));
  assert.deepEqual(outcomes.filter((o) => o !== "admitted"), Array(5).fill(refusal));
  assert.deepEqual(logs.filter((l) => l.includes("bridgeConnectionsPerRunMax")), [`tool bridge of run ${job.run}: ${refusal}`], "said once");
  const admitted = opened.filter((o) => o.outcome === "admitted");

  // Unfinished lines just under the line limit, as the agent of the report sent: the budget holds some, then the
  // connection that would pass it is closed, and the others stay.
  const chunk = Buffer.alloc(bridgeLineMaxBytes - 512 * 1024, 0x61);
  const fits = Math.floor(bridgeBufferedBytesPerRunMax / (chunk.length + 40));
  const sendPartial = (s: Socket) => new Promise<void>((r) => {
    s.write('{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"');
    s.write(chunk, () => r());
  });
  for (const c of admitted.slice(0, fits)) await sendPartial(c.socket);
  const over = admitted[fits]!;
  void sendPartial(over.socket).catch(() => {});
  await over.closed;
  assert.equal(admitted.slice(0, fits).every((c) => !c.socket.destroyed), true, "the connections within the budget stay");
  const bytesLine = `tool bridge of run ${job.run}: the unfinished lines of run ${job.run}'s tool connections passed ${bridgeBufferedBytesPerRunMax} bytes (bridgeBufferedBytesPerRunMax); the connection that passed it is closed`;
  await until(() => logs.includes(bytesLine), 5_000, () => `the log line (log: ${logs.join(" | ")})`);

  // A closed connection gives its bytes and its place back: one more is admitted and may hold a line.
  admitted[0]!.socket.destroy();
  await admitted[0]!.closed;
  over.socket.destroy();
  const again = await until(async () => {
    const c = await rawConnection(socketPath);
    return c.outcome === "admitted" ? c : (c.socket.destroy(), null);
  }, 10_000, "a connection admitted again");
  await sendPartial(again.socket);
  // A finished line is no longer held: the MCP server answers it (an error for the half-made request).
  again.socket.write('"}}\n');
  let answer = "";
  again.socket.on("data", (d) => (answer += d.toString()));
  await until(() => answer.includes('"id":1'), 10_000, "an answer to the finished line");
  assert.equal(again.socket.destroyed, false);
  for (const c of opened) c.socket.destroy();
  again.socket.destroy();
});

/**
 * A relay of a new run's bridge (its lane `lane`) spoken to in raw lines, initialized: `send` a line, `reply` the next
 * answer parsed (failing after `waitMs` instead of waiting for ever).
 */
async function rawRelay(lane: string, waitMs: number): Promise<{ f: Fixture; job: Job; send: (line: string) => void; reply: () => Promise<any> }> {
  const f = await fixture(["steps.*"], []);
  const job = await claim(f, lane);
  const { bridge } = await openBridge(f, job);
  const [command, ...args] = bridge.offer.command;
  const relay = spawn(command!, args, { stdio: ["pipe", "pipe", "ignore"] });
  cleanups.push(() => {
    relay.kill();
  });
  const lines = createInterface({ input: relay.stdout! })[Symbol.asyncIterator]();
  const reply = async () => JSON.parse((await Promise.race([lines.next(), new Promise<never>((_, no) => setTimeout(() => no(new Error(`no answer within ${waitMs} ms`)), waitMs).unref())])).value as string);
  const send = (line: string) => void relay.stdin!.write(line + "\n");
  send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } }));
  assert.equal((await reply()).id, 1);
  send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
  return { f, job, send, reply };
}

test("issue 26 round 39, F39b-1 (reported case: tools/call with _meta.progressToken an object): a line the MCP SDK would drop in silence is answered with its error, and the connection goes on", async () => {
  // Before the fix the SDK dropped the call and nothing came: fail after 10 s instead of waiting for ever.
  const { send, reply } = await rawRelay("s39", 10_000);
  for (const [id, token] of [[2, { a: 1 }], [3, true]] as const) {
    send(JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "steps.run", arguments: { n: 1 }, _meta: { progressToken: token } } }));
    assert.deepEqual(await reply(), { jsonrpc: "2.0", id, error: { code: -32600, message: "Invalid Request: not a JSON-RPC 2.0 message" } });
  }
  send(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "tools/list" }));
  assert.ok((await reply()).result.tools.length > 0, "the connection goes on");
});

test("issue 26 round 41, F41a-1 (reported case: 10 MB tool calls nested millions deep or with 600,000 keys held the hub's thread for seconds each): a line nested past bridgeLineDepthMax is refused before it is parsed, a call whose arguments are beyond the host's limits is refused (and recorded) before the SDK reads it again, a line over bridgeLineMaxBytes closes the connection", async () => {
  const { f, job, send, reply } = await rawRelay("s41", 60_000);
  // Nested a million deep: refused as a message (its id is not read: the line is not parsed), not recorded as a call.
  const deep = 1_000_000;
  send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"steps.run","arguments":{"a":${"[".repeat(deep)}${"]".repeat(deep)}}}}`);
  assert.deepEqual(await reply(), { jsonrpc: "2.0", id: null, error: { code: -32600, message: `Invalid Request: nested deeper than ${bridgeLineDepthMax} levels` } });
  // Brackets inside strings do not count; arguments nested 65 deep (past the host's 64, within the line's bound) are a
  // refused call as before.
  const nested = (n: number) => "[".repeat(n) + "]".repeat(n);
  send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"steps.run","arguments":{"s":"${"[".repeat(500)}","a":${nested(64)}}}}`);
  assert.deepEqual((await reply()).result, { content: [{ type: "text", text: "wrong arguments for steps.run: arguments: nested deeper than 64 levels" }], isError: true, _meta: { denied: true } });
  // Wide: 200,000 keys (2.4 MB), past the host's 1 MiB: the call is refused and recorded, its arguments left out.
  const wide = Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => [`k${i}`, 1]));
  send(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "steps.run", arguments: wide } }));
  assert.deepEqual(await reply(), { jsonrpc: "2.0", id: 4, result: { content: [{ type: "text", text: `wrong arguments for steps.run: arguments: larger than ${argumentsMaxBytes} bytes as JSON` }], isError: true, _meta: { denied: true } } });
  const refused = await until(async () => (await callFacts(f, job.run)).filter((c) => c.status === "denied"), 10_000, "the refusals recorded");
  assert.deepEqual(refused.map((c) => [c.tool, c.reason]), [
    ["steps.run", "tools.invalid_arguments: wrong arguments for steps.run: arguments: nested deeper than 64 levels"],
    ["steps.run", `tools.invalid_arguments: wrong arguments for steps.run: arguments: larger than ${argumentsMaxBytes} bytes as JSON`],
  ]);
  send(JSON.stringify({ jsonrpc: "2.0", id: 5, method: "tools/list" }));
  assert.ok((await reply()).result.tools.length > 0, "the connection goes on");
});

test("issue 26 round 44, F44b-3 (reported case: 300 tool calls at once from one run started ~230 plugin processes and held the hub 142 s): a run has at most bridgeCallsInFlightPerRunMax calls in flight; a further one is refused at once and recorded", async () => {
  const f = await fixture(["slow.wait"], [{ plugin: "slow", tool: "slow.wait", mode: "auto" }]);
  const go = join(f.home.dir, "go");
  nodePlugin(f.home.plugins, "slow", "wait", String.raw`
const fs = require("fs");
require("readline").createInterface({ input: process.stdin }).on("line", (l) => {
  const r = JSON.parse(l);
  const tick = setInterval(() => {
    if (!fs.existsSync(${JSON.stringify(go)})) return;
    clearInterval(tick);
    process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: r.id, result: { content: "done" } }) + "\n");
  }, 50);
});
`);
  const job = await claim(f, "s44");
  const { client } = await connect(f, job);
  // Trusted first ("always allow" on the first use's card), so that the calls below run without asking.
  writeFileSync(go, "");
  const first = client.callTool({ name: "slow.wait", arguments: {} });
  await answer(f, (await cardOf(f, "slow.wait")).id, 1);
  assert.equal(textOf(await first), "done");
  rmSync(go);
  const extra = 4;
  const results: string[] = [];
  const calls = Array.from({ length: bridgeCallsInFlightPerRunMax + extra }, () =>
    client.callTool({ name: "slow.wait", arguments: {} }).then((r) => void results.push(`${r.isError ? "error" : "ok"}: ${textOf(r)}`)));
  await until(async () => results.length === extra || undefined, 30_000, "the refusals");
  assert.deepEqual(results, Array(extra).fill(`error: tool slow.wait: this run already has ${bridgeCallsInFlightPerRunMax} calls in flight (bridgeCallsInFlightPerRunMax); call again when one has ended`));
  writeFileSync(go, "");
  await Promise.all(calls);
  assert.deepEqual(results.slice(extra), Array(bridgeCallsInFlightPerRunMax).fill("ok: done"));
  const facts = await callFacts(f, job.run);
  assert.deepEqual([facts.filter((c) => c.status === "denied").map((c) => c.reason), facts.filter((c) => c.status !== "denied").length], [
    Array(extra).fill(`tools.too_many_calls: tool slow.wait: this run already has ${bridgeCallsInFlightPerRunMax} calls in flight (bridgeCallsInFlightPerRunMax); call again when one has ended`),
    1 + bridgeCallsInFlightPerRunMax, // the first call too
  ]);
  // The slots are free again: one more call runs.
  assert.equal(textOf(await client.callTool({ name: "slow.wait", arguments: {} })), "done");
});
