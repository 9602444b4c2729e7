/**
 * `scripts/release.ts` (docs/releases.md, protocol.md 版本与兼容) on scratch git repositories: the weekly numbering
 * (first release, same week → third number, next week → second, the Monday 00:00 Asia/Shanghai edge, --breaking →
 * first), `-rc` trial releases and their final release, the notes, and its refusals. The script runs as a real child
 * process in another time zone than Shanghai's, so only its own rule can put the week's edge where it is.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { engine, tempDir } from "./helpers.js";
import { nextVersion, weekStartMs } from "../scripts/release.js";
import { formatVersion, newestRelease } from "../src/host/version.js";

const script = join(engine, "scripts", "release.ts");
const tsx = import.meta.resolve("tsx");
const scratch = tempDir("aa-release-");
after(() => rmSync(scratch, { recursive: true, force: true }));

const gitEnv = {
  ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@example.invalid", GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.invalid", GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null",
};

let repos = 0;
/** A new git repository with one commit ("start"). */
function repo(): string {
  const dir = join(scratch, `r${++repos}`);
  mkdirSync(dir);
  git(dir, "init", "-q", "-b", "main");
  commit(dir, "start");
  return dir;
}
function git(dir: string, ...args: string[]): string {
  return execFileSync("git", ["-C", dir, ...args], { env: gitEnv, encoding: "utf8" }).trim();
}
/** A commit with this subject that changes a file. */
function commit(dir: string, subject: string): void {
  writeFileSync(join(dir, "file.txt"), `${subject}\n`);
  git(dir, "add", "file.txt");
  git(dir, "commit", "-q", "-m", subject);
}

/** Runs `scripts/release.ts` in `dir` (in a time zone far from Shanghai's, with the maintainer's git config). */
function release(dir: string, ...args: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, ["--import", tsx, script, ...args], { cwd: dir, encoding: "utf8", env: { ...gitEnv, TZ: "America/Los_Angeles" } });
  return { code: r.status, out: r.stdout, err: r.stderr };
}
/** Releases and returns the tag made (asserting success). */
function released(dir: string, now: string, ...flags: string[]): string {
  const r = release(dir, "--now", now, ...flags);
  assert.equal(r.code, 0, r.err);
  return /^tagged (\S+) on [0-9a-f]+$/m.exec(r.out)![1]!;
}
function tags(dir: string): string[] {
  return git(dir, "tag", "--list").split("\n").filter(Boolean).sort();
}
/** The annotated tag's message, as `update` will show it. */
function notes(dir: string, tag: string): string {
  return git(dir, "tag", "--list", "--format=%(contents)", tag);
}

// Week of Monday 2025-06-02 (Shanghai); Monday 2025-06-09 00:00 Shanghai is 2025-06-08T16:00:00Z.
const mondayJune2 = "2025-06-02T09:00:00+08:00";

test("weekStartMs: the week begins Monday 00:00 Asia/Shanghai, which is Sunday 16:00 UTC", () => {
  const monday = Date.parse("2025-06-08T16:00:00Z");
  assert.equal(weekStartMs(monday), monday);
  assert.equal(weekStartMs(monday - 1000), Date.parse("2025-06-01T16:00:00Z"), "Sunday 23:59:59 Shanghai is last week");
  assert.equal(weekStartMs(Date.parse("2025-06-14T23:59:59+08:00")), Date.parse("2025-06-09T00:00:00+08:00"));
  assert.equal(weekStartMs(Date.parse("2025-06-15T23:59:59+08:00")), Date.parse("2025-06-09T00:00:00+08:00"));
  assert.equal(weekStartMs(Date.parse("2025-06-11T03:00:00-07:00")), Date.parse("2025-06-09T00:00:00+08:00"));
  // Before 1970 too (a week that straddles the epoch).
  assert.equal(weekStartMs(0), Date.parse("1969-12-29T00:00:00+08:00"));
});

