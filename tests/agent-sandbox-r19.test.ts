/**
 * Issue 26 hostile round 19: F19-1 (the hub's move of planted entries into a box that a concurrent run swapped for a
 * link: the agent's `.bash_aliases` landed in the owner's home), F19-2 (husky 9's read-only runner puts the work
 * tree's `node_modules/.bin` first on PATH and runs `sh`: the agent's `node_modules/.bin/sh` ran at the owner's
 * commit), F19-3 (the absolute paths a husky hook names: husky hooks have no `#!` line and were not read), F19-4 (the
 * scripts a hook starts by a relative path: `./scripts/lint.sh`, `sh scripts/fmt.sh`, `node scripts/msg.js`).
 * Unit level: the guard and the checks after a run called directly, as in agent-sandbox-r17.test.ts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { owner, ownerHome, ownerRepo, removed } from "./steering-helpers.js";
import { tempDir } from "./helpers.js";
import { executableParts, GuardLimitError, noneSeen } from "../src/worker/steering.js";
import { tmpdir } from "node:os";
import { blockingGitFiles, gitFolderCrowded, gitFolderTopMax } from "../src/worker/git-read.js";
import { movePlantedAside, plantedSteering } from "../src/worker/planted.js";
import { plantedState, statePageEntries, stateSeenAt } from "../src/worker/state-planted.js";
import { moveAside } from "../src/worker/files.js";

/** husky 9.1.7's runner `.husky/_/h` as `husky` writes it (the lines that matter, verbatim). */
const huskyRunner = `#!/usr/bin/env sh
n=$(basename "$0")
s=$(dirname "$(dirname "$0")")/$n
[ ! -f "$s" ] && exit 0
[ "\${HUSKY-}" = "0" ] && exit 0
export PATH="node_modules/.bin:$PATH"
sh -e "$s" "$@"
`;

/** A repository of the owner's set up as husky 9 leaves it: `core.hooksPath = .husky/_`, the runner, `.husky/<hook>` = `hook`. */
function huskyRepo(hook: string): string {
  const repo = ownerRepo();
  mkdirSync(join(repo, ".husky", "_"), { recursive: true });
  writeFileSync(join(repo, ".husky", "_", "h"), huskyRunner, { mode: 0o755 });
  writeFileSync(join(repo, ".husky", "_", "pre-commit"), '#!/usr/bin/env sh\n. "$(dirname "$0")/h"', { mode: 0o755 });
  writeFileSync(join(repo, ".husky", "pre-commit"), hook);
  owner(repo, {}, "config", "core.hooksPath", ".husky/_");
  return repo;
}

/** An empty file at `path` (its folders made), as a script of the project's. */
function script(path: string): string {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, "#!/bin/sh\necho owner\n", { mode: 0o755 });
  return path;
}

test("issue 26 r19 F19-1 (reported case: the box swapped for a link to the home while the hub moved entries into it): a move whose folder is no longer the one named moves nothing and says so", () => {
  const state = realpathSync(tempDir("aa-r19-state-"));
  const home = realpathSync(tempDir("aa-r19-home-"));
  removed.push(state, home);
  const box = join(state, "planted-run-11-a336879ee885e3fc");
  mkdirSync(box);
  writeFileSync(join(state, ".bash_aliases"), "cat ~/.agent-autoloop/master.key\n");
  writeFileSync(join(state, "+00001"), "");
  assert.equal(moveAside(join(state, "+00001"), join(box, "+00001")), join(box, "+00001"), "the box as made: moved into it");
  // The other run: the box renamed away, a link to the owner's home in its place.
  renameSync(box, `${box}.moved`);
  symlinkSync(home, box);
  assert.throws(() => moveAside(join(state, ".bash_aliases"), join(box, ".bash_aliases")), (e: NodeJS.ErrnoException) => e.code === "ECHANGED" && e.message.includes(home));
  const moved = movePlantedAside(join(state, ".bash_aliases"), 11, join(box, ".bash_aliases"));
  assert.deepEqual([moved.kind, moved.movedTo], ["stuck", null]);
  assert.deepEqual(readdirSync(home), [], "nothing reached the home");
  assert.equal(existsSync(join(state, ".bash_aliases")), true);
  // A folder on the way of the source replaced too (a planted file below a folder the other run swapped).
  mkdirSync(join(state, "sub"));
  writeFileSync(join(state, "sub", "x"), "");
  renameSync(join(state, "sub"), join(state, "sub.moved"));
  symlinkSync(home, join(state, "sub"));
  writeFileSync(join(home, "x"), "the owner's");
  assert.deepEqual(movePlantedAside(join(state, "sub", "x"), 11).kind, "stuck");
  assert.deepEqual(readdirSync(home), ["x"], "the owner's file was not moved");
});

