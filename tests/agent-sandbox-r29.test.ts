/**
 * Issue 26 hostile round 29 (the agent sandbox): F29a-2 (links in the writable git folder — `logs/HEAD -> ~/.bashrc`,
 * `COMMIT_EDITMSG -> <any file>` — made the owner's git write a branch name of the agent's into the owner's shell
 * profile) and F29a-3 (a folder the guard cannot list — `chmod 0311`, or nested past the system's path length — hid a
 * new repository and a `.claude` from the check after the run, and the owner's own clone from the guard at launch).
 * Unit level, as agent-sandbox-r17.test.ts: the guard and the check after a run called directly.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { asideOf, owner, ownerRepo, removed } from "./steering-helpers.js";
import { tempDir } from "./helpers.js";
import { executableParts, GuardLimitError } from "../src/worker/steering.js";
import { MovedAside, movePlantedAside, plantedSteering } from "../src/worker/planted.js";
import { gitStateAt, gitStateChanged } from "../src/worker/git-state.js";
import { gitPrivateDir } from "../src/worker/git-isolated.js";

const guardedOf = (parts: ReturnType<typeof executableParts>) => new Set([...parts.mountPoints, ...parts.readOnlyParents, ...parts.readOnly]);

test("issue 26 r29 F29a-2 (reported case: .git/logs/HEAD -> ~/.bashrc and .git/COMMIT_EDITMSG -> a file outside): a link made in a git folder during the run is moved aside after it; one there at launch stays", () => {
  const repo = ownerRepo();
  const outside = realpathSync(tempDir("aa-r29-outside-"));
  removed.push(outside);
  writeFileSync(join(outside, "bashrc"), "# the owner's profile\n");
  // The owner's own link at launch (a shared rr-cache): not the run's.
  mkdirSync(join(outside, "rr-cache"));
  symlinkSync(join(outside, "rr-cache"), join(repo, ".git", "rr-cache"));
  const parts = executableParts(repo, true, false);
  assert.deepEqual(plantedSteering([repo], guardedOf(parts), parts.seen, 9), []);
  // The run: a branch named as a command, the reflog and the commit message made links out of the folder.
  owner(repo, {}, "branch", "x;sh${IFS}p;#");
  rmSync(join(repo, ".git", "logs", "HEAD"));
  symlinkSync(join(outside, "bashrc"), join(repo, ".git", "logs", "HEAD"));
  rmSync(join(repo, ".git", "COMMIT_EDITMSG"));
  symlinkSync(join(outside, "editmsg"), join(repo, ".git", "COMMIT_EDITMSG"));
  mkdirSync(join(repo, ".git", "logs", "refs", "heads"), { recursive: true });
  symlinkSync(join(outside, "bashrc"), join(repo, ".git", "logs", "refs", "heads", "main2"));
  const planted = plantedSteering([repo], guardedOf(parts), parts.seen, 9);
  const links = [join(repo, ".git", "COMMIT_EDITMSG"), join(repo, ".git", "logs", "HEAD"), join(repo, ".git", "logs", "refs", "heads", "main2")];
  assert.deepEqual(planted.map((p) => [p.path, p.kind]).sort(), links.map((l) => [l, "moved"]));
  for (const l of links) assert.equal(lstatSync(asideOf(l, 9)).isSymbolicLink(), true);
  assert.equal(lstatSync(join(repo, ".git", "rr-cache")).isSymbolicLink(), true, "the owner's link stays");
  // The owner's git now writes its own reflog, not the profile.
  owner(repo, {}, "checkout", "-q", "-b", "other");
  assert.equal(readFileSync(join(outside, "bashrc"), "utf8"), "# the owner's profile\n");
  assert.equal(existsSync(join(outside, "editmsg")), false);
});

test("issue 26 r29 F29a-3 (reported case: .claude and a repository 20 folders of 250 characters down, past the system's path length): the launch is refused naming where the walk stopped; made during a run, that folder is moved aside whole", () => {
  const folder = realpathSync(tempDir("aa-r29-deep-"));
  const name = "d".repeat(250);
  // Made by a process stepping down (a path this long cannot be named whole: each step relative).
  const deep = () => execFileSync(process.execPath, ["-e", `const fs = require("node:fs"); for (let i = 0; i < 20; i++) { fs.mkdirSync(${JSON.stringify(name)}); process.chdir(${JSON.stringify(name)}); } fs.mkdirSync(".claude"); fs.mkdirSync("lib/.git", { recursive: true }); fs.writeFileSync(".claude/settings.json", "{}");`], { cwd: folder });
  try {
    const parts = executableParts(folder, true, false);
    deep();
    const planted = plantedSteering([folder], guardedOf(parts), parts.seen, 4);
    assert.equal(planted.length, 1, JSON.stringify(planted));
    const at = planted[0]!;
    assert.equal(at.kind, "moved");
    assert.equal(at.path.startsWith(join(folder, name)), true);
    assert.equal(at.path.length < 4096 && at.path.length > 3500, true, `${at.path.length} characters`);
    assert.equal(existsSync(at.path), false);
    assert.equal(dirname(at.movedTo!), dirname(at.path));
  } finally {
    execFileSync("rm", ["-rf", folder]);
  }
  // Already there at a launch: refused, naming the folder the walk could not list (its parent, which can be named).
  mkdirSync(folder);
  try {
    deep();
    assert.throws(() => executableParts(folder, true, false), (e: unknown) => e instanceof GuardLimitError && e.kind === "unreadable" && e.folder.startsWith(join(folder, name)) && e.folder.length < 4096);
  } finally {
    execFileSync("rm", ["-rf", folder]);
  }
});

/** Runs the guard's walk of `folder` (`restore`: as after a run) as this user, or as `nobody` when this is root (root reads every folder). */
function walkAsUser(folder: string, restore = false): { trees: string[]; steered: string[]; unreadable: string[]; heads: string[] } {
  const walk = fileURLToPath(new URL("../dist/src/worker/guard-walk.js", import.meta.url));
  const script = `import(${JSON.stringify(walk)}).then((m) => console.log(JSON.stringify(m.walkOf(${JSON.stringify(folder)}, m.guardLimits, new Set([".claude"]), ${restore}))))`;
  const asUser = process.getuid?.() === 0 ? ["runuser", "-u", "nobody", "--", process.execPath] : [process.execPath];
  return JSON.parse(execFileSync(asUser[0]!, [...asUser.slice(1), "-e", script], { encoding: "utf8" })) as ReturnType<typeof walkAsUser>;
}

