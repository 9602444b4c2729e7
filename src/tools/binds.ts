/**
 * What a plugin's `[sandbox] binds` really reach (issue 26 #3 and round 5; DESIGN.md "Trust boundaries": plugins never
 * bind or write their own sandbox's definition, what the hub runs, or the hidden paths). Each source is resolved with
 * realpath — a symlink in the plugin folder (kept by `add` and by git) or anywhere on the way counts as where it
 * leads — and refused when it is:
 * - `/` (the whole file system);
 * - in the host's `/proc`, in any mode (every process of the computer, their command lines, the kernel's knobs; the
 *   sandbox has a /proc of its own) — by what it is, not its name (issue 26 round 10): on or holding any proc mount
 *   (`mount -t proc proc /srv/hostproc`, a monitoring container's /host/proc); written, on or holding any mount of a
 *   kernel file system (sysfs, cgroup, debugfs, …: src/common/mounts.ts `kernelFsTypes`), refused as `/sys` is;
 * - a home of the hub's user, or a folder holding one (`/home`);
 * - a path the host hides from every sandbox (the hub's home, with its keys, by any path that shows it: the caller
 *   passes every other mount of a folder holding it, src/common/mounts.ts `aliasesOf`), inside one, or holding one — except
 *   what is inside the plugin's own folder, which the hub's home holds for an installed plugin;
 * - bound writable, and any of (round 5, F1, F5, F6):
 *   - the plugin's own folder, a folder holding it or anything inside it (its manifest defines the sandbox, its files
 *     are what "always allow" trusts; a hard link or a link to the manifest inside a writable subfolder rewrote it);
 *   - in or holding a system folder (`systemFolders`: the kernel's settings, programs, libraries, configuration,
 *     services' state — run as root, a writable /proc/sys/kernel set host sysctls);
 *   - in or holding a folder the hub runs or loads code from outside every sandbox (`BindContext.hubCode`: the
 *     engine, node, every PATH folder, every plugin root such as `serve --plugins`): the same rule as an agent's
 *     `writable` (src/worker/sandbox.ts `hubCodeProblem`).
 * - in any mode, a socket or a folder holding one at any depth (`/tmp/tmux-0`, `/tmp/.X11-unix`; round 7, F14: a
 *   read-only bind of a socket reached a daemon running as root; round 11, F7: one 4 levels deep, past the old
 *   3-level look); a folder in or holding one where services create sockets whenever they start (`socketFolders`:
 *   /run, /var/run, /var/snap, docker's and LXD's state, the user's runtime folder) or one anyone can write (/tmp,
 *   /dev/shm, a 0777 folder inside the source), since the check runs at each start only and a socket made later
 *   would be reachable; and a folder the look could not finish in — more than `bindSocketScanEntriesMax` entries, or
 *   a folder inside it the hub can enter but not list — since what was not read is not "no socket". Connecting needs
 *   no write permission, and the sandbox's own network namespace does not cover a socket's file;
 * - reached through a link lying in a folder sandboxed agents write, in any mode (`BindContext.agentFolders`; round 37);
 * - a host device the device policy does not pass (devices.ts `checkDevice`; round 6: `plugins inspect` showed a bind
 *   of /dev/pts as allowed, which the launch then refused).
 * A bind that passes is shown to the owner (approval card, `plugins inspect`) with its real source, and marked broad
 * when it is writable outside the plugin's folder, a whole top-level folder (`/etc`, `/var/lib`), or right in the
 * user's home (`~/.ssh`, `~/.npmrc`). Reads the file system (realpath); runs nothing.
 */
import { accessSync, constants, readdirSync, statSync, type Stats } from "node:fs";
import { lstatOr, realPathOr } from "../common/file-checks.js";
import { dirname, join, resolve, sep } from "node:path";
import { bindSocketScanEntriesMax } from "./limits.js";
import { hubCodeProblem, lookupEntry } from "../worker/hub-code.js";
import { linkInAgentFolder, readAgentFolders } from "../worker/agent-folders.js";
import { checkDevice, isDevicePath, type DeviceRefusal } from "./devices.js";
import { aliasesOf, kernelMountsAt, readMounts, type MountEntry } from "../common/mounts.js";

/**
 * One `binds` entry of a manifest's `[sandbox]`: `host` is absolute, or relative to the plugin folder (`relative`);
 * `container` is absolute. Defined here, beside what checks it (tools/types.ts re-exports it), so that this module
 * imports nothing of the tool host.
 */
export interface BindMount {
  host: string;
  relative: boolean;
  container: string;
  readOnly: boolean;
}

