/**
 * The release judgement a project's Ship and the delivery round share (protocol.md 交付插件, 发布 and 后续发布): what
 * version is live (the health endpoint), whether a commit is live, and the release scope — whether the whole change
 * from the live version to a target commit needs a release. `plugins/delivery/action.yml` (ship.ts) and the round's
 * tracking (track.ts) both decide with these functions; nothing is copied into projects.
 *
 * - Health URLs are HTTPS only; `testLocalHealth` (`--test-local-health`, the action's `test-local-health: 'true'`)
 *   allows exactly `http://127.0.0.1`. The version is a commit SHA in a JSON field of the answer (`health.field`); a
 *   short SHA is expanded through GitHub, and one that cannot be expanded counts as unknown (a release is needed).
 * - The scope compares the **whole diff** from the live version to the target, never the last commit alone: only
 *   ordinary internal docs (`internalDocs` patterns, regular files) may skip a release; an executable bit, a symbolic
 *   link, a submodule, a rename whose either side is not an internal doc, a live version that is not in the target's
 *   history or that git does not know, all need a release. So a later docs-only change never lets an unreleased code
 *   change be skipped.
 *
 * This module imports only Node and git (the action runs it with `tsx` in a project's workflow, without this
 * package's dependencies).
 */
import { execFileSync } from "node:child_process";
import type { GitHub } from "./github.js";

/** How long one health request may take, in ms. */
export const healthTimeoutMs = 10_000;
/** The largest health answer read, in bytes. */
export const healthBytesMax = 65_536;
/** Changed paths looked at in one scope; more need a release (the judgement would be a guess). */
export const scopePathsMax = 100_000;
/** What counts as an ordinary internal doc when a project says nothing (`internalDocs` in ops/delivery.json). */
export const internalDocsDefault: readonly string[] = ["**/*.md", "docs/**"];

/** What the health endpoint says: a version (lower-case hex, 7–40 digits as given) or why there is none. */
export type Health = { kind: "version"; sha: string } | { kind: "unknown"; why: string };

/** The release scope of a change: `release` false only when every changed path is an internal doc. */
export interface Scope {
  release: boolean;
  /** Why, in words for GitHub's logs and statuses (English, as GitHub's own texts). */
  why: string;
}

/**
 * Whether `url` may be read as a health endpoint: `https:` without credentials, or with `testLocalHealth` exactly
 * `http://127.0.0.1` (any port and path).
 */
export function healthUrlAllowed(url: string, testLocalHealth: boolean): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (u.username || u.password) return false;
  return u.protocol === "https:" || (testLocalHealth && u.protocol === "http:" && u.hostname === "127.0.0.1");
}

/**
 * Reads the live version: GET `url` (see `healthUrlAllowed`), a 200 with a JSON object whose `field` (dotted path,
 * `version` or `build.sha`) is a hex commit SHA of 7–40 digits.
 * @returns the version, or `unknown` with the reason (refused URL, no answer in `healthTimeoutMs`, not 200, larger
 *   than `healthBytesMax`, not JSON, no such field, not a SHA). Never throws.
 */
export async function readHealth(url: string, field: string, testLocalHealth: boolean): Promise<Health> {
  if (!healthUrlAllowed(url, testLocalHealth)) return { kind: "unknown", why: "the health URL is not an https address" };
  let text: string;
  try {
    const res = await fetch(url, { headers: { accept: "application/json", "user-agent": "agent-autoloop-delivery" }, redirect: "error", signal: AbortSignal.timeout(healthTimeoutMs) });
    if (res.status !== 200) return { kind: "unknown", why: `the health endpoint answered ${res.status}` };
    const chunks: Uint8Array[] = [];
    let size = 0;
    for await (const c of res.body ?? []) {
      size += c.length;
      if (size > healthBytesMax) return { kind: "unknown", why: `the health answer is larger than ${healthBytesMax} bytes` };
      chunks.push(c);
    }
    text = Buffer.concat(chunks).toString("utf8");
  } catch (e) {
    return { kind: "unknown", why: `the health endpoint did not answer (${(e as Error).name === "TimeoutError" ? `${healthTimeoutMs / 1000} s` : (e as Error).message})` };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: "unknown", why: "the health answer is not JSON" };
  }
  for (const part of field.split(".")) value = typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>)[part] : undefined;
  if (typeof value !== "string" || !/^[0-9a-fA-F]{7,40}$/.test(value)) return { kind: "unknown", why: `the health answer has no commit SHA at ${field}` };
  return { kind: "version", sha: value.toLowerCase() };
}

