/**
 * Reading a repository as the owner's git will, without running anything of it (issue 26, rounds 11 and 12): the
 * folder a gitfile names, the gitlinks of an index, and the identity of a `.git` entry (what a configuration names:
 * git-config.ts). Shared by the guard before a sandboxed run (steering.ts) and the check after it
 * (planted.ts).
 */
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, readdirSync, readlinkSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { entriesUpTo, lstatOr, realPathOr, within } from "../common/file-checks.js";
import { headOfRegular, readRegular } from "./files.js";
import { gitPrivateDir, withIsolatedGit } from "./git-isolated.js";

/** How long reading one repository's index (or one configuration file) with git may take, in ms. */
export const gitReadTimeoutMs = 10_000;
/**
 * The time the check after a run gives git over all the repositories it reads (ms; issue 26 round 17, F17-4: 12
 * repositories whose git held each read for `gitReadTimeoutMs` kept the hub's thread 120 s). What is left unread when
 * it runs out is named on the run's card ("the check stopped short").
 */
export const plantedGitMs = 20_000;

/**
 * The top of git folder `gitDir` as git would meet it before reading its index, from one bounded read (at most
 * `gitFolderTopMax` entries: an agent may fill the top, round 19, F19-6's kind): `blocking`, the files git opens to
 * read its index — `index`, `HEAD`, `commondir` and a split index's `sharedindex.*` — that are there but are not
 * regular files (through links: a FIFO holds git's `open()` until a writer comes, F17-4, which no owner's repository
 * has); `crowded`, more entries than that limit, which no git makes (git is not run there: its split index could not
 * be looked for; the guard refuses a launch there, the check after a run names it as looked at short).
 */
export function gitFolderTop(gitDir: string): { blocking: string[]; crowded: boolean } {
  if (!lstatOr(gitDir)) return { blocking: [], crowded: false }; // no folder: git reads nothing there
  const top = entriesUpTo(gitDir, gitFolderTopMax);
  const names = ["index", "HEAD", "commondir", ...top.filter((e) => e.name.startsWith("sharedindex.")).map((e) => e.name)];
  const blocking = names.map((n) => join(gitDir, n)).filter((p) => {
    try {
      const st = statSync(p, { throwIfNoEntry: false });
      return st !== undefined && !st.isFile();
    } catch {
      return false; // a link loop or the like: git's open fails at once, it does not wait
    }
  });
  return { blocking, crowded: top.length > gitFolderTopMax };
}

/** `gitFolderTop`'s `blocking`: paths; empty for a usual repository. */
export function blockingGitFiles(gitDir: string): string[] {
  return gitFolderTop(gitDir).blocking;
}

/** Entries of a git folder's top read at most (a usual one holds some 20, all git's own). */
export const gitFolderTopMax = 10_000;

/** `gitFolderTop`'s `crowded`. */
export function gitFolderCrowded(gitDir: string): boolean {
  return gitFolderTop(gitDir).crowded;
}

/** Entries of one git folder read at most for its links (`gitFolderLinks`; loose refs and their reflogs: a usual one holds hundreds). */
export const gitFolderLinkEntriesMax = 100_000;

/**
 * The symbolic links in git folder `gitDir` (round 29, F29a-2): the owner's git writes through one to wherever it leads —
 * a reflog in `logs/` it appends to, `COMMIT_EDITMSG`, `FETCH_HEAD` — so `logs/HEAD -> ~/.bashrc` made the owner's
 * `git checkout` write a branch name of the agent's into the owner's shell profile. No git makes a link there. Not in
 * `objects/` (git writes an object by a rename, never through an entry already there) nor `modules/` (each
 * submodule's git folder is looked at on its own). `fifos`: its FIFOs (review r35, FF-1: a FIFO `packed-refs` held the
 * owner's `git status` until killed; git opens every name it reads there, and no git makes a FIFO; `objects/`:
 * `gitObjectFifos`). `cut`: more than `gitFolderLinkEntriesMax` entries, the rest unread.
 */
