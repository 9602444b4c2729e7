/**
 * Issue 26 hostile round 14, F14-2: a change hidden from the owner's `git status` and `git diff` with no index mark —
 * the changed file's entry keeps the committed object id with the new file's stat data (the index is the agent's to
 * write). The check after the run (index-stat.ts) names it; a normal edit, a file git converts by a filter, by its
 * end-of-line attributes or `core.autocrlf`, or by `ident`, adds no line. Real bubblewrap, real git, a real command
 * agent under the real worker; the limit on what is hashed with the check itself.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { tempDir } from "./helpers.js";
import { owner, ownerRepo, removed, runAgent, sandboxed } from "./steering-helpers.js";
import { plantedNotice, plantedSteering, type Planted } from "../src/worker/planted.js";
import { executableParts } from "../src/worker/steering.js";

/**
 * A node script (run in the repository) that sets the object id of the index entry of `argv[2]` to `argv[3]` (hex)
 * and the index's checksum after it: what the round's attack did with 20 lines of Python (index version 2, no
 * extended flags: the owner's index here).
 */
const patchIndex = `import { readFileSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
const [path, oid] = process.argv.slice(2);
const b = readFileSync(".git/index");
let off = 12;
for (let i = 0; i < b.readUInt32BE(8); i++) {
  const nl = b.readUInt16BE(off + 60) & 0xfff;
  if (b.subarray(off + 62, off + 62 + nl).toString() === path) Buffer.from(oid, "hex").copy(b, off + 40);
  off += Math.floor((62 + nl + 8) / 8) * 8;
}
createHash("sha1").update(b.subarray(0, b.length - 20)).digest().copy(b, b.length - 20);
writeFileSync(".git/index", b);
`;

/**
 * Shell: hide a change to `file` (tracked) as the round did: new content, mtime in the past, `git add`, the old id
 * put back (`git update-index --index-info` would drop the stat data: the index is written directly). `content`
 * `->target` makes the file a link to `target`. The patching script is written to `patch` first.
 */
const hideChange = (file: string, content: string, patch = "/tmp/patch.mjs") => [
  `old=$(git rev-parse ":${file}")`,
  content.startsWith("->") ? `ln -sfn '${content.slice(2)}' "${file}"` : `printf '${content}' > "${file}"`,
  `touch -h -d '2024-01-01 00:00' "${file}"`,
  `git add "${file}"`,
  `cat > ${patch} <<'EOF'\n${patchIndex}EOF`,
  `node ${patch} "${file}" "$old"`,
].join("\n");

/** The owner's repository with a committed `Makefile` and `README.md`. */
function repoWithMakefile(): string {
  const repo = ownerRepo();
  writeFileSync(join(repo, "Makefile"), "all:\n\techo build\n");
  owner(repo, {}, "add", ".");
  owner(repo, {}, "commit", "-qm", "make");
  return repo;
}

test("issue 26 r14 F14-2 (reported case: Makefile changed, its index entry keeps the committed blob id with the changed file's stat data, so the owner's git status and git diff show nothing): the notice names Makefile; the index is left as it is", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const repo = repoWithMakefile();
  const committed = owner(repo, {}, "rev-parse", ":Makefile").trim();
  const script = [hideChange("Makefile", "all:\\n\\tcat ~/.key > /tmp/x\\n"), `echo "Done: hid"`].join("\n");
  const fx = await runAgent(script, repo);
  assert.equal(readFileSync(join(repo, "Makefile"), "utf8"), "all:\n\tcat ~/.key > /tmp/x\n");
  assert.equal(owner(repo, {}, "status", "--porcelain"), "", "the attack works: git status shows nothing");
  assert.equal(owner(repo, {}, "diff", "HEAD"), "", "nor git diff HEAD");
  assert.equal(owner(repo, {}, "ls-files", "-v", "Makefile"), "H Makefile\n", "no mark");
  const card = (await fx.state()).cards.find((c) => c.kind === "notice");
  assert.equal(card?.title, "The agent wrote files your git would run");
  assert.equal(card?.text, `${join(repo, "Makefile")}: changed during the run, but its index entry keeps other content with the changed file's time and size, so git status and git diff do not show the change; touch the file and git shows it`);
  assert.equal(owner(repo, {}, "rev-parse", ":Makefile").trim(), committed, "the index is not changed by the check");
  utimesSync(join(repo, "Makefile"), new Date(), new Date());
  assert.equal(owner(repo, {}, "status", "--porcelain"), " M Makefile\n", "as the card says: touched, the change shows");
});

