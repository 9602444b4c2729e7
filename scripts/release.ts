/**
 * `npm run release -- [--dry-run] [--breaking] [--rc] [--now <ISO time>]`: makes the next release tag of the git
 * repository in the current folder, by the rules of docs/releases.md (protocol.md 版本与兼容).
 *
 * - The number: from the newest final release `vX.Y.Z` (rc tags and other tags do not count) and the time now.
 *   `--breaking`: X+1 (old usage breaks). Otherwise, when that release was made before this week began (Monday
 *   00:00 Asia/Shanghai): Y+1, the first release of the week. Otherwise Z+1, a later release of the same week, hotfixes
 *   too. The first release ever is v0.1.0 (`--breaking`: v1.0.0). `--rc` makes `-rc.N` of that number instead, N one
 *   more than the last rc of it; its final release later gets the same number.
 * - The notes: one line per commit subject since the newest final release (merge commits left out, newest first),
 *   written as the annotated tag's message; `update` shows them before it updates.
 * - The tag's date is the release time (`--now` for tests; default the clock): the next run reads it back to tell
 *   which week the last release was made in.
 * - Refuses, making nothing: on a dirty work tree (changed, staged or untracked files), when nothing was committed since
 *   the last release, when HEAD does not contain it, when a newer `-rc` exists than the number the rules give.
 * `--dry-run` prints the tag and notes and makes nothing. Exit status 0 on success, 1 on a refusal or a usage error.
 * Pushing the tag is left to the maintainer (`git push origin <tag>`).
 */
import { execFileSync } from "node:child_process";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { compareVersions, formatVersion, newestRelease, parseVersionTag, type Version } from "../src/host/version.js";

/** Asia/Shanghai's offset from UTC in ms: UTC+8 all year (no daylight saving time since 1991). */
export const shanghaiOffsetMs = 8 * 3600_000;
const dayMs = 86_400_000;
/** Changed files named in the dirty-tree refusal; more are counted, not listed. */
const dirtyFilesShownMax = 10;

/** Start of the week `atMs` falls in: the preceding Monday 00:00 Asia/Shanghai (Sunday 16:00 UTC), in ms since epoch. */
export function weekStartMs(atMs: number): number {
  const shanghaiDay = Math.floor((atMs + shanghaiOffsetMs) / dayMs);
  // 1970-01-01 was a Thursday: day 0 is 3 days after a Monday.
  const sinceMonday = (((shanghaiDay + 3) % 7) + 7) % 7;
  return (shanghaiDay - sinceMonday) * dayMs - shanghaiOffsetMs;
}

/** A tag of the repository and when it was made (the tagger's date; a lightweight tag's commit date), ms since epoch. */
export interface DatedTag { tag: string; atMs: number }

/** How the next number is asked for: `--breaking`, `--rc`. */
export interface ReleaseKind { breaking: boolean; rc: boolean }

/**
 * The next version by the weekly rules, from the repository's tags (any; those that are not versions are ignored) and
 * the time now. Pure; see the file's comment for the rules.
 */
export function nextVersion(tags: readonly DatedTag[], nowMs: number, kind: ReleaseKind): Version {
  const last = newestRelease(tags.map((t) => t.tag));
  const base = last === null ? { major: 0, minor: 0, patch: 0, rc: null } : parseVersionTag(last)!;
  const lastAtMs = last === null ? -Infinity : Math.max(...tags.filter((t) => t.tag === last).map((t) => t.atMs));
  const next: Version = kind.breaking ? { major: base.major + 1, minor: 0, patch: 0, rc: null }
    : lastAtMs < weekStartMs(nowMs) ? { major: base.major, minor: base.minor + 1, patch: 0, rc: null }
    : { major: base.major, minor: base.minor, patch: base.patch + 1, rc: null };
  if (!kind.rc) return next;
  const rcs = tags.map((t) => parseVersionTag(t.tag))
    .filter((v): v is Version => v !== null && v.rc !== null && v.major === next.major && v.minor === next.minor && v.patch === next.patch);
  return { ...next, rc: Math.max(0, ...rcs.map((v) => v.rc!)) + 1 };
}

/** A refusal or usage error: its message is printed, nothing is made, the exit status is 1. */
class Refusal extends Error {}

/** `--now`: an ISO 8601 time with its zone (`Z` or `±HH:MM`), so it means one instant wherever the script runs. */
const isoTimePattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;

function parseNow(text: string | undefined): number {
  if (text === undefined) return Date.now();
  const ms = isoTimePattern.test(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(ms)) throw new Refusal(`--now: not an ISO 8601 time with a zone (like 2025-06-09T00:00:00+08:00): ${JSON.stringify(text)}`);
  return ms;
}

const usage = "usage: npm run release -- [--dry-run] [--breaking] [--rc] [--now <ISO 8601 time with zone>]";

