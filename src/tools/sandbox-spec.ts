/**
 * Reading the values of `[sandbox]` (spec tool-plugins.md §7) at load time: Docker's memory sizes, `-v` binds, and
 * paths that must stay inside the plugin folder. Each function returns the value or an error text key; the manifest
 * validator names the field and line.
 */
import { posix } from "node:path";
import type { BindMount } from "./types.js";
import { coversCode } from "./binds.js";

const memoryUnits: Record<string, number> = {
  "": 1, b: 1, k: 1024, kb: 1024, m: 1024 ** 2, mb: 1024 ** 2, g: 1024 ** 3, gb: 1024 ** 3, t: 1024 ** 4, tb: 1024 ** 4,
};

/**
 * Parses a Docker memory size: a number (fractions allowed) and an optional unit b, k, kb, m, mb, g, gb, t, tb in any
 * case, steps of 1024 ("256m" = 268435456). @returns bytes (whole), or null for anything else (`256mi`, `-1m`, "").
 */
export function parseMemory(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  if (!m) return null;
  const unit = memoryUnits[m[2]!.toLowerCase()];
  if (unit === undefined) return null;
  const bytes = Math.floor(Number(m[1]) * unit);
  return Number.isSafeInteger(bytes) ? bytes : null;
}

/** Whether a path has a `..` segment (`a/../b`, `..`, `../x`): such paths are refused in binds and entry points. */
export function hasDotDot(path: string): boolean {
  return path.split("/").includes("..");
}

/**
 * Why a bind is refused when the manifest is read: its form, a `..` segment (path traversal), the whole file system
 * (`root`), or the plugin's own folder, its manifest or anything else in its folder bound writable (`ownFolder`: the
 * sandbox's definition is never writable from inside; issue 26 #3 and round 5, F6: a writable subfolder holding the
 * manifest's link target or a hard link of it rewrote it), or a container path of a source outside the plugin's folder
 * that is, holds or lies in what the sandbox itself runs or mounts (`destination`: `bindCoveredPaths`; round 37, F37b-4: a bind onto `/workspace` ran
 * the agent's `main.py` under the trust given to the plugin's own). Binds that only their real path shows to be wrong
 * are refused at start (binds.ts).
 */
export type BindError = "form" | "traversal" | "root" | "ownFolder" | "destination";

/**
 * Container paths no bind may be, hold or lie in: the plugin's own folder (`/workspace`), the system's programs,
 * libraries and configuration the sandbox shows from the host, and its own `/proc` (round 37, F37b-4). Not `/dev`
 * (a device bind goes there) nor `/opt`, `/mnt`, `/data` and the like, which the sandbox does not show.
 */
export const bindCoveredPaths = ["/workspace", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/nix", "/proc"] as const;


/**
 * Parses one `binds` entry in Docker `-v` form: `host:container` or `host:container:ro|rw`. `host` is absolute or
 * relative to the plugin folder (`./vendor`, `vendor`); `container` is absolute and not `/`. Named volumes (a host part
 * without `/` that does not exist as a relative folder) cannot be told apart from relative paths, so relative paths are
 * taken as folders of the plugin; a missing one is refused when the plugin starts.
 */
export function parseBind(text: string): BindMount | BindError {
  const parts = text.split(":");
  if (parts.length < 2 || parts.length > 3) return "form";
  const [host, container, mode] = parts as [string, string, string | undefined];
  if (host === "" || container === "" || !container.startsWith("/") || container.replace(/\/+$/, "") === "") return "form";
  if (mode !== undefined && mode !== "ro" && mode !== "rw") return "form";
  if (hasDotDot(host) || hasDotDot(container)) return "traversal";
  const relative = !host.startsWith("/");
  const normal = posix.normalize(host).replace(/\/+$/, "");
  if (!relative && normal === "") return "root";
  const readOnly = mode === "ro";
  // A relative source lies in the plugin's folder (a link there leading out refuses the plugin): never writable.
  if (relative && !readOnly) return "ownFolder";
  // The plugin's own files may go anywhere (the spec's `./vendor:/workspace/vendor:ro`): "always allow" trusts them.
  if (!relative && coversCode(posix.normalize(container).replace(/\/+$/, ""), bindCoveredPaths)) return "destination";
  return { host, relative: !host.startsWith("/"), container, readOnly: mode === "ro" };
}

/** Linux capability names `cap_drop` may list (without the `CAP_` prefix), plus `ALL`. */
export const capabilityNames = new Set([
  "ALL", "AUDIT_CONTROL", "AUDIT_READ", "AUDIT_WRITE", "BLOCK_SUSPEND", "BPF", "CHECKPOINT_RESTORE", "CHOWN", "DAC_OVERRIDE",
  "DAC_READ_SEARCH", "FOWNER", "FSETID", "IPC_LOCK", "IPC_OWNER", "KILL", "LEASE", "LINUX_IMMUTABLE", "MAC_ADMIN", "MAC_OVERRIDE",
  "MKNOD", "NET_ADMIN", "NET_BIND_SERVICE", "NET_BROADCAST", "NET_RAW", "PERFMON", "SETFCAP", "SETGID", "SETPCAP", "SETUID",
  "SYS_ADMIN", "SYS_BOOT", "SYS_CHROOT", "SYS_MODULE", "SYS_NICE", "SYS_PACCT", "SYS_PTRACE", "SYS_RAWIO", "SYS_RESOURCE",
  "SYS_TIME", "SYS_TTY_CONFIG", "SYSLOG", "WAKE_ALARM",
]);

/** Whether `name` is a capability `cap_drop` may name (`NET_RAW`, `CAP_NET_RAW`, `net_raw`, `ALL`). */
export function isCapability(name: string): boolean {
  return capabilityNames.has(name.toUpperCase().replace(/^CAP_/, ""));
}
