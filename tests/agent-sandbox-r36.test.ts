/**
 * Issue 26, the round-35 review's open findings (review-r35: W1, W2, W3, FF-1, HL-3) and hostile round 36: the guard
 * and the check after a run called directly, as in agent-sandbox-r35.test.ts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { leakFolder, owner, ownerRepo, removed, runAgent, sandboxed, tryFn } from "./steering-helpers.js";
import { executableParts } from "../src/worker/steering.js";
import { plantedSteering } from "../src/worker/planted.js";
import { hardLinked, hardLinkEntriesMax } from "../src/worker/hard-links.js";
import { tempDir } from "./helpers.js";

const guardedOf = (parts: ReturnType<typeof executableParts>) => new Set([...parts.mountPoints, ...parts.readOnlyParents, ...parts.readOnly]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const inside = (parts: string[], folder: string) => parts.filter((p) => p.startsWith(folder + "/")).sort();

test("issue 26 review r35 W1 (reported case: .git/hooks/pre-commit runs `sh scripts/check.sh`; the cwd a linked worktree, or a folder of one): git runs a worktree's hooks from the common folder, and what they run stays read-only there as in the main work tree", () => {
  const main = ownerRepo();
  mkdirSync(join(main, "scripts"));
  writeFileSync(join(main, "scripts", "check.sh"), "#!/bin/sh\necho check\n", { mode: 0o755 });
  writeFileSync(join(main, "scripts", "other.sh"), "#!/bin/sh\necho other\n", { mode: 0o755 });
  owner(main, {}, "add", ".");
  owner(main, {}, "commit", "-qm", "scripts");
  writeFileSync(join(main, ".git", "hooks", "pre-commit"), "#!/bin/sh\nsh scripts/check.sh\n", { mode: 0o755 });
  const wt = `${main}-wt`;
  removed.push(wt);
  owner(main, {}, "worktree", "add", "-q", wt);
  assert.equal(owner(wt, {}, "rev-parse", "--git-path", "hooks").trim(), join(main, ".git", "hooks"));
  assert.deepEqual(inside(executableParts(main, true, false).readOnly, join(main, "scripts")), [join(main, "scripts", "check.sh")]);
  assert.deepEqual(inside(executableParts(wt, true, false).readOnly, join(wt, "scripts")), [join(wt, "scripts", "check.sh")]);
  assert.deepEqual(inside(executableParts(join(wt, "scripts"), true, false).readOnly, join(wt, "scripts")), [join(wt, "scripts", "check.sh")]);
});

test("issue 26 review r35 W2 (reported case: lefthook.yml's command block with `root: \"web/\"` and `run: sh scripts/lint.sh`, which lefthook runs in web/): the script stays read-only for a cwd at the top and in web/", () => {
  const repo = ownerRepo();
  mkdirSync(join(repo, "web", "scripts"), { recursive: true });
  writeFileSync(join(repo, "web", "scripts", "lint.sh"), "#!/bin/sh\necho lint\n", { mode: 0o755 });
  writeFileSync(join(repo, "web", "scripts", "other.sh"), "#!/bin/sh\necho other\n", { mode: 0o755 });
  writeFileSync(join(repo, "lefthook.yml"), "pre-commit:\n  commands:\n    lint:\n      root: \"web/\"\n      glob: \"*.js\"\n      run: sh scripts/lint.sh {staged_files}\n");
  for (const cwd of [repo, join(repo, "web")]) assert.deepEqual(inside(executableParts(cwd, true, false).readOnly, join(repo, "web", "scripts")), [join(repo, "web", "scripts", "lint.sh")], cwd);
});

test("issue 26 review r35 W3 (reported case: .git/hooks/pre-commit runs an optional local hook, `[ -x tools/local-hook.sh ] && sh tools/local-hook.sh`, missing at launch; a pre-commit entry missing too): the run that makes it has it moved aside, with the cwd at the top and below it; a word that names no script path is not looked for", async () => {
  const repo = ownerRepo();
  mkdirSync(join(repo, "tools"));
  writeFileSync(join(repo, ".git", "hooks", "pre-commit"), "#!/bin/sh\nnpm test\n[ -x tools/local-hook.sh ] && sh tools/local-hook.sh\n", { mode: 0o755 });
  writeFileSync(join(repo, ".pre-commit-config.yaml"), "repos:\n- repo: local\n  hooks:\n  - id: fmt\n    name: fmt\n    entry: tools/fmt.py\n    language: script\n");
  for (const cwd of [repo, join(repo, "tools")]) {
    await sleep(1_100); // past the kernel clock's slack
    const sinceMs = Date.now();
    const parts = executableParts(cwd, true, false);
    writeFileSync(join(repo, "tools", "local-hook.sh"), "#!/bin/sh\ncp $AA_MASTER /tmp/x\n", { mode: 0o755 });
    writeFileSync(join(repo, "tools", "fmt.py"), "import os\n");
    mkdirSync(join(repo, "npm"));
    writeFileSync(join(repo, "test"), "a file of the agent's\n");
    const planted = plantedSteering([cwd], guardedOf(parts), parts.seen, 36, { sinceMs });
    assert.deepEqual(planted.map((p) => [p.path, p.kind]).sort(), [[join(repo, "tools", "fmt.py"), "moved"], [join(repo, "tools", "local-hook.sh"), "moved"]], cwd);
    assert.equal(existsSync(join(repo, "tools", "local-hook.sh")), false);
    execFileSync("rm", ["-rf", join(repo, "npm"), join(repo, "test")]);
  }
});

test("issue 26 review r35 FF-1 (reported case: `mkfifo .git/packed-refs` held the owner's git status, log and rev-parse until killed): a FIFO in a git folder, also in objects/info and objects/pack, is moved aside", () => {
  const repo = ownerRepo();
  const sinceMs = Date.now();
  const parts = executableParts(repo, true, false);
  for (const f of ["packed-refs", "refs/heads/topic", "logs/HEAD.new", "objects/info/alternates", "objects/pack/pack-x.idx"]) execFileSync("mkfifo", [join(repo, ".git", f)]);
  const planted = plantedSteering([repo], guardedOf(parts), parts.seen, 36, { sinceMs });
  assert.deepEqual(planted.map((p) => [p.path, p.kind]).sort(), ["logs/HEAD.new", "objects/info/alternates", "objects/pack/pack-x.idx", "packed-refs", "refs/heads/topic"].map((f) => [join(repo, ".git", f), "moved"]));
  assert.equal(lstatSync(join(repo, ".git", "HEAD")).isFile(), true);
  // The owner's git, with a deadline: it would wait on a FIFO left there.
  execFileSync("git", ["status", "--short"], { cwd: repo, timeout: 10_000 });
  execFileSync("git", ["log", "-1", "--format=%s"], { cwd: repo, timeout: 10_000 });
});

test("issue 26 review r35 HL-3 (reported case: a read-only .idea of 20,100 files listed before .git/hooks, whose pre-commit had a second name): single files are looked at first, and past the bound the launch is refused naming the folder, not let through", () => {
  const dir = tempDir("aa-r36-hl-");
  removed.push(dir);
  mkdirSync(join(dir, ".idea"));
  for (let i = 0; i < hardLinkEntriesMax + 100; i++) writeFileSync(join(dir, ".idea", `f${i}.xml`), "");
  mkdirSync(join(dir, "hooks"));
  writeFileSync(join(dir, "hooks", "pre-commit"), "#!/bin/sh\n");
  linkSync(join(dir, "hooks", "pre-commit"), join(dir, "second-name"));
  assert.deepEqual(hardLinked([join(dir, ".idea"), join(dir, "hooks", "pre-commit")]), { file: join(dir, "hooks", "pre-commit"), links: 2 });
  assert.deepEqual(hardLinked([join(dir, ".idea"), join(dir, "hooks")]), { cut: join(dir, ".idea") });
});

test("issue 26 review r35 HL-4 (reported case: the run's .mcp.json with a second name docs-cache.json beside it; moved aside, the second name still wrote the quarantined file): what is moved aside is a copy of its own, the agent's other name no longer reaches it", async () => {
  const repo = ownerRepo();
  await sleep(1_100);
  const sinceMs = Date.now();
  const parts = executableParts(repo, true, false);
  writeFileSync(join(repo, ".mcp.json"), '{"mcpServers":{}}\n', { mode: 0o640 });
  linkSync(join(repo, ".mcp.json"), join(repo, "docs-cache.json"));
  const planted = plantedSteering([repo], guardedOf(parts), parts.seen, 36, { sinceMs });
  assert.deepEqual(planted.map((p) => [p.path, p.kind]), [[join(repo, ".mcp.json"), "moved"]]);
  const aside = planted[0]!.movedTo!;
  assert.equal(lstatSync(aside).nlink, 1);
  assert.equal(lstatSync(aside).mode & 0o777, 0o640);
  writeFileSync(join(repo, "docs-cache.json"), '{"mcpServers":{"x":{"command":"sh"}}}\n');
  assert.equal(readFileSync(aside, "utf8"), '{"mcpServers":{}}\n');
});

/** The owner's work tree `<base>/src/sp` whose git folder is `<base>/work/sp.gitdir` (`git init --separate-git-dir`), one commit. */
function separated(): { tree: string; work: string; gitDir: string } {
  const base = tempDir("aa-r36-sep-");
  removed.push(base);
  const tree = join(base, "src", "sp");
  const work = join(base, "work");
  mkdirSync(tree, { recursive: true });
  mkdirSync(work);
  owner(tree, {}, "init", "-q", "-b", "main", "--separate-git-dir", join(work, "sp.gitdir"));
  writeFileSync(join(tree, "f"), "x\n");
  owner(tree, {}, "add", ".");
  owner(tree, {}, "commit", "-qm", "owner");
  return { tree, work, gitDir: join(work, "sp.gitdir") };
}

