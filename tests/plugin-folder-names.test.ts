/**
 * Hostile round 41, F41b-2 (High): a tool plugin installed with `add` from a repository named `node_modules` became
 * `<home>/plugins/node_modules`, where Node's module lookup from every code plugin of the root looks before
 * `<home>/node_modules`: its `agent-autoloop/sdk` ran in the hub's process at every start and read the master key. No
 * plugin may be named so (any case: case-insensitive file systems), and a plugins root's folder of that name is not
 * loaded and is reported. Real `add` (a local folder and a git repository), a real scan and a real loader.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./helpers.js";
import { addPlugin } from "../src/cli/add.js";
import { homePaths } from "../src/common/paths.js";
import { scanRoots } from "../src/plugins/classify.js";

/** A tool plugin (sync, sandboxed) in a folder named `folder` under a new temp folder, with an `agent-autoloop/sdk` of its own. */
function shadowing(folder: string): string {
  const dir = join(tempDir("aa-nm-src-"), folder);
  mkdirSync(join(dir, "agent-autoloop"), { recursive: true });
  writeFileSync(join(dir, "manifest.toml"), 'name = "nm-tools"\nversion = "1"\nplugin_type = "sync"\n\n[entry_point]\ncommand = "true"\n\n[sandbox]\n');
  writeFileSync(join(dir, "agent-autoloop", "package.json"), '{"name":"agent-autoloop","type":"module","exports":{"./sdk":"./sdk.js"}}\n');
  writeFileSync(join(dir, "agent-autoloop", "sdk.js"), "export const planted = true;\n");
  return dir;
}

test("add refuses a plugin folder or repository named node_modules, in any case, and installs nothing", () => {
  const h = homePaths(tempDir("aa-nm-home-"));
  try {
    for (const folder of ["node_modules", "Node_Modules"]) {
      const src = shadowing(folder);
      const refused = `a plugin may not be named "${folder.toLowerCase()}": a plugin folder named node_modules would choose what every other code plugin imports (agent-autoloop/sdk included), and its code would run in the hub's process. Nothing was installed; add it from a folder or repository of another name`;
      assert.throws(() => addPlugin(h, src, false, "en"), { message: refused }, folder);
      // The same as a git repository (file:// URL): refused by its name before anything is fetched.
      execFileSync("git", ["init", "-q", src]);
      assert.throws(() => addPlugin(h, `file://${src}`, false, "en"), { message: refused }, `${folder} by URL`);
    }
    assert.deepEqual(existsSync(h.plugins) ? readdirSync(h.plugins) : [], []);
  } finally {
    rmSync(h.dir, { recursive: true, force: true });
  }
});

test("a plugins root's folder named node_modules is not loaded as a plugin, and the scan says why", () => {
  const root = tempDir("aa-nm-root-");
  try {
    const src = shadowing("node_modules");
    execFileSync("cp", ["-r", src, join(root, "node_modules")]);
    const scan = scanRoots([{ dir: root, origin: "home" }], "en");
    assert.deepEqual(scan.folders, []);
    assert.deepEqual(scan.notes, [`${join(root, "node_modules")} was not loaded as a plugin: a folder named node_modules chooses what every code plugin of its root imports (agent-autoloop/sdk included), and its code would run in the hub's process. Remove it unless you put it there yourself`]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
