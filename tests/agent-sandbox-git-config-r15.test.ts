/**
 * Issue 26 hostile round 15, F15-1, F15-2, F15-3, F15-6: what a git configuration names that the round-14 guard did
 * not read — keys outside its list (`remote.*.uploadpack`, `difftool.*.cmd`, …), a script named without a `/`
 * (`sh nb2clean.sh`), a path written with `$HOME` — and a folder of repositories whose configurations chain includes,
 * which held the hub for seconds. Real bubblewrap, real git, a real command agent under the real worker.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, readdirSync, realpathSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { tempDir } from "./helpers.js";
import { asideOf, leakFolder, owner, ownerRepo, removed, runAgent, sandboxed, setEnv, tryFn } from "./steering-helpers.js";
import { executableParts, GuardLimitError, guardLimits, guardLimitText, noneSeen } from "../src/worker/steering.js";
import { plantedNotice, plantedSteering } from "../src/worker/planted.js";
import { ConfigPass } from "../src/worker/git-config.js";

/** A home of the owner's for one test (HOME of the worker), removed after it. */
function ownerHome(): string {
  const home = realpathSync(tempDir("aa-r15-home-"));
  removed.push(home);
  // No system file: the counts below are of the test's files (the guard reads the machine's one too, F16-3).
  setEnv({ HOME: home, XDG_CONFIG_HOME: "", GIT_CONFIG_NOSYSTEM: "1" });
  return home;
}

/** Shell: overwrite the script `path` with one that copies the master key to `leak`/`name` (the agent's attempt). */
const rewrite = (path: string, leak: string, name: string) => `printf "#!/bin/sh\\ncp \\$AA_MASTER ${leak}/${name}\\n" > '${path}'`;

/** Committed executable scripts `names` in `repo` that do nothing. */
function ownerScripts(repo: string, names: string[]): void {
  for (const n of names) {
    mkdirSync(join(repo, n, ".."), { recursive: true });
    writeFileSync(join(repo, n), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  }
  owner(repo, {}, "add", ".");
  owner(repo, {}, "commit", "-qm", "scripts");
}

test("issue 26 r15 F15-1 (reported cases: remote.up.uploadpack, difftool.dt.cmd, sendemail.smtpServer, gpg.ssh.defaultKeyCommand, submodule.*.update = !…, core.gitProxy, trailer.*.command name scripts in the work tree): every one stays read-only, one named but missing is moved aside after the run; the owner's git fetch and git difftool run the owner's scripts", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const repo = ownerRepo();
  const upstream = ownerRepo();
  const scripts = ["up", "dt", "sm", "key", "subup", "proxy", "trailer"];
  ownerScripts(repo, scripts.map((s) => `tools/${s}.sh`));
  writeFileSync(join(repo, "tools", "up.sh"), "#!/bin/sh\nexec git-upload-pack \"$@\"\n", { mode: 0o755 });
  writeFileSync(join(repo, "x.txt"), "a\n");
  owner(repo, {}, "add", ".");
  owner(repo, {}, "commit", "-qm", "x");
  owner(repo, {}, "remote", "add", "up", upstream);
  for (const [k, v] of [
    ["remote.up.uploadpack", "tools/up.sh"], ["remote.up.receivepack", "tools/rp.sh"], ["difftool.dt.cmd", "tools/dt.sh $LOCAL $REMOTE"],
    ["sendemail.smtpServer", "tools/sm.sh"], ["gpg.ssh.defaultKeyCommand", "tools/key.sh"], ["submodule.shared.update", "!tools/subup.sh"],
    ["core.gitProxy", "tools/proxy.sh"], ["trailer.sign.command", "tools/trailer.sh"],
  ]) owner(repo, {}, "config", k!, v!);
  const leak = leakFolder();
  const script = [tryFn, ...scripts.map((s) => `try ${s} sh -c '${rewrite(`tools/${s}.sh`, leak, s)}'`), `try rp sh -c '${rewrite("tools/rp.sh", leak, "rp")}'`, `echo b > x.txt`, `echo "Done: tried"`].join("\n");
  const fx = await runAgent(script, repo);
  assert.deepEqual(readFileSync(join(repo, "tried.txt"), "utf8").trim().split("\n"), [...scripts.map((s) => `${s} no`), "rp ok"]);
  asideOf(join(repo, "tools", "rp.sh"), 1);
  const env = { AA_MASTER: fx.home.masterKey };
  owner(repo, env, "fetch", "-q", "up");
  owner(repo, env, "difftool", "-y", "-t", "dt", "--", "x.txt");
  assert.deepEqual(readdirSync(leak), [], "no script of the agent's ran");
});

