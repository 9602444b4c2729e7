/**
 * A mount that comes and goes while a sandbox is launched (seen in full runs: tests/sandbox-mounts.test.ts unmounted a
 * proc mount under /mnt while other tests launched agents and plugins; on a user's machine an unplugged disk under
 * /media, a container volume, an autofs mount). Each launch plans its sandbox from the mount table — an empty tmpfs
 * over every second proc mount, over each other path that shows the hub's home — and bubblewrap sets it up a moment
 * later. When a planned path was gone by then, bwrap could not make its mount point in the read-only root and ended
 * (`bwrap: Can't mkdir …: Read-only file system`): the run failed ("exit code 1"), the tool call failed ("plugin …
 * exited before answering"). The kind: a plan made from a changing table. Now bwrap's status descriptor
 * (`--json-status-fd`) tells a launch whose program never ran from one that ran and failed, and only the former is
 * planned again from the table as it is now and started once more (`sandboxLaunchTriesMax`).
 *
 * The moment between the plan and bwrap is made certain, not raced: the `bwrap` each test gives the hub is a script
 * that, on its first start only, makes the planned path vanish (a real unmount and rmdir, or the rmdir of a hidden
 * folder) and then runs the real bubblewrap, which fails as it did in the full runs; every later start runs the real
 * bubblewrap as it is. Making mounts and folders under /etc needs root: these tests skip, saying so, on another user.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { baseRules, hubFixture, tempDir, untilLatestRun } from "./helpers.js";
import { sandboxKit } from "./sandbox-kit.js";
import { hostFixture, nodePlugin, probeBwrap, syncManifest, toolToml, writePlugin } from "./tools-helpers.js";
import { findProgram } from "../src/sdk/index.js";

const kit = sandboxKit();
const { removed } = kit;

/** Why these tests cannot run here, or null. */
async function cannot(): Promise<string | null> {
  if (process.getuid?.() !== 0) return "making a mount or a folder under /etc needs root (these tests run as root in CI)";
  if (!existsSync("/mnt")) return "no /mnt to make the mount in";
  return (await probeBwrap("bwrap")).ok ? null : "bubblewrap cannot run here";
}

/**
 * A `bwrap` in a new folder that, on its first start whose arguments name `planned` (not the hub's probe of bwrap),
 * runs `vanish` (shell) and then the real bubblewrap; it appends the exit code of each such start to `starts`, one
 * line each. @returns its folder, its path and the file of starts.
 */
function bwrapVanishingOnce(planned: string, vanish: string): { dir: string; path: string; starts: string } {
  const real = findProgram("bwrap", process.env.PATH ?? "");
  assert.ok(real, "bwrap on PATH");
  const dir = realpathSync(tempDir("aa-setup-retry-bin-"));
  removed.push(dir);
  const starts = join(dir, "starts");
  const path = join(dir, "bwrap");
  writeFileSync(path, `#!/bin/sh
planned=no
for a in "$@"; do [ "$a" = '${planned}' ] && planned=yes; done
[ $planned = yes ] || [ -e '${dir}/vanished' ] || exec '${real}' "$@"
if [ ! -e '${dir}/vanished' ]; then : > '${dir}/vanished'; ${vanish}; fi
'${real}' "$@"
code=$?
echo $code >> '${starts}'
exit $code
`);
  chmodSync(path, 0o755);
  return { dir, path, starts };
}

/** The exit codes of the starts of the `bwrap` of `bwrapVanishingOnce`, in order. */
function startsOf(file: string): number[] {
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).map(Number) : [];
}

