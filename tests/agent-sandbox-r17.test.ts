/**
 * Issue 26 hostile round 17: F17-3 (git hook managers' configuration: pre-commit's `.pre-commit-config.yaml` runs
 * its `repo: local` hooks from the read-only hook), F17-4 (a FIFO `.git/index` or `HEAD` held git, and the hub's
 * thread, 10 s per repository in the check after a run: 120 s for 12), F17-1 (a package folder `usercustomize/` in a
 * `.pth`-named folder shadows the read-only `usercustomize.py`), F17-5 (a claude run's 30,000 new entries at its state
 * folder's top were each moved aside beside themselves, so every later launch bound them all and failed with EMFILE).
 * Round 18: F18-5 (a `.pth` the guard read was made a FIFO: the guard's `open()` held the hub's thread for good).
 * Unit level: the guard and the checks after a run called directly — the real-bubblewrap run adds nothing to what
 * they decide (the mounts of what they return are tested in agent-sandbox-steering.test.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, lstatSync, mkdirSync, readdirSync, realpathSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { execFileSync, spawn } from "node:child_process";
import { join } from "node:path";
import { owner, ownerHome, ownerRepo, removed, setEnv } from "./steering-helpers.js";
import { tempDir } from "./helpers.js";
import { executableParts, GuardLimitError } from "../src/worker/steering.js";
import { maskedChanges } from "../src/worker/index-stat.js";
import { plantedNotice, plantedSteering } from "../src/worker/planted.js";
import { cardTextMaxCodepoints } from "../src/kernel/limits.js";
import { blockingGitFiles } from "../src/worker/git-read.js";
import { plantedState, stateSeenAt } from "../src/worker/state-planted.js";

test("issue 26 r17 F17-3 (reported case): a repository's .pre-commit-config.yaml (and lefthook's, overcommit's) is read-only; one made during the run is moved aside", () => {
  const repo = ownerRepo();
  writeFileSync(join(repo, ".pre-commit-config.yaml"), "repos: []\n");
  writeFileSync(join(repo, "lefthook.yml"), "pre-commit: {}\n");
  const parts = executableParts(repo, true, false);
  assert.deepEqual(parts.readOnly.filter((p) => !p.includes("/.git")).sort(), [join(repo, ".pre-commit-config.yaml"), join(repo, "lefthook.yml")]);
  const guarded = new Set([...parts.readOnly, ...parts.mountPoints, ...parts.readOnlyParents]);
  writeFileSync(join(repo, ".overcommit.yml"), "PreCommit: {}\n");
  const found = plantedSteering([repo], guarded, parts.seen, 7);
  assert.deepEqual(found.map((p) => [p.path, p.kind]), [[join(repo, ".overcommit.yml"), "moved"]]);
  assert.match(found[0]!.movedTo!, /\.overcommit\.yml\.planted-run-7-[0-9a-f]{16}$/);
});

/** A FIFO in place of `name` of the repository's git folder (what the round's agent did with `rm; mkfifo`). */
function fifoAt(repo: string, name: string): void {
  renameSync(join(repo, ".git", name), join(repo, ".git", `${name}.owner`));
  execFileSync("mkfifo", [join(repo, ".git", name)]);
}