/** Runs git in `cwd`; its trimmed stdout. Throws a Refusal with git's own words when git fails. */
function git(cwd: string, args: string[], options: { input?: string; env?: NodeJS.ProcessEnv } = {}): string {
  try {
    return execFileSync("git", args, { cwd, encoding: "utf8", input: options.input, env: options.env ?? process.env, stdio: ["pipe", "pipe", "pipe"] }).trimEnd();
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Refusal(`git ${args[0]}: ${(err.stderr || err.message).trim()}`);
  }
}

function gitSucceeds(cwd: string, args: string[]): boolean {
  try {
    execFileSync("git", args, { cwd, stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** The whole run; returns what to print. Throws a Refusal for anything it will not do. */
export function release(argv: string[], cwd: string): string {
  let values: { "dry-run"?: boolean; breaking?: boolean; rc?: boolean; now?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv, strict: true, allowPositionals: false,
      options: { "dry-run": { type: "boolean" }, breaking: { type: "boolean" }, rc: { type: "boolean" }, now: { type: "string" }, help: { type: "boolean", short: "h" } },
    }));
  } catch (e) {
    throw new Refusal(`${(e as Error).message}\n${usage}`);
  }
  if (values.help) return usage;
  const nowMs = parseNow(values.now);

  if (!gitSucceeds(cwd, ["rev-parse", "--verify", "--quiet", "HEAD"])) throw new Refusal(`not in a git repository with a commit: ${cwd}`);
  const dirty = git(cwd, ["status", "--porcelain", "--untracked-files=all"]).split("\n").filter(Boolean);
  if (dirty.length > 0) {
    const shown = dirty.slice(0, dirtyFilesShownMax).map((line) => `  ${line}`).join("\n");
    const more = dirty.length > dirtyFilesShownMax ? `\n  … and ${dirty.length - dirtyFilesShownMax} more` : "";
    throw new Refusal(`the work tree has changes that are not committed; commit or remove them first (a release is a commit as it is):\n${shown}${more}`);
  }

  const tags: DatedTag[] = git(cwd, ["for-each-ref", "--format=%(refname:strip=2)%09%(creatordate:unix)", "refs/tags"])
    .split("\n").filter(Boolean).map((line) => {
      const [tag, seconds] = line.split("\t");
      return { tag: tag!, atMs: Number(seconds) * 1000 };
    });
  const next = nextVersion(tags, nowMs, { breaking: values.breaking ?? false, rc: values.rc ?? false });
  const tag = formatVersion(next);
  const newerRc = tags.map((t) => t.tag).filter((t) => compareVersions(parseVersionTag(t) ?? next, next) > 0);
  if (newerRc.length > 0) {
    throw new Refusal(`${newerRc.join(", ")} ${newerRc.length > 1 ? "are" : "is"} newer than ${tag}, the number the rules give; `
      + "a release after a trial release is at least its number (was that trial release made with --breaking?)");
  }

  const last = newestRelease(tags.map((t) => t.tag));
  let range = ["HEAD"];
  if (last !== null) {
    if (!gitSucceeds(cwd, ["merge-base", "--is-ancestor", `refs/tags/${last}`, "HEAD"])) {
      throw new Refusal(`HEAD does not contain ${last}, the last release: release from a commit that follows it`);
    }
    if (git(cwd, ["rev-list", "--count", `refs/tags/${last}..HEAD`]) === "0") throw new Refusal(`nothing to release: nothing was committed since ${last}`);
    range = [`refs/tags/${last}..HEAD`];
  }
  let subjects = git(cwd, ["log", "--no-merges", "--format=%s", ...range]).split("\n").filter(Boolean);
  if (subjects.length === 0) subjects = git(cwd, ["log", "--format=%s", ...range]).split("\n").filter(Boolean);

  const notes = [
    `agent-autoloop ${tag}`,
    "",
    ...(next.rc !== null ? ["A trial release: install and update never go to it.", ""] : []),
    ...(values.breaking ? ["Old usage breaks in this release (the first number changed): read these notes before updating.", ""] : []),
    `Changes since ${last ?? "the beginning"}:`,
    ...subjects.map((s) => `- ${s}`),
  ].join("\n") + "\n";
  const head = git(cwd, ["rev-parse", "--short", "HEAD"]);
  if (values["dry-run"]) return `would tag ${tag} on ${head} (dry run: nothing made)\n\n${notes}`;
  // The tag's date is the release time, in Shanghai's zone: the next run reads it to know this release's week.
  const env = { ...process.env, GIT_COMMITTER_DATE: `${Math.floor(nowMs / 1000)} +0800` };
  git(cwd, ["tag", "--annotate", "--cleanup=verbatim", "--file=-", tag, "HEAD"], { input: notes, env });
  return `tagged ${tag} on ${head}\n\n${notes}\npublish it with: git push origin ${tag}`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  // `npm run release -- --dry-run | head`: a closed pipe ends the script quietly (141, as the CLI does), never a trace.
  process.stdout.on("error", (e: NodeJS.ErrnoException) => process.exit(e.code === "EPIPE" ? 141 : 74));
  try {
    console.log(release(process.argv.slice(2), process.cwd()));
  } catch (e) {
    if (!(e instanceof Refusal)) throw e;
    console.error(`release: ${e.message}`);
    process.exitCode = 1;
  }
}