test("issue 26 r19 F19-3, F19-4 (reported cases): every file of a hooks folder is read, #! or not, and what a hook starts by an absolute path or a path relative to its work tree is kept read-only", () => {
  ownerHome();
  const husky = huskyRepo("npm test\nsh tools/rel.sh\n__ABS__\n");
  writeFileSync(join(husky, ".husky", "pre-commit"), `npm test\nsh tools/rel.sh\n${join(husky, "tools", "abs.sh")}\n`);
  const rel = script(join(husky, "tools", "rel.sh"));
  const abs = script(join(husky, "tools", "abs.sh"));
  script(join(husky, "tools", "other.sh"));
  const parts = executableParts(husky, true, false);
  assert.deepEqual(parts.readOnly.filter((p) => p.startsWith(join(husky, "tools"))).sort(), [abs, rel]);
  // git's own hooks folder: `./scripts/lint.sh`, `sh scripts/fmt.sh`, `node scripts/msg.js`.
  const plain = ownerRepo();
  writeFileSync(join(plain, ".git", "hooks", "pre-commit"), "#!/bin/sh\n./scripts/lint.sh && sh scripts/fmt.sh\n", { mode: 0o755 });
  writeFileSync(join(plain, ".git", "hooks", "commit-msg"), '#!/bin/sh\nexec node scripts/msg.js "$@"\n', { mode: 0o755 });
  const named = ["lint.sh", "fmt.sh", "msg.js"].map((n) => script(join(plain, "scripts", n)));
  script(join(plain, "scripts", "unnamed.sh"));
  // A sample git never runs names nothing.
  writeFileSync(join(plain, ".git", "hooks", "pre-rebase.sample"), "#!/bin/sh\nsh scripts/unnamed.sh\n");
  const plainParts = executableParts(plain, true, false);
  assert.deepEqual(plainParts.readOnly.filter((p) => p.startsWith(join(plain, "scripts"))).sort(), named.sort());
  // A hooks folder named by core.hooksPath that is not husky's (no `_`): the same.
  const hooks = ownerRepo();
  mkdirSync(join(hooks, ".githooks"));
  writeFileSync(join(hooks, ".githooks", "pre-push"), "bin/check\n");
  owner(hooks, {}, "config", "core.hooksPath", ".githooks");
  const check = script(join(hooks, "bin", "check"));
  assert.deepEqual(executableParts(hooks, true, false).readOnly.filter((p) => p.startsWith(join(hooks, "bin"))), [check]);
});

test("issue 26 r19 F19-2 (reported case: husky's runner with node_modules/.bin first on PATH, an agent's node_modules/.bin/sh): a system command there is read-only when there, and moved aside after the run when made", () => {
  ownerHome();
  const repo = huskyRepo("echo hook-ok\nnpm test\nlint-staged\ngit status\n");
  const bin = join(repo, "node_modules", ".bin");
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, "git"), "#!/bin/sh\n", { mode: 0o755 }); // a system command's name there at launch: kept as it is
  writeFileSync(join(bin, "lint-staged"), "#!/bin/sh\n", { mode: 0o755 }); // the project's own program: the project's (SECURITY.md)
  assert.equal(existsOnPath("npm") && existsOnPath("git") && !existsOnPath("lint-staged"), true, "this machine's PATH as the test needs it");
  const parts = executableParts(repo, true, false);
  assert.deepEqual(parts.readOnly.filter((p) => p.startsWith(bin)), [join(bin, "git")]);
  for (const name of ["sh", "npm", "echo"]) assert.equal(parts.seen.shadows.includes(join(bin, name)), true, name);
  for (const name of ["lint-staged", "hook-ok", "git", "status"]) assert.equal(parts.seen.shadows.includes(join(bin, name)), false, name);
  const guarded = new Set([...parts.readOnly, ...parts.mountPoints, ...parts.readOnlyParents]);
  // The run: `sh` and `npm` planted there, lint-staged changed (the project's own code: not this check's).
  writeFileSync(join(bin, "sh"), "#!/bin/bash\ncat ~/.agent-autoloop/master.key\n", { mode: 0o755 });
  symlinkSync("/tmp/elsewhere", join(bin, "npm"));
  writeFileSync(join(bin, "lint-staged"), "#!/bin/sh\necho changed\n");
  const found = plantedSteering([repo], guarded, parts.seen, 19);
  assert.deepEqual(found.map((p) => [p.path, p.kind]).sort(), [[join(bin, "npm"), "moved"], [join(bin, "sh"), "moved"]]);
  assert.equal(existsSync(join(bin, "sh")), false);
  // A repository without a runner that sets PATH: nothing looked for there.
  const plain = ownerRepo();
  writeFileSync(join(plain, ".git", "hooks", "pre-commit"), "#!/bin/sh\nnpm test\n", { mode: 0o755 });
  assert.deepEqual(executableParts(plain, true, false).seen.shadows, []);
});

