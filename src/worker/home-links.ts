/**
 * Where the owner's shell, editor and tools are led out of the home (issue 26 round 14 F14-8, round 15 F15-4): the
 * home is read-only in every sandbox, but a link in it leads to a place a sandbox may write — a dotfile manager's
 * (`stow`, chezmoi's symlink mode, `ln -s ~/dotfiles/x ~/.x`) at any depth of the home's dot-folders
 * (`~/.bashrc`, `~/.local/bin -> ../dotfiles/localbin` that Debian's `~/.profile` puts first in PATH,
 * `~/.ssh/config`, whose `Match exec` ssh runs, `~/.config/**`, `~/.gnupg/*`) — and the owner's PATH folders, where a
 * command made later is run by name, and where their entries that are links lead (round 16, F16-2: `~/bin/deploy ->
 * ../p14/tools/deploy.sh`, `/usr/local/bin/x -> ~/p14/tools/x.sh`), and the files Python runs at every start from a
 * folder a `.pth` of the user site-packages names (`pythonStartFiles`). steering.ts keeps each of these read-only
 * where it lies in a writable folder (never the folder itself); planted.ts moves one made during a run aside after it.
 *
 * The walk is bounded: it reads the home's dot-entries and below them at most `homeWalkLimits.depth` levels, at most
 * `homeWalkLimits.entries` entries in all (past that the caller refuses the launch: `complete` false), not below the
 * top of caches and package stores (`homeStores`) or of the hub's own home, nor below an agent CLI's state folder,
 * whose top is not counted either (F16-7: an agent writes there), not into `.git` or `node_modules` folders; the
 * entries of the PATH folders count toward the same limit;
 * a link to a folder inside the home (or `XDG_CONFIG_HOME`) is walked through (`~/.config -> dotfiles/config` and a
 * link in it), one leading out of them is not (Wine's `~/.wine/dosdevices/z: -> /`).
 */
import { opendirSync, type Dirent } from "node:fs";
import { headOfRegular } from "./files.js";
import { delimiter, isAbsolute, join } from "node:path";
import { realPathOr, within } from "../common/file-checks.js";
import { claudeCodeState, codexState } from "../sdk/cli-state.js";

/** How far the walk of the home's dot-folders goes. */
export interface HomeWalkLimits {
  /** Entries read in all (the home's dot-entries and everything below them that is walked). */
  entries: number;
  /** Levels below the home: 1 is `~/.x`, 2 `~/.x/y`… (`~/.config/systemd/user/x.service` is 4). */
  depth: number;
}

/**
 * The limits of every launch: a home measured here (rustup, pyenv, Maven, cargo) holds 480 entries within 5 levels
 * outside `homeStores` (1,219 with them); the walk stops at 50,000 within 0.05-0.12 s on a loaded 2-core machine.
 */
export const homeWalkLimits: HomeWalkLimits = { entries: 50_000, depth: 5 };

/**
 * Folders of the home (relative to it) read at their top only, not below: caches, the trash, package stores, an agent
 * CLI's sessions — written by programs, never by a dotfile manager, and the largest parts of a developer's home (a
 * cargo registry, a Gradle cache or an editor's extensions hold tens of thousands of entries within the walk's depth,
 * and would have every launch refused). A link at their top is still followed.
 */
export const homeStores = [
  ".cache", ".npm", ".local/share/Trash", ".local/share/containers", ".local/share/flatpak", ".local/share/Steam", ".local/lib",
  ".cargo/registry", ".cargo/git", ".rustup/toolchains", ".m2/repository", ".gradle/caches", ".gradle/wrapper", ".nuget/packages", ".gem",
  ".pyenv/versions", ".nvm/versions", ".rbenv/versions", ".vscode/extensions", ".vscode-server", ".cursor/extensions", ".mozilla", ".thunderbird",
  ".claude/projects", ".claude/todos", ".claude/file-history", ".codex/sessions", ".codex/archived_sessions",
] as const;
/**
 * The agent CLIs' state folders (issue 26 round 16, F16-7): Claude Code's (`CLAUDE_CONFIG_DIR`, else `~/.claude`) and
 * Codex's (`CODEX_HOME`, else `~/.codex`), as the built-in plugins declare them (sdk/cli-state.ts). Every sandboxed
 * run of such a CLI writes there (what it adds at the top is moved aside after the run, beside it: still there), so
 * they are looked at their top only and not counted toward the limit — one agent filling them had every later launch
 * of every rule refused. What a run leaves there is checked after it (state-planted.ts).
 */
