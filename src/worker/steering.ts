/**
 * What the owner's own tools later run from a folder a sandbox may write (issue 26 round 7 F16, round 11 F1 and F9):
 * a sandboxed agent — or a sandboxed plugin with a writable bind — runs as the hub's user and may write its project
 * folder, and the owner's `git`, editor and agent CLIs, outside every sandbox, then run what they find there.
 *
 * - **git**: a repository's `.git` is made a mount point of its own (a writable bind over itself: `rename` of a mount
 *   point is EBUSY, so it cannot be moved aside and replaced by a copy with another `config`), and every file git reads
 *   its configuration or hooks from, or that sends it elsewhere for them, is bound read-only: `config`, `hooks/` (made
 *   empty when missing, as `git init` makes it), `commondir`, `config.worktree`, a `.git` that is a gitfile; the same
 *   for every repository git enters from there — `modules/**` (submodules' git folders, each a mount point too),
 *   `worktrees/<id>/` (each a mount point: `commondir`, `gitdir`, `config.worktree` read-only) and the `.git` of each
 *   gitlink the index holds (git's `status` recurses into it); and what its configuration names as more configuration
 *   or as its hooks (`include.path`, `includeIf.*.path`, a `core.hooksPath` inside the git folder). Objects, refs,
 *   logs, the index and HEAD stay writable: the agent commits and branches as before (Codex's own Linux sandbox keeps
 *   the whole `.git` read-only instead, and its agents cannot commit).
 * - **What no mount can stop** (the index and `.git`'s top stay writable, and a missing `commondir` cannot be
 *   replaced by a placeholder git accepts: an empty one is fatal, `.` changes `git rev-parse --git-common-dir`): a
 *   `commondir` made in a repository's git folder, or a gitlink added to the index whose folder holds a `.git`, is
 *   found after the run (`plantedSteering`) and moved aside by the worker, which says so in a notice card.
 * - **editors and agent CLIs**: `.vscode`, `.idea` (VS Code's `folderOpen` tasks, JetBrains run configurations),
 *   `.claude` (project settings: hooks, `statusLine`, `apiKeyHelper`), `.codex` (`config.toml`: `notify`, MCP servers)
 *   are bound read-only; in a project folder (the agent's cwd, a repository) each missing one is made first, empty, so
 *   that no run creates it — git does not track an empty folder, so `git status` shows nothing of them. `.mcp.json`
 *   is bound read-only when it exists (Claude Code asks before it starts a project server it names, so a new one is
 *   not made). `CLAUDE.md` and `AGENTS.md` stay writable: they are text, as every file of the project the owner's
 *   assistant reads is, and keeping them is often the agent's task.
 *
 * A repository the agent makes itself elsewhere in its folder is its output, as any file it writes (SECURITY.md).
 */
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { moveAside } from "./files.js";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { present, realPathOr } from "../common/file-checks.js";
import { cardTextMaxCodepoints } from "../kernel/limits.js";
import { lineForbiddenClass } from "../kernel/text.js";
import type { Notice } from "../protocol/schema.js";
import { t, type Lang } from "../i18n/messages.js";

/** The editors' and agent CLIs' project folders: read-only, made (empty) when missing in a project folder. */
export const projectSteeringFolders = [".vscode", ".idea", ".claude", ".codex"] as const;
/** Project files bound read-only when they exist (never made: see the module). */
export const projectSteeringFiles = [".mcp.json"] as const;
/** Files of a git folder that git takes configuration or hooks from, or that send it to another folder for them. */
const gitSteering = ["config", "hooks", "commondir", "config.worktree"] as const;
/** How deep submodules are followed (a submodule's submodules…), and how many gitlinks per repository at most. */
const submoduleDepthMax = 4;
const gitlinksMax = 500;
/** How deep a configuration's `include.path` is followed. */
const includeDepthMax = 3;
/** How long reading one repository's index (or one configuration file) with git may take, in ms. */
const gitlinksTimeoutMs = 10_000;

/** What to bind in a folder a sandbox writes: folders bound writable over themselves (mount points), parts read-only. */
export interface Guarded {
  /** Real paths bound writable over themselves, so that they cannot be renamed or removed. */
  mountPoints: string[];
  /** Real paths bound read-only. */
  readOnly: string[];
}