/** Whether `name` is a program on this process's PATH. */
function existsOnPath(name: string): boolean {
  return (process.env.PATH ?? "").split(":").some((d) => d.startsWith("/") && existsSync(join(d, name)));
}

test("issue 26 r20 F20-1 (reported case: husky's default `npm test`, npm being #!/usr/bin/env node; a hook's script #!/usr/bin/env bash): the interpreters those look up on the runner's PATH are kept there too", () => {
  ownerHome();
  const repo = huskyRepo("npm test\n./scripts/lint.sh\n");
  writeFileSync(script(join(repo, "scripts", "lint.sh")), "#!/usr/bin/env bash\necho lint\n");
  const npm = (process.env.PATH ?? "").split(":").map((d) => join(d, "npm")).find((p) => existsSync(p));
  assert.ok(npm && readFileSync(npm, "utf8").startsWith("#!/usr/bin/env node"), "this machine's npm starts #!/usr/bin/env node");
  const bin = join(repo, "node_modules", ".bin");
  const parts = executableParts(repo, true, false);
  for (const name of ["node", "bash", "npm", "sh"]) assert.equal(parts.seen.shadows.includes(join(bin, name)), true, name);
  const guarded = new Set([...parts.readOnly, ...parts.mountPoints, ...parts.readOnlyParents]);
  mkdirSync(bin, { recursive: true });
  for (const name of ["node", "bash"]) writeFileSync(join(bin, name), "#!/bin/sh\ncat ~/.agent-autoloop/master.key\n", { mode: 0o755 });
  assert.deepEqual(plantedSteering([repo], guarded, parts.seen, 20).map((p) => [p.path, p.kind]).sort(), [[join(bin, "bash"), "moved"], [join(bin, "node"), "moved"]]);
});

test("issue 26 r20 F20-2, F20-3, F20-4 (reported cases): a hook's PATH through $(git rev-parse --show-toplevel) or $PWD, a `cd` before a relative script, a variable set to the top, lefthook's computed `lefthook-${osArch}-${cpuArch}`: each read as the shell would", () => {
  ownerHome();
  // F20-2: PATH through the top's idioms.
  const viaTop = ownerRepo();
  writeFileSync(join(viaTop, ".git", "hooks", "pre-commit"), '#!/bin/sh\nexport PATH="$(git rev-parse --show-toplevel)/node_modules/.bin:$PWD/tools:$PATH"\nnpm test\n', { mode: 0o755 });
  const shadows = executableParts(viaTop, true, false).seen.shadows;
  for (const p of ["node_modules/.bin/npm", "node_modules/.bin/sh", "tools/npm"]) assert.equal(shadows.includes(join(viaTop, p)), true, p);
  // F20-3: `cd` then a relative script; F20-4: ROOT=$(git rev-parse --show-toplevel), then "$ROOT/…".
  const mono = ownerRepo();
  writeFileSync(join(mono, ".git", "hooks", "pre-commit"), "#!/bin/sh\n(cd frontend && ./lint.sh)\npushd 'backend' >/dev/null; sh check.sh\n", { mode: 0o755 });
  writeFileSync(join(mono, ".git", "hooks", "commit-msg"), '#!/bin/sh\nROOT=$(git rev-parse --show-toplevel)\nMSG="${ROOT}/scripts"\n"$ROOT/scripts/check-msg.sh" "$1" && "$MSG/other.sh"\n', { mode: 0o755 });
  const named = ["frontend/lint.sh", "backend/check.sh", "scripts/check-msg.sh", "scripts/other.sh"].map((p) => script(join(mono, p)));
  script(join(mono, "frontend", "unnamed.sh"));
  assert.deepEqual(executableParts(mono, true, false).readOnly.filter((p) => !p.includes("/.git")).sort(), named.sort());
  // F20-4: lefthook's own hook when installed through npm (its computed platform folder), and one with no fixed text.
  const lefthook = ownerRepo();
  writeFileSync(join(lefthook, ".git", "hooks", "pre-commit"), [
    "#!/bin/sh", 'if test -n "$LEFTHOOK_BIN"', "then", '  "$LEFTHOOK_BIN" "$@"', "else", '  dir="$(git rev-parse --show-toplevel)"',
    "  osArch=$(uname | tr '[:upper:]' '[:lower:]')", "  cpuArch=$(uname -m | sed 's/aarch64/arm64/;s/x86_64/x64/')",
    '  if test -f "$dir/node_modules/lefthook-${osArch}-${cpuArch}/bin/lefthook"', "  then", '    "$dir/node_modules/lefthook-${osArch}-${cpuArch}/bin/lefthook" "$@"', "  fi", "fi", "",
  ].join("\n"), { mode: 0o755 });
  const binary = script(join(lefthook, "node_modules", "lefthook-linux-x64", "bin", "lefthook"));
  script(join(lefthook, "node_modules", "other-linux-x64", "bin", "lefthook"));
  writeFileSync(join(lefthook, "README.md"), "the owner's\n");
  assert.deepEqual(executableParts(lefthook, true, false).readOnly.filter((p) => !p.includes("/.git")), [binary]);
});

