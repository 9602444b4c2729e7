/**
 * Issue 26 hostile round 12, F12-1, F12-2, F12-7, F12-8: what a sandboxed agent plants in the folder it writes that the
 * owner's own git or tools later run as the hub's user. Each reported case is run as reported: real bubblewrap, real
 * git, a real command agent under the real worker; the owner's git is run afterwards, as the owner would, with a
 * `core.fsmonitor` or hook of the agent's copying the hub's master key into a folder the test reads.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./helpers.js";
import { asideOf, fsmonitorConfig, owner, ownerRepo, removed, runAgent, sandboxed, tryFn } from "./steering-helpers.js";

/** A folder the agent's planted commands would copy the master key into (its listing: what ran). */
function leakFolder(): string {
  const leak = realpathSync(tempDir("aa-r12-leak-"));
  removed.push(leak);
  return leak;
}

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
  const moved = [".git/config.worktree", ".git/worktrees/wt/config.worktree", "ro/.git", "wtl/.git", "zzz/.git", "lib/evil/.git"].map((p) => join(repo, p));
  for (const p of moved) assert.equal(existsSync(p), false, p);
  const aside = moved.map((p) => asideOf(p, 1));
  assert.deepEqual(readdirSync(join(repo, "ro", ".git.planted-run-1")), [], "the name taken first left as it was");
  const card = (await fx.state()).cards.find((c) => c.kind === "notice");
  assert.equal(card?.title, "The agent wrote files your git would run");
  assert.equal(card.text, moved.map((p, i) => `${p} → moved to ${aside[i]} (move it back once you have read it)`).join("\n"));
});
