/**
 * The git side of the fake GitHub (issue 31): bare repositories on disk, written with real `git` plumbing, so the
 * objects the delivery plugin reads are what git makes. Dates are fixed, so the same steps give the same SHAs.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";

const env = {
  ...process.env,
  GIT_AUTHOR_NAME: "Fake Author", GIT_AUTHOR_EMAIL: "author@example.com", GIT_AUTHOR_DATE: "2026-01-01T00:00:00Z",
  GIT_COMMITTER_NAME: "Fake Committer", GIT_COMMITTER_EMAIL: "committer@example.com", GIT_COMMITTER_DATE: "2026-01-01T00:00:00Z",
  GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null",
};

/** Runs git in the bare repository `dir`; its output without the last newline. @throws on a non-zero exit. */
export function git(dir: string, args: string[], input?: string, extraEnv: Record<string, string> = {}): string {
  return execFileSync("git", ["-C", dir, ...args], { input, env: { ...env, ...extraEnv }, encoding: "utf8", stdio: ["pipe", "pipe", "pipe"] }).replace(/\n$/, "");
}

/** Makes an empty bare repository at `dir` whose default branch is `main`. */
export function initBare(dir: string): void {
  mkdirSync(dir, { recursive: true });
  execFileSync("git", ["init", "--bare", "--quiet", "--initial-branch=main", dir], { env });
}

/** A file of a commit: its text, or `{ text, mode }` for an executable (`100755`) or a link (`120000`), or null to delete. */
export type FileChange = string | { text: string; mode: "100644" | "100755" | "120000" } | null;

/**
 * Writes a commit with `parents` (SHAs; none for a root) whose tree is the first parent's with `files` changed.
 * @returns its SHA.
 */
export function commit(dir: string, parents: string[], files: Record<string, FileChange>, message: string): string {
  const index = join(dir, `fake-index-${process.pid}-${Math.random().toString(36).slice(2)}`);
  const ienv = { GIT_INDEX_FILE: index };
  try {
    if (parents[0]) git(dir, ["read-tree", parents[0]], undefined, ienv);
    else git(dir, ["read-tree", "--empty"], undefined, ienv);
    for (const [path, change] of Object.entries(files)) {
      // mode 0 in --index-info removes the entry (--force-remove wants a work tree, which a bare repository has not)
      if (change === null) { git(dir, ["update-index", "--index-info"], `0 ${"0".repeat(40)}\t${path}\n`, ienv); continue; }
      const { text, mode } = typeof change === "string" ? { text: change, mode: "100644" } : change;
      const blob = git(dir, ["hash-object", "-w", "--stdin"], text);
      git(dir, ["update-index", "--add", "--cacheinfo", `${mode},${blob},${path}`], undefined, ienv);
    }
    const tree = git(dir, ["write-tree"], undefined, ienv);
    return commitTree(dir, tree, parents, message);
  } finally {
    rmSync(index, { force: true });
  }
}

/** Writes a commit of `tree` with `parents`. @returns its SHA. */
export function commitTree(dir: string, tree: string, parents: string[], message: string): string {
  return git(dir, ["commit-tree", tree, ...parents.flatMap((p) => ["-p", p])], message);
}

/**
 * The SHA `ref` names, or null when it names nothing. A branch is read from its loose ref file when there is one
 * (`update-ref` writes them; a git process per read made the fake slow), anything else through git.
 */
export function resolve(dir: string, ref: string): string | null {
  if (/^refs\/heads\/[A-Za-z0-9._/-]+$/.test(ref) && !ref.includes("..")) {
    try {
      const sha = readFileSync(join(dir, ref), "utf8").trim();
      if (/^[0-9a-f]{40}$/.test(sha)) return sha;
    } catch { /* packed or missing: ask git */ }
  }
  try {
    return git(dir, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`]);
  } catch {
    return null;
  }
}

/** Points branch `name` at `sha`. */
export function setBranch(dir: string, name: string, sha: string): void {
  git(dir, ["update-ref", `refs/heads/${name}`, sha]);
}

/**
 * The tree of merging `theirs` into `ours` as git's merge-ort makes it, or null when they conflict.
 */
export function mergeTree(dir: string, ours: string, theirs: string): string | null {
  try {
    return git(dir, ["merge-tree", "--write-tree", "--no-messages", ours, theirs]).split("\n")[0]!;
  } catch {
    return null;
  }
}

/** Whether commit `ancestor` is reachable from `sha` (the commit itself included). */
export function contains(dir: string, sha: string, ancestor: string): boolean {
  try {
    git(dir, ["merge-base", "--is-ancestor", ancestor, sha]);
    return true;
  } catch {
    return false;
  }
}
