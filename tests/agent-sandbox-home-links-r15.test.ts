/**
 * Issue 26 hostile round 15, F15-4: what the owner's shell and tools run from a folder a sandboxed agent writes by way
 * of the home — links below the home's top (`~/.local/bin -> ../dotfiles/localbin`, in PATH by Debian's `~/.profile`;
 * `~/.ssh/config -> ../dotfiles/ssh/config`) and the folders of the owner's PATH. Real bubblewrap, a real command agent
 * under the real worker, the owner's real login shell and ssh.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { basename, join } from "node:path";
import { tempDir } from "./helpers.js";
import { asideOf, leakFolder, ownerHome, ownerRepo, removed, runAgent, sandboxed, plantHook, setEnv, tryFn } from "./steering-helpers.js";
import { executableParts, GuardLimitError, guardLimitText, homeLinkTargets } from "../src/worker/steering.js";
import { homeLinks } from "../src/worker/home-links.js";

/** Debian's `~/.profile`, in part: `~/bin` and `~/.local/bin` first in PATH when they are there. */
const debianProfile = `if [ -d "$HOME/bin" ] ; then\n    PATH="$HOME/bin:$PATH"\nfi\nif [ -d "$HOME/.local/bin" ] ; then\n    PATH="$HOME/.local/bin:$PATH"\nfi\n`;

/** A link at `at` (its folders made) to `to`, written relative to the link's folder as a dotfile manager writes it. */
function relativeLink(to: string, at: string, up: number): void {
  mkdirSync(join(at, ".."), { recursive: true });
  symlinkSync(`${"../".repeat(up)}${to}`, at);
}

test("issue 26 r15 F15-4 (reported cases: ~/.local/bin -> ../dotfiles/localbin in PATH by ~/.profile, ~/.ssh/config -> ../dotfiles/ssh/config): what they lead to stays read-only; the owner's login shell and ssh run the owner's", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const dotfiles = ownerRepo();
  const home = ownerHome("aa-r15-home-");
  mkdirSync(join(dotfiles, "localbin"));
  writeFileSync(join(dotfiles, "localbin", "hello"), "#!/bin/sh\necho hi\n", { mode: 0o755 });
  mkdirSync(join(dotfiles, "ssh"));
  writeFileSync(join(dotfiles, "ssh", "config"), "Host example\n\tUser o\n");
  writeFileSync(join(home, ".profile"), debianProfile);
  relativeLink(`${basename(dotfiles)}/localbin`, join(home, ".local", "bin"), 2);
  relativeLink(`${basename(dotfiles)}/ssh/config`, join(home, ".ssh", "config"), 2);
  const leak = leakFolder();
  const script = [
    tryFn,
    `try localbin sh -c '${plantHook("localbin/git", leak, "localbin")}'`,
    `try ssh sh -c 'printf "Match exec \\"cp \\$AA_MASTER ${leak}/ssh\\"\\n" >> ssh/config'`,
    `echo "Done: tried"`,
  ].join("\n");
  const fx = await runAgent(script, dotfiles);
  assert.deepEqual(readFileSync(join(dotfiles, "tried.txt"), "utf8").trim().split("\n"), ["localbin no", "ssh no"]);
  const env = { PATH: "/usr/bin:/bin", HOME: home, AA_MASTER: fx.home.masterKey };
  assert.match(execFileSync("sh", ["-lc", "git --version"], { encoding: "utf8", env }), /^git version /);
  execFileSync("ssh", ["-F", join(home, ".ssh", "config"), "-G", "example"], { encoding: "utf8", env });
  assert.deepEqual(readdirSync(leak), [], "no command of the agent's ran");
  assert.equal(readFileSync(join(dotfiles, "ssh", "config"), "utf8"), "Host example\n\tUser o\n");
});

test("issue 26 r15 F15-4 (the owner's PATH): a PATH folder in the folder stays read-only (as before); one missing at launch and made during the run is moved aside after it, with a notice; a link's missing target too", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const dotfiles = ownerRepo();
  const home = ownerHome("aa-r15-home-");
  mkdirSync(join(dotfiles, "bin"));
  relativeLink(`${basename(dotfiles)}/localbin`, join(home, ".local", "bin"), 2);
  setEnv({ PATH: `${join(dotfiles, "bin")}:${join(dotfiles, "tools", "bin")}:${process.env.PATH ?? ""}` });
  const leak = leakFolder();
  const script = [
    tryFn,
    `try bin sh -c '${plantHook("bin/git", leak, "bin")}'`,
    `try tools sh -c 'mkdir -p tools/bin && ${plantHook("tools/bin/ls", leak, "tools")}'`,
    `try localbin sh -c 'mkdir localbin && ${plantHook("localbin/git", leak, "localbin")}'`,
    `echo "Done: tried"`,
  ].join("\n");
  const fx = await runAgent(script, dotfiles);
  assert.deepEqual(readFileSync(join(dotfiles, "tried.txt"), "utf8").trim().split("\n"), ["bin no", "tools ok", "localbin ok"]);
  const tools = asideOf(join(dotfiles, "tools", "bin"), 1);
  const localbin = asideOf(join(dotfiles, "localbin"), 1);
  assert.equal(existsSync(join(dotfiles, "tools", "bin")), false);
  assert.equal(existsSync(join(dotfiles, "localbin")), false);
  const card = (await fx.state()).cards.find((c) => c.kind === "notice");
  assert.equal(card?.text, [
    `${join(dotfiles, "tools", "bin")} → moved to ${tools} (move it back once you have read it)`,
    `${join(dotfiles, "localbin")} → moved to ${localbin} (move it back once you have read it)`,
  ].join("\n"));
});