/**
 * Why a bind is refused at start: its source is missing, `/`, in the host's /proc, a home, hidden, or — writable — the
 * plugin's own folder (or in it), a system folder, or a folder of the hub's code (see the module).
 */
export type BindRefusal =
  | "missing" | "root" | "proc" | "userHome" | "homeDotFolder" | "hidden" | "ownFolder" | "system" | "hubCode" | "device" | "socket"
  | "socketFolder" | "socketScan" | "socketUnread" | "agentLink";

/**
 * Folders no writable bind may lie in or hold (issue 26 round 5, F5): the kernel's settings and devices' attributes,
 * boot files, configuration, programs and libraries, installed software, runtime sockets, and every state folder of
 * /var. An allow-shape inside /var: only `varWritable` there.
 */
export const systemFolders = [
  "/proc", "/sys", "/boot", "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/snap", "/nix", "/run", "/var",
] as const;
/**
 * Folders where services create unix sockets whenever they start (issue 26 round 11, F7): no bind, read-only either,
 * may lie in or hold one — a look at start cannot see a socket made after it (LXD's
 * `/var/snap/lxd/common/lxd/unix.socket`, docker's plugins, libvirt's, MySQL's, postfix's). The user's runtime folder
 * (`XDG_RUNTIME_DIR`) is added by the caller; world-writable folders (/tmp, /dev/shm) are refused by their mode.
 */
export const socketFolders = [
  "/run", "/var/run", "/var/lock", "/var/snap", "/var/lib/docker", "/var/lib/containerd", "/var/lib/lxd", "/var/lib/incus", "/var/lib/libvirt",
  "/var/lib/mysql", "/var/spool/postfix",
] as const;
/** The folders of /var a writable bind may lie in: scratch space and web roots. */
export const varWritable = ["/var/tmp", "/var/www"] as const;

/** Why a bind that is allowed deserves a warning (see the module). */
export type BindBroad = "writable" | "topLevel" | "inHome";

/** One bind as it really is: its real source (the path as written when missing), its container path, its mode. */
export interface BindShown {
  source: string;
  container: string;
  readOnly: boolean;
  /** Present when the bind is allowed but broad. */
  broad?: BindBroad;
}

/** A bind checked: as shown, and why it is refused (null when it is not), with the folder that refuses it. */
export interface BindChecked extends BindShown {
  refused: BindRefusal | null;
  /** For `system`, `hubCode` and `homeDotFolder`: the folder the source lies in or holds. */
  folder?: string;
  /** For `socket`: the socket found. For `socketFolder` and `socketUnread`, `folder` says which folder. */
  socket?: string;
  /** For `socketScan`: the most entries looked through (`bindSocketScanEntriesMax`). */
  limit?: number;
  /** For `device`: why the device policy does not pass it. */
  device?: DeviceRefusal;
}

/**
 * What the binds are checked against: the host's hidden paths, the homes of the hub's user (this process's, the
 * password database's, and those other starts of the hub recorded: host/code-folders.ts) and the folders the hub runs
 * or loads code from (src/worker/sandbox.ts `hubCodeFolders`, with the recorded ones; none when absent), asked for
 * only when a writable bind needs them (finding them reads the engine's node_modules: tens of ms).
 */
export interface BindContext {
  hidden: readonly string[];
  userHomes: readonly string[];
  hubCode?: () => readonly string[];
  /**
   * The mount table (src/common/mounts.ts; default: this process's): a source on or holding a proc mount is refused
   * as /proc is, one on or holding another kernel file system is refused writable as /sys is (issue 26 round 10).
   * `hidden` and `userHomes` already hold every other path that shows them (the caller's aliases).
   */
  mounts?: readonly MountEntry[];
  /** The user's runtime folder (`XDG_RUNTIME_DIR`), refused as `socketFolders` are; none when absent. */
  runtimeDir?: string;
  /** The most entries a bind is looked through for sockets (default `bindSocketScanEntriesMax`; tests lower it). */
  socketScanEntriesMax?: number;
  /**
   * The folders sandboxed agents write (src/worker/agent-folders.ts): a source whose way crosses a link lying in one is
   * refused, in any mode (round 37, F37b-1, F37b-2: an agent replaced the folder a trusted plugin binds by a link to
   * another repository's `.git/hooks`, and to `~/.ssh`; the plugin wrote a hook there and read the key).
   */
  agentFolders?: readonly string[];
}

/** Whether `inner` is `outer` or inside it (both absolute, normalised). */
export function within(inner: string, outer: string): boolean {
  return inner === outer || outer === "/" || inner.startsWith(outer.endsWith(sep) ? outer : outer + sep);
}

/** How many names a path has (`/etc` 1, `/var/lib` 2). */
function depth(p: string): number {
  return p.split(sep).filter(Boolean).length;
}

