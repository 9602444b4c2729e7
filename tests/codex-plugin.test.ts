/** The built-in codex plugin over Codex's real output (samples recorded with codex-cli 0.171.0), and the usage ledger. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, mkdirSync, writeFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import plugin from "../plugins/codex/agent.js";
import { engine, hubFixture, baseRules, until, tempDir } from "./helpers.js";
import { Worker } from "../src/worker/worker.js";

const sample = (name: string) => readFileSync(join(engine, "tests", "fixtures", "codex", name), "utf8");
const turn = { prompt: "do it", session: null, resume: null, cwd: "/w", access: "edit" as const, model: null, effort: null, command: null, program: null, contextFile: "/r/c.json", folder: "/r" };

test("the command line: exec --json, sandbox per access; resume takes the sandbox as config", () => {
  assert.deepEqual(plugin.command(turn), ["codex", "exec", "--json", "--skip-git-repo-check", "-s", "workspace-write", "--", "do it"]);
  assert.deepEqual(plugin.command({ ...turn, access: "read", resume: "t-1", model: "gpt-5.5", effort: "high" }),
    ["codex", "exec", "resume", "--json", "--skip-git-repo-check", "-m", "gpt-5.5", "-c", 'model_reasoning_effort="high"', "-c", 'sandbox_mode="read-only"', "--", "t-1", "do it"]);
  assert.equal(plugin.command({ ...turn, access: "full" })[5], "danger-full-access");
  // Inside a worker's sandbox where Codex cannot make its own (root: Turn.sandbox "closed"), every access leaves the
  // sandboxing to the worker's; where it can (or with none around it), Codex's own sandbox follows the access.
  for (const access of ["read", "edit"] as const) {
    assert.equal(plugin.command({ ...turn, access, sandbox: "closed" })[5], "danger-full-access", access);
    assert.deepEqual(plugin.command({ ...turn, access, sandbox: "closed", resume: "t-1" }).slice(-5), ["-c", 'sandbox_mode="danger-full-access"', "--", "t-1", "do it"], access);
  }
  assert.equal(plugin.command({ ...turn, access: "read", sandbox: "nestable" })[5], "read-only");
  assert.equal(plugin.command({ ...turn, sandbox: "none" })[5], "workspace-write");
});

test("the rule's tools: mcp_servers settings naming only the relay, its tools approved in advance, long timeouts; on resume too", () => {
  const tools = { server: "agent-autoloop", command: ["/usr/bin/node", "/e/relay.js", "/r/tools \"sock\"", "en"] };
  const settings = [
    "-c", 'mcp_servers.agent-autoloop.command="/usr/bin/node"', "-c", 'mcp_servers.agent-autoloop.args=["/e/relay.js","/r/tools \\"sock\\"","en"]',
    "-c", 'mcp_servers.agent-autoloop.default_tools_approval_mode="approve"', "-c", "mcp_servers.agent-autoloop.tool_timeout_sec=7200",
    "-c", "mcp_servers.agent-autoloop.startup_timeout_sec=60", "-c", "mcp_servers.agent-autoloop.required=true",
  ];
  assert.deepEqual(plugin.command({ ...turn, tools }), ["codex", "exec", "--json", "--skip-git-repo-check", ...settings, "-s", "workspace-write", "--", "do it"]);
  assert.deepEqual(plugin.command({ ...turn, tools, resume: "t-1" }), ["codex", "exec", "resume", "--json", "--skip-git-repo-check", ...settings, "-c", 'sandbox_mode="workspace-write"', "--", "t-1", "do it"]);
});

test("a finished run: last agent message, thread as session, cumulative tokens as session usage", () => {
  const r = plugin.read(sample("codex-exec-json.jsonl"), 0, "")!;
  assert.deepEqual(r, { started: true, session: "01a22964-57c3-7b70-900b-670c23846612", finished: true, sessionUsage: { input: 321, output: 76, cached: 54 }, text: "Codex answer GAMMA" });
  const resumed = plugin.read(sample("codex-exec-resume-json.jsonl"), 0, "")!;
  assert.deepEqual(resumed.sessionUsage, { input: 642, output: 152, cached: 108 });
});

test("errors: an API error, and an unknown thread refused before starting", () => {
  const e = plugin.read(sample("codex-exec-json-error-400.jsonl"), 1, "")!;
  assert.deepEqual([e.started, e.error, e.text], [true, "fake failure 400", undefined]);
  const unknown = plugin.read(sample("codex-exec-resume-unknown.stdout"), 1, sample("codex-exec-resume-unknown.stderr"))!;
  assert.equal(unknown.started, false);
  assert.match(unknown.error!, /no rollout found for thread id/);
  assert.doesNotMatch(unknown.error!, /Stack backtrace/);
  assert.deepEqual(plugin.read('{"type":"thread.started","thread_id":"t"}\n{"type":"turn.sta', null, ""), { started: true, session: "t" });
});

test("the worker turns cumulative session figures into this launch's, across a worker restart; no record means no guess", async () => {
  // A plugin whose session total grows by 100 input and 10 output tokens per launch.
  const rules = { ...baseRules, agents: { ...baseRules.agents, bot: { worker: "w1", use: "cumulative" } }, rules: [{ ...baseRules.rules[0], resume: true }] };
  const f = await hubFixture(rules);
  const state = join(tempDir("aa-cumulative-"), "state"); // the agent's own file: outside the hub's home, which agents cannot see
  mkdirSync(join(f.home.plugins, "cumulative"), { recursive: true });
  writeFileSync(join(f.home.plugins, "cumulative", "agent.mjs"), `
export default {
  command(turn) { return [process.execPath, "-e", ${JSON.stringify(`const fs=require("fs");const f=${JSON.stringify(state)};const n=(fs.existsSync(f)?Number(fs.readFileSync(f,"utf8")):0)+1;fs.writeFileSync(f,String(n));console.log(JSON.stringify({session:process.argv[1]||"sess",n}))`)}, turn.resume ?? ""]; },
  read(stdout, code) {
    if (code === null) return {};
    const o = JSON.parse(stdout);
    return { started: true, finished: true, session: o.session, text: "Done: launch " + o.n, sessionUsage: { input: 100 * o.n, output: 10 * o.n } };
  },
};`);
  const start = () => {
    const w = new Worker({ url: f.url, key: f.keys.worker, name: "w1", capacity: 1, home: f.home, lang: "en" });
    void w.run();
    return w;
  };
  const runDone = async (id: number) =>
    until(async () => {
      const s = await f.state();
      const r = s.runs.find((x) => x.id === id);
      return r?.state === "done" && r;
    }, 15_000, `run ${id}`);
  let w = start();
  try {
    await f.call("POST", "/v1/events", f.keys.source, { id: "e1", type: "alert.x" });
    assert.deepEqual((await runDone(1)).usage, { input: 100, output: 10 }, "a new session: its total is this launch");
    w.stop();
    w = start(); // the ledger is on disk
    await f.call("POST", "/v1/events", f.keys.source, { id: "e2", type: "alert.x" });
    const r2 = await runDone(2);
    assert.equal(r2.session, "sess");
    assert.deepEqual(r2.usage, { input: 100, output: 10 }, "a resumed session: the difference");
    rmSync(join(f.home.worker, "usage"), { recursive: true });
    await f.call("POST", "/v1/events", f.keys.source, { id: "e3", type: "alert.x" });
    assert.equal((await runDone(3)).usage, null, "a resume without a record reports nothing");
    const st = (await f.call("GET", "/v1/state", f.keys.owner)).body;
    assert.equal(st.spending.today.missingTokens, 1);
  } finally {
    w.stop();
    await f.close();
  }
});
