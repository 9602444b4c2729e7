/**
 * Issue 26 hostile round 34 (the agent sandbox): F34a-1 (a repository with a `core.fsmonitor` made inside the
 * project's own `.git` folder — `.git/lib2`, `.git/objects/zz`, `.git/refs/lib4` — or in `node_modules/.cache/lib`,
 * and a link to it at the project's top: the guard's walk enters neither, the check after the run took the link for
 * content, and the owner's `git status` in `lib2` ran the agent's command). The check called directly, and a real
 * sandboxed run with the report's payload.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, lstatSync, mkdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { asideOf, leakFolder, owner, ownerRepo, runAgent, sandboxed } from "./steering-helpers.js";
import { executableParts } from "../src/worker/steering.js";
import { plantedSteering } from "../src/worker/planted.js";
import { sandboxArgv } from "../src/worker/sandbox.js";

const guardedOf = (parts: ReturnType<typeof executableParts>) => new Set([...parts.mountPoints, ...parts.readOnlyParents, ...parts.readOnly]);

/** A repository of its own at `dir` (made) whose `core.fsmonitor` leaves `<leak>/<name>` when git runs there. */
function plantRepository(dir: string, leak: string, name: string): void {
  mkdirSync(dir, { recursive: true });
  owner(dir, {}, "init", "-q");
  owner(dir, {}, "config", "core.fsmonitor", `touch ${join(leak, name)}; echo`);
}

