/**
 * What a package runner puts on a plugin's PATH (hostile round 44, F44a-2): npm, npx, yarn, pnpm and bun put the
 * `node_modules/.bin` of the project folder *and of every folder above it* first on the PATH of what they run, so a
 * `node` another local user put in `/srv/shared/node_modules/.bin` ran in place of Node for a trusted plugin under
 * `/srv/shared/root` started with `npm run start`. The plugin's folder and the engine's are the plugin's and the
 * hub's own; a `.bin` above them is judged by who can write it.
 */
import { lstatSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/** Programs that put every enclosing folder's `node_modules/.bin` on the PATH of what they run. */
const packageRunners = new Set(["npm", "npx", "pnpm", "pnpx", "yarn", "yarnpkg", "bun", "bunx", "corepack"]);

/** Whether `command` (a manifest's `entry_point.command`) is a package runner, by its file name. */
export function isPackageRunner(command: string): boolean {
  return packageRunners.has(basename(command).replace(/\.(cmd|exe|js|cjs)$/i, "").toLowerCase());
}

/**
 * The first `node_modules/.bin` above `dir` (real, absolute; the plugin's folder) that another user could have put
 * there or can still change — it, its `node_modules`, or the folder holding them is not this user's (or root's), or is
 * writable by group or others — outside `engine`; null when there is none. A `.bin` of this user's own is the owner's:
 * an agent's `writable` cannot name one above the home or a plugins root (worker/sandbox.ts `lookupPlaceProblem`).
 */
export function foreignBinAbove(dir: string, engine: string, uid: number | undefined = process.getuid?.()): string | null {
  for (let above = dirname(dir); ; above = dirname(above)) {
    const bin = join(above, "node_modules", ".bin");
    const inEngine = above === engine || above.startsWith(engine + "/");
    if (!inEngine && exists(bin) && [above, join(above, "node_modules"), bin].some((p) => foreign(p, uid))) return bin;
    if (dirname(above) === above) return null;
  }
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Whether someone else than `uid` (and root) owns `path` or may write it (group or others); a link counts as foreign. */
function foreign(path: string, uid: number | undefined): boolean {
  try {
    const st = lstatSync(path);
    if (st.isSymbolicLink()) return true;
    return (uid !== undefined && st.uid !== uid && st.uid !== 0) || (st.mode & 0o022) !== 0;
  } catch {
    return false;
  }
}
