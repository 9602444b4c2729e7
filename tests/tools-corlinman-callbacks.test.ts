/**
 * corlinman's async plugins, unchanged, against a running hub (issue 34 #2, #3, #4): fixtures written here in the
 * manner of corlinman's docs and QA material — short task ids (`task_xyz789`, `abc-123`), the legacy
 * `/plugin-callback/<task_id>` path of its docs, a callback body without `status`, an id reused after its task ended.
 * Real child processes of bin/agent-autoloop.js (`npm run build` first), real plugin processes, a real hub over HTTP.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { baseRules, completeJsonLines, hubFixture, makeHome, until } from "./helpers.js";
import { cliLines as cli, nodePlugin, syncManifest, toolToml, writePlugin } from "./tools-helpers.js";

/**
 * An async plugin as corlinman's docs write it: it answers `{"task_id": <task>}`, then POSTs its result to `url(task)`
 * (`<hub>/plugin-callback/<task>`, the docs' legacy path, or the `callback_url` it was sent plus the id) with `body`,
 * `times` times, noting each answer's status and body in `answers` (one JSON line each; the call's process may be
 * ended before it notes the last, once its caller has the result).
 */
function docsAsync(task: string, url: string, body: unknown, times = 1): string {
  return nodePlugin(`
    const url = ${url};
    require("node:fs").writeFileSync("callback_url", req.params.callback_url ?? "");
    (async () => {
      for (let i = 0; i < ${times}; i++) {
        await new Promise((r) => setTimeout(r, 200));
        const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: ${JSON.stringify(JSON.stringify(body))} });
        require("node:fs").appendFileSync("answers", JSON.stringify([res.status, await res.json()]) + "\\n");
      }
    })();
    setInterval(() => {}, 1000);
    return { jsonrpc: "2.0", id: req.id, result: { task_id: ${JSON.stringify(task)} } };`);
}

const answers = (dir: string): unknown[] => completeJsonLines(join(dir, "answers"));

/** The answers a plugin noted, once there are `n` (a plugin notes its answer after the hub took it: a moment later). */
async function answered(dir: string, n: number): Promise<unknown[]> {
  await until(() => answers(dir).length >= n, 10_000, `${n} answers noted in ${dir}`);
  return answers(dir);
}