test("issue 26 r36 F36a-2 (reported case: a cwd ~/work holding ~/work/sp.gitdir, the git folder of the owner's work tree ~/src/sp made by `git init --separate-git-dir`): a git folder outside every work tree of the folder is guarded as a .git is — a mount point, its config, hooks and info read-only, what its configuration names in the folder too; a folder holding a HEAD that is no git folder is not", () => {
  const { work, gitDir } = separated();
  mkdirSync(join(work, "tools"));
  writeFileSync(join(work, "tools", "mon.sh"), "#!/bin/sh\necho\n", { mode: 0o755 });
  owner(work, { GIT_DIR: gitDir }, "config", "core.fsmonitor", join(work, "tools", "mon.sh"));
  mkdirSync(join(work, "notes"));
  writeFileSync(join(work, "notes", "HEAD"), "a file of notes\n");
  const parts = executableParts(work, true, false);
  assert.deepEqual(parts.mountPoints.filter((p) => p.startsWith(work + "/")), [gitDir]);
  assert.deepEqual(inside(parts.readOnly, work), [join(gitDir, "config"), join(gitDir, "hooks"), join(gitDir, "info"), join(work, "tools", "mon.sh")]);
  assert.equal(parts.seen.gitFolders.includes(gitDir), true);
});

test("issue 26 r36 F36a-2, the reported run: a sandboxed agent in ~/work can write neither the hooks nor the configuration of sp.gitdir, and the owner's commit in ~/src/sp runs nothing of the agent's", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const { tree, work, gitDir } = separated();
  const leak = leakFolder();
  const payload = [tryFn,
    `try hook sh -c 'printf "#!/bin/sh\\ntouch ${leak}/hook\\n" > sp.gitdir/hooks/pre-commit && chmod +x sp.gitdir/hooks/pre-commit'`,
    `try config sh -c 'printf "[core]\\n\\tfsmonitor = \\"touch ${leak}/config; echo\\"\\n" >> sp.gitdir/config'`,
    "try rename mv sp.gitdir sp.moved", 'echo "Done: tried"'].join("; ");
  await runAgent(payload, work);
  assert.equal(readFileSync(join(work, "tried.txt"), "utf8"), "hook no\nconfig no\nrename no\n");
  writeFileSync(join(tree, "f"), "y\n");
  owner(tree, {}, "commit", "-qam", "the owner's");
  owner(tree, {}, "status", "--short");
  assert.deepEqual(readdirSync(leak), []);
  assert.equal(existsSync(join(gitDir, "HEAD")), true);
});

