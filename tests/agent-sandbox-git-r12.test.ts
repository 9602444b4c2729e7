/**
 * Issue 26 hostile round 12, F12-1, F12-2, F12-7, F12-8: what a sandboxed agent plants in the folder it writes that the
 * owner's own git or tools later run as the hub's user. Each reported case is run as reported: real bubblewrap, real
 * git, a real command agent under the real worker; the owner's git is run afterwards, as the owner would, with a
 * `core.fsmonitor` or hook of the agent's copying the hub's master key into a folder the test reads.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { tempDir } from "./helpers.js";
import { executableParts, GuardLimitError, guardLimits, guardLimitText } from "../src/worker/steering.js";
import { plantedSteering } from "../src/worker/planted.js";
import { asideOf, fsmonitorConfig, leakFolder, owner, ownerRepo, ownerRepoWithHooks, removed, runAgent, sandboxed, tryFn } from "./steering-helpers.js";

const link = "1111111111111111111111111111111111111111";

test("issue 26 r12 F12-1 (reported cases a-e: the 501st gitlink, a gitlink .git linked to .git/modules, an aside name taken first, a missing config.worktree, a gitlink in a submodule's index): the owner's git status runs nothing, each is moved aside to a name the agent cannot know, no git folder is made at the top of .git/modules or .git/worktrees", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const lib = ownerRepo();
  const repo = ownerRepo();
  owner(repo, {}, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "lib");
  owner(repo, {}, "commit", "-qm", "submodule");
  owner(repo, {}, "config", "extensions.worktreeConfig", "true");
  const wt = join(realpathSync(tempDir("aa-r12-wt-")), "wt");
  removed.push(join(wt, ".."));
  owner(repo, {}, "worktree", "add", "-q", wt, "-b", "wtb");
  const leak = leakFolder();
  mkdirSync(join(repo, ".plants"));
  writeFileSync(join(repo, ".plants", "many"), fsmonitorConfig(leak, "many", "\tworktree = ../../zzz\n"));
  writeFileSync(join(repo, ".plants", "modgit"), fsmonitorConfig(leak, "wtlink", `\tworktree = ${repo}/wtl\n`));
  writeFileSync(join(repo, ".plants", "stuck"), fsmonitorConfig(leak, "stuck", "\tworktree = ../../ro\n"));
  writeFileSync(join(repo, ".plants", "nested"), fsmonitorConfig(leak, "nestedlink", "\tworktree = ../../lib/evil\n"));
  writeFileSync(join(repo, ".plants", "wtconfig"), fsmonitorConfig(leak, "wtconfig"));
  writeFileSync(join(repo, ".plants", "wtconfig2"), fsmonitorConfig(leak, "wtconfig2"));
  writeFileSync(join(repo, ".plants", "gitmodules"), ["zzz", "wtl", "ro"].map((p) => `[submodule "${p}"]\n\tpath = ${p}\n\turl = ./${p}\n`).join(""));
  const gitdirOf = (name: string, target: string, gitfile: string) =>
    `mkdir -p ${gitfile.replace(/\/\.git$/, "")} .cache/${name} && git init -q --bare .cache/${name} && cp .plants/${name} .cache/${name}/config && echo "gitdir: ${target}" > ${gitfile}`;
  const script = [
    tryFn,
    `cat .plants/gitmodules >> .gitmodules`,
    // (a) 500 gitlinks with no .git first, the planted one 501st
    `try many sh -c '${gitdirOf("many", "../.cache/many", "zzz/.git")} && { for i in $(seq -w 1 500); do printf "160000 ${link}\\tm/a%s\\n" $i; done; printf "160000 ${link}\\tzzz\\n"; } | git update-index --index-info'`,
    // (b) .git/modules (a mount point before the run) made a git folder, and a gitlink's .git a link to it
    `try modgitdir sh -c 'mkdir -p .git/modules/objects .git/modules/refs/heads && echo "ref: refs/heads/main" > .git/modules/HEAD && cp .plants/modgit .git/modules/config'`,
    `try wtgitdir mkdir -p .git/worktrees/objects`,
    `try wtlink sh -c 'mkdir -p wtl && ln -s "$PWD/.git/modules" wtl/.git && git update-index --add --cacheinfo 160000,${link},wtl'`,
    // (c) the aside name the agent could know, taken first
    `try stuck sh -c '${gitdirOf("stuck", "../.cache/stuck", "ro/.git")} && git update-index --add --cacheinfo 160000,${link},ro && mkdir ro/.git.planted-run-1'`,
    // (d) a missing config.worktree, in the git folder and in the linked worktree's
    `try wtconfig sh -c 'cp .plants/wtconfig .git/config.worktree && cp .plants/wtconfig2 .git/worktrees/wt/config.worktree'`,
    // (e) a gitlink in the submodule's index
    `try nestedlink sh -c 'cd lib && mkdir -p evil ../.cache/nested && git init -q --bare ../.cache/nested && cp ../.plants/nested ../.cache/nested/config && echo "gitdir: ../../.cache/nested" > evil/.git && git update-index --add --cacheinfo 160000,${link},evil'`,
    `echo "Done: tried"`,
  ].join("\n");
  const fx = await runAgent(script, repo);
  const master = { AA_MASTER: fx.home.masterKey };
  owner(repo, master, "status", "--porcelain");
  owner(wt, master, "status", "--porcelain");
  assert.deepEqual(readdirSync(leak), [], "no fsmonitor of the agent's ran");
  assert.deepEqual(readFileSync(join(repo, "tried.txt"), "utf8").trim().split("\n"), [
    "many ok", "modgitdir no", "wtgitdir no", "wtlink ok", "stuck ok", "wtconfig ok", "nestedlink ok",
  ]);
  // The git folders the agent laid out in `.cache/` lose their HEAD too (round 30, F30a-3): no git takes them for a
  // repository there.
  const moved = [".git/config.worktree", ".git/worktrees/wt/config.worktree", "ro/.git", "wtl/.git", "zzz/.git", "lib/evil/.git", ".cache/many/HEAD", ".cache/nested/HEAD", ".cache/stuck/HEAD"].map((p) => join(repo, p));
  for (const p of moved) assert.equal(existsSync(p), false, p);
  const aside = moved.map((p) => asideOf(p, 1));
  assert.deepEqual(readdirSync(join(repo, "ro", ".git.planted-run-1")), [], "the name taken first left as it was");
  const card = (await fx.state()).cards.find((c) => c.kind === "notice");
  assert.equal(card?.title, "The agent wrote files your git would run");
  assert.equal(card.text, moved.map((p, i) => `${p} → moved to ${aside[i]} (move it back once you have read it)`).join("\n"));
});

test("issue 26 r12 F12-2 (reported cases: a nested clone in the project, a cwd that is a folder of repositories): each repository's config, hooks and .git stay out of the agent's reach, its missing editor folders are made; the owner's git status there runs nothing; the agent still commits in each", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const code = realpathSync(tempDir("aa-r12-code-"));
  removed.push(code);
  const made = (path: string) => {
    mkdirSync(path, { recursive: true });
    owner(path, {}, "init", "-q", "-b", "main");
    writeFileSync(join(path, "f"), "x\n");
    owner(path, {}, "add", "f");
    owner(path, {}, "commit", "-qm", "owner");
  };
  made(join(code, "a"));
  made(join(code, "b"));
  made(join(code, "b", "vendor", "lib"));
  const leak = leakFolder();
  const git = `git -c user.name=a -c user.email=a@example.com`;
  const script = [
    tryFn,
    `try nestedconfig git config --file b/vendor/lib/.git/config core.fsmonitor "cp $AA_MASTER ${leak}/nested; echo"`,
    `try topconfig git config --file a/.git/config core.fsmonitor "cp $AA_MASTER ${leak}/a; echo"`,
    `try hook sh -c 'echo x > b/.git/hooks/pre-commit'`,
    `try rename mv b/vendor/lib/.git b/vendor/lib/.git-orig`,
    `try vscode mkdir -p b/vendor/lib/.vscode/x`,
    `try commit ${git} -C b/vendor/lib commit --allow-empty -qm agent`,
    // .git itself is a mount point, and since round 13 (F13-10) its folder too: it cannot be renamed to put a copy
    // with another configuration in its place (the check after the run moves such a copy aside: agent-sandbox-steering)
    `try replace sh -c 'mv a a-moved && mkdir a && cp -a a-moved/.git a/.git && git config --file a/.git/config core.fsmonitor "cp $AA_MASTER ${leak}/replaced; echo"'`,
    `echo "Done: tried"`,
  ].join("\n");
  const fx = await runAgent(script, code);
  const master = { AA_MASTER: fx.home.masterKey };
  for (const r of ["a", "b", "b/vendor/lib"]) owner(join(code, r), master, "status", "--porcelain");
  assert.deepEqual(readdirSync(leak), [], "no fsmonitor of the agent's ran");
  assert.deepEqual(readFileSync(join(code, "tried.txt"), "utf8").trim().split("\n"), ["nestedconfig no", "topconfig no", "hook no", "rename no", "vscode no", "commit ok", "replace no"]);
  assert.equal(existsSync(join(code, "a-moved")), false, "the repository's folder stayed where it was");
  assert.equal((await fx.state()).cards.find((c) => c.kind === "notice"), undefined, "nothing planted");
  assert.equal(owner(join(code, "b", "vendor", "lib"), {}, "log", "-1", "--format=%s").trim(), "agent");
  assert.deepEqual(readdirSync(join(code, "b", "vendor", "lib", ".vscode")), [], "made empty, read-only");
});

test("issue 26 r12 F12-2, the limits: a folder with more folders than the guard walks, or a repository with more checked-out submodules than it guards, is refused naming the folder and the limit (never guarded in part); submodules that are not checked out do not count", () => {
  const folder = realpathSync(tempDir("aa-r12-limit-"));
  removed.push(folder);
  for (const d of ["x", "y", "z/w"]) mkdirSync(join(folder, d), { recursive: true });
  assert.throws(() => executableParts(folder, false, false, { ...guardLimits, folders: 4, gitlinks: 500 }), (e: unknown) => {
    assert.ok(e instanceof GuardLimitError);
    assert.equal(guardLimitText("en", e), `${folder} holds more than 4 folders: the sandbox cannot find every repository in it to guard its .git (what your git would run), so the launch is refused; let the agent write a smaller folder (cwd, "writable")`);
    return true;
  });
  assert.equal(executableParts(folder, false, false, { ...guardLimits, folders: 5, gitlinks: 500 }).mountPoints.length, 0);
  // node_modules is not walked: its folders do not count, and what a package manager put there is no repository kept.
  for (const d of ["node_modules/a/b", "node_modules/c/node_modules/d"]) mkdirSync(join(folder, "x", d), { recursive: true });
  writeFileSync(join(folder, "x", "node_modules", "a", ".git"), "gitdir: /nowhere\n");
  assert.equal(executableParts(folder, false, false, { ...guardLimits, folders: 5, gitlinks: 500 }).mountPoints.length, 0);
  const repo = ownerRepo();
  for (const [i, p] of ["s1", "s2", "s3"].entries()) owner(repo, {}, "update-index", "--add", "--cacheinfo", `160000,${String(i + 1).repeat(40)},${p}`);
  assert.deepEqual(executableParts(repo, false, false, { ...guardLimits, folders: 100, gitlinks: 2 }).mountPoints, [join(repo, ".git")], "gitlinks with no .git need no guard");
  for (const p of ["s1", "s2", "s3"]) {
    mkdirSync(join(repo, p));
    owner(join(repo, p), {}, "init", "-q");
  }
  assert.throws(() => executableParts(repo, false, false, { ...guardLimits, folders: 100, gitlinks: 2 }), (e: unknown) => {
    assert.ok(e instanceof GuardLimitError);
    assert.equal(guardLimitText("zh", e), `仓库 ${repo} 有超过 2 个已检出的子模块，沙箱不能逐个保护它们的 .git，所以不启动`);
    return true;
  });
});

test("issue 26 r12 F12-7 (reported case: core.hooksPath = .githooks in the work tree; husky's .husky/_): the hooks folder stays read-only, the owner's next git commit runs the owner's hook only; a hooks folder the configuration names but that was missing is moved aside after the run", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const repo = ownerRepoWithHooks(".githooks");
  const leak = leakFolder();
  const other = ownerRepo();
  owner(other, {}, "config", "core.hooksPath", ".hooks-later");
  const git = `git -c user.name=a -c user.email=a@example.com`;
  const script = [
    tryFn,
    `try rewrite sh -c 'printf "#!/bin/sh\\ncp \\$AA_MASTER ${leak}/hookspath\\n" > .githooks/pre-commit'`,
    `try add sh -c 'printf "#!/bin/sh\\ncp \\$AA_MASTER ${leak}/added\\n" > .githooks/post-commit && chmod +x .githooks/post-commit'`,
    `try later sh -c 'mkdir -p ${other}/.hooks-later && printf "#!/bin/sh\\ncp \\$AA_MASTER ${leak}/later\\n" > ${other}/.hooks-later/pre-commit && chmod +x ${other}/.hooks-later/pre-commit'`,
    `try commit ${git} commit --allow-empty -qm agent`,
    `echo "Done: tried"`,
  ].join("\n");
  const fx = await runAgent(script, repo, [other]);
  assert.deepEqual(readFileSync(join(repo, "tried.txt"), "utf8").trim().split("\n"), ["rewrite no", "add no", "later ok", "commit ok"]);
  const master = { AA_MASTER: fx.home.masterKey };
  writeFileSync(join(repo, "README.md"), "changed\n");
  owner(repo, master, "commit", "-qam", "owner");
  owner(other, master, "commit", "--allow-empty", "-qm", "owner");
  assert.deepEqual(readdirSync(leak), [], "no hook of the agent's ran");
  assert.equal(readFileSync(join(repo, "hook-ran.txt"), "utf8"), "owner\nowner\n", "the owner's hook ran, for the agent's commit too");
  assert.equal(existsSync(join(other, ".hooks-later")), false);
  asideOf(join(other, ".hooks-later"), 1);
  // husky (v9): `core.hooksPath = .husky/_`, whose scripts run the tracked `.husky/<hook>`: both read-only.
  const husky = ownerRepo();
  mkdirSync(join(husky, ".husky", "_"), { recursive: true });
  owner(husky, {}, "config", "core.hooksPath", ".husky/_");
  const parts = executableParts(husky, false, false);
  for (const d of [".husky/_", ".husky"]) assert.ok(parts.readOnly.includes(join(husky, d)), d);
});

test("issue 26 r12 F12-8 (reported case: Gemini CLI, Cursor, opencode project files; Continue, Zed, Amazon Q, Roo, Kiro, dev containers the same kind): their folders stay read-only (made empty when missing), an existing opencode.jsonc read-only, a new opencode.json or .mcp.json moved aside after the run", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const repo = ownerRepo();
  writeFileSync(join(repo, "opencode.jsonc"), "{}\n");
  const script = [
    tryFn,
    `try gemini sh -c 'mkdir -p .gemini && echo "{}" > .gemini/settings.json'`,
    `try cursor sh -c 'mkdir -p .cursor && echo "{}" > .cursor/mcp.json'`,
    `try opencode-plugin sh -c 'mkdir -p .opencode/plugin && echo x > .opencode/plugin/x.js'`,
    `try continue sh -c 'mkdir -p .continue/mcpServers'`,
    `try zed sh -c 'mkdir -p .zed && echo "{}" > .zed/settings.json'`,
    `try devcontainer sh -c 'mkdir -p .devcontainer && echo "{}" > .devcontainer/devcontainer.json'`,
    `try opencode-jsonc sh -c 'echo "{ \\"mcp\\": {} }" > opencode.jsonc'`,
    `try opencode-json sh -c 'echo "{ \\"mcp\\": {} }" > opencode.json'`,
    `try mcp-json sh -c 'echo "{}" > .mcp.json'`,
    `echo "Done: tried"`,
  ].join("\n");
  const fx = await runAgent(script, repo);
  assert.deepEqual(readFileSync(join(repo, "tried.txt"), "utf8").trim().split("\n"), [
    "gemini no", "cursor no", "opencode-plugin no", "continue no", "zed no", "devcontainer no", "opencode-jsonc no", "opencode-json ok", "mcp-json ok",
  ]);
  for (const d of [".gemini", ".cursor", ".opencode", ".continue", ".zed", ".amazonq", ".roo", ".kiro", ".devcontainer"]) assert.deepEqual(readdirSync(join(repo, d)), [], `${d} made empty`);
  const moved = [".mcp.json", "opencode.json"].map((p) => join(repo, p));
  for (const p of moved) assert.equal(existsSync(p), false, p);
  const aside = moved.map((p) => asideOf(p, 1));
  const card = (await fx.state()).cards.find((c) => c.kind === "notice");
  assert.equal(card?.text, moved.map((p, i) => `${p} → moved to ${aside[i]} (move it back once you have read it)`).join("\n"));
});

test("issue 26 r12 F12-1 (c), (d), the same kinds: a file the configuration includes, missing before the run and made during it, is moved aside; a planted .git whose folder the agent made read-only is moved aside too, the folder's mode put back; nothing new, nothing moved", () => {
  const repo = ownerRepo();
  owner(repo, {}, "config", "include.path", "../team.gitconfig");
  const parts = executableParts(repo, true);
  const guarded = new Set([...parts.mountPoints, ...parts.readOnlyParents, ...parts.readOnly]);
  assert.deepEqual(plantedSteering([repo], guarded, parts.seen, 3), []);
  writeFileSync(join(repo, "team.gitconfig"), "[core]\n\tfsmonitor = id\n");
  mkdirSync(join(repo, "ro"));
  writeFileSync(join(repo, "ro", ".git"), "gitdir: ../.cache/x\n");
  owner(repo, {}, "update-index", "--add", "--cacheinfo", `160000,${link},ro`);
  // As root the move succeeds whatever the mode; as another user (`runuser -u nobody`) it failed before ("stuck").
  chmodSync(join(repo, "ro"), 0o555);
  const planted = plantedSteering([repo], guarded, parts.seen, 3);
  const aside = [join(repo, "team.gitconfig"), join(repo, "ro", ".git")].map((p) => asideOf(p, 3));
  assert.deepEqual(planted, [
    { path: join(repo, "team.gitconfig"), movedTo: aside[0], kind: "moved" },
    { path: join(repo, "ro", ".git"), movedTo: aside[1], kind: "moved" },
  ]);
  assert.equal(statSync(join(repo, "ro")).mode & 0o777, 0o555);
  chmodSync(join(repo, "ro"), 0o755);
});

test("issue 26 r12 F12-1, the same kind: in a linked worktree (its .git a gitfile, its index in .git/worktrees/<id>), a gitlink planted with a .git is found after the run and moved aside", () => {
  const repo = ownerRepo();
  const wt = join(realpathSync(tempDir("aa-r12-lwt-")), "wt");
  removed.push(join(wt, ".."));
  owner(repo, {}, "worktree", "add", "-q", wt, "-b", "wtb");
  const parts = executableParts(wt, true);
  const guarded = new Set([...parts.mountPoints, ...parts.readOnlyParents, ...parts.readOnly]);
  assert.deepEqual(plantedSteering([wt], guarded, parts.seen, 5), []);
  mkdirSync(join(wt, "sub"));
  writeFileSync(join(wt, "sub", ".git"), "gitdir: ../.cache/x\n");
  owner(wt, {}, "update-index", "--add", "--cacheinfo", `160000,${link},sub`);
  const planted = plantedSteering([wt], guarded, parts.seen, 5);
  assert.deepEqual(planted, [{ path: join(wt, "sub", ".git"), movedTo: asideOf(join(wt, "sub", ".git"), 5), kind: "moved" }]);
});

test("issue 26 r12 F12-2, the same kind: a git folder a gitfile names in the writable folder (not a mount point) whose parent the agent renamed and put back as a copy with its own configuration is moved aside whole", () => {
  const folder = realpathSync(tempDir("aa-r12-sep-"));
  removed.push(folder);
  mkdirSync(join(folder, "store"));
  owner(folder, {}, "init", "-q", "--separate-git-dir", join(folder, "store", "g"), join(folder, "w"));
  const parts = executableParts(folder, true);
  const guarded = new Set([...parts.mountPoints, ...parts.readOnlyParents, ...parts.readOnly]);
  assert.ok(parts.readOnly.includes(join(folder, "store", "g", "config")));
  assert.deepEqual(plantedSteering([folder], guarded, parts.seen, 4), []);
  execFileSync("sh", ["-c", "mv store store2 && mkdir store && cp -a store2/g store/g && printf '[core]\\n\\tfsmonitor = id\\n' >> store/g/config"], { cwd: folder });
  const planted = plantedSteering([folder], guarded, parts.seen, 4);
  assert.deepEqual(planted, [{ path: join(folder, "store", "g"), movedTo: asideOf(join(folder, "store", "g"), 4), kind: "moved" }]);
});