/** Whether `path` exists as a folder (not through a link). */
function isDir(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}


/**
 * The parts of `folder` (a real path a sandbox may write) that the owner's tools run or take settings from (see the
 * module), as real paths. In a `project` folder (the agent's cwd) and in a repository, the missing editor and CLI
 * folders are made first (empty, 0755) when `make`; a repository's missing `hooks` folder too.
 * @param make false: make nothing (the check after a run, `plantedSteering`).
 */
export function executableParts(folder: string, project = false, make = true): Guarded {
  const out: Guarded = { mountPoints: [], readOnly: [] };
  const git = join(folder, ".git");
  const repo = present(git);
  if (repo) repositoryParts(folder, true, make, out, 0);
  for (const name of projectSteeringFolders) {
    const path = join(folder, name);
    if (make && (project || repo) && !present(path)) {
      try {
        mkdirSync(path, { mode: 0o755 });
      } catch {
        // made meanwhile, or the folder cannot be written: bound below when it exists
      }
    }
    if (existsSync(path)) out.readOnly.push(realPathOr(path, path));
  }
  for (const name of projectSteeringFiles) {
    const path = join(folder, name);
    if (existsSync(path)) out.readOnly.push(realPathOr(path, path));
  }
  return { mountPoints: [...new Set(out.mountPoints)], readOnly: [...new Set(out.readOnly)] };
}

/**
 * The parts of the repository whose work tree is `tree` (its `.git` a folder or a gitfile), into `out`; then those of
 * the repositories its gitlinks hold. `inside`: the git folder lies in the writable folder (it becomes a mount point).
 */
function repositoryParts(tree: string, inside: boolean, make: boolean, out: Guarded, depth: number): void {
  const git = join(tree, ".git");
  let gitDir: string | null = git;
  if (!isDir(git)) {
    // A gitfile (`gitdir: <path>`): the file itself read-only, and the folder it names.
    if (!existsSync(git)) return;
    out.readOnly.push(realPathOr(git, git));
    gitDir = gitfileTarget(git);
    if (gitDir === null) return;
    inside = false; // its parts are bound read-only; the folder itself, when it lies in a writable one, is found there
  }
  gitFolderParts(gitDir, inside, make, out, depth);
  out.readOnly.push(...configNamed(gitDir, tree));
  if (depth >= submoduleDepthMax) return;
  for (const link of gitlinks(gitDir, tree)) {
    const sub = join(tree, link);
    if (present(join(sub, ".git"))) repositoryParts(sub, inside && isDir(join(sub, ".git")), make, out, depth + 1);
  }
}

/**
 * What a repository's own configuration (`config`, `config.worktree` of `gitDir`) names as more configuration or as
 * its hooks: `include.path`, `includeIf.*.path` (relative to the file naming them; `~/` from HOME), followed
 * `includeDepthMax` deep, and `core.hooksPath` when it lies in the git folder (relative to the work tree `tree`) —
 * existing paths, real. Read with
 * git from the files alone (no includes followed by git, no system or global configuration).
 */
function configNamed(gitDir: string, tree: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const read = (file: string, level: number) => {
    if (seen.has(file) || level > includeDepthMax || !existsSync(file)) return;
    seen.add(file);
    let text: string;
    try {
      text = execFileSync("git", ["config", "--file", file, "--no-includes", "-z", "--get-regexp", "^(include\\.path|includeif\\..*\\.path|core\\.hookspath)$"], {
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/", GIT_CONFIG_NOSYSTEM: "1" }, stdio: ["ignore", "pipe", "ignore"], timeout: gitlinksTimeoutMs,
      }).toString("utf8");
    } catch {
      return; // none of those keys (git exits 1), or no git
    }
    for (const entry of text.split("\0")) {
      const nl = entry.indexOf("\n");
      if (nl < 0) continue;
      const key = entry.slice(0, nl);
      const raw = entry.slice(nl + 1);
      const value = raw.startsWith("~/") ? join(process.env.HOME ?? "/", raw.slice(2)) : raw;
      if (!value) continue;
      if (key === "core.hookspath") {
        // Only one inside the git folder: hooks a project keeps in its work tree (husky's `.husky/_`, which calls the
        // tracked `.husky/pre-commit`) are its files, which the agent edits as any other (SECURITY.md).
        const hooks = realPathOr(isAbsolute(value) ? value : resolve(tree, value), "");
        if (hooks && hooks.startsWith(`${realPathOr(gitDir, gitDir)}/`)) out.push(hooks);
        continue;
      }
      const included = isAbsolute(value) ? value : resolve(dirname(file), value);
      if (existsSync(included)) out.push(realPathOr(included, included));
      read(included, level + 1);
    }
  };
  for (const name of ["config", "config.worktree"]) read(join(gitDir, name), 0);
  return out;
}

