/**
 * Issue 26 hostile round 16: F16-7 — what an agent writes in its CLI's state folder (`~/.claude/r16many`, 50,001
 * files) counted toward the home walk's limit, so that every later launch of every rule was refused; F16-2 — ways into
 * the owner's PATH and Python the walk did not see: links in `~/bin` and in PATH folders, a `.pth` of the user
 * site-packages naming a folder an agent writes (its `usercustomize.py` runs in every `python3`).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./helpers.js";
import { asideOf, ownerHome, ownerRepo, removed, runAgent, sandboxed, setEnv, tryFn } from "./steering-helpers.js";
import { executableParts, homeLinkTargets } from "../src/worker/steering.js";
import { homeLinks } from "../src/worker/home-links.js";

/** A folder of `n` empty files at `dir` (made). */
function fill(dir: string, n: number): void {
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < n; i++) writeFileSync(join(dir, `f${i}`), "");
}

/** A real temporary folder, removed after the test. */
function folderOf(prefix: string): string {
  const f = realpathSync(tempDir(prefix));
  removed.push(f);
  return f;
}

test("issue 26 r16 F16-7 (reported case: many files in ~/.claude/r16many, then moved aside beside it; ~/.codex flooded at its top): the next launch of any rule is not refused; the state folders' top links are still found", () => {
  const folder = folderOf("aa-r16-state-");
  const home = ownerHome("aa-r16-home-");
  fill(join(home, ".claude", "r16many"), 30);
  fill(join(home, ".claude", "r16many.planted-run-63-0123456789abcdef"), 30);
  fill(join(home, ".codex", "r16many"), 30);
  fill(join(home, ".codex"), 30);
  writeFileSync(join(folder, "CLAUDE.md"), "x\n");
  symlinkSync(join(folder, "CLAUDE.md"), join(home, ".claude", "CLAUDE.md"));
  setEnv({ PATH: "", CLAUDE_CONFIG_DIR: "", CODEX_HOME: "" });
  const limits = { entries: 20, depth: 5 };
  assert.deepEqual(homeLinkTargets(false, limits), [join(folder, "CLAUDE.md")]);
});

test("issue 26 r16 F16-7 (CLAUDE_CONFIG_DIR and CODEX_HOME in ~/.config, one flooded at its top): not counted toward the limit", () => {
  const home = ownerHome("aa-r16-home-");
  fill(join(home, ".config", "claude"), 30);
  fill(join(home, ".config", "codex", "many"), 30);
  setEnv({ PATH: "", CLAUDE_CONFIG_DIR: join(home, ".config", "claude"), CODEX_HOME: join(home, ".config", "codex") });
  assert.deepEqual(homeLinks(process.env, { entries: 20, depth: 5 }), { home, targets: [], complete: true });
});

test("issue 26 r16 F16-2 (reported cases: ~/bin/deploy -> ../p14/tools/deploy.sh, a PATH folder's x -> project file): what they lead to stays read-only", () => {
  const project = folderOf("aa-r16-p14-");
  const usrLocalBin = folderOf("aa-r16-ulb-");
  const home = ownerHome("aa-r16-home-");
  mkdirSync(join(project, "tools"));
  for (const n of ["deploy.sh", "ulb.sh", "free.sh"]) writeFileSync(join(project, "tools", n), "#!/bin/sh\n", { mode: 0o755 });
  mkdirSync(join(home, "bin"));
  symlinkSync(join(project, "tools", "deploy.sh"), join(home, "bin", "deploy"));
  symlinkSync(join(project, "tools", "ulb.sh"), join(usrLocalBin, "p14-ulb"));
  writeFileSync(join(usrLocalBin, "plain"), "#!/bin/sh\n");
  setEnv({ PATH: `${usrLocalBin}:/usr/bin:/bin` });
  assert.deepEqual(executableParts(project, false, false).readOnly.filter((p) => p.startsWith(`${project}/`)).sort(), [join(project, "tools", "deploy.sh"), join(project, "tools", "ulb.sh")]);
});

test("issue 26 r16 F16-2 (reported case: a .pth of the user site-packages naming ~/p14/pysrc): its usercustomize.py and sitecustomize.py stay read-only, the folder writable; an editable install's .pth naming the project keeps the project writable", () => {
  const project = folderOf("aa-r16-p14-");
  const home = ownerHome("aa-r16-home-");
  const site = join(home, ".local", "lib", "python3.11", "site-packages");
  mkdirSync(site, { recursive: true });
  mkdirSync(join(project, "pysrc", "__pycache__"), { recursive: true });
  for (const n of ["usercustomize.py", "sitecustomize.py", "mod.py", "__pycache__/usercustomize.cpython-311.pyc", "__pycache__/mod.cpython-311.pyc"]) writeFileSync(join(project, "pysrc", n), "\n");
  writeFileSync(join(project, "usercustomize.py"), "\n");
  writeFileSync(join(site, "p14dev.pth"), `# a comment\n${join(project, "pysrc")}\nimport os\n`);
  writeFileSync(join(site, "__editable__.p14.pth"), `${project}\n`);
  // git stays on PATH: the guard reads the system's git configuration with it, and refuses a launch it cannot read.
  setEnv({ PATH: "/usr/bin:/bin" });
  const readOnly = executableParts(project, false, false).readOnly.filter((p) => p.startsWith(`${project}/`)).sort();
  assert.deepEqual(readOnly, [
    join(project, "pysrc", "__pycache__", "usercustomize.cpython-311.pyc"),
    join(project, "pysrc", "sitecustomize.py"),
    join(project, "pysrc", "usercustomize.py"),
    join(project, "usercustomize.py"),
  ]);
});

test("issue 26 r16 F16-2 (a .pth naming a folder the agent writes, under the real sandbox): an existing usercustomize.py stays read-only, a missing sitecustomize.py made during the run is moved aside after it, the folder's other files stay writable", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const project = ownerRepo();
  const home = ownerHome("aa-r16-home-");
  const site = join(home, ".local", "lib", "python3.11", "site-packages");
  mkdirSync(site, { recursive: true });
  mkdirSync(join(project, "pysrc"));
  writeFileSync(join(project, "pysrc", "usercustomize.py"), "# owner\n");
  writeFileSync(join(site, "p14dev.pth"), `${join(project, "pysrc")}\n`);
  const script = [
    tryFn,
    `try user sh -c 'echo "import os" >> pysrc/usercustomize.py'`,
    `try site sh -c 'echo "import os" > pysrc/sitecustomize.py'`,
    `try mod sh -c 'echo "x = 1" > pysrc/mod.py'`,
    `echo "Done: tried"`,
  ].join("\n");
  const fx = await runAgent(script, project);
  assert.deepEqual(readFileSync(join(project, "tried.txt"), "utf8").trim().split("\n"), ["user no", "site ok", "mod ok"]);
  assert.equal(readFileSync(join(project, "pysrc", "usercustomize.py"), "utf8"), "# owner\n");
  const aside = asideOf(join(project, "pysrc", "sitecustomize.py"), 1);
  assert.equal(existsSync(join(project, "pysrc", "sitecustomize.py")), false);
  assert.equal(readFileSync(join(project, "pysrc", "mod.py"), "utf8"), "x = 1\n");
  assert.equal((await fx.state()).cards.find((c) => c.kind === "notice")?.text, `${join(project, "pysrc", "sitecustomize.py")} → moved to ${aside} (move it back once you have read it)`);
});