test("a sandboxed agent whose planned proc mount is unmounted before bwrap sets the sandbox up runs once, in a sandbox planned again (it failed with exit code 1)", async (t) => {
  const why = await cannot();
  if (why) return t.skip(why);
  // A second proc mount: every agent sandbox covers it with an empty tmpfs (issue 26 round 10, Medium 3).
  const base = mkdtempSync("/mnt/aa-setup-retry-");
  removed.push(base);
  const at = join(base, "proc");
  mkdirSync(at);
  execFileSync("mount", ["-t", "proc", "proc", at]);
  kit.cleanups.push(() => {
    try {
      execFileSync("umount", [at]);
    } catch {
      // unmounted by the first bwrap start, as planned
    }
  });
  const fake = bwrapVanishingOnce(at, `umount '${at}' && rmdir '${at}'`);
  kit.setEnv({ PATH: `${fake.dir}:${process.env.PATH ?? ""}` });
  const cwd = realpathSync(tempDir("aa-setup-retry-cwd-"));
  removed.push(cwd);
  // The agent counts its own starts in its folder: it must run once.
  const script = `const fs = require("fs"); fs.appendFileSync("ran", "x"); console.log("Done: ran");`;
  const rules = { ...baseRules, agents: { ...baseRules.agents, bot: { worker: "w1", use: "command", command: [process.execPath, "-e", script] } }, rules: [{ ...baseRules.rules[0], cwd }] };
  const fx = kit.hub(await hubFixture(rules));
  kit.worker(fx);
  await fx.call("POST", "/v1/events", fx.keys.source, { id: "e1", type: "alert.x" });
  const run = (await untilLatestRun(fx, "done", 60_000)).runs[0];
  assert.deepEqual([run.summary, readFileSync(join(cwd, "ran"), "utf8"), startsOf(fake.starts), existsSync(at)], ["Done: ran", "x", [1, 0], false]);
});

test("a sandboxed tool plugin whose planned hidden folder vanishes before bwrap sets the sandbox up answers once, from a sandbox planned again (it failed: exited before answering)", async (t) => {
  const why = await cannot();
  if (why) return t.skip(why);
  // A hidden path under a folder the plugin sandbox's root shows read-only: covered by an empty tmpfs while it exists.
  const gone = mkdtempSync("/etc/aa-setup-retry-");
  kit.cleanups.push(() => rmSync(gone, { recursive: true, force: true }));
  const fake = bwrapVanishingOnce(gone, `rmdir '${gone}'`);
  const h = hostFixture({ bwrap: fake.path, hiddenPaths: [gone] });
  try {
    writePlugin(h.root, "once", syncManifest("once", "node", ["main.js"], `[sandbox]\n\n${toolToml("go")}`), { "main.js": nodePlugin(`return { jsonrpc: "2.0", id: req.id, result: { pid: process.pid } };`) });
    h.registry.rescan();
    const r = await h.host.call("once.go", {}, { sessionKey: "s" });
    assert.deepEqual([r.status, startsOf(fake.starts), existsSync(gone)], ["ok", [1, 0], false], JSON.stringify(r));
  } finally {
    await h.close();
  }
});

test("round 30 review (a regression of the retry): an MCP server or service whose command cannot be spawned ends its start with why, as before, instead of waiting forever for an exit that never comes", async () => {
  const h = hostFixture();
  try {
    writePlugin(h.root, "ghost", `manifest_version = 3\nname = "ghost"\nversion = "1"\nplugin_type = "mcp"\n[entry_point]\ncommand = "/nonexistent-aa-ghost"\n[mcp]\nhandshake_timeout_ms = 2000\nrestart_policy = "never"\n`);
    writePlugin(h.root, "gsvc", `name = "gsvc"\nversion = "0.1.0"\nplugin_type = "service"\n[entry_point]\ncommand = "/nonexistent-aa-gsvc"\n${toolToml("run")}`);
    h.registry.rescan();
    const hung = (what: string) => new Promise<string>((r) => setTimeout(() => r(`${what} still waiting after 60 s`), 60_000).unref());
    const mcp = await Promise.race([h.host.tools("ghost", { run: true }).then((x) => (x.ok ? "ok" : x.message)), hung("the MCP start")]);
    assert.match(mcp, /^plugin ghost was not ready within 2000 ms: /);
    const svc = await Promise.race([h.host.call("gsvc.run", {}, { sessionKey: "s" }).then((x) => x.status), hung("the service call")]);
    assert.notEqual(svc, "ok");
    assert.doesNotMatch(svc, /still waiting/);
  } finally {
    await h.close();
  }
});
