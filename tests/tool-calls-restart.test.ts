/**
 * A parked async tool call survives a hub restart (issue 16): a real `agent-autoloop serve` child process (from dist/:
 * `npm run build` first) is killed with SIGKILL while calls are parked, and started again on the same home; the
 * callback then completes the call and the waiting caller gets the result, and a deadline that passed meanwhile is a
 * timeout (410). The task ids are nowhere in clear: not in the database file, its WAL, the stream, `why` or the log.
 * An agent's call held for the owner's answer survives a restart too: the worker's tool bridge keeps waiting while the
 * hub is away, the answer given to the restarted hub lets the call run, and "always allow" outlives a second restart.
 * Kept apart from tool-calls.test.ts: it runs hub processes, which the kernel's mutation run leaves out.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { engine, makeHome, serveProcess, tempDir, until, freePort } from "./helpers.js";
import { ToolBridges } from "../src/worker/tool-bridge.js";
import type { State } from "../src/protocol/responses.js";
import { HubClient, HubError } from "../src/protocol/client.js";
import { callBody, toolRules } from "./tool-calls-helpers.js";

test("a parked call survives a hub restart (a real serve process killed and started again); its task id is never in the database or the log in clear", async () => {
  // the plugin jobs calls back on the legacy path (no key): it opts in (hostile round 37, F37b-3)
  const { dir, home, keys } = makeHome(toolRules([{ plugin: "jobs", mode: "auto", legacy_callbacks: true }], ["jobs.*"]));
  let hub = await serveProcess(dir);
  const logs: string[] = [];
  try {
    const client = () => new HubClient(hub.url, null);
    const owner = () => new HubClient(hub.url, keys.owner);
    await new HubClient(hub.url, keys.source).postEvent({ id: "e1", type: "alert.x", subject: "s1" });
    const job = (await new HubClient(hub.url, keys.worker).work({ claim: "c1", wait: 0, running: [], capacity: 1 })).job!;
    // The home's plugin jobs is not built in: the owner trusts it ("always allow") on its first call, which that lets run.
    const first = await client().toolCall(job.run, job.token, callBody("jobs.run"));
    assert.equal(first.decision, "prompt");
    await owner().answer(first.card!, { choice: 1 });
    const park = async (task: string, timeoutMs: number) => {
      const { call, decision } = await client().toolCall(job.run, job.token, callBody("jobs.run"));
      assert.equal(decision, "allow");
      await client().toolCallOutcome(job.run, job.token, call, { status: "parked", durationMs: 3, taskId: task, timeoutMs });
      return call;
    };
    const kept = await park("survivor-task-id-0001", 600_000);
    const late = await park("late-survivor-task-02", 1500);
    const ownCall = (await owner().ownerToolCall(callBody("jobs.run"))).call;
    await owner().ownerToolCallOutcome(ownCall, { status: "parked", durationMs: 2, taskId: "owner-task-id-000003", timeoutMs: 600_000 });
    hub.child.kill("SIGKILL");
    await new Promise((r) => hub.child.once("exit", r));
    logs.push(hub.output());
    await new Promise((r) => setTimeout(r, 1600)); // the late call's deadline passes while no hub runs
    hub = await serveProcess(dir);

    assert.deepEqual(await client().toolCallResult(job.run, job.token, kept, 0), { status: "pending" });
    assert.deepEqual(await client().pluginCallback("survivor-task-id-0001", { status: "success", result: { content: "after the restart" } }), { ok: true });
    assert.deepEqual(await client().toolCallResult(job.run, job.token, kept, 0), { status: "ok", result: { content: "after the restart" } });
    const refusal = (e: unknown) => e instanceof HubError ? [e.status, e.error] : e;
    assert.deepEqual(await client().pluginCallback("late-survivor-task-02", { status: "success" }).catch(refusal), [410, "this task's deadline has passed: the call already failed with a timeout"]);
    assert.deepEqual(await client().toolCallResult(job.run, job.token, late, 10), { status: "timeout" });
    assert.deepEqual(await client().pluginCallback("owner-task-id-000003", { status: "success", result: 7 }), { ok: true });
    assert.deepEqual(await owner().ownerToolCallResult(ownCall, 0), { status: "ok", result: 7 });

    // The stream and `why` carry no task id and no hash of one.
    const stream = await fetch(`${hub.url}/v1/stream`, { headers: { authorization: `Bearer ${keys.owner}` } });
    const reader = stream.body!.getReader();
    let text = "";
    while (!text.includes(`"kind":"toolCallback"`) || !text.endsWith("\n\n")) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    const why = JSON.stringify(await owner().why(job.run));
    for (const seen of [text, why]) {
      assert.ok(seen.includes('["tasks","…",{"call":'), "the tasks row shows without its key");
      for (const task of ["survivor-task-id-0001", "late-survivor-task-02", "owner-task-id-000003"]) assert.ok(!seen.includes(task));
    }
  } finally {
    await hub.stop();
    logs.push(hub.output());
    // Not in the database, its log or the hub's log in clear.
    const files = readdirSync(home.dir).filter((n) => n.includes(".db") || n.includes("sqlite"));
    assert.ok(files.length > 0, readdirSync(home.dir).join(" "));
    for (const name of files) {
      const bytes = readFileSync(join(home.dir, name)).toString("latin1");
      for (const task of ["survivor-task-id-0001", "late-survivor-task-02", "owner-task-id-000003"]) assert.ok(!bytes.includes(task), `${task} in ${name}`);
    }
    for (const task of ["survivor-task-id-0001", "late-survivor-task-02"]) assert.ok(!logs.join("\n").includes(task));
    rmSync(dir, { recursive: true, force: true });
  }
});


test("an agent's call held for the owner survives a hub restart: the bridge waits on, the answer to the new hub lets it run; always allow outlives another restart", async () => {
  const { dir, home, keys } = makeHome(toolRules([], ["hello-python.greet"], 600));
  cpSync(join(engine, "examples", "tool-plugins", "hello-python"), join(home.plugins, "hello-python"), { recursive: true });
  const listen = `127.0.0.1:${await freePort()}`;
  const env = { ...process.env, AGENT_AUTOLOOP_LANG: "en", DISPLAY: "", WAYLAND_DISPLAY: "" };
  let hub = await serveProcess(dir, undefined, env, listen);
  const agentDir = tempDir("aa-restart-agent-");
  const bridges = new ToolBridges({ url: hub.url, home, lang: "en", log: () => {} });
  const client = new Client({ name: "test-agent", version: "1" });
  const restart = async () => {
    hub.child.kill("SIGKILL");
    await new Promise((r) => hub.child.once("exit", r));
    hub = await serveProcess(dir, undefined, env, listen);
  };
  const cards = async () => ((await (await fetch(`${hub.url}/v1/state`, { headers: { authorization: `Bearer ${keys.owner}` } })).json()) as State).cards;
  const text = (r: unknown) => ((r as CallToolResult).content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("");
  try {
    await new HubClient(hub.url, keys.source).postEvent({ id: "e1", type: "alert.x", subject: "s1" });
    const job = (await new HubClient(hub.url, keys.worker).work({ claim: "c1", wait: 0, running: [], capacity: 1 })).job!;
    const bridge = await bridges.open(job, agentDir, () => [process.pid]); // the relay is this test's child
    const [command, ...args] = bridge.offer.command;
    await client.connect(new StdioClientTransport({ command: command!, args, stderr: "pipe" }));

    // The first use asks; the call is held (600 s) while the hub is killed and started again.
    const held = client.callTool({ name: "hello-python.greet", arguments: { name: "Ada" } });
    const card = await until(async () => (await cards()).find((c) => c.title === "Allow hello-python.greet?" && c.state === "open"), 30_000, "the card");
    await restart();
    const again = await until(async () => (await cards()).find((c) => c.id === card.id && c.state === "open"), 30_000, "the card after the restart");
    assert.equal(again.text, card.text);
    const answered = await fetch(`${hub.url}/v1/cards/${card.id}/answer`, {
      method: "POST", headers: { authorization: `Bearer ${keys.owner}`, "content-type": "application/json" }, body: JSON.stringify({ choice: 1 }),
    });
    assert.equal(answered.status, 200, await answered.text());
    const r = await held;
    assert.deepEqual([r.isError ?? false, text(r)], [false, "hello, Ada"]);

    // "Always allow" is a fact: after one more restart the next call runs without a card.
    await restart();
    const next = await client.callTool({ name: "hello-python.greet", arguments: { name: "Grace" } });
    assert.deepEqual([next.isError ?? false, text(next)], [false, "hello, Grace"]);
    assert.deepEqual((await cards()).filter((c) => c.state === "open"), []);
  } finally {
    await client.close().catch(() => {});
    await bridges.close();
    await hub.stop();
    rmSync(agentDir, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  }
});
