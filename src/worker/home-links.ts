/**
 * Where the owner's shell, editor and tools are led out of the home (issue 26 round 14 F14-8, round 15 F15-4): the
 * home is read-only in every sandbox, but a link in it leads to a place a sandbox may write — a dotfile manager's
 * (`stow`, chezmoi's symlink mode, `ln -s ~/dotfiles/x ~/.x`) at any depth of the home's dot-folders
 * (`~/.bashrc`, `~/.local/bin -> ../dotfiles/localbin` that Debian's `~/.profile` puts first in PATH,
 * `~/.ssh/config`, whose `Match exec` ssh runs, `~/.config/**`, `~/.gnupg/*`) — and the owner's PATH folders, where a
 * command made later is run by name. steering.ts keeps each of these read-only where it lies in a writable folder
 * (never the folder itself); planted.ts moves one made during a run aside after it.
 *
 * The walk is bounded: it reads the home's dot-entries and below them at most `homeWalkLimits.depth` levels, at most
 * `homeWalkLimits.entries` entries in all (past that the caller refuses the launch: `complete` false), not below the
 * top of caches and package stores (`homeStores`) or of the hub's own home, not into `.git` or `node_modules` folders;
 * a link to a folder inside the home (or `XDG_CONFIG_HOME`) is walked through (`~/.config -> dotfiles/config` and a
 * link in it), one leading out of them is not (Wine's `~/.wine/dosdevices/z: -> /`).
 */
import { opendirSync, type Dirent } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import { realPathOr, within } from "../common/file-checks.js";

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
 * `env.PATH` (absolute entries; the hub's PATH — an installed hub's is its login shell's, read at install), `~/bin`
 * and `~/.local/bin` (Debian's and Fedora's login profiles put them first in PATH once they exist), and the target of
 * every link the walk of the home's dot-folders meets. A link whose target is missing is left out (nothing to mount;
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
  for (const dir of (env.PATH ?? "").split(delimiter)) if (isAbsolute(dir)) add(dir);
  if (!env.HOME) return { home: null, targets: [...targets], complete: true };
  const home = realPathOr(env.HOME, env.HOME);
  add(join(home, "bin"));
  add(join(home, ".local", "bin"));
  // The hub's own home too (its runs' files, a transcript per run): no dotfile manager's links, and it only grows.
  const hubHome = env.AGENT_AUTOLOOP_HOME || join(home, ".agent-autoloop");
  const stores = new Set([...homeStores.map((p) => join(home, p)), realPathOr(hubHome, hubHome)]);
  const visited = new Set<string>([home]);
  // Breadth first: the home's dot-entries, then what lies below them; `depth` is the level of a folder's entries, and
  // a store's (`top`) are looked at for links only.
  const queue: { dir: string; depth: number; top: boolean }[] = [{ dir: home, depth: 1, top: false }];
  // `XDG_CONFIG_HOME` outside the home is walked as a dot-folder of it (`~/.config` is one already).
  const config = env.XDG_CONFIG_HOME ? realPathOr(env.XDG_CONFIG_HOME, null) : null;
  const roots = [home];
  if (config !== null && !visited.has(config)) {
    visited.add(config);
    roots.push(config);
    queue.push({ dir: config, depth: 2, top: false });
  }
  let read = 0;
  const enter = (real: string, depth: number) => {
    if (depth > limits.depth || visited.has(real) || !roots.some((r) => within(real, r)) || writable.some((w) => within(real, w))) return;
    visited.add(real);
    queue.push({ dir: real, depth, top: stores.has(real) });
  };
  for (let i = 0; i < queue.length; i++) {
    const { dir, depth, top } = queue[i]!;
    const entries = entriesOf(dir, limits.entries - read, dir === home);
    read += entries.length;
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
