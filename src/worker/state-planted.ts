/**
 * The check after a sandboxed run of what it left in its CLI's state folders (issue 26 round 13, F13-2, F13-5), the
 * state's counterpart of planted.ts.
 *
 * F13-2: the entries at the top of a state folder that the CLI does not write (`AgentState.writes`) are read-only in
 * the sandbox only when they exist at launch (state-steering.ts); a run created new ones that persisted on the host
 * and that the CLIs act on — Codex's `.env` (every later Codex sourced its `BASH_ENV=`), Claude Code's `daemon.json`,
 * `jobs/`, `daemon/`, a script `r13-newfile.sh`. The top of each state folder bound writable is recorded at launch
 * (each entry by its identity: git-read.ts `entryId`), and after the run every entry there that was not, whose name
 * is not among `writes` — or that is a link, whatever its name: no CLI makes one there — is moved aside. Where a
 * state folder is a skeleton in every launch, a new entry stayed in the sandbox: nothing to look at.
 *
 * F13-5: `projects/` of Claude Code's state is writable (its sessions) and holds its auto memory,
 * `projects/<cwd>/memory/MEMORY.md`, which runs do not read (`claudeLaunchEnv`) but the owner's own Claude Code reads
 * into its prompt: a run wrote standing instructions for the owner's assistant. Every file below the folders a plugin
 * names as its CLI's memory (`AgentState.memory`) is fingerprinted at launch (path → device, inode, size, mtime,
 * ctime: a write or `touch -d` changes the ctime), and after the run each one new or changed is moved aside, a memory
 * folder that was not there whole; a link on the way there (`projects/<x>`, `memory`) that was not there is moved
 * aside itself, never followed. The look at launch is bounded (`StateLimits`): past a limit the launch is refused,
 * never watched in part; after the run a memory folder too big to compare within the limit is moved aside whole.
 *
 * What the owner's own CLI writes there meanwhile (their Claude Code's auto memory during a run, a top entry a newer
 * CLI makes) cannot be told from the agent's (the same user) and is moved aside too, and named (SECURITY.md).
 */
