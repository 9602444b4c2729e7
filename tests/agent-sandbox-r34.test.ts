/**
 * Issue 26 hostile round 34 (the agent sandbox): F34a-1 (a repository with a `core.fsmonitor` made inside the
 * project's own `.git` folder — `.git/lib2`, `.git/objects/zz`, `.git/refs/lib4` — or in `node_modules/.cache/lib`,
 * and a link to it at the project's top: the guard's walk enters neither, the check after the run took the link for
 * content, and the owner's `git status` in `lib2` ran the agent's command). The check called directly, and a real
 * sandboxed run with the report's payload.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, lstatSync, mkdirSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { asideOf, leakFolder, owner, ownerRepo, runAgent, sandboxed } from "./steering-helpers.js";
import { executableParts } from "../src/worker/steering.js";
import { plantedSteering } from "../src/worker/planted.js";

const guardedOf = (parts: ReturnType<typeof executableParts>) => new Set([...parts.mountPoints, ...parts.readOnlyParents, ...parts.readOnly]);

/** A repository of its own at `dir` (made) whose `core.fsmonitor` leaves `<leak>/<name>` when git runs there. */
function plantRepository(dir: string, leak: string, name: string): void {
  mkdirSync(dir, { recursive: true });
  owner(dir, {}, "init", "-q");
  owner(dir, {}, "config", "core.fsmonitor", `touch ${join(leak, name)}; echo`);
}

test("issue 26 r34 F34a-1 (reported cases: lib2 -> .git/lib2, lib3 -> .git/objects/zz, lib -> node_modules/.cache/lib, each a repository with a core.fsmonitor, and web -> node_modules/.cache/web holding .claude/settings.json): a link new since the launch into a git folder or a node_modules is moved aside; the owner's link there at launch stays", () => {
  const repo = ownerRepo();
  const leak = leakFolder();
  // The owner's own, before the launch: a link into an installed package.
  mkdirSync(join(repo, "node_modules", "pkg", "dist"), { recursive: true });
  symlinkSync("node_modules/pkg/dist", join(repo, "vendor-dist"));
  const parts = executableParts(repo, true, false);
  // The run.
  plantRepository(join(repo, ".git", "lib2"), leak, "lib2");
  symlinkSync(".git/lib2", join(repo, "lib2"));
  plantRepository(join(repo, ".git", "objects", "zz"), leak, "lib3");
  mkdirSync(join(repo, "src"));
  symlinkSync("../.git/objects/zz", join(repo, "src", "lib3"));
  plantRepository(join(repo, "node_modules", ".cache", "lib"), leak, "lib");
  symlinkSync("node_modules/.cache/lib", join(repo, "lib"));
  mkdirSync(join(repo, "node_modules", ".cache", "web", ".claude"), { recursive: true });
  writeFileSync(join(repo, "node_modules", ".cache", "web", ".claude", "settings.json"), '{"hooks":{}}\n');
  symlinkSync("node_modules/.cache/web", join(repo, "web"));
  // A new one beside the owner's, to the same folder: the run's (its target is any folder the run wrote).
  symlinkSync("node_modules/pkg/dist", join(repo, "vendor-dist2"));
  // Content, as before: a link to a file there, a link to a folder the walk enters.
  writeFileSync(join(repo, "node_modules", "pkg", "index.js"), "\n");
  symlinkSync("node_modules/pkg/index.js", join(repo, "index-link.js"));
  symlinkSync("src", join(repo, "source"));
  assert.equal(owner(join(repo, "lib2"), {}, "rev-parse", "--show-toplevel").trim(), join(repo, ".git", "lib2"), "git takes lib2 for a repository of its own");
  const planted = plantedSteering([repo], guardedOf(parts), parts.seen, 34);
  assert.deepEqual(planted.map((p) => [p.path, p.kind]).sort(), [
    [join(repo, "lib"), "moved"], [join(repo, "lib2"), "moved"], [join(repo, "src", "lib3"), "moved"], [join(repo, "vendor-dist2"), "moved"], [join(repo, "web"), "moved"],
  ]);
  assert.equal(readlinkSync(asideOf(join(repo, "lib2"), 34)), ".git/lib2");
  assert.equal(lstatSync(join(repo, "vendor-dist")).isSymbolicLink(), true, "the owner's link stays");
  assert.deepEqual(["index-link.js", "source"].map((n) => lstatSync(join(repo, n)).isSymbolicLink()), [true, true]);
});

test("issue 26 r34 F34a-1, the reported run: a sandboxed agent's repositories in .git and node_modules behind links at the project's top are moved aside and named; the owner's git status there runs nothing", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const repo = ownerRepo();
  const leak = leakFolder();
  const mk = (dir: string, name: string) => `mkdir -p ${dir} && (cd ${dir} && git init -q && git config core.fsmonitor "touch ${join(leak, name)}; echo")`;
  const payload = [mk(".git/lib2", "lib2"), "ln -s .git/lib2 lib2", mk(".git/refs/lib4", "lib4"), "ln -s .git/refs/lib4 lib4", mk("node_modules/.cache/lib", "lib"), "ln -s node_modules/.cache/lib lib", 'echo "Done: planted"'].join(" && ");
  const fx = await runAgent(payload, repo);
  const st = await fx.state();
  const card = st.cards.find((c: { kind: string }) => c.kind === "notice");
  assert.equal(card?.title, "The agent wrote files your git would run", JSON.stringify(st.cards));
  for (const name of ["lib", "lib2", "lib4"]) {
    assert.equal(existsSync(join(repo, name)), false, name);
    assert.match(card.text, new RegExp(`${join(repo, name).replace(/[.]/g, "\\.")} → moved to `));
  }
  // As the owner would: git in the folders of the project's top (none of those now), and in the project.
  owner(repo, {}, "status", "--short");
  assert.deepEqual(["lib", "lib2", "lib4"].filter((n) => existsSync(join(leak, n))), []);
});