function agentStateFolders(env: NodeJS.ProcessEnv, home: string): string[] {
  const vars = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
  return [claudeCodeState(vars), codexState(vars)].flatMap((s) => s.folders ?? []).map((f) => realPathOr(f.startsWith("~/") ? join(home, f.slice(2)) : f, null)).filter((f): f is string => f !== null);
}

/** Folder names not walked at any depth: a git folder's objects, a package manager's installs. */
const namesNotWalked = new Set([".git", "node_modules"]);

/** What `homeLinks` found. */
export interface HomeLinks {
  /** The home walked (`HOME`, as a real path), or null when there is none. */
  home: string | null;
  /** Real paths, each once: where the links lead and the PATH folders that exist. */
  targets: string[];
  /** False when the walk stopped at `limits.entries`: `targets` then holds only what it found until then. */
  complete: boolean;
}

/**
 * Where the owner's shell and tools are led out of the home (see the module), as real paths that exist: the folders of
 * `env.PATH` (absolute entries; the hub's PATH — an installed hub's is its login shell's, read at install; a relative
 * entry names a folder of whatever the shell's cwd is, not guarded: SECURITY.md), `~/bin` and `~/.local/bin` (Debian's
 * and Fedora's login profiles put them first in PATH once they exist) with the target of each link among their
 * entries, the target of every link the walk of the home's dot-folders meets, and Python's start files
 * (`pythonStartFiles`). A link whose target is missing is left out (nothing to mount;
 * one made during a run is found after it).
 * @param writable real paths of folders not walked (after a run, the folders it wrote: a link there is the agent's —
 *   an agent CLI's state folder such as `~/.claude` — and checked with that folder, state-planted.ts).
 */
export function homeLinks(env: NodeJS.ProcessEnv = process.env, limits: HomeWalkLimits = homeWalkLimits, writable: readonly string[] = []): HomeLinks {
  const targets = new Set<string>();
  const add = (p: string) => {
    const real = realPathOr(p, null);
    if (real !== null) targets.add(real);
  };
  let read = 0;
  // The entries of a folder the owner's shell runs commands from (F16-2: `~/bin/deploy -> ../p14/tools/deploy.sh`,
  // `/usr/local/bin/x -> ~/p14/tools/x.sh`): each link's target, the entries counted toward the limit.
  const listed = new Set<string>();
  const commands = (dir: string): boolean => {
    const real = realPathOr(dir, null);
    if (real === null || listed.has(real)) return true;
    listed.add(real);
    targets.add(real);
    const entries = entriesOf(real, limits.entries - read, false);
    read += entries.length;
    for (const e of entries) if (e.isSymbolicLink()) add(join(real, e.name));
    return read <= limits.entries;
  };
  const home = env.HOME ? realPathOr(env.HOME, env.HOME) : null;
  const pathFolders = (env.PATH ?? "").split(delimiter).filter((d) => isAbsolute(d));
  for (const dir of home === null ? pathFolders : [...pathFolders, join(home, "bin"), join(home, ".local", "bin")]) {
    if (!commands(dir)) return { home, targets: [...targets], complete: false };
  }
  if (home === null) return { home: null, targets: [...targets], complete: true };
  for (const p of pythonStartFiles(env, home, limits)) add(p);
  // The hub's own home too (its runs' files, a transcript per run): no dotfile manager's links, and it only grows.
  const hubHome = env.AGENT_AUTOLOOP_HOME || join(home, ".agent-autoloop");
  const stores = new Set([...homeStores.map((p) => join(home, p)), realPathOr(hubHome, hubHome)]);
  const states = new Set(agentStateFolders(env, home));
  const visited = new Set<string>([home]);
  // Breadth first: the home's dot-entries, then what lies below them; `depth` is the level of a folder's entries; a
  // store's (`top`) are looked at for links only, an agent CLI's state folder's (`state`) too, and not counted.
  const queue: { dir: string; depth: number; top: boolean; state: boolean }[] = [{ dir: home, depth: 1, top: false, state: false }];
  // `XDG_CONFIG_HOME` outside the home is walked as a dot-folder of it (`~/.config` is one already).
  const config = env.XDG_CONFIG_HOME ? realPathOr(env.XDG_CONFIG_HOME, null) : null;
  const roots = [home];
  if (config !== null && !visited.has(config)) {
    visited.add(config);
    roots.push(config);
    queue.push({ dir: config, depth: 2, top: false, state: false });
  }
  const enter = (real: string, depth: number) => {
    if (depth > limits.depth || visited.has(real) || !roots.some((r) => within(real, r)) || writable.some((w) => within(real, w))) return;
    visited.add(real);
    const state = states.has(real);
    queue.push({ dir: real, depth, top: state || stores.has(real), state });
  };
  for (let i = 0; i < queue.length; i++) {
    const { dir, depth, top, state } = queue[i]!;
    // A state folder's top: at most the limit's entries, apart from it (past them its links are not looked at).
    const entries = entriesOf(dir, state ? limits.entries : limits.entries - read, dir === home);
    if (!state) read += entries.length;
    if (read > limits.entries) return { home, targets: [...targets], complete: false };
    for (const e of entries) {
      const path = join(dir, e.name);
      if (e.isSymbolicLink()) {
        const real = realPathOr(path, null);
        if (real === null) continue;
        targets.add(real);
        if (!top) enter(real, depth + 1);
      } else if (!top && e.isDirectory() && !namesNotWalked.has(e.name)) enter(path, depth + 1);
    }
  }
  return { home, targets: [...targets], complete: true };
}