test("issue 26 r29 F29a-3 (reported case: chmod 0311 pkg, holding pkg/lib/.git and pkg/web/.claude): a folder of the user's own that the walk cannot list is named unreadable (the launch refused, the check after a run moves it aside); another user's is not the agent's", { skip: existsSync("/usr/sbin/runuser") || existsSync("/sbin/runuser") || process.getuid?.() !== 0 ? false : "runuser missing" }, () => {
  const folder = tempDir("aa-r29-noread-");
  removed.push(folder);
  chmodSync(folder, 0o755);
  mkdirSync(join(folder, "pkg", "lib", ".git"), { recursive: true });
  mkdirSync(join(folder, "pkg", "web", ".claude"), { recursive: true });
  mkdirSync(join(folder, "other"));
  const uid = process.getuid?.() === 0 ? 65534 : process.getuid!();
  execFileSync("chown", ["-R", `${uid}`, folder]);
  assert.deepEqual(walkAsUser(folder), { trees: [join(folder, "pkg", "lib")], steered: [join(folder, "pkg", "web")], unreadable: [], heads: [], links: [], fifos: [] });
  chmodSync(join(folder, "pkg"), 0o311);
  assert.deepEqual(walkAsUser(folder), { trees: [], steered: [], unreadable: [join(folder, "pkg")], heads: [], links: [], fifos: [] });
  // After a run the user's own folder is made readable again and walked (a `chmod 0311 .` must not move the project).
  assert.deepEqual(walkAsUser(folder, true), { trees: [join(folder, "pkg", "lib")], steered: [join(folder, "pkg", "web")], unreadable: [], heads: [], links: [], fifos: [] });
  assert.equal(lstatSync(join(folder, "pkg")).mode & 0o777, 0o711);
  // Review of round 29: a folder listed but not searchable (`chmod 600 pkg`): pkg/lib cannot be entered — pkg is named.
  chmodSync(join(folder, "pkg"), 0o600);
  assert.deepEqual(walkAsUser(folder).unreadable, [join(folder, "pkg")]);
  assert.deepEqual(walkAsUser(folder, true).unreadable, []);
  // A name that is not UTF-8 is read back as another: its folder is named.
  const odd = Buffer.concat([Buffer.from(join(folder, "pkg", "b")), Buffer.from([0xff])]);
  mkdirSync(odd);
  chownSync(odd, uid, uid);
  assert.deepEqual(walkAsUser(folder).unreadable, [join(folder, "pkg")]);
  rmSync(odd as unknown as string, { recursive: true });
  // Another user's folder the user cannot list: no agent of this user writes in it.
  chmodSync(join(folder, "pkg"), 0o755);
  if (process.getuid?.() === 0) {
    chownSync(join(folder, "other"), 0, 0);
    chmodSync(join(folder, "other"), 0o311);
    assert.deepEqual(walkAsUser(folder).unreadable, []);
  }
});

