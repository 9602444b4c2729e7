/**
 * Issue 26, the round-37 review of 416fe84 (review-r37.md): FF-2 (FIFOs in a git folder's objects/), LG-1 and LG-2 (a
 * git folder that is no work tree's .git, inside another work tree; a folder of bare mirrors), L-P1 (the link
 * judgements' loop placeholder), HL-5 and HL-6 (copies of files with more names; the hard-link look's bound). The guard
 * and the check after a run called directly, as in agent-sandbox-r36.test.ts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { linkSync, lstatSync, mkdirSync, readdirSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { owner, ownerRepo, removed } from "./steering-helpers.js";
import { tempDir } from "./helpers.js";
import { executableParts, looseGitFoldersMax } from "../src/worker/steering.js";
import { plantedSteering } from "../src/worker/planted.js";
import { hardLinked, hardLinkEntriesMax } from "../src/worker/hard-links.js";

const guardedOf = (parts: ReturnType<typeof executableParts>) => new Set([...parts.mountPoints, ...parts.readOnlyParents, ...parts.readOnly]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The owner's git with a deadline: "rc=<n>", or "held" when it waited on something past 5 s. */
const ownerGit = (cwd: string, ...args: string[]) => {
  const r = spawnSync("git", args, { cwd, timeout: 5_000, encoding: "utf8", env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent-aa-owner-home", GIT_CONFIG_NOSYSTEM: "1" } });
  return r.error ? "held" : `rc=${r.status}`;
};

test("issue 26 review r37 FF-2 (reported case: a FIFO objects/info/commit-graphs/commit-graph-chain, and one in place of the HEAD commit's loose object, held the owner's git log and status): a FIFO anywhere in objects/ is moved aside", () => {
  const repo = ownerRepo();
  owner(repo, {}, "commit", "-q", "--allow-empty", "-m", "two");
  const sinceMs = Date.now();
  const parts = executableParts(repo, true, false);
  mkdirSync(join(repo, ".git", "objects", "info", "commit-graphs"), { recursive: true });
  const chain = join(repo, ".git", "objects", "info", "commit-graphs", "commit-graph-chain");
  execFileSync("mkfifo", [chain]);
  const head = owner(repo, {}, "rev-parse", "HEAD").trim();
  const obj = join(repo, ".git", "objects", head.slice(0, 2), head.slice(2));
  const kept = readFileSyncBuffer(obj);
  rmSync(obj, { force: true });
  execFileSync("mkfifo", [obj]);
  const planted = plantedSteering([repo], guardedOf(parts), parts.seen, 37, { sinceMs });
  assert.deepEqual(planted.map((p) => [p.path, p.kind]).sort(), [[chain, "moved"], [obj, "moved"]].sort());
  writeFileSync(obj, kept, { mode: 0o444 });
  assert.equal(ownerGit(repo, "log", "-1", "--format=%s"), "rc=0");
  assert.equal(ownerGit(repo, "status", "--short"), "rc=0");
});

function readFileSyncBuffer(path: string): Buffer {
  return execFileSync("cat", [path]);
}

test("issue 26 review r37 LG-1 (reported case: the cwd ~/work a repository holding sp.gitdir, gitignored, the git folder of ~/src/sp whose core.fsmonitor is ~/work/tools/mon.sh): a git folder that is no work tree's .git is guarded as one inside another work tree too", () => {
  const base = realpathSync(tempDir("aa-r37-lg1-"));
  removed.push(base);
  const work = join(base, "work");
  const tree = join(base, "src", "sp");
  mkdirSync(work);
  mkdirSync(tree, { recursive: true });
  owner(work, {}, "init", "-q", "-b", "main");
  writeFileSync(join(work, ".gitignore"), "*.gitdir/\n");
  owner(tree, {}, "init", "-q", "-b", "main", "--separate-git-dir", join(work, "sp.gitdir"));
  mkdirSync(join(work, "tools"));
  writeFileSync(join(work, "tools", "mon.sh"), "#!/bin/sh\necho\n", { mode: 0o755 });
  owner(tree, {}, "config", "core.fsmonitor", join(work, "tools", "mon.sh"));
  const parts = executableParts(work, true, false);
  assert.equal(parts.mountPoints.includes(join(work, "sp.gitdir")), true);
  assert.equal(parts.readOnly.includes(join(work, "tools", "mon.sh")), true);
  assert.equal(parts.readOnly.includes(join(work, "sp.gitdir", "config")), true);
});

test("issue 26 review r37 LG-2 (reported case: a cwd of 101 bare mirrors was refused, counted as repositories): bare git folders have a limit of their own", () => {
  const base = realpathSync(tempDir("aa-r37-lg2-"));
  removed.push(base);
  for (let i = 0; i < 101; i++) execFileSync("git", ["init", "-q", "--bare", join(base, `m${i}.git`)]);
  const parts = executableParts(base, true, false);
  assert.equal(parts.mountPoints.filter((p) => p.endsWith(".git")).length, 101);
  assert.equal(looseGitFoldersMax, 1_000);
});

test("issue 26 review r37 L-P1 (reported case: a loop x -> z -> x judged first kept z's provisional 'harmless', and b -> w -> z -> x -> planted .claude stayed): a target judged while a loop was pending is judged again", async () => {
  const repo = ownerRepo();
  await sleep(1_100);
  const sinceMs = Date.now();
  const parts = executableParts(repo, true, false);
  const nm = join(repo, "node_modules");
  for (const d of ["x", "z", "w", "b/.claude"]) mkdirSync(join(nm, d), { recursive: true });
  writeFileSync(join(nm, "b", ".claude", "settings.json"), '{"hooks":{}}\n');
  symlinkSync("../z", join(nm, "x", "l1"));
  symlinkSync("../b", join(nm, "x", "l2"));
  symlinkSync("../x", join(nm, "z", "xl"));
  symlinkSync("../z", join(nm, "w", "zl"));
  symlinkSync("node_modules/x", join(repo, "a"));
  symlinkSync("node_modules/w", join(repo, "b"));
  const planted = plantedSteering([repo], guardedOf(parts), parts.seen, 37, { sinceMs });
  assert.deepEqual(planted.map((p) => [p.path, p.kind]).sort(), [[join(repo, "a"), "moved"], [join(repo, "b"), "moved"]]);
});

test("issue 26 review r37 HL-5 (reported case: one 64 MiB file under 40 names .mcp.json, each copied: 2.5 GiB): each file is copied once per check, its other names moved aside become names of that copy", async () => {
  const repo = ownerRepo();
  await sleep(1_100);
  const sinceMs = Date.now();
  const parts = executableParts(repo, true, false);
  writeFileSync(join(repo, "blob"), Buffer.alloc(1024 * 1024, 1));
  for (let i = 0; i < 5; i++) {
    mkdirSync(join(repo, `p${i}`));
    linkSync(join(repo, "blob"), join(repo, `p${i}`, ".mcp.json"));
  }
  const planted = plantedSteering([repo], guardedOf(parts), parts.seen, { run: 37, quarantine: null, copies: { bytesLeft: 8 * 1024 * 1024, made: new Map() } }, { sinceMs });
  assert.equal(planted.length, 5);
  const inodes = new Set(planted.map((p) => statSync(p.movedTo!).ino));
  assert.equal(inodes.size, 1);
  assert.equal(lstatSync(planted[0]!.movedTo!).nlink, 5);
  assert.notEqual([...inodes][0], statSync(join(repo, "blob")).ino);
});

test("issue 26 review r37 HL-6 and HL-3b (a read-only folder of many links was read to its end; node_modules' entries used the bound up): every entry counts, node_modules is not entered", () => {
  const dir = tempDir("aa-r37-hl-");
  removed.push(dir);
  mkdirSync(join(dir, "links"));
  for (let i = 0; i < hardLinkEntriesMax + 10; i++) symlinkSync("x", join(dir, "links", `l${i}`));
  assert.deepEqual(hardLinked([join(dir, "links")]), { cut: join(dir, "links") });
  mkdirSync(join(dir, "pkg", "node_modules", "big"), { recursive: true });
  for (let i = 0; i < hardLinkEntriesMax + 10; i++) writeFileSync(join(dir, "pkg", "node_modules", "big", `f${i}`), "");
  assert.equal(hardLinked([join(dir, "pkg")]), null);
  assert.equal(readdirSync(join(dir, "pkg")).length, 1);
});

test("issue 26 r37 F37a-1 (reported case: objects/info/alternates naming a store in node_modules whose own info/alternates is a FIFO held the owner's git status and log): the stores alternates name are looked through too", () => {
  const repo = ownerRepo();
  const sinceMs = Date.now();
  const parts = executableParts(repo, true, false);
  const store = join(repo, "node_modules", ".cache", "objs");
  mkdirSync(join(store, "info"), { recursive: true });
  execFileSync("mkfifo", [join(store, "info", "alternates")]);
  writeFileSync(join(repo, ".git", "objects", "info", "alternates"), "# the agent's\n../../node_modules/.cache/objs\n");
  const planted = plantedSteering([repo], guardedOf(parts), parts.seen, 37, { sinceMs });
  assert.deepEqual(planted.map((p) => [p.path, p.kind]), [[join(store, "info", "alternates"), "moved"]]);
  assert.equal(ownerGit(repo, "status", "--short"), "rc=0");
});
