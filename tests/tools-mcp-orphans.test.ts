/**
 * Issue 26 round 10, Low (reported case kept): an unsandboxed MCP plugin whose server starts a child in a session of
 * its own (`setsid`; the child ignores SIGTERM) left that child running after a SIGKILL of the hub, and after a normal
 * stop; the next start did not end it (round 9's clean-up found only service plugins, by their socket). Every process
 * the tool host starts now carries the host's mark in its environment (src/tools/orphans.ts), inherited by what it
 * starts: the next start on the home ends what a dead host's processes left, and a normal stop ends its own.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeHome, removeAfterKill, serveProcess, until, type ServeProcess } from "./helpers.js";
import { cliLines, processesIn, running } from "./tools-helpers.js";

/**
 * A minimal stdio MCP server (one tool) that first starts a child in a new session, ignoring SIGTERM (plugins/orphmcp):
 * `sleep <its first argument>`.
 */
const server = String.raw`
import json, subprocess, sys
subprocess.Popen(["bash", "-c", "trap '' TERM; exec sleep " + sys.argv[1]], start_new_session=True)
for line in sys.stdin:
    m = json.loads(line)
    mid, meth = m.get("id"), m.get("method")
    if meth == "initialize":
        r = {"protocolVersion": m["params"].get("protocolVersion", "2025-06-18"), "capabilities": {"tools": {}}, "serverInfo": {"name": "orphmcp", "version": "0.1.0"}}
    elif meth == "tools/list":
        r = {"tools": [{"name": "weather", "description": "Today's weather", "inputSchema": {"type": "object"}}]}
    elif meth == "tools/call":
        r = {"content": [{"type": "text", "text": "sunny"}]}
    elif mid is None:
        continue
    else:
        r = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": mid, "result": r}) + "\n"); sys.stdout.flush()
`;

/** How long the child sleeps: a number no other process here uses (found in the process table). */
const seconds = `3602${process.pid}`;

/** The live processes running \`sleep <seconds>\` (the child, once bash exec'd it). */
function sleepers(): number[] {
  return readdirSync("/proc").filter((p) => /^\d+$/.test(p)).map(Number).filter((p) => {
    try {
      return readFileSync(`/proc/${p}/cmdline`, "utf8") === `sleep\0${seconds}\0` && running(p);
    } catch {
      return false;
    }
  });
}

/** Writes the plugin `orphmcp` (this server, started with the host when `autostart`) into `plugins`; its folder. */
function orphmcp(plugins: string, autostart: boolean): string {
  const folder = join(plugins, "orphmcp");
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, "server.py"), server);
  writeFileSync(join(folder, "manifest.toml"), [
    "manifest_version = 3", 'name = "orphmcp"', 'version = "0.1.0"', 'plugin_type = "mcp"', "",
    "[entry_point]", 'command = "python3"', `args = ["server.py", "${seconds}"]`, "", "[mcp]", `autostart = ${autostart}`, 'tools_allowlist = { mode = "all" }', "",
  ].join("\n"));
  return folder;
}

test("issue 26 r10 (reported case): an unsandboxed MCP server's child in a session of its own is ended by the next start after a SIGKILL of the hub, and by a normal stop", { timeout: 120_000 }, async () => {
  const { dir, home } = makeHome();
  const folder = orphmcp(home.plugins, true);
  const hubs: ServeProcess[] = [];
  /** The server's child, once it runs (found by its command line). */
  const child = async () => (await until(() => { const p = sleepers(); return p.length === 1 && p; }, 30_000, () => `one child to run: ${JSON.stringify(sleepers())}`))!;
  try {
    const first = await serveProcess(dir);
    hubs.push(first);
    const killed = await child();
    first.child.kill("SIGKILL");
    await until(() => first.child.exitCode !== null || first.child.signalCode !== null, 10_000, "the hub to die");
    const second = await serveProcess(dir);
    hubs.push(second);
    await until(() => killed.every((pid) => !running(pid)), 15_000, () => `what the killed hub left to end: ${JSON.stringify(killed)}, now ${JSON.stringify(sleepers())}`);
    const own = await child();
    assert.equal(own.filter((p) => killed.includes(p)).length, 0);
    await second.stop();
    await until(() => sleepers().length === 0 && processesIn(folder).length === 0, 15_000, () => `the stopped hub's server and child to end: ${JSON.stringify([...sleepers(), ...processesIn(folder)])}`);
  } finally {
    for (const h of hubs) h.child.kill("SIGKILL");
    for (const pid of [...sleepers(), ...processesIn(folder)]) process.kill(pid, "SIGKILL");
    removeAfterKill(dir);
  }
});

test("issue 26 r10: the owner's `plugins invoke` (a tool host of its own, no hub) ends the MCP server's child in a session of its own when it is done", { timeout: 60_000 }, async () => {
  const { dir, home } = makeHome();
  const folder = orphmcp(home.plugins, false);
  try {
    const r = await cliLines(["plugins", "invoke", "orphmcp.weather"], dir);
    assert.deepEqual([r.code, r.out], [0, ['{"content":[{"type":"text","text":"sunny"}],"isError":false}']], JSON.stringify(r));
    await until(() => sleepers().length === 0 && processesIn(folder).length === 0, 10_000, () => `the server and its child to end: ${JSON.stringify([...sleepers(), ...processesIn(folder)])}`);
  } finally {
    for (const pid of [...sleepers(), ...processesIn(folder)]) process.kill(pid, "SIGKILL");
    removeAfterKill(dir);
  }
});