test("issue 26 r15 F15-2 (reported case: filter.nb2.clean = sh nb2clean.sh, a script named without a /; also python3 conv.py, node strip.js): each file a word names at the work tree's top stays read-only; a folder a word names (alias.s = status src) stays writable; the owner's git diff runs the owner's filter", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const repo = ownerRepo();
  ownerScripts(repo, ["nb2clean.sh", "conv.py", "strip.js"]);
  writeFileSync(join(repo, "nb2clean.sh"), "#!/bin/sh\ncat\n", { mode: 0o755 });
  writeFileSync(join(repo, ".gitattributes"), "*.nb2 filter=nb2\n");
  writeFileSync(join(repo, "x.nb2"), "a\n");
  mkdirSync(join(repo, "src"));
  owner(repo, {}, "add", ".");
  owner(repo, {}, "commit", "-qm", "nb2");
  for (const [k, v] of [["filter.nb2.clean", "sh nb2clean.sh"], ["filter.py.clean", "python3 conv.py"], ["diff.js.textconv", "node strip.js"], ["alias.s", "status --short src"]]) owner(repo, {}, "config", k!, v!);
  const leak = leakFolder();
  const script = [
    tryFn,
    ...["nb2clean.sh", "conv.py", "strip.js"].map((f) => `try ${f} sh -c '${rewrite(f, leak, f)}'`),
    `try src sh -c 'echo x > src/new.txt'`,
    `echo b > x.nb2`,
    `echo "Done: tried"`,
  ].join("\n");
  const fx = await runAgent(script, repo);
  assert.deepEqual(readFileSync(join(repo, "tried.txt"), "utf8").trim().split("\n"), ["nb2clean.sh no", "conv.py no", "strip.js no", "src ok"]);
  owner(repo, { AA_MASTER: fx.home.masterKey }, "diff", "--stat");
  assert.deepEqual(readdirSync(leak), [], "no script of the agent's ran");
});

/** A dotfiles repository inside the owner's home (`<home>/dotfiles`) with committed scripts `bin/<names>`. */
function dotfilesInHome(home: string, names: string[]): string {
  const dotfiles = join(home, "dotfiles");
  mkdirSync(dotfiles);
  owner(dotfiles, {}, "init", "-q", "-b", "main");
  ownerScripts(dotfiles, names.map((n) => `bin/${n}`));
  return dotfiles;
}

test("issue 26 r15 F15-3 (reported case: the global pager.show = $HOME/dotfiles/bin/show-hl | less): the script stays read-only in the dotfiles repository the agent works in; the owner's git show runs the owner's pager", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const home = ownerHome();
  const dotfiles = dotfilesInHome(home, ["show-hl"]);
  writeFileSync(join(dotfiles, "bin", "show-hl"), "#!/bin/sh\ncat\n", { mode: 0o755 });
  writeFileSync(join(home, ".gitconfig"), "[pager]\n\tshow = $HOME/dotfiles/bin/show-hl | less\n");
  const leak = leakFolder();
  const fx = await runAgent([tryFn, `try show sh -c '${rewrite("bin/show-hl", leak, "show")}'`, `echo "Done: tried"`].join("\n"), dotfiles);
  assert.deepEqual(readFileSync(join(dotfiles, "tried.txt"), "utf8").trim().split("\n"), ["show no"]);
  // What the owner's git show on a terminal runs (git pages only to a terminal): the value, by the owner's shell.
  execFileSync("sh", ["-c", "$HOME/dotfiles/bin/show-hl < /dev/null"], { env: { PATH: process.env.PATH ?? "", HOME: home, AA_MASTER: fx.home.masterKey } });
  assert.deepEqual(readdirSync(leak), [], "the pager is the owner's");
});

test("issue 26 r15 F15-3 (variables, quotes and backslashes in a value): ${HOME}, a variable of the hub's environment, a quoted name with a space and one with an escaped space are each read as the shell reads them; an unset variable is empty, as in the shell", () => {
  const home = ownerHome();
  const names = ["braces", "var", "q x.sh", "b y.sh", "unset"];
  const dotfiles = dotfilesInHome(home, names);
  setEnv({ AA_R15_DOTS: dotfiles });
  assert.equal(process.env.AA_R15_UNSET, undefined);
  writeFileSync(join(home, ".gitconfig"), [
    "[pager]", "\tlog = ${HOME}/dotfiles/bin/braces", "[core]", "\teditor = $AA_R15_DOTS/bin/var --wait",
    "[diff]", "\texternal = \"\\\"$HOME/dotfiles/bin/q x.sh\\\" --x\"", "[sequence]", "\teditor = \"$HOME/dotfiles/bin/b\\\\ y.sh\"",
    "[alias]", "\tu = !$AA_R15_UNSET/bin/unset", "",
  ].join("\n"));
  const bin = (n: string) => join(dotfiles, "bin", n);
  assert.deepEqual(executableParts(dotfiles, false, false).readOnly.filter((p) => p.startsWith(`${dotfiles}/bin/`)).sort(), [bin("b y.sh"), bin("braces"), bin("q x.sh"), bin("var")]);
});

