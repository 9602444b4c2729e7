/**
 * The agent sandbox (issue 14): where bubblewrap runs, the worker starts each agent with the worker's home hidden, so
 * that an agent (same OS user) cannot read the run token, config.json's keys, master.key, secrets.env, the database or
 * other runs' files. Only what the agent needs from the home is shown again, read-only: its run's `agent/` folder
 * (the context file) and the folder of its plugin when that is installed in the home.
 *
 * The file system is read-only except what the agent works on (issue 26, finding 2): the run's cwd, its own temporary
 * folders (an empty /tmp and /var/tmp per launch, TMPDIR=/tmp: the host's /tmp, with other runs' files and the folders
 * above a home kept under /tmp, is not there; issue 26 round 2, finding 9), its CLI's own state (`AgentPlugin.state`: ~/.claude, CODEX_HOME, …) and the
 * agent's rules.json `writable`. An agent runs as the hub's user, and that user's programs load code from everywhere
 * that user may write: ~/.local (a `.pth` in the user site runs in every Python), a Python or Node install in the
 * home (~/.pyenv, ~/miniconda3, ~/.nvm), ~/.npmrc (`node-options` for every `npm exec`), ~/.gitconfig (filters,
 * fsmonitor, sshCommand), shell profiles, ~/.ssh/config, and as root the whole system. A list of such files always
 * misses one; so nothing is writable unless named, and the hub user's home stays read-only even inside a writable
 * folder (a home under /tmp) — a cwd that is the home itself is read-only too, and one that holds the home is
 * refused. Beyond that the home is hidden but for what the agent needs, and so is the user's runtime folder
 * (src/worker/home-view.ts; issue 26 round 11). Where pasta is installed the agent has a network of its own
 * (src/worker/sandbox-network.ts; round 33, F33a-1): the internet, not the computer's loopback services but those named.
 *
 * `/dev` is a minimal one of the sandbox's own (null, zero, full, random, urandom, tty, ptys, /dev/shm), plus the
 * devices the agent's rules.json `devices` names, when src/kernel/devices.ts lets them through (issue 26, finding 15).
 *
 * `/proc` is masked as container runtimes mask it (src/common/bwrap.ts; round 2, finding 1): as root, a writable
 * /proc/sys/kernel/core_pattern had the kernel run the agent's program as full root outside the sandbox. Every folder
 * bound from the host goes by descriptor, opened and checked by the run's supervisor (round 2, findings 4, 5).
 *
 * The agent runs in its own PID namespace (it cannot see the hub's or the worker's processes, their environment or
 * their open files in /proc), in a new session whose process group the worker stops (bwrap's `--json-status-fd` gives
 * its id), with no capabilities (an agent run as root cannot unmount what hides the home).
 *
 * What the hub, its worker, supervisor, channels and plugins later run or load outside the sandbox is read-only inside
 * it (hub-code.ts `readOnlyPaths`): an agent that could append to the engine's dist/ or to node would run its code with the hub's
 * rights, master key included, at the next start.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { relative, isAbsolute, join } from "node:path";
import { homedir, userInfo } from "node:os";
import { findProgram } from "../sdk/index.js";
import type { RepositoryState } from "./git-state.js";
import { realPathOr } from "../common/file-checks.js";
import { bwrapBindsByFd, procMaskArgs } from "../common/bwrap.js";
import { t, type Lang } from "../i18n/messages.js";
import type { Seen } from "./steering.js";
import type { ConfigPass } from "./git-config.js";
import { pinnedFolders } from "./mount-pins.js";
import { networkArgv, type SandboxNetwork } from "./sandbox-network.js";

/** Where bubblewrap is, or why agents run without a sandbox on this computer. */
export type SandboxHere = { bwrap: string } | { off: string };

/** How long `doctor`'s trial run of bubblewrap may take, in ms. */
const sandboxProbeTimeoutMs = 10_000;

/** Finds bubblewrap: Linux only; `bwrap` on PATH. Why not is worded in `lang`. */
export function sandboxHere(platform: NodeJS.Platform = process.platform, path = process.env.PATH ?? "", lang: Lang = "en"): SandboxHere {
  if (platform !== "linux") return { off: t(lang, "sandbox.notLinux", { platform }) };
  const bwrap = findProgram("bwrap", path);
  if (!bwrap) return { off: t(lang, "sandbox.noBwrap") };
  return { bwrap };
}

/**
 * One sandboxed launch (real paths): what the agent may change (`writable`), the hub user's homes (read-only even
 * inside a writable folder), what stays read-only everywhere (`readOnlyPaths`), the folder to hide, the folders
 * inside it to show again (read-only), the host devices to pass through, the working folder.
 */
