/**
 * The key-less legacy callback path is refused unless rules.json opts the plugin in (hostile round 37, F37b-3): a task
 * id is a credential the plugin chose, and a long one can be predictable. A sandboxed agent guessed
 * `invoice-job-0000007` and completed the owner's parked `plugins invoke` with a forged result through
 * `/plugin-callback/<task>`, although the plugin calls back through its keyed `callback_url`. Real child processes of
 * bin/agent-autoloop.js (`npm run build` first), real plugin processes, a real hub over HTTP.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { baseRules, completeJsonLines, hubFixture, until, type Fixture } from "./helpers.js";
import { cliLines as cli, nodePlugin, syncManifest, toolToml, writePlugin } from "./tools-helpers.js";
import { streamCalls } from "./tool-calls-helpers.js";

/**
 * An async plugin that answers `{"task_id": <task>}` and, once a file `go` appears in its folder (at once when `wait`
 * is false), POSTs `body` to `url` (a JS expression: the legacy path, or `req.params.callback_url` plus the id), noting
 * the answer's status and body in `answers`.
 */
function asyncPlugin(task: string, url: string, body: unknown, wait: boolean): string {
  return nodePlugin(`
    const fs = require("node:fs");
    const url = ${url};
    (async () => {
      while (${wait} && !fs.existsSync("go")) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 200));
      const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: ${JSON.stringify(JSON.stringify(body))} });
      fs.appendFileSync("answers", JSON.stringify([res.status, await res.json()]) + "\\n");
    })();
    setInterval(() => {}, 1000);
    return { jsonrpc: "2.0", id: req.id, result: { task_id: ${JSON.stringify(task)} } };`);
}

/** The answers a plugin noted, once there are `n`. */
async function answered(dir: string, n: number): Promise<unknown[]> {
  const read = () => completeJsonLines(join(dir, "answers"));
  await until(() => read().length >= n, 10_000, `${n} answers noted in ${dir}`);
  return read();
}

/** The status of the one tool call of `plugin`, as the stream shows it. */
async function statusOf(f: Fixture, plugin: string): Promise<string | undefined> {
  return (await streamCalls(f)).find((c) => c.plugin === plugin)?.status;
}

const manifest = (name: string, timeoutMs: number) => syncManifest(name, "node", ["main.js"], `[communication]\ntimeout_ms = ${timeoutMs}\n\n${toolToml("job")}`, "async");
const legacyOff = (plugin: string) =>
  `plugin ${plugin}'s task can be completed only through the callback_url it was given: the legacy path /plugin-callback/<task_id> takes no key, and a task id the plugin chose proves nothing. To let this plugin use the legacy path, give it an approvals entry in rules.json naming the plugin alone with "legacy_callbacks": true (any local process that can reach the hub and guess one of its task ids could then complete that task with a result of its choosing)`;

test("F37b-3: a long predictable task id does not open the legacy callback path: 403 naming the fix, the call stays parked and ends through its callback_url; legacy_callbacks opts a plugin in, short ids still need legacy_callback_short_ids", async () => {
  const rules = {
    ...baseRules,
    approvals: [
      { plugin: "invoice-legacy", mode: "auto", legacy_callbacks: true },
      { plugin: "short-legacy", mode: "auto", legacy_callbacks: true },
      { plugin: "short-marked", mode: "auto", legacy_callback_short_ids: true },
    ],
  };
  const f = await hubFixture(rules);
  try {
    const plugins = f.home.plugins;
    mkdirSync(plugins, { recursive: true });
    const hub = f.url.replace("127.0.0.1", "localhost");
    const dir = f.home.dir;
    const real = { status: "success", result: { invoice: 7, total: "120.00" } };
    const forged = { status: "success", result: { invoice: 7, total: "0.00", paid_to: "attacker" } };

    // The reported case: the plugin calls back through its keyed callback_url, once the test lets it.
    const keyed = writePlugin(plugins, "invoice", manifest("invoice", 20_000), { "main.js": asyncPlugin("invoice-job-0000007", 'req.params.callback_url + "invoice-job-0000007"', real, true) });
    const invoked = cli(["plugins", "invoke", "invoice.job"], dir);
    await until(async () => (await statusOf(f, "invoice")) === "parked", 10_000, "the invoice call parked");
    for (const path of ["/plugin-callback/invoice-job-0000007", "/v1/plugins/callback/invoice-job-0000007"]) {
      assert.deepEqual(await f.call("POST", path, null, forged), { status: 403, body: { error: legacyOff("invoice") } }, path);
    }
    assert.equal(await statusOf(f, "invoice"), "parked", "the forged callbacks changed nothing");
    writeFileSync(join(keyed, "go"), "");
    assert.deepEqual(await invoked, { code: 0, out: ['{"invoice":7,"total":"120.00"}'], err: [] });
    assert.deepEqual(await answered(keyed, 1), [[200, { ok: true }]]);
    assert.deepEqual(await f.call("POST", "/plugin-callback/invoice-job-0000007", null, forged), { status: 410, body: { error: "this task has already ended (ok): a callback cannot change it" } });

    // Opted in with legacy_callbacks: a long id through either legacy path completes the task.
    const optedIn = writePlugin(plugins, "invoice-legacy", manifest("invoice-legacy", 20_000), { "main.js": asyncPlugin("invoice-job-0000008", JSON.stringify(`${hub}/plugin-callback/invoice-job-0000008`), real, false) });
    assert.deepEqual(await cli(["plugins", "invoke", "invoice-legacy.job"], dir), { code: 0, out: ['{"invoice":7,"total":"120.00"}'], err: [] });
    assert.deepEqual(await answered(optedIn, 1), [[200, { ok: true }]]);

    // legacy_callbacks alone does not take a short id: that still needs legacy_callback_short_ids (which implies it).
    const short = writePlugin(plugins, "short-legacy", manifest("short-legacy", 3000), { "main.js": asyncPlugin("inv-7", JSON.stringify(`${hub}/v1/plugins/callback/inv-7`), real, false) });
    assert.deepEqual(await cli(["plugins", "invoke", "short-legacy.job"], dir), { code: 1, out: [], err: ["timeout: no callback came within 3000 ms"] });
    assert.deepEqual((await answered(short, 1)).map((a) => [(a as [number, { code: string }])[0], (a as [number, { code: string }])[1].code]), [[403, "tools.callback.legacyShort"]]);
    const marked = writePlugin(plugins, "short-marked", manifest("short-marked", 20_000), { "main.js": asyncPlugin("invoice-job-0000009", JSON.stringify(`${hub}/v1/plugins/callback/invoice-job-0000009`), real, false) });
    assert.deepEqual(await cli(["plugins", "invoke", "short-marked.job"], dir), { code: 0, out: ['{"invoice":7,"total":"120.00"}'], err: [] }, "legacy_callback_short_ids implies legacy_callbacks");
    assert.deepEqual(await answered(marked, 1), [[200, { ok: true }]]);
  } finally {
    await f.close();
  }
});