test("issue 26 r15 F15-6 (reported case: 98 repositories each with a chain of 10 includes held the hub 16 s at launch, 18 s after the run): configuration files read per launch are limited — more refuse the launch, naming the limit; the global configuration is read once, not per repository", () => {
  const folder = realpathSync(tempDir("aa-r15-incs-"));
  removed.push(folder);
  const home = ownerHome();
  writeFileSync(join(home, ".gitconfig"), `[include]\n\tpath = ${join(home, "id")}\n`);
  writeFileSync(join(home, "id"), "[user]\n\tname = o\n");
  for (const n of ["a", "b", "c"]) {
    execFileSync("git", ["init", "-q", join(folder, n)]);
    writeFileSync(join(folder, n, ".git", "config"), `[include]\n\tpath = inc1\n`, { flag: "a" });
    writeFileSync(join(folder, n, ".git", "inc1"), `[include]\n\tpath = inc2\n`);
    writeFileSync(join(folder, n, ".git", "inc2"), "[user]\n\tname = x\n");
  }
  // 3 repositories × (config, inc1, inc2) and the two global files, each read once.
  assert.equal(executableParts(folder, false, false, { ...guardLimits, configFiles: 11 }).mountPoints.length, 3);
  assert.throws(() => executableParts(folder, false, false, { ...guardLimits, configFiles: 10 }), (e: unknown) => {
    assert.ok(e instanceof GuardLimitError);
    assert.equal(guardLimitText("en", e), `${folder} and the repositories in it name more than 10 git configuration files (with what they include): the sandbox reads each to guard what your git would run, too many to read before a launch, so the launch is refused; let the agent write a smaller folder (cwd, "writable") or shorten the chains of includes`);
    assert.match(guardLimitText("zh", e), /^\S+ 和其中的仓库引用了超过 10 个 git 配置文件/);
    return true;
  });
});

test("issue 26 r15 F15-6, after the run: the check reads at most the guard's limit of configuration files — a repository the agent made whose config includes more is named as not read to its end; an included file made during the run is moved aside unread", () => {
  const folder = realpathSync(tempDir("aa-r15-after-"));
  removed.push(folder);
  const outside = realpathSync(tempDir("aa-r15-outside-"));
  removed.push(outside);
  ownerHome();
  execFileSync("git", ["init", "-q", folder]);
  for (const n of ["a", "b", "c"]) writeFileSync(join(outside, n), "[user]\n\tname = x\n");
  writeFileSync(join(folder, "new-inc"), "[include]\n\tpath = never-read\n");
  writeFileSync(join(folder, ".git", "config"), ["a", "b", "c"].map((n) => `[include]\n\tpath = ${join(outside, n)}\n`).join("") + "[include]\n\tpath = ../new-inc\n", { flag: "a" });
  const found = plantedSteering([folder], new Set(), noneSeen(), 1, { configFiles: 3 });
  assert.deepEqual(found.map((p) => [p.path, p.kind]), [[join(folder, ".git"), "kept"], [folder, "unread"]]);
  assert.equal(plantedNotice(found.slice(1), "en")?.text, `${folder}: the check after the run stopped reading git configuration at 250 files, before the end of this one's; read it (and what it includes) before you run git there`);
  const all = plantedSteering([folder], new Set(), noneSeen(), 2, { configFiles: 4 });
  assert.deepEqual(all.map((p) => [p.path, p.kind]), [[join(folder, ".git"), "kept"], [join(folder, "new-inc"), "moved"]], "config, a, b, c read; new-inc moved aside, not read");
});

test("issue 26 r15 F15-6, after the run: what the guard read at launch from files the run could not write (read-only there, or outside its folders) is taken again, not read again; a file it could write is not taken from it", () => {
  const folder = realpathSync(tempDir("aa-r15-reuse-"));
  removed.push(folder);
  const home = ownerHome();
  writeFileSync(join(home, ".gitconfig"), "[user]\n\tname = o\n");
  execFileSync("git", ["init", "-q", folder]);
  writeFileSync(join(folder, ".git", "config"), "[include]\n\tpath = ../inc\n", { flag: "a" });
  writeFileSync(join(folder, "inc"), "[user]\n\tname = x\n");
  const pass = new ConfigPass(guardLimits.configFiles);
  const parts = executableParts(folder, false, false, guardLimits, pass);
  assert.equal(pass.filesRead, 3, "config, inc, ~/.gitconfig");
  const guarded = new Set([...parts.readOnly, ...parts.mountPoints, ...parts.readOnlyParents]);
  assert.ok(guarded.has(join(folder, "inc")) && guarded.has(join(folder, ".git", "config")));
  assert.deepEqual(plantedSteering([folder], guarded, parts.seen, 1, { configFiles: 0, before: pass }), [], "nothing read again: none past a limit of 0");
  assert.deepEqual(plantedSteering([folder], guarded, parts.seen, 2, { configFiles: 0 }).map((p) => [p.path, p.kind]), [[home + "/.gitconfig", "unread"], [folder, "unread"]], "without the guard's reading, each is read again");
  guarded.delete(join(folder, "inc"));
  assert.deepEqual(plantedSteering([folder], guarded, parts.seen, 3, { configFiles: 0, before: pass }).map((p) => [p.path, p.kind]), [[join(folder, "inc"), "moved"]], "inc, writable in the run, is new: moved aside, not read");
});
