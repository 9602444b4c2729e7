/**
 * MCP tool plugins, proven with the real @modelcontextprotocol/server-everything installed as a plugin: its tools
 * become `<plugin>.<tool>`; the [mcp] block's allowlist, env pass-through, handshake timeout, restart policy and
 * crash-loop limit apply.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { everythingServer, hostFixture, running, until, writePlugin, type HostFixture } from "./tools-helpers.js";


/** An MCP plugin manifest running server-everything over stdio, with `mcp` lines in its [mcp] block. */
function manifest(name: string, mcp: string): string {
  return `manifest_version = 3\nname = "${name}"\nversion = "1.0.0"\nplugin_type = "mcp"\n\n[entry_point]\ncommand = "node"\nargs = [${JSON.stringify(everythingServer)}, "stdio"]\n\n[mcp]\n${mcp}\n`;
}

function install(f: HostFixture, name: string, mcp: string): void {
  writePlugin(f.root, name, manifest(name, mcp));
  f.registry.rescan();
}

test("server-everything as a plugin: its allowed tools are <plugin>.<tool>, called with schema checks and progress", async () => {
  const f = hostFixture();
  try {
    install(f, "every", 'tools_allowlist = { mode = "allow", names = ["echo", "get-sum", "trigger-long-running-operation"] }');
    // Asked as its manifest runs it (the owner's `--run`): the server lies in the engine's node_modules, which the
    // review sandbox's root does not show (issue 26 round 12, F12-6).
    const tools = await f.host.tools("every", { run: true });
    assert.deepEqual(tools.ok && [tools.source, tools.tools.map((x) => x.qualifiedName).sort()], ["mcp", ["every.echo", "every.get-sum", "every.trigger-long-running-operation"]]);
    const echo = await f.host.call("every.echo", { message: "hi" }, { sessionKey: "s" });
    assert.deepEqual(echo.status === "ok" && echo.result, { content: [{ type: "text", text: "Echo: hi" }], isError: false });
    const refused = await f.host.call("every.echo", { message: 5 }, { sessionKey: "s" });
    assert.deepEqual([refused.status, "message" in refused && refused.message], ["refused", "wrong arguments for every.echo: message: must be string"]);
    const hidden = await f.host.call("every.get-env", {}, { sessionKey: "s" });
    assert.deepEqual([hidden.status, "message" in hidden && hidden.message], ["refused", "plugin every's [mcp] tools_allowlist does not export tool get-env"]);
    const progress: unknown[] = [];
    const long = await f.host.call("every.trigger-long-running-operation", { duration: 0.2, steps: 2 }, { sessionKey: "s", onProgress: (p) => progress.push(p) });
    assert.equal(long.status, "ok", JSON.stringify(long));
    assert.deepEqual(progress[0], { percent: 50 }, "progress notifications are relayed as they come");
    const [st] = f.host.statuses();
    assert.deepEqual([st?.plugin, st?.kind, st?.state], ["every", "mcp", "running"]);
  } finally {
    await f.close();
  }
  assert.deepEqual(f.host.statuses().map((s) => s.state), [], "close() forgets every server");
});

test("the default allowlist (mode allow, no names) exports nothing, as the public implementation", async () => {
  const f = hostFixture();
  try {
    install(f, "quiet", "");
    const tools = await f.host.tools("quiet");
    assert.deepEqual(tools.ok && tools.tools, []);
  } finally {
    await f.close();
  }
});

