/**
 * What of a repository the guard's mounts cannot keep and the owner's next git command acts on (issue 26 round 27):
 * - its **content** of a guarded path (F27a-4): a hook in `.githooks/` or a `.vscode/tasks.json` is read-only in the
 *   work tree, but the index, objects, refs and `HEAD` stay writable (commits must work), so an agent committed other
 *   content for that path; `git status` then showed the owner's file as changed, and `git restore`, `git stash` or
 *   `git checkout` wrote the agent's version, which the next `git commit` ran. The index and `HEAD`'s tree entries of
 *   every guarded path in the work tree are read before the run and after it; a change is named in the notice (not
 *   undone: the agent's commit may be its work; the owner decides).
 * - its **operation state** (F27a-2): a rebase, merge, cherry-pick, revert or bisect in progress is a set of
 *   instructions in the writable top of the git folder (`rebase-merge/git-rebase-todo` with an `exec` line,
 *   `orig-head` that `git rebase --abort` resets to); the owner's `--abort`, `--continue` or `--skip` carries them out.
 *   Each is digested before the run; one new or changed after it is moved aside and named.
 * Git runs without the repository's configuration (git-isolated.ts); the repository's `HEAD` is read as a file.
 */
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { lstatSync, readFileSync } from "node:fs";
import { isAbsolute, join, relative } from "node:path";
import { entriesUpTo, present, within } from "../common/file-checks.js";
import { readRegular } from "./files.js";
import { entryId, gitCommonDir, gitDirOf, gitFolderTopMax, gitReadTimeoutMs } from "./git-read.js";
import { withIsolatedGit } from "./git-isolated.js";
import { movePlantedAside, type AsideTo, type Planted } from "./planted.js";

/** The names in a git folder that hold an operation in progress, which a later git command carries on from. */
export const gitOperationState = ["rebase-merge", "rebase-apply", "sequencer", "MERGE_HEAD", "MERGE_MODE", "CHERRY_PICK_HEAD", "REVERT_HEAD", "BISECT_START", "BISECT_TERMS", "BISECT_NAMES"] as const;
/** Guarded paths of one repository whose index and `HEAD` entries are compared (the rest named as looked at short). */
export const gitStatePathsMax = 1_000;
/** Entries and bytes of one operation state digested (git's own are a few files); past them it stands for its size. */
const operationEntriesMax = 10_000;
const operationBytesMax = 16 * 1024 * 1024;

/** One repository as read before the run: where, its guarded paths, their entries, its operation state. */
export interface RepositoryState {
  tree: string;
  gitDir: string;
  /** The guarded paths in its work tree, relative (`.githooks`, `.vscode`, `tools/fmt.sh`). */
  paths: string[];
  /** `<mode> <object>` by path, of the index and of `HEAD`'s tree, for the paths under `paths`; null when unread. */
  index: Record<string, string> | null;
  head: Record<string, string> | null;
  /** The digest of each operation state present, by name. */
  operations: Record<string, string>;
  /** Whether `paths` was cut at `gitStatePathsMax`. */
  cut: boolean;
}

/**
 * Reads the repositories `trees` (their work trees, real paths) before a run: the index and `HEAD` entries of the
 * `guarded` paths lying in each work tree (not in its git folder), and its operation state. Never throws: what cannot
 * be read is null, and is compared as such after.
 */
export function gitStateAt(trees: readonly string[], guarded: readonly string[], privateDir: string): RepositoryState[] {
  const out: RepositoryState[] = [];
  for (const tree of trees) {
    const gitDir = gitDirOf(tree);
    if (gitDir === null) continue;
    const all = [...new Set(guarded.filter((p) => p !== tree && within(p, tree) && !within(p, gitDir) && !within(p, join(tree, ".git"))).map((p) => relative(tree, p)))].sort();
    const paths = all.slice(0, gitStatePathsMax);
    const entries = paths.length > 0 ? readEntries(tree, gitDir, paths, privateDir) : { index: {}, head: {} };
    out.push({ tree, gitDir, paths, ...entries, operations: operationsOf(gitDir), cut: all.length > paths.length });
  }
  return out;
}

/**
 * After the run: each repository of `before` whose index or `HEAD` entries of its guarded paths changed (`repoContent`,
 * named, left as they are), and each operation state new or changed in its git folder (moved aside, `moved`), within
 * `folders` (what the run could write). Never throws.
 */
export function gitStateChanged(before: readonly RepositoryState[], folders: readonly string[], run: number | AsideTo, privateDir: string): Planted[] {
  const found: Planted[] = [];
  for (const was of before) {
    if (!folders.some((f) => within(was.gitDir, f) || within(was.tree, f))) continue;
    const now = operationsOf(was.gitDir);
    for (const [name, digest] of Object.entries(now)) {
      if (was.operations[name] !== digest && folders.some((f) => within(join(was.gitDir, name), f))) found.push(movePlantedAside(join(was.gitDir, name), run));
    }
    if (was.paths.length === 0) continue;
    const after = readEntries(was.tree, was.gitDir, was.paths, privateDir);
    const changed = new Set([...differing(was.index, after.index), ...differing(was.head, after.head)]);
    for (const p of [...changed].sort()) found.push({ path: join(was.tree, p), movedTo: null, kind: "repoContent" });
    if (was.cut) found.push({ path: was.tree, movedTo: null, kind: "maskCut" });
  }
  return found;
}

