/**
 * Mount points that keep what is bound inside a writable folder at its place (issue 26 round 13, F13-10), for both
 * sandboxes: the agent's (sandbox.ts `sandboxArgv`) and a tool plugin's writable binds (steering.ts `bindGuards`).
 */
import { dirname } from "node:path";
import { within } from "../common/file-checks.js";

/** How many folders deep `path` lies (`/` is 0). */
function depth(path: string): number {
  return path.split("/").filter(Boolean).length;
}

/**
 * The folders to bind over themselves (writable, as they are) so that nothing bound inside a writable folder can be
 * moved away (issue 26 round 13, F13-10): a mount moves with the folder that holds it, so an agent that renamed the
 * parent of a read-only file (`dotfiles/` of the owner's linked `~/.gitconfig`, `scripts/` of a `core.hooksPath`
 * `scripts/git-hooks`) put its own file at the place the owner's tools read. A mount point cannot be renamed or
 * removed (EBUSY): every folder between a writable folder and a path mounted inside it becomes one. Only folders whose
 * innermost bound place is one of `writable` (a host folder shown as it is) are pinned; one inside a read-only or
 * sandbox-own place is not (`others`: every other path bound or made).
 * @returns real paths (ancestors of real paths), parents first, none of `writable` itself.
 */
export function pinnedFolders(writable: readonly string[], others: readonly string[]): string[] {
  const placed = [...writable, ...others];
  const innermost = (p: string): "writable" | "other" | null => {
    let best: string | null = null;
    let kind: "writable" | "other" | null = null;
    for (const l of placed) {
      if (!within(p, l) || (best !== null && depth(l) < depth(best))) continue;
      const k = others.includes(l) ? "other" : "writable";
      if (best === null || depth(l) > depth(best) || k === "other") kind = k;
      best = l;
    }
    return kind;
  };
  const pins = new Set<string>();
  for (const target of placed) {
    for (let a = dirname(target); a !== dirname(a) && !placed.includes(a); a = dirname(a)) {
      if (pins.has(a)) break; // its parents are pinned (or looked at) already
      if (!writable.some((w) => within(a, w))) break; // nor are its parents in a writable folder
      if (innermost(a) !== "writable") continue;
      pins.add(a);
    }
  }
  return [...pins].sort((x, y) => depth(x) - depth(y) || (x < y ? -1 : 1));
}