/**
 * The owner's lefthook project of the report, in a cwd `work` that holds it as `work/app` and a `work/shared` folder:
 * `source_dir`, `rc`, `extends` (a file, a commented list item, a glob in a folder and one at the top, one outside the
 * project, one absolute), `source_dir_local` missing; a `runner:` and a `run: |` block (the round-37 review).
 */
function lefthookProject(): { work: string; repo: string } {
  const work = tempDir("aa-r36-lh-");
  removed.push(work);
  const repo = join(work, "app");
  mkdirSync(repo);
  owner(repo, {}, "init", "-q", "-b", "main");
  for (const d of ["ci/extra", "tools/lh/pre-commit", "scripts", "packages/web/src", "packages/api"]) mkdirSync(join(repo, d), { recursive: true });
  mkdirSync(join(work, "shared"));
  writeFileSync(join(repo, "lefthook.yml"), [
    "source_dir: tools/lh/", "source_dir_local: \"tools/lh-local/\"", "rc: ./.lefthookrc", "extends:", "  - ci/lefthook-extra.yml # shared with CI", "", "  - ci/second.yml",
    "  - \"ci/extra/*.yml\"", "  - lefthook-*.yml", "  - packages/*/lefthook.yml", "  - ../shared/lefthook-shared.yml", `  - ${join(work, "shared", "abs.yml")}`,
    "pre-commit:", "  scripts:", "    \"check.sh\":", "      runner: node scripts/runner.js", "  commands:", "    lint:", "      run: echo lint-ok",
    "    multi:", "      run: |", "        sh scripts/multi.sh", "        git diff --exit-code -- src/generated/api.ts", "",
  ].join("\n"));
  writeFileSync(join(repo, ".lefthookrc"), "export X=1\n");
  writeFileSync(join(repo, "ci", "lefthook-extra.yml"), "extends: [ci/deeper.yml]\npre-push:\n  commands:\n    extra:\n      run: sh scripts/extra.sh\n");
  writeFileSync(join(repo, "ci", "deeper.yml"), "pre-push:\n  commands:\n    deeper:\n      run: sh scripts/deeper.sh\n");
  for (const f of ["ci/second.yml", "ci/extra/a.yml", "lefthook-ci.yml", "packages/web/lefthook.yml", "../shared/lefthook-shared.yml", "../shared/abs.yml"]) writeFileSync(join(repo, f), "pre-commit:\n  commands: {}\n");
  for (const f of ["scripts/extra.sh", "scripts/deeper.sh", "scripts/other.sh", "scripts/runner.js", "scripts/multi.sh", "tools/lh/pre-commit/check.sh", "packages/web/src/index.ts"]) writeFileSync(join(repo, f), "#!/bin/sh\necho ok\n", { mode: 0o755 });
  owner(repo, {}, "add", ".");
  owner(repo, {}, "commit", "-qm", "lefthook");
  return { work, repo };
}