export function gitFolderLinks(gitDir: string): { links: string[]; fifos: string[]; cut: boolean } {
  const links: string[] = [];
  const fifos: string[] = [];
  const queue = [gitDir];
  let read = 0;
  for (let i = 0; i < queue.length; i++) {
    const entries = entriesUpTo(queue[i]!, gitFolderLinkEntriesMax - read);
    read += entries.length;
    for (const e of entries) {
      const p = join(queue[i]!, e.name);
      if (e.isSymbolicLink()) links.push(p);
      else if (e.isFIFO()) fifos.push(p);
      else if (e.isDirectory() && !(i === 0 && (e.name === "objects" || e.name === "modules"))) queue.push(p);
    }
    // The links of what was read are still found; the rest is not read.
    if (read > gitFolderLinkEntriesMax) return { links, fifos, cut: true };
  }
  return { links, fifos, cut: false };
}

/**
 * The FIFOs in git folder `gitDir`'s `objects/` (the round-37 review, FF-2: a FIFO `objects/info/commit-graphs/
 * commit-graph-chain`, or one in place of a loose object, held the owner's `git log` and `git status`; git opens what
 * it finds there by name, and no git makes a FIFO), and in the stores its `info/alternates` name (`alternateStoresMax`
 * in all), looked for after a run only: at most `gitFolderLinkEntriesMax` entries, `cut` past them (the rest unread).
 */
export function gitObjectFifos(gitDir: string): { fifos: string[]; cut: boolean } {
  const fifos: string[] = [];
  const stores = [join(gitDir, "objects")];
  let read = 0;
  // Each object store git reads, the ones `info/alternates` names too, as deep as git follows them (round 37, F37a-1:
  // an alternate in `node_modules` whose own `info/alternates` was a FIFO).
  for (let s = 0; s < stores.length && s < alternateStoresMax; s++) {
    const queue = [stores[s]!];
    for (let i = 0; i < queue.length; i++) {
      const entries = entriesUpTo(queue[i]!, gitFolderLinkEntriesMax - read);
      read += entries.length;
      for (const e of entries) {
        if (e.isFIFO()) fifos.push(join(queue[i]!, e.name));
        else if (e.isDirectory()) queue.push(join(queue[i]!, e.name));
      }
      if (read > gitFolderLinkEntriesMax) return { fifos, cut: true };
    }
    let named = "";
    try {
      named = headOfRegular(join(stores[s]!, "info", "alternates"), 64 * 1024);
    } catch {
      // none, or not a regular file (a FIFO there is found above)
    }
    for (const line of named.split("\n").map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("#"))) {
      const store = resolve(stores[s]!, line);
      if (!stores.includes(store) && statSync(store, { throwIfNoEntry: false })?.isDirectory()) stores.push(store);
    }
  }
  return { fifos, cut: false };
}

/** Object stores `gitObjectFifos` looks through at most: the repository's and those `info/alternates` name. */
const alternateStoresMax = 16;

/** How many bytes of `git ls-files --stage -z` output are read at most (an index of millions of entries is more). */
const indexListBytesMax = 256 * 1024 * 1024;

/** Whether `path` exists as a folder (not through a link). */
export function isDir(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The names in folder `d` (none when it cannot be read). */
export function names(d: string): string[] {
  try {
    return readdirSync(d);
  } catch {
    return [];
  }
}

/** The environment git is run with here: no system configuration, only PATH and HOME of this process. */
export function gitEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/", GIT_CONFIG_NOSYSTEM: "1", ...extra };
}

/** The git folder a gitfile names (relative to the gitfile's folder), or null when it names none that exists. */
export function gitfileTarget(file: string): string | null {
  try {
    // Never a blocking read: a named pipe planted as `.git` held the hub's thread until someone wrote to it (F15-5).
    const m = /^gitdir: (.+)$/m.exec(readRegular(file).slice(0, 4096));
    if (!m) return null;
    const target = isAbsolute(m[1]!) ? m[1]! : resolve(dirname(file), m[1]!);
    return isDir(target) ? realPathOr(target, target) : null;
  } catch {
    return null;
  }
}

/** The git folder of the work tree `tree`: its `.git` folder, or the one its gitfile names; null when neither. */
export function gitDirOf(tree: string): string | null {
  const git = join(tree, ".git");
  return isDir(git) ? git : gitfileTarget(git);
}

/**
 * The identity of the folder entry `path` itself (lstat, never followed): its place, device, inode and kind, with a
 * link's target — what a `.git` was before a run, compared with what is there after it (planted.ts). A `.git` link
 * made during the run is a new entry whatever it leads to (issue 26 round 12, F12-1 (b)). Null when nothing is there.
 */