test("nextVersion ignores tags that are not versions, and rc tags as the base", () => {
  const at = Date.parse(mondayJune2);
  const laterSameWeek = at + 3600_000;
  const plain = { breaking: false, rc: false };
  assert.equal(formatVersion(nextVersion([], at, plain)), "v0.1.0");
  assert.equal(formatVersion(nextVersion([], at, { breaking: true, rc: false })), "v1.0.0");
  assert.equal(formatVersion(nextVersion([{ tag: "v1.8.3", atMs: at }, { tag: "v9.0.0-rc.1", atMs: at }, { tag: "nightly", atMs: at }], laterSameWeek, plain)), "v1.8.4");
  assert.equal(formatVersion(nextVersion([{ tag: "v1.8.3", atMs: at }], at + 7 * 86_400_000, plain)), "v1.9.0");
  assert.equal(formatVersion(nextVersion([{ tag: "v1.8.3", atMs: at }], laterSameWeek, { breaking: true, rc: false })), "v2.0.0");
});

test("the first release ever is v0.1.0, an annotated tag on HEAD whose message lists every commit subject", () => {
  const dir = repo();
  commit(dir, "Add the widget");
  commit(dir, "修复：中文的提交标题");
  commit(dir, "# a subject that starts like a comment");
  assert.equal(released(dir, mondayJune2), "v0.1.0");
  assert.deepEqual(tags(dir), ["v0.1.0"]);
  assert.equal(git(dir, "cat-file", "-t", "v0.1.0"), "tag", "annotated");
  assert.equal(git(dir, "rev-parse", "v0.1.0^{commit}"), git(dir, "rev-parse", "HEAD"));
  assert.equal(notes(dir, "v0.1.0"), [
    "agent-autoloop v0.1.0", "", "Changes since the beginning:",
    "- # a subject that starts like a comment", "- 修复：中文的提交标题", "- Add the widget", "- start",
  ].join("\n"));
  // The tag is dated at the release time (what the next run reads to know the week).
  assert.equal(Number(git(dir, "tag", "--list", "--format=%(creatordate:unix)", "v0.1.0")) * 1000, Date.parse(mondayJune2));
});

test("same week → third number; next week → second number; the notes hold only what came since the last release", () => {
  const dir = repo();
  assert.equal(released(dir, mondayJune2), "v0.1.0");
  commit(dir, "Fix a crash");
  assert.equal(released(dir, "2025-06-05T18:00:00+08:00"), "v0.1.1");
  assert.equal(notes(dir, "v0.1.1"), "agent-autoloop v0.1.1\n\nChanges since v0.1.0:\n- Fix a crash");
  commit(dir, "Fix another crash");
  assert.equal(released(dir, "2025-06-06T18:00:00+08:00"), "v0.1.2");
  commit(dir, "A new command");
  commit(dir, "Its docs");
  assert.equal(released(dir, "2025-06-10T11:00:00+08:00"), "v0.2.0");
  assert.equal(notes(dir, "v0.2.0"), "agent-autoloop v0.2.0\n\nChanges since v0.1.2:\n- Its docs\n- A new command");
  // A week with no release in between still gives only the next second number.
  commit(dir, "Much later");
  assert.equal(released(dir, "2025-07-30T11:00:00+08:00"), "v0.3.0");
});

test("the Monday edge in Asia/Shanghai: Sunday 23:59:59 is still the same week, Monday 00:00 (Sunday 16:00 UTC) is the next", () => {
  const dir = repo();
  assert.equal(released(dir, mondayJune2), "v0.1.0");
  commit(dir, "Late on Sunday");
  // Asked as UTC, and in a dry run first: 15:59:59Z is Sunday 23:59:59 in Shanghai.
  const dry = release(dir, "--now", "2025-06-08T15:59:59Z", "--dry-run");
  assert.equal(dry.code, 0, dry.err);
  assert.equal(dry.out, `would tag v0.1.1 on ${git(dir, "rev-parse", "--short", "HEAD")} (dry run: nothing made)\n\nagent-autoloop v0.1.1\n\nChanges since v0.1.0:\n- Late on Sunday\n\n`);
  assert.deepEqual(tags(dir), ["v0.1.0"], "a dry run makes no tag");
  assert.equal(released(dir, "2025-06-08T15:59:59Z"), "v0.1.1");
  commit(dir, "Just after midnight");
  // One second later: Monday 00:00:00 in Shanghai, while it is still Sunday in UTC and in the script's own zone.
  assert.equal(released(dir, "2025-06-09T00:00:00+08:00"), "v0.2.0");
  commit(dir, "An hour later");
  assert.equal(released(dir, "2025-06-08T17:00:00Z"), "v0.2.1");
});

