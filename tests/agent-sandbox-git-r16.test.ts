/**
 * Issue 26 hostile round 16: F16-5 (git's 32-bit size in the index check), F16-3 (the system file, GIT_CONFIG_GLOBAL
 * and GIT_CONFIG_COUNT read by the guard), F16-6 (a configuration file too large to read refuses the launch). Unit
 * level: the guard (`executableParts`) and the check after a run (`maskedChanges`, `plantedSteering`) called directly —
 * the real-bubblewrap run adds nothing to what they decide.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { closeSync, mkdirSync, realpathSync, openSync, readFileSync, utimesSync, writeFileSync, writeSync, ftruncateSync, statSync } from "node:fs";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { owner, ownerRepo, removed, setEnv } from "./steering-helpers.js";
import { tempDir } from "./helpers.js";
import { executableParts, GuardLimitError, guardLimitText, noneSeen } from "../src/worker/steering.js";
import { maskedChanges } from "../src/worker/index-stat.js";
import { plantedNotice, plantedSteering, type Planted } from "../src/worker/planted.js";

/**
 * Sets the stat data of the index entry of `path` in `repo` to the file's (ctime, mtime; the size is left, 32 bits)
 * and the index's checksum (version 2): what the round's attack did.
 */
function patchEntryTimes(repo: string, path: string): void {
  const st = statSync(join(repo, path), { bigint: true });
  const file = join(repo, ".git", "index");
  const b = readFileSync(file);
  let off = 12;
  for (let i = 0; i < b.readUInt32BE(8); i++) {
    const nl = b.readUInt16BE(off + 60) & 0xfff;
    if (b.subarray(off + 62, off + 62 + nl).toString() === path) {
      b.writeUInt32BE(Number(st.ctimeNs / 1_000_000_000n), off);
      b.writeUInt32BE(Number(st.ctimeNs % 1_000_000_000n), off + 4);
      b.writeUInt32BE(Number(st.mtimeNs / 1_000_000_000n), off + 8);
      b.writeUInt32BE(Number(st.mtimeNs % 1_000_000_000n), off + 12);
    }
    off += Math.floor((62 + nl + 8) / 8) * 8;
  }
  createHash("sha1").update(b.subarray(0, b.length - 20)).digest().copy(b, b.length - 20);
  writeFileSync(file, b);
}

test("issue 26 r16 F16-5 (reported case: tracked build.sh of 24 bytes replaced by a payload and sparse zeros to 2^32 + 24 bytes, its index entry's 32-bit size 24 and mtime matching): git status shows nothing; the check names the file as too large to compare, and the card says so", () => {
  const repo = ownerRepo();
  writeFileSync(join(repo, "build.sh"), "#!/bin/sh\necho building\n", { mode: 0o755 });
  owner(repo, {}, "add", "build.sh");
  owner(repo, {}, "commit", "-qm", "build");
  const big = 2 ** 32 + 24;
  const fd = openSync(join(repo, "build.sh"), "w");
  writeSync(fd, "cat ~/.key > /tmp/x\n");
  ftruncateSync(fd, big);
  closeSync(fd);
  const sec = Date.UTC(2024, 0, 1) / 1000;
  utimesSync(join(repo, "build.sh"), sec, sec);
  patchEntryTimes(repo, "build.sh");
  assert.equal(owner(repo, {}, "status", "--porcelain"), "", "the attack works: git compares the size mod 2^32");
  const found = maskedChanges(join(repo, ".git"), repo, 0, { files: 20_000, bytes: 512 * 1024 * 1024 });
  assert.deepEqual(found, { masked: [], unhashed: [join(repo, "build.sh")], cut: false });
  const p: Planted = { path: join(repo, "build.sh"), movedTo: null, kind: "maskBig" };
  assert.equal(plantedNotice([p], "en")?.text, `${join(repo, "build.sh")}: changed during the run while git takes it as unchanged by its time and size, and too large for the check to compare with its index entry (512 MiB at most a run): it may hide a change from git status and git diff; touch the file and git compares its content`);
  assert.match(plantedNotice([p], "zh")?.text ?? "", /太大/);
});

/** A home of the owner's for one test (HOME of the worker, no XDG folder, none of git's configuration variables), removed after it. */
function ownerHome(): string {
  const home = realpathSync(tempDir("aa-r16-home-"));
  removed.push(home);
  setEnv({ HOME: home, XDG_CONFIG_HOME: "", GIT_CONFIG_GLOBAL: "", GIT_CONFIG_SYSTEM: "", GIT_CONFIG_NOSYSTEM: "", GIT_CONFIG_COUNT: "" });
  return home;
}