test("issue 26 r15 F15-4 (a dotfile link to the folder itself): the folder stays writable and is not moved aside after the run", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const project = ownerRepo();
  const home = ownerHome("aa-r15-home-");
  symlinkSync(project, join(home, ".dotfiles"));
  const fx = await runAgent([tryFn, `try note sh -c 'echo note > notes.txt'`, `echo "Done: tried"`].join("\n"), project);
  assert.deepEqual(readFileSync(join(project, "tried.txt"), "utf8").trim().split("\n"), ["note ok"]);
  assert.equal(readFileSync(join(project, "notes.txt"), "utf8"), "note\n");
  assert.equal((await fx.state()).cards.find((c) => c.kind === "notice"), undefined);
});

test("issue 26 r15 F15-4 (links at any depth of the home's dot-folders): ~/.config/**, ~/.gnupg, ~/.ssh are followed; caches and package stores only at their top; links deeper than the limit are not looked at", () => {
  const folder = realpathSync(tempDir("aa-r15-dots-"));
  removed.push(folder);
  const home = ownerHome("aa-r15-home-");
  const made = ["unit.service", "gpg-agent.conf", "known_hosts", "cached", "deep", "at-five", "cache-top", "crate"].map((n) => join(folder, n));
  for (const f of made) writeFileSync(f, "x\n");
  const link = (at: string, to: string) => relativeLink(to.slice(1), join(home, at), at.split("/").length + home.split("/").length - 2);
  link(".config/systemd/user/unit.service", made[0]!);
  link(".gnupg/gpg-agent.conf", made[1]!);
  link(".ssh/known_hosts", made[2]!);
  link(".cache/tool/cached", made[3]!);
  link(".config/a/b/c/d/deep", made[4]!);
  link(".config/a/b/c/at-five", made[5]!);
  link(".config/a/gone", join(folder, "missing"));
  link(".cache/top", made[6]!);
  link(".cargo/registry/src/index/crate", made[7]!);
  const readOnly = executableParts(folder, false, false).readOnly;
  assert.deepEqual(readOnly.filter((p) => made.includes(p)).sort(), [made[5]!, made[6]!, made[1]!, made[2]!, made[0]!].sort());
});

test("issue 26 r15 F15-4 (a bounded walk): a home whose dot-folders hold more entries than the limit refuses the launch, naming the limit; PATH folders and ~/bin are in the list", () => {
  const folder = realpathSync(tempDir("aa-r15-many-"));
  removed.push(folder);
  const home = ownerHome("aa-r15-home-");
  mkdirSync(join(home, ".big"));
  for (let i = 0; i < 30; i++) writeFileSync(join(home, ".big", `f${i}`), "");
  mkdirSync(join(folder, "bin"));
  mkdirSync(join(folder, "usrbin"));
  symlinkSync(join(folder, "bin"), join(home, "bin"));
  // A PATH folder of the test's own: since round 16 its entries count toward the limit (/usr/bin's would fill it).
  const env = { HOME: home, PATH: `${folder}/usrbin:${folder}/pathbin:relative/bin` };
  assert.deepEqual(homeLinks(env, { entries: 40, depth: 5 }), { home, targets: [join(folder, "usrbin"), join(folder, "bin")], complete: true });
  assert.equal(homeLinks(env, { entries: 20, depth: 5 }).complete, false);
  setEnv(env);
  assert.deepEqual(homeLinkTargets(true, { entries: 20, depth: 5 }), [join(folder, "usrbin"), join(folder, "bin")], "after a run: what was found");
  assert.throws(() => homeLinkTargets(false, { entries: 20, depth: 5 }), (e: unknown) => {
    assert.ok(e instanceof GuardLimitError);
    assert.equal(guardLimitText("en", e), `your home ${home} holds more than 20 entries in its dot-folders and PATH folders together (caches and package stores looked at their top only, agent CLIs' state folders at their top and not counted, .git and node_modules not counted): the sandbox looks through them for links that lead into a folder an agent writes, too many to look through before a launch, so the launch is refused; move what fills them out of the home's dot-folders`);
    return true;
  });
});

test("issue 26 r15 F15-4 (a link to a folder in the home, XDG_CONFIG_HOME elsewhere, a link out of the home): the first two are walked through, the last is not", () => {
  const folder = realpathSync(tempDir("aa-r15-through-"));
  removed.push(folder);
  const xdg = realpathSync(tempDir("aa-r15-xdg-"));
  removed.push(xdg);
  const home = ownerHome("aa-r15-home-");
  for (const n of ["nvim", "xdg-b", "deep"]) mkdirSync(join(folder, n));
  mkdirSync(join(home, "dots", "config"), { recursive: true });
  symlinkSync(join(folder, "nvim"), join(home, "dots", "config", "nvim"));
  symlinkSync(join(home, "dots", "config"), join(home, ".config"));
  mkdirSync(join(xdg, "a"));
  symlinkSync(join(folder, "xdg-b"), join(xdg, "a", "b"));
  mkdirSync(join(home, ".wine", "dosdevices"), { recursive: true });
  symlinkSync(folder, join(home, ".wine", "dosdevices", "z:"));
  symlinkSync(join(folder, "deep"), join(folder, "inner"));
  setEnv({ XDG_CONFIG_HOME: xdg });
  assert.deepEqual(executableParts(folder, false, false).readOnly.filter((p) => p.startsWith(`${folder}/`)), [join(folder, "nvim"), join(folder, "xdg-b")]);
});