test("issue 26 r34 F34a-1 (reported cases: lib2 -> .git/lib2, lib3 -> .git/objects/zz, lib -> node_modules/.cache/lib, each a repository with a core.fsmonitor, and web -> node_modules/.cache/web holding .claude/settings.json; the review's: a folder named ..x, another writable folder's .git, the owner's link whose target the run made a repository): a link that leads where the walk does not look, to a repository the launch did not see or a CLI's settings, is moved aside; links to what the owner had stay", () => {
  const repo = ownerRepo();
  const other = ownerRepo(); // a second writable folder of the run
  const leak = leakFolder();
  // The owner's own, before the launch: links into installed packages, a committed one that dangles until npm install,
  // a workspace package's node_modules that is a link.
  mkdirSync(join(repo, "node_modules", "pkg", "dist"), { recursive: true });
  mkdirSync(join(repo, "node_modules", "pkg", "lib"), { recursive: true });
  symlinkSync("node_modules/pkg/dist", join(repo, "vendor-dist"));
  symlinkSync("node_modules/pkg/lib", join(repo, "vendor-lib"));
  mkdirSync(join(repo, "public"));
  symlinkSync("../node_modules/jquery/dist", join(repo, "public", "jquery"));
  const parts = executableParts(repo, true, false);
  const otherParts = executableParts(other, true, false);
  const guarded = new Set([...guardedOf(parts), ...guardedOf(otherParts)]);
  const seen = { ...parts.seen };
  for (const k of Object.keys(seen) as (keyof typeof seen)[]) seen[k] = [...parts.seen[k], ...otherParts.seen[k]];
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
  plantRepository(join(repo, "..x", "node_modules", "lib"), leak, "dotdot");
  symlinkSync("..x/node_modules/lib", join(repo, "dotdot"));
  plantRepository(join(other, ".git", "lib2"), leak, "other");
  symlinkSync(join(other, ".git", "lib2"), join(repo, "other-lib2"));
  plantRepository(join(repo, "node_modules", "pkg", "lib"), leak, "behind");
  // What the run may do that plants nothing: a new link beside the owner's to the same package folder, npm install
  // making the committed link's target, git making the owner's link again (a new entry), a workspace link.
  symlinkSync("node_modules/pkg/dist", join(repo, "vendor-dist2"));
  mkdirSync(join(repo, "node_modules", "jquery", "dist"), { recursive: true });
  rmSync(join(repo, "vendor-dist"));
  symlinkSync("node_modules/pkg/dist", join(repo, "vendor-dist"));
  mkdirSync(join(repo, "packages", "a"), { recursive: true });
  symlinkSync("../../node_modules", join(repo, "packages", "a", "node_modules"));
  writeFileSync(join(repo, "node_modules", "pkg", "index.js"), "\n");
  symlinkSync("node_modules/pkg/index.js", join(repo, "index-link.js"));
  symlinkSync("src", join(repo, "source"));
  assert.equal(owner(join(repo, "lib2"), {}, "rev-parse", "--show-toplevel").trim(), join(repo, ".git", "lib2"), "git takes lib2 for a repository of its own");
  const planted = plantedSteering([repo, other], guarded, seen, 34);
  assert.deepEqual(planted.map((p) => [p.path, p.kind]).sort(), [
    [join(repo, "dotdot"), "moved"], [join(repo, "lib"), "moved"], [join(repo, "lib2"), "moved"], [join(repo, "other-lib2"), "moved"],
    // The workspace link leads to the whole node_modules, which now holds the run's repositories (.cache/lib).
    [join(repo, "packages", "a", "node_modules"), "moved"],
    [join(repo, "src", "lib3"), "moved"], [join(repo, "vendor-lib"), "moved"], [join(repo, "web"), "moved"],
  ]);
  assert.equal(readlinkSync(asideOf(join(repo, "lib2"), 34)), ".git/lib2");
  for (const n of ["vendor-dist", "vendor-dist2", "public/jquery", "index-link.js", "source"]) assert.equal(lstatSync(join(repo, n)).isSymbolicLink(), true, n);
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

test("issue 26 r34 review (reported case: a cwd of /tmp, the hub's TMPDIR /tmp/X/sub, and `mv /tmp/X /tmp/X.moved` took tsx's hidden cache away to be read): tsx's cache hidden inside a writable folder has the folders between them pinned, as every part bound there (not every hidden home: a cwd of /tmp holds up to 200)", () => {
  const { argv, sources } = sandboxArgv({ bwrap: "bwrap", writable: ["/tmp"], hide: "/nonexistent-home", alsoHide: ["/tmp/X/sub/tsx-0", "/tmp/Y/home"], pinned: ["/tmp/X/sub/tsx-0"], show: [], cwd: "/tmp" }, ["true"], null);
  const bound = (flag: string) => argv.flatMap((a, i) => (a === flag ? [argv[i + 2]!] : []));
  assert.deepEqual(bound("--bind-fd"), ["/tmp", "/tmp/X", "/tmp/X/sub"]);
  assert.deepEqual(sources, ["/tmp", "/tmp/X", "/tmp/X/sub"]);
  // The tmpfs over the cache comes after the pins (bwrap mounts in order).
  assert.ok(argv.lastIndexOf("/tmp/X/sub") < argv.indexOf("/tmp/X/sub/tsx-0"));
});

test("issue 26 r34 F34a-1, the round-35 review (reported cases: a repository below the link's target, lib -> node_modules/.cache/x with x/inner a repository; a second link there, x2/inner -> ../../../.git/y; a cwd below a repository's top, whose owner's link leads into node_modules): what lies below a link's target is looked at too; the repository holding the folder is a known one", () => {
  const repo = ownerRepo();
  const leak = leakFolder();
  mkdirSync(join(repo, "pkg", "node_modules", "dep", "dist"), { recursive: true });
  symlinkSync("node_modules/dep/dist", join(repo, "pkg", "dist-link")); // the owner's, in a package of the monorepo
  const parts = executableParts(repo, true, false);
  const pkg = join(repo, "pkg");
  const pkgParts = executableParts(pkg, true, false);
  plantRepository(join(repo, "node_modules", ".cache", "x", "inner"), leak, "below");
  symlinkSync("node_modules/.cache/x", join(repo, "lib"));
  plantRepository(join(repo, ".git", "y"), leak, "second");
  mkdirSync(join(repo, "node_modules", "x2"), { recursive: true });
  symlinkSync("../../.git/y", join(repo, "node_modules", "x2", "inner"));
  symlinkSync("node_modules/x2", join(repo, "lib5"));
  const planted = plantedSteering([repo], guardedOf(parts), parts.seen, 36);
  assert.deepEqual(planted.map((p) => [p.path, p.kind]).sort(), [[join(repo, "lib"), "moved"], [join(repo, "lib5"), "moved"]]);
  // A rule whose cwd is the package: the project's repository holds it, and the owner's link there stays.
  assert.deepEqual(plantedSteering([pkg], guardedOf(pkgParts), pkgParts.seen, 37), []);
  assert.equal(lstatSync(join(pkg, "dist-link")).isSymbolicLink(), true);
});