/** A repository of the owner's with committed scripts `tools/<name>.sh` for each of `names`. */
function repoWithTools(names: string[]): string {
  const repo = ownerRepo();
  mkdirSync(join(repo, "tools"));
  for (const n of names) writeFileSync(join(repo, "tools", `${n}.sh`), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  owner(repo, {}, "add", ".");
  owner(repo, {}, "commit", "-qm", "tools");
  return repo;
}

test("issue 26 r16 F16-3 (reported case: the system file names tools/sys.sh by an alias; GIT_CONFIG_SYSTEM and GIT_CONFIG_NOSYSTEM honoured): the script is guarded read-only, and the system file itself when it lies in the writable folder", () => {
  ownerHome();
  const repo = repoWithTools(["sys"]);
  const system = join(repo, "etc-gitconfig");
  writeFileSync(system, `[alias]\n\tsys = !sh ${repo}/tools/sys.sh\n`);
  setEnv({ GIT_CONFIG_SYSTEM: system });
  assert.deepEqual(executableParts(repo, true, false).readOnly.filter((p) => p.startsWith(repo) && !p.includes(".git")).sort(), [system, join(repo, "tools", "sys.sh")]);
  setEnv({ GIT_CONFIG_NOSYSTEM: "1" });
  assert.deepEqual(executableParts(repo, true, false).readOnly.filter((p) => p.startsWith(repo) && !p.includes(".git")), [], "git reads no system file then");
});

test("issue 26 r16 F16-3 (reported case: GIT_CONFIG_GLOBAL in the hub's environment is a file of a dotfiles repository the agent writes, with an alias naming a script there): the file and the script are read-only; ~/.gitconfig is not read then", () => {
  const home = ownerHome();
  const repo = repoWithTools(["gcg", "home"]);
  const global = join(repo, "gitconfig");
  writeFileSync(global, `[alias]\n\tst = !sh ${repo}/tools/gcg.sh\n`);
  writeFileSync(join(home, ".gitconfig"), `[alias]\n\tho = !sh ${repo}/tools/home.sh\n`);
  setEnv({ GIT_CONFIG_GLOBAL: global });
  assert.deepEqual(executableParts(repo, true, false).readOnly.filter((p) => p.startsWith(repo) && !p.includes(".git")).sort(), [global, join(repo, "tools", "gcg.sh")]);
});

test("issue 26 r16 F16-3: GIT_CONFIG_COUNT, GIT_CONFIG_KEY_n and GIT_CONFIG_VALUE_n of the hub's environment are read as git reads them (an alias naming a script, an include naming a file in the writable folder)", () => {
  ownerHome();
  const repo = repoWithTools(["env"]);
  writeFileSync(join(repo, "inc.cfg"), "[core]\n\tautocrlf = false\n");
  setEnv({ GIT_CONFIG_COUNT: "2", GIT_CONFIG_KEY_0: "alias.env", GIT_CONFIG_VALUE_0: `!sh ${repo}/tools/env.sh`, GIT_CONFIG_KEY_1: "include.path", GIT_CONFIG_VALUE_1: join(repo, "inc.cfg") });
  assert.deepEqual(executableParts(repo, true, false).readOnly.filter((p) => p.startsWith(repo) && !p.includes(".git")).sort(), [join(repo, "inc.cfg"), join(repo, "tools", "env.sh")]);
});

/** A nested repository `name` in `folder` whose `.git/config` is `#` and sparse zeros to `bytes` (a comment to git, F16-6). */
function sparseConfigRepo(folder: string, name: string, bytes: number): string {
  const repo = join(folder, name);
  mkdirSync(repo);
  owner(repo, {}, "init", "-q");
  const fd = openSync(join(repo, ".git", "config"), "w");
  writeSync(fd, "#");
  ftruncateSync(fd, bytes);
  closeSync(fd);
  return join(repo, ".git", "config");
}

test("issue 26 r16 F16-6 (reported case: a nested repository's .git/config is # and sparse zeros, 2 GiB, which held the hub 10 s a file): a configuration file over 1 MiB refuses the launch before git reads it, with the catalog's text; after a run it is named, not read", () => {
  ownerHome();
  const folder = realpathSync(tempDir("aa-r16-sparse-"));
  removed.push(folder);
  const config = sparseConfigRepo(folder, "sp", 2 ** 31);
  const started = Date.now();
  assert.throws(() => executableParts(folder, false, false), (e: unknown) => {
    assert.ok(e instanceof GuardLimitError);
    assert.equal(guardLimitText("en", e), `the git configuration file ${config} is larger than 1 MiB: the sandbox reads each configuration file to guard what your git would run, and does not read one this large before a launch, so the launch is refused; look at what wrote it (git reads a file this large slowly)`);
    assert.match(guardLimitText("zh", e), /大于 1 MiB/);
    return true;
  });
  assert.ok(Date.now() - started < 3000, "git never read it");
  // After a run that made the repository at a folder's top (kept, and its configuration read).
  const found = plantedSteering([join(folder, "sp")], new Set(), noneSeen(), 1, {});
  assert.deepEqual(found.filter((p) => p.kind !== "kept"), [{ path: config, movedTo: null, kind: "unreadFile" }]);
  assert.equal(plantedNotice([found.find((p) => p.kind === "unreadFile")!], "en")?.text, `${config}: a git configuration file larger than 1 MiB, or one git could not read in 10 s; the check after the run did not read it: read it before you run git there`);
});

test("issue 26 r16 F16-6: a configuration file git cannot read (a syntax error) refuses the launch instead of counting as no keys; a file of 1 MiB exactly is read", () => {
  ownerHome();
  const folder = realpathSync(tempDir("aa-r16-bad-"));
  removed.push(folder);
  const config = sparseConfigRepo(folder, "bad", 1);
  writeFileSync(config, "[core\n\tpager = tools/p.sh\n");
  assert.throws(() => executableParts(folder, false, false), (e: unknown) => {
    assert.ok(e instanceof GuardLimitError);
    assert.equal(guardLimitText("en", e), `git could not read the configuration file ${config} within 10000 ms: the sandbox cannot tell what it makes your git run, so the launch is refused; fix or remove the file`);
    assert.match(guardLimitText("zh", e), /读不出/);
    return true;
  });
  writeFileSync(config, "#");
  const fd = openSync(config, "r+");
  ftruncateSync(fd, 1024 * 1024);
  closeSync(fd);
  assert.equal(executableParts(folder, false, false).mountPoints.length > 0, true);
});
