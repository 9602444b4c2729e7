/**
 * What a delivery round reviews (issue 31; protocol.md 交付插件, 审查): a text diff from bare git objects of the
 * branch's own commits only — clean merges of main left out, conflict resolutions kept, an octopus merge reported as a
 * finding. Real git, bare repositories, fixed dates (so the SHAs and the text are the same on every run).
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { reviewDiff } from "../plugins/delivery/review-diff.js";
import { commit, commitTree, git, initBare, mergeTree } from "./github-fake-git.js";
import { tempDir } from "./helpers.js";

const root = tempDir("aa-delivery-review-");
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

/** A bare repository with main's first commit (`src/a.ts`, `README.md`). */
function repo(): { dir: string; base: string } {
  const dir = join(root, `${++n}.git`);
  initBare(dir);
  return { dir, base: commit(dir, [], { "src/a.ts": "export const a = 1;\n", "README.md": "hello\n" }, "first") };
}

/** The tree of a commit. */
const treeOf = (dir: string, sha: string) => git(dir, ["rev-parse", `${sha}^{tree}`]);

test("only the branch's own commits, oldest first, each against its parent; main's own changes are not in it", () => {
  const { dir, base } = repo();
  const c1 = commit(dir, [base], { "src/b.ts": "export const b = 2;\n" }, "add b");
  const c2 = commit(dir, [c1], { "src/a.ts": "export const a = 3;\n" }, "change a");
  const main = commit(dir, [base], { "README.md": "hello from main\n" }, "main moves");
  const got = reviewDiff(dir, main, c2);
  assert.deepEqual([got.reviewed, got.cleanMerges, got.findings, got.cut], [[c1, c2], [], [], false]);
  const blob = (s: string) => git(dir, ["hash-object", "--stdin"], s);
  assert.equal(got.text, [
    `### commit ${c1}`,
    "diff --git a/src/b.ts b/src/b.ts",
    "new file mode 100644",
    `index ${"0".repeat(40)}..${blob("export const b = 2;\n")}`,
    "--- /dev/null",
    "+++ b/src/b.ts",
    "@@ -0,0 +1 @@",
    "+export const b = 2;",
    "",
    `### commit ${c2}`,
    "diff --git a/src/a.ts b/src/a.ts",
    `index ${blob("export const a = 1;\n")}..${blob("export const a = 3;\n")} 100644`,
    "--- a/src/a.ts",
    "+++ b/src/a.ts",
    "@@ -1 +1 @@",
    "-export const a = 1;",
    "+export const a = 3;",
    "",
  ].join("\n"));
  assert.equal(existsSync(join(dir, "src")), false, "nothing was checked out");
});

test("a clean merge of main into the branch is left out whole: its changes from main are not reviewed", () => {
  const { dir, base } = repo();
  const c1 = commit(dir, [base], { "src/b.ts": "b\n" }, "add b");
  const main = commit(dir, [base], { "src/main-only.ts": "from main\n" }, "main work");
  const merge = commitTree(dir, mergeTree(dir, c1, main)!, [c1, main], "Merge branch 'main' into feature");
  const c2 = commit(dir, [merge], { "src/c.ts": "c\n" }, "add c");
  const got = reviewDiff(dir, main, c2);
  assert.deepEqual([got.reviewed, got.cleanMerges, got.findings], [[c1, c2], [merge], []]);
  assert.doesNotMatch(got.text, /main-only|from main/);
  assert.match(got.text, /^\+\+\+ b\/src\/c\.ts$/m);
});

test("a conflict resolution is kept, as the difference from git's own merge with its conflict markers", () => {
  const { dir, base } = repo();
  const c1 = commit(dir, [base], { "src/a.ts": "export const a = 'feature';\n" }, "feature a");
  const main = commit(dir, [base], { "src/a.ts": "export const a = 'main';\n", "src/m.ts": "m\n" }, "main a");
  assert.equal(mergeTree(dir, c1, main), null, "they conflict");
  const resolved = commit(dir, [c1, main], { "src/a.ts": "export const a = 'both';\n", "src/m.ts": "m\n" }, "Merge main, resolved");
  const got = reviewDiff(dir, main, resolved);
  assert.deepEqual([got.reviewed, got.cleanMerges, got.findings], [[c1, resolved], [], []]);
  const section = got.text.slice(got.text.indexOf(`### merge ${resolved}`));
  assert.ok(section.startsWith(`### merge ${resolved}: what differs from git's own merge of ${c1} and ${main}\n`), section.slice(0, 200));
  for (const line of ["-<<<<<<< " + c1, "-export const a = 'feature';", "-=======", "-export const a = 'main';", "->>>>>>> " + main, "+export const a = 'both';"]) {
    assert.ok(section.split("\n").includes(line), `${line} in:\n${section}`);
  }
  assert.doesNotMatch(section, /src\/m\.ts/, "main's clean part of the merge is not in it");
});

test("a change slipped into an otherwise clean merge is kept", () => {
  const { dir, base } = repo();
  const c1 = commit(dir, [base], { "src/b.ts": "b\n" }, "add b");
  const main = commit(dir, [base], { "src/m.ts": "m\n" }, "main");
  const auto = mergeTree(dir, c1, main)!;
  const evil = commit(dir, [c1, main], { "src/m.ts": "m\n", "src/b.ts": "b\n", "src/hidden.ts": "steal()\n" }, "Merge main");
  assert.notEqual(treeOf(dir, evil), auto);
  const got = reviewDiff(dir, main, evil);
  assert.deepEqual([got.reviewed, got.cleanMerges], [[c1, evil], []]);
  assert.match(got.text, /^\+steal\(\)$/m);
});

test("an octopus merge is not diffed but reported as a finding asking for ordinary merges", () => {
  const { dir, base } = repo();
  const c1 = commit(dir, [base], { "src/b.ts": "b\n" }, "b");
  const side1 = commit(dir, [base], { "src/x.ts": "x\n" }, "x");
  const side2 = commit(dir, [base], { "src/y.ts": "y\n" }, "y");
  const octopus = commit(dir, [c1, side1, side2], { "src/x.ts": "x\n", "src/y.ts": "y\n", "src/z.ts": "unseen\n" }, "octopus");
  const got = reviewDiff(dir, base, octopus);
  assert.deepEqual(got.findings, [{ kind: "octopus", commit: octopus, parents: 3 }]);
  assert.deepEqual(got.reviewed.includes(octopus), false);
  assert.doesNotMatch(got.text, /unseen/);
  assert.throws(() => reviewDiff(dir, "main", octopus), /^Error: not a commit SHA: "main"$/);
});
