/**
 * A parked async tool call survives a hub restart (issue 16): a real `agent-autoloop serve` child process (from dist/:
 * `npm run build` first) is killed with SIGKILL while calls are parked, and started again on the same home; the
 * callback then completes the call and the waiting caller gets the result, and a deadline that passed meanwhile is a
 * timeout (410). The task ids are nowhere in clear: not in the database file, its WAL, the stream, `why` or the log.
 * Kept apart from tool-calls.test.ts: it runs hub processes, which the kernel's mutation run leaves out.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { makeHome, serveProcess } from "./helpers.js";
import { HubClient, HubError } from "../src/protocol/client.js";
import { callBody, toolRules } from "./tool-calls-helpers.js";

test("a parked call survives a hub restart (a real serve process killed and started again); its task id is never in the database or the log in clear", async () => {
  const { dir, home, keys } = makeHome(toolRules([], ["jobs.*"]));
  let hub = await serveProcess(dir);
  const logs: string[] = [];
  try {
    const client = () => new HubClient(hub.url, null);
    const owner = () => new HubClient(hub.url, keys.owner);
    await new HubClient(hub.url, keys.source).postEvent({ id: "e1", type: "alert.x", subject: "s1" });
    const job = (await new HubClient(hub.url, keys.worker).work({ claim: "c1", wait: 0, running: [], capacity: 1 })).job!;
    const park = async (task: string, timeoutMs: number) => {
      const { call } = await client().toolCall(job.run, job.token, callBody("jobs.run", { builtIn: true }));
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
