/**
 * Issue 26 round 10: a secret the hub hands out does not come back into what owners and channels see.
 *
 * - finding M4: a run's secret in an agent's tool-call arguments (a value `Bearer <secret>`, a key, a nested
 *   `headers.Authorization`) is replaced before the arguments leave the worker: the approval card, /v1/state,
 *   /v1/search, the facts of `why` and the database file never hold it; "allow once" on that card lets the call run and
 *   the plugin gets the arguments as the agent sent them; a call the tool host refuses is recorded without it too;
 * - finding M5: an MCP plugin that takes a variable of the hub's environment (`[mcp] env_passthrough`) says so on its
 *   first-use card, its digest is bound to the names it takes, and the values are secrets of every run that may call it;
 * - finding L: a receipt block that is not JSON is said by line and column, never by V8's message quoting the text.
 */
import { test, afterEach } from "node:test";
import { randomBytes } from "node:crypto";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { baseRules, engine, hubFixture, tempDir, until, untilLatestRun, type Fixture } from "./helpers.js";
import { Worker } from "../src/worker/worker.js";
import { ToolBridges } from "../src/worker/tool-bridge.js";
import { inspectPlugin } from "../src/cli/plugins.js";
import { redactedDeep, shownArguments } from "../src/worker/transcript.js";
import { parseReceipt } from "../src/worker/receipt.js";
import { canonicalJson } from "../src/protocol/tool-calls.js";
import { jsonErrorOffset, parseJson } from "../src/kernel/json-error.js";
import type { Job, OwnerCard } from "../src/protocol/responses.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const secret = "ghp_f26r10FAKEsecretVALUE0123456789";

/** A sync node plugin whose tool `show` answers the arguments it was given, as JSON. */
const echoMain = String.raw`
const rl = require("readline").createInterface({ input: process.stdin });
rl.on("line", (l) => {
  const r = JSON.parse(l);
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: r.id, result: { content: "got " + JSON.stringify(r.params.arguments) } }) + "\n");
});
`;

/** A stdio MCP server in node: one tool `weather` that tells what it was given of F26_PASSED_TOKEN. */
const mcpMain = String.raw`
const rl = require("readline").createInterface({ input: process.stdin });
const send = (o) => process.stdout.write(JSON.stringify(o) + "\n");
rl.on("line", (l) => {
  const m = JSON.parse(l);
  if (m.method === "initialize") send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "envmcp", version: "1" } } });
  else if (m.method === "tools/list") send({ jsonrpc: "2.0", id: m.id, result: { tools: [{ name: "weather", description: "weather", inputSchema: { type: "object" } }] } });
  else if (m.method === "tools/call") send({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: "sunny; token " + (process.env.F26_PASSED_TOKEN ?? "none") }] } });
  else if (m.id !== undefined) send({ jsonrpc: "2.0", id: m.id, result: {} });
});
`;

function plugin(plugins: string, name: string, manifest: string[], main: string): void {
  const dir = join(plugins, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "main.js"), main);
  writeFileSync(join(dir, "manifest.toml"), [...manifest, "[entry_point]", 'command = "node"', 'args = ["main.js"]'].join("\n") + "\n");
}

async function fixture(tools: string[]): Promise<Fixture> {
  const f = await hubFixture({ ...baseRules, rules: [{ ...baseRules.rules[0], parallel: 10, tools }, baseRules.rules[1]] });
  cleanups.push(() => f.close());
  await fixturePlugins(f);
  return f;
}

/** The test plugins in the fixture's home: `echo` (sync) and `envmcp` (mcp taking F26_PASSED_TOKEN and F26_NOT_SET). */
async function fixturePlugins(f: Fixture): Promise<void> {
  plugin(f.home.plugins, "echo", ['name = "echo"', 'version = "0.1.0"', 'plugin_type = "sync"', "[[capabilities.tools]]", 'name = "show"', 'description = "show"'], echoMain);
  plugin(f.home.plugins, "envmcp", [
    "manifest_version = 3", 'name = "envmcp"', 'version = "0.1.0"', 'plugin_type = "mcp"',
    "[mcp]", 'env_passthrough = { allow = ["F26_PASSED_TOKEN", "F26_NOT_SET", "AGENT_AUTOLOOP_X"] }', 'tools_allowlist = { mode = "all" }',
  ], mcpMain);
}

