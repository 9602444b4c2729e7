/**
 * Issue 26 hostile round 14, F14-1, F14-4, F14-6, F14-7, F14-8: what the owner's git and shell read from a folder a
 * sandboxed agent writes, found past round 13's guard — a superproject's hooks in its submodule, includes git follows
 * that the guard did not (`~user/`, deeper than 3), git's XDG folder linked into the folder, a folder of hundreds of
 * repositories, the home's dotfile links. Real bubblewrap, real git, a real command agent under the real worker.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, readdirSync, realpathSync, symlinkSync, writeFileSync, existsSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { userInfo } from "node:os";
import { join } from "node:path";
import { engine, tempDir } from "./helpers.js";
import { asideOf, leakFolder, owner, ownerRepo, ownerRepoWithHooks, removed, runAgent, sandboxed, plantHook, plantMonitor, setEnv, tryFn } from "./steering-helpers.js";
import { executableParts, GuardLimitError, guardLimits, guardLimitText } from "../src/worker/steering.js";
import { ConfigPass, globalConfigNamed } from "../src/worker/git-config.js";


/** A home of the owner's for one test (HOME of the worker), removed after it. */
function ownerHome(): string {
  const home = realpathSync(tempDir("aa-r14-home-"));
  removed.push(home);
  setEnv({ HOME: home, XDG_CONFIG_HOME: "" });
  return home;
}

test("issue 26 r14 F14-1 (reported case: the cwd a submodule, the superproject's core.hooksPath = shared/hooks in it): the hooks folder stays read-only; the owner's commit in the superproject runs the owner's hook only", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const hooks = ownerRepoWithHooks("hooks");
  const outer = ownerRepo();
  owner(outer, {}, "-c", "protocol.file.allow=always", "submodule", "-q", "add", hooks, "shared");
  owner(outer, {}, "commit", "-qm", "shared");
  owner(outer, {}, "config", "core.hooksPath", "shared/hooks");
  const leak = leakFolder();
  const script = [tryFn, `try rewrite sh -c '${plantHook("hooks/pre-commit", leak, "superhooks")}'`, `echo "Done: tried"`].join("\n");
  const fx = await runAgent(script, join(outer, "shared"));
  assert.deepEqual(readFileSync(join(outer, "shared", "tried.txt"), "utf8").trim().split("\n"), ["rewrite no"]);
  writeFileSync(join(outer, "README.md"), "changed\n");
  owner(outer, { AA_MASTER: fx.home.masterKey }, "commit", "-qam", "owner");
  assert.deepEqual(readdirSync(leak), [], "no hook of the agent's ran");
  assert.equal(readFileSync(join(outer, "hook-ran.txt"), "utf8"), "owner\n");
});

test("issue 26 r14 F14-4 (reported cases: an include by ~user/, a chain of includes deeper than 3): each file git would read is read-only in the folder", () => {
  const folder = realpathSync(tempDir("aa-r14-inc-"));
  removed.push(folder);
  const home = ownerHome();
  const chain = [0, 1, 2, 3, 4, 5].map((i) => join(folder, `inc${i}`));
  chain.forEach((f, i) => writeFileSync(f, i + 1 < chain.length ? `[include]\n\tpath = ${chain[i + 1]}\n` : "[user]\n\tname = deep\n"));
  writeFileSync(join(home, ".gitconfig"), `[include]\n\tpath = ${chain[0]}\n[include]\n\tpath = ~${userInfo().username}/aa-r14-not-there\n`);
  assert.deepEqual(executableParts(folder, false, false).readOnly.filter((p) => p.startsWith(`${folder}/inc`)), chain);
  assert.ok(globalConfigNamed(new ConfigPass()).includes.includes(join(userInfo().homedir, "aa-r14-not-there")), "~user/ is that user's home, as git reads it");
});

test("issue 26 r14 F14-6 (reported case: ~/.config/git a link into the cwd, git's config there missing): the folder the link leads to is read-only (F14-8), so the agent cannot make the config; the guard and the check after the run read git's files through the link", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const dotfiles = ownerRepo();
  const home = ownerHome();
  mkdirSync(join(dotfiles, "git"));
  writeFileSync(join(dotfiles, "git", "ignore"), "*.log\n");
  mkdirSync(join(home, ".config"));
  symlinkSync(join(dotfiles, "git"), join(home, ".config", "git"));
  assert.ok(globalConfigNamed(new ConfigPass()).includes.includes(join(dotfiles, "git", "config")), "git's XDG config, where the link leads, though missing");
  const leak = leakFolder();
  const fx = await runAgent([tryFn, `try xdg sh -c '${plantMonitor("git/config", leak, "xdg")}'`, `echo "Done: tried"`].join("\n"), dotfiles);
  assert.deepEqual(readFileSync(join(dotfiles, "tried.txt"), "utf8").trim().split("\n"), ["xdg no"]);
  execFileSync("git", ["status", "--porcelain"], { cwd: dotfiles, env: { PATH: process.env.PATH ?? "", HOME: home, GIT_CONFIG_NOSYSTEM: "1", AA_MASTER: fx.home.masterKey } });
  assert.deepEqual(readdirSync(leak), [], "no fsmonitor of the agent's ran");
  assert.equal(existsSync(join(dotfiles, "git", "config")), false);
});

