/** `agent-autoloop mcp` with the SDK's own client over stdio, against a running hub. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync, readFileSync, rmSync } from "node:fs";
import { execFile, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { hubFixture, engine, until } from "./helpers.js";
import { eventSummaryMaxCodepoints } from "../src/kernel/limits.js";
import type { AnswerAnswer, EventAccepted, State, Why } from "../src/protocol/responses.js";

/** The text of a tool's answer: its first content item, which the hub's MCP server always makes text. */
async function textOf(answer: ReturnType<Client["callTool"]>): Promise<string> {
  return ((await answer).content as { type: "text"; text: string }[])[0]!.text;
}

test("the MCP server lists the tools the local keys allow and calls the hub's HTTP API", async () => {
  const f = await hubFixture();
  const client = new Client({ name: "test", version: "1" });
  try {
    const config = JSON.parse(readFileSync(f.home.config, "utf8"));
    writeFileSync(f.home.config, JSON.stringify({ ...config, source: { name: "shop", key: f.keys.source } }));
    const transport = new StdioClientTransport({
      command: process.execPath, args: [join(engine, "bin", "agent-autoloop.js"), "mcp"],
      env: { PATH: process.env.PATH!, AGENT_AUTOLOOP_HOME: f.home.dir, AGENT_AUTOLOOP_URL: f.url, AGENT_AUTOLOOP_LANG: "en" },
    });
    await client.connect(transport);
    assert.equal(client.getServerVersion()?.name, "agent-autoloop");
    const tools = (await client.listTools()).tools.map((x) => x.name).sort();
    assert.deepEqual(tools, ["answer", "emit", "resolve", "status", "stop", "tell", "why"]);
    const emitted = JSON.parse(await textOf(client.callTool({ name: "emit", arguments: { id: "m1", type: "alert.mcp", summary: "from MCP" } }))) as EventAccepted;
    assert.deepEqual(emitted, { event: 1, duplicate: false, routed: ["alerts"], paused: [] });
    const job = (await f.call("GET", "/v1/work?claim=m", f.keys.worker)).body.job;
    await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done", ask: [{ title: "MCP?", options: ["y", "n"] }] });
    await client.ping();
    const status = JSON.parse(await textOf(client.callTool({ name: "status", arguments: { raw: true } }))) as State;
    assert.equal(status.cards[0]!.title, "MCP?");
    const answered = JSON.parse(await textOf(client.callTool({ name: "answer", arguments: { card: 1, choice: 1 } }))) as AnswerAnswer;
    assert.equal(answered.card.by, "owner");
    const again = client.callTool({ name: "answer", arguments: { card: 1, choice: 0 } });
    assert.equal((await again).isError, true);
    assert.equal(await textOf(again), "this card was already answered");
    const why = JSON.parse(await textOf(client.callTool({ name: "why", arguments: { run: 1, raw: true } }))) as Why;
    assert.ok(why.facts.length >= 4);
  } finally {
    await client.close();
    await f.close();
  }
});

test("the MCP status and why tools answer with the compact text the CLI prints; the raw facts only when asked", async () => {
  const f = await hubFixture();
  const client = new Client({ name: "test", version: "1" });
  const env = { PATH: process.env.PATH!, AGENT_AUTOLOOP_HOME: f.home.dir, AGENT_AUTOLOOP_URL: f.url, AGENT_AUTOLOOP_LANG: "en", TZ: "UTC" };
  const cli = (args: string[]) => new Promise<string>((resolve, reject) => execFile(process.execPath, [join(engine, "bin", "agent-autoloop.js"), ...args], { env, encoding: "utf8" }, (e, out) => (e ? reject(e) : resolve(out.trimEnd()))));
  try {
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [join(engine, "bin", "agent-autoloop.js"), "mcp"], env }));
    // One simple run: an event, a claim, a receipt with a question.
    await f.call("POST", "/v1/events", f.keys.source, { id: "s1", type: "alert.x", summary: "disk full" });
    const job = (await f.call("GET", "/v1/work?claim=s", f.keys.worker)).body.job;
    await f.call("POST", `/v1/runs/${job.run}/started`, job.token, { session: "sess-1" });
    await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done", summary: "Needs you: which disk?", ask: [{ title: "Which disk?", options: ["/", "/var"] }] });
    const text = (name: string, args: Record<string, unknown>) => textOf(client.callTool({ name, arguments: args }));

    const status = await text("status", {});
    const printed = await cli(["status"]);
    const withoutNow = (s: string) => s.replace(/^(hub .*) · \d\d-\d\d \d\d:\d\d:\d\d$/m, "$1");
    assert.equal(withoutNow(status), withoutNow(printed), "what `agent-autoloop status` prints");
    assert.ok(status.length < 2000, `${status.length} characters`);
    const rawStatus = JSON.parse(await text("status", { raw: true }));
    assert.equal(rawStatus.cards[0].title, "Which disk?");

    const why = await text("why", { run: job.run });
    assert.equal(why, await cli(["why", String(job.run)]), "what `agent-autoloop why` prints");
    assert.ok(why.length < 1500, `${why.length} characters`);
    const rawWhy = JSON.parse(await text("why", { run: job.run, raw: true }));
    assert.deepEqual(Object.keys(rawWhy), ["run", "facts"]);
    assert.equal(rawWhy.run, job.run);
  } finally {
    await client.close();
    await f.close();
  }
});