test("issue 26 r17 F17-4 (reported case: FIFO indexes): a git folder's index, HEAD or split index that is not a regular file is moved aside after the run without running git on it, and refuses a launch at once", () => {
  const repos = [ownerRepo(), ownerRepo(), ownerRepo()];
  const seen = repos.map((r) => executableParts(r, true, false));
  fifoAt(repos[0]!, "index");
  fifoAt(repos[1]!, "HEAD");
  writeFileSync(join(repos[2]!, ".git", "sharedindex.0123"), "");
  assert.deepEqual(repos.map((r) => blockingGitFiles(join(r, ".git"))), [[join(repos[0]!, ".git", "index")], [join(repos[1]!, ".git", "HEAD")], []]);
  const shared = join(repos[2]!, ".git", "sharedindex.0123");
  renameSync(shared, `${shared}.x`);
  execFileSync("mkfifo", [shared]);
  const found = repos.flatMap((r, i) => plantedSteering([r], new Set([...seen[i]!.readOnly, ...seen[i]!.mountPoints]), seen[i]!.seen, 9 + i));
  assert.deepEqual(found.map((p) => [p.path, p.kind]), [
    [join(repos[0]!, ".git", "index"), "moved"], [join(repos[1]!, ".git", "HEAD"), "moved"], [shared, "moved"],
  ]);
  for (const p of found) assert.equal(lstatSync(p.movedTo!).isFIFO(), true);
  // Put back as the owner would, the repositories read again.
  renameSync(join(repos[1]!, ".git", "HEAD.owner"), join(repos[1]!, ".git", "HEAD"));
  assert.equal(owner(repos[1]!, {}, "status", "--porcelain"), "");
  // Before a launch: refused at once (not after git's 10 s), naming the repository.
  fifoAt(repos[1]!, "index");
  assert.throws(() => executableParts(repos[1]!, true, false), (e: unknown) => e instanceof GuardLimitError && e.kind === "index" && e.folder === repos[1]);
  // The index check gives up (says it stopped short) past the check's deadline, without running git.
  assert.deepEqual(maskedChanges(join(repos[2]!, ".git"), repos[2]!, 0, { files: 10, bytes: 1024, until: Date.now() - 1 }), { masked: [], unhashed: [], cut: true });
  assert.deepEqual(readdirSync(join(repos[2]!, ".git")).filter((n) => n.startsWith("sharedindex")).length, 2);
  assert.equal(existsSync(shared), false);
});

test("issue 26 r17 F17-1 (reported case: a package folder pysrc/usercustomize/ beside the read-only usercustomize.py): every form Python imports usercustomize and sitecustomize in is read-only when there, and moved aside after the run when made in it", () => {
  const project = realpathSync(tempDir("aa-r17-p14-"));
  removed.push(project);
  const home = ownerHome("aa-r17-home-");
  const site = join(home, ".local", "lib", "python3.11", "site-packages");
  mkdirSync(site, { recursive: true });
  mkdirSync(join(project, "pysrc", "sitecustomize"), { recursive: true });
  for (const n of ["usercustomize.py", "sitecustomize/__init__.py", "usercustomizer.py", "mod.py"]) writeFileSync(join(project, "pysrc", n), "\n");
  writeFileSync(join(site, "p14dev.pth"), `${join(project, "pysrc")}\n`);
  setEnv({ PATH: "/usr/bin:/bin" });
  const parts = executableParts(project, false, false);
  assert.deepEqual(parts.readOnly.filter((p) => p.startsWith(`${project}/`)).sort(), [join(project, "pysrc", "sitecustomize"), join(project, "pysrc", "usercustomize.py")]);
  // What the round's agent made: the package, and an extension module's name.
  mkdirSync(join(project, "pysrc", "usercustomize"));
  writeFileSync(join(project, "pysrc", "usercustomize", "__init__.py"), "import os\n");
  writeFileSync(join(project, "pysrc", "sitecustomize.cpython-311-x86_64-linux-gnu.so"), "");
  const guarded = new Set([...parts.readOnly, ...parts.mountPoints, ...parts.readOnlyParents]);
  const found = plantedSteering([project], guarded, parts.seen, 4);
  assert.deepEqual(found.map((p) => [p.path, p.kind]).sort(), [
    [join(project, "pysrc", "sitecustomize.cpython-311-x86_64-linux-gnu.so"), "moved"], [join(project, "pysrc", "usercustomize"), "moved"],
  ]);
  assert.equal(existsSync(join(project, "pysrc", "usercustomize")), false);
  assert.equal(existsSync(join(project, "pysrc", "mod.py")), true);
});