test("issue 26 r14 F14-7 (reported case: 400 repositories in the cwd held the hub 34 s per launch, then bubblewrap refused its arguments): more repositories than the limit refuse the launch before any git runs, naming the limit", () => {
  const folder = realpathSync(tempDir("aa-r14-many-"));
  removed.push(folder);
  for (const n of ["a", "b", "c", "d"]) execFileSync("git", ["init", "-q", join(folder, n)]);
  assert.throws(() => executableParts(folder, false, false, { ...guardLimits, folders: 100, repositories: 3 }), (e: unknown) => {
    assert.ok(e instanceof GuardLimitError);
    assert.equal(guardLimitText("en", e), `${folder} holds more than 3 repositories: the sandbox reads the configuration of each to guard what your git would run, too many to look through before a launch, so the launch is refused; let the agent write a smaller folder (cwd, "writable")`);
    return true;
  });
  assert.equal(executableParts(folder, false, false, { ...guardLimits, folders: 100, repositories: 4 }).mountPoints.length, 4);
});

test("issue 26 r14 F14-8 (reported case: ~/.bashrc a link into the cwd): the home's dotfile links and ~/.config's links lead to read-only places; a plain link to the project itself keeps it writable", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const dotfiles = ownerRepo();
  const home = ownerHome();
  mkdirSync(join(dotfiles, "bash"));
  writeFileSync(join(dotfiles, "bash", "bashrc"), "# the owner's\n");
  mkdirSync(join(dotfiles, "nvim"));
  symlinkSync(join(dotfiles, "bash", "bashrc"), join(home, ".bashrc"));
  mkdirSync(join(home, ".config"));
  symlinkSync(join(dotfiles, "nvim"), join(home, ".config", "nvim"));
  symlinkSync(dotfiles, join(home, "dotfiles"));
  const script = [
    tryFn,
    `try bashrc sh -c 'echo "cp \\$AA_MASTER /tmp/x" >> bash/bashrc'`,
    `try rename mv bash bash-old`,
    `try nvim sh -c 'echo "vim.fn.system(1)" > nvim/init.lua'`,
    `try project sh -c 'echo note > notes.txt'`,
    `echo "Done: tried"`,
  ].join("\n");
  await runAgent(script, dotfiles);
  assert.deepEqual(readFileSync(join(dotfiles, "tried.txt"), "utf8").trim().split("\n"), ["bashrc no", "rename no", "nvim no", "project ok"]);
  assert.equal(readFileSync(join(dotfiles, "bash", "bashrc"), "utf8"), "# the owner's\n");
  assert.equal(existsSync(join(dotfiles, "nvim", "init.lua")), false);
});

test("issue 26 r14 F14-2, in part (reported case: .git/info/exclude listed the agent's new file, hiding it from the owner's git status): info/ is read-only as the git folder's other settings are", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const repo = ownerRepo();
  const script = [tryFn, `try exclude sh -c 'echo payload.sh >> .git/info/exclude'`, `try attributes sh -c 'echo "* filter=x" > .git/info/attributes'`, `echo x > payload.sh`, `echo "Done: tried"`].join("\n");
  await runAgent(script, repo);
  assert.deepEqual(readFileSync(join(repo, "tried.txt"), "utf8").trim().split("\n"), ["exclude no", "attributes no"]);
  assert.match(owner(repo, {}, "status", "--porcelain"), /^\?\? payload\.sh$/m, "the new file shows");
});