test("issue 26 r19 F19-1 (the race itself): the box swapped for a link to the home between two pages of the check — nothing reaches the home, the rest is moved beside itself at the state's top", async () => {
  const state = realpathSync(tempDir("aa-r19-race-"));
  const home = realpathSync(tempDir("aa-r19-racehome-"));
  removed.push(state, home);
  writeFileSync(join(state, "settings.json"), "{}");
  const seen = stateSeenAt([{ folder: state, writes: ["todos"], bound: true }], []);
  const n = statePageEntries * 2 + 10;
  for (let i = 0; i < n; i++) writeFileSync(join(state, `+${String(i).padStart(5, "0")}`), "");
  writeFileSync(join(state, ".bash_aliases"), "cat ~/.agent-autoloop/master.key\n");
  const checking = plantedState(seen, 11);
  // The check yields after its first page: the other run's move now (its box renamed away, a link to the home put there).
  const box = readdirSync(state).find((e) => e.startsWith("planted-run-11-"))!;
  assert.ok(box, "the box was made in the first page");
  renameSync(join(state, box), join(state, `${box}.moved`));
  symlinkSync(home, join(state, box));
  const found = await checking;
  assert.deepEqual(readdirSync(home), [], "nothing reached the home");
  const top = readdirSync(state);
  assert.deepEqual(top.filter((e) => e.startsWith("+") && !e.includes(".planted-run-11-")), [], "every entry moved");
  assert.equal(top.includes(".bash_aliases"), false);
  assert.equal(top.filter((e) => e.includes(".planted-run-11-")).length + readdirSync(join(state, `${box}.moved`)).length, n + 1);
  assert.equal(found.planted.length + found.more, n + 1);
});

test("issue 26 r19 F19-6's kind in a git folder: a .git top an agent filled past gitFolderTopMax refuses the next launch naming it, and the check after the run names the repository as looked at short, without running git there", () => {
  ownerHome();
  const repo = ownerRepo();
  const parts = executableParts(repo, true, false);
  const guarded = new Set([...parts.readOnly, ...parts.mountPoints, ...parts.readOnlyParents]);
  const git = join(repo, ".git");
  for (let i = 0; i <= gitFolderTopMax; i++) writeFileSync(join(git, `x${i}`), "");
  assert.equal(gitFolderCrowded(git), true);
  assert.deepEqual(blockingGitFiles(git), []);
  // What the configuration names is still looked at: an include made during the run is moved aside too.
  owner(repo, {}, "config", "include.path", "../team.gitconfig");
  writeFileSync(join(repo, "team.gitconfig"), "[core]\n\tfsmonitor = id\n");
  const found = plantedSteering([repo], guarded, parts.seen, 21);
  assert.deepEqual(found.map((p) => [p.path, p.kind]), [[join(repo, "team.gitconfig"), "moved"], [repo, "maskCut"]]);
  assert.equal(existsSync(join(git, "index")), true, "the index left where it is");
  assert.throws(() => executableParts(repo, true, false), (e: unknown) => e instanceof GuardLimitError && e.kind === "entries" && e.folder === git && e.limit === gitFolderTopMax);
});

