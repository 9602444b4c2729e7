/**
 * Plugin interpreters start without the user's own module paths (issue 26, finding 2): an unsandboxed plugin runs as
 * the hub's user, and code planted in that user's site-packages (by an agent with `"sandbox": false`, or before the
 * sandbox kept the home read-only) would run with the hub's rights at every call. Python gets `PYTHONNOUSERSITE=1`,
 * which a manifest cannot undo; the caller's `NODE_PATH` never reaches a plugin, not even through `env_passthrough`.
 */
import { test, afterEach } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdirSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { examples, hostFixture, syncManifest, tempDir, toolToml, writePlugin } from "./tools-helpers.js";
import { pluginEnv } from "../src/tools/env.js";
import { readManifest } from "../src/tools/manifest.js";

const removed: string[] = [];
afterEach(() => {
  for (const p of removed.splice(0)) rmSync(p, { recursive: true, force: true });
});

const pyVersion = execFileSync("python3", ["-c", "import sys; print('%d.%d' % sys.version_info[:2])"], { encoding: "utf8" }).trim();

test("a .pth in the user's site-packages does not run in hello-python (no [sandbox]), nor in a plugin whose manifest sets PYTHONNOUSERSITE empty", async () => {
  const home = realpathSync(tempDir("aa-user-home-"));
  const leak = realpathSync(tempDir("aa-leak-"));
  removed.push(home, leak);
  const site = join(home, ".local", "lib", `python${pyVersion}`, "site-packages");
  mkdirSync(site, { recursive: true });
  writeFileSync(join(site, "aa-planted.pth"), `import os; open(${JSON.stringify(join(leak, "ran"))}, "a").write(os.environ.get("AA_WHO", "?") + "\\n")\n`);
  const f = hostFixture({ env: { ...process.env, HOME: home } });
  try {
    cpSync(join(examples, "hello-python"), join(f.root, "hello-python"), { recursive: true });
    writePlugin(f.root, "undoes", syncManifest("undoes", "python3", [join(examples, "hello-python", "main.py")], `[entry_point.env]\nPYTHONNOUSERSITE = ""\nAA_WHO = "undoes"\n\n${toolToml("greet")}`));
    f.registry.rescan();
    for (const tool of ["hello-python.greet", "undoes.greet"]) {
      const r = await f.host.call(tool, { name: "Ada" }, { sessionKey: "s" });
      assert.equal(r.status === "ok" && JSON.stringify(r.result), '{"content":"hello, Ada"}', JSON.stringify(r));
    }
    assert.deepEqual(readdirSync(leak), [], "the planted .pth did not run");
  } finally {
    await f.close();
  }
});

test("the caller's NODE_PATH never reaches a plugin, even listed in env_passthrough; PYTHONNOUSERSITE is always 1, and Python's cache of the plugin's folder is never read (a manifest cannot undo either)", () => {
  const m = readManifest(new TextEncoder().encode(`manifest_version = 3\nname = "m"\nversion = "1"\nplugin_type = "mcp"\n[entry_point]\ncommand = "node"\n[entry_point.env]\nPYTHONNOUSERSITE = "0"\nPYTHONDONTWRITEBYTECODE = ""\nPYTHONPYCACHEPREFIX = "__pycache__"\n[mcp]\nenv_passthrough = { allow = ["NODE_PATH", "MY_TOKEN"] }\n`), "en");
  assert.ok(m.ok, JSON.stringify(m));
  assert.deepEqual(pluginEnv({ PATH: "/bin", HOME: "/home/u", NODE_PATH: "/home/u/.node_modules", MY_TOKEN: "t" }, m.manifest), {
    PATH: "/bin", HOME: "/home/u", MY_TOKEN: "t", PYTHONNOUSERSITE: "1", PYTHONDONTWRITEBYTECODE: "1", PYTHONPYCACHEPREFIX: "/dev/null/agent-autoloop-pycache", TSX_DISABLE_CACHE: "1",
  });
});