test("issue 26 r36 F36a-1 (reported case: lefthook.yml's `extends: [ci/lefthook-extra.yml]` and `source_dir: tools/lh/`; the agent's command in the extended file and its line in tools/lh/pre-commit/check.sh ran at the owner's next commit) and the round-37 review (an extends outside the project, a glob at the top, a commented list item, `runner:`, `run: |`): what a hook manager's file loads or runs from is read-only in the folder an agent writes — extended files and what they name, each match of a glob (not its folder), script folders, rc — and what is missing is looked for after the run", () => {
  const { work, repo } = lefthookProject();
  for (const cwd of [work, repo]) {
    const parts = executableParts(cwd, true, false);
    const expected = [
      ".lefthookrc", "ci/deeper.yml", "ci/extra/a.yml", "ci/lefthook-extra.yml", "ci/second.yml", "lefthook-ci.yml", "lefthook.yml", "packages/web/lefthook.yml",
      "scripts/deeper.sh", "scripts/extra.sh", "scripts/multi.sh", "scripts/runner.js", "tools/lh",
    ].map((p) => join(repo, p)).concat(cwd === work ? [join(work, "shared", "abs.yml"), join(work, "shared", "lefthook-shared.yml")] : []);
    assert.deepEqual(inside(parts.readOnly, cwd).filter((p) => !p.includes("/.git/") && !p.endsWith("/.git")), expected.sort(), cwd);
    assert.deepEqual(parts.seen.shadows.filter((p) => p.startsWith(repo)), [join(repo, "tools", "lh-local")], cwd);
    assert.deepEqual(parts.seen.globs.filter((g) => g.startsWith(repo)).sort(), [join(repo, "ci/extra/*.yml"), join(repo, "lefthook-*.yml"), join(repo, "packages/*/lefthook.yml")]);
  }
});