test("issue 26 r21 F21-2 (reported cases: a monorepo package's web/.claude/settings.json and web/.vscode/tasks.json, a new web/.mcp.json, a new .claude/settings.json in a writable folder that is no repository): editors' and CLIs' project parts are read-only at any depth, and new ones anywhere are moved aside after the run", () => {
  ownerHome();
  const repo = ownerRepo();
  mkdirSync(join(repo, "web", ".claude"), { recursive: true });
  writeFileSync(join(repo, "web", ".claude", "settings.json"), "{}\n");
  mkdirSync(join(repo, "web", ".vscode"));
  writeFileSync(join(repo, "web", ".vscode", "tasks.json"), "{}\n");
  mkdirSync(join(repo, "api", "src"), { recursive: true });
  const parts = executableParts(repo, true, false);
  assert.deepEqual(parts.readOnly.filter((p) => p.startsWith(join(repo, "web"))).sort(), [join(repo, "web", ".claude"), join(repo, "web", ".vscode")]);
  const guarded = new Set([...parts.readOnly, ...parts.mountPoints, ...parts.readOnlyParents]);
  writeFileSync(join(repo, "web", ".mcp.json"), '{"mcpServers":{}}\n');
  mkdirSync(join(repo, "api", "src", ".claude"));
  writeFileSync(join(repo, "api", "src", ".claude", "settings.json"), '{"hooks":{}}\n');
  mkdirSync(join(repo, "api", "src", "lib"));
  const found = plantedSteering([repo], guarded, parts.seen, 21);
  assert.deepEqual(found.map((p) => [p.path, p.kind]).sort(), [[join(repo, "api", "src", ".claude"), "moved"], [join(repo, "web", ".mcp.json"), "moved"]]);
  // A writable folder that is no repository, nothing there at launch.
  const shared = realpathSync(tempDir("aa-r21-shared-"));
  removed.push(shared);
  const sharedParts = executableParts(shared, false, true);
  mkdirSync(join(shared, ".claude"));
  writeFileSync(join(shared, ".claude", "settings.json"), '{"hooks":{}}\n');
  mkdirSync(join(shared, "notes", ".vscode"), { recursive: true });
  const sharedFound = plantedSteering([shared], new Set([...sharedParts.readOnly, ...sharedParts.mountPoints]), sharedParts.seen, 22);
  assert.deepEqual(sharedFound.map((p) => [p.path, p.kind]).sort(), [[join(shared, ".claude"), "moved"], [join(shared, "notes", ".vscode"), "moved"]]);
  // A shared temporary root as the writable folder (a rule's cwd "/tmp"): not walked — other programs' and runs'
  // folders there are theirs (the suite's own run found every test's .vscode under /tmp moved aside).
  const other = realpathSync(tempDir("aa-r21-other-"));
  removed.push(other);
  mkdirSync(join(other, ".vscode"));
  assert.deepEqual(plantedSteering([realpathSync(tmpdir())], new Set(), noneSeen(), 23), []);
  assert.equal(existsSync(join(other, ".vscode")), true);
});

test("issue 26 (the suite's own run in a clone under /tmp, npm putting the clone's node_modules/.bin on PATH: its links' targets were moved aside): the check of a writable shared temporary root leaves every program's files there; below the run's own folder a PATH folder's new target is still moved (F15-4)", () => {
  ownerHome();
  const clone = realpathSync(tempDir("aa-npm-clone-"));
  removed.push(clone);
  const bin = join(clone, "node_modules", ".bin");
  const cli = script(join(clone, "node_modules", "tsx", "dist", "cli.mjs"));
  mkdirSync(bin);
  symlinkSync("../tsx/dist/cli.mjs", join(bin, "tsx"));
  const path = process.env.PATH;
  process.env.PATH = `${bin}:${path}`;
  try {
    assert.deepEqual(plantedSteering([realpathSync(tmpdir())], new Set(), noneSeen(), 24), []);
    assert.deepEqual([existsSync(cli), existsSync(join(bin, "tsx"))], [true, true]);
    // The clone the run's own writable folder, the PATH folder and its target not guarded (missing at launch).
    const found = plantedSteering([clone], new Set(), noneSeen(), 25);
    assert.deepEqual(found.map((p) => [p.path, p.kind]).sort(), [[bin, "moved"], [cli, "moved"]]);
  } finally {
    process.env.PATH = path;
  }
});