test("env pass-through: the allowed names reach the server, minus denied globs; the caller's other variables never", async () => {
  const f = hostFixture({ env: { ...process.env, MY_TOKEN: "t0k", SECRET_TOKEN: "no", HUB_SECRET: "no", AGENT_AUTOLOOP_OWNER: "no" } });
  try {
    install(f, "env", 'tools_allowlist = { mode = "all" }\nenv_passthrough = { allow = ["MY_TOKEN", "SECRET_TOKEN", "AGENT_AUTOLOOP_OWNER"], deny = ["SECRET_*"] }');
    const r = await f.host.call("env.get-env", {}, { sessionKey: "s" });
    assert.equal(r.status, "ok", JSON.stringify(r));
    const env = JSON.parse((r as { result: { content: { text: string }[] } }).result.content[0]!.text) as Record<string, string>;
    assert.equal(env.MY_TOKEN, "t0k");
    assert.deepEqual(["SECRET_TOKEN", "HUB_SECRET", "AGENT_AUTOLOOP_OWNER"].filter((k) => k in env), []);
  } finally {
    await f.close();
  }
});

test("a crash restarts the server (on_crash, with backoff); more than crash_loop_max crashes in the window is a crash loop", async () => {
  const f = hostFixture({ restartBackoffMs: [50] });
  const states: string[] = [];
  f.host.onStatus((s) => states.push(s.state));
  try {
    install(f, "crashy", 'tools_allowlist = { mode = "all" }\ncrash_loop_max = 2\nautostart = true');
    await f.host.start();
    const pidNow = () => f.host.statuses()[0]?.pid ?? null;
    for (let crash = 1; crash <= 2; crash++) {
      const pid = pidNow()!;
      process.kill(pid, "SIGKILL");
      await until(() => f.host.statuses()[0]?.state === "running" && pidNow() !== pid, 20_000, `restart ${crash}`);
      assert.equal(running(pid), false);
    }
    const ok = await f.host.call("crashy.echo", { message: "still here" }, { sessionKey: "s" });
    assert.equal(ok.status, "ok");
    process.kill(pidNow()!, "SIGKILL");
    await until(() => f.host.statuses()[0]?.state === "crash_loop", 20_000, "the crash loop");
    const refused = await f.host.call("crashy.echo", { message: "x" }, { sessionKey: "s" });
    assert.deepEqual([refused.status, "message" in refused && refused.message], [
      "refused", "plugin crashy crashed 3 times within 60 s and is not restarted again (edit its manifest or restart the tool host to try again)",
    ]);
    assert.deepEqual([states.filter((s) => s === "backoff").length, states.at(-1)], [2, "crash_loop"], "two restarts after a wait, then given up");
  } finally {
    await f.close();
  }
});

test("restart_policy never: a crashed server stays down and says so; a handshake that does not come in time fails clearly", async () => {
  const f = hostFixture();
  try {
    install(f, "once", 'tools_allowlist = { mode = "all" }\nrestart_policy = "never"');
    assert.equal((await f.host.call("once.echo", { message: "a" }, { sessionKey: "s" })).status, "ok");
    process.kill(f.host.statuses()[0]!.pid!, "SIGKILL");
    await until(() => f.host.statuses()[0]?.state === "stopped", 20_000, "the stop");
    const r = await f.host.call("once.echo", { message: "a" }, { sessionKey: "s" });
    assert.deepEqual([r.status, "message" in r && r.message], ["refused", "plugin once has stopped (restart_policy = never)"]);
    writePlugin(f.root, "mute", `manifest_version = 3\nname = "mute"\nversion = "1"\nplugin_type = "mcp"\n[entry_point]\ncommand = "sleep"\nargs = ["300"]\n[mcp]\nhandshake_timeout_ms = 300\nrestart_policy = "never"\n`);
    f.registry.rescan();
    const mute = await f.host.tools("mute", { run: true });
    assert.deepEqual(mute.ok ? null : mute.message, "plugin mute was not ready within 300 ms: MCP error -32001: Request timed out");
    // Not trusted, asked in review (issue 26 round 11, F5): its tools are unknown, and why.
    const reviewed = await f.host.tools("mute");
    assert.match(reviewed.ok && reviewed.unknown?.why || "", /^plugin mute's tools are unknown: .* where it could not answer: plugin mute was not ready within 300 ms: MCP error -32001: Request timed out\. /);
  } finally {
    await f.close();
  }
});