test("the MCP tools speak the CLI's language: why in Chinese, a refusal and an unreachable hub in the CLI's words (issue 15)", async () => {
  const f = await hubFixture();
  const client = new Client({ name: "test", version: "1" });
  const env = { PATH: process.env.PATH!, AGENT_AUTOLOOP_HOME: f.home.dir, AGENT_AUTOLOOP_URL: f.url, AGENT_AUTOLOOP_LANG: "zh", TZ: "UTC" };
  const cli = (args: string[]) => new Promise<{ out: string; err: string }>((resolve) => execFile(process.execPath, [join(engine, "bin", "agent-autoloop.js"), ...args], { env, encoding: "utf8" }, (_e, out, err) => resolve({ out: out.trimEnd(), err: err.trimEnd() })));
  let closed = false;
  try {
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [join(engine, "bin", "agent-autoloop.js"), "mcp"], env }));
    await f.call("POST", "/v1/events", f.keys.source, { id: "z1", type: "alert.x", summary: "disk full" });
    const job = (await f.call("GET", "/v1/work?claim=z", f.keys.worker)).body.job;
    await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done", ask: [{ title: "Which disk?", options: ["/", "/var"] }] });
    const call = (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args });

    const why = await textOf(call("why", { run: job.run }));
    assert.equal(why, (await cli(["why", String(job.run)])).out, "what `agent-autoloop why` prints in Chinese");
    assert.match(why, /[\u4e00-\u9fff]/);

    await textOf(call("answer", { card: 1, choice: 1 }));
    const again = call("answer", { card: 1, choice: 0 });
    assert.equal((await again).isError, true);
    assert.equal(await textOf(again), "这张卡片已经回答过了");

    // The hub stops; its home stays (the MCP server proves the hub before each call, reading the home).
    await f.running.close();
    closed = true;
    const down = call("status", {});
    assert.equal((await down).isError, true);
    const text = await textOf(down);
    assert.ok(text.startsWith(`连不上中台 ${f.url}：`) && text.endsWith("。先运行 agent-autoloop serve"), text);
    assert.ok(!text.includes("fetch failed"), text);
  } finally {
    await client.close();
    if (!closed) await f.close();
    else rmSync(f.home.dir, { recursive: true, force: true });
  }
});

test("MCP 2025-11-25 errors: an unknown tool is a JSON-RPC -32602 error, not a result; arguments outside the protocol's schema are a tool error naming the field; tools/list declares the protocol's limits (issue 30, 27)", async () => {
  const f = await hubFixture();
  const config = JSON.parse(readFileSync(f.home.config, "utf8"));
  writeFileSync(f.home.config, JSON.stringify({ ...config, source: { name: "shop", key: f.keys.source } }));
  const env = { PATH: process.env.PATH!, AGENT_AUTOLOOP_HOME: f.home.dir, AGENT_AUTOLOOP_URL: f.url, AGENT_AUTOLOOP_LANG: "en" };
  // The wire itself, as any MCP client sees it: one JSON-RPC line per message.
  const child = spawn(process.execPath, [join(engine, "bin", "agent-autoloop.js"), "mcp"], { env, stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout! });
  const answers: Record<string, unknown>[] = [];
  lines.on("line", (l) => answers.push(JSON.parse(l) as Record<string, unknown>));
  const send = (m: unknown) => child.stdin!.write(JSON.stringify(m) + "\n");
  const answer = (id: number) => until(() => answers.find((a) => a.id === id), 10_000, `answer ${id}`);
  try {
    send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
    await answer(1);
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "delete_everything", arguments: {} } });
    assert.deepEqual(await answer(2), { jsonrpc: "2.0", id: 2, error: { code: -32602, message: "agent-autoloop mcp has no tool delete_everything: tools/list names the tools it has" } });
    // A name that is a property of every object is no tool either.
    send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "constructor", arguments: {} } });
    assert.equal(((await answer(3)).error as { code: number }).code, -32602);
    // Bad arguments: a tool execution error (SEP-1303) in the hub's own words, and nothing reaches the hub.
    send({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "emit", arguments: { id: "e1", type: "alert.x", summary: "x".repeat(eventSummaryMaxCodepoints + 1) } } });
    assert.deepEqual(await answer(4), { jsonrpc: "2.0", id: 4, result: { content: [{ type: "text", text: `summary: at most ${eventSummaryMaxCodepoints} characters` }], isError: true } });
    send({ jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "answer", arguments: { card: 0 } } });
    assert.deepEqual(await answer(5), { jsonrpc: "2.0", id: 5, result: { content: [{ type: "text", text: "card: out of range" }], isError: true } });
    send({ jsonrpc: "2.0", id: 6, method: "tools/call", params: { name: "stop", arguments: { run: 1, force: true } } });
    assert.deepEqual(await answer(6), { jsonrpc: "2.0", id: 6, result: { content: [{ type: "text", text: "force: unknown field" }], isError: true } });
    assert.equal((await f.state()).runs.length, 0);
    // The declared schemas are the protocol's: emit is POST /v1/events' body with its limits.
    send({ jsonrpc: "2.0", id: 7, method: "tools/list" });
    const tools = ((await answer(7)).result as { tools: { name: string; inputSchema: { properties: Record<string, { maxLength?: number }>; required?: string[] } }[] }).tools;
    const emit = tools.find((x) => x.name === "emit")!;
    assert.equal(emit.inputSchema.properties.summary!.maxLength, eventSummaryMaxCodepoints);
    assert.deepEqual(emit.inputSchema.required, ["id", "type"]);
    assert.deepEqual(tools.find((x) => x.name === "tell")!.inputSchema.required, ["key", "text"]);
    // A good call still works after all of that.
    send({ jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "emit", arguments: { id: "e1", type: "alert.x" } } });
    const ok = (await answer(8)).result as { content: { text: string }[]; isError?: boolean };
    assert.deepEqual([ok.isError, JSON.parse(ok.content[0]!.text)], [undefined, { event: 1, duplicate: false, routed: ["alerts"], paused: [] }]);
  } finally {
    child.kill();
    await f.close();
  }
});