/** The git folder a gitfile names (relative to the gitfile's folder), or null when it names none that exists. */
export function gitfileTarget(file: string): string | null {
  try {
    const m = /^gitdir: (.+)$/m.exec(readFileSync(file, "utf8").slice(0, 4096));
    if (!m) return null;
    const target = isAbsolute(m[1]!) ? m[1]! : resolve(dirname(file), m[1]!);
    return isDir(target) ? realPathOr(target, target) : null;
  } catch {
    return null;
  }
}

/** The parts of one git folder `dir` (see the module), its `modules/**` and `worktrees/*` with them. */
function gitFolderParts(dir: string, inside: boolean, make: boolean, out: Guarded, depth: number): void {
  if (inside) out.mountPoints.push(realPathOr(dir, dir));
  const hooks = join(dir, "hooks");
  if (inside && make && !present(hooks)) {
    try {
      mkdirSync(hooks, { mode: 0o755 });
    } catch {
      // cannot be made (a read-only repository): nothing to protect then
    }
  }
  for (const name of gitSteering) {
    const path = join(dir, name);
    if (existsSync(path)) out.readOnly.push(realPathOr(path, path));
  }
  if (!inside || depth >= submoduleDepthMax) return;
  const modules = join(dir, "modules");
  if (isDir(modules)) {
    out.mountPoints.push(realPathOr(modules, modules));
    // A submodule's name may hold slashes (`modules/libs/a`): a folder with a HEAD is a git folder, others are walked.
    const walk = (d: string, level: number) => {
      for (const name of names(d)) {
        const p = join(d, name);
        if (!isDir(p)) continue;
        if (existsSync(join(p, "HEAD"))) gitFolderParts(p, true, make, out, depth + 1);
        else if (level < submoduleDepthMax) {
          out.mountPoints.push(realPathOr(p, p));
          walk(p, level + 1);
        }
      }
    };
    walk(modules, 0);
  }
  const worktrees = join(dir, "worktrees");
  if (isDir(worktrees)) {
    out.mountPoints.push(realPathOr(worktrees, worktrees));
    for (const id of names(worktrees)) {
      const w = join(worktrees, id);
      if (!isDir(w)) continue;
      out.mountPoints.push(realPathOr(w, w));
      for (const name of ["commondir", "gitdir", "config.worktree"]) if (existsSync(join(w, name))) out.readOnly.push(realPathOr(join(w, name), join(w, name)));
    }
  }
}

/** The names in folder `d` (none when it cannot be read). */
function names(d: string): string[] {
  try {
    return readdirSync(d);
  } catch {
    return [];
  }
}

/**
 * The paths of the gitlinks (mode 160000: submodules) in the index of the git folder `gitDir` with work tree `tree`,
 * read with git: no fsmonitor, no hooks, only the git folder itself as common folder (a `commondir` planted there is
 * not followed), no system configuration. None when git cannot read it (no index, not a repository, git missing).
 */
