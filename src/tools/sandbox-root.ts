/**
 * What a plugin sandbox's root shows of the host (issue 26 round 12, F12-6). A unix socket on a file system is
 * reachable from any network namespace, and connecting needs no write permission: a root built from the host's whole
 * `/` (read-only, with only `/tmp`, `/run` and the homes emptied) let a plugin with no bind at all — and the review
 * sandbox, meant to give an agent-written plugin no host socket — connect to LXD's `/var/snap/lxd/common/lxd/unix.socket`
 * (root for a member of group `lxd`), MySQL's `/var/lib/mysql/mysql.sock` and a service's socket under `/srv`, the very
 * places binds.ts refuses to bind. So the root is built from what a plugin needs, never from `/`:
 * - the host's programs, libraries, configuration and kernel attributes (`sandboxRootFolders`: `/usr`, `/etc`, `/bin`,
 *   `/sbin`, `/lib*`, `/sys`, Nix's `/nix/store`), read-only as they exist — a link (`/bin -> usr/bin`) stays a link.
 *   No service keeps a socket there (the FHS keeps run-time state out of `/usr` and `/etc`); the one place in them
 *   where prefix installs do (`/usr/local/var`, php-fpm's `run/`) is emptied (`emptiedInRoot`);
 * - `/var` an empty folder holding only the host's links there (`/var/run -> /run`, `/var/lock`) and a `/var/tmp` of
 *   the sandbox's own; `/tmp`, `/run`, `/dev`, `/proc` the sandbox's own (sandbox.ts);
 * - the installs of the programs on the plugin's `PATH` that lie elsewhere (`pathInstalls`: `~/.pyenv`,
 *   `~/.nvm/versions/node/v20`, `/opt/node`), read-only, and the plugin's folder and its binds (checked by binds.ts).
 * Nothing else — `/var/lib`, `/var/snap`, `/srv`, `/mnt`, `/media`, `/home`, `/root`, `/opt`, `/snap`, `/boot` — is
 * there unless the plugin binds it. Sockets that lie in the shown parts anyway are covered (`socketsShown`): `/etc` and
 * the installs outside the homes are looked through at each start, each socket found bound over with `/dev/null`.
 */