export interface SandboxPlan {
  bwrap: string;
  writable?: string[];
  homes?: string[];
  readOnly?: string[];
  hide: string;
  /** Other folders to hide (other homes of the engine and their backups, `autoloopFolders`), each if it exists. */
  alsoHide?: string[];
  /** Hidden folders whose parents inside a writable folder are pinned (mount points), so none is renamed away: tsx's cache. */
  pinned?: string[];
  show: string[];
  devices?: string[];
  cwd: string;
  /**
   * The cwd is not writable (`access: "read"`): bound read-only in its place, since under /tmp it would otherwise lie
   * in the sandbox's empty /tmp.
   */
  cwdReadOnly?: boolean;
  /**
   * What the worker looks at after the run (steering.ts `plantedSteering`): the folders the agent writes, and every
   * path guarded in them at launch (read-only parts and mount points), and the configuration files read then (taken
   * again for those the run could not write), and what git held for the guarded paths and its operations in progress
   * (git-state.ts).
   */
  watch?: { folders: string[]; guarded: string[]; seen: Seen; config?: ConfigPass; gitState?: RepositoryState[] };
  /**
   * Read-only folders that hold writable ones (steering.ts `readOnlyParents`: `.git/modules`, `.git/worktrees`),
   * bound by depth among the writable folders, so that the mount points inside them are bound over them.
   */
  readOnlyParents?: string[];
  /**
   * The homes of `homes` shown as empty, read-only folders (issue 26 round 11, F8/F10; src/worker/home-view.ts): only
   * the folders bound inside them are there, and `homeRead`, and the `links` made again. The others are bound
   * read-only as a whole (a cwd that is the home).
   */
  hiddenHomes?: string[];
  /** Paths inside `hiddenHomes` shown read-only (`homeView`: ~/.gitconfig, the PATH's tools, the program, `readable`). */
  homeRead?: string[];
  /** The folders agents write (agent-folders.ts), this launch's own included: the program is not shown by a way through one. */
  agentFolders?: string[];
  /** `[link, target]`: links inside `hiddenHomes` made again (each left out where a bound folder already shows it). */
  links?: [string, string][];
  /**
   * State folders shown as a skeleton (src/worker/state-steering.ts): an empty folder of the sandbox's own, in which
   * their entries are bound (`writable`, `readOnly`) and their links made again (`links`).
   */
  skeletons?: string[];
  /**
   * Entries of the state folders that are the run's own (`AgentState.private`; issue 26 round 12, F12-4): an empty
   * tmpfs (0700) over each, after the folder holding it is bound, so that what the run writes there — scripts its CLI
   * sources or runs — reaches neither another run nor the host.
   */
  privates?: string[];
  /** Runtime folders hidden (`/run/user`, `$XDG_RUNTIME_DIR`; F6), and the empty one made for the agent (0700). */
  runtime?: { hide: string[]; dir: string | null };
  /** The agent's network of its own (sandbox-network.ts); absent: the computer's (`"network": "host"`, or no pasta). */
  network?: SandboxNetwork;
}

/** How many folders deep `path` lies (`/` is 0): a mount over a folder comes after the mounts over its parents. */
function depth(path: string): number {
  return path.split("/").filter(Boolean).length;
}

/**
 * The file descriptor on which bwrap writes its status (`--json-status-fd`, JSON lines; the supervisor opens it as a
 * pipe): `{"child-pid": …}` once it has cloned the sandbox's first process, and `{"exit-code": …}` only when the
 * program it started there ends. A launch whose status never says `exit-code` never ran its program: bwrap stopped
 * while setting the sandbox up (supervisor-main.ts; a mount gone since the plan, for one).
 */
export const sandboxStatusFd = 3;
/** The first file descriptor of the bind sources (`SandboxLaunch.sources`, in order), after the status one. */
export const firstBindFd = sandboxStatusFd + 1;

/**
 * A sandboxed launch: bwrap's command line, and the real paths it binds by descriptor (`--bind-fd`, `--ro-bind-fd`;
 * issue 26 round 2, findings 3-5): `sources[i]` is to be opened (checked, `openBindSource`) as `firstBindFd + i` of
 * the bwrap process. Bound by path, a source checked by the worker was resolved again by bwrap, after whoever writes
 * a parent folder (another run sharing it) could swap in a link to the hub's home.
 */
export interface SandboxLaunch {
  argv: string[];
  sources: string[];
  /** The plan's network: the supervisor joins pasta to an `attach` launch (`--block-fd firstBindFd + sources.length`). */
  network?: SandboxNetwork;
}

/**
 * The command line that runs `argv` in the sandbox `plan` describes. /tmp and /var/tmp are the sandbox's own, empty
 * (issue 26 round 2, finding 9: the host's /tmp is where other runs' files are, and where a hub whose home or code
 * lies under /tmp looks for Node modules); /proc is masked as container runtimes mask it (findings 1, 2).
 * @param statusFd where bwrap reports the agent's process id and whether it ran (`sandboxStatusFd`; null: nowhere).
 */