test("issue 26 r17 F17-5 (reported case: 30,000 new files at ~/.claude's top, each moved aside beside itself, then every claude launch failed EMFILE): what a run adds at a state folder's top goes into one folder of the run's there; the next launch sees one entry more, not thousands", async () => {
  const home = ownerHome("aa-r17-state-home-");
  const s = join(home, ".claude");
  mkdirSync(s, { recursive: true });
  writeFileSync(join(s, "settings.json"), "{}\n");
  const before = stateSeenAt([{ folder: s, writes: ["todos"], bound: true }], []);
  for (let i = 0; i < 300; i++) writeFileSync(join(s, `r17top${String(i).padStart(5, "0")}`), "");
  mkdirSync(join(s, "todos"));
  const found = (await plantedState(before, 87)).planted;
  assert.equal(found.length, 300);
  const tops = readdirSync(s).sort();
  assert.equal(tops.length, 3, JSON.stringify(tops.slice(0, 5)));
  assert.match(tops[0]!, /^planted-run-87-[0-9a-f]{16}$/);
  assert.deepEqual(tops.slice(1), ["settings.json", "todos"]);
  assert.equal(readdirSync(join(s, tops[0]!)).length, 300);
  assert.deepEqual(found[0], { path: join(s, "r17top00000"), movedTo: join(s, tops[0]!, "r17top00000"), kind: "moved" });
  // The card: whole lines while they fit, then how many more.
  const text = plantedNotice(found, "en")!.text!;
  const shown = text.split("\n");
  assert.ok([...text].length <= cardTextMaxCodepoints);
  assert.equal(shown.at(-1), `… and ${300 - (shown.length - 1)} more, handled the same way`);
  assert.equal(shown[0], `${join(s, "r17top00000")} → moved to ${found[0]!.movedTo} (move it back once you have read it)`);
  assert.match(plantedNotice(found, "zh")!.text!, /还有 \d+ 项/);
  // One new entry alone is moved beside itself, as before.
  const again = stateSeenAt([{ folder: s, writes: ["todos"], bound: true }], []);
  writeFileSync(join(s, "daemon.json"), "{}\n");
  assert.deepEqual((await plantedState(again, 88)).planted.map((p) => [p.path, p.movedTo?.startsWith(`${join(s, "daemon.json")}.planted-run-88-`)]), [[join(s, "daemon.json"), true]]);
});