export function entryId(path: string): string | null {
  try {
    const s = lstatSync(path);
    const kind = s.isSymbolicLink() ? `link:${readlinkSync(path)}` : s.isDirectory() ? "dir" : s.isFile() ? "file" : "other";
    return `${path}\u0000${s.dev}:${s.ino}:${kind}`;
  } catch {
    return null;
  }
}

/** The `.git` entry of the work tree at `tree` (a path that may lead through links), at its real place; null when its folder is gone. */
export function gitEntry(tree: string): string | null {
  const real = realPathOr(tree, null);
  return real === null ? null : join(real, ".git");
}

/**
 * The gitlinks (mode 160000: submodules) in the index of the git folder `gitDir` with work tree `tree`, all of them
 * (no cap: a cap would leave the rest unlooked at, issue 26 round 12, F12-1 (a)), read with git: no fsmonitor, no
 * hooks, as common folder the one `commondir` names (a linked worktree's; the check after a run moves a planted one
 * aside first) or the git folder itself, and none of the repository's, the system's or the user's configuration
 * (`withIsolatedGit`, its private folder in `privateDir`). Also the entries marked so that `git status` and
 * `git diff` do not look at them (`hidden`: `update-index --assume-unchanged` or `--skip-worktree`; issue 26 round
 * 13, F13-9). Paths relative to `tree`. Empty when there is no index or git cannot read it (then the owner's git
 * cannot either); "tooBig" when git did not list it within `timeoutMs` or `indexListBytesMax`, or one of the files it
 * opens is not a regular file (`blockingGitFiles`: git would wait on it), or the git folder is crowded (`gitFolderCrowded`).
 */
export function gitlinks(gitDir: string, tree: string, timeoutMs = gitReadTimeoutMs, privateDir = gitPrivateDir()): IndexListing | "tooBig" {
  if (!existsSync(join(gitDir, "index"))) return { links: [], hidden: [] };
  const top = gitFolderTop(gitDir);
  if (top.blocking.length > 0 || top.crowded) return "tooBig";
  let out: string;
  try {
    // Without the repository's configuration, which an agent may have written (F23-1: git-isolated.ts).
    out = withIsolatedGit(gitDir, gitCommonDir(gitDir), tree, gitFolderTopMax, privateDir, (env) => execFileSync("git", ["ls-files", "--stage", "-v", "-z"], {
      cwd: tree, env, stdio: ["ignore", "pipe", "ignore"], maxBuffer: indexListBytesMax, timeout: timeoutMs,
    })).toString("utf8");
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { signal?: string | null };
    return err.code === "ENOBUFS" || err.code === "ETIMEDOUT" || err.signal === "SIGTERM" ? "tooBig" : { links: [], hidden: [] };
  }
  const found: IndexListing = { links: [], hidden: [] };
  // `<tag> <mode> <object> <stage>\t<path>`: the tag is lower case for assume-unchanged, `S` for skip-worktree.
  for (const entry of out.split("\0")) {
    const tab = entry.indexOf("\t");
    const path = entry.slice(tab + 1);
    if (tab < 2 || !path || isAbsolute(path) || path.split("/").includes("..")) continue;
    const tag = entry[0]!;
    if (tag === "S" || (tag >= "a" && tag <= "z")) found.hidden.push(path);
    if (entry.startsWith("160000 ", 2)) found.links.push(path);
  }
  return found;
}

/** What `gitlinks` reads from an index: its gitlinks, and the entries git status does not look at. */
export interface IndexListing {
  links: string[];
  hidden: string[];
}

/** The common folder git uses for `gitDir`: the one its `commondir` names, else itself. */
export function gitCommonDir(gitDir: string): string {
  try {
    const named = readRegular(join(gitDir, "commondir")).trim();
    if (!named) return gitDir;
    return isAbsolute(named) ? named : resolve(gitDir, named);
  } catch {
    return gitDir;
  }
}

/** Whether `path` lies in `tree` (its real path there, with every link on the way resolved) — git does not follow a link in a work tree. */
export function reachedInside(tree: string, path: string): boolean {
  const parent = realPathOr(dirname(path), null);
  return parent !== null && parent === dirname(path) && within(parent, tree);
}

/**
 * The folders of a `core.hooksPath` folder `hooks` that the owner's git runs hooks from: the folder, and for husky
 * (`.husky/_`, whose scripts run the tracked `.husky/<hook>`) its parent too (issue 26 round 12, F12-7).
 */
export function hookFolders(hooks: string): string[] {
  return hooks.endsWith("/_") ? [hooks, dirname(hooks)] : [hooks];
}