export function sandboxArgv(plan: SandboxPlan, argv: string[], statusFd: number | null = sandboxStatusFd): SandboxLaunch {
  // Parents before what lies inside them; at the same place a home (read-only) after a writable folder.
  // A hidden home is an empty folder first, then what is bound inside it (deeper, so later).
  const cwdShown = plan.cwdReadOnly && !(plan.homes ?? []).includes(plan.cwd) ? [plan.cwd] : [];
  const hidden = plan.hiddenHomes ?? [];
  const shownHomes = (plan.homes ?? []).filter((h) => !hidden.includes(h));
  const fixed = [...shownHomes, ...cwdShown, ...(plan.homeRead ?? []), ...(plan.readOnlyParents ?? [])];
  // tsx's hidden cache is pinned too: renamed away with a parent, it would be there to read (round 34 review: the hub's
  // TMPDIR two levels below a cwd of /tmp). Not every hidden home: a cwd of /tmp holds up to 200 of them (CI).
  const writable = [...(plan.writable ?? []), ...pinnedFolders(plan.writable ?? [], [...fixed, ...hidden, ...(plan.skeletons ?? []), ...(plan.privates ?? []), ...(plan.readOnly ?? []), ...(plan.pinned ?? [])])];
  const layers = [
    ...[...hidden, ...(plan.skeletons ?? [])].map((p) => ({ p, flag: "--tmpfs", order: -1 })),
    ...writable.map((p) => ({ p, flag: "--bind-fd", order: 0 })),
    ...(plan.privates ?? []).map((p) => ({ p, flag: "--private", order: 0.5 })),
    ...fixed.map((p) => ({ p, flag: "--ro-bind-fd", order: 1 })),
  ].sort((a, b) => depth(a.p) - depth(b.p) || a.order - b.order);
  const sources: string[] = [];
  const bind = (flag: string, p: string) => {
    sources.push(p);
    return [flag, String(firstBindFd + sources.length - 1), p];
  };
  // A link is made again only where no folder bound from the host shows that place already.
  const bound = [...(plan.writable ?? []), ...(plan.readOnlyParents ?? []), ...shownHomes, ...cwdShown, ...(plan.homeRead ?? []), ...(plan.readOnly ?? []), ...plan.show];
  const made = new Set<string>(); // bwrap refuses to make a link twice
  const links = (plan.links ?? []).filter(([l]) => !bound.some((b) => isInside(l, b)) && [...hidden, ...(plan.skeletons ?? [])].some((h) => isInside(l, h)) && !made.has(l) && made.add(l));
  const runtime = plan.runtime ?? { hide: [], dir: null };
  // The sandbox's DNS goes to pasta's forwarding address (sandbox-network.ts), where /etc names a resolver at all.
  const resolv = plan.network && existsSync("/etc/resolv.conf") ? ["--ro-bind-fd", String(firstBindFd + sources.push(plan.network.resolv) - 1), "/etc/resolv.conf"] : [];
  const out = [
    plan.bwrap,
    "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", ...procMaskArgs(), ...resolv,
    "--tmpfs", "/tmp", ...(existsSync("/var/tmp") ? ["--tmpfs", "/var/tmp"] : []),
    ...runtime.hide.flatMap((d) => ["--tmpfs", d]),
    ...(runtime.dir ? ["--perms", "0700", "--dir", runtime.dir] : []),
    "--unshare-pid", "--new-session", "--die-with-parent", "--cap-drop", "ALL",
    ...(statusFd === null ? [] : ["--json-status-fd", String(statusFd)]),
    ...(plan.devices ?? []).flatMap((d) => ["--dev-bind", d, d]),
    ...layers.flatMap(({ p, flag }) => (flag === "--tmpfs" ? [flag, p] : flag === "--private" ? ["--perms", "0700", "--tmpfs", p] : bind(flag, p))),
    // After the writable folders (the engine inside a cwd stays read-only), before the home is hidden: a read-only
    // folder that holds the home must not show it again.
    ...(plan.readOnly ?? []).flatMap((d) => bind("--ro-bind-fd", d)),
    "--tmpfs", plan.hide,
    ...(plan.alsoHide ?? []).flatMap((d) => ["--tmpfs", d]),
    ...plan.show.flatMap((d) => bind("--ro-bind-fd", d)),
    ...links.flatMap(([l, target]) => ["--symlink", target, l]),
    ...hidden.flatMap((h) => ["--remount-ro", h]),
    "--chdir", plan.cwd,
    "--", ...argv,
  ];
  if (!plan.network) return { argv: out, sources };
  return { argv: networkArgv(plan.network, out, firstBindFd + sources.length, process.getuid?.() ?? 0, process.getgid?.() ?? 0), sources, network: plan.network };
}