test("issue 26 r14 F14-2: normal edits (one left changed, one added, one committed) and files git converts — a clean filter, eol=crlf, core.autocrlf, ident — give no line", async (t) => {
  if (!(await sandboxed())) return t.skip("bubblewrap cannot run here");
  const repo = repoWithMakefile();
  writeFileSync(join(repo, ".gitattributes"), "*.up filter=upper\n*.bat text eol=crlf\n*.c ident\n");
  writeFileSync(join(repo, "a.up"), "LOWER\n");
  writeFileSync(join(repo, "run.bat"), "echo one\r\n");
  writeFileSync(join(repo, "auto.txt"), "one\n");
  writeFileSync(join(repo, "x.c"), "/* $Id$ */\n");
  owner(repo, {}, "config", "filter.upper.clean", "tr a-z A-Z");
  owner(repo, {}, "add", ".");
  owner(repo, {}, "commit", "-qm", "converted");
  owner(repo, {}, "config", "core.autocrlf", "true");
  const script = [
    `echo changed >> README.md`,
    `printf 'all:\\n\\techo other\\n' > Makefile && git add Makefile`,
    `printf 'lower case\\n' > a.up && git add a.up`,
    `printf 'echo two\\r\\n' > run.bat && git add run.bat`,
    `printf 'two\\r\\n' > auto.txt && git add auto.txt`,
    `printf '/* $Id: 0123456789abcdef $ */\\nint x;\\n' > x.c && git add x.c`,
    // Past any racy window of the index: git takes each entry by its stat data alone.
    `sleep 1.1 && git update-index --refresh`,
    `git -c user.name=a -c user.email=a@example.com commit -qm agent Makefile`,
    `echo "Done: edited"`,
  ].join("\n");
  const fx = await runAgent(script, repo);
  assert.equal(owner(repo, {}, "status", "--porcelain"), " M README.md\nM  a.up\nM  auto.txt\nM  run.bat\nM  x.c\n");
  assert.equal(owner(repo, {}, "show", ":a.up"), "LOWER CASE\n", "the index holds the cleaned content");
  assert.equal(owner(repo, {}, "show", ":auto.txt"), "two\n");
  assert.equal((await fx.state()).cards.find((c) => c.kind === "notice")?.text, undefined);
});