import { lstatSync, readdirSync, readlinkSync, realpathSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { socketFolders, within } from "./binds.js";
import { rootSocketScanEntriesMax } from "./limits.js";
import { installParts } from "../common/installs.js";
import { realPathOr } from "../common/file-checks.js";

/** The host folders the sandbox root shows read-only, those that exist (links kept as links): what programs need. */
export const sandboxRootFolders = ["/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/sys", "/nix/store"] as const;
/** Folders inside `sandboxRootFolders` emptied in the sandbox: the state folder of prefix installs (sockets of php-fpm and the like). */
export const emptiedInRoot = ["/usr/local/var"] as const;
/** Folders the sandbox has of its own (sandbox.ts): never taken from the host, nothing under them shown unless bound. */
const ownFolders = ["/proc", "/dev", "/tmp", "/run"] as const;

/** The real paths of `sandboxRootFolders` that exist on this host (`/bin` is `/usr/bin` where it is a link). */
function rootReals(): string[] {
  return sandboxRootFolders.flatMap((f) => {
    try {
      return [realpathSync.native(f)];
    } catch {
      return [];
    }
  });
}

/**
 * Whether the host path `path` (real, absolute) shows in every plugin sandbox's root without a bind: it lies in one
 * of `sandboxRootFolders` (by its real path) and not in `emptiedInRoot`. The host's hidden paths outside these need no
 * covering (process.ts).
 */
export function shownByRoot(path: string): boolean {
  return rootReals().some((r) => within(path, r)) && !emptiedInRoot.some((e) => within(path, e));
}

/**
 * The bubblewrap arguments that lay out the root from the host (see the module): each of `sandboxRootFolders` that
 * exists bound read-only (a link made again as that link), `emptiedInRoot` covered, `/var` with the host's links in
 * it and its own `/var/tmp` (an empty tmpfs, or an empty folder when `readOnlyRoot`: the root is remounted read-only).
 */
export function rootArgs(readOnlyRoot: boolean): string[] {
  const a: string[] = [];
  for (const path of sandboxRootFolders) {
    let st;
    try {
      st = lstatSync(path);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) a.push("--symlink", readlinkSync(path), path);
    else if (st.isDirectory()) a.push("--ro-bind", path, path);
  }
  for (const e of emptiedInRoot) if (existsSync(e) && lstatSync(e).isDirectory()) a.push("--tmpfs", e);
  a.push("--dir", "/var");
  let entries: string[] = [];
  try {
    entries = readdirSync("/var");
  } catch {
    // No /var on the host: the sandbox's own stays empty.
  }
  for (const name of entries) {
    const path = `/var/${name}`;
    try {
      if (name !== "tmp" && lstatSync(path).isSymbolicLink()) a.push("--symlink", readlinkSync(path), path);
    } catch {
      // Gone since it was listed: not there in the sandbox either.
    }
  }
  a.push(readOnlyRoot ? "--dir" : "--tmpfs", "/var/tmp");
  return a;
}

/**
 * The folders of `path` (a PATH value) that the root does not show, with the rest of their install, to be shown
 * read-only: a program installed outside the system folders needs its install (pyenv's shims run ~/.pyenv/libexec,
 * a Python finds its lib/ beside bin/, node its lib/node_modules). In a home, the parts its layout names
 * (common/installs.ts: `~/.local/bin` with `~/.local/lib` and `libexec`, never `~/.local` with its keyrings and
 * sockets — issue 26 round 27, F27b-1); elsewhere each folder's parent, unless that is a top-level folder (then the
 * folder itself: never `/opt` or `/srv`). Real paths that exist; none a home or a top-level folder itself (a PATH of
 * `/srv`), inside `hidden` (the hub's home), inside another of them, or — outside the homes (which may lie in
 * `/tmp`) — in the sandbox's own folders (`/tmp`, `/run`) or in or holding a folder where services make sockets
 * (binds.ts `socketFolders`).
 */
export function pathInstalls(path: string, homes: string[], hidden: string[]): string[] {
  const found: string[] = [];
  for (const entry of path.split(":")) {
    if (!entry.startsWith("/") || !existsSync(entry)) continue;
    let real: string;
    try {
      real = realpathSync.native(entry);
    } catch {
      continue;
    }
    if (dirname(real) === "/" || real === "/" || homes.includes(real) || shownByRoot(real) || hidden.some((h) => within(real, h))) continue;
    const inHome = homes.some((h) => within(real, h));
    if (!inHome && (ownFolders.some((f) => within(real, f)) || socketFolders.some((f) => within(real, f) || within(f, real)))) continue;
    if (inHome) {
      for (const part of installParts(real)) {
        const shown = realPathOr(part, null);
        if (shown !== null && shown !== real && homes.some((h) => within(shown, h)) && !homes.includes(shown) && !hidden.some((h) => within(shown, h))) found.push(shown);
      }
      found.push(real);
      continue;
    }
    const parent = dirname(real);
    found.push(dirname(parent) === "/" ? real : parent);
  }
  const unique = [...new Set(found)].sort((a, b) => a.length - b.length);
  return unique.filter((p, i) => !unique.slice(0, i).some((q) => within(p, q)));
}

/**
 * The unix sockets in the parts of the host the root shows that a look can afford at each start (see the module):
 * `/etc` and each of `installs`, each read to at most `max` entries (`rootSocketScanEntriesMax`), links not followed
 * (in the sandbox they lead into it). An install outside `homes` that holds more is named in `unlooked`, and the
 * sandbox does not show it: a look cut short would leave a socket in it reachable (issue 26 round 13: npm's
 * `node_modules/.bin` on the hub's PATH used up one shared budget, and a socket in a later install was connected to).
 * An install in a home is shown as it is, not looked through: only the parts its layout names are shown there
 * (common/installs.ts; round 27, F27b-1 — `~/.local/state` with its sockets is not), and a look at pyenv's 100,000
 * files cost ~56 ms at every plugin start.
 * @returns the sockets' paths, to be bound over with `/dev/null`, and the installs not looked through to their end.
 */
export function socketsShown(installs: readonly string[], homes: readonly string[], max = rootSocketScanEntriesMax): { sockets: string[]; unlooked: string[] } {
  const looked = installs.filter((d) => !homes.some((h) => within(d, h)) && existsSync(d));
  const sockets: string[] = [];
  const unlooked: string[] = [];
  for (const root of existsSync("/etc") ? ["/etc", ...looked] : looked) {
    if (!socketsIn(root, max, sockets) && root !== "/etc") unlooked.push(root);
  }
  return { sockets, unlooked };
}

/** Adds the sockets below `root` to `into`, reading at most `max` entries; false when it had more. */
function socketsIn(root: string, max: number, into: string[]): boolean {
  let read = 0;
  const stack = [root];
  for (let dir = stack.pop(); dir !== undefined; dir = stack.pop()) {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      if (++read > max) return false;
      const p = join(dir, e.name);
      if (e.isSocket()) into.push(p);
      else if (e.isDirectory()) stack.push(p);
    }
  }
  return true;
}
