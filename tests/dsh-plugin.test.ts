/**
 * The built-in dsh plugin (DeepSeek Harness 0.2.2+). The real `dsh headless --json` is not on the npm registry these
 * tests can reach (only 0.1.x is), so the output here is constructed from DSH's documentation, not recorded: these
 * tests pin the plugin's reading of that documented shape, not the real CLI's behaviour.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import plugin, { atLeast, parseVersion } from "../plugins/dsh/agent.js";
import { engine, tempDir } from "./helpers.js";

const install = "npm install -g @deepseek-ai/dsh@next --allow-scripts=koffi,node-pty,@deepseek-ai/dsh-subprocess-local";

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

test("check: not installed; parsing versions (pre-releases of 0.2.2 count)", () => {
  assert.deepEqual(parseVersion("dsh 0.2.2-rc.1"), [0, 2, 2]);
  assert.equal(atLeast([0, 2, 2], [0, 2, 2]), true);
  assert.equal(atLeast([0, 10, 0], [0, 2, 2]), true);
  assert.equal(atLeast([0, 1, 9], [0, 2, 2]), false);
  const dir = tempDir("aa-dsh-");
  assert.equal(plugin.check!({ program: join(dir, "nope"), command: null }), `DeepSeek Harness (dsh 0.2.2 or newer) is not on PATH: ${install}, or set the agent's "program"`);
});

test("issue 26 round 2 #8 (reported case): check never runs a dsh this user could have written — an agent runs as this user", () => {
  // The reported case: the agent's `program` lives in an agents' working folder; the agent rewrote it.
  const dir = tempDir("aa-dsh-");
  const ran = join(dir, "ran");
  mkdirSync(join(dir, "proj", "bin"), { recursive: true });
  const dsh = join(dir, "proj", "bin", "dsh");
  writeFileSync(dsh, `#!/bin/sh\necho ran >> ${ran}\necho "dsh 0.1.9"\n`);
  chmodSync(dsh, 0o755);
  assert.equal(plugin.check!({ program: dsh, command: null }), null, "not run, so not judged");
  assert.equal(existsSync(ran), false, "check ran a program this user can write");
  // The same dsh found on PATH.
  const viaPath = spawnSync(process.execPath, ["--input-type=module", "-e", `import p from ${JSON.stringify(pathToFileURL(join(engine, "dist", "plugins", "dsh", "agent.js")).href)}; console.log(JSON.stringify(p.check({ program: null, command: null })));`], { encoding: "utf8", env: { PATH: `${join(dir, "proj", "bin")}:/usr/bin:/bin` } });
  assert.equal(viaPath.stdout.trim(), "null", viaPath.stderr);
  assert.equal(existsSync(ran), false, "check ran a dsh found on PATH that this user can write");
});

test("issue 26 round 2 #8: check runs dsh --version only when no folder on the way, no link and no interpreter is writable by this user (as uid 4242)", { skip: process.getuid?.() !== 0 ? "needs root to make files another user cannot write" : false }, () => {
  const uid = 4242;
  // A root-owned tree under /tmp (sticky: 4242 may not rename what root owns there): safe/ holds what 4242 cannot change.
  const root = tempDir("aa-dsh-trust-");
  chmodSync(root, 0o755);
  const safe = join(root, "safe");
  const mine = join(root, "mine");         // 4242's own folder
  mkdirSync(safe, { mode: 0o755 });
  mkdirSync(mine, { mode: 0o755 });
  chownSync(mine, uid, uid);
  const ran = join(mine, "ran");
  writeFileSync(ran, "");
  chownSync(ran, uid, uid);
  const script = (file: string, version: string, interpreter = "/bin/sh", owner = 0) => {
    writeFileSync(file, `#!${interpreter}\necho ${JSON.stringify(file)} >> ${ran}\necho "dsh ${version}"\n`);
    chmodSync(file, 0o755);
    chownSync(file, owner, owner);
    return file;
  };
  const oldSafe = script(join(safe, "dsh-old"), "0.1.9");
  const newSafe = script(join(safe, "dsh-new"), "0.2.2");
  const theirs = script(join(mine, "dsh"), "0.2.2", "/bin/sh", uid);                 // a file 4242 owns
  const linked = join(safe, "dsh-link");                                              // a root link to 4242's file
  symlinkSync(theirs, linked);
  const interp = script(join(mine, "interp"), "0.2.2", "/bin/sh", uid);
  const byInterpreter = script(join(safe, "dsh-interp"), "0.2.2", interp);            // #! names 4242's file
  const byEnv = script(join(safe, "dsh-env"), "0.2.2", "/usr/bin/env fakeinterp");     // env finds 4242's on PATH
  script(join(mine, "fakeinterp"), "0.2.2", "/bin/sh", uid);
  mkdirSync(join(mine, "sub"));
  const underMine = script(join(mine, "sub", "dsh"), "0.2.2");                        // root's file in a folder 4242 owns above
  const groupWritable = join(root, "gw");
  mkdirSync(groupWritable, { mode: 0o777 });
  chmodSync(groupWritable, 0o777);
  const inOpen = script(join(groupWritable, "dsh"), "0.2.2");                         // root's file in a world-writable folder
  const probe = `import p from ${JSON.stringify(pathToFileURL(join(engine, "dist", "plugins", "dsh", "agent.js")).href)};
const out = {};
for (const f of JSON.parse(process.argv[1])) out[f] = p.check({ program: f, command: null });
console.log(JSON.stringify(out));`;
  const files = [oldSafe, newSafe, theirs, linked, byInterpreter, byEnv, underMine, inOpen];
  const r = spawnSync("setpriv", [`--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", process.execPath, "--input-type=module", "-e", probe, JSON.stringify(files)], {
    encoding: "utf8", env: { PATH: `${mine}:/usr/local/bin:/usr/bin:/bin` },
  });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), {
    [oldSafe]: `dsh 0.1.9 is too old (needs 0.2.2 or newer for dsh headless --json): ${install}`,
    [newSafe]: null,
    [theirs]: null, [linked]: null, [byInterpreter]: null, [byEnv]: null, [underMine]: null, [inOpen]: null,
  });
  assert.deepEqual(readFileSync(ran, "utf8").split("\n").filter(Boolean), [oldSafe, newSafe], "only the two nobody but root could write ran");
  rmSync(root, { recursive: true, force: true });
});