test("issue 26 r14 F14-2: the check hashes at most its limits over a run's repositories; beyond them the card says it stopped short, never silently", async () => {
  const repo = repoWithMakefile();
  writeFileSync(join(repo, "b.txt"), "b\n");
  owner(repo, {}, "add", ".");
  owner(repo, {}, "commit", "-qm", "b");
  const parts = executableParts(repo, true, false);
  const guarded = new Set([...parts.mountPoints, ...parts.readOnly]);
  // The launch more than the check's 1 s of ctime slack after the files were made: only the run's changes count
  // (README.md, made just before, was once counted against the byte limit and named too large to hash).
  await new Promise((r) => setTimeout(r, 1100));
  const since = Date.now();
  assert.deepEqual(plantedSteering([repo], guarded, parts.seen, 4, { sinceMs: since }), [], "nothing changed yet");
  const scratch = tempDir("aa-masked-");
  removed.push(scratch);
  const patch = join(scratch, "patch.mjs");
  const script = [hideChange("Makefile", "all:\\n\\tcat ~/.key\\n", patch), hideChange("b.txt", "B\\n", patch)].join("\n");
  execFileSync("sh", ["-c", script], { cwd: repo, env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent-aa-owner-home", GIT_CONFIG_NOSYSTEM: "1" } });
  assert.equal(owner(repo, {}, "status", "--porcelain"), "");
  const masked = (path: string) => ({ path, movedTo: null, kind: "masked" });
  assert.deepEqual(plantedSteering([repo], guarded, parts.seen, 4, { sinceMs: since }), [masked(join(repo, "Makefile")), masked(join(repo, "b.txt"))]);
  assert.deepEqual(plantedSteering([repo], guarded, parts.seen, 4), [], "no launch time: no check");
  assert.deepEqual(plantedSteering([repo], guarded, parts.seen, 4, { sinceMs: Date.now() + 10_000 }), [], "changed before the launch: not the run's");
  const cut = { path: repo, movedTo: null, kind: "maskCut" };
  assert.deepEqual(plantedSteering([repo], guarded, parts.seen, 4, { sinceMs: since, masked: { files: 1, bytes: 1 << 20 } }), [masked(join(repo, "Makefile")), cut]);
  // Makefile (17 bytes) is past what is left to hash: named by itself, not left as "cut" (r16 F16-5); b.txt is hashed.
  assert.deepEqual(plantedSteering([repo], guarded, parts.seen, 4, { sinceMs: since, masked: { files: 10, bytes: 5 } }), [masked(join(repo, "b.txt")), { path: join(repo, "Makefile"), movedTo: null, kind: "maskBig" }], "Makefile holds 17 bytes");
  assert.equal(plantedNotice([cut as Planted], "en")?.text, `${repo}: the check for changes the index hides stopped short (at most 20000 files, 512 MiB, or an index git could not list in time): review what the run left against the commit before it (touch the changed files, or a fresh clone)`);
  assert.match(plantedNotice([cut as Planted], "zh")?.text ?? "", /检查没做完（最多 20000 个文件、512 MiB/);
});

test("issue 26 r14 F14-2: a link's target and a file in a folder whose names have spaces, hidden the same way, are named; files changed before the launch are not", () => {
  const repo = repoWithMakefile();
  mkdirSync(join(repo, "sub dir"));
  writeFileSync(join(repo, "sub dir", "x y.sh"), "echo owner\n");
  symlinkSync("Makefile", join(repo, "link"));
  owner(repo, {}, "add", ".");
  owner(repo, {}, "commit", "-qm", "more");
  const parts = executableParts(repo, true, false);
  const guarded = new Set([...parts.mountPoints, ...parts.readOnly]);
  const scratch = tempDir("aa-masked-");
  removed.push(scratch);
  const patch = join(scratch, "patch.mjs");
  const env = { PATH: process.env.PATH ?? "", HOME: "/nonexistent-aa-owner-home", GIT_CONFIG_NOSYSTEM: "1" };
  execFileSync("sh", ["-c", hideChange("Makefile", "all:\\n\\techo earlier\\n", patch)], { cwd: repo, env });
  const since = Date.now();
  execFileSync("sh", ["-c", [hideChange("link", "->/etc/passwd", patch), hideChange("sub dir/x y.sh", "cat ~/.key\\n", patch)].join("\n")], { cwd: repo, env });
  assert.equal(owner(repo, {}, "status", "--porcelain"), "");
  const masked = (path: string) => ({ path, movedTo: null, kind: "masked" });
  // The check counts a ctime up to 1 s before the launch as the run's (the kernel's file clock is coarse).
  assert.deepEqual(plantedSteering([repo], guarded, parts.seen, 4, { sinceMs: since + 1000 }), [masked(join(repo, "link")), masked(join(repo, "sub dir", "x y.sh"))]);
});