/**
 * The full SHA of `sha` in `repo`: itself when it has 40 digits, else GitHub's expansion
 * (GET /repos/{owner}/{repo}/commits/{ref}).
 * @returns the 40-digit SHA, or null when GitHub does not know it or cannot be asked (a release is then needed).
 */
export async function fullSha(gh: GitHub, repo: string, sha: string): Promise<string | null> {
  if (/^[0-9a-f]{40}$/.test(sha)) return sha;
  if (!/^[0-9a-f]{7,39}$/.test(sha)) return null;
  try {
    const c = await gh.request("GET", `/repos/${repo}/commits/${sha}`);
    return typeof c?.sha === "string" && /^[0-9a-f]{40}$/.test(c.sha) && c.sha.startsWith(sha) ? c.sha : null;
  } catch {
    return null;
  }
}

/** git in `dir` (a bare object store or a checkout), with no user or system config; its output, trimmed. */
function git(dir: string, args: string[]): string {
  return execFileSync("git", ["-C", dir, ...args], {
    encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], maxBuffer: 64 * 1024 * 1024,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/", GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
  }).trim();
}

/** Whether `ancestor` is `commit` or in its history, in the objects of `dir`; false when git knows either not. */
export function contains(dir: string, commit: string, ancestor: string): boolean {
  try {
    git(dir, ["merge-base", "--is-ancestor", ancestor, commit]);
    return true;
  } catch {
    return false;
  }
}

/** A pattern of `internalDocs` as a regular expression: `**` any folders, `*` any characters but `/`, `?` one. */
function patternOf(glob: string): RegExp {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*" && glob[i + 1] === "*") {
      // `**/` is zero or more folders; a trailing `**` everything below
      if (glob[i + 2] === "/") {
        re += "(?:.*/)?";
        i += 2;
      } else {
        re += ".*";
        i += 1;
      }
    } else if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else re += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

/**
 * Whether the change from `from` to `to` (commits or trees in the objects of `dir`) touches only ordinary internal
 * docs: regular files matching `internalDocs`, a rename's both sides among them. The release scope and the review
 * (which may skip the model for such a change) judge alike with it.
 * @returns `docs` with the number of changed paths, or `other` with why not, in words for GitHub's logs.
 * @throws Error when git cannot read the objects.
 */
export function docsOnlyChange(dir: string, from: string, to: string, internalDocs: readonly string[]): { docs: true; paths: number } | { docs: false; why: string } {
  const docs = internalDocs.map(patternOf);
  const isDoc = (path: string) => docs.some((d) => d.test(path));
  // --raw -z: ":<old mode> <new mode> <old sha> <new sha> <status>\0<path>\0[<new path>\0]" per change
  const fields = git(dir, ["diff", "--raw", "-z", "-M", "--no-abbrev", "--no-ext-diff", "--no-textconv", from, to]).split("\0");
  let paths = 0;
  for (let i = 0; i < fields.length; ) {
    const head = fields[i++]!;
    if (head === "") continue;
    const [oldMode, newMode, , , status] = head.slice(1).split(" ");
    const kind = status![0]!;
    const names = kind === "R" || kind === "C" ? [fields[i++]!, fields[i++]!] : [fields[i++]!];
    if (++paths > scopePathsMax) return { docs: false, why: `more than ${scopePathsMax} paths changed` };
    for (const mode of [oldMode, newMode]) {
      if (mode === "120000") return { docs: false, why: `${names.at(-1)} is a symbolic link` };
      if (mode === "160000") return { docs: false, why: `${names.at(-1)} is a submodule` };
      if (mode === "100755") return { docs: false, why: `${names.at(-1)} is executable` };
    }
    const outside = names.find((n) => !isDoc(n));
    if (outside !== undefined) return { docs: false, why: names.length === 2 ? `${names[0]} was renamed to ${names[1]}` : `${outside} changed` };
  }
  return { docs: true, paths };
}

/**
 * The release scope of the change from `live` to `target` in the objects of `dir` (both must be there; see the
 * module comment). `live` null: the live version is unknown.
 */
export function releaseScope(dir: string, live: string | null, target: string, internalDocs: readonly string[] = internalDocsDefault): Scope {
  if (live === null) return { release: true, why: "the live version is unknown" };
  if (live === target) return { release: false, why: "the target is the live version" };
  if (!contains(dir, target, live)) return { release: true, why: `the live version ${live.slice(0, 12)} is not in the history of ${target.slice(0, 12)}` };
  const change = docsOnlyChange(dir, live, target, internalDocs);
  if (!change.docs) return { release: true, why: change.why };
  return { release: false, why: change.paths === 0 ? "no files changed" : `only internal docs changed (${change.paths} files)` };
}