/**
 * The names Python imports at every start from a folder its user site-packages names (`pythonStartFiles`): the
 * modules `usercustomize` and `sitecustomize` in any form its import finds — a package folder first, then an extension
 * module (`usercustomize.cpython-311-x86_64-linux-gnu.so`), the source, the compiled file (F17-1: a package folder
 * `usercustomize/` beside a read-only `usercustomize.py` ran instead of it).
 */
const pythonStartName = /^(user|site)customize(\..*)?$/;

/**
 * What every `python3` of the owner's runs from a folder a `.pth` file of the user site-packages names (F16-2: an
 * editable install's `__editable__.*.pth`, a `.pth` naming `~/p14/pysrc`): Python puts each such folder on `sys.path`
 * at start and then imports `usercustomize` and `sitecustomize` from the first folder that has them — each entry of
 * such a folder named for them (`pythonStartName`: a package folder, an extension module, the `.py`, the `.pyc`) and
 * their compiled `__pycache__/usercustomize.*.pyc`, `sitecustomize.*.pyc`, never the folder: the project of an
 * editable install stays writable. The user site-packages are `$PYTHONUSERBASE/lib/python*` `/site-packages` (else
 * `~/.local`); a `.pth` line starting `import` is code Python runs, not a folder, and is not read. Real paths that exist.
 */
function pythonStartFiles(env: NodeJS.ProcessEnv, home: string, limits: HomeWalkLimits): string[] {
  const lib = join(env.PYTHONUSERBASE || join(home, ".local"), "lib");
  const out: string[] = [];
  for (const py of entriesOf(lib, 100, false).filter((e) => e.name.startsWith("python"))) {
    const site = join(lib, py.name, "site-packages");
    for (const pth of entriesOf(site, limits.entries, false).filter((e) => e.name.endsWith(".pth"))) {
      for (const line of headOf(join(site, pth.name)).split("\n")) {
        const named = line.trimEnd();
        if (named === "" || named.startsWith("#") || /^import[ \t]/.test(named)) continue;
        const dir = isAbsolute(named) ? named : join(site, named);
        // A folder an agent may write: it and its `__pycache__` read at most to the limit each, apart from it.
        for (const e of entriesOf(dir, limits.entries, false)) if (pythonStartName.test(e.name)) out.push(join(dir, e.name));
        for (const c of entriesOf(join(dir, "__pycache__"), limits.entries, false)) if (pythonStartName.test(c.name)) out.push(join(dir, "__pycache__", c.name));
      }
    }
  }
  return out.map((p) => realPathOr(p, null)).filter((p): p is string => p !== null);
}

/** The first 64 KiB of file `path` as text (a `.pth` is a few lines), or "" when it cannot be read or is no regular file. */
function headOf(path: string): string {
  return headOfRegular(path, 65_536);
}

/**
 * The entries of folder `dir` (at the home's top only its dot-entries, `dots`), read one by one and at most `max` + 1
 * of them (a folder of a million entries costs no more than the limit); none when it cannot be read.
 */
function entriesOf(dir: string, max: number, dots: boolean): Dirent[] {
  const out: Dirent[] = [];
  let d;
  try {
    d = opendirSync(dir, { bufferSize: 256 });
  } catch {
    return out; // gone meanwhile, or not readable (then not by the owner's tools either)
  }
  try {
    for (let e = d.readSync(); e !== null && out.length <= max; e = d.readSync()) if (!dots || e.name.startsWith(".")) out.push(e);
  } catch {
    // a folder that fails while read: what was read counts
  } finally {
    d.closeSync();
  }
  return out;
}
