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
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
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

// Round 42, F42b-1 (an SDK planted above a plugins root): tests/plugin-imports.test.ts.

test("hostile round 42, F42b-2 (reported case: a folder that looks like a bare repository installed what its objects held): add copies a local folder without .git as the files it shows", () => {
  const base = tempDir("aa-bare-");
  const h = homePaths(tempDir("aa-bare-home-"));
  try {
    const work = join(base, "work");
    mkdirSync(work);
    execFileSync("git", ["init", "-q", work]);
    writeFileSync(join(work, "channel.js"), "export default async function channel() {}\n");
    const visible = '{ "id": "bare2", "name": "Notes panel", "version": "0.1.0", "apiVersion": "1.0" }\n';
    writeFileSync(join(work, "plugin.json"), visible);
    execFileSync("git", ["-C", work, "add", "."]);
    execFileSync("git", ["-C", work, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "x"]);
    const bare = join(base, "bare2");
    execFileSync("git", ["clone", "-q", "--bare", work, bare]);
    writeFileSync(join(bare, "plugin.json"), visible);
    addPlugin(h, bare, false, "en");
    const installed = join(h.plugins, "bare2");
    assert.equal(existsSync(join(installed, "channel.js")), false, "nothing from the objects");
    assert.equal(readFileSync(join(installed, "plugin.json"), "utf8"), visible);
    assert.equal(existsSync(join(installed, "HEAD")), true, "the files it shows, copied");
  } finally {
    rmSync(base, { recursive: true, force: true });
    rmSync(h.dir, { recursive: true, force: true });
  }
});

test("hostile round 42, F42b-3 (reported case: a sandboxed tool plugin's folder that is also a code plugin): plugins inspect says that code runs in the hub's process, unsandboxed", async () => {
  const { makeHome } = await import("./helpers.js");
  const { cliLines } = await import("./tools-helpers.js");
  const made = makeHome();
  try {
    const dir = join(made.home.plugins, "twofold");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "manifest.toml"), 'name = "twofold"\nversion = "1"\nplugin_type = "sync"\n\n[entry_point]\ncommand = "true"\n\n[sandbox]\n');
    writeFileSync(join(dir, "channel.js"), "export default async function channel() {}\n");
    const r = await cliLines(["plugins", "inspect", "twofold"], made.dir);
    assert.ok(r.out.includes("  ⚠ this folder is also a code plugin (channel): that code runs in the hub's process, with no sandbox, whatever [sandbox] above says"), r.out.join("\n"));
  } finally {
    rmSync(made.dir, { recursive: true, force: true });
  }
});
