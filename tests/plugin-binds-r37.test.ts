/**
 * Issue 26 hostile round 37 (b): F37b-1 and F37b-2 (the owner "always allowed" a sandboxed plugin whose bind lay in a
 * folder agents write; the sandboxed agent replaced that folder with a link to another repository's `.git/hooks`, and
 * to `~/.ssh`: the plugin wrote a hook the owner's next commit ran, and read the owner's key), F37b-4 (a bind onto
 * `/workspace` ran the agent's `main.py` under the trust given to the plugin's own; one over `/usr/bin` its `python3`).
 * The checks called directly, and a real plugin started by `plugins invoke` with real bubblewrap.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { nodePlugin, probeBwrap, syncManifest, tempDir, toolToml, writePlugin } from "./tools-helpers.js";
import { initHome, runCli } from "./cli-homes.js";
import { bindCovering, checkBinds } from "../src/tools/binds.js";
import { bindCoveredPaths, parseBind } from "../src/tools/sandbox-spec.js";
import { agentFoldersFile } from "../src/worker/agent-folders.js";

test("issue 26 r37 F37b-1, F37b-2 (reported cases: ~/work/data, a bind of a trusted plugin, replaced by the agent with a link to ~/src/proj/.git/hooks, writable, and ~/work/ref with one to ~/.ssh, read-only): a bind whose way crosses a link lying in a folder agents write is refused in any mode; the folder itself, and an owner's link elsewhere, are not", () => {
  const base = tempDir("aa-r37-binds-");
  try {
    const user = join(base, "user");
    const work = join(user, "work");
    const plugin = join(base, "plugins", "p");
    for (const d of [join(work, "data"), join(user, "src", "proj", ".git", "hooks"), join(user, ".ssh"), join(base, "disk"), plugin]) mkdirSync(d, { recursive: true });
    symlinkSync(join(base, "disk"), join(user, "datalink"));
    const ctx = { hidden: [], userHomes: [], agentFolders: [work] };
    const bind = (host: string, readOnly: boolean) => ({ host, relative: false, container: "/data", readOnly });
    const verdicts = () => checkBinds({ mounts: [bind(join(work, "data"), false), bind(join(work, "ref"), true), bind(join(user, "datalink"), false)] }, plugin, ctx).map((b) => [b.refused, b.folder ?? null]);
    symlinkSync(join(user, "src"), join(work, "ref"));
    assert.deepEqual(verdicts(), [[null, null], ["agentLink", join(work, "ref")], [null, null]]);
    rmSync(join(work, "data"), { recursive: true });
    symlinkSync(join(user, "src", "proj", ".git", "hooks"), join(work, "data"));
    rmSync(join(work, "ref"));
    symlinkSync(join(user, ".ssh"), join(work, "ref"));
    assert.deepEqual(verdicts(), [["agentLink", join(work, "data")], ["agentLink", join(work, "ref")], [null, null]]);
    // A link two levels deep in the agent's folder.
    mkdirSync(join(work, "deep"));
    symlinkSync(join(user, ".ssh"), join(work, "deep", "keys"));
    assert.deepEqual(checkBinds({ mounts: [bind(join(work, "deep", "keys"), true)] }, plugin, ctx).map((b) => [b.refused, b.folder ?? null]), [["agentLink", join(work, "deep", "keys")]]);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test("issue 26 r37 F37b-4 (reported cases: binds onto /workspace and /usr/bin): a bind's container path that is, holds or lies in what the sandbox runs or mounts is refused when the manifest is read; one over an install on PATH at start; data paths and device binds are not", () => {
  const dests = ["/workspace", "/workspace/lib", "/usr", "/usr/bin", "/usr/bin/python3", "/etc", "/lib64", "/nix/store", "/proc/self", "/bin", "/sbin"];
  assert.deepEqual(dests.map((d) => parseBind(`/srv/x:${d}:ro`)), dests.map(() => "destination"));
  assert.deepEqual(["/data", "/mnt/models", "/opt/models", "/dev/dri", "/tmp/x", "/work", "/usrdata", "/etcetera"].map((d) => typeof parseBind(`/srv/x:${d}:ro`)), Array(8).fill("object"));
  assert.equal(bindCoveredPaths.includes("/workspace"), true);
  // The plugin's own files may go there (the spec's `./vendor:/workspace/vendor:ro`).
  assert.deepEqual(parseBind("./vendor:/workspace/vendor:ro"), { host: "./vendor", relative: true, container: "/workspace/vendor", readOnly: true });
  const shown = ["/root/.nvm/versions/node/v20/bin", "/home/u/.local/bin"];
  const at = (container: string, source = "/home/u/work/x") => ({ source, container });
  assert.deepEqual(bindCovering([at("/data"), at("/root/.nvm")], shown), at("/root/.nvm"));
  assert.deepEqual(bindCovering([at("/home/u/.local/bin/tool")], shown), at("/home/u/.local/bin/tool"));
  assert.equal(bindCovering([at("/home/u/data"), at("/root/.nvmx"), at("/root/.nvm", "/root/.nvm")], shown), undefined);
});

/** A plugin that writes `text` to `write` (a path inside its sandbox) and says how that went. */
const writer = nodePlugin(`
  const fs = require("node:fs");
  const a = req.params.arguments ?? {};
  let wrote = null;
  if (a.write) { try { fs.writeFileSync(a.write, a.text); wrote = true; } catch (e) { wrote = e.code; } }
  return { jsonrpc: "2.0", id: req.id, result: { wrote } };`);

test("issue 26 r37 F37b-1, the reported run: plugins invoke of a sandboxed plugin whose writable bind an agent replaced with a link to another repository's hooks is refused, naming the link; nothing is written there", async (t) => {
  if (!(await probeBwrap("bwrap")).ok) return t.skip("bubblewrap cannot run here");
  const base = tempDir("aa-r37-binds-cli-");
  try {
    const home = initHome(join(base, "home"), "127.0.0.1:0");
    const work = join(base, "work");
    const hooks = join(base, "src", "proj", ".git", "hooks");
    for (const d of [join(work, "data"), hooks]) mkdirSync(d, { recursive: true });
    mkdirSync(join(home, "worker"), { recursive: true });
    writeFileSync(agentFoldersFile(home), JSON.stringify([work]));
    writePlugin(join(home, "plugins"), "binder", syncManifest("binder", "node", ["main.js"], `[sandbox]\nbinds = [${JSON.stringify(`${join(work, "data")}:/data:rw`)}]\n\n${toolToml("go")}`), { "main.js": writer });
    const go = () => runCli(home, ["plugins", "invoke", "binder.go", "--args", JSON.stringify({ write: "/data/post-commit", text: "#!/bin/sh\nid\n" })]);
    const ok = await go();
    assert.deepEqual([ok.code, ok.out, readFileSync(join(work, "data", "post-commit"), "utf8")], [0, '{"wrote":true}', "#!/bin/sh\nid\n"], ok.err);
    rmSync(join(work, "data"), { recursive: true });
    symlinkSync(hooks, join(work, "data"));
    const r = await go();
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, new RegExp(`plugin binder: the bind .* goes through the link ${join(work, "data").replace(/[.]/g, "\\.")}, which lies in a folder sandboxed agents write`));
    assert.equal(existsSync(join(hooks, "post-commit")), false);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
