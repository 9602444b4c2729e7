/**
 * Issue 26 round 39, F39a-3: an agent ended by a signal was read as "exit code 128" whatever the signal, sandboxed or
 * not (the worker gave the plugin `code ?? 128`); the docs promise it is recorded as that signal. Now the plugin reads
 * the code as a shell gives it, 128 + the signal's number (supervise.ts `shellCode`).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { realpathSync } from "node:fs";
import { baseRules, hubFixture, tempDir, until } from "./helpers.js";
import { sandboxKit } from "./sandbox-kit.js";
import { shellCode } from "../src/worker/supervise.js";

const kit = sandboxKit();

for (const [name, extra] of [["sandboxed", {}], ["with \"network\": \"host\"", { network: "host" }], ["without the sandbox", { sandbox: false }]] as const) {
  test(`issue 26 r39 F39a-3 (reported case: SIGSEGV, ${name}): the run's error says exit code 139, not 128`, async () => {
    const cwd = realpathSync(tempDir("aa-signal-"));
    kit.removed.push(cwd);
    const rules = { ...baseRules, agents: { ...baseRules.agents, bot: { worker: "w1", use: "command", command: [process.execPath, "-e", "process.kill(process.pid, 'SIGSEGV')"], ...extra } }, rules: [{ ...baseRules.rules[0], cwd }] };
    const fx = kit.hub(await hubFixture(rules));
    kit.worker(fx);
    await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
    const run = await until(async () => (await fx.state()).runs.find((r) => r.error !== null), 30_000, "the run's error");
    assert.equal(run.error, "exit code 139");
  });
}

test("shellCode: the code itself, else 128 + the signal's number", () => {
  assert.equal(shellCode({ code: 3, signal: null, error: null }), 3);
  assert.equal(shellCode({ code: null, signal: "SIGKILL", error: null }), 137);
  assert.equal(shellCode({ code: null, signal: "SIGTERM", error: null }), 143);
  assert.equal(shellCode({ code: null, signal: null, error: null }), 128);
});
