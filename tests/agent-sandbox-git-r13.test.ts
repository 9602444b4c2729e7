/**
 * Issue 26 hostile round 13, F13-6, F13-7, F13-8, F13-10: what a sandboxed agent could still change in the folder it
 * writes that the owner's git later reads or runs as the hub's user — a read-only file moved away with the folder
 * holding it, a file the owner's global configuration includes, a linked worktree's hooks named in its repository's
 * common configuration, the hooks of the repository holding the agent's cwd. Each reported case is run as reported:
 * real bubblewrap, real git, a real command agent under the real worker; the owner's git afterwards, as the owner's.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { tempDir } from "./helpers.js";
import { asideOf, leakFolder, owner, ownerRepo, ownerRepoWithHooks, removed, runAgent, sandboxed, plantHook, plantMonitor, setEnv, tryFn } from "./steering-helpers.js";
import { pinnedFolders } from "../src/worker/mount-pins.js";

/** The agent's commit, as its own identity. */
const agentGit = "git -c user.name=a -c user.email=a@example.com";

test("issue 26 r13 F13-10 (reported case b: core.hooksPath = scripts/git-hooks, its parent renamed and a new hooks folder put in its place): every folder between the writable folder and a guarded part is a mount point, so it cannot be renamed; the owner's commit runs the owner's hook only", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const repo = ownerRepoWithHooks("scripts/git-hooks");
  const leak = leakFolder();
  const script = [
    tryFn,
    `try rename-parent mv scripts scripts-old`,
    `try remove-parent rm -rf scripts`,
    `try rename-git mv .git git-old`,
    `try plant sh -c 'mkdir -p scripts/git-hooks && ${plantHook("scripts/git-hooks/pre-commit", leak, "renamed")}'`,
    `try write-beside sh -c 'echo more > scripts/notes.txt'`,
    `echo "Done: tried"`,
  ].join("\n");
  const fx = await runAgent(script, repo);
  assert.deepEqual(readFileSync(join(repo, "tried.txt"), "utf8").trim().split("\n"), ["rename-parent no", "remove-parent no", "rename-git no", "plant no", "write-beside ok"]);
  writeFileSync(join(repo, "README.md"), "changed\n");
  owner(repo, { AA_MASTER: fx.home.masterKey }, "commit", "-qam", "owner");
  assert.deepEqual(readdirSync(leak), [], "no hook of the agent's ran");
  assert.equal(readFileSync(join(repo, "hook-ran.txt"), "utf8"), "owner\n");
  assert.equal(readFileSync(join(repo, "scripts", "notes.txt"), "utf8"), "more\n", "the rest of the folder stays writable");
});

test("issue 26 r13 F13-10 (a) and F13-6 (reported cases: ~/.gitconfig a link into a dotfiles folder in the cwd; [includeIf \"gitdir:…\"] path = a file in the cwd): the linked and the included files stay read-only, their folder cannot be renamed, an included file that was missing is moved aside after the run; the owner's git status runs nothing of the agent's", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const project = ownerRepo();
  const leak = leakFolder();
  const home = realpathSync(tempDir("aa-r13-home-"));
  removed.push(home);
  mkdirSync(join(project, "dotfiles"));
  writeFileSync(join(project, ".gitconfig-local"), "[user]\n\temail = owner@work.example\n");
  writeFileSync(join(project, "dotfiles", "gitconfig"), [
    "[user]", "\tname = owner",
    `[includeIf "gitdir:${project}/"]`, `\tpath = ${project}/.gitconfig-local`,
    `[includeIf "gitdir:${project}/"]`, `\tpath = ${project}/.gitconfig-later`, "",
  ].join("\n"));
  symlinkSync(join(project, "dotfiles", "gitconfig"), join(home, ".gitconfig"));
  setEnv({ HOME: home });
  const script = [
    tryFn,
    `try rewrite-linked sh -c '${plantMonitor("dotfiles/gitconfig", leak, "linked")}'`,
    `try append-included sh -c '${plantMonitor(".gitconfig-local", leak, "included")}'`,
    `try rename-dotfiles sh -c 'mv dotfiles dotfiles-old && mkdir dotfiles && ${plantMonitor("dotfiles/gitconfig", leak, "renamed")}'`,
    `try create-included sh -c '${plantMonitor(".gitconfig-later", leak, "later")}'`,
    `echo "Done: tried"`,
  ].join("\n");
  const fx = await runAgent(script, project);
  assert.deepEqual(readFileSync(join(project, "tried.txt"), "utf8").trim().split("\n"), ["rewrite-linked no", "append-included no", "rename-dotfiles no", "create-included ok"]);
  assert.equal(existsSync(join(project, ".gitconfig-later")), false);
  const aside = asideOf(join(project, ".gitconfig-later"), 1);
  // The owner's git, with the owner's global configuration.
  execFileSync("git", ["status", "--porcelain"], { cwd: project, env: { PATH: process.env.PATH ?? "", HOME: home, GIT_CONFIG_NOSYSTEM: "1", AA_MASTER: fx.home.masterKey } });
  assert.deepEqual(readdirSync(leak), [], "no fsmonitor of the agent's ran");
  const card = (await fx.state()).cards.find((c) => c.kind === "notice");
  assert.equal(card?.text, `${join(project, ".gitconfig-later")} → moved to ${aside} (move it back once you have read it)`);
});

