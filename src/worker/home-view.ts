/**
 * What a sandboxed agent sees of the hub user's homes and runtime folder (issue 26 round 11).
 *
 * F8/F10: with the home bound read-only, an agent read `~/.ssh`, `~/.config/gh/hosts.yml` and the browser's cookie
 * store, took the owner's console session from it and answered its own tool card. Each home of the hub's user is now
 * an empty folder in the sandbox (read-only), and only what the agent needs is shown again: its cwd and writable
 * folders and its CLI's state (bound by the plan as before), and read-only here: `~/.gitconfig` and git's `config`,
 * `ignore` and `attributes` in `~/.config/git` (not the folder: round 12, F12-4, its credential store `credentials`),
 * the folders on the agent's PATH that lie in a home (with their sibling `lib`/`libexec`, where a `bin` folder's
 * programs load their code: nvm's Node packages, pip's user site), the package the agent's program lies in (a
 * program on PATH is often a link into it: npm's, bun's, the native installers'), and the agent's rules.json
 * `readable`. Links on the way to each of these (a stow-style `~/.claude -> dotfiles/claude`) are made again in
 * the empty home, pointing where they point on the host.
 *
 * F6: `/run/user/<uid>` holds the sockets of the user's own services — `systemd --user`'s private socket (the hub
 * runs as such a unit once installed) and the user's D-Bus — through which a program runs anything outside every
 * sandbox (`systemd-run --user`). The sandbox hides `/run/user` and `$XDG_RUNTIME_DIR` and gives the agent an empty
 * runtime folder of its own (mode 0700) at its `XDG_RUNTIME_DIR`.
 */