test("issue 26 r17 F17-2 (reported case: ~/bin/p14tool -> the project's tools/p14tool, whose #! is the project's .venv/bin/python3; pre-commit's hook with INSTALL_PYTHON= that interpreter): the program a guarded script starts is kept too — a file itself, a link by its folder", () => {
  const project = realpathSync(tempDir("aa-r17-shebang-"));
  removed.push(project);
  const home = ownerHome("aa-r17-bin-home-");
  mkdirSync(join(project, ".venv", "bin"), { recursive: true });
  mkdirSync(join(project, "tools"));
  mkdirSync(join(home, "bin"));
  symlinkSync("/usr/bin/python3", join(project, ".venv", "bin", "python3"));
  writeFileSync(join(project, "tools", "p14tool"), `#!${join(project, ".venv", "bin", "python3")}\nprint("p14tool ok")\n`, { mode: 0o755 });
  writeFileSync(join(project, "tools", "runner"), "#!/bin/sh\necho plain\n", { mode: 0o755 });
  writeFileSync(join(project, "tools", "interp"), "#!/bin/sh\n", { mode: 0o755 });
  writeFileSync(join(home, "bin", "own"), `#!${join(project, "tools", "interp")} -x\n`, { mode: 0o755 });
  writeFileSync(join(home, "bin", "envy"), "#!/usr/bin/env python3\n", { mode: 0o755 });
  symlinkSync(join(project, "tools", "p14tool"), join(home, "bin", "p14tool"));
  setEnv({ PATH: "/usr/bin:/bin" });
  const repo = ownerRepo();
  writeFileSync(join(repo, ".git", "hooks", "pre-commit"), `#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\nINSTALL_PYTHON=${join(project, ".venv", "bin", "python3")}\nARGS=(hook-impl --config=.pre-commit-config.yaml --hook-type=pre-commit)\n`, { mode: 0o755 });
  const inProject = (parts: string[]) => parts.filter((p) => p.startsWith(`${project}/`)).sort();
  assert.deepEqual(inProject(executableParts(project, false, false).readOnly), [join(project, ".venv", "bin"), join(project, "tools", "interp"), join(project, "tools", "p14tool")]);
  // The hook of another repository names the interpreter too: seen from a folder holding both.
  renameSync(join(home, "bin"), join(home, "bin.off"));
  const both = realpathSync(tempDir("aa-r17-both-"));
  removed.push(both);
  renameSync(repo, join(both, "repo"));
  mkdirSync(join(both, "venv", "bin"), { recursive: true });
  writeFileSync(join(both, "venv", "bin", "python3"), "#!/bin/sh\n", { mode: 0o755 });
  writeFileSync(join(both, "repo", ".git", "hooks", "pre-commit"), `#!/usr/bin/env bash\nINSTALL_PYTHON=${join(both, "venv", "bin", "python3")}\n`, { mode: 0o755 });
  assert.deepEqual(executableParts(both, false, false).readOnly.filter((p) => p.startsWith(join(both, "venv"))), [join(both, "venv", "bin", "python3")]);
});

test("issue 26 r18 F18-5 (reported case: a .pth link of the owner's whose missing target, in the agent's folder, the agent made a FIFO): the guard does not wait on it — it is not read, and the hub's thread goes on", async () => {
  const project = realpathSync(tempDir("aa-r18-fifo-"));
  removed.push(project);
  const home = ownerHome("aa-r18-fifo-home-");
  const site = join(home, ".local", "lib", "python3.11", "site-packages");
  mkdirSync(site, { recursive: true });
  mkdirSync(join(project, "pysrc"));
  writeFileSync(join(project, "pysrc", "usercustomize.py"), "\n");
  symlinkSync(join(project, "dev.pth"), join(site, "dev.pth"));
  execFileSync("mkfifo", [join(project, "dev.pth")]);
  setEnv({ PATH: "/usr/bin:/bin" });
  // A writer that opens the FIFO a moment later: a guard that waited on it would be its reader, and the writer would
  // end; one that did not wait leaves the writer without a reader.
  const writer = spawn("sh", ["-c", `sleep 1; echo ${join(project, "pysrc")} > ${join(project, "dev.pth")}`], { stdio: "ignore" });
  const ended = new Promise<number | null>((r) => writer.on("exit", (code) => r(code)));
  try {
    assert.deepEqual(executableParts(project, false, false).readOnly.filter((p) => p.startsWith(`${project}/`)), []);
    const outcome = await Promise.race([ended, new Promise<string>((r) => setTimeout(() => r("still waiting for a reader"), 2500))]);
    assert.equal(outcome, "still waiting for a reader");
  } finally {
    writer.kill("SIGKILL");
  }
});

