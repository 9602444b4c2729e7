/**
 * Reading a repository as the owner's git will, without running anything of it (issue 26, rounds 11 and 12): the
 * folder a gitfile names, the gitlinks of an index, what a configuration names as more configuration or as hooks, and
 * the identity of a `.git` entry. Shared by the guard before a sandboxed run (steering.ts) and the check after it
 * (planted.ts).
 */
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { realPathOr, within } from "../common/file-checks.js";
import { readRegular } from "./files.js";

/** How deep a configuration's `include.path` is followed: as deep as git follows (its MAX_INCLUDE_DEPTH, 10; F14-4). */
const includeDepthMax = 10;
/** How long reading one repository's index (or one configuration file) with git may take, in ms. */
export const gitReadTimeoutMs = 10_000;
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
 * aside first) or the git folder itself, no system configuration. Also the entries marked so that `git status` and
 * `git diff` do not look at them (`hidden`: `update-index --assume-unchanged` or `--skip-worktree`; issue 26 round
 * 13, F13-9). Paths relative to `tree`. Empty when there is no index or git cannot read it (then the owner's git
 * cannot either); "tooBig" when git did not list it within `gitReadTimeoutMs` or `indexListBytesMax`.
 */
export function gitlinks(gitDir: string, tree: string): IndexListing | "tooBig" {
  if (!existsSync(join(gitDir, "index"))) return { links: [], hidden: [] };
  let out: string;
  try {
    out = execFileSync("git", ["-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "core.untrackedCache=false", "ls-files", "--stage", "-v", "-z"], {
      cwd: tree,
      env: gitEnv({ GIT_DIR: gitDir, GIT_WORK_TREE: tree, GIT_COMMON_DIR: gitCommonDir(gitDir) }),
      stdio: ["ignore", "pipe", "ignore"], maxBuffer: indexListBytesMax, timeout: gitReadTimeoutMs,
    }).toString("utf8");
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
 * What a repository's own configuration (`config`, `config.worktree` of `gitDir`) names as more configuration or as
 * its hooks, whether it exists or not: `include.path`, `includeIf.*.path` (relative to the file naming them; `~/` from
 * HOME), followed `includeDepthMax` deep; `core.hooksPath` (relative to the work tree `tree`), also from the owner's
 * global configuration (`~/.gitconfig`, `$XDG_CONFIG_HOME/git/config`: a relative one is in each work tree). Absolute
 * paths, with links resolved where they exist. Read with git from the files alone (no includes followed by git).
 */
export function configNamed(gitDir: string, tree: string): ConfigNamed {
  const { includes, hooks, commands, read } = configReader(tree);
  // A linked worktree's git folder holds only its own `config.worktree`: its repository's `config`, with the
  // `core.hooksPath` that sends the owner's commits to a folder of the work tree, is in the common folder (F13-7).
  const common = gitCommonDir(gitDir);
  for (const file of [join(common, "config"), join(gitDir, "config"), join(gitDir, "config.worktree")]) read(file, 0, false);
  for (const file of globalConfigFiles()) read(file, 0, true);
  return { includes, hooks, commands };
}

/**
 * What a configuration names (`configNamed`, `globalConfigNamed`): more configuration, hooks folders, and the programs,
 * files and folders of `commandKeys` (F14-3, F14-5) — absolute paths.
 */
export interface ConfigNamed {
  includes: string[];
  hooks: string[];
  commands: string[];
}

/**
 * What the owner's global git configuration (`~/.gitconfig`, `$XDG_CONFIG_HOME/git/config`) names as more
 * configuration — `include.path` and `includeIf.*.path` whatever their condition, followed `includeDepthMax` deep —
 * and as its hooks (an absolute `core.hooksPath`; a relative one is each work tree's, `configNamed`). The owner's git
 * reads an included file in every repository its condition matches, so one in a folder an agent writes is kept
 * read-only there (issue 26 round 13, F13-6: per-folder identities `[includeIf "gitdir:~/project/"] path =
 * ~/project/.gitconfig-local`). Absolute paths, links resolved where they exist.
 */
export function globalConfigNamed(): ConfigNamed {
  const { includes, hooks, commands, read } = configReader(null);
  const files = globalConfigFiles();
  for (const file of files) read(file, 0, false);
  // A global file that is a link (dotfile managers: `~/.gitconfig -> ~/project/dotfiles/gitconfig`) is read where it
  // leads, also when that file is not there yet (F13-10 (a)).
  const targets = files.map(linkTarget).filter((f): f is string => f !== null);
  return { includes: [...targets, ...includes], hooks: hooks.filter((h) => isAbsolute(h)), commands };
}

/**
 * Where `path` really lies when a link leads there — the file itself a link (its real path, or its target's when that
 * is missing), or a folder on its way (`~/.config/git -> ~/dotfiles/git`, with or without the file: F14-6); null when
 * no link is on the way.
 */
function linkTarget(path: string): string | null {
  try {
    if (lstatSync(path).isSymbolicLink()) return realPathOr(path, null) ?? resolve(dirname(path), readlinkSync(path));
  } catch {
    // missing: its folder may be a link
  }
  const parent = realPathOr(dirname(path), null);
  return parent !== null && parent !== dirname(path) ? join(parent, basename(path)) : null;
}

/**
 * A configuration path as git expands it: `~/…` from HOME, `~user/…` from that user's home in /etc/passwd (F14-4:
 * `path = ~dd/p14/.gitconfig-id` was read as a relative path); anything else as written.
 */
function expandUserPath(raw: string, home: string): string {
  if (raw === "~" || raw.startsWith("~/")) return join(home, raw.slice(1));
  const m = /^~([a-z_][a-z0-9_.-]*[$]?)(\/.*)?$/i.exec(raw);
  if (!m) return raw;
  const user = m[1]!;
  try {
    const entry = readFileSync("/etc/passwd", "utf8").split("\n").map((l) => l.split(":")).find((f) => f[0] === user);
    return entry?.[5] ? join(entry[5], m[2] ?? "") : raw;
  } catch {
    return raw;
  }
}

/** The owner's global configuration files, whether they exist or not. */
function globalConfigFiles(): string[] {
  const home = process.env.HOME ?? "/";
  const xdg = process.env.XDG_CONFIG_HOME || join(home, ".config");
  return [join(home, ".gitconfig"), join(xdg, "git", "config")];
}

/**
 * A reader of configuration files for what they name (`configNamed`): `read(file, level, hooksOnly)` adds to
 * `includes` and `hooks`, following includes. A relative `core.hooksPath` is resolved in the work tree `tree`; with
 * no tree (the global files alone) it is left relative.
 */
function configReader(tree: string | null) {
  const includes: string[] = [];
  const hooks: string[] = [];
  const commands: string[] = [];
  const seen = new Set<string>();
  const home = process.env.HOME ?? "/";
  const read = (file: string, level: number, hooksOnly: boolean): void => {
    if (seen.has(file) || level > includeDepthMax || !existsSync(file)) return;
    seen.add(file);
    let text: string;
    try {
      const keys = hooksOnly ? `^(core\\.hookspath|${commandKeys})$` : `^(include\\.path|includeif\\..*\\.path|core\\.hookspath|${commandKeys})$`;
      text = execFileSync("git", ["config", "--file", file, "--no-includes", "-z", "--get-regexp", keys], { env: gitEnv(), stdio: ["ignore", "pipe", "ignore"], timeout: gitReadTimeoutMs }).toString("utf8");
    } catch {
      return; // none of those keys (git exits 1), or no git
    }
    for (const entry of text.split("\0")) {
      const nl = entry.indexOf("\n");
      if (nl < 0) continue;
      const key = entry.slice(0, nl);
      const raw = entry.slice(nl + 1);
      const value = expandUserPath(raw, home);
      if (!value) continue;
      if (key === "core.hookspath") {
        if (!isAbsolute(value) && tree === null) hooks.push(value);
        else {
          const path = isAbsolute(value) ? value : resolve(tree!, value);
          hooks.push(realPathOr(path, path));
        }
        continue;
      }
      if (!key.startsWith("include")) {
        for (const p of commandPaths(raw, home, tree)) commands.push(realPathOr(p, p));
        continue;
      }
      const included = isAbsolute(value) ? value : resolve(dirname(file), value);
      includes.push(realPathOr(included, included));
      read(included, level + 1, false);
    }
  };
  return { includes, hooks, commands, read };
}

/**
 * The keys whose values name a program git runs or a file or folder it reads instructions from (a regular expression
 * over git's `section.subsection.key`, section and key in lower case; issue 26 round 14, F14-3, F14-5): a script of
 * a writable folder named there is run by the owner's git as the owner.
 */
const commandKeys = [
  "core\\.(fsmonitor|pager|editor|sshcommand|askpass|excludesfile|attributesfile)", "sequence\\.editor", "init\\.templatedir",
  "pager\\..*", "interactive\\.difffilter", "credential\\.(.*\\.)?helper", "gpg\\.(.*\\.)?program", "diff\\.external",
  "diff\\..*\\.(textconv|command)", "filter\\..*\\.(clean|smudge|process)", "merge\\..*\\.driver", "alias\\..*",
].join("|");

/**
 * The paths a configuration value of `commandKeys` names: each word with a `/` in it (a program's path, the first
 * word of a command or any other: `~/bin/diff-highlight | less`, `!f() { tools/x.sh; }; f`), `~` expanded; relative
 * ones in the work tree `tree` (git runs them there), none without a tree.
 */
function commandPaths(raw: string, home: string, tree: string | null): string[] {
  const out: string[] = [];
  for (const word of raw.split(/[\s;|&()<>"'`]+/)) {
    const w = expandUserPath(word.replace(/^!/, ""), home);
    if (!w.includes("/") || /^[a-z][a-z0-9+.-]*:\/\//i.test(w)) continue; // no path, or a URL
    if (isAbsolute(w)) out.push(w);
    else if (tree !== null) out.push(resolve(tree, w));
  }
  return out;
}

/**
 * The folders of a `core.hooksPath` folder `hooks` that the owner's git runs hooks from: the folder, and for husky
 * (`.husky/_`, whose scripts run the tracked `.husky/<hook>`) its parent too (issue 26 round 12, F12-7).
 */
export function hookFolders(hooks: string): string[] {
  return hooks.endsWith("/_") ? [hooks, dirname(hooks)] : [hooks];
}