export function gitlinks(gitDir: string, tree: string): string[] {
  if (!existsSync(join(gitDir, "index"))) return [];
  try {
    const common = gitCommonDir(gitDir);
    const out = execFileSync("git", ["-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "core.untrackedCache=false", "ls-files", "--stage", "-z"], {
      cwd: tree,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/", GIT_DIR: gitDir, GIT_WORK_TREE: tree, GIT_COMMON_DIR: common, GIT_CONFIG_NOSYSTEM: "1" },
      stdio: ["ignore", "pipe", "ignore"], maxBuffer: 256 * 1024 * 1024, timeout: gitlinksTimeoutMs,
    }).toString("utf8");
    const found: string[] = [];
    for (const entry of out.split("\0")) {
      if (!entry.startsWith("160000 ")) continue;
      const tab = entry.indexOf("\t");
      const path = entry.slice(tab + 1);
      if (tab > 0 && path && !isAbsolute(path) && !path.split("/").includes("..")) found.push(path);
      if (found.length >= gitlinksMax) break;
    }
    return found;
  } catch {
    return [];
  }
}

/** The common folder git uses for `gitDir`: the one its `commondir` names, else itself. */
function gitCommonDir(gitDir: string): string {
  try {
    const named = readFileSync(join(gitDir, "commondir"), "utf8").trim();
    if (!named) return gitDir;
    return isAbsolute(named) ? named : resolve(gitDir, named);
  } catch {
    return gitDir;
  }
}

/** One planted part found after a run: moved aside (to `movedTo`), kept (a repository the agent made), or stuck. */
export interface Planted {
  path: string;
  movedTo: string | null;
  kind: "moved" | "kept" | "stuck";
}

/**
 * After a sandboxed run: what in `folders` (the writable folders of its launches) now steers the owner's git and
 * was not guarded when the run started (`before`: the read-only parts and mount points of its launches) — a
 * `commondir` in a git folder that had none (git never writes one there but in `worktrees/<id>/`), a gitlink's
 * `.git` (file or folder) that was not there — each moved aside to `<name>.planted-run-<run>` so that the owner's next
 * `git status` does not follow it; and a new `.git` of a folder itself (a repository the agent made: its output),
 * left where it is but named. Never throws.
 */
export function plantedSteering(folders: readonly string[], before: ReadonlySet<string>, run: number): Planted[] {
  const found: Planted[] = [];
  const aside = (path: string): Planted => {
    try {
      return { path, movedTo: moveAside(path, `${path}.planted-run-${run}`), kind: "moved" };
    } catch {
      return { path, movedTo: null, kind: "stuck" };
    }
  };
  for (const folder of folders) {
    const git = join(folder, ".git");
    if (!present(git)) continue;
    if (!before.has(realPathOr(git, git))) found.push({ path: git, movedTo: null, kind: "kept" });
    // A commondir first (it would send git's own reading of the index elsewhere), then the gitlinks.
    const gitDir = isDir(git) ? git : gitfileTarget(git);
    if (gitDir === null) continue;
    const commondir = join(gitDir, "commondir");
    if (present(commondir) && !before.has(realPathOr(commondir, commondir))) found.push(aside(commondir));
    for (const link of gitlinks(gitDir, folder)) {
      const sub = join(folder, link, ".git");
      if (!present(sub) || before.has(realPathOr(sub, sub))) continue;
      // A submodule's git folder that was guarded (a mount point) or whose gitfile was: not new.
      found.push(aside(sub));
    }
  }
  return found;
}

/** The notice card that tells the owner what `plantedSteering` found (in `lang`), or null when it found nothing. */
export function plantedNotice(planted: readonly Planted[], lang: Lang): Notice | null {
  if (planted.length === 0) return null;
  // The agent chose these names: a control character or line break in one would get the whole result refused (the
  // run then hangs) or add lines of the agent's to the card (issue 26 round 12, F12-9). Shown escaped, as they are.
  const shown = (path: string) => path.replace(new RegExp(`[${lineForbiddenClass}]`, "gu"), (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
  const line = (p: Planted) => p.kind === "moved"
    ? t(lang, "sandbox.planted.moved", { path: shown(p.path), to: shown(p.movedTo ?? "") })
    : t(lang, p.kind === "kept" ? "sandbox.planted.kept" : "sandbox.planted.stuck", { path: shown(p.path) });
  return { title: t(lang, "sandbox.planted.title"), text: [...planted.map(line).join("\n")].slice(0, cardTextMaxCodepoints).join("") };
}