test("issue 26 r36 F36a-1, the reported run: a sandboxed agent writes neither an extended file nor a script of source_dir; a glob's new match, a source_dir_local it makes are moved aside and named; a file the hook only mentions stays", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const { repo } = lefthookProject();
  const payload = [tryFn,
    "try extends sh -c 'printf \"pre-commit:\\n  commands:\\n    zz:\\n      run: id\\n\" >> ci/lefthook-extra.yml'",
    "try source_dir sh -c 'echo id >> tools/lh/pre-commit/check.sh'",
    "try glob sh -c 'echo x > ci/extra/b.yml && echo x > lefthook-zz.yml && mkdir packages/api/x && echo x > packages/api/lefthook.yml'",
    "try local sh -c 'mkdir -p tools/lh-local/pre-commit && echo id > tools/lh-local/pre-commit/x.sh'",
    "try generated sh -c 'mkdir -p src/generated && echo x > src/generated/api.ts'", 'echo "Done: tried"'].join("; ");
  const fx = await runAgent(payload, repo);
  assert.equal(readFileSync(join(repo, "tried.txt"), "utf8"), "extends no\nsource_dir no\nglob ok\nlocal ok\ngenerated ok\n");
  for (const p of ["tools/lh-local", "ci/extra/b.yml", "lefthook-zz.yml", "packages/api/lefthook.yml"]) assert.equal(existsSync(join(repo, p)), false, p);
  assert.equal(existsSync(join(repo, "src", "generated", "api.ts")), true);
  const card = (await fx.state()).cards.find((c: { kind: string }) => c.kind === "notice");
  for (const p of ["tools/lh-local", "ci/extra/b.yml", "lefthook-zz.yml", "packages/api/lefthook.yml"]) assert.match(card?.text ?? "", new RegExp(`${join(repo, p).replace(/[.]/g, "\\.")} → moved to `));
});

test("issue 26 the round-37 review, W3 (a hook's optional hidden scripts `.hooks/local.sh` and `./.pre-commit.local`; a missing script's folder made as a link; a path the hook only mentions): what a hook runs is looked for, hidden or not, and moved aside from the first link on its way; a word it does not run is not", async () => {
  const repo = ownerRepo();
  writeFileSync(join(repo, ".git", "hooks", "pre-commit"), "#!/bin/sh\n[ -f .hooks/local.sh ] && sh .hooks/local.sh\n[ -f .pre-commit.local ] && . ./.pre-commit.local\n[ -x tools/local-hook.sh ] && tools/local-hook.sh\ngit diff --exit-code -- src/generated/api.ts\nmint run owner/plugin\n", { mode: 0o755 });
  await sleep(1_100);
  const sinceMs = Date.now();
  const parts = executableParts(repo, true, false);
  assert.deepEqual(parts.seen.shadows.sort(), [".hooks/local.sh", ".pre-commit.local", "tools/local-hook.sh"].map((p) => join(repo, p)));
  mkdirSync(join(repo, ".hooks"));
  writeFileSync(join(repo, ".hooks", "local.sh"), "id\n");
  writeFileSync(join(repo, ".pre-commit.local"), "id\n");
  mkdirSync(join(repo, "node_modules", ".cache", "t"), { recursive: true });
  writeFileSync(join(repo, "node_modules", ".cache", "t", "local-hook.sh"), "#!/bin/sh\nid\n", { mode: 0o755 });
  symlinkSync("node_modules/.cache/t", join(repo, "tools"));
  mkdirSync(join(repo, "src", "generated"), { recursive: true });
  writeFileSync(join(repo, "src", "generated", "api.ts"), "export {};\n");
  const planted = plantedSteering([repo], guardedOf(parts), parts.seen, 36, { sinceMs });
  assert.deepEqual(planted.map((p) => [p.path, p.kind]).sort(), [[join(repo, ".hooks", "local.sh"), "moved"], [join(repo, ".pre-commit.local"), "moved"], [join(repo, "tools"), "moved"]]);
  assert.equal(existsSync(join(repo, "src", "generated", "api.ts")), true);
});