/**
 * Checks every bind of `sandbox` for the plugin in `pluginDir`, in their order. Never throws: an unreadable path is
 * `missing`.
 */
export function checkBinds(sandbox: { readonly mounts: readonly BindMount[] }, pluginDir: string, ctx: BindContext): BindChecked[] {
  const plugin = realPathOr(pluginDir, resolve(pluginDir));
  const homes = [...new Set(ctx.userHomes.map((h) => realPathOr(h, resolve(h))))].filter((h) => h !== "/");
  const hidden = ctx.hidden.map((h) => realPathOr(h, resolve(h)));
  let found: readonly string[] | null = null;
  const hubCode = () => (found ??= ctx.hubCode?.() ?? []);
  const mounts = ctx.mounts ?? readMounts();
  const plugins = [plugin, ...aliasesOf(plugin, mounts)];
  const sockets = { folders: [...socketFolders, ...(ctx.runtimeDir ? [realPathOr(ctx.runtimeDir, resolve(ctx.runtimeDir))] : [])], max: ctx.socketScanEntriesMax ?? bindSocketScanEntriesMax };
  return sandbox.mounts.map((m) => {
    const written = m.relative ? resolve(pluginDir, m.host) : m.host;
    const source = realPathOr(written, null);
    const base = { container: m.container, readOnly: m.readOnly };
    if (source === null) return { source: written, ...base, refused: "missing" };
    const crossed = linkInAgentFolder(written, ctx.agentFolders ?? []);
    if (crossed !== null) return { source, ...base, refused: "agentLink", folder: crossed.link };
    const ctxOf = (kernel: Kernel[]): VerdictContext => ({ readOnly: m.readOnly, plugins, homes, hidden, hubCode, kernel, sockets });
    // The source by every path that shows it (another mount of a folder holding it): each must pass, the first
    // refusal counts; what is shown is the verdict of the source's own path.
    const own = verdict(source, resolve(written), ctxOf(kernelMountsAt(source, mounts)));
    if (own.refused !== null) return { source, ...base, ...own };
    const other = aliasesOf(source, mounts).map((a) => verdict(a, a, ctxOf([]))).find((v) => v.refused !== null);
    return { source, ...base, ...(other ?? own) };
  });
}

type Verdict = { refused: BindRefusal | null; broad?: BindBroad; folder?: string; device?: DeviceRefusal; socket?: string; limit?: number };

/** The system folder (`systemFolders`) `source` lies in or holds, or null (a folder of `varWritable` passes). */
function systemFolderOf(source: string): string | null {
  if (varWritable.some((v) => within(source, v))) return null;
  return systemFolders.find((f) => within(source, f) || within(f, source)) ?? null;
}

/** Whether anyone may make entries — sockets — in the folder `st` describes (mode o+w, sticky or not: /tmp, /dev/shm). */
function worldWritable(st: Stats | null): boolean {
  return st !== null && st.isDirectory() && (st.mode & 0o002) !== 0;
}

/**
 * Why `source` may reach a unix socket (see the module), or null when it cannot: it is one; it is a folder in or
 * holding one of `sockets.folders` or world-writable; a socket or a world-writable folder lies in it at any depth; or
 * the look did not finish — more than `sockets.max` entries, or a folder the hub can enter but not list (a socket at
 * a path known to the plugin would stay reachable). Links are not followed inside (in the sandbox they lead into it).
 */
function socketIn(source: string, sockets: SocketLook): Verdict | null {
  let st;
  try {
    st = statSync(source);
  } catch {
    return null;
  }
  if (st.isSocket()) return { refused: "socket", socket: source };
  if (!st.isDirectory()) return null;
  if (worldWritable(st)) return { refused: "socketFolder", folder: source };
  const folder = sockets.folders.find((f) => within(source, f) || within(f, source));
  if (folder !== undefined) return { refused: "socketFolder", folder };
  let read = 0;
  // Depth first with a stack of its own: as deep as the folder goes, without the call stack's limit.
  const stack = [source];
  for (let dir = stack.pop(); dir !== undefined; dir = stack.pop()) {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      if (enterable(dir)) return { refused: "socketUnread", folder: dir };
      continue;
    }
    for (const e of entries) {
      if (++read > sockets.max) return { refused: "socketScan", limit: sockets.max };
      const path = join(dir, e.name);
      if (e.isSocket()) return { refused: "socket", socket: path };
      if (!e.isDirectory()) continue;
      if (worldWritable(lstatOr(path))) return { refused: "socketFolder", folder: path };
      stack.push(path);
    }
  }
  return null;
}

/** What the socket look goes by: the folders where services make sockets, the most entries read. */
interface SocketLook {
  folders: readonly string[];
  max: number;
}