/** The paths whose entry differs between `a` and `b` (all of them when either could not be read). */
function differing(a: Record<string, string> | null, b: Record<string, string> | null): string[] {
  if (a === null || b === null) return a === b ? [] : Object.keys(a ?? b ?? {}).length > 0 ? Object.keys(a ?? b ?? {}) : ["."];
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((p) => a[p] !== b[p]);
}

/** The index and `HEAD` entries under `paths` (literal pathspecs), each `<mode> <object>` by path; null when unread. */
function readEntries(tree: string, gitDir: string, paths: readonly string[], privateDir: string): { index: Record<string, string> | null; head: Record<string, string> | null } {
  const commonDir = gitCommonDir(gitDir);
  const run = (args: string[]) => {
    try {
      return withIsolatedGit(gitDir, commonDir, tree, gitFolderTopMax, privateDir, (env) => execFileSync("git", args, {
        cwd: tree, env: { ...env, GIT_LITERAL_PATHSPECS: "1" }, stdio: ["ignore", "pipe", "ignore"], maxBuffer: 64 * 1024 * 1024, timeout: gitReadTimeoutMs,
      })).toString("utf8");
    } catch {
      return null;
    }
  };
  // `<mode> <object> <stage>\t<path>` and `<mode> <type> <object>\t<path>`.
  const parse = (text: string | null, mode: (fields: string[]) => string) => {
    if (text === null) return null;
    const out: Record<string, string> = {};
    for (const entry of text.split("\0")) {
      const tab = entry.indexOf("\t");
      if (tab > 0) out[entry.slice(tab + 1)] = mode(entry.slice(0, tab).split(" "));
    }
    return out;
  };
  const index = parse(run(["ls-files", "--stage", "-z", "--", ...paths]), (f) => `${f[0]} ${f[1]} ${f[2]}`);
  const commit = headCommit(gitDir, commonDir);
  const head = commit === null ? {} : parse(run(["ls-tree", "-r", "-z", commit, "--", ...paths]), (f) => `${f[0]} ${f[2]}`);
  return { index, head };
}

/**
 * The commit the repository's `HEAD` names (read as files: the isolated git has none of its refs), or null when it
 * names none yet or cannot be read (a reftable, an unborn branch).
 */
function headCommit(gitDir: string, commonDir: string): string | null {
  const read = (file: string) => {
    try {
      return readRegular(file).trim();
    } catch {
      return null;
    }
  };
  const head = read(join(gitDir, "HEAD"));
  if (head === null) return null;
  if (/^[0-9a-f]{40,64}$/.test(head)) return head;
  const ref = /^ref: (refs\/[^\s]+)$/.exec(head)?.[1];
  if (!ref || ref.split("/").includes("..") || isAbsolute(ref)) return null;
  const loose = read(join(commonDir, ref)) ?? read(join(gitDir, ref));
  if (loose !== null && /^[0-9a-f]{40,64}$/.test(loose)) return loose;
  for (const line of (read(join(commonDir, "packed-refs")) ?? "").split("\n")) {
    const [id, name] = line.split(" ");
    if (name === ref && id && /^[0-9a-f]{40,64}$/.test(id)) return id;
  }
  return null;
}

/** The digest of each operation state present in `gitDir` (a folder by its files' names and bytes, within bounds). */
function operationsOf(gitDir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of gitOperationState) {
    const path = join(gitDir, name);
    if (!present(path)) continue;
    // Its identity too: one put back with the same bytes after a check moved it (another run sharing the folder) is new.
    out[name] = `${entryId(path) ?? ""} ${digestOf(path)}`;
  }
  return out;
}

/** The sha256 of an entry: a file's bytes, a link's text, a folder's entries in name order, within the bounds. */
function digestOf(path: string): string {
  const h = createHash("sha256");
  const budget = { entries: operationEntriesMax, bytes: operationBytesMax };
  const walk = (p: string, rel: string): void => {
    if (--budget.entries < 0) return;
    let st;
    try {
      st = lstatSync(p);
    } catch {
      h.update(`gone ${rel}\n`);
      return;
    }
    if (st.isDirectory()) {
      h.update(`dir ${rel}\n`);
      for (const e of entriesUpTo(p, budget.entries).sort((a, b) => (a.name < b.name ? -1 : 1))) walk(join(p, e.name), `${rel}/${e.name}`);
    } else if (st.isFile() && st.size <= budget.bytes) {
      budget.bytes -= st.size;
      try {
        // A regular file (lstat above; a FIFO is `other`, never opened).
        h.update(`file ${rel} `).update(readFileSync(p)).update("\n");
      } catch {
        h.update(`unread ${rel} ${st.size} ${st.mtimeMs}\n`);
      }
    } else h.update(`other ${rel} ${st.mode} ${st.size} ${st.mtimeMs} ${st.ino}\n`);
  };
  walk(path, ".");
  return h.digest("hex");
}