/**
 * The folders of this engine in the hub user's homes `homes` (real paths of the folders whose name starts with
 * `.agent-autoloop`: the default home, other homes beside it, `~/.agent-autoloop-backups`): a sandbox hides them all,
 * not only the home of the hub it runs for (issue 26 round 7, F15: an agent read a backup archive, with the master key
 * and every key, from a folder the docs recommended; a second home in `~` was as readable).
 */
export function autoloopFolders(homes: readonly string[]): string[] {
  const out: string[] = [];
  for (const home of homes) {
    let names: string[];
    try {
      names = readdirSync(home);
    } catch {
      continue;
    }
    for (const name of names) {
      if (!name.startsWith(".agent-autoloop")) continue;
      const path = realPath(join(home, name));
      try {
        if (statSync(path).isDirectory()) out.push(path);
      } catch {
        // gone meanwhile
      }
    }
  }
  return [...new Set(out)];
}

/**
 * The hub user's home folders, as real paths that exist: `$HOME`, the home the password database gives (they
 * differ when HOME was changed) and `also` (a child's HOME). `/` is never one: it cannot be kept read-only and
 * written under at once, nor hidden.
 */
export function userHomes(also: (string | undefined)[] = []): string[] {
  const found = new Set<string>();
  let passwd: string | null = null;
  try {
    passwd = userInfo().homedir;
  } catch {
    // no entry for this uid (a container's arbitrary user)
  }
  for (const h of [homedir(), passwd, ...also]) {
    if (!h || !existsSync(h)) continue;
    const real = realPath(h);
    if (real !== "/") found.add(real);
  }
  return [...found];
}

/**
 * Where a launch's folders lie (real paths): the worker's home, the hub user's homes, the read-only folders, and the
 * other paths that show the worker's home (`hubAliases`: another mount of a folder holding it, src/common/mounts.ts).
 */
export interface SandboxPlaces {
  hubHome: string;
  homes: string[];
  readOnly: string[];
  hubAliases?: string[];
}

/**
 * Why the sandbox cannot leave `path` (a real path) writable: it lies in the worker's home (hidden; by any path that
 * shows it: `hubAliases`), it is or holds
 * a home of the hub's user (kept read-only), it lies in a read-only folder (`readOnlyPaths`), or it holds the worker's
 * home or a read-only folder (issue 26 round 2, finding 9: an agent that writes a folder above them can move them
 * aside or put a `node_modules` above them, where Node looks for what the hub's plugins lack). Null when it can.
 */
export function placeProblem(path: string, places: SandboxPlaces): { why: "inHubHome" } | { why: "holdsHome"; home: string } | { why: "readOnly" | "holdsHub"; folder: string } | null {
  const hub = [places.hubHome, ...(places.hubAliases ?? [])];
  if (hub.some((h) => isInside(path, h))) return { why: "inHubHome" };
  const home = places.homes.find((h) => isInside(h, path));
  if (home) return { why: "holdsHome", home };
  const folder = places.readOnly.find((d) => isInside(path, d));
  if (folder) return { why: "readOnly", folder };
  const held = [...hub, ...places.readOnly].find((d) => isInside(d, path));
  return held ? { why: "holdsHub", folder: held } : null;
}

/** `path` with a leading `~/` (or `~` alone) taken from `home`. */
export function expandTilde(path: string, home: string): string {
  if (path === "~") return home;
  return path.startsWith("~/") ? join(home, path.slice(2)) : path;
}

/** `path` with symbolic links resolved (as the mounts see it); the path itself when it does not exist. */
export function realPath(path: string): string {
  return realPathOr(path, path);
}

/** Whether `path` is `dir` or lies inside it (both already resolved). */
export function isInside(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/**
 * Runs `true` in a sandbox like the agents' (hiding `hide`), to tell whether bubblewrap works here: a kernel or a
 * container may forbid the namespaces it needs, and a bubblewrap older than 0.8 cannot bind by descriptor. Returns
 * null when it works, else bwrap's message (or, in `lang`, that it is older than 0.8).
 */
export function probeSandbox(bwrap: string, hide: string, lang: Lang = "en"): string | null {
  try {
    const { argv } = sandboxArgv({ bwrap, hide, show: [], cwd: "/" }, ["true"], null);
    execFileSync(argv[0]!, argv.slice(1), { stdio: ["ignore", "ignore", "pipe"], timeout: sandboxProbeTimeoutMs, env: { PATH: process.env.PATH ?? "" } });
    return bwrapBindsByFd(bwrap) ? null : t(lang, "sandbox.bwrapTooOld");
  } catch (e) {
    const err = e as { stderr?: Buffer; message: string };
    return err.stderr?.toString().trim() || err.message;
  }
}