/** Whether this process may pass through the folder `dir` (search permission): then a path in it can be reached. */
function enterable(dir: string): boolean {
  try {
    accessSync(dir, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}


type Kernel = { at: string; fsType: string };

/**
 * What one path of a source is judged against: its mode, the plugin folder's paths (its own and every alias), the
 * homes, the hidden paths, the hub's code folders, and the kernel file system mounts the source lies on or holds.
 */
interface VerdictContext {
  readOnly: boolean;
  plugins: readonly string[];
  homes: readonly string[];
  hidden: readonly string[];
  hubCode: () => readonly string[];
  kernel: readonly Kernel[];
  sockets: SocketLook;
}

/** The verdict on one path of a source. */
function verdict(source: string, written: string, c: VerdictContext): Verdict {
  const { readOnly, plugins, homes, hidden, hubCode } = c;
  if (source === "/") return { refused: "root" };
  if (within(source, "/proc") || c.kernel.some((k) => k.fsType === "proc")) return { refused: "proc" };
  const device = isDevicePath(source);
  if (device) {
    const d = checkDevice(source);
    if (!d.ok) return { refused: "device", device: d.why };
  }
  if (homes.some((home) => within(home, source))) return { refused: "userHome" };
  const inPlugin = plugins.some((p) => within(source, p));
  if (hidden.some((h) => within(h, source) || (within(source, h) && !inPlugin))) return { refused: "hidden" };
  if (!readOnly && (inPlugin || plugins.some((p) => within(p, source)))) return { refused: "ownFolder" };
  if (!readOnly) {
    const system = systemFolderOf(source);
    if (system !== null) return { refused: "system", folder: system };
    // A device passed by the device policy is bound with --dev-bind whatever its mode (devices.ts); anything else
    // written on a kernel file system changes the kernel's state, as /sys does.
    if (!device && c.kernel[0]) return { refused: "system", folder: `${c.kernel[0].at} (${c.kernel[0].fsType})` };
    const code = hubCodeProblem([source, written], hubCode());
    if (code) return { refused: "hubCode", folder: code.folder };
    // What programs of the hub's user look in at the top of a home or above the hub's code (the rule of an agent's
    // `writable`): a dot entry, `node_modules`, `package.json`, a home's `go` (round 47, F47a-4: a plugin's writable
    // bind of ~/go/pkg/mod rewrote what a trusted `go run` plugin compiled).
    const place = lookupEntry(source, hubCode(), homes) ?? lookupEntry(written, hubCode(), homes);
    if (place !== null) return { refused: "homeDotFolder", folder: place };
  }
  if (!inPlugin) {
    const socket = socketIn(source, c.sockets);
    if (socket !== null) return socket;
  }
  if (inPlugin) return { refused: null };
  if (!readOnly) return { refused: null, broad: "writable" };
  if (depth(source) <= 2) return { refused: null, broad: "topLevel" };
  if (homes.includes(dirname(source))) return { refused: null, broad: "inHome" };
  return { refused: null };
}

/** The binds as shown to the owner (allowed ones; `broad` only when present). */
export function shownBinds(checked: readonly BindChecked[]): BindShown[] {
  return checked.map(({ source, container, readOnly, broad }) => ({ source, container, readOnly, ...(broad ? { broad } : {}) }));
}

/** The folders the workers of the hub homes `homes` record as written by sandboxed agents (src/worker/agent-folders.ts). */
export function agentFoldersOf(homes: readonly string[]): string[] {
  return [...new Set(homes.flatMap(readAgentFolders))];
}

/**
 * The first bind (its real `source` elsewhere than its container path) whose container path is, holds or lies in one of `shown` (the installs of the programs on PATH the
 * sandbox shows: sandbox-root.ts `pathInstalls`), or undefined (round 37, F37b-4: a bind over `/usr/bin` ran the
 * agent's `python3`; the static folders are refused when the manifest is read, sandbox-spec.ts `bindCoveredPaths`).
 */
export function bindCovering<B extends { source: string; container: string }>(binds: readonly B[], shown: readonly string[]): B | undefined {
  // A bind of a folder at its own path (the engine's, read-only) shows the same files there: nothing is swapped.
  return binds.find((b) => b.source !== b.container.replace(/\/+$/, "") && coversCode(b.container.replace(/\/+$/, ""), shown));
}

/** Whether container path `at` (absolute, normalised) is, holds or lies in one of `covered`. */
export function coversCode(at: string, covered: readonly string[]): boolean {
  return covered.some((c) => at === c || at.startsWith(c + "/") || c.startsWith(at === "/" ? "/" : at + "/"));
}