test("issue 26 r29 F29a-1 (reported case: a rebase-merge/ with an exec line moved aside by one run was put back by another run writing the same folder, while the card said it was moved): what a check moves goes into the worker's quarantine, out of every folder an agent writes; a quarantine on another file system falls back to beside it", () => {
  const repo = ownerRepo();
  const worker = realpathSync(tempDir("aa-r29-worker-"));
  removed.push(worker);
  const quarantine = join(worker, "planted");
  const before = gitStateAt([repo], [], gitPrivateDir(worker));
  mkdirSync(join(repo, ".git", "rebase-merge"));
  writeFileSync(join(repo, ".git", "rebase-merge", "git-rebase-todo"), "exec cat ~/.agent-autoloop/master.key\n");
  const found = gitStateChanged(before, [repo], { run: 4, quarantine }, gitPrivateDir(worker));
  assert.deepEqual(found.map((p) => [p.path, p.kind]), [[join(repo, ".git", "rebase-merge"), "moved"]]);
  assert.match(found[0]!.movedTo!, new RegExp(`^${quarantine}/run-4-[0-9a-f]{16}${repo}/\\.git/rebase-merge$`));
  assert.equal(readFileSync(join(found[0]!.movedTo!, "git-rebase-todo"), "utf8"), "exec cat ~/.agent-autoloop/master.key\n");
  assert.equal(existsSync(join(repo, ".git", "rebase-merge")), false);
  assert.equal(lstatSync(join(quarantine, found[0]!.movedTo!.slice(quarantine.length + 1).split("/")[0]!)).mode & 0o777, 0o700);
  // The quarantine on another file system (/dev/shm, a tmpfs here): beside the entry, as before.
  const shm = existsSync("/dev/shm") ? tempDirIn("/dev/shm") : null;
  if (shm !== null) {
    try {
      writeFileSync(join(repo, ".git", "MERGE_HEAD"), "0000\n");
      const beside = gitStateChanged(before, [repo], { run: 5, quarantine: join(shm, "planted") }, gitPrivateDir(worker));
      assert.deepEqual(beside.map((p) => [p.kind, dirname(p.movedTo!)]), [["moved", join(repo, ".git")]]);
      assert.deepEqual(readdirSync(join(shm, "planted")), [], "no box left behind");
    } finally {
      rmSync(shm, { recursive: true, force: true });
    }
  }
});