let events = 0;
async function claim(f: Fixture): Promise<Job> {
  events += 1;
  assert.equal((await f.call("POST", "/v1/events", f.keys.source, { id: `ts${events}`, type: "alert.x", subject: `s${events}` })).status, 200);
  const job = (await f.call("GET", `/v1/work?claim=ts-claim-${events}`, f.keys.worker)).body.job as Job | null;
  assert.ok(job);
  return job;
}

async function connect(f: Fixture, job: Job, secrets: readonly string[]): Promise<{ client: Client; bridges: ToolBridges }> {
  const bridges = new ToolBridges({ url: f.url, home: f.home, lang: "en", log: () => {} });
  cleanups.push(() => bridges.close());
  const agentDir = tempDir("aa-secrets-agent-");
  cleanups.push(() => rmSync(agentDir, { recursive: true, force: true }));
  const bridge = await bridges.open(job, agentDir, () => [process.pid], () => secrets);
  const client = new Client({ name: "test-agent", version: "1" });
  const [command, ...args] = bridge.offer.command;
  await client.connect(new StdioClientTransport({ command: command!, args, stderr: "pipe" }));
  cleanups.push(() => client.close());
  return { client, bridges };
}

const textOf = (r: unknown) => ((r as CallToolResult).content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("");
const openCard = (f: Fixture, tool: string): Promise<OwnerCard> =>
  until(async () => (await f.state()).cards.find((c) => c.title === `Allow ${tool}?` && c.state === "open"), 10_000, `the card of ${tool}`);

/** Whether `needle` is anywhere the hub keeps or shows: state, search, the run's facts, the database files. */
async function hubHolds(f: Fixture, run: number, needle: string): Promise<string[]> {
  const where: string[] = [];
  if (JSON.stringify(await f.state()).includes(needle)) where.push("state");
  const search = await f.call("GET", `/v1/search?q=${encodeURIComponent(needle.slice(4, 20))}`, f.keys.owner);
  if (JSON.stringify(search.body).includes(needle.slice(4, 20))) where.push("search");
  if (JSON.stringify((await f.call("GET", `/v1/runs/${run}/why`, f.keys.owner)).body).includes(needle)) where.push("why");
  for (const file of [f.home.database, `${f.home.database}-wal`]) {
    try {
      if (readFileSync(file).includes(needle)) where.push(file.endsWith("-wal") ? "wal" : "db");
    } catch {
      // no WAL file
    }
  }
  return where;
}

test("round 10 M4: a run's secret in a tool call's arguments (value, key, nested header) never reaches the card, state, search, facts or database; allow once runs the call with the real arguments", async () => {
  const f = await fixture(["echo.show"]);
  const job = await claim(f);
  const { client } = await connect(f, job, [secret]);
  const args = { name: `Bearer ${secret}`, [secret]: "as-a-key", headers: { Authorization: `token ${secret}` } };
  const call = client.callTool({ name: "echo.show", arguments: args });
  const card = await openCard(f, "echo.show");
  // Each redacted string carries the fingerprint of what it really holds (round 56, F56a-1).
  assert.match(card.text, /^Arguments \(sorted keys\): \{"REDACTED ⟨[0-9a-f]{16}⟩":"as-a-key","headers":\{"Authorization":"token \[redacted\] ⟨[0-9a-f]{16}⟩"\},"name":"Bearer \[redacted\] ⟨[0-9a-f]{16}⟩"\}$/m, card.text);
  // "allow once": the answer is bound to the digest of what the card shows; the plugin gets what the agent sent.
  assert.equal((await f.call("POST", `/v1/cards/${card.id}/answer`, f.keys.owner, { choice: 0 })).status, 200);
  const r = await call;
  assert.equal(textOf(r), `got ${JSON.stringify(args)}`);
  // A call the tool host refuses (not offered) is recorded with its arguments and name replaced too.
  const refused = await client.callTool({ name: `${secret}.x`, arguments: { token: secret } });
  assert.equal(refused.isError, true);
  assert.deepEqual(await hubHolds(f, job.run, secret), []);
});

test("issue 26 round 56, F56a-1 (reported case: a card showed `echo [redacted] …; echo harmless`, allowed once, and the call that used the answer sent `harm\\u0001less\\u0085` — redaction had removed the control characters): a redacted string carries a keyed fingerprint of what it really holds, so arguments that differ only where redaction hides it never share a digest", () => {
  const other = "glpat-F56a1otherSECRETvalue";
  const key = randomBytes(32);
  const shown = (cmd: string, k = key) => canonicalJson(shownArguments({ cmd }, [secret, other], k));
  const seen = shown(`echo ${secret} >/dev/null; echo harmless >> /data/red.log`);
  assert.match(seen, /^\{"cmd":"echo \[redacted\] >\/dev\/null; echo harmless >> \/data\/red\.log ⟨[0-9a-f]{16}⟩"\}$/);
  assert.equal(shown(`echo ${secret} >/dev/null; echo harmless >> /data/red.log`), seen, "the same arguments show the same");
  for (const variant of [
    `echo ${secret} >/dev/null; echo harm\u0001less\u0085 >> /data/red.log`, // the reported case
    `echo ${secret} >/dev/null; echo harmless\u001e >> /data/red.log`,
    `echo ${other} >/dev/null; echo harmless >> /data/red.log`, // another secret of the run in its place
    `echo [redacted] >/dev/null; echo harmless >> /data/red.log`, // the marker typed by the agent
  ]) assert.notEqual(shown(variant), seen, JSON.stringify(variant));
  assert.equal(shown("no secret here"), '{"cmd":"no secret here"}', "a string without a secret is left as sent");
  // Round 58, F58a-2 (reported case): a key the agent wrote as the card had shown one with a secret.
  const keyed = (k: string) => canonicalJson(shownArguments({ [k]: 1 }, [secret], key));
  const real = keyed(secret);
  const spelled = JSON.parse(real) as Record<string, number>;
  assert.notEqual(keyed(Object.keys(spelled)[0]!), real, "a fingerprint spelled out gets one of its own");
  assert.notEqual(shown(`echo ${secret} >/dev/null; echo harmless >> /data/red.log`, randomBytes(32)), seen, "another worker's key: nobody else can compute it");
});

test("round 10 M4: keys and values are replaced at every depth; two keys that become the same both stay", () => {
  assert.deepEqual(shownArguments({ [secret]: 1, REDACTED: 2, list: [{ [`x ${secret}`]: `Bearer ${secret}` }] }, [secret]), {
    "REDACTED #2": 1, REDACTED: 2, list: [{ "x [redacted]": "Bearer [redacted]" }],
  });
  assert.deepEqual(redactedDeep({ [secret]: secret }, [secret]), { [secret]: "REDACTED" }, "receipts keep their keys (the schema names them)");
});

test("round 10 M5: an MCP plugin that takes a variable of the hub's environment says so on its first-use card; the value is a secret of the run; another set of names asks again", async () => {
  process.env.F26_PASSED_TOKEN = `passed-${secret}`;
  cleanups.push(() => void delete process.env.F26_PASSED_TOKEN);
  const f = await fixture(["envmcp.weather"]);
  const job = await claim(f);
  const inspected = await inspectPlugin(f.home, "envmcp", "en", false);
  assert.ok(inspected.out.includes("  takes from the hub's environment: F26_PASSED_TOKEN, F26_NOT_SET (those set in serve's environment are given to it; their values are redacted in what every run that may call it reports)"), inspected.out.join("\n"));
  assert.ok(inspected.out.some((l) => l.includes("env_passthrough takes F26_PASSED_TOKEN, F26_NOT_SET from serve's environment: the values set there go to the plugin")), "the doctor's check warns too");
  const { client, bridges } = await connect(f, job, []);
  assert.deepEqual(await bridges.passedSecrets(job), [`passed-${secret}`]);
  const call = client.callTool({ name: "envmcp.weather", arguments: {} });
  const card = await openCard(f, "envmcp.weather");
  assert.match(card.text, /^The plugin is given these variables of the hub's environment: F26_PASSED_TOKEN\. /m, card.text);
  assert.equal((await f.call("POST", `/v1/cards/${card.id}/answer`, f.keys.owner, { choice: 1 })).status, 200);
  assert.equal(textOf(await call), `sunny; token passed-${secret}`);
  // Trusted now; a variable newly set where the plugin runs is a change of the plugin: asked again.
  assert.equal(textOf(await client.callTool({ name: "envmcp.weather", arguments: {} })), `sunny; token passed-${secret}`);
  process.env.F26_NOT_SET = "now-set-value-123";
  cleanups.push(() => void delete process.env.F26_NOT_SET);
  const again = client.callTool({ name: "envmcp.weather", arguments: {} });
  const second = await openCard(f, "envmcp.weather");
  assert.match(second.text, /variables of the hub's environment: F26_PASSED_TOKEN, F26_NOT_SET\. /, second.text);
  assert.match(second.text, /the variables of the hub's environment it is given changed/, second.text);
  assert.equal((await f.call("POST", `/v1/cards/${second.id}/answer`, f.keys.owner, { choice: 2 })).status, 200);
  assert.equal((await again).isError, true);
});

test("round 10 M5 through a worker: the token an MCP plugin takes of the hub's environment is redacted in the summary of a run whose rule has no env, and in the arguments the agent passes it on in", async () => {
  process.env.F26_PASSED_TOKEN = `passed-${secret}`;
  cleanups.push(() => void delete process.env.F26_PASSED_TOKEN);
  const project = tempDir("aa-secrets-project-");
  cleanups.push(() => rmSync(project, { recursive: true, force: true }));
  const agentScript = join(project, "agent.mjs");
  const sdk = (file: string) => JSON.stringify(join(engine, "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm", "client", file));
  // The agent: gets the token from the plugin, passes it on to another tool, and says it in its summary.
  writeFileSync(agentScript, [
    `import { Client } from ${sdk("index.js")};`,
    `import { StdioClientTransport } from ${sdk("stdio.js")};`,
    `const [command, ...args] = JSON.parse(process.env.AGENT_AUTOLOOP_TOOLS_MCP);`,
    `const client = new Client({ name: "cmd", version: "1" });`,
    `await client.connect(new StdioClientTransport({ command, args }));`,
    `const r = await client.callTool({ name: "envmcp.weather", arguments: {} }, undefined, { timeout: 60000 });`,
    `const token = r.content[0].text.split(" ").pop();`,
    `const e = await client.callTool({ name: "echo.show", arguments: { auth: "Bearer " + token } }, undefined, { timeout: 60000 });`,
    `console.log("Done: " + r.content[0].text + " / " + e.content[0].text + " / env " + (process.env.F26_PASSED_TOKEN ?? "none"));`,
    `await client.close();`,
  ].join("\n"));
  const f = await hubFixture({
    ...baseRules,
    agents: { ...baseRules.agents, bot: { worker: "w1", use: "command", command: ["node", agentScript] } },
    rules: [{ ...baseRules.rules[0], cwd: project, tools: ["envmcp.weather", "echo.show"] }, baseRules.rules[1]],
  });
  cleanups.push(() => f.close());
  await fixturePlugins(f);
  const w = new Worker({ url: f.url, key: f.keys.worker, name: "w1", capacity: 1, home: f.home, lang: "en" });
  cleanups.push(() => w.stop());
  void w.run();
  assert.equal((await f.call("POST", "/v1/events", f.keys.source, { id: "ts-worker", type: "alert.x", subject: "w1" })).status, 200);
  const first = await openCard(f, "envmcp.weather");
  assert.match(first.text, /variables of the hub's environment: F26_PASSED_TOKEN\. /);
  assert.equal((await f.call("POST", `/v1/cards/${first.id}/answer`, f.keys.owner, { choice: 0 })).status, 200);
  const second = await openCard(f, "echo.show");
  assert.match(second.text, /^Arguments \(sorted keys\): \{"auth":"Bearer \[redacted\] ⟨[0-9a-f]{16}⟩"\}$/m, second.text);
  assert.equal((await f.call("POST", `/v1/cards/${second.id}/answer`, f.keys.owner, { choice: 0 })).status, 200);
  const run = (await untilLatestRun(f, "done", 60_000)).runs[0]!;
  assert.equal(run.summary, 'Done: sunny; token [redacted] / got {"auth":"Bearer [redacted]"} / env none');
  assert.deepEqual(await hubHolds(f, run.id, secret), []);
});

test("round 10 L, the kind: a part of a secret that an excerpt cut keeps, right before or after its \"…\", is redacted in what a run reports", () => {
  const quoted = `the agent wrote a line that is not JSON: {"token": "${secret.slice(0, 17)}…`;
  assert.deepEqual(redactedDeep({ error: quoted }, [secret]), { error: 'the agent wrote a line that is not JSON: {"token": "[redacted]…' });
  assert.deepEqual(redactedDeep({ error: `…${secret.slice(-9)}" } and more` }, [secret]), { error: '…[redacted]" } and more' });
  assert.deepEqual(redactedDeep({ summary: "Loading… ghp_ is a prefix, gh…" }, [secret]), { summary: "Loading… ghp_ is a prefix, gh…" }, "a part not at a cut, or shorter than 4 characters, stays");
  assert.deepEqual(redactedDeep({ summary: "x ghp_f… y" }, [secret]), { summary: "x [redacted]… y" });
});

test("round 10 L: a receipt that is not JSON is said by line and column, never quoting the agent's text", () => {
  for (const text of [`{"notice":[{"title":"t", "text": ${secret}}]}`, `{"n": secretVALUE01234 }`, `{\n "a": "x\u0001${secret}"}`, `{"a": 1} ${secret}`, `{"a": "${secret}`]) {
    const r = parseReceipt(text, "en");
    const said = JSON.stringify(r);
    assert.match(said, /receipt JSON: not valid JSON at line \d+, column \d+/, said);
    for (let i = 0; i + 4 <= secret.length; i += 1) assert.ok(!said.includes(secret.slice(i, i + 4)) || "receipt".includes(secret.slice(i, i + 4)), `${secret.slice(i, i + 4)} in ${said}`);
  }
  assert.deepEqual(parseJson('{"a":\n  tru }'), { ok: false, at: { line: 2, column: 6 } });
  assert.equal(jsonErrorOffset('{"a": [1, 2.5e-3, "\\u00e9", null]}'), null);
});

test("issue 26 round 11, F11: redacting cut parts is linear — an argument of 1,000,000 \"…\" (and other shapes an agent controls) takes at most 4 steps per character and secret, counted, not timed", async () => {
  const { redactCutParts } = await import("../src/worker/transcript.js");
  const secrets = [secret, "s".repeat(4096), "xyzw".repeat(64), `${"a".repeat(200)}b`];
  const shapes: [string, string][] = [
    ["the report's argument", "…".repeat(1_000_000)],
    ["cuts between secret prefixes", `${secret.slice(0, 30)}…`.repeat(20_000)],
    ["a long run of one letter", `${"s".repeat(100_000)}…${"s".repeat(100_000)}…`],
    ["near-matches of a periodic secret", `${"xyzw".repeat(5_000)}…${"a".repeat(50_000)}…`],
  ];
  for (const [what, text] of shapes) {
    const work = { steps: 0 };
    redactCutParts(text, secrets, work);
    const bound = 4 * secrets.length * text.length + 4 * secrets.reduce((n, s) => n + s.length, 0);
    assert.ok(work.steps > 0 && work.steps <= bound, `${what}: ${work.steps} steps, at most ${bound}`);
  }
  // What it finds is unchanged: the part right before and right after each cut.
  assert.equal(redactCutParts(`a ${secret.slice(0, 12)}… b …${secret.slice(-6)} c`, [secret]), "a [redacted]… b …[redacted] c");
  assert.equal(redactCutParts(`${secret.slice(0, 12)}…${secret.slice(-6)}…${secret.slice(-5)}`, [secret]), "[redacted]…[redacted]…[redacted]");
});

test("issue 26 round 12, F12-5: keys that redact to one name are numbered in linear work — 32,000 keys of a secret and distinct control characters (the report's 2.1 MB call froze the hub 92 s), and keys that already hold the numbers", () => {
  // Distinct strings of C0 control characters, which neutralising removes: every key becomes the secret, then REDACTED.
  const controls = (i: number) => [...i.toString(8).padStart(6, "0")].map((d) => String.fromCharCode(1 + Number(d))).join("");
  const keys = 32_000;
  const args = Object.fromEntries(Array.from({ length: keys }, (_, i) => [`${secret}${controls(i)}`, i]));
  const work = { tries: 0 };
  const shown = redactedDeep(args, [secret], { keys: true, work }) as Record<string, number>;
  assert.deepEqual(Object.keys(shown), ["REDACTED", ...Array.from({ length: keys - 1 }, (_, i) => `REDACTED #${i + 2}`)]);
  assert.deepEqual(Object.values(shown), Array.from({ length: keys }, (_, i) => i));
  assert.ok(work.tries >= keys - 1 && work.tries <= 2 * keys, `${work.tries} names tried for ${keys} keys`);
  // The agent also sent the numbered names themselves (kept as they are): each is skipped once, never tried again.
  const taken = Object.fromEntries(Array.from({ length: keys }, (_, i) => [`REDACTED #${i + 2}`, -1]));
  const both = { ...taken, ...args };
  const work2 = { tries: 0 };
  const shown2 = redactedDeep(both, [secret], { keys: true, work: work2 }) as Record<string, number>;
  assert.equal(Object.keys(shown2).length, 2 * keys);
  assert.equal(shown2["REDACTED #2"], -1);
  assert.equal(shown2.REDACTED, 0);
  assert.equal(shown2[`REDACTED #${keys + 2}`], 1);
  assert.ok(work2.tries >= 2 * keys - 1 && work2.tries <= 3 * keys, `${work2.tries} names tried for ${2 * keys} keys`);
});

test("issue 26 round 12, F12-5: a tool call whose arguments are larger than argumentsMaxBytes as JSON is refused before they are redacted, recorded without them; one just within is asked for", async () => {
  const f = await fixture(["echo.show"]);
  const job = await claim(f);
  const { client } = await connect(f, job, [secret]);
  const { argumentsMaxBytes } = await import("../src/tools/limits.js");
  assert.equal(argumentsMaxBytes, 1024 * 1024);
  // {"text":"…"} is 11 bytes besides the text; "é" is two bytes in UTF-8 and one code unit.
  const big = await client.callTool({ name: "echo.show", arguments: { text: `${"é".repeat(argumentsMaxBytes / 2 - 6)}${secret}` } });
  assert.equal(big.isError, true);
  assert.equal(textOf(big), `wrong arguments for echo.show: arguments: larger than ${argumentsMaxBytes} bytes as JSON`);
  const why = JSON.stringify((await f.call("GET", `/v1/runs/${job.run}/why`, f.keys.owner)).body);
  assert.match(why, /larger than 1048576 bytes as JSON/);
  assert.ok(!why.includes("éé"), "the refusal records none of the arguments");
  assert.equal((await f.state()).cards.filter((c) => c.title === "Allow echo.show?").length, 0);
  // Exactly at the limit: the hub is asked (its card opens).
  const within = client.callTool({ name: "echo.show", arguments: { text: "a".repeat(argumentsMaxBytes - 11) } });
  const card = await openCard(f, "echo.show");
  assert.equal((await f.call("POST", `/v1/cards/${card.id}/answer`, f.keys.owner, { choice: 0 })).status, 200);
  assert.equal(textOf(await within).length, "got ".length + argumentsMaxBytes);
});
