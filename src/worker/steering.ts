/**
 * What the owner's own tools later run from a folder a sandbox may write (issue 26 round 7 F16, round 11 F1 and F9,
 * round 12 F12-1, F12-2, F12-7, F12-8): a sandboxed agent — or a sandboxed plugin with a writable bind — runs as the
 * hub's user and may write its project folder, and the owner's `git`, editor and agent CLIs, outside every sandbox,
 * then run what they find there. This module is the guard before a launch; planted.ts is the check after a run.
 *
 * - **every repository in the folder**: the folder's own, each one below it (a clone kept in the project, a folder of
 *   repositories; found by a walk of at most `guardLimits.folders` folders) and their submodules — past a limit the
 *   launch is refused (`GuardLimitError`), never guarded in part.
 * - **git**: a repository's `.git` is made a mount point of its own (a writable bind over itself: `rename` of a mount
 *   point is EBUSY, so it cannot be moved aside and replaced by a copy with another `config`), and every file git reads
 *   its configuration or hooks from, or that sends it elsewhere for them, is bound read-only: `config`, `hooks/` (made
 *   empty when missing, as `git init` makes it), `commondir`, `config.worktree`, a `.git` that is a gitfile; the same
 *   for every repository git enters from there — `modules/**` (submodules' git folders, each a mount point in a
 *   read-only `modules`), `worktrees/<id>/` (each a mount point in a read-only `worktrees`: `commondir`, `gitdir`,
 *   `config.worktree` read-only) and the `.git` of each checked-out gitlink the index holds (git's `status` recurses
 *   into it); and what its configuration names as more configuration or as its hooks (`include.path`,
 *   `includeIf.*.path`, a `core.hooksPath` in the git folder or the work tree: `.githooks`, husky's `.husky`), and
 *   every file any other key but data names (git-config.ts; each configuration file read once per launch, at most
 *   `guardLimits.configFiles`).
 *   Objects, refs, logs, the index and HEAD stay writable: the agent commits and branches as before (Codex's own
 *   Linux sandbox keeps the whole `.git` read-only instead, and its agents cannot commit).
 * - **What no mount can stop** (the index and `.git`'s top stay writable, and a missing `commondir` cannot be
 *   replaced by a placeholder git accepts: an empty one is fatal, `.` changes `git rev-parse --git-common-dir`) is
 *   found after the run by planted.ts, from what this guard saw (`Seen`).
 * - **editors and agent CLIs**: their project folders whose settings start commands (`projectSteeringFolders`: VS
 *   Code's `folderOpen` tasks, JetBrains run configurations, Claude Code's hooks, Codex's `notify`, the MCP servers of
 *   Gemini CLI, Cursor, opencode, Continue, Zed, Amazon Q, Roo, Kiro, a dev container's `initializeCommand`) are bound
 *   read-only; in a project folder (the agent's cwd, a repository) each missing one is made first, empty, so that no
 *   run creates it — git does not track an empty folder, so `git status` shows nothing of them. The project files
 *   (`projectSteeringFiles`: `.mcp.json`, `opencode.json`…) are bound read-only when they exist (an empty placeholder
 *   is not valid settings); a new one is moved aside after the run. `CLAUDE.md` and `AGENTS.md` stay writable: they
 *   are text, as every file of the project the owner's assistant reads is, and keeping them is often the agent's task.
 *
 * A repository the agent makes itself elsewhere in its folder is its output, as any file it writes (SECURITY.md).
 */