test("issue 34 #2-#4: short task ids through callback_url, the legacy path only for a plugin rules.json marks, a body without status, an id reused after its end, 410 once ended", async () => {
  const rules = { ...baseRules, approvals: [{ plugin: "docs-marked", mode: "auto", legacy_callback_short_ids: true }] };
  const f = await hubFixture(rules);
  try {
    const plugins = f.home.plugins;
    mkdirSync(plugins, { recursive: true });
    const legacy = JSON.stringify(`${f.url.replace("127.0.0.1", "localhost")}/plugin-callback/task_xyz789`);
    const docsBody = { status: "success", result: { content: "done" } };
    const manifest = (name: string) => syncManifest(name, "node", ["main.js"], `[communication]\ntimeout_ms = 3000\n\n${toolToml("job")}`, "async");
    // The docs' plugin, not marked: its legacy callback with a short id is refused (403, naming the fix), the call times out.
    const unmarked = writePlugin(plugins, "docs-async", manifest("docs-async"), { "main.js": docsAsync("task_xyz789", legacy, docsBody) });
    // The same, marked in rules.json: the legacy path takes it; calling it again reuses the id after its task ended.
    writePlugin(plugins, "docs-marked", manifest("docs-marked"), { "main.js": docsAsync("task_xyz789", legacy, docsBody) });
    // Through the callback_url it was sent: any id works, no mark needed; a body without status is the result whole.
    const keyed = writePlugin(plugins, "keyed", manifest("keyed"), { "main.js": docsAsync("abc-123", "req.params.callback_url + \"abc-123\"", { content: "plain" }) });
    const dir = f.home.dir;

    assert.deepEqual(await cli(["plugins", "invoke", "docs-async.job"], dir), { code: 1, out: [], err: ["timeout: no callback came within 3000 ms"] });
    assert.deepEqual(await answered(unmarked, 1), [[403, {
      error: "plugin docs-async's task id is shorter than 16 characters: only the callback_url it was given can complete it. To let it use the legacy path /plugin-callback/<task_id>, give it an approvals entry in rules.json naming the plugin alone with \"legacy_callback_short_ids\": true (any local process that can reach the hub could then guess and complete such a task)",
      code: "tools.callback.legacyShort", params: { plugin: "docs-async", min: 16 },
    }]]);

    assert.deepEqual(await cli(["plugins", "invoke", "docs-marked.job"], dir), { code: 0, out: ['{"content":"done"}'], err: [] });
    assert.deepEqual(await cli(["plugins", "invoke", "docs-marked.job"], dir), { code: 0, out: ['{"content":"done"}'], err: [] }, "task_xyz789 again, after its first task ended: a new task");

    assert.deepEqual(await cli(["plugins", "invoke", "keyed.job"], dir), { code: 0, out: ['{"content":"plain"}'], err: [] });
    // The same callback again, the task ended: 410. The callback_url is <hub>/v1/plugins/callback/<key>/.
    const callbackUrl = readFileSync(join(keyed, "callback_url"), "utf8");
    assert.match(callbackUrl, new RegExp(`^${f.url}/v1/plugins/callback/[A-Za-z0-9_-]{32}/$`));
    assert.deepEqual(await f.call("POST", `${callbackUrl.slice(f.url.length)}abc-123`, null, { content: "again" }), { status: 410, body: { error: "this task has already ended (ok): a callback cannot change it" } });
    assert.deepEqual(await f.call("POST", `${callbackUrl.slice(f.url.length)}abc-124`, null, { content: "another id" }), { status: 404, body: { error: "no such task" } }, "the key is bound to its task id");
    // Without the key, the short id of an ended task on the legacy path gets 410 as with a key (the 403 that names
    // the plugin is only for a parked task); a made-up key is unknown.
    assert.deepEqual(await f.call("POST", "/plugin-callback/abc-123", null, { content: "forged" }), { status: 410, body: { error: "this task has already ended (ok): a callback cannot change it" } });
    assert.deepEqual(await f.call("POST", `/v1/plugins/callback/${"A".repeat(32)}/abc-123`, null, { content: "forged" }), { status: 404, body: { error: "no such task" } });
  } finally {
    await f.close();
  }
});

test("issue 34 #5: a service plugin whose manifest lists no tools: list says its tools are unknown, doctor warns how to offer them", async () => {
  const made = makeHome(baseRules);
  try {
    mkdirSync(made.home.plugins, { recursive: true });
    writePlugin(made.home.plugins, "bare-service", 'name = "bare-service"\nversion = "0.1.0"\nplugin_type = "service"\n\n[entry_point]\ncommand = "node"\nargs = ["main.mjs"]\n');
    // issue 34 #7: a sandboxed async plugin with the default network = "none" cannot call back: doctor says so
    writePlugin(made.home.plugins, "boxed-async", syncManifest("boxed-async", "node", ["main.js"], `[sandbox]\n\n${toolToml("job")}`, "async"));
    writePlugin(made.home.plugins, "open-async", syncManifest("open-async", "node", ["main.js"], `[sandbox]\nnetwork = "host"\n\n${toolToml("job")}`, "async"));
    const list = await cli(["plugins", "list"], made.dir);
    assert.deepEqual(list.out.filter((l) => l.startsWith("bare-service")).map((l) => l.replace(/ +/g, " ")), ["bare-service 0.1.0 service (tools unknown: a rule's tools must name each) (home) ok"]);
    const doctor = await cli(["plugins", "doctor"], made.dir);
    assert.ok(doctor.out.some((l) => l.includes("warn tools: the manifest lists no tools and PluginBridge cannot be asked: its tools are unknown; a rule's tools must name each as bare-service.<tool> (a * offers none)")), doctor.out.join("\n"));
    assert.deepEqual(doctor.out.filter((l) => l.includes("callback")).map((l) => l.trim()), ['warn callback: boxed-async is async and sandboxed with network = "none": it cannot reach the hub to call back; set network = "host" in its [sandbox], or do not sandbox it']);
  } finally {
    rmSync(made.dir, { recursive: true, force: true });
  }
});
