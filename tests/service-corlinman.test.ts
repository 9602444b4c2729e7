/**
 * A service plugin written the way corlinman's Python test plugin is (issue 34, Done when): it ships the bridge's
 * .proto and serves PluginBridge from the stubs generated of it (here @grpc/proto-loader's, in Node: python3 has no
 * grpcio here), on $CORLINMAN_PLUGIN_ADDR, and its manifest lists no tools. Under a real `serve`, agents' runs whose
 * rule names its tool call it through their MCP bridge (examples/agents/call-tool.mjs): two at once are answered
 * together, and after a SIGKILL the supervisor starts it again and the next call is answered.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { engine, serveProcess, tempDir, until } from "./helpers.js";
import type { State } from "../src/protocol/responses.js";

const bin = join(engine, "bin", "agent-autoloop.js");
const root = tempDir("aa-corl-service-");
after(() => rmSync(root, { recursive: true, force: true }));

/** The plugin's code: one Execute per call; `echo` answers its arguments once a second call came, or after 8 s. */
const serviceCode = (state: string) => `import { createRequire } from "node:module";
import { appendFileSync, writeFileSync } from "node:fs";
const require = createRequire(${JSON.stringify(join(engine, "package.json"))});
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");
const stubs = grpc.loadPackageDefinition(protoLoader.loadSync(new URL("bridge.proto", import.meta.url).pathname, { keepCase: true, defaults: true, oneofs: true }));
let inflight = 0;
let most = 0;
let waiting = [];
function execute(call) {
  const { call_id, tool, args_json } = call.request;
  if (tool !== "echo") {
    call.write({ error: { reason: "FORMAT", message: "no tool " + tool, retryable: false, upstream_code: "" } });
    return call.end();
  }
  inflight += 1;
  most = Math.max(most, inflight);
  writeFileSync(${JSON.stringify(join(state, "most"))}, String(most));
  const answer = () => {
    inflight -= 1;
    const result = { echo: JSON.parse(args_json.toString("utf8") || "{}"), pid: process.pid };
    call.write({ result: { call_id, result_json: Buffer.from(JSON.stringify(result)), duration_ms: 0 } });
    call.end();
  };
  // A call waits for a second one (at most 8 s), then both answer: two agents' calls are in here together.
  waiting.push(answer);
  if (waiting.length >= 2) {
    for (const w of waiting.splice(0)) w();
  } else {
    setTimeout(() => { const i = waiting.indexOf(answer); if (i >= 0) { waiting.splice(i, 1); answer(); } }, 8000);
  }
}
const server = new grpc.Server();
server.addService(stubs.corlinman.v1.PluginBridge.service, { Execute: execute });
server.bindAsync("unix:" + process.env.CORLINMAN_PLUGIN_ADDR, grpc.ServerCredentials.createInsecure(), (err) => {
  if (err) { console.error("cannot listen: " + err.message); process.exit(1); }
  appendFileSync(${JSON.stringify(join(state, "pids"))}, process.pid + "\\n");
});
`;

test("issue 34: a corlinman-style service plugin without tools in its manifest answers two agents' calls at once under serve, and comes back after a SIGKILL", async () => {
  const home = join(root, "aa");
  const state = join(root, "state");
  mkdirSync(state);
  const env = { ...process.env, HOME: root, AGENT_AUTOLOOP_HOME: home, AGENT_AUTOLOOP_LANG: "en", DISPLAY: "", WAYLAND_DISPLAY: "" };
  const cli = async (url: string, ...args: string[]) => (await promisify(execFile)(process.execPath, [bin, ...args], { env: { ...env, AGENT_AUTOLOOP_URL: url }, encoding: "utf8" })).stdout.trim();
  await cli("http://127.0.0.1:1", "init");
  const plugin = join(home, "plugins", "corl-service");
  mkdirSync(plugin, { recursive: true });
  mkdirSync(join(root, "project"));
  writeFileSync(join(plugin, "manifest.toml"), 'name = "corl-service"\nversion = "0.1.0"\nplugin_type = "service"\n\n[entry_point]\ncommand = "node"\nargs = ["main.mjs"]\n');
  copyFileSync(join(engine, "src", "tools", "plugin-bridge.proto"), join(plugin, "bridge.proto"));
  writeFileSync(join(plugin, "main.mjs"), serviceCode(state));
  writeFileSync(join(home, "rules.json"), JSON.stringify({
    sources: { lab: { name: "Lab" } },
    agents: { caller: { worker: "local", use: "command", command: ["node", join(engine, "examples", "agents", "call-tool.mjs"), "corl-service.echo", '{"text":"hi"}'] } },
    channels: { file: {} },
    rules: [{ name: "echo", when: { source: "lab", types: ["echo.*"] }, to: "caller", cwd: "~/project", parallel: 2, tools: ["corl-service.echo"] }],
  }));
  const hub = await serveProcess(home, undefined, env);
  const url = hub.url;
  const output = () => hub.output();
  try {
    const owner = (JSON.parse(readFileSync(join(home, "config.json"), "utf8")) as { owner: string }).owner;
    const state_ = async () => (await (await fetch(`${url}/v1/state`, { headers: { authorization: `Bearer ${owner}` } })).json()) as State;
    const key = await cli(url, "key", "new", "source", "lab");
    const post = async (id: string) => {
      const r = await fetch(`${url}/v1/events`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ id, type: "echo.now", subject: id }) });
      assert.equal(r.status, 200);
    };
    const ended = async (n: number) => until(async () => {
      const runs = (await state_()).runs.filter((r) => r.rule === "echo" && ["done", "nothing", "cancelled"].includes(r.state));
      return runs.length >= n ? runs : undefined;
    }, 90_000, () => `${n} ended runs: ${output().slice(-3000)}`);
    const pids = () => (existsSync(join(state, "pids")) ? readFileSync(join(state, "pids"), "utf8").trim().split("\n").map(Number) : []);
    await until(() => pids().length === 1, 30_000, () => `the service to start: ${output().slice(-2000)}`);
    const first = pids()[0]!;

    // The first use asks the owner: "always allow" trusts the plugin at these files.
    await post("a1");
    const card = await until(async () => (await state_()).cards.find((c) => c.title === "Allow corl-service.echo?"), 60_000, () => `the approval card: ${output().slice(-2000)}`);
    await cli(url, "answer", String(card.id), "1");
    const answered = (pid: number) => `The tool answered: {"echo":{"text":"hi"},"pid":${pid}}`;
    assert.deepEqual((await ended(1)).map((r) => [r.state, r.summary]), [["done", answered(first)]]);

    // Two runs at once: both calls are in the service together.
    await Promise.all([post("b1"), post("b2")]);
    const three = await ended(3);
    assert.deepEqual(three.map((r) => [r.state, r.summary]), [["done", answered(first)], ["done", answered(first)], ["done", answered(first)]]);
    assert.equal(readFileSync(join(state, "most"), "utf8"), "2", "two calls in flight at once");

    // SIGKILL: the supervisor restarts it (after 1 s) and the next agent's call is answered by the new process.
    process.kill(first, "SIGKILL");
    await until(() => pids().length === 2, 30_000, () => `the restart: ${output().slice(-2000)}`);
    const second = pids()[1]!;
    assert.notEqual(second, first);
    await post("c1");
    const four = await ended(4);
    assert.deepEqual(four.filter((r) => r.summary === answered(second)).map((r) => r.state), ["done"]);
  } finally {
    await hub.stop();
  }
});