test("--breaking → first number, the others from 0, whatever the week; the notes say it", () => {
  const dir = repo();
  assert.equal(released(dir, mondayJune2), "v0.1.0");
  commit(dir, "Rename the rules field");
  assert.equal(released(dir, "2025-06-03T10:00:00+08:00", "--breaking"), "v1.0.0");
  assert.equal(notes(dir, "v1.0.0"), "agent-autoloop v1.0.0\n\nOld usage breaks in this release (the first number changed): read these notes before updating.\n\nChanges since v0.1.0:\n- Rename the rules field");
  commit(dir, "Fix");
  assert.equal(released(dir, "2025-06-03T11:00:00+08:00"), "v1.0.1");
  commit(dir, "Break again next week");
  assert.equal(released(dir, "2025-06-12T11:00:00+08:00", "--breaking"), "v2.0.0");
});

test("--rc makes -rc.N of the next number; its final release gets that number; newestRelease never picks an -rc", () => {
  const dir = repo();
  assert.equal(released(dir, mondayJune2), "v0.1.0");
  commit(dir, "Big change, part 1");
  assert.equal(released(dir, "2025-06-10T10:00:00+08:00", "--rc"), "v0.2.0-rc.1");
  assert.equal(notes(dir, "v0.2.0-rc.1"), "agent-autoloop v0.2.0-rc.1\n\nA trial release: install and update never go to it.\n\nChanges since v0.1.0:\n- Big change, part 1");
  assert.equal(newestRelease(tags(dir)), "v0.1.0", "update stays on v0.1.0");
  commit(dir, "Big change, part 2");
  assert.equal(released(dir, "2025-06-11T10:00:00+08:00", "--rc"), "v0.2.0-rc.2");
  assert.equal(newestRelease(tags(dir)), "v0.1.0");
  // The final release on the commit of rc.2, a week later still: the rc tags are no release, so it is v0.2.0, with
  // everything since the last release in its notes.
  assert.equal(released(dir, "2025-06-17T10:00:00+08:00"), "v0.2.0");
  assert.equal(git(dir, "rev-parse", "v0.2.0^{commit}"), git(dir, "rev-parse", "v0.2.0-rc.2^{commit}"));
  assert.equal(notes(dir, "v0.2.0"), "agent-autoloop v0.2.0\n\nChanges since v0.1.0:\n- Big change, part 2\n- Big change, part 1");
  assert.equal(newestRelease(tags(dir)), "v0.2.0");
  // An rc in the same week as a final release is an rc of the third number.
  commit(dir, "Risky fix");
  assert.equal(released(dir, "2025-06-18T10:00:00+08:00", "--rc"), "v0.2.1-rc.1");
  assert.deepEqual(tags(dir), ["v0.1.0", "v0.2.0", "v0.2.0-rc.1", "v0.2.0-rc.2", "v0.2.1-rc.1"]);
  assert.equal(newestRelease(tags(dir)), "v0.2.0");
  // And a breaking rc, whose final release must be asked for with --breaking too.
  commit(dir, "Drop the old field");
  assert.equal(released(dir, "2025-06-19T10:00:00+08:00", "--breaking", "--rc"), "v1.0.0-rc.1");
  const plain = release(dir, "--now", "2025-06-20T10:00:00+08:00");
  assert.deepEqual([plain.code, plain.err], [1, "release: v1.0.0-rc.1 is newer than v0.2.1, the number the rules give; a release after a trial release is at least its number (was that trial release made with --breaking?)\n"]);
  assert.equal(released(dir, "2025-06-20T10:00:00+08:00", "--breaking"), "v1.0.0");
  assert.equal(newestRelease(tags(dir)), "v1.0.0");
});