import { randomBytes } from "node:crypto";
import { lstatSync, mkdirSync, readlinkSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { Notice } from "../protocol/schema.js";
import { t, type Lang } from "../i18n/messages.js";
import { entryId } from "./git-read.js";
import { asideTo, movePlantedAside, plantedNotice, quarantineBox, type AsideTo, type Planted } from "./planted.js";
import { EntryPages, isFolder, isLink, namesUpTo } from "../common/file-checks.js";
import { written } from "./state-steering.js";

/** How much of the state folders is looked at before a launch; past either the launch is refused (`StateLimitError`). */
export interface StateLimits {
  /** Entries a `*` of a memory pattern matches, all state folders together (Claude Code: the project folders in `projects/`). */
  projects: number;
  /** Entries inside the memory folders (files and folders, at any depth), all together. */
  memoryEntries: number;
  /**
   * Entries at the top of one state folder (F19-6: a run left 7 M files at `~/.claude`'s top; reading them whole at
   * every launch held a local worker's hub). Read one by one: past the limit the rest is not read.
   */
  top: number;
}
/** The limits of every launch. */
export const stateLimits: StateLimits = { projects: 100_000, memoryEntries: 10_000, top: 10_000 };

/**
 * Entries of a state folder's top the check after a run reads and handles between two yields to the event loop
 * (F19-6: 300,000 new files there held the hub's thread 13 s, 7 M 352 s); also the most names it holds at once.
 */
export const statePageEntries = 1_000;
/** Entries moved aside that the check after a run lists (`StateFound`; a card shows far fewer); the rest are counted. */
export const stateListedMax = 1_000;

/** The state's memory folders could not be fingerprinted within a limit (`kind`) below `folder`: the launch is refused. */
export class StateLimitError extends Error {
  constructor(readonly kind: keyof StateLimits, readonly folder: string, readonly limit: number) {
    super(`${kind}: ${folder} (${limit})`);
  }
}

/** Why a launch is refused for `e`, in `lang` (the folder, the limit, what to do). */
export function stateLimitText(lang: Lang, e: StateLimitError): string {
  return t(lang, `sandbox.stateLimit.${e.kind}`, { folder: e.folder, limit: String(e.limit) });
}

/** One state folder as a launch showed it. */
export interface StateFolderSeen {
  /** Its real path. */
  folder: string;
  /** What the CLI writes at its top (`AgentState.writes`). */
  writes: string[];
  /** Whether a launch bound it writable as it is (not a skeleton: state-steering.ts), so that the run could add entries at its top. */
  bound: boolean;
}

/** What a launch saw of the state folders, for the check after the run (`plantedState`). */
export interface StateSeen {
  /** The state folders whose top is checked (those with `writes`). */
  folders: StateFolderSeen[];
  /** The memory patterns (`AgentState.memory`: relative to each state folder, `*` one name). */
  memory: string[];
  /** The memory patterns' state folders (real paths). */
  memoryFolders: string[];
  /** The identity (`entryId`) of each entry at the state folders' tops and on the way to the memory folders. */
  ids: string[];
  /** Each entry inside the memory folders but folders: path → its fingerprint (`fingerprint`). */
  files: Record<string, string>;
}

/** Who an entry is and what it holds as far as a write would change it (device, inode, size, mtime, ctime, kind), or null when gone. */
function fingerprint(path: string): string | null {
  try {
    const s = lstatSync(path);
    const kind = s.isSymbolicLink() ? `link:${readlinkSync(path)}` : s.isDirectory() ? "dir" : s.isFile() ? "file" : "other";
    return `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}:${kind}`;
  } catch {
    return null;
  }
}



/**
 * The paths below `folder` that a memory pattern's segments match (from segment `at` on), depth first: a `*`'s names
 * a page at a time (`statePageEntries`, sorted within a page), a null after each page (where a caller may yield to the
 * event loop: no more than a page of names per level is held). `onWay` is called for each entry on the way there
 * (`last`: the pattern's last segment); false stops there (a link not seen before the run). `left()` says how many
 * more names a `*` may read, `took(n, dir)` is told how many it read in `dir` (it may throw: nothing more is read).
 */
function* matched(folder: string, segments: readonly string[], onWay: (path: string, last: boolean) => boolean, left: () => number, took: (n: number, dir: string) => void, at = 0): Generator<string | null> {
  if (at === segments.length) {
    yield folder;
    return;
  }
  if (!isFolder(folder)) return;
  const seg = segments[at]!;
  const next = (path: string) => (fingerprint(path) !== null && onWay(path, at === segments.length - 1) ? matched(path, segments, onWay, left, took, at + 1) : []);
  if (seg !== "*") {
    yield* next(join(folder, seg));
    return;
  }
  const pages = EntryPages.open(folder);
  if (!pages) return;
  try {
    for (let page = pages.next(Math.min(statePageEntries, left() + 1)); page.length > 0; page = pages.next(Math.min(statePageEntries, left() + 1))) {
      took(page.length, folder);
      for (const name of page.map((e) => e.name).sort()) yield* next(join(folder, name));
      yield null;
    }
  } finally {
    pages.close();
  }
}

/** The segments of a memory pattern (`projects/*\/memory/` → projects, *, memory). */
function segmentsOf(pattern: string): string[] {
  return pattern.split("/").filter((s) => s !== "" && s !== ".");
}

/**
 * The entries inside memory folder `dir` (not following links), in the order walked: `[path, fingerprint]` of each
 * that is not a folder; null when there are more than `left` entries (files and folders).
 */
function memoryEntries(dir: string, left: number): [string, string][] | null {
  if (!isFolder(dir)) {
    const fp = fingerprint(dir);
    return fp === null ? [] : [[dir, fp]];
  }
  const out: [string, string][] = [];
  const queue = [dir];
  let count = 0;
  while (queue.length > 0) {
    const d = queue.pop()!;
    for (const name of namesUpTo(d, left - count)) {
      if (++count > left) return null;
      const path = join(d, name);
      const fp = fingerprint(path);
      if (fp === null) continue;
      if (fp.endsWith(":dir")) queue.push(path);
      else out.push([path, fp]);
    }
  }
  return out;
}

/**
 * What a launch sees of the state folders before the run (see the module): the entries at each top, the way to the
 * memory folders and a fingerprint of each file in them. Call it after the steering parts are made (state-steering.ts
 * `stateView`), so that those count as there.
 * @param folders the state folders (real paths), with what their CLI writes at the top (none: the top is not checked) and whether the launch binds them as they are
 * @param memory the memory patterns (`AgentState.memory`), looked for in each state folder
 * @throws StateLimitError past `limits` (a top with more than `limits.top` entries: refused once that many are read).
 */
export function stateSeenAt(folders: readonly { folder: string; writes?: readonly string[]; bound: boolean }[], memory: readonly string[], limits: StateLimits = stateLimits): StateSeen {
  const seen: StateSeen = { folders: [], memory: [...memory], memoryFolders: folders.map((f) => f.folder), ids: [], files: {} };
  const remember = (path: string) => {
    const id = entryId(path);
    if (id !== null) seen.ids.push(id);
  };
  for (const f of folders) {
    if (!f.writes) continue;
    seen.folders.push({ folder: f.folder, writes: [...f.writes], bound: f.bound });
    const top = namesUpTo(f.folder, limits.top);
    if (top.length > limits.top) throw new StateLimitError("top", f.folder, limits.top);
    for (const name of top) remember(join(f.folder, name));
  }
  let stars = 0;
  let inside = 0;
  for (const f of folders) {
    for (const pattern of memory) {
      const took = (n: number, dir: string) => {
        stars += n;
        if (stars > limits.projects) throw new StateLimitError("projects", dir, limits.projects);
      };
      for (const dir of matched(f.folder, segmentsOf(pattern), (path) => (remember(path), true), () => limits.projects - stars, took)) {
        if (dir === null) continue;
        const entries = memoryEntries(dir, limits.memoryEntries - inside);
        if (entries === null) throw new StateLimitError("memoryEntries", dir, limits.memoryEntries);
        inside += entries.length;
        for (const [path, fp] of entries) seen.files[path] = fp;
      }
    }
  }
  return seen;
}

/**
 * `first` (what the run's first launch saw: the baseline) with a later launch's `later`: a state folder counts as
 * bound when any launch bound it (a run can make a folder a skeleton for the next launch, or the other way round).
 */
export function mergeStateSeen(first: StateSeen, later: StateSeen): StateSeen {
  return { ...first, folders: first.folders.map((f) => ({ ...f, bound: f.bound || later.folders.some((l) => l.folder === f.folder && l.bound) })) };
}

/** What the check after a run moved aside (`plantedState`): the first `stateListedMax` listed, how many more. */
export interface StateFound {
  planted: Planted[];
  /** Entries moved aside (or left stuck) beyond those listed. */
  more: number;
}

/**
 * After a sandboxed run: what it left in the state folders that the CLI (or the owner's own) would read and that was
 * not there at launch (`seen`), moved aside (`movePlantedAside`, the same names as for git): a new entry at the top of
 * a bound state folder whose name is not among its `writes`, or a new link there (several: into one folder of the
 * run's there, `plantedBox`); a memory folder that is new (all it holds is the run's), whole, and in the others every
 * file new or changed; a link on the way to them that is new; a memory folder with more entries than
 * `limits.memoryEntries` (more than all of them held at launch), whole. No cap on the way (as planted.ts has none for
 * gitlinks): what the run made is looked at whatever it costs, but a page of `statePageEntries` names at a time (of a
 * top, of a `*` of a memory pattern), yielding to the event loop after each (F19-6: the hub's thread is never held
 * long, nor more than a page of names per folder held in memory; the first `stateListedMax` moved are listed, the rest
 * counted), so the order of what is listed is by page (sorted within one). Never rejects.
 */
export async function plantedState(seen: StateSeen, to: number | AsideTo, limits: StateLimits = stateLimits): Promise<StateFound> {
  const run = asideTo(to);
  const out: StateFound = { planted: [], more: 0 };
  const ids = new Set(seen.ids);
  // Gone meanwhile (null) is nothing to move.
  const known = (path: string) => {
    const id = entryId(path);
    return id === null || ids.has(id);
  };
  const aside = (p: Planted) => {
    if (out.planted.length < stateListedMax) out.planted.push(p);
    else out.more++;
  };
  for (const f of seen.folders) if (f.bound) await plantedTop(f, run, known, aside);
  // What this check moved beside itself on the way (`movePlantedAside`'s name) may be read again in the same folder:
  // left where it is, not moved once more.
  const moved = new RegExp(`\\.planted-run-${run.run}-[0-9a-f]{16}$`);
  let work = 0;
  for (const folder of seen.memoryFolders) {
    for (const pattern of seen.memory) {
      const segments = segmentsOf(pattern);
      // A link on the way that was not there leads anywhere (the agent's own folder, or the owner's files): moved aside
      // itself, when the rest of the way is there behind it, and never followed; a new memory folder whole.
      const onWay = (path: string, last: boolean) => {
        if (moved.test(path)) return false;
        if (known(path) || (!last && !isLink(path))) return true;
        if (last || wayGoesOn(path, segments, folder)) aside(movePlantedAside(path, run));
        return false;
      };
      for (const dir of matched(folder, segments, onWay, () => Number.MAX_SAFE_INTEGER, () => {})) {
        // A yield after each page of a `*`, and after every page's worth of entries compared.
        if (dir === null) work = statePageEntries;
        else {
          const entries = memoryEntries(dir, limits.memoryEntries);
          if (entries === null) aside(movePlantedAside(dir, run));
          else for (const [path, fp] of entries) if (seen.files[path] !== fp) aside(movePlantedAside(path, run));
          work += entries?.length ?? limits.memoryEntries;
        }
        if (work >= statePageEntries) {
          work = 0;
          await yieldToLoop();
        }
      }
    }
  }
  return out;
}

/** Yields to the event loop (what else the hub's thread has to do runs first). */
function yieldToLoop(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}

/**
 * The new entries at the top of the state folder `f` (see `plantedState`; `known`: there at launch, or gone), each
 * told to `aside` once moved: a page at a time, yielding after each. Several go into one box of the run's at the top,
 * so the next launch binds one entry, not each of them (F17-5: 30,000 moved beside themselves stayed at the top, one
 * read-only bind each, and every later launch failed EMFILE); the first is held until a second shows there are
 * several. What this makes at the top (the box, an entry moved beside itself) is never taken for the run's.
 */
async function plantedTop(f: StateFolderSeen, run: AsideTo, known: (path: string) => boolean, aside: (p: Planted) => void): Promise<void> {
  const pages = EntryPages.open(f.folder);
  if (!pages) return;
  const made = new Set<string>();
  let first: string | null = null;
  let box: string | null | undefined;
  const move = (name: string) => {
    const path = join(f.folder, name);
    let p = box ? movePlantedAside(path, run, join(box, name)) : null;
    // The quarantine on another file system than the state: a box at the top instead, never thousands beside (F17-5).
    if (p !== null && p.kind !== "moved" && box && dirname(box) !== f.folder) {
      box = plantedBox(f.folder, { run: run.run, quarantine: null });
      if (box) made.add(basename(box));
      p = box ? movePlantedAside(path, run, join(box, name)) : null;
    }
    // The box gone, or no longer the folder made (another run sharing the state swapped it for a link, round 19 F19-1:
    // the move refused): this entry and the rest beside themselves, still out of the CLI's way.
    if (p !== null && p.kind !== "moved") {
      box = null;
      p = null;
    }
    p ??= movePlantedAside(path, run);
    if (p.movedTo && dirname(p.movedTo) === f.folder) made.add(basename(p.movedTo));
    aside(p);
  };
  try {
    for (let page = pages.next(statePageEntries); page.length > 0; page = pages.next(statePageEntries)) {
      const fresh = page.map((e) => e.name).sort().filter((name) => {
        const path = join(f.folder, name);
        return !made.has(name) && !known(path) && (!written(name, f.writes) || isLink(path));
      });
      for (const name of fresh) {
        if (box === undefined) {
          if (first === null) {
            first = name;
            continue;
          }
          box = plantedBox(f.folder, run);
          if (box && dirname(box) === f.folder) made.add(basename(box));
          move(first);
          first = null;
        }
        move(name);
      }
      await yieldToLoop();
    }
  } finally {
    pages.close();
  }
  if (first !== null) move(first);
}

/**
 * A new folder `run-<run>-<16 hex digits>/<folder>` in the quarantine (`AsideTo`, round 29, F29a-1), else `planted-run-<run>-<16
 * hex digits>` at the top of `folder` (private, a name the agent cannot take first), or null when it cannot be made
 * (each entry is then moved beside itself). A quarantine on another file system than `folder` refuses the first move
 * into it: a box at the top then (`plantedTop`).
 */
function plantedBox(folder: string, run: AsideTo): string | null {
  const hex = randomBytes(8).toString("hex");
  if (run.quarantine !== null) return quarantineBox(run.quarantine, run.run, hex, folder);
  const box = join(folder, `planted-run-${run.run}-${hex}`);
  try {
    mkdirSync(box, { mode: 0o700 });
    return box;
  } catch {
    return null;
  }
}

/** Whether behind the link `path` (matched by some of `segments` below `folder`) the rest of the pattern's way begins. */
function wayGoesOn(path: string, segments: readonly string[], folder: string): boolean {
  const depth = path.slice(folder.length + 1).split("/").length;
  const rest = segments.slice(depth);
  return rest.length === 0 || rest[0] === "*" ? isFolder(path) : fingerprint(join(path, rest[0]!)) !== null;
}

/**
 * The run's notice of what the checks after it moved aside (planted.ts `plantedNotice`'s lines): `git` from
 * `plantedSteering`, `state` from `plantedState` (`more`: how many it moved beyond those listed, `StateFound`); its
 * title says whose files they were. Null when both found nothing.
 */
export function plantedRunNotice(git: readonly Planted[], state: readonly Planted[], lang: Lang, more = 0): Notice | null {
  const notice = plantedNotice([...git, ...state], lang, more);
  if (!notice || state.length === 0) return notice;
  return { ...notice, title: t(lang, git.length > 0 ? "sandbox.planted.titleBoth" : "sandbox.planted.titleState") };
}