test("issue 26 r18 F18-1, F18-3 (reported cases): a #! interpreter reached through a link outside the folder, through a link in it pointing outside, or written with $HOME or ${VAR:-default} is kept — the way judged where it really is", () => {
  const home = ownerHome("aa-r18-way-home-");
  const project = join(home, "p14");
  mkdirSync(join(project, ".venv2", "bin"), { recursive: true });
  mkdirSync(join(project, ".venv3", "bin"), { recursive: true });
  mkdirSync(join(project, ".venv4", "bin"), { recursive: true });
  mkdirSync(join(home, "venvs", "p14", "bin"), { recursive: true });
  mkdirSync(join(home, "bin"));
  for (const v of [".venv2", ".venv3", ".venv4"]) writeFileSync(join(project, v, "bin", "python3"), "#!/bin/sh\n", { mode: 0o755 });
  writeFileSync(join(home, "venvs", "p14", "bin", "python3"), "#!/bin/sh\n", { mode: 0o755 });
  symlinkSync(project, join(home, "p14link"));
  symlinkSync(join(home, "venvs", "p14"), join(project, ".venv7"));
  mkdirSync(join(project, "sub"));
  symlinkSync(join(home, "venvs", "p14"), join(project, "sub", ".venv8"));
  writeFileSync(join(home, "bin", "a"), `#!${join(home, "p14link", ".venv2", "bin", "python3")}\n`, { mode: 0o755 });
  writeFileSync(join(home, "bin", "b"), `#!/bin/sh\nexec "$HOME/p14/.venv3/bin/python3" "$@"\n`, { mode: 0o755 });
  writeFileSync(join(home, "bin", "c"), `#!/bin/sh\nexec \${P14_PY:-${join(project, ".venv4", "bin", "python3")}} "$@"\n`, { mode: 0o755 });
  writeFileSync(join(home, "bin", "d"), `#!${join(project, "sub", ".venv8", "bin", "python3")}\n`, { mode: 0o755 });
  setEnv({ PATH: "/usr/bin:/bin", P14_PY: "" });
  const real = realpathSync(project);
  assert.deepEqual(executableParts(real, false, false).readOnly.filter((p) => p.startsWith(`${real}/`)).sort(), [
    join(real, ".venv2", "bin", "python3"), join(real, ".venv3", "bin", "python3"), join(real, ".venv4", "bin", "python3"), join(real, "sub"),
  ]);
});

test("issue 26 r18 F18-2, F18-4 (reported cases): the scripts pre-commit's entry and lefthook's run name in the project, lefthook's script folders and lefthook-local.json are read-only; a lefthook-local.json made during the run is moved aside", () => {
  const repo = ownerRepo();
  mkdirSync(join(repo, "tools"));
  mkdirSync(join(repo, ".lefthook", "pre-commit"), { recursive: true });
  writeFileSync(join(repo, "tools", "fmt.sh"), "#!/bin/sh\n", { mode: 0o755 });
  writeFileSync(join(repo, "tools", "lint.sh"), "#!/bin/sh\n", { mode: 0o755 });
  writeFileSync(join(repo, ".lefthook", "pre-commit", "check.sh"), "#!/bin/sh\n", { mode: 0o755 });
  writeFileSync(join(repo, ".pre-commit-config.yaml"), "repos:\n- repo: local\n  hooks:\n  - id: fmt\n    name: fmt\n    entry: tools/fmt.sh --fix\n    language: system\n");
  writeFileSync(join(repo, "lefthook.yml"), "pre-commit:\n  commands:\n    lint:\n      run: sh tools/lint.sh {staged_files}\n");
  const parts = executableParts(repo, true, false);
  assert.deepEqual(parts.readOnly.filter((p) => !p.includes("/.git")).sort(), [
    join(repo, ".lefthook"), join(repo, ".pre-commit-config.yaml"), join(repo, "lefthook.yml"), join(repo, "tools", "fmt.sh"), join(repo, "tools", "lint.sh"),
  ]);
  writeFileSync(join(repo, "lefthook-local.json"), "{}\n");
  mkdirSync(join(repo, ".config"));
  writeFileSync(join(repo, ".config", "lefthook.toml"), "");
  const found = plantedSteering([repo], new Set([...parts.readOnly, ...parts.mountPoints]), parts.seen, 5);
  assert.deepEqual(found.map((p) => [p.path, p.kind]).sort(), [[join(repo, ".config", "lefthook.toml"), "moved"], [join(repo, "lefthook-local.json"), "moved"]]);
});