import { sharedStoreParts } from "./shared-stores.js";
import { existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { isLink, present, realPathOr, within } from "../common/file-checks.js";
import { t, type Lang } from "../i18n/messages.js";
import { pinnedFolders } from "./mount-pins.js";
import { countedEntries, GuardLimitError, guardLimits, guardLimitText, sharedTempRoots, walkOf, type EntriesRead, type GuardLimits, type Walked } from "./guard-walk.js";
export { GuardLimitError, guardLimits, guardLimitText, notWalked, sharedTempRoots, walkOf, type GuardLimits, type Walked } from "./guard-walk.js";
import { homeLinks, homeWalkLimits, type HomeWalkLimits } from "./home-links.js";
import { hookShadows, scriptRefLimits, scriptRefs, type HookFolder } from "./script-refs.js";
import { hookManagerFiles, hookManagerRefs, managerParts } from "./hook-managers.js";
import { replaceRefs } from "./git-objects.js";
import { ConfigFilesLimitError, configNamed, ConfigPass, type ConfigNamed } from "./git-config.js";
import { entryId, gitCommonDir, gitFolderCrowded, gitFolderLinkEntriesMax, gitFolderLinks, gitFolderTopMax, gitfileTarget, gitlinks, gitReadTimeoutMs, hookFolders, isDir } from "./git-read.js";

/**
 * The editors' and agent CLIs' project folders whose settings start commands (tasks, hooks, MCP or language servers,
 * plugins): read-only, made (empty) when missing in a project folder. Issue 26 round 11 F9, round 12 F12-8, round 25 F25a-4.
 */
export const projectSteeringFolders = [".vscode", ".idea", ".claude", ".codex", ".gemini", ".cursor", ".opencode", ".continue", ".zed", ".amazonq", ".roo", ".kiro", ".devcontainer", ".qwen", ".iflow", ".kilocode", ".kilo", ".windsurf", ".clinerules", ".factory"] as const;
/**
 * Project files that start commands: bound read-only when they exist; one made during a run is moved aside after it
 * (planted.ts; an empty placeholder file is not valid settings for them).
 */
export const projectSteeringFiles = [
  ".mcp.json", "opencode.json", "opencode.jsonc", "crush.json", ".crush.json", ".aider.conf.yml", ".devcontainer.json", "kilo.json", "kilo.jsonc",
  // Round 29, F29a-4: GitHub Copilot CLI's hooks (`.github/hooks/*.json`), mise's `[hooks]` (run on `cd` under `mise
  // activate`, its trust kept by path), hk's steps (the git hook it installs runs them).
  ".github/hooks", "mise.toml", ".mise.toml", "mise.local.toml", ".mise.local.toml", ".config/mise.toml", ".config/mise/config.toml",
  "mise/config.toml", ".mise/config.toml", "hk.pkl",
  // What git hook managers run from the hook they install (F17-3: pre-commit's `repo: local` hooks run at `git commit`;
  // lefthook reads each of its names with or without a dot, in every format it takes, its `-local` one merged: F18-4).
  ".overcommit.yml", ...hookManagerFiles,
];
/**
 * Files of a git folder that git takes configuration or hooks from, or that send it to another folder for them; and
 * `info/` (`exclude` hid a file the agent added from the owner's `git status`, F14-2; `attributes` assigns filters).
 */
export const gitSteering = ["config", "hooks", "commondir", "config.worktree", "info"] as const;
/** The same in a linked worktree's folder (`.git/worktrees/<id>/`). */
export const worktreeSteering = ["commondir", "gitdir", "config.worktree"] as const;
/** How deep gitlinks are followed through submodules' indexes before a run (a deeper checked-out one: the walk finds it). */
const submoduleDepthMax = 4;

/** What the guard saw before a run, for the check after it (planted.ts): all real paths but `entries`. */
export interface Seen {
  /** Work trees of the repositories guarded (the folder's, nested ones, submodules). */
  repositories: string[];
  /** Their git folders (and submodules' in `modules/`). */
  gitFolders: string[];
  /** Linked worktrees' folders (`worktrees/<id>`). */
  worktreeFolders: string[];
  /** Project folders whose steering files are watched. */
  projects: string[];
  /** The identity (git-read.ts `entryId`) of every `.git` entry and git folder guarded. */
  entries: string[];
  /** Work trees of the repositories that hold a folder (its cwd below their top; F13-8): their configuration looked at. */
  enclosing: string[];
  /** The index entries of the repositories guarded that `git status` does not look at (git-read.ts `gitlinks`; F13-9). */
  hidden: string[];
  /** Where a guarded hook runner looks a system command up first in the work tree, missing at launch (script-refs.ts `hookShadows`; F19-2). */
  shadows: string[];
  /** Hook managers' globs (absolute patterns) whose matches made during the run are moved aside (the round-37 review, EX-2). */
  globs: string[];
  /** Each seen git folder's replace refs at launch, `<common folder> <ref> <id>` (round 38, F38a-1). */
  replaceRefs: string[];
  /**
   * The identity (`entryId`) of each folder the walk found holding an entry named `HEAD` — one git's discovery may
   * take for a git folder (guard-walk.ts `Walked.heads`; rounds 30 and 31): one not among them after the run is new.
   */
  heads: string[];
}

/** What to bind in a folder a sandbox writes: folders bound writable over themselves (mount points), parts read-only. */
export interface Guarded {
  /** Real paths bound writable over themselves, so that they cannot be renamed or removed. */
  mountPoints: string[];
  /** Real paths bound read-only. */
  readOnly: string[];
  /** Real paths bound read-only that hold mount points (`.git/modules`, `.git/worktrees`): bound before those, by depth. */
  readOnlyParents: string[];
  /** What was there (planted.ts). */
  seen: Seen;
  /** The hooks folders guarded, each with the work tree its hooks run at (script-refs.ts reads their hooks; F19-3). */
  hooks: HookFolder[];
}

/** An empty `Seen`. */
export function noneSeen(): Seen {
  return { repositories: [], gitFolders: [], worktreeFolders: [], projects: [], entries: [], enclosing: [], hidden: [], shadows: [], globs: [], replaceRefs: [], heads: [] };
}

/** Each list of `g` once, in order. */
function unique(g: Guarded): Guarded {
  const u = (l: string[]) => [...new Set(l)];
  const s = g.seen;
  return {
    mountPoints: u(g.mountPoints), readOnly: u(g.readOnly), readOnlyParents: u(g.readOnlyParents),
    seen: { repositories: u(s.repositories), gitFolders: u(s.gitFolders), worktreeFolders: u(s.worktreeFolders), projects: u(s.projects), entries: u(s.entries), enclosing: u(s.enclosing), hidden: u(s.hidden), shadows: u(s.shadows), globs: u(s.globs), replaceRefs: u(s.replaceRefs), heads: u(s.heads) },
    hooks: g.hooks,
  };
}

/**
 * The parts of `folder` (a real path a sandbox may write) that the owner's tools run or take settings from (see the
 * module), as real paths: of every repository in it (its own, each nested one — a clone the owner keeps in the project,
 * a folder of repositories — and their submodules), and the project steering of the folder and of each repository. In
 * a `project` folder (the agent's cwd) and in a repository, the missing editor and CLI folders are made first (empty,
 * 0755) when `make`; a repository's missing `hooks` folder too.
 * @param make false: make nothing.
 * @param pass the reading of configuration files of the whole launch (each file read once, `limits.configFiles` in all).
 * @throws GuardLimitError when `folder` holds more than `limits` allow (the launch is refused: never unguarded).
 */
export function executableParts(folder: string, project = false, make = true, limits: GuardLimits = guardLimits, pass = new ConfigPass(limits.configFiles)): Guarded {
  try {
    return partsOf(folder, project, make, limits, pass);
  } catch (e) {
    if (e instanceof ConfigFilesLimitError) {
      throw new GuardLimitError(e.kind, e.file ?? folder, e.kind === "configSize" ? e.limit / (1024 * 1024) : e.limit);
    }
    throw e;
  }
}

/** `executableParts` but for the configuration files' limit (thrown as `ConfigFilesLimitError`). */
function partsOf(folder: string, project: boolean, make: boolean, limits: GuardLimits, pass: ConfigPass): Guarded {
  const out: Guarded = { mountPoints: [], readOnly: [], readOnlyParents: [], seen: noneSeen(), hooks: [] };
  const walk = guardWalk(folder, limits); // a shared temporary root: its own repository only (SECURITY.md names this)
  const trees = walk.trees;
  // A folder the walk cannot list hides what the owner's tools, entering it by name, would run (F29a-3): refused.
  if (walk.unreadable.length > 0) throw new GuardLimitError("unreadable", walk.unreadable[0]!, 0);
  // Counted before any git runs: a folder of too many repositories is refused at once, not after a long look.
  if (trees.length > limits.repositories) throw new GuardLimitError("repositories", folder, limits.repositories);
  const visited = new Set<string>();
  for (const tree of trees) repositoryParts(tree, isDir(join(tree, ".git")), make, out, 0, visited, limits, pass);
  // What the owner's git reads from this folder whatever repository it works in: files the global configuration
  // includes (F13-6), and what the configuration of the repository holding the folder names (F13-8: a cwd below a
  // repository's top, whose `core.hooksPath` lies in it).
  const global = pass.global();
  const enclosing = enclosingTrees(folder, pass);
  const named = enclosing.flatMap((e) => [...e.named.includes, ...e.named.hooks.flatMap(hookFolders), ...e.named.commands]);
  out.seen.enclosing.push(...enclosing.map((e) => e.tree));
  // Only what lies inside the folder, never the folder itself (a dotfile link to the whole project keeps it writable).
  for (const p of [...global.includes, ...global.hooks.flatMap(hookFolders), ...global.commands, ...named, ...homeLinkTargets()]) if (p !== folder && within(p, folder) && existsSync(p)) out.readOnly.push(realPathOr(p, p));
  // What the hooks and hook managers of a repository holding the folder run in it, as for one inside it (round 35,
  // F35a-1: a cwd of `app/tools`, whose `tools/fmt.sh` the top's `.husky/pre-commit` ran, and pre-commit's `entry:`).
  for (const e of enclosing) {
    // git runs a linked worktree's hooks from the common folder (`git rev-parse --git-path hooks`; review r35, W1).
    const gitHooks = e.named.hooks.length === 0 && e.gitDir !== null ? [join(gitCommonDir(e.gitDir), "hooks")] : [];
    for (const h of [...e.named.hooks.flatMap(hookFolders), ...gitHooks].filter((h) => isDir(h))) {
      out.hooks.push({ folder: realPathOr(h, h), tree: e.tree });
    }
    managerParts(hookManagerRefs(e.tree), folder, out);
  }
  projectParts(folder, folder, make && (project || trees[0] === folder), out);
  for (const tree of trees) if (tree !== folder && within(tree, folder)) projectParts(tree, folder, make, out);
  // Every other folder below that holds such a part: the owner's CLI or editor started there reads it (F21-2); made
  // when missing only at the tops above, and looked for everywhere after the run (planted.ts).
  for (const d of walk.steered) if (d !== folder && !trees.includes(d)) projectParts(d, folder, false, out);
  // A folder of a work tree holding a `HEAD` (a bare repository kept in the project, a fixture): what git would run
  // from it stays read-only (round 31 review), and the check after the run knows it by its identity.
  // A git folder there that is no work tree's `.git` — a bare repository, or the git folder of a work tree elsewhere
  // (`git init --separate-git-dir`, yadm, vcsh; round 36, F36a-2: the owner's commit in `~/src/sp` ran the hook an agent
  // put in `~/work/sp.gitdir/hooks`; the round-37 review: one kept inside another work tree) — is guarded as a `.git`
  // is, its configuration read for what it names; `looseGitFoldersMax` of them at most (no index, no gitlinks: cheap).
  const loose = walk.heads.filter((d) => !out.seen.gitFolders.includes(realPathOr(d, d)) && gitFolderShaped(d));
  if (loose.length > looseGitFoldersMax) throw new GuardLimitError("repositories", folder, looseGitFoldersMax);
  for (const d of walk.heads) {
    const id = entryId(d);
    if (id !== null) out.seen.heads.push(id);
    if (trees.some((t) => within(d, t))) for (const name of headFolderSteering) if (existsSync(join(d, name))) out.readOnly.push(realPathOr(join(d, name), join(d, name)));
  }
  for (const d of loose) looseGitFolderParts(realPathOr(d, d), folder, make, out, limits, pass);
  // What those scripts start in turn (F17-2): a `#!` interpreter, a hook's `INSTALL_PYTHON=` in the folder; and what
  // the scripts of `~/bin`, `~/.local/bin` and `/usr/local/bin` start there.
  const bins = process.env.HOME ? [join(process.env.HOME, "bin"), join(process.env.HOME, ".local", "bin")] : [];
  // Every hooks folder seen, also one outside the folder (a linked worktree's, in its common folder: W1).
  // A script a hook names that is missing now is looked for after the run (review r35, W3: an optional local hook).
  const missing: string[] = [];
  out.readOnly.push(...scriptRefs([...new Set([...out.readOnly, ...out.hooks.map((h) => h.folder), ...bins, "/usr/local/bin"])], folder, scriptRefLimits, out.hooks, missing));
  out.seen.shadows.push(...missing);
  // A hook runner's own way to commands through the work tree (husky's `PATH="node_modules/.bin:$PATH"`, F19-2): kept
  // where it is there, and looked for after the run where it is not (planted.ts).
  for (const p of hookShadows(out.hooks, folder)) {
    if (present(p)) out.readOnly.push(realPathOr(p, p));
    else out.seen.shadows.push(p);
  }
  return unique(out);
}

/**
 * The work trees of every repository that holds `folder` (each folder above it with a `.git` entry, the nearest first,
 * below the shared temporary roots), each with what its configuration names: a superproject whose `core.hooksPath`
 * lies in its submodule (F14-1) as much as the repository of a cwd below its top (F13-8).
 */
function enclosingTrees(folder: string, pass: ConfigPass): { tree: string; gitDir: string | null; named: ConfigNamed }[] {
  // Not into a shared temporary root or above it: a repository there is anyone's, not the owner's (one was left at
  // /tmp/.git by another user of this machine).
  const stops = sharedTempRoots();
  const out: { tree: string; gitDir: string | null; named: ConfigNamed }[] = [];
  for (let d = folder; d !== dirname(d); ) {
    d = dirname(d);
    if (stops.includes(d)) break;
    const git = join(d, ".git");
    if (!present(git)) continue;
    const gitDir = isDir(git) ? git : gitfileTarget(git);
    if (gitDir !== null) out.push({ tree: d, gitDir: realPathOr(gitDir, gitDir), named: configNamed(realPathOr(gitDir, gitDir), d, pass) });
  }
  return out;
}

/**
 * Where the owner's shell and tools are led out of the home (home-links.ts: the links at any depth of its dot-folders,
 * the PATH folders), as real paths: kept read-only where a sandbox writes (F14-8, F15-4).
 * @param partial after a run (planted.ts): what the walk found when it stopped at a limit, never an error.
 * @param writable folders not walked (home-links.ts `homeLinks`).
 * @throws GuardLimitError ("home") when the walk stops at `limits.entries` and not `partial`: the launch is refused.
 */
export function homeLinkTargets(partial = false, limits: HomeWalkLimits = homeWalkLimits, writable: readonly string[] = []): string[] {
  const found = homeLinks(process.env, limits, writable);
  if (!found.complete && !partial) throw new GuardLimitError("home", found.home ?? "", limits.entries);
  return found.targets;
}

/**
 * The editors' and CLIs' parts of project folder `dir` (in writable folder `folder`) into `out`; the missing folders
 * made first when `make`.
 */
function projectParts(dir: string, folder: string, make: boolean, out: Guarded): void {
  out.seen.projects.push(dir);
  for (const name of [...projectSteeringFolders, ...projectSteeringFiles]) {
    const path = join(dir, name);
    if (make && !present(path) && (projectSteeringFolders as readonly string[]).includes(name)) {
      try {
        mkdirSync(path, { mode: 0o755 });
      } catch {
        // made meanwhile, or the folder cannot be written: bound below when it exists
      }
    }
    // A link there as it is now (the owner's `.vscode -> ~/dotfiles/vscode`): the same entry after the run is not new (F27a-6).
    if (isLink(path)) out.seen.entries.push(entryId(path) ?? "");
    if (existsSync(path)) out.readOnly.push(realPathOr(path, path));
  }
  // What those hook managers' files name as commands in the project, and lefthook's script folders (F18-2); a script
  // one names that is missing now is looked for after the run (W3).
  managerParts(hookManagerRefs(dir), folder, out);
}

/**
 * The guard's walk of a writable `folder` (`walkOf`); of a shared temporary root (`/tmp`: every program's temporary
 * files, other runs' and tests' repositories among them) its own repository only; `restore` as `walkOf`'s. @throws
 * GuardLimitError as `walkOf`.
 */
export function guardWalk(folder: string, limits: GuardLimits, restore = false): Walked {
  return sharedTempRoots().includes(folder) ? { trees: present(join(folder, ".git")) ? [folder] : [], steered: [], unreadable: [], heads: [], links: [], fifos: [] } : walkOf(folder, limits, steeringNames, restore);
}

/**
 * What git reads from a folder it takes for a git folder and runs or follows: where its objects and refs are, its
 * configuration, its hooks, its `info/` (round 31: a folder holding a `HEAD` in a work tree).
 */
export const headFolderSteering = ["commondir", "config", "config.worktree", "hooks", "info"] as const;

/** The names of the editors' and CLIs' project parts (folders and files), to find them at any depth. */
export const steeringNames: ReadonlySet<string> = new Set<string>([...projectSteeringFolders, ...projectSteeringFiles.filter((f) => !f.includes("/"))]);

/**
 * The parts of the repository whose work tree is `at` (its `.git` a folder or a gitfile), into `out`; then those of
 * the repositories its gitlinks hold. `inside`: the git folder lies in the writable folder (it becomes a mount point).
 * @throws GuardLimitError: more populated gitlinks than `limits.gitlinks`, or an index git cannot list in time.
 */
function repositoryParts(at: string, inside: boolean, make: boolean, out: Guarded, depth: number, visited: Set<string>, limits: GuardLimits, pass: ConfigPass): void {
  const tree = realPathOr(at, at);
  if (visited.has(tree)) return;
  visited.add(tree);
  const git = join(tree, ".git");
  const id = entryId(git);
  if (id === null) return;
  out.seen.entries.push(id);
  out.seen.repositories.push(tree);
  let gitDir: string | null = git;
  if (!isDir(git)) {
    // A gitfile (`gitdir: <path>`): the file itself read-only, and the folder it names.
    out.readOnly.push(realPathOr(git, git));
    gitDir = gitfileTarget(git);
    if (gitDir === null) return;
    inside = false; // its parts are bound read-only; the folder itself, when it lies in a writable one, is found there
  }
  gitFolderParts(gitDir, inside, make, out, { left: limits.folders, limit: limits.folders, top: gitDir, entries: { read: 0, limit: limits.entries } });
  const realGit = realPathOr(gitDir, gitDir);
  const named = configNamed(realGit, tree, pass);
  for (const p of named.includes) if (existsSync(p)) out.readOnly.push(realPathOr(p, p));
  // Hooks in the work tree too (`.githooks`, husky's `.husky`): the owner's next `git commit` runs them (F12-7).
  for (const h of named.hooks.flatMap(hookFolders)) {
    if (!existsSync(h) || !(within(h, tree) || within(h, realGit))) continue;
    out.readOnly.push(realPathOr(h, h));
    out.hooks.push({ folder: realPathOr(h, h), tree });
  }
  // git's own hooks folder when no `core.hooksPath` names another (its files are read for what they start: F19-3, F19-4),
  // a linked worktree's in its common folder (review r35, W1).
  const gitHooks = join(gitCommonDir(realGit), "hooks");
  if (named.hooks.length === 0 && isDir(gitHooks)) out.hooks.push({ folder: realPathOr(gitHooks, gitHooks), tree });
  // Programs and files its configuration (or the global one) names in the work tree: `filter.*.clean = tools/x.sh`
  // (F14-5), `remote.*.uploadpack = tools/up.sh` (F15-1), `sh clean.sh` (F15-2).
  for (const c of named.commands) if (c !== tree && existsSync(c) && (within(c, tree) || within(c, realGit))) out.readOnly.push(realPathOr(c, c));
  // Listed at every depth: what the index hides from `git status` is compared after the run (F13-9).
  // A git folder whose top an agent filled (no git makes one): refused naming it, not taken for an index git cannot list.
  if (gitFolderCrowded(gitDir)) throw new GuardLimitError("entries", gitDir, gitFolderTopMax);
  const listing = gitlinks(gitDir, tree, gitReadTimeoutMs, pass.privateDir); // "tooBig" too for a FIFO index or HEAD (F17-4), at once
  if (listing === "tooBig") throw new GuardLimitError("index", tree, gitReadTimeoutMs);
  out.seen.hidden.push(...listing.hidden.map((p) => join(tree, p)));
  if (depth >= submoduleDepthMax) return;
  const populated = listing.links.map((l) => join(tree, l)).filter((sub) => present(join(sub, ".git")));
  if (populated.length > limits.gitlinks) throw new GuardLimitError("gitlinks", tree, limits.gitlinks);
  for (const sub of populated) repositoryParts(sub, inside && isDir(join(sub, ".git")), make, out, depth + 1, visited, limits, pass);
}

/** How many more folders of a git folder's `modules/**` the guard walks (`limit` in all, from the git folder `top`). */
interface ModulesBudget {
  left: number;
  limit: number;
  top: string;
  /** The entries of `modules/**` and `worktrees/` read (F19-6: never a whole folder of millions). */
  entries: EntriesRead;
}

/** Git folders that are no work tree's `.git` guarded at most in one writable folder (bare mirrors are many). */
export const looseGitFoldersMax = 1_000;
/** Whether folder `d`, holding a `HEAD`, is shaped as git takes a git folder: `objects/` and `refs/`, or a `commondir`. */
function gitFolderShaped(d: string): boolean {
  return (isDir(join(d, "objects")) && isDir(join(d, "refs"))) || present(join(d, "commondir"));
}

/**
 * The parts of git folder `dir` (a real path in writable folder `folder`) that lies outside every work tree there
 * (F36a-2), into `out`: those of a repository's `.git` (a mount point, its configuration and hooks read-only, `hooks` made when
 * missing), and what its configuration names in it or in the folder — includes, a hooks folder, commands — with
 * relative words read against `dir`, where git runs in a bare repository.
 */
function looseGitFolderParts(dir: string, folder: string, make: boolean, out: Guarded, limits: GuardLimits, pass: ConfigPass): void {
  gitFolderParts(dir, true, make, out, { left: limits.folders, limit: limits.folders, top: dir, entries: { read: 0, limit: limits.entries } });
  const named = configNamed(dir, dir, pass);
  for (const p of [...named.includes, ...named.hooks.flatMap(hookFolders), ...named.commands]) if (p !== dir && p !== folder && within(p, folder) && existsSync(p)) out.readOnly.push(realPathOr(p, p));
  const hooks = named.hooks.length > 0 ? named.hooks.flatMap(hookFolders) : [join(dir, "hooks")];
  for (const h of hooks) if (isDir(h)) out.hooks.push({ folder: realPathOr(h, h), tree: dir });
}

/**
 * The parts of one git folder `dir` (see the module), its `modules/**` and `worktrees/*` with them: the folders
 * `modules` and `worktrees` (and a submodule name's folders between) read-only, so that no git folder is made at
 * their top (F12-1 (b)); each git folder in them a mount point, at every depth (no depth cap leaves one writable).
 * @throws GuardLimitError when `modules/**` holds more folders than `budget` allows, or they and `worktrees/` more entries.
 */
function gitFolderParts(dir: string, inside: boolean, make: boolean, out: Guarded, budget: ModulesBudget): void {
  const real = realPathOr(dir, dir);
  out.seen.gitFolders.push(real);
  // Its replace refs as they are now: one the run adds swaps an object's content behind its id (F38a-1).
  out.seen.replaceRefs.push(...replaceRefs(gitCommonDir(real)).map((r) => `${gitCommonDir(real)} ${r}`));
  out.seen.entries.push(entryId(real) ?? "");
  if (inside) out.mountPoints.push(real);
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
  if (!inside) return gitFolderLinksSeen(real, out);
  const modules = join(dir, "modules");
  if (isDir(modules)) {
    out.readOnlyParents.push(realPathOr(modules, modules));
    // A submodule's name may hold slashes (`modules/libs/a`): a folder with a HEAD is a git folder, others are walked.
    const walk = (d: string) => {
      for (const { name } of countedEntries(d, budget.entries)) {
        const p = join(d, name);
        if (!isDir(p)) continue;
        if (--budget.left < 0) throw new GuardLimitError("folders", budget.top, budget.limit);
        if (existsSync(join(p, "HEAD"))) gitFolderParts(p, true, make, out, budget);
        else {
          out.readOnlyParents.push(realPathOr(p, p));
          walk(p);
        }
      }
    };
    walk(modules);
  }
  const worktrees = join(dir, "worktrees");
  if (isDir(worktrees)) {
    out.readOnlyParents.push(realPathOr(worktrees, worktrees));
    for (const { name: id } of countedEntries(worktrees, budget.entries)) {
      const w = join(worktrees, id);
      if (!isDir(w)) continue;
      const rw = realPathOr(w, w);
      out.mountPoints.push(rw);
      out.seen.worktreeFolders.push(rw);
      for (const name of worktreeSteering) if (existsSync(join(w, name))) out.readOnly.push(realPathOr(join(w, name), join(w, name)));
    }
  }
  gitFolderLinksSeen(real, out);
}

/**
 * The links of git folder `dir` as they are now (yours, if any), into `out`: one made during the run is moved aside
 * after it (F29a-2). @throws GuardLimitError past `gitFolderLinkEntriesMax` entries (a link past them would not be seen).
 */
function gitFolderLinksSeen(dir: string, out: Guarded): void {
  const { links, cut } = gitFolderLinks(dir);
  if (cut) throw new GuardLimitError("entries", dir, gitFolderLinkEntriesMax);
  for (const l of links) out.seen.entries.push(entryId(l) ?? "");
}

/** A writable bind of a sandboxed plugin and what the guard binds in it: place, where in the sandbox, read-only. */
export interface BindGuard {
  path: string;
  at: string;
  readOnly: boolean;
}

/**
 * What the owner's own tools run from the folders of a sandboxed plugin's writable binds (`source` bound at
 * `container`; see `executableParts`), each with its place in the sandbox, parents before what they hold; nothing for
 * a bind of a file; with the folders and what the guard saw in them (`Seen`), for the check after the plugin ran
 * (tools/bind-check.ts). Refused (a message in `lang`) when a folder holds more than the guard looks through.
 */
export function bindGuards(binds: readonly { source: string; container: string }[], lang: Lang): { ok: true; guarded: BindGuard[]; folders: string[]; seen: Seen } | { ok: false; message: string } {
  const out: BindGuard[] = [];
  const folders: string[] = [];
  const seen = noneSeen();
  const pass = new ConfigPass(guardLimits.configFiles);
  for (const { source, container } of binds) {
    if (!isDir(source)) continue;
    const stores = sharedStoreParts(source), holding = stores.find((p) => source === p || source.startsWith(`${p}/`));
    if (holding) return { ok: false, message: t(lang, "tools.sandbox.bindStoreLinked", { path: source, folder: holding }) };
    let parts: Guarded;
    try {
      parts = executableParts(source, false, true, guardLimits, pass);
    } catch (e) {
      if (e instanceof GuardLimitError) return { ok: false, message: guardLimitText(lang, e) };
      throw e;
    }
    folders.push(source);
    for (const k of Object.keys(seen) as (keyof Seen)[]) seen[k].push(...parts.seen[k]);
    const inside = (p: string) => p.startsWith(`${source}/`);
    const at = (p: string) => container + p.slice(source.length);
    // Every folder between the bind and what is mounted in it a mount point too: none of them can be moved away (F13-10).
    const pins = pinnedFolders([source, ...parts.mountPoints], [...parts.readOnlyParents, ...parts.readOnly]);
    const layered = [...[...pins, ...parts.mountPoints].map((p) => ({ p, ro: false })), ...parts.readOnlyParents.map((p) => ({ p, ro: true }))]
      .sort((a, b) => a.p.split("/").length - b.p.split("/").length || Number(a.ro) - Number(b.ro));
    out.push(...layered.filter((l) => inside(l.p)).map((l) => ({ path: l.p, at: at(l.p), readOnly: l.ro })));
    // Dependencies hard-linked from a store every project shares (round 50, F50a-2), as in an agent's folder.
    out.push(...[...parts.readOnly, ...stores].filter(inside).map((p) => ({ path: p, at: at(p), readOnly: true })));
  }
  return { ok: true, guarded: out, folders, seen };
}
