/**
 * The built-in dsh plugin (DeepSeek Harness 0.2.2+). The real `dsh headless --json` is not on the npm registry these
 * tests can reach (only 0.1.x is), so the output here is constructed from DSH's documentation, not recorded: these
 * tests pin the plugin's reading of that documented shape, not the real CLI's behaviour.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import plugin, { atLeast, parseVersion } from "../plugins/dsh/agent.js";
import { tempDir } from "./helpers.js";

const turn = { prompt: "do it", session: null, resume: null, cwd: "/w", access: "edit" as const, model: "ignored", effort: "high", command: null, program: null, contextFile: "/r/context.json", folder: "/r" };
const lines = (...events: object[]) => events.map((e) => JSON.stringify(e)).join("\n") + "\n";

test("the command line: headless JSON, the permission mode from access every time, no approvals, --session-id to resume, no model or effort", () => {
  assert.deepEqual(plugin.command(turn), ["dsh", "headless", "--json", "--permission-mode", "workspace-write", "--approval-policy", "never", "do it"]);
  assert.deepEqual(plugin.command({ ...turn, access: "read", resume: "ses-1", program: "/opt/dsh" }),
    ["/opt/dsh", "headless", "--json", "--permission-mode", "read-only", "--approval-policy", "never", "--session-id", "ses-1", "do it"]);
  assert.equal(plugin.command({ ...turn, access: "full" })[4], "danger-full-access");
  assert.equal(plugin.command({ ...turn, prompt: "-rf is a flag" }).at(-1), "\n-rf is a flag", "a prompt is never read as an option");
});

test("a finished run: the session, the final answer, tokens summed over the steps, no cost", () => {
  const out = lines(
    { type: "session", sessionId: "ses-7" },
    { type: "step_end", usage: { inputTokens: 100, outputTokens: 10, cacheReadTokens: 60 } },
    { type: "step_end", usage: { inputTokens: 150, outputTokens: 20, cacheReadTokens: 90 } },
    { type: "final", reason: "completed", text: "Done: fixed it" },
  );
  assert.deepEqual(plugin.read(out, 0, ""), { started: true, session: "ses-7", finished: true, text: "Done: fixed it", usage: { input: 250, output: 30, cached: 150 } });
});

test("a turn that ended while the run goes on is not finished; only final is", () => {
  const running = lines({ type: "session", session_id: "ses-8" }, { type: "step_end", inputTokens: 5, outputTokens: 1 }, { type: "turn_end", reason: "completed" });
  assert.deepEqual(plugin.read(running, null, ""), { started: true, session: "ses-8", usage: { input: 5, output: 1, cached: 0 } });
});

test("a final reason other than completed, an error event, or exit code ≠ 0 is not done", () => {
  const session = { type: "session", sessionId: "s" };
  assert.deepEqual(plugin.read(lines(session, { type: "final", reason: "max-tokens", text: "half" }), 1, ""), { started: true, session: "s", finished: true, error: "DSH did not finish the task: max-tokens" });
  assert.deepEqual(plugin.read(lines(session, { type: "error", error: { code: "MISSING_CREDENTIAL", message: "no key for deepseek" } }, { type: "final", reason: "error" }), 1, ""),
    { started: true, session: "s", finished: true, error: "MISSING_CREDENTIAL: no key for deepseek" });
  assert.deepEqual(plugin.read(lines(session, { type: "final", reason: "completed", text: "Done" }), 1, "boom\n"), { started: true, session: "s", finished: true, error: "boom" });
  assert.deepEqual(plugin.read(lines(session, { type: "final", reason: "completed", text: "  " }), 0, ""), { started: true, session: "s", finished: true, error: "DSH finished without an answer" });
});

test("an unknown session fails before any session event: not started, so the worker opens a new session", () => {
  assert.deepEqual(plugin.read("", 1, "Error: unknown session id ses-x\n"), { started: false, error: "Error: unknown session id ses-x" });
  assert.deepEqual(plugin.read("not json\n", 2, ""), { started: false, error: "dsh exited with code 2 before its final event" });
});

test("check: not installed, too old, new enough (pre-releases of 0.2.2 count)", () => {
  assert.deepEqual(parseVersion("dsh 0.2.2-rc.1"), [0, 2, 2]);
  assert.equal(atLeast([0, 2, 2], [0, 2, 2]), true);
  assert.equal(atLeast([0, 10, 0], [0, 2, 2]), true);
  assert.equal(atLeast([0, 1, 9], [0, 2, 2]), false);
  const dir = tempDir("aa-dsh-");
  const fake = (name: string, version: string) => {
    const f = join(dir, name);
    writeFileSync(f, `#!/bin/sh\necho "${version}"\n`);
    chmodSync(f, 0o755);
    return f;
  };
  const install = "npm install -g @deepseek-ai/dsh@next --allow-scripts=koffi,node-pty,@deepseek-ai/dsh-subprocess-local";
  assert.equal(plugin.check!({ program: join(dir, "nope"), command: null }), `DeepSeek Harness (dsh 0.2.2 or newer) is not on PATH: ${install}, or set the agent's "program"`);
  assert.equal(plugin.check!({ program: fake("old", "0.1.9"), command: null }), `dsh 0.1.9 is too old (needs 0.2.2 or newer for dsh headless --json): ${install}`);
  assert.equal(plugin.check!({ program: fake("rc", "0.2.2-rc.1"), command: null }), null);
  assert.equal(plugin.check!({ program: fake("odd", "unknown"), command: null }), `could not read the version of ${join(dir, "odd")} (dsh --version); this plugin needs 0.2.2 or newer: ${install}`);
});
