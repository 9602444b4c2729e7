/**
 * What a path IS, from the kernel's mount table (issue 26 round 10, findings High 2 and Medium 3): both sandboxes hid
 * the hub's home and refused binds of /proc by their paths, so another mount showing the same folder — a bind mount of
 * a folder holding the home (`mount --bind /srv /mnt/alias`, NixOS impermanence's `/persist`, a container volume) or
 * a second proc mount (a monitoring container's `/host/proc`) — showed the keys and every process's command line.
 *
 * A place in the file system is told by its file system (`major:minor` in /proc/self/mountinfo) and its path inside
 * that file system (the mount's root joined with the rest of the path), not by the path it is reached at. From the
 * mount tree (overmounts and covered mounts taken into account) this module finds every other path that shows a
 * place (`aliasesOf`), the kernel file system a path lies on or holds (`kernelMountsAt`), and nothing else: it reads
 * /proc/self/mountinfo and runs nothing. Where there is no such file (macOS, Windows) the table is empty and every
 * answer is "none".
 */
import { readFileSync } from "node:fs";
import { join, relative, isAbsolute } from "node:path";

/** One line of /proc/self/mountinfo: ids, file system (`major:minor`), root inside it, mount point, type. */
export interface MountEntry {
  id: number;
  parent: number;
  dev: string;
  root: string;
  at: string;
  fsType: string;
}

/** The kernel's file systems whose files are the kernel's state or knobs, not stored data (by mountinfo's type). */
export const kernelFsTypes: ReadonlySet<string> = new Set([
  "proc", "sysfs", "cgroup", "cgroup2", "debugfs", "tracefs", "securityfs", "bpf", "configfs", "pstore", "efivarfs",
  "fusectl", "binfmt_misc", "devtmpfs", "devpts", "mqueue", "selinuxfs", "nsfs", "rpc_pipefs", "hugetlbfs", "autofs",
]);

/** mountinfo writes space, tab, newline and backslash in paths as `\040`, `\011`, `\012`, `\134`. */
function unescape(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

/** Parses the text of a mountinfo file; lines that do not have its shape are left out. */
export function parseMountInfo(text: string): MountEntry[] {
  const out: MountEntry[] = [];
  for (const line of text.split("\n")) {
    const f = line.split(" ");
    const dash = f.indexOf("-", 6);
    if (f.length < 10 || dash < 0 || !/^\d+:\d+$/.test(f[2] ?? "")) continue;
    out.push({ id: Number(f[0]), parent: Number(f[1]), dev: f[2]!, root: unescape(f[3]!), at: unescape(f[4]!), fsType: f[dash + 1] ?? "" });
  }
  return out;
}

/** This process's mount table (empty where there is none). */
export function readMounts(file = "/proc/self/mountinfo"): MountEntry[] {
  try {
    return parseMountInfo(readFileSync(file, "utf8"));
  } catch {
    return [];
  }
}

/** Whether `path` is `dir` or lies inside it (absolute, normalised). */
function within(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/**
 * The mount `path` (absolute, links resolved) is reached through: from the root mount, down the children whose mount
 * point holds the path — the one nearest the parent's mount point when several do (a mount made later above an older
 * one covers it), the last one at the same point (an overmount). Null for an empty table.
 */
export function mountOf(path: string, mounts: readonly MountEntry[]): MountEntry | null {
  const ids = new Set(mounts.map((m) => m.id));
  let cur = mounts.find((m) => m.at === "/" && !ids.has(m.parent)) ?? null;
  for (let steps = 0; cur && steps < mounts.length; steps++) {
    const c: MountEntry = cur;
    const next = mounts.filter((m) => m.parent === c.id && m.id !== c.id && within(path, m.at)).reduce<MountEntry | null>((best, m) => (!best || m.at.length <= best.at.length ? m : best), null);
    if (!next) break;
    cur = next;
  }
  return cur;
}

/** Where `path` lies: its file system and its path inside it; null for an empty table. */
export function placeOf(path: string, mounts: readonly MountEntry[]): { dev: string; path: string; mount: MountEntry } | null {
  const m = mountOf(path, mounts);
  return m ? { dev: m.dev, path: join(m.root, relative(m.at, path)), mount: m } : null;
}

/**
 * The other paths at which the place `path` (absolute, links resolved) or a part of it shows: for each mount of the
 * same file system whose root holds the place, the path there; for each whose root lies inside it, its mount point.
 * Only those reached through that very mount (not covered by another), none inside `path` or inside another alias.
 */
export function aliasesOf(path: string, mounts: readonly MountEntry[]): string[] {
  const place = placeOf(path, mounts);
  if (!place) return [];
  const found: string[] = [];
  for (const m of mounts) {
    if (m.dev !== place.dev) continue;
    const at = within(place.path, m.root) ? join(m.at, relative(m.root, place.path)) : within(m.root, place.path) ? m.at : null;
    if (at === null || within(at, path)) continue;
    const there = placeOf(at, mounts);
    if (there?.dev === place.dev && (within(there.path, place.path) || within(place.path, there.path)) && there.mount.id === m.id) found.push(at);
  }
  const unique = [...new Set(found)].sort((a, b) => a.length - b.length);
  return unique.filter((p, i) => !unique.slice(0, i).some((q) => within(p, q)));
}

/** Every alias (`aliasesOf`) of each of `paths`, none of them one of `paths` or inside one. */
export function aliasesOfAll(paths: readonly string[], mounts: readonly MountEntry[]): string[] {
  const out = new Set<string>();
  for (const p of paths) for (const a of aliasesOf(p, mounts)) if (!paths.some((q) => within(a, q))) out.add(a);
  return [...out];
}

/**
 * The kernel file system mounts (`kernelFsTypes`, or only `types`) that `path` lies on or holds (a bind is recursive:
 * the mounts under a folder come with it), as `{at, fsType}` with the mount point; the one it lies on first.
 */
export function kernelMountsAt(path: string, mounts: readonly MountEntry[], types: ReadonlySet<string> = kernelFsTypes): { at: string; fsType: string }[] {
  const out: { at: string; fsType: string }[] = [];
  const on = mountOf(path, mounts);
  if (on && types.has(on.fsType)) out.push({ at: on.at, fsType: on.fsType });
  for (const m of mounts) {
    if (m === on || !types.has(m.fsType) || !within(m.at, path) || m.at === path) continue;
    if (mountOf(m.at, mounts)?.id === m.id) out.push({ at: m.at, fsType: m.fsType });
  }
  return out;
}

/**
 * The mount points of proc file systems other than `/proc` (and those inside it), reached as they are: what a sandbox
 * covers so that no second proc mount shows the host's processes inside it (its own /proc is mounted anew).
 */
export function otherProcMounts(mounts: readonly MountEntry[]): string[] {
  const out = mounts.filter((m) => m.fsType === "proc" && !within(m.at, "/proc") && mountOf(m.at, mounts)?.id === m.id).map((m) => m.at);
  return [...new Set(out)];
}