/** A new temporary folder in `root`. */
function tempDirIn(root: string): string {
  return mkdtempSync(join(root, "aa-r29-"));
}

test("issue 26 r29 review (F29a-1's kind, a second way): a run launched while another run's plant stood there takes it for the owner's; once the other check moved it, one put back in its place — the same bytes, another entry — is new to this run's check too", () => {
  const repo = ownerRepo();
  const worker = realpathSync(tempDir("aa-r29-worker-"));
  removed.push(worker);
  const quarantine = join(worker, "planted");
  // There at this run's launch (the other run's plants): a project file the guard keeps read-only, a rebase in progress.
  writeFileSync(join(repo, ".mcp.json"), '{"mcpServers":{}}\n');
  mkdirSync(join(repo, ".git", "rebase-merge"));
  writeFileSync(join(repo, ".git", "rebase-merge", "git-rebase-todo"), "exec id\n");
  const launched = Date.now();
  const parts = executableParts(repo, true, false);
  const before = gitStateAt([repo], [], gitPrivateDir(worker));
  const moved = new MovedAside();
  const to = { run: 2, quarantine, moved };
  assert.deepEqual(plantedSteering([repo], guardedOf(parts), parts.seen, to, { sinceMs: launched }), []);
  assert.deepEqual(gitStateChanged(before, [repo], to, gitPrivateDir(worker)), []);
  // The other run's check (the same worker) moves them; this run puts the same bytes back.
  for (const p of [join(repo, ".mcp.json"), join(repo, ".git", "rebase-merge")]) assert.equal(movePlantedAside(p, { run: 1, quarantine, moved }).kind, "moved");
  writeFileSync(join(repo, ".mcp.json"), '{"mcpServers":{}}\n');
  mkdirSync(join(repo, ".git", "rebase-merge"));
  writeFileSync(join(repo, ".git", "rebase-merge", "git-rebase-todo"), "exec id\n");
  assert.deepEqual(plantedSteering([repo], guardedOf(parts), parts.seen, to, { sinceMs: launched }).map((p) => [p.path, p.kind]), [[join(repo, ".mcp.json"), "moved"]]);
  assert.deepEqual(gitStateChanged(before, [repo], to, gitPrivateDir(worker)).map((p) => [p.path, p.kind]), [[join(repo, ".git", "rebase-merge"), "moved"]]);
  // Yours, changed in place meanwhile (your editor saving it anew), is not the run's.
  writeFileSync(join(repo, ".mcp.json"), '{"mcpServers":{}}\n');
  execFileSync("sh", ["-c", `cp ${join(repo, ".mcp.json")} /tmp/aa-r29-mcp && mv /tmp/aa-r29-mcp ${join(repo, ".mcp.json")}`]);
  assert.deepEqual(plantedSteering([repo], guardedOf(parts), parts.seen, { run: 3, quarantine, moved: new MovedAside() }, { sinceMs: launched }), []);
});

test("issue 26 r29 review: a worker home reached through a link still takes what a check moves (its real path)", () => {
  const repo = ownerRepo();
  const worker = realpathSync(tempDir("aa-r29-worker-"));
  removed.push(worker);
  const linked = `${worker}-link`;
  symlinkSync(worker, linked);
  removed.push(linked);
  const before = gitStateAt([repo], [], gitPrivateDir(worker));
  writeFileSync(join(repo, ".git", "MERGE_HEAD"), "0000\n");
  const found = gitStateChanged(before, [repo], { run: 6, quarantine: join(linked, "planted") }, gitPrivateDir(worker));
  assert.match(found[0]!.movedTo!, new RegExp(`^${worker}/planted/run-6-[0-9a-f]{16}${repo}/\\.git/MERGE_HEAD$`));
});