test("merge commits are left out of the notes, the commits they bring are in", () => {
  const dir = repo();
  assert.equal(released(dir, mondayJune2), "v0.1.0");
  git(dir, "checkout", "-q", "-b", "topic");
  commit(dir, "Topic work");
  git(dir, "checkout", "-q", "main");
  git(dir, "merge", "-q", "--no-ff", "-m", "Merge branch 'topic'", "topic");
  assert.equal(released(dir, "2025-06-03T10:00:00+08:00"), "v0.1.1");
  assert.equal(notes(dir, "v0.1.1"), "agent-autoloop v0.1.1\n\nChanges since v0.1.0:\n- Topic work");
});

test("refuses on a dirty tree (changed, staged or untracked files), in a dry run too, and makes nothing", () => {
  const dir = repo();
  const refusal = (line: string) => `release: the work tree has changes that are not committed; commit or remove them first (a release is a commit as it is):\n  ${line}\n`;
  writeFileSync(join(dir, "file.txt"), "changed\n");
  for (const flags of [[], ["--dry-run"]]) {
    assert.deepEqual(Object.values(release(dir, "--now", mondayJune2, ...flags)), [1, "", refusal(" M file.txt")]);
  }
  git(dir, "add", "file.txt");
  assert.deepEqual(Object.values(release(dir, "--now", mondayJune2)), [1, "", refusal("M  file.txt")]);
  git(dir, "reset", "-q", "--hard");
  writeFileSync(join(dir, "new file.txt"), "x\n");
  assert.deepEqual(Object.values(release(dir, "--now", mondayJune2)), [1, "", refusal('?? "new file.txt"')]);
  assert.deepEqual(tags(dir), []);
  rmSync(join(dir, "new file.txt"));
  assert.equal(released(dir, mondayJune2), "v0.1.0");
});

test("refuses when nothing was committed since the last release, or HEAD does not contain it", () => {
  const dir = repo();
  assert.equal(released(dir, mondayJune2), "v0.1.0");
  assert.deepEqual(Object.values(release(dir, "--now", "2025-06-03T10:00:00+08:00")), [1, "", "release: nothing to release: nothing was committed since v0.1.0\n"]);
  commit(dir, "More");
  assert.equal(released(dir, "2025-06-03T10:00:00+08:00"), "v0.1.1");
  git(dir, "checkout", "-q", "--detach", "v0.1.0");
  commit(dir, "On an old line");
  assert.deepEqual(Object.values(release(dir, "--now", "2025-06-04T10:00:00+08:00")), [1, "", "release: HEAD does not contain v0.1.1, the last release: release from a commit that follows it\n"]);
  assert.deepEqual(tags(dir), ["v0.1.0", "v0.1.1"]);
});

test("bad arguments are refused with the field named; outside a repository it says so", () => {
  const dir = repo();
  for (const bad of ["2025-06-02", "2025-06-02T09:00:00", "yesterday", "2025-13-02T09:00:00Z", ""]) {
    const r = release(dir, "--now", bad);
    assert.deepEqual([r.code, r.out], [1, ""]);
    assert.equal(r.err, `release: --now: not an ISO 8601 time with a zone (like 2025-06-09T00:00:00+08:00): ${JSON.stringify(bad)}\n`);
  }
  const unknown = release(dir, "--minor");
  assert.equal(unknown.code, 1);
  assert.match(unknown.err, /^release: Unknown option '--minor'/);
  assert.match(unknown.err, /usage: npm run release -- \[--dry-run\] \[--breaking\] \[--rc\] \[--now <ISO 8601 time with zone>\]\n$/);
  const loose = release(dir, "v9.9.9");
  assert.equal(loose.code, 1);
  assert.match(loose.err, /^release: Unexpected argument 'v9\.9\.9'/);
  const outside = join(scratch, "not-a-repo");
  mkdirSync(outside);
  assert.deepEqual(Object.values(release(outside, "--now", mondayJune2)), [1, "", `release: not in a git repository with a commit: ${outside}\n`]);
  assert.deepEqual(tags(dir), []);
});
