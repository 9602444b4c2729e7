/**
 * The check after a sandboxed run (issue 26 round 11 F1, round 12 F12-1): what the agent planted in the folders it
 * wrote that steers the owner's git or tools and that no sandbox mount could refuse — the index and the top of each git
 * folder stay writable, and a missing file cannot be replaced by a placeholder git accepts. Each is compared with what
 * the guard saw before the run (steering.ts `Seen`): by the entry itself, never by where it leads (a `.git` link made
 * during the run is new whatever it points at), and every gitlink of every repository guarded, at every depth, with no
 * cap. What is new is moved aside to a name the agent cannot know beforehand, and the worker says so in a notice.
 */
import { randomBytes } from "node:crypto";
import { lstatSync, mkdirSync, realpathSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { isLink, present, realPathOr, within } from "../common/file-checks.js";
import { cardTextMaxCodepoints } from "../kernel/limits.js";
import { escapedLine } from "../kernel/text.js";
import type { Notice } from "../protocol/schema.js";
import { t, type Lang } from "../i18n/messages.js";
import { moveAside, type CopyBudget } from "./files.js";
import { newJudgements, plantedBehindLink } from "./link-targets.js";
import { globMatches } from "./hook-managers.js";
import { dropPackedReplaceRefs, objectsChanged, replaceRefs } from "./git-objects.js";
import { configFileBytesMax, ConfigFilesLimitError, configNamed, type ConfigNamed, ConfigPass } from "./git-config.js";
import { entryId, gitCommonDir, gitDirOf, gitFolderLinks, gitObjectFifos, gitFolderTop, gitlinks, gitReadTimeoutMs, hookFolders, plantedGitMs, reachedInside } from "./git-read.js";
import { walkLinksMax } from "./guard-walk.js";
import { ctimeSlackMs, maskedChanges, maskedCheckLimits, timeLeft, type MaskedLimits } from "./index-stat.js";
import { gitSteering, guardLimits, headFolderSteering, homeLinkTargets, projectSteeringFiles, guardWalk, sharedTempRoots, steeringNames, worktreeSteering, type Seen, type Walked } from "./steering.js";

/**
 * One planted part found after a run: moved aside (to `movedTo`), kept (a repository the agent made), stuck, an index
 * entry marked so that `git status` does not show its changes (`hidden`, left as it is), a file whose change the
 * index hides by its stat data (`masked`: index-stat.ts, left as it is), one whose stat data git takes as unchanged
 * but too large to hash within the check's budget (`maskBig`, F16-5), a repository whose check for those was cut
 * short at `maskedCheckLimits` (`maskCut`), a folder the look for what the run made could not walk through (`walkCut`:
 * `movedTo` is then the mark that holds later launches there, unchecked.ts; round 30, F30a-1), or a repository whose configuration the check did not read to its end
 * (`unread`: past `GuardLimits.configFiles`), or a configuration file it did not read (`unreadFile`: larger than
 * `configFileBytesMax`, or one git could not read in time; F16-6), or a guarded path whose index or `HEAD` entry the
 * run changed (`repoContent`: git-state.ts; round 27, F27a-4).
 */
export interface Planted {
  path: string;
  movedTo: string | null;
  kind: "moved" | "kept" | "stuck" | "hidden" | "masked" | "maskBig" | "maskCut" | "unread" | "unreadFile" | "repoContent" | "walkCut" | "unwatched" | "replaceRef";
}

/** The optional parts of `plantedSteering`: the run's launch (ms since the epoch), the index check's and the configuration reading's limits, the guard's reading at launch. */
export interface PlantedOptions {
  sinceMs?: number;
  masked?: MaskedLimits;
  configFiles?: number;
  before?: ConfigPass;
  /** Where the check's git reads make their private folders (git-isolated.ts `gitPrivateDir`): `before`'s by default. */
  privateDir?: string;
}


/**
 * Whose planted entries a check moves, and where (round 29, F29a-1): `quarantine`, a folder of the worker's home, which
 * no sandbox shows — moved beside itself, a `rebase-merge/` with an `exec` line was put back in place by another run
 * writing the same folder, while the card said it was moved. Null: beside each entry (a quarantine that cannot take an
 * entry — another file system, a full disk, a path too long — falls back to that too).
 */
export interface AsideTo {
  run: number;
  quarantine: string | null;
  /** What the worker's checks moved aside (each move noted there). */
  moved?: MovedAside;
  /** What this check may copy of files moved aside with more names (files.ts `moveAside`); one file's worth without. */
  copies?: CopyBudget;
}

/** Paths the worker remembers having moved aside (the oldest forgotten past it). */
export const movedRememberedMax = 10_000;

/**
 * What a worker's checks after runs moved aside, each path with when (ms since the epoch): one moved since a run's
 * launch and there again is new to that run's check too, though its launch guarded it (round 29 review).
 */
export class MovedAside {
  private readonly at = new Map<string, number>();

  /** Notes that `path` was moved aside at `ms`. */
  note(path: string, ms = Date.now()): void {
    this.at.delete(path);
    this.at.set(path, ms);
    if (this.at.size > movedRememberedMax) this.at.delete(this.at.keys().next().value as string);
  }

  /** Whether `path` was moved aside at `ms` or later. */
  since(path: string, ms: number): boolean {
    return (this.at.get(path) ?? -Infinity) >= ms;
  }
}

/** The folder of the worker's home (`Home.worker`) that holds what the checks after runs moved aside. */
export const plantedFolderName = "planted";

/**
 * A new folder `<quarantine>/run-<run>-<hex>/<folder>` (the entries' folder's path again below it, so each says where
 * it came from; private), or null when it cannot be made (the worker's home unwritable, a path past the system's length).
 */
export function quarantineBox(quarantine: string, run: number, hex: string, folder: string): string | null {
  try {
    mkdirSync(quarantine, { recursive: true, mode: 0o700 });
    // Its real path: the move checks each folder it opens is the one named (a home reached through a link failed that).
    const box = join(realpathSync.native(quarantine), `run-${run}-${hex}`, folder);
    mkdirSync(box, { recursive: true, mode: 0o700 });
    return box;
  } catch {
    return null;
  }
}

/** `run` as an `AsideTo` (a bare run number: beside each entry). */
export function asideTo(run: number | AsideTo): AsideTo {
  return typeof run === "number" ? { run, quarantine: null } : run;
}

/**
 * Moves `path` aside into a new folder `run-<run>-<16 hex digits>/<its folder>` of the quarantine (`AsideTo`), else to
 * `<path>.planted-run-<run>-<16 hex digits>` (random: the agent knows its run, so a fixed name could be taken first;
 * F12-1 (c); the name cut to fit, F29a-3), or to `to` when given; when its folder was made unwritable (the agent runs
 * as the hub's user and may chmod it), writable for the move and its mode put back after. Never throws: "stuck" when
 * the move still fails.
 */
export function movePlantedAside(path: string, run: number | AsideTo, to?: string): Planted {
  const found = movedOnce(path, run, to);
  if (found.kind === "moved") asideTo(run).moved?.note(path);
  return found;
}

/** `movePlantedAside` but for noting the move. */
function movedOnce(path: string, run: number | AsideTo, to?: string): Planted {
  const { run: id, quarantine } = asideTo(run);
  const hex = randomBytes(8).toString("hex");
  if (to === undefined && quarantine !== null) {
    const box = quarantineBox(quarantine, id, hex, dirname(path));
    if (box !== null) {
      try {
        return { path, movedTo: moveAside(path, join(box, basename(path)), true, asideTo(run).copies), kind: "moved" };
      } catch {
        // The quarantine could not take it (another file system, a full disk): beside it, as before, the empty box removed.
        try {
          rmSync(join(realpathSync.native(quarantine), `run-${id}-${hex}`), { recursive: true, force: true });
        } catch {
          // left empty: nothing of the run's in it
        }
      }
    }
  }
  try {
    return { path, movedTo: moveAside(path, to ?? join(dirname(path), fitName(basename(path), `.planted-run-${id}-${hex}`)), true, asideTo(run).copies), kind: "moved" };
  } catch {
    return { path, movedTo: null, kind: "stuck" };
  }
}

/** The longest file name in bytes most file systems take (NAME_MAX). */
const nameBytesMax = 255;

/**
 * `name` + `suffix`, `name` cut (whole code points) so the whole fits `nameBytesMax` bytes: a planted entry of a
 * 250-character name stayed in place, its aside name too long (round 29, F29a-3).
 */
function fitName(name: string, suffix: string): string {
  const room = nameBytesMax - Buffer.byteLength(suffix);
  let kept = "";
  for (const c of name) {
    if (Buffer.byteLength(kept + c) > room) break;
    kept += c;
  }
  return kept + suffix;
}

/**
 * After a sandboxed run: what in `folders` (the writable folders of its launches) now steers the owner's git or tools
 * and was not there when the run started (`guarded`: the real paths its launches guarded; `seen`: what the guard
 * looked at) — moved aside (`movePlantedAside`):
 * - the `.git` of a repository seen below a folder that is not the entry seen (its parent renamed, a copy put back);
 * - a git folder seen that is not the folder seen (a gitfile's, renamed away and a copy put back), whole;
 * - in each git folder seen: a `commondir`, `config.worktree`, `config` or `hooks` that was not there (F12-1 (d)), and
 *   a `modules` or `worktrees` folder that was not; in each linked worktree's folder its `commondir`, `gitdir`,
 *   `config.worktree`;
 * - what each repository's configuration names (`include.path`, `includeIf.*.path`, `core.hooksPath`) inside
 *   `folders` that was not there — also of a repository holding a folder (F13-8) — and what the owner's global
 *   configuration includes (F13-6);
 * - the `.git` (folder, gitfile or link) at any gitlink of every repository seen (submodules at every depth the guard
 *   walked; F12-1 (e)) that is not the entry seen before (F12-1 (a), (b)); an index git cannot list in time is itself
 *   moved aside (never left unlooked at);
 * - a project steering file (`.mcp.json`, `opencode.json`, …) that was not there (F12-8), and an editor's or CLI's
 *   project part (`.claude`, `.vscode`, `.mcp.json`, …) new at any depth of `folders` (steering.ts `walkOf`, F21-2);
 * - where a link of the owner's home or a PATH folder leads (steering.ts `homeLinkTargets`), when it was missing (F15-4);
 * - a system command in a folder a guarded hook runner puts first on PATH in the work tree (`node_modules/.bin/sh`),
 *   when it was missing (script-refs.ts `hookShadows`; F19-2).
 * A new `.git` of a folder itself (a repository the agent made: its output) is left where it is but named ("kept"),
 * and its `commondir` moved. With `options.sinceMs` (the run's launch, ms since the epoch), each repository's tracked
 * files changed since then whose change the index hides by its stat data are named too ("masked", index-stat.ts;
 * F14-2), within `options.masked` for the whole run ("maskCut" beyond). Configuration files are read at most
 * `options.configFiles` (the guard's limit: the guard read these files before the run, so only a repository the agent
 * made, or the owner's changes meanwhile, reach it); a repository whose configuration is not read to its end is named
 * (`unread`). A file the run could not write (outside `folders`, or guarded read-only) is taken from `options.before`
 * (the guard's reading at launch) when it read it, not read again. Never throws.
 */
export function plantedSteering(folders: readonly string[], guarded: ReadonlySet<string>, seen: Seen, run: number | AsideTo, options: PlantedOptions = {}): Planted[] {
  const { sinceMs, masked: limits = maskedCheckLimits, configFiles = guardLimits.configFiles, before, privateDir } = options;
  const found: Planted[] = [];
  const done = new Set<string>();
  const entries = new Set(seen.entries);
  const gitFolders = new Set(seen.gitFolders);
  const heads = new Set(seen.heads);
  // Only what the agent could write: a change elsewhere (the owner's, meanwhile) is not its.
  const inFolders = (p: string) => folders.some((f) => within(p, f));
  const shared = sharedTempRoots();
  const judged = newJudgements();
  // Never what this check moved beside itself (a FIFO the quarantine could not take keeps a name git still reads:
  // `sharedindex.<x>.planted-run-…`, F17-4).
  const aside = (path: string) => {
    if (done.has(path) || !inFolders(path) || found.some((f) => f.movedTo === path)) return;
    done.add(path);
    found.push(movePlantedAside(path, run));
  };
  // New: there, and not the path guarded (a link is new whatever it leads to: a bound path is never one), unless it is
  // the very link the guard saw at launch (the same entry and target: round 27, F27a-6, the owner's dotfile link).
  // Or one a check moved aside since this run's launch, there again (round 29 review: a run launched while another
  // run's plant stood there guarded it as the owner's; once that run's check moved it, this one put one back).
  const movedSince = (path: string) => sinceMs !== undefined && (asideTo(run).moved?.since(path, sinceMs) ?? false);
  // Made or changed since the run's launch, by its inode's change time (no program sets it back; a rename or link sets
  // it); without `sinceMs` (no launch time known) nothing counts.
  const changedSince = (path: string) => {
    try {
      return sinceMs !== undefined && lstatSync(path).ctimeMs >= sinceMs - ctimeSlackMs;
    } catch {
      return false;
    }
  };
  const isNew = (path: string) => present(path) && ((isLink(path) ? !entries.has(entryId(path) ?? "") : !guarded.has(path)) || movedSince(path));
  // Each configuration file read once, the global ones once (F15-6); an included file made during the run in a folder
  // is not read: it is moved aside, so git will not read it, nor what it names — the files read stay those the guard
  // read before the run (their limit), and the repository the agent made at a folder's top.
  const real = (file: string) => realPathOr(file, file);
  const unchanged = (file: string) => !inFolders(real(file)) || (guarded.has(real(file)) && !isLink(file));
  const pass = new ConfigPass(configFiles, (file) => inFolders(real(file)) && isNew(real(file)), before && { pass: before, unchanged }, privateDir ?? before?.privateDir);
  // What a repository's configuration names, or none when the limit stops its reading (the repository is named).
  const named = (at: string, read: () => ConfigNamed): ConfigNamed => {
    try {
      return read();
    } catch (e) {
      if (!(e instanceof ConfigFilesLimitError)) throw e;
      // A file too large, or one git could not read, is named itself (F16-6); past the count, the repository.
      found.push({ path: e.file ?? at, movedTo: null, kind: e.file === null ? "unread" : "unreadFile" });
      return { includes: [], hooks: [], commands: [] };
    }
  };
  // A link made in a git folder (round 29, F29a-2: `logs/HEAD -> ~/.bashrc`): the owner's git writes through it.
  const linksAside = (gitDir: string) => {
    const { links, fifos, cut } = gitFolderLinks(gitDir);
    const objects = gitObjectFifos(gitDir);
    for (const l of links) if (isNew(l)) aside(l);
    for (const f of [...fifos, ...objects.fifos]) aside(f);
    if (cut || objects.cut) found.push({ path: gitDir, movedTo: null, kind: "maskCut" });
    contentAside(gitDir);
  };
  // What git takes an id's content from (round 38, F38a-1, F38a-2): a replace ref the launch did not see (a loose one
  // moved aside, a packed one taken out of packed-refs), a loose object changed during the run that is not what its
  // name says, a commit-graph or multi-pack-index written during the run (git builds them again).
  const launchRefs = new Set(seen.replaceRefs);
  const contentAside = (gitDir: string) => {
    const common = gitCommonDir(gitDir);
    // Removed, not moved beside (git would still read `refs/replace/<id>.planted-run-…` as the id's replacement).
    const added = inFolders(common) ? replaceRefs(common).filter((r) => !launchRefs.has(`${common} ${r}`)).map((r) => r.split(" ")[0]!) : [];
    for (const ref of added.filter((r) => present(join(common, r)))) {
      try {
        rmSync(join(common, ref), { recursive: true });
        found.push({ path: join(common, ref), movedTo: null, kind: "replaceRef" });
      } catch {
        found.push({ path: join(common, ref), movedTo: null, kind: "stuck" });
      }
    }
    const packed = added.filter((ref) => !present(join(common, ref)));
    try {
      if (packed.length > 0 && dropPackedReplaceRefs(common, packed)) for (const ref of packed) found.push({ path: `${join(common, "packed-refs")}: ${ref}`, movedTo: null, kind: "replaceRef" });
    } catch {
      found.push({ path: join(common, "packed-refs"), movedTo: null, kind: "stuck" });
    }
    if (sinceMs === undefined) return;
    const changed = objectsChanged(gitDir, sinceMs - ctimeSlackMs);
    for (const p of [...changed.forged, ...changed.caches]) aside(p);
    for (const p of changed.unchecked) found.push({ path: p, movedTo: null, kind: "maskBig" });
    if (changed.cut) found.push({ path: gitDir, movedTo: null, kind: "maskCut" });
  };
  const global = named(join(process.env.HOME ?? "/", ".gitconfig"), () => pass.global());
  const repositories = new Set(seen.repositories);
  for (const folder of folders) {
    const git = join(folder, ".git");
    if (!present(git)) continue;
    repositories.add(folder);
    if (entries.has(entryId(git) ?? "")) continue;
    found.push({ path: git, movedTo: null, kind: "kept" });
    const gitDir = gitDirOf(folder);
    if (gitDir !== null && !gitFolders.has(gitDir) && isNew(join(gitDir, "commondir"))) aside(join(gitDir, "commondir"));
    if (gitDir !== null && !gitFolders.has(gitDir) && inFolders(gitDir)) linksAside(gitDir);
  }
  // A repository seen below a folder whose `.git` is no longer the entry seen: its parent folder was renamed (only
  // a mount point itself cannot be) and a copy with another configuration put in its place.
  for (const tree of seen.repositories) {
    const git = join(tree, ".git");
    if (!folders.includes(tree) && present(git) && !entries.has(entryId(git) ?? "")) aside(git);
  }
  // A git folder that is no longer the one seen (one a gitfile names, not a mount point: its parent renamed, a copy
  // put back) is moved aside whole; then in the others, first a commondir: it sends git's reading elsewhere.
  for (const dir of seen.gitFolders) if (present(dir) && !entries.has(entryId(dir) ?? "")) aside(dir);
  for (const dir of seen.gitFolders) {
    if (done.has(dir)) continue;
    for (const name of [...gitSteering, "modules", "worktrees"]) if (isNew(join(dir, name))) aside(join(dir, name));
    linksAside(dir);
  }
  for (const dir of seen.worktreeFolders) for (const name of worktreeSteering) if (isNew(join(dir, name))) aside(join(dir, name));
  // The repositories holding a folder (F13-8) too: what their configuration names, and a `.git` put at one of their
  // gitlinks inside a folder (the owner's `git status` there would read its configuration).
  const hidden = new Set(seen.hidden);
  const enclosing = new Set(seen.enclosing);
  // One deadline for git over the whole check (F17-4): what is left unread past it is named, not waited for.
  const budget = { ...limits, until: Date.now() + plantedGitMs };
  for (const tree of [...repositories, ...enclosing]) {
    const gitDir = gitDirOf(tree);
    if (gitDir === null) continue;
    // A FIFO index or HEAD would hold git (and the owner's git) until a writer comes: moved aside, never read.
    const top = gitFolderTop(gitDir);
    if (top.blocking.length > 0) {
      for (const p of top.blocking) aside(p);
      continue;
    }
    if (Date.now() >= budget.until) {
      found.push({ path: tree, movedTo: null, kind: "maskCut" });
      continue;
    }
    const config = named(tree, () => configNamed(gitDir, tree, pass));
    // The commands as the guard took them: in the work tree or the git folder only (steering.ts repositoryParts).
    const commands = config.commands.filter((c) => c !== tree && (within(c, tree) || within(c, gitDir)));
    for (const p of [...config.includes, ...config.hooks.flatMap(hookFolders), ...commands]) if (isNew(p)) aside(p);
    // A top no git makes (more than `gitFolderTopMax` entries): its index is not listed; named as looked at short.
    if (top.crowded) {
      found.push({ path: tree, movedTo: null, kind: "maskCut" });
      continue;
    }
    const listing = gitlinks(gitDir, tree, timeLeft(budget), pass.privateDir);
    if (listing === "tooBig") {
      aside(join(gitDir, "index"));
      continue;
    }
    // Entries marked during the run so that the owner's `git status` and `git diff` do not show their changes (F13-9):
    // named, not unmarked (a sparse checkout marks entries too). A holding repository's index is not the agent's to write.
    if (!enclosing.has(tree)) {
      for (const p of listing.hidden) if (!hidden.has(join(tree, p))) found.push({ path: join(tree, p), movedTo: null, kind: "hidden" });
      // Changes hidden with no mark: an entry keeping the committed object id with the changed file's stat (F14-2).
      if (sinceMs !== undefined) {
        const masked = maskedChanges(gitDir, tree, sinceMs, budget, pass.privateDir);
        for (const p of masked.masked) found.push({ path: p, movedTo: null, kind: "masked" });
        for (const p of masked.unhashed) found.push({ path: p, movedTo: null, kind: "maskBig" });
        if (masked.cut) found.push({ path: tree, movedTo: null, kind: "maskCut" });
      }
    }
    for (const link of listing.links) {
      const sub = join(tree, link, ".git");
      if (present(sub) && reachedInside(tree, sub) && !entries.has(entryId(sub) ?? "")) aside(sub);
    }
  }
  for (const dir of seen.projects) for (const name of projectSteeringFiles) if (isNew(join(dir, name))) aside(join(dir, name));
  // An editor's or CLI's project part new at any depth (F21-2: `web/.claude/settings.json`, `~/shared/.vscode/`), found
  // by the guard's own walk within its limits; a folder past them is named as looked at short. Not a folder the owner
  // named writable itself (a CLI's state given as `<cwd>/.claude`).
  for (const folder of folders) {
    let walk: Walked;
    try {
      walk = guardWalk(folder, guardLimits, true);
    } catch {
      // Past a limit, or a file system error the walk did not expect: never thrown (the result would go out unchecked
      // after the worker's retry; round 29 review), and never in silence (round 30, F30a-1: a run made 101,000 folders
      // so that its new repositories stayed): the folder is marked, and launches there wait for the owner (unchecked.ts).
      found.push({ path: folder, movedTo: null, kind: "walkCut" });
      continue;
    }
    for (const dir of walk.steered) for (const name of steeringNames) if (!folders.includes(join(dir, name)) && isNew(join(dir, name))) aside(join(dir, name));
    // A repository new below the folder (round 28, F28a-1: `vendor/lib/.git` with a `core.fsmonitor`, then committed as
    // a submodule by the next run, whose guard took it for the owner's; the owner's `git status` ran it): its `.git`
    // moved aside, the files left. The folder's own new one is named above ("kept").
    for (const tree of walk.trees) if (!folders.includes(tree) && !repositories.has(tree)) aside(join(tree, ".git"));
    // A link that leads where the walk does not look and where the owner's git finds a repository the launch did not
    // see, or a CLI its settings (round 34, F34a-1: `lib2 -> .git/lib2`, `web -> node_modules/.cache/web`).
    for (const link of walk.links) if (plantedBehindLink(link, folders, shared, seen, judged)) aside(link);
    // A FIFO made during the run (round 35, F35a-3: `.gitattributes` and `tools/.gitignore` as FIFOs held the owner's
    // `git status` and `git add` until killed): git and editors open what they find by name, and wait there.
    for (const fifo of walk.fifos) if (changedSince(fifo)) aside(fifo);
    // A folder of a work tree git would take for a git folder (an entry named `HEAD`; its objects and refs there or
    // where a `commondir` names), new since the launch (not a folder the launch's walk found holding a HEAD, by its
    // identity: made, or renamed into place, during the run) or whose configuration, hooks or commondir the run made or
    // changed: its HEAD moved aside, so git finds no repository there (round 30, F30a-3: with the project's `.git/HEAD`
    // made invalid, git took the project folder itself for the repository and ran the agent's `core.pager`; round 31,
    // F31a-1: split over two folders by a `commondir`, F31a-2: laid out over two runs, HEAD first). Only in a work tree
    // (at or below a folder holding a `.git`, or below a repository holding the folder), where your git started in the
    // project or a folder of it finds it first; a bare repository a tool keeps outside any work tree (a mirror, the
    // delivery plugin's store) is its own. Not a git folder the guard saw at launch (a `--separate-git-dir` in the
    // project), nor one this check moved aside beside itself (the quarantine could not take it).
    const trees = [...walk.trees, ...enclosing];
    const movedHere = (d: string) => found.some((f) => f.movedTo !== null && within(d, f.movedTo));
    for (const d of walk.heads) {
      if (gitFolders.has(d) || !trees.some((t) => within(d, t)) || movedHere(d)) continue;
      if (!heads.has(entryId(d) ?? "") || headFolderSteering.some((name) => changedSince(join(d, name)))) aside(join(d, "HEAD"));
    }
    // A folder still unlistable after the walk made the user's own readable again (round 29, F29a-3: nested past the
    // path's length, a name that is not UTF-8): what it holds is not looked at, so it is moved aside whole (the launch
    // refuses one, so none is the owner's) — never a writable folder itself, named as looked at short.
    for (const d of walk.unreadable) {
      if (folders.includes(d)) found.push({ path: d, movedTo: null, kind: "maskCut" });
      else aside(d);
    }
  }
  // Below a writable folder that is a shared temporary root (a rule's cwd "/tmp") lie every program's files — a clone
  // whose `node_modules/.bin` is on PATH, made by npm meanwhile —, so what the owner's configuration or links name
  // there is looked at only below the run's other folders (the guard kept what was there at launch read-only).
  const ownedBy = (p: string) => folders.some((f) => !shared.includes(f) && within(p, f));
  // What the owner's global configuration includes or names as hooks, made in a folder during the run (F13-6).
  for (const p of [...global.includes, ...global.hooks.flatMap(hookFolders), ...global.commands]) if (ownedBy(p) && isNew(p)) aside(p);
  // Where a link of the home's or a PATH folder leads, made during the run (F15-4: `~/.local/bin -> ../dotfiles/localbin`
  // missing at launch) — never a folder itself (a dotfile link to the whole project, as the guard leaves it writable);
  // not the links in a folder the run wrote (an agent CLI's state, `~/.claude`): the agent's, looked at there.
  for (const p of homeLinkTargets(true, undefined, folders)) if (!folders.includes(p) && ownedBy(p) && isNew(p)) aside(p);
  // A system command a guarded hook runner looks up first in the work tree, missing at launch (F19-2: husky's
  // `node_modules/.bin/sh`).
  // A script a hook or hook manager runs, missing at launch (W3), moved aside from the first link on its way in the
  // folder (the round-37 review: `tools -> node_modules/.cache/t` holding it could not be moved through); a hook
  // manager's glob's match made during the run (EX-2: `extends: lefthook-*.yml`).
  for (const p of seen.shadows) if (present(p)) aside(linkOnWay(p, folders) ?? p);
  for (const g of seen.globs) for (const p of globMatches(g)) if (isNew(p)) aside(p);
  return found;
}

/** The first symbolic link on the way to `path` below the folder of `folders` holding it, or null. */
function linkOnWay(path: string, folders: readonly string[]): string | null {
  const top = folders.filter((f) => within(path, f)).sort((a, b) => b.length - a.length)[0];
  if (top === undefined) return null;
  for (let at = top, rest = path.slice(top.length).split("/").filter(Boolean); rest.length > 1; rest = rest.slice(1)) {
    at = join(at, rest[0]!);
    if (isLink(at)) return at;
  }
  return null;
}

/**
 * The notice card that tells the owner what `plantedSteering` found (in `lang`), or null when it found nothing.
 * @param more entries handled the same way beyond `planted`, counted only (state-planted.ts `StateFound`).
 */
export function plantedNotice(planted: readonly Planted[], lang: Lang, more = 0): Notice | null {
  if (planted.length === 0) return null;
  // The agent chose these names: a control character or line break in one would get the whole result refused (the
  // run then hangs) or add lines of the agent's to the card (issue 26 round 12, F12-9). Shown escaped, as they are.
  const shown = escapedLine;
  const mib = String(maskedCheckLimits.bytes / (1024 * 1024));
  const line = (p: Planted) => p.kind === "moved"
    ? t(lang, "sandbox.planted.moved", { path: shown(p.path), to: shown(p.movedTo ?? "") })
    : p.kind === "walkCut"
      ? t(lang, p.movedTo === null ? "sandbox.planted.walkCutUnmarked" : "sandbox.planted.walkCut", { path: shown(p.path), mark: shown(p.movedTo ?? ""), folders: String(guardLimits.folders), entries: String(guardLimits.entries), links: String(walkLinksMax) })
    : p.kind === "unwatched"
      ? t(lang, "sandbox.planted.unwatched", { path: shown(p.path) })
    : p.kind === "maskCut" || p.kind === "maskBig"
      ? t(lang, `sandbox.planted.${p.kind}`, { path: shown(p.path), files: String(maskedCheckLimits.files), mib })
      : t(lang, `sandbox.planted.${p.kind}`, { path: shown(p.path), limit: String(guardLimits.configFiles), mib: String(configFileBytesMax / (1024 * 1024)), seconds: String(gitReadTimeoutMs / 1000) });
  // Whole lines while they fit, then how many more (F17-5: 30,000 moved entries showed 29 lines and a cut one).
  const lines: string[] = [];
  let used = 0;
  for (const [i, p] of planted.entries()) {
    const l = line(p);
    const rest = t(lang, "sandbox.planted.more", { n: String(planted.length + more - i) });
    const room = cardTextMaxCodepoints - used - (i + 1 < planted.length + more ? [...rest].length + 1 : 0);
    if (i > 0 && [...l].length + 1 > room) {
      lines.push(rest);
      break;
    }
    lines.push(l);
    used += [...l].length + 1;
  }
  if (lines.length === planted.length && more > 0) lines.push(t(lang, "sandbox.planted.more", { n: String(more) }));
  return { title: t(lang, "sandbox.planted.title"), text: [...lines.join("\n")].slice(0, cardTextMaxCodepoints).join("") };
}
