/**
 * What a plugin's `[sandbox] binds` really reach (issue 26 #3; DESIGN.md "Trust boundaries": plugins never bind or
 * write their own sandbox's definition or the hidden paths). Each source is resolved with realpath — a symlink in the
 * plugin folder (kept by `add` and by git) or anywhere on the way counts as where it leads — and refused when it is:
 * - `/` (the whole file system);
 * - the user's home, or a folder holding it (`/home`);
 * - a path the host hides from every sandbox (the hub's home, with its keys), inside one, or holding one — except
 *   what is inside the plugin's own folder, which the hub's home holds for an installed plugin;
 * - bound writable: the plugin's own folder or a folder holding it, or its manifest (the sandbox's definition).
 * A bind that passes is shown to the owner (approval card, `plugins inspect`) with its real source, and marked broad
 * when it is writable outside the plugin's folder, a whole top-level folder (`/etc`, `/var/lib`), or right in the
 * user's home (`~/.ssh`, `~/.npmrc`). Reads the file system (realpath); runs nothing.
 */
import { realpathSync } from "node:fs";
import { basename, dirname, resolve, sep } from "node:path";

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

/** Why a bind is refused at start: its source is missing, `/`, a home, hidden, or the plugin's own definition writable. */
export type BindRefusal = "missing" | "root" | "userHome" | "hidden" | "ownFolder" | "manifest";

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

/** A bind checked: as shown, and why it is refused (null when it is not). */
export interface BindChecked extends BindShown {
  refused: BindRefusal | null;
}

/** What the binds are checked against: the host's hidden paths and the user's home (null when unknown). */
export interface BindContext {
  hidden: readonly string[];
  userHome: string | null;
}

/** The manifest file names (manifest.ts `manifestFileNames`; repeated here so this module reads no manifest code). */
const manifestNames = new Set(["manifest.toml", "plugin-manifest.toml"]);

/** The real path of `p`, or null when it does not exist. */
function real(p: string): string | null {
  try {
    return realpathSync(p);
  } catch {
    return null;
  }
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
  const plugin = real(pluginDir) ?? resolve(pluginDir);
  const home = ctx.userHome ? real(ctx.userHome) ?? resolve(ctx.userHome) : null;
  const hidden = ctx.hidden.map((h) => real(h) ?? resolve(h));
  return sandbox.mounts.map((m) => {
    const written = m.relative ? resolve(pluginDir, m.host) : m.host;
    const source = real(written);
    const base = { container: m.container, readOnly: m.readOnly };
    if (source === null) return { source: written, ...base, refused: "missing" };
    return { source, ...base, ...verdict(source, m.readOnly, plugin, home, hidden) };
  });
}

function verdict(source: string, readOnly: boolean, plugin: string, home: string | null, hidden: string[]): { refused: BindRefusal | null; broad?: BindBroad } {
  if (source === "/") return { refused: "root" };
  if (home !== null && within(home, source)) return { refused: "userHome" };
  const inPlugin = within(source, plugin);
  if (hidden.some((h) => within(h, source) || (within(source, h) && !inPlugin))) return { refused: "hidden" };
  if (!readOnly && within(plugin, source)) return { refused: "ownFolder" };
  if (!readOnly && dirname(source) === plugin && manifestNames.has(basename(source))) return { refused: "manifest" };
  if (inPlugin) return { refused: null };
  if (!readOnly) return { refused: null, broad: "writable" };
  if (depth(source) <= 2) return { refused: null, broad: "topLevel" };
  if (home !== null && dirname(source) === home) return { refused: null, broad: "inHome" };
  return { refused: null };
}

/** The binds as shown to the owner (allowed ones; `broad` only when present). */
export function shownBinds(checked: readonly BindChecked[]): BindShown[] {
  return checked.map(({ source, container, readOnly, broad }) => ({ source, container, readOnly, ...(broad ? { broad } : {}) }));
}
