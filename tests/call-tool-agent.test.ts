/**
 * The tool walk-through without any agent CLI (issue 29): examples/agents/call-tool.mjs, a `command` agent, calls
 * hello-python.greet through its run's MCP bridge on a real `serve` (sandboxed, real python3 plugin); the first call
 * of the plugin asks the owner on an approval card and is held; "always allow" lets it through; the run ends with the
 * tool's answer, and `why` shows the call.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { engine, serveProcess, tempDir, until } from "./helpers.js";
import type { State } from "../src/protocol/responses.js";

const bin = join(engine, "bin", "agent-autoloop.js");
const root = tempDir("aa-call-tool-");
after(() => rmSync(root, { recursive: true, force: true }));

test("call-tool.mjs calls hello-python.greet through the run's MCP bridge: an approval card, always allow, the tool's answer", async () => {
  const home = join(root, "aa");
  const env = { ...process.env, HOME: root, AGENT_AUTOLOOP_HOME: home, AGENT_AUTOLOOP_LANG: "en", DISPLAY: "", WAYLAND_DISPLAY: "" };
  const cli = async (url: string, ...args: string[]) => (await promisify(execFile)(process.execPath, [bin, ...args], { env: { ...env, AGENT_AUTOLOOP_URL: url }, encoding: "utf8" })).stdout.trim();
  await cli("http://127.0.0.1:1", "init");
  mkdirSync(join(home, "plugins"), { recursive: true });
  mkdirSync(join(root, "project"));
  cpSync(join(engine, "examples", "tool-plugins", "hello-python"), join(home, "plugins", "hello-python"), { recursive: true });
  writeFileSync(join(home, "rules.json"), JSON.stringify({
    sources: { lab: { name: "Lab" } },
    agents: { greeter: { worker: "local", use: "command", command: ["node", join(engine, "examples", "agents", "call-tool.mjs"), "hello-python.greet", '{"name":"Ada"}'] } },
    channels: { file: {} },
    rules: [{ name: "greet", when: { source: "lab", types: ["greet.*"] }, to: "greeter", cwd: "~/project", tools: ["hello-python.greet"] }],
  }));
  const hub = await serveProcess(home, undefined, env);
  const url = hub.url;
  const output = () => hub.output();
  try {
    const owner = (JSON.parse(readFileSync(join(home, "config.json"), "utf8")) as { owner: string }).owner;
    const state = async () => (await (await fetch(`${url}/v1/state`, { headers: { authorization: `Bearer ${owner}` } })).json()) as State;
    const key = await cli(url, "key", "new", "source", "lab");
    const posted = await fetch(`${url}/v1/events`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: '{"id":"greet-1","type":"greet.now"}' });
    assert.equal(posted.status, 200);
    const card = await until(async () => (await state()).cards.find((c) => c.title === "Allow hello-python.greet?"), 60_000, () => `the approval card: ${output().slice(-2000)}`);
    assert.deepEqual(card.options, ["allow once", "always allow", "deny"]);
    assert.match(card.text, /Arguments \(sorted keys\): \{"name":"Ada"\}\n/);
    await cli(url, "answer", String(card.id), "1");
    const run = await until(async () => (await state()).runs.find((r) => r.rule === "greet" && r.state !== "running" && r.state !== "queued"), 60_000, () => `the run: ${output().slice(-2000)}`);
    assert.deepEqual([run.state, run.summary], ["done", "The tool answered: hello, Ada"]);
    const why = await cli(url, "why", String(run.id));
    assert.match(why, /called tool hello-python\.greet: allowed by the answer on card #\d+/);
    assert.match(why, /tool hello-python\.greet finished \(\d+ ms\)/);
  } finally {
    await hub.stop();
  }
});
