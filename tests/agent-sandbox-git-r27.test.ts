/**
 * Issue 26 hostile round 27, F27a-4 and F27a-2 (High, each with one ordinary git step of the owner): what a sandboxed
 * agent left in a repository's writable parts that the owner's next git command carries out. F27a-4: the hook in
 * `.githooks/` (read-only in the work tree) committed anew through the index and objects, and a `.vscode/tasks.json`
 * added to the index: `git restore .` wrote the agent's hook and `git commit` ran it. F27a-2: a fake rebase in
 * `.git/rebase-merge/` whose `orig-head` and todo (`exec`) the owner's `git rebase --abort`/`--skip` carried out.
 * Real bubblewrap, real git, a real command agent under the real worker; the owner's git afterwards, as reported.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { asideOf, leakFolder, owner, ownerRepoWithHooks, runAgent, sandboxed, tryFn } from "./steering-helpers.js";

test("issue 26 r27 F27a-4, F27a-2 (reported cases): a guarded path's content changed in the index or HEAD is named in the notice; a rebase (and a merge) left in progress is moved aside; the owner's git restore and rebase --abort then run nothing of the agent's", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const repo = ownerRepoWithHooks(".githooks");
  const leak = leakFolder();
  const evil = `#!/bin/sh\\necho agent >> ${leak}/ran.txt\\n`;
  const git = "git -c user.name=owner -c user.email=o@example.com";
  const script = [
    tryFn,
    // F27a-4: the hook's new content committed, a folder-open task added to the index (the files stay read-only).
    `try hookfile sh -c 'echo x > .githooks/pre-commit'`,
    `try commit sh -c 'oid=$(printf "${evil}" | git hash-object -w --stdin) && git update-index --cacheinfo 100755,$oid,.githooks/pre-commit && ${git} commit -qm hooks --no-verify'`,
    `try task sh -c 'oid=$(printf "{}" | git hash-object -w --stdin) && git update-index --add --cacheinfo 100644,$oid,.vscode/tasks.json'`,
    // F27a-2: a rebase in progress whose todo runs a command, and a merge in progress.
    `try rebase sh -c 'mkdir -p .git/rebase-merge && echo "exec echo agent >> ${leak}/rebase.txt" > .git/rebase-merge/git-rebase-todo && git rev-parse HEAD > .git/rebase-merge/orig-head && git rev-parse HEAD > .git/rebase-merge/onto && echo refs/heads/main > .git/rebase-merge/head-name && touch .git/rebase-merge/interactive'`,
    `try merge sh -c 'git rev-parse HEAD > .git/MERGE_HEAD'`,
    `echo "Done: tried"`,
  ].join("\n");
  const fx = await runAgent(script, repo);
  assert.deepEqual(readFileSync(join(repo, "tried.txt"), "utf8").trim().split("\n"), ["hookfile no", "commit ok", "task ok", "rebase ok", "merge ok"]);
  const card = (await fx.state()).cards.find((c) => c.kind === "notice");
  assert.equal(card?.title, "The agent wrote files your git would run");
  const moved = [".git/rebase-merge", ".git/MERGE_HEAD"].map((p) => join(repo, p));
  for (const p of moved) assert.equal(existsSync(p), false, p);
  const changed = (path: string) => `${path}: kept read-only in the work tree, but what git holds for it (the index or HEAD's commit) changed during the run: git restore, git stash, git checkout or git reset --hard would write the agent's version, which your git or editor then runs; look with git diff HEAD -- ${path} and git log first`;
  assert.deepEqual(card.text.split("\n").sort(), [
    ...moved.map((p) => `${p} → moved to ${asideOf(p, 1)} (move it back once you have read it)`),
    changed(join(repo, ".githooks", "pre-commit")), changed(join(repo, ".vscode", "tasks.json")),
  ].sort());
  // The owner, as reported: no rebase to abort any more; git restore takes the agent's hook only when asked to.
  assert.throws(() => owner(repo, {}, "rebase", "--abort"), /No rebase in progress/);
  assert.deepEqual(readdirSync(leak), [], "nothing of the agent's ran");
});

test("issue 26 r27: a run that commits ordinary files, and an owner's bisect that was in progress at launch and left as it was, give no notice", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const repo = ownerRepoWithHooks(".githooks");
  // The owner's own bisect in progress (BISECT_START, BISECT_TERMS, BISECT_NAMES…), there before the run.
  owner(repo, {}, "bisect", "start");
  const script = `echo work > work.txt && git add work.txt && git -c user.name=a -c user.email=a@example.com commit -qm work --no-verify && echo "Done: committed"`;
  const fx = await runAgent(script, repo);
  assert.equal((await fx.state()).cards.find((c) => c.kind === "notice"), undefined, "nothing planted");
  assert.equal(existsSync(join(repo, ".git", "BISECT_START")), true, "the owner's bisect left as it was");
});

test("issue 26 r27 F27a-6 (reported case: the owner's own link sub2/.vscode -> another project, there before a run that only read, was moved aside and blamed on the run): a link the guard saw at launch is not new; one the run put in its place is", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const repo = ownerRepoWithHooks(".githooks");
  const other = leakFolder();
  mkdirSync(join(repo, "sub2"));
  mkdirSync(join(repo, "sub3"));
  symlinkSync(other, join(repo, "sub2", ".vscode"));
  symlinkSync(other, join(repo, "sub3", ".idea"));
  // The run reads, and swaps only sub3's link for one leading elsewhere (the same target again is the same link).
  const fx = await runAgent(`ls sub2/.vscode sub3/.idea >/dev/null 2>&1; rm sub3/.idea && ln -s ${other}/x sub3/.idea; echo "Done: looked $?"`, repo);
  assert.equal(readlinkSync(join(repo, "sub2", ".vscode")), other, "the owner's link left in place");
  const swapped = join(repo, "sub3", ".idea");
  const card = (await fx.state()).cards.find((c) => c.kind === "notice");
  assert.equal(card?.text, `${swapped} → moved to ${asideOf(swapped, 1)} (move it back once you have read it)`);
});

test("issue 26 r28 F28a-1 (reported case: a repository made below the cwd with a core.fsmonitor was left in place with no card; the owner's git status there ran it): its .git is moved aside and named; the owner's own nested repository stays", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const repo = ownerRepoWithHooks(".githooks");
  const leak = leakFolder();
  // The owner's own nested repository in the project, there before the run.
  owner(repo, {}, "init", "-q", "mine");
  const git = "git -c user.name=a -c user.email=a@example.com";
  const script = [
    `mkdir -p vendor/lib && cd vendor/lib && git init -q && echo x > x && git add x && ${git} commit -qm x && printf '[core]\\n\\tfsmonitor = "echo nested >> ${leak}/ran.txt; false"\\n' >> .git/config && cd ../..`,
    `echo "Done: made"`,
  ].join("\n");
  const fx = await runAgent(script, repo);
  const moved = ["vendor/lib/.git"].map((p) => join(repo, p));
  for (const p of moved) assert.equal(existsSync(p), false, p);
  const card = (await fx.state()).cards.find((c) => c.kind === "notice");
  assert.deepEqual(card?.text.split("\n").sort(), moved.map((p) => `${p} → moved to ${asideOf(p, 1)} (move it back once you have read it)`).sort());
  // The owner, as reported: git status in the project and in the nested folder.
  owner(repo, {}, "status", "--short");
  owner(join(repo, "vendor", "lib"), {}, "status", "--short");
  assert.deepEqual(readdirSync(leak), [], "nothing of the agent's ran");
  assert.equal(existsSync(join(repo, "mine", ".git")), true, "the owner's own repository left as it was");
});
