/**
 * Which release this checkout is, and the rules of release tags (protocol.md 版本与兼容; docs/releases.md).
 *
 * A version lives only in a git tag of the form `vX.Y.Z`, or `vX.Y.Z-rc.N` for a trial release; any other tag
 * (`nightly`, `v1.2`, `release-3`) is not a version and is ignored. `agent-autoloop --version` and `GET /v1/health`
 * show the newest version tag on the current commit, or `unreleased`. Reading it starts two `git` processes (~0.1 s),
 * so nothing asks for it before it needs it.
 *
 * A release tarball made by `git archive` carries the same in `src/host/release.txt` (`archivedRelease`).
 *
 * The pure part (`parseVersionTag`, `compareVersions`, `newestRelease`, `newestVersionTag`) is what `update` and
 * `scripts/release.ts` use to order tags; it never runs git.
 */
import { execFile, execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { engineDir } from "../common/paths.js";

/** The release of this checkout; `tag` is null where it is not a git checkout or the commit has no version tag. */
export interface Release { tag: string | null; commit: string | null }

/** The `version` of `GET /v1/health` for a commit without a release tag (protocol data: the same in every language). */
export const unreleased = "unreleased";

/**
 * A parsed version tag: `v1.9.0` is {major: 1, minor: 9, patch: 0, rc: null}; `v2.0.0-rc.3` has rc 3.
 * Each number is a non-negative safe integer; `rc` is a positive one or null (a final release).
 */
export interface Version { major: number; minor: number; patch: number; rc: number | null }

/**
 * `vX.Y.Z` or `vX.Y.Z-rc.N`: decimal numbers without leading zeros (`v1.02.0` is not a version), N from 1. Nothing
 * else: no build metadata, no other pre-release names, no missing `v`.
 */
const versionTagPattern = /^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-rc\.([1-9]\d*))?$/;

/** The version a tag names, or null where the tag is not of the form `vX.Y.Z[-rc.N]` (or a number is too large). */
export function parseVersionTag(tag: string): Version | null {
  const m = versionTagPattern.exec(tag);
  if (!m) return null;
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const rc = m[4] === undefined ? null : Number(m[4]);
  if (![major, minor, patch, rc ?? 1].every(Number.isSafeInteger)) return null;
  return { major, minor, patch, rc };
}

/** The tag of a version: `v1.9.0`, `v2.0.0-rc.3`. `parseVersionTag(formatVersion(v))` gives `v` back. */
export function formatVersion(v: Version): string {
  return `v${v.major}.${v.minor}.${v.patch}${v.rc === null ? "" : `-rc.${v.rc}`}`;
}

/**
 * Orders two versions: negative when `a` is older, positive when newer, 0 when equal. By major, minor, patch; for the
 * same three numbers every `-rc.N` comes before the final release, and a higher N is newer (`v1.2.0-rc.1` <
 * `v1.2.0-rc.2` < `v1.2.0` < `v1.2.1-rc.1`).
 */
export function compareVersions(a: Version, b: Version): number {
  return Math.sign(a.major - b.major) || Math.sign(a.minor - b.minor) || Math.sign(a.patch - b.patch)
    || rcOrder(a.rc, b.rc);
}

/** A final release (null) is newer than any `-rc.N` of the same numbers; two trial releases go by N. */
function rcOrder(a: number | null, b: number | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return Math.sign(a - b);
}

/**
 * The newest version tag among `tags`, trial releases (`-rc.N`) included; tags that are not versions are ignored.
 * Null when none is a version. This is what a commit carrying several tags shows as its version.
 */
export function newestVersionTag(tags: Iterable<string>): string | null {
  return newest(tags, true);
}

/**
 * The newest final release among `tags`: never a `-rc.N` (install and `update` never go to a trial release), never a
 * tag that is not a version. Null when there is none.
 */
export function newestRelease(tags: Iterable<string>): string | null {
  return newest(tags, false);
}

function newest(tags: Iterable<string>, rcToo: boolean): string | null {
  let best: { tag: string; version: Version } | null = null;
  for (const tag of tags) {
    const version = parseVersionTag(tag);
    if (!version || (version.rc !== null && !rcToo)) continue;
    if (!best || compareVersions(version, best.version) > 0) best = { tag, version };
  }
  return best?.tag ?? null;
}

function commitArgs(dir: string): string[] {
  return ["-C", dir, "rev-parse", "--short", "HEAD"];
}

/** Every tag on HEAD, one a line (`git tag --points-at HEAD`); the version among them is picked here, not by git. */
function tagArgs(dir: string): string[] {
  return ["-C", dir, "tag", "--points-at", "HEAD"];
}

/** Runs `git` and returns its trimmed output, or null when it fails (no git, not a checkout). */
function gitSync(args: string[]): string | null {
  try {
    return execFileSync("git", args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim() || null;
  } catch {
    return null;
  }
}

const execFileAsync = promisify(execFile);

async function gitAsync(args: string[]): Promise<string | null> {
  try {
    return (await execFileAsync("git", args, { encoding: "utf8" })).stdout.trim() || null;
  } catch {
    return null;
  }
}

function versionOf(tagList: string | null): string | null {
  return tagList === null ? null : newestVersionTag(tagList.split("\n").map((t) => t.trim()));
}

/**
 * The release an archive made by `git archive` (a release tarball, GitHub's source archives) was made from: git
 * writes `src/host/release.txt` into the archive with its two placeholders replaced (`export-subst` in
 * .gitattributes) — `git describe --tags` of the commit (exactly the tag when the commit carries one) and the short
 * commit. Null in a checkout, where the file still holds the placeholders, or when there is no such file.
 */
export function archivedRelease(dir: string = engineDir): Release | null {
  let text: string;
  try {
    text = readFileSync(join(dir, "src", "host", "release.txt"), "utf8");
  } catch {
    return null;
  }
  if (text.includes("$Format:")) return null;
  const [describe = "", commit = ""] = text.split("\n").map((l) => l.trim());
  return { tag: parseVersionTag(describe) ? describe : null, commit: /^[0-9a-f]{4,40}$/.test(commit) ? commit : null };
}

/** The release of the checkout or archive at `dir` (default: the engine's own), read now (the CLI's `--version`). */
export function releaseSync(dir: string = engineDir): Release {
  return archivedRelease(dir) ?? { commit: gitSync(commitArgs(dir)), tag: versionOf(gitSync(tagArgs(dir))) };
}

let tagOnce: Promise<string> | null = null;

/** The engine's release tag or `unreleased`, read once per process without blocking it (the hub's `GET /v1/health`). */
export function releaseTag(): Promise<string> {
  tagOnce ??= (() => {
    const archived = archivedRelease();
    return archived ? Promise.resolve(archived.tag ?? unreleased) : gitAsync(tagArgs(engineDir)).then((tags) => versionOf(tags) ?? unreleased);
  })();
  return tagOnce;
}
