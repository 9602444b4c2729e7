/**
 * The guard's limits and its walk of a folder an agent writes (steering.ts is the guard, planted.ts the check after a
 * run): what it reads, how much at most, and the refusal past a limit — never a folder guarded in part.
 */
import { chmodSync, lstatSync, opendirSync, type Dirent } from "node:fs";
import { dirname, join } from "node:path";
import { tmpdir } from "node:os";
import { byName, entriesUpTo, realPathOr } from "../common/file-checks.js";
import { t, type Lang } from "../i18n/messages.js";

/**
 * How much the guard looks through before a launch; past either it refuses the launch (`GuardLimitError`) rather than
 * leave a part unguarded (issue 26 round 12, F12-1 (a), F12-2).
 */
export interface GuardLimits {
  /** Folders walked below one writable folder to find the repositories in it. */
  folders: number;
  /** Submodules with a `.git` (populated gitlinks) of one repository. */
  gitlinks: number;
  /**
   * Repositories in one writable folder (F14-7: the guard runs git for each, on the worker's thread — 400 of them held a
   * local worker's hub 34 s before a launch and 39 s after it, and their mounts passed bubblewrap's 9,000 arguments).
   */
  repositories: number;
  /**
   * Configuration files read with git for one launch, over all its writable folders: each repository's, what they
   * include, the owner's global ones (F15-6: 98 repositories each with a chain of 10 includes held a local worker's
   * hub 16 s before a launch and 18 s after it; git takes some 5–15 ms per file).
   */
  configFiles: number;
  /**
   * Directory entries the walk for repositories reads below one writable folder, all its folders together, and the
   * same again in each git folder's `modules/**` and `worktrees/` (F19-6: a folder of 9.4 M entries a run left in
   * `~/.claude` was read whole at every launch, 24 s of the hub's thread). Read one by one: past the limit the rest is
   * not read (1,000,000 take some 1.6 s on a loaded 2-core machine).
   */
  entries: number;
}
/** The folder name the walk for repositories does not enter: a package manager's installs, never a repository kept. */
export const notWalked = "node_modules";
/**
 * The symbolic links and FIFOs a walk after a run collects at most in one writable folder; past it the folder counts as not
 * walked through (a run that made that many is marked, unchecked.ts). Each is resolved once (~50 µs).
 */
export const walkLinksMax = 100_000;
/** The limits of every launch. */
export const guardLimits: GuardLimits = { folders: 100_000, gitlinks: 500, repositories: 100, configFiles: 250, entries: 1_000_000 };

/**
 * The guard could not look at all of `folder` within a limit (`kind`: the walk, a repository's gitlinks, its index, the
 * walk of the owner's home for its links, the configuration files read, the entries the walk read — `folder` the one
 * it was reading then; `configSize`: `folder` is a configuration
 * file larger than `limit` MiB, `configRead`: one git could not read within `limit` ms or refused — F16-6).
 */
export class GuardLimitError extends Error {
  constructor(readonly kind: "folders" | "gitlinks" | "home" | "index" | "repositories" | "configFiles" | "configSize" | "configRead" | "entries" | "unreadable" | "links", readonly folder: string, readonly limit: number) {
    super(`${kind}: ${folder} (${limit})`);
  }
}

/** Why a launch is refused for `e`, in `lang` (the folder, the limit, what to change). */
export function guardLimitText(lang: Lang, e: GuardLimitError): string {
  return t(lang, `sandbox.guardLimit.${e.kind}`, { folder: e.folder, limit: String(e.limit) });
}

/**
 * The guard's walk of `folder`, without following links, not into git folders nor `node_modules` (`notWalked`): the
 * work trees of its repositories (itself first when it is one: every folder holding a `.git` entry), and the folders
 * holding an editor's or CLI's project part (`.vscode`, `.claude`, `.mcp.json`…; round 21, F21-2: a monorepo
 * package's `web/.claude/settings.json`, which the owner's Claude Code started in `web/` reads), and the folders it
 * could not list though the owner's tools still enter them by name (`unlistable`; round 29, F29a-3: a `chmod 0311`
 * folder, or a path past the system's length, hid a new repository and a `.claude` from the check after the run), or
 * holding a name that is not UTF-8. `restore` (the check after a run): the user's own folders made readable again first.
 * @throws GuardLimitError when it holds more than `limits.folders` folders, or more than `limits.entries` entries (the
 *   one read then named; refused as soon as the limit is passed).
 */