import { existsSync, lstatSync, readlinkSync } from "node:fs";
import { isFolder } from "../common/file-checks.js";
import { basename, delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { findProgram } from "../sdk/index.js";
import { wayEntersAgentFolder } from "./agent-folders.js";
import { installParts } from "../common/installs.js";
import { expandTilde, isInside, realPath } from "./sandbox.js";

/** What the agent sees of the homes: the homes to hide, the paths in them to show read-only, the links to make. */
export interface HomeView {
  /** Homes shown as empty, read-only folders (real paths). */
  hidden: string[];
  /** Real paths inside `hidden` to bind read-only. */
  read: string[];
  /** `[link, target]`: links inside `hidden` made again in the sandbox (`target` as the host's link says). */
  links: [string, string][];
}

/**
 * What git reads from its XDG folder (`$XDG_CONFIG_HOME/git`, else `~/.config/git`): its settings, ignore and
 * attributes files — never the folder, which may hold git's credential store `credentials` (round 12, F12-4: the agent
 * read a GitHub token there, and `git credential fill` answered with it).
 */
const gitXdgFiles = ["config", "ignore", "attributes"] as const;

/** How many links are followed on the way to one path before it is left alone (as the kernel's ELOOP limit). */
const linksFollowedMax = 40;

/**
 * The links inside the homes `homes` on the way to `path` (absolute, as written), each as `[link, target]`, in the
 * order met: the components of `path` and of where each link leads, while they lie in a home.
 */
export function linksOnWay(path: string, homes: readonly string[]): [string, string][] {
  const out: [string, string][] = [];
  let rest = resolve(path);
  for (let n = 0; n < linksFollowedMax; n++) {
    const home = homes.find((h) => isInside(rest, h) && rest !== h);
    if (!home) break;
    const parts = rest.slice(home.length).split("/").filter(Boolean);
    let at = home;
    let next: string | null = null;
    for (let i = 0; i < parts.length; i++) {
      at = join(at, parts[i]!);
      let target: string;
      try {
        if (!lstatSync(at).isSymbolicLink()) continue;
        target = readlinkSync(at);
      } catch {
        break; // missing: nothing further to make
      }
      out.push([at, target]);
      const dest = isAbsolute(target) ? target : join(dirname(at), target);
      next = join(dest, ...parts.slice(i + 1));
      break;
    }
    if (next === null) break;
    rest = resolve(next);
  }
  return out;
}

/**
 * The package `file` (a real path) belongs to: the nearest folder above it holding a `package.json`, not above
 * `stop`; else the folder of `file`.
 */
function packageRoot(file: string, stop: string): string {
  for (let d = dirname(file); isInside(d, stop) && d !== stop; d = dirname(d)) {
    if (existsSync(join(d, "package.json"))) return d;
  }
  return dirname(file);
}

/**
 * The view of the homes for one launch.
 * @param homes the hub user's homes (real paths; `userHomes` and the paths that show them)
 * @param shownHome a home that stays shown read-only as a whole (the cwd is that home), or null
 * @param env the agent's environment (its HOME, PATH, XDG_CONFIG_HOME)
 * @param declared other paths as written (the cwd, writable folders, the CLI's state) whose links to make again
 * @param readable the agent's rules.json `readable` (`~/…` or absolute)
 */
export function homeView(homes: readonly string[], shownHome: string | null, env: Readonly<Record<string, string>>, declared: readonly string[], readable: readonly string[]): HomeView {
  const hidden = homes.filter((h) => h !== shownHome && !(shownHome && isInside(h, shownHome)));
  const home = env.HOME ?? "";
  const config = env.XDG_CONFIG_HOME || (home ? join(home, ".config") : "");
  const wanted: string[] = [...(home ? [join(home, ".gitconfig")] : []), ...(config ? gitXdgFiles.map((f) => join(config, "git", f)) : [])];
  for (const entry of (env.PATH ?? "").split(delimiter)) {
    if (!isAbsolute(entry)) continue;
    wanted.push(...installParts(entry));
  }
  wanted.push(...readable.map((r) => expandTilde(r, home)));
  const view: HomeView = { hidden, read: [], links: [] };
  for (const p of wanted) addShown(view, p);
  for (const p of [...wanted, ...declared]) view.links.push(...linksOnWay(p, hidden));
  return tidy(view);
}

/**
 * Adds the agent's program (`program`: a path, or a name found on the agent's PATH) to `view`: the package its real
 * file lies in, and the links on the way to it. Nothing when it lies outside the hidden homes, nor when the way to it
 * enters a folder agents write (`agentFolders`, real paths): a link there, swapped by another run while this one
 * launches, would choose what is shown — `~/.ssh` was (issue 26 round 26, F26a-1). Such a program is seen only
 * where the launch shows that folder anyway (its own cwd or `writable`).
 */
export function showProgram(view: HomeView, program: string, env: Readonly<Record<string, string>>, agentFolders: readonly string[]): HomeView {
  const found = findProgram(program, env.PATH ?? "");
  if (!found || wayEntersAgentFolder(found, agentFolders) !== null) return view;
  const file = realPath(found);
  const home = view.hidden.find((h) => isInside(file, h));
  if (!home) return view;
  addShown(view, packageRoot(file, home));
  view.links.push(...linksOnWay(resolve(found), view.hidden));
  return tidy(view);
}

/** Adds `path`'s real path to `view.read` when it exists, lies in a hidden home and is not that home. */
function addShown(view: HomeView, path: string): void {
  if (!path || !existsSync(path)) return;
  const real = realPath(path);
  if (view.hidden.some((h) => isInside(real, h) && real !== h)) view.read.push(real);
}

/** `view` without repeats, nested read paths left to their parent. */
function tidy(view: HomeView): HomeView {
  const read = [...new Set(view.read)].sort((a, b) => a.length - b.length);
  const seen = new Set<string>();
  const links = view.links.filter(([l]) => !seen.has(l) && seen.add(l));
  return { hidden: view.hidden, read: read.filter((p, i) => !read.slice(0, i).some((q) => isInside(p, q))), links };
}

/**
 * The runtime folders to hide (`/run/user` and `$XDG_RUNTIME_DIR`, those that exist and are not `/`), and the empty
 * folder of the agent's own to make at its `XDG_RUNTIME_DIR` (null when the variable is unset).
 */
export function runtimeView(env: Readonly<Record<string, string>>): { hide: string[]; dir: string | null } {
  const given = env.XDG_RUNTIME_DIR && isAbsolute(env.XDG_RUNTIME_DIR) ? resolve(env.XDG_RUNTIME_DIR) : null;
  const dir = given === "/" ? null : given;
  const hide = ["/run/user", ...(dir ? [dir] : [])].filter((d) => d !== "/" && isFolder(d)).map(realPath);
  const unique = [...new Set(hide)];
  return { hide: unique.filter((d) => !unique.some((o) => o !== d && isInside(d, o))), dir };
}

