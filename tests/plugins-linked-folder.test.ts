/**
 * Issue 26 round 9, High (reported case kept): the owner made a plugin folder a symbolic link to a folder of a project
 * (`ext/devsvc -> /srv/proj/devsvc`); an agent working in that project rewrote the plugin's code, and the hub ran it
 * as itself (the service restarted by the watcher, a sync plugin at the owner's next `plugins invoke`) and the
 * master key was taken. The kind: what the hub runs must lie inside a plugin root, which sandboxes keep read-only or
 * hide. A plugin folder that is a link leading out of its root (or nowhere) is left out, for every kind, and said;
 * a plugin file with another name (a hard link, found by the re-test 9b) refuses its plugin.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { linkSync, mkdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hubFixture, tempDir, until } from "./helpers.js";
import { copyExample } from "./declarative-helpers.js";
import { cliLines as cli, nodePlugin, syncManifest, toolToml, writePlugin } from "./tools-helpers.js";
import type { Plugins } from "../src/protocol/responses.js";

test("issue 26 r9 (reported case): a plugin folder linked from a project outside its root is not loaded, of any kind, and the hub says why; a link that stays in the root loads", async () => {
  const logs: string[] = [];
  const f = await hubFixture(undefined, {}, "", { log: (l: string) => logs.push(l) });
  const proj = realpathSync(tempDir("aa-linked-proj-"));
  try {
    const plugins = f.home.plugins;
    mkdirSync(plugins, { recursive: true });
    const echo = nodePlugin(`return { jsonrpc: "2.0", id: req.id, result: { hi: true } };`);
    // In the project (where an agent works): a tool plugin and a declarative one, each linked into the home's root.
    writePlugin(proj, "devplug", syncManifest("devplug", "node", ["main.js"], toolToml("hi")), { "main.js": echo });
    copyExample(proj, "devdecl");
    symlinkSync(join(proj, "devplug"), join(plugins, "devplug"));
    symlinkSync(join(proj, "devdecl"), join(plugins, "devdecl"));
    symlinkSync(join(proj, "gone"), join(plugins, "dangling"));
    // Inside the root: a folder under a dot name (never scanned itself) and a link to it, which stays in the root.
    writePlugin(plugins, ".kept", syncManifest("kept", "node", ["main.js"], toolToml("hi")), { "main.js": echo });
    symlinkSync(join(plugins, ".kept"), join(plugins, "kept"));
    // Round 9b: a plugin in the root whose code is a hard link to a file of the project (written through that name).
    writePlugin(plugins, "hardplug", syncManifest("hardplug", "node", ["main.js"], toolToml("hi")));
    writeFileSync(join(proj, "hard.js"), echo);
    linkSync(join(proj, "hard.js"), join(plugins, "hardplug", "main.js"));

    // The home's plugins (the built-in ones are listed too).
    const home = async () => ((await f.call("GET", "/v1/plugins", f.keys.owner)).body as Plugins).filter((p) => p.origin === "home");
    const ids = async () => (await home()).map((p) => `${p.kind}:${p.manifest.id}:${p.status}`).sort();
    await until(async () => (await ids()).includes("tool:kept:loaded"), 10_000, "the linked plugin inside the root to load");
    assert.deepEqual(await ids(), ["tool:hardplug:rejected", "tool:kept:loaded"]);
    assert.deepEqual((await home()).find((p) => p.manifest.id === "hardplug")?.errors, [
      `${join(plugins, "hardplug")}: main.js in the plugin's folder has 2 names (a hard link), not all of them in the plugin's folder: whoever can write where another name lies could change code the hub runs, so the plugin is not used; copy the file instead of linking it (pnpm: package-import-method=copy)`,
    ]);
    const tools = ((await f.call("GET", "/v1/tools", f.keys.owner)).body as { name: string }[]).map((t) => t.name);
    assert.deepEqual(tools, ["kept.hi"]);
    const said = (folder: string, target: string) =>
      `${join(plugins, folder)} is a symbolic link to ${target}, outside its plugin root ${plugins}: it was not loaded (an agent that can write there could change code the hub runs). Move or copy the plugin into the root, or name the folder holding it with \`serve --plugins\``;
    await until(() => logs.some((l) => l.includes(said("devdecl", join(proj, "devdecl")))), 10_000, () => `the log to say why: ${logs.join("\n")}`);
    for (const line of [said("devdecl", join(proj, "devdecl")), said("devplug", join(proj, "devplug"))]) {
      assert.equal(logs.filter((l) => l.includes(line)).length, 1, `said once: ${line}\n${logs.join("\n")}`);
    }
    // Round 29, F29b-2: `plugins list` and `plugins inspect` say so too (the log alone did, with the hub running).
    const listed = await cli(["plugins", "list"], f.home.dir);
    for (const line of [said("devdecl", join(proj, "devdecl")), said("devplug", join(proj, "devplug"))]) assert.equal(listed.err.includes(line), true, `${line}\n${listed.err.join("\n")}`);
    const inspected = await cli(["plugins", "inspect", "devdecl"], f.home.dir);
    assert.equal(inspected.code, 1);
    assert.equal(inspected.err.includes(said("devdecl", join(proj, "devdecl"))), true, inspected.err.join("\n"));
    // The owner's own call of the linked tool: refused as unknown, nothing of the project runs.
    const invoked = await cli(["plugins", "invoke", "devplug.hi", "--args", "{}"], f.home.dir);
    assert.notEqual(invoked.code, 0, JSON.stringify(invoked));
    assert.match(invoked.err.join("\n"), /devplug/);
  } finally {
    await f.close();
    rmSync(proj, { recursive: true, force: true });
  }
});