export function walkOf(folder: string, limits: GuardLimits, steers: ReadonlySet<string>, restore = false): Walked {
  const [trees, steered, unreadable, heads, links, fifos]: string[][] = [[], [], [], [], [], []];
  const queue = [folder];
  const read: EntriesRead = { read: 0, limit: limits.entries };
  for (let walked = 0; walked < queue.length; walked++) {
    if (walked >= limits.folders) throw new GuardLimitError("folders", folder, limits.folders);
    const d = queue[walked]!;
    let steering = false;
    let entries = countedEntries(d, read);
    const refused = entries.length === 0 ? unlistable(d) : null;
    // After a run, a folder of the user's the run made unlistable is made readable again and walked (a `chmod 0311 .`
    // must not get the whole project moved aside); what stays unlistable is named.
    if (refused !== null && restore && refused.mode && readableAgain(refused.at)) entries = countedEntries(d, read);
    else if (refused !== null) unreadable.push(refused.at);
    for (const e of entries) {
      // A name that is not UTF-8 is read back as another (U+FFFD): what it holds could not be looked at by its name.
      if (e.name.includes("\uFFFD")) {
        unreadable.push(d);
        continue;
      }
      if (e.name === ".git") trees.push(d);
      // What a package manager installed holds no repository of the owner's (npm, pnpm and yarn strip `.git`), and a
      // project's node_modules alone often holds more folders than the walk's limit.
      else if (e.isDirectory() && e.name !== notWalked) queue.push(join(d, e.name));
      if (steers.has(e.name)) steering = true;
      if (e.name === "HEAD") heads.push(d);
      if (restore && (e.isSymbolicLink() || e.isFIFO())) {
        if (links.length + fifos.length >= walkLinksMax) throw new GuardLimitError("links", d, walkLinksMax);
        (e.isFIFO() ? fifos : links).push(join(d, e.name));
      }
    }
    if (steering) steered.push(d);
  }
  return { trees, steered, unreadable: [...new Set(unreadable)], heads, links, fifos };
}

/**
 * The folder to name (`at`) when `d` cannot be listed by the hub's user while the owner's tools may still enter it by
 * name, and whether its mode is why (`mode`: giving the user its permissions back would let it be read), or null when it can (or is gone, or is another user's, which no agent of this user writes): `d`, one of the user's own
 * without read or search permission (the agent runs as that user and may `chmod` it); its parent, when that one refuses
 * the search (`chmod 600 x`: `x` is listed, `x/y` cannot be entered) or when `d`'s path is past the system's length.
 */
function unlistable(d: string): { at: string; mode: boolean } | null {
  try {
    opendirSync(d).closeSync();
    return null;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENAMETOOLONG") return { at: dirname(d), mode: false };
    if (code !== "EACCES" && code !== "EPERM") return null;
    // Only where the user's own mode bits say why (u-r or u-x): a refusal of another kind — a proc mount's folders of
    // other processes, which no chmod made — is not an agent's doing, and no agent can write in such folders.
    const refusedBy = (p: string, bits: number): boolean | null => {
      try {
        const st = lstatSync(p);
        return st.uid === process.getuid?.() && (st.mode & bits) !== bits;
      } catch {
        return null; // cannot be looked at: the folder above refuses the search
      }
    };
    const self = refusedBy(d, 0o500);
    if (self === null) return refusedBy(dirname(d), 0o100) === true ? { at: dirname(d), mode: true } : null;
    return self ? { at: d, mode: true } : null;
  }
}

/** Gives the user read and search permission on its own folder `d` again (adds `u+rwx`); whether it did. */
function readableAgain(d: string): boolean {
  try {
    const st = lstatSync(d);
    if (!st.isDirectory() || st.uid !== process.getuid?.()) return false;
    chmodSync(d, (st.mode & 0o7777) | 0o700);
    return true;
  } catch {
    return false;
  }
}

/**
 * What a walk found: work trees (folders holding a `.git`), folders holding a steering part, folders it could not list,
 * and folders holding an entry named `HEAD` — the one name git's discovery needs to take a folder for a git folder
 * (its objects and refs may lie elsewhere, named by a `commondir`; round 31, F31a-1), which it does before looking at
 * a `.git` above it, or when the `.git` beside it is invalid (round 30, F30a-3).
 */
export interface Walked {
  trees: string[];
  steered: string[];
  unreadable: string[];
  heads: string[];
  /**
   * After a run (`restore`), the symbolic links the walk met, at most `walkLinksMax` (planted.ts looks at where each
   * leads; round 34, F34a-1); none at a launch.
   */
  links: string[];
  /** After a run, the FIFOs the walk met (with `links`, at most `walkLinksMax`): git's `open()` of one waits forever (round 35, F35a-3). */
  fifos: string[];
}

/** Entries the guard has read in a walk (`read`) and may read in all (`limit`: `GuardLimits.entries`). */
export interface EntriesRead {
  read: number;
  limit: number;
}

/**
 * The entries of folder `d` (none when it is gone or cannot be read: then not by the owner's git either), in name
 * order as readdir lists them (what the guard finds in a stable order), counted into `read`.
 * @throws GuardLimitError ("entries", naming `d`) as soon as more than `read.limit` are read in all: the rest unread.
 */
export function countedEntries(d: string, read: EntriesRead): Dirent[] {
  const entries = entriesUpTo(d, read.limit - read.read);
  read.read += entries.length;
  if (read.read > read.limit) throw new GuardLimitError("entries", d, read.limit);
  return entries.sort(byName);
}

/**
 * The shared temporary roots (`/tmp`, `/var/tmp`, the system's temporary folder), as real paths: every program's
 * files lie below them, so the guard and the check after a run look there at the folder's own repository only.
 */
export function sharedTempRoots(): string[] {
  return [...new Set(["/tmp", "/var/tmp", tmpdir()].map((d) => realPathOr(d, d)))];
}