test("issue 26 r13 F13-7 (reported case: the cwd a linked worktree, core.hooksPath = .githooks in its repository's common config): the worktree's hooks folder stays read-only; the owner's commit there runs the owner's hook only", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const repo = ownerRepoWithHooks(".githooks");
  const leak = leakFolder();
  const wt = join(realpathSync(tempDir("aa-r13-wt-")), "wt");
  removed.push(join(wt, ".."));
  owner(repo, {}, "worktree", "add", "-q", wt, "-b", "wtb");
  const script = [
    tryFn,
    `try rewrite sh -c '${plantHook(".githooks/pre-commit", leak, "wthooks")}'`,
    `try rename mv .githooks githooks-old`,
    `echo "Done: tried"`,
  ].join("\n");
  const fx = await runAgent(script, wt);
  assert.deepEqual(readFileSync(join(wt, "tried.txt"), "utf8").trim().split("\n"), ["rewrite no", "rename no"]);
  writeFileSync(join(wt, "README.md"), "changed\n");
  owner(wt, { AA_MASTER: fx.home.masterKey }, "commit", "-qam", "owner");
  assert.deepEqual(readdirSync(leak), [], "no hook of the agent's ran");
  assert.equal(readFileSync(join(wt, "hook-ran.txt"), "utf8"), "owner\n");
});

test("issue 26 r13 F13-8 (reported case: the cwd vendor/lib/scripts of the repository vendor/lib, whose core.hooksPath = scripts/git-hooks): the hooks folder in the cwd stays read-only, a hooks folder named but missing is moved aside after the run; the owner's commit runs the owner's hook only", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const lib = ownerRepoWithHooks("scripts/git-hooks");
  const leak = leakFolder();
  const other = ownerRepo();
  mkdirSync(join(other, "tools"));
  owner(other, {}, "config", "core.hooksPath", "tools/hooks-later");
  const script = [
    tryFn,
    `try rewrite sh -c '${plantHook("git-hooks/pre-commit", leak, "subhooks")}'`,
    `try rename mv git-hooks git-hooks-old`,
    `try later sh -c 'mkdir -p ${other}/tools/hooks-later && ${plantHook(`${other}/tools/hooks-later/pre-commit`, leak, "later")}'`,
    `echo "Done: tried"`,
  ].join("\n");
  const fx = await runAgent(script, join(lib, "scripts"), [join(other, "tools")]);
  assert.deepEqual(readFileSync(join(lib, "scripts", "tried.txt"), "utf8").trim().split("\n"), ["rewrite no", "rename no", "later ok"]);
  assert.equal(existsSync(join(other, "tools", "hooks-later")), false);
  asideOf(join(other, "tools", "hooks-later"), 1);
  writeFileSync(join(lib, "README.md"), "changed\n");
  owner(lib, { AA_MASTER: fx.home.masterKey }, "commit", "-qam", "owner");
  owner(other, { AA_MASTER: fx.home.masterKey }, "commit", "--allow-empty", "-qm", "owner");
  assert.deepEqual(readdirSync(leak), [], "no hook of the agent's ran");
  assert.equal(readFileSync(join(lib, "hook-ran.txt"), "utf8"), "owner\n");
});

test("issue 26 r13 F13-9 (reported case: a changed file marked assume-unchanged, another skip-worktree, so the owner's git status and git diff show nothing): the notice names each entry marked during the run; one marked before is not named", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const repo = ownerRepo();
  for (const f of ["a.txt", "b.txt", "before.txt"]) writeFileSync(join(repo, f), "owner\n");
  owner(repo, {}, "add", ".");
  owner(repo, {}, "commit", "-qm", "files");
  owner(repo, {}, "update-index", "--skip-worktree", "before.txt");
  const script = [
    `echo "echo changed-by-agent" >> a.txt && git update-index --assume-unchanged a.txt`,
    `echo "echo changed-by-agent" >> b.txt && git update-index --skip-worktree b.txt`,
    `echo "Done: tried"`,
  ].join("\n");
  const fx = await runAgent(script, repo);
  assert.equal(owner(repo, {}, "status", "--porcelain"), "", "git status shows nothing, as reported");
  const card = (await fx.state()).cards.find((c) => c.kind === "notice");
  assert.equal(card?.title, "The agent wrote files your git would run");
  assert.equal(card.text, ["a.txt", "b.txt"].map((f) => `${join(repo, f)}: the agent marked it so that git status and git diff do not show its changes (assume-unchanged or skip-worktree); git update-index --no-assume-unchanged --no-skip-worktree -- <file> shows them again`).join("\n"));
});

test("pinnedFolders: every folder between a writable folder and what is bound inside it, parents first; none inside a read-only or sandbox-own place", () => {
  assert.deepEqual(pinnedFolders(["/w", "/w/a/b/.git"], ["/w/a/b/.git/hooks", "/w/c/d/e/f", "/w/ro", "/w/ro/x/y", "/elsewhere/z"]), [
    "/w/a", "/w/c", "/w/a/b", "/w/c/d", "/w/c/d/e",
  ]);
  assert.deepEqual(pinnedFolders(["/w"], ["/w"]), [], "a read-only place at the writable folder's own");
  assert.deepEqual(pinnedFolders(["/w", "/w/ro/rw"], ["/w/ro", "/w/ro/rw/k/f"]), ["/w/ro/rw/k"], "inside a writable folder bound inside a read-only one");
});