test("issue 26 r14 F14-3 (reported case: the owner's global configuration names init.templateDir, pager.log and core.excludesFile in the dotfiles repository the agent works in): each stays read-only", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const dotfiles = ownerRepo();
  const home = ownerHome();
  mkdirSync(join(dotfiles, "git-template", "hooks"), { recursive: true });
  mkdirSync(join(dotfiles, "bin"));
  writeFileSync(join(dotfiles, "bin", "diff-highlight"), "#!/bin/sh\ncat\n", { mode: 0o755 });
  writeFileSync(join(dotfiles, "gitignore_global"), "*.log\n");
  writeFileSync(join(home, ".gitconfig"), `[init]\n\ttemplateDir = ${dotfiles}/git-template\n[pager]\n\tlog = ${dotfiles}/bin/diff-highlight | less\n[core]\n\texcludesFile = ~/../${dotfiles.split("/").pop()}/gitignore_global\n[alias]\n\tsync = !${dotfiles}/bin/missing-sync.sh --all\n`);
  const leak = leakFolder();
  const script = [
    tryFn,
    `try template sh -c '${plantHook("git-template/hooks/post-checkout", leak, "template")}'`,
    `try pager sh -c 'echo "cp \\$AA_MASTER ${leak}/pager" >> bin/diff-highlight'`,
    `try alias sh -c '${plantHook("bin/missing-sync.sh", leak, "alias")}'`,
    `echo "Done: tried"`,
  ].join("\n");
  const fx = await runAgent(script, dotfiles);
  assert.deepEqual(readFileSync(join(dotfiles, "tried.txt"), "utf8").trim().split("\n"), ["template no", "pager no", "alias ok"]);
  const aside = asideOf(join(dotfiles, "bin", "missing-sync.sh"), 1);
  const card = (await fx.state()).cards.find((c) => c.kind === "notice");
  assert.equal(card?.text, `${join(dotfiles, "bin", "missing-sync.sh")} → moved to ${aside} (move it back once you have read it)`);
});

test("issue 26 r14 F14-5 (reported case: the repository's filter.nbstrip.clean = tools/nbstrip.sh in its work tree): the script stays read-only; one its configuration names but that was missing is moved aside after the run; the owner's git status runs the owner's filter", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const repo = ownerRepo();
  mkdirSync(join(repo, "tools"));
  writeFileSync(join(repo, "tools", "nbstrip.sh"), "#!/bin/sh\ncat\n", { mode: 0o755 });
  writeFileSync(join(repo, ".gitattributes"), "*.ipynb filter=nbstrip\n");
  writeFileSync(join(repo, "nb.ipynb"), "{}\n");
  owner(repo, {}, "add", ".");
  owner(repo, {}, "commit", "-qm", "nb");
  owner(repo, {}, "config", "filter.nbstrip.clean", "tools/nbstrip.sh");
  owner(repo, {}, "config", "diff.nb.textconv", "tools/nbdiff.sh --plain");
  const leak = leakFolder();
  const script = [
    tryFn,
    `try filter sh -c '${plantHook("tools/nbstrip.sh", leak, "filter")}'`,
    `try textconv sh -c '${plantHook("tools/nbdiff.sh", leak, "textconv")}'`,
    `echo "Done: tried"`,
  ].join("\n");
  const fx = await runAgent(script, repo);
  assert.deepEqual(readFileSync(join(repo, "tried.txt"), "utf8").trim().split("\n"), ["filter no", "textconv ok"]);
  asideOf(join(repo, "tools", "nbdiff.sh"), 1);
  writeFileSync(join(repo, "nb.ipynb"), "{ }\n");
  owner(repo, { AA_MASTER: fx.home.masterKey }, "status", "--porcelain");
  assert.deepEqual(readdirSync(leak), [], "no script of the agent's ran");
});

test("issue 26 r15 F15-5 (reported case: a named pipe planted as .git held the hub until someone wrote to it): the guard reads no file that is not regular, so it looks past the pipe at once", () => {
  const folder = realpathSync(tempDir("aa-r15-fifo-"));
  removed.push(folder);
  mkdirSync(join(folder, "sub"));
  execFileSync("mkfifo", [join(folder, "sub", ".git")]);
  mkdirSync(join(folder, "sub2", ".git", "x"), { recursive: true });
  execFileSync("mkfifo", [join(folder, "sub2", ".git", "commondir")]);
  // In a child process with a time limit: a read that blocks would hold this test's own thread, and its timeout with it.
  const script = `const { executableParts } = await import(${JSON.stringify(join(engine, "src", "worker", "steering.ts"))}); console.log(JSON.stringify(executableParts(${JSON.stringify(folder)}, false, false)));`;
  const parts = JSON.parse(execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8", timeout: 20_000, cwd: engine })) as ReturnType<typeof executableParts>;
  assert.deepEqual(parts.seen.repositories, [join(folder, "sub"), join(folder, "sub2")]);
  assert.deepEqual(parts.readOnly, [join(folder, "sub", ".git"), join(folder, "sub2", ".git", "commondir")], "both pipes bound read-only, neither read");
  assert.deepEqual(parts.mountPoints, [join(folder, "sub2", ".git")]);
});
