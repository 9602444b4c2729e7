/**
 * What the programs a plugin starts read from the folders above it (hostile rounds 44–45). npm, npx, yarn, pnpm and
 * bun put the `node_modules/.bin` of the project folder *and of every folder above it* first on the PATH of what they
 * run (F44a-2: another user's `node` there ran for a trusted plugin started with `npm run start`); npm reads a
 * `.npmrc` of the first folder up with a `package.json` or `node_modules` (or a workspace root listing the plugin),
 * whose `node-options` replaced the import confinement's `NODE_OPTIONS` (F45a-1); and a plugin may reach a runner
 * through `env npm` or a script (F45a-2). So before any plugin without `[sandbox]` starts, these places above its
 * folder are looked at; one another user could have written or can still change refuses the start. The plugin's
 * folder and the engine's are the plugin's and the hub's own; a place of this user's own is the owner's (an agent's
 * `writable` cannot name one: worker/sandbox.ts `lookupPlaceProblem`).
 */
import { lstatSync, type Stats } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { runtimeConfigFileBytesMax } from "../kernel/limits.js";
import { headOfRegular } from "../worker/files.js";

/** What is looked for in each folder above a plugin: package managers' and Node's places. */
const placesAbove = ["node_modules", "package.json", ".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", "pnpm-workspace.yaml", "bunfig.toml", "tsconfig.json", "jsconfig.json"];

/**
 * The first place above `dir` (real, absolute; the plugin's folder), outside `engine`, that someone else could have
 * written or can still change: it (or, for `node_modules`, its `.bin`) is a link, is not this user's or root's, or is
 * writable by group or others, or the folder holding it is writable by others without the sticky bit (they could
 * rename it). Null when there is none.
 */
export function foreignPlaceAbove(dir: string, engine: string, uid: number | undefined = process.getuid?.()): string | null {
  for (let above = dirname(dir); ; above = dirname(above)) {
    const inEngine = above === engine || above.startsWith(engine + "/");
    if (!inEngine) {
      const folder = stat(above);
      const open = folder !== null && (folder.mode & 0o002) !== 0 && (folder.mode & 0o1000) === 0;
      for (const name of placesAbove) {
        const path = join(above, name);
        const st = stat(path);
        if (st === null) continue;
        if (open || foreign(st, uid)) return path;
        const bin = name === "node_modules" ? stat(join(path, ".bin")) : null;
        if (bin !== null && foreign(bin, uid)) return join(path, ".bin");
      }
    }
    if (dirname(above) === above) return null;
  }
}

function stat(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

/** Whether someone else than `uid` (and root) owns it or may write it (group or others); a link counts as foreign. */
function foreign(st: Stats, uid: number | undefined): boolean {
  if (st.isSymbolicLink()) return true;
  return (uid !== undefined && st.uid !== uid && st.uid !== 0) || (st.mode & 0o022) !== 0;
}

/** The keys of npm's configuration that name another configuration file npm then reads. */
const npmConfigFileKeys = ["userconfig", "globalconfig"];

/**
 * The first setting of the plugin's own `.npmrc` (in `dir`, real) that makes npm read a configuration file outside the
 * plugin's folder (`userconfig`, `globalconfig`; hostile round 45, F45a-3: an author's `userconfig=/srv/x/npmrc`, whose
 * file they later filled with `node-options=--require=…`, ran in a plugin trusted by "always allow", the plugin's files
 * unchanged), as `<key>=<value>`; null when there is none. `~/` and `${HOME}` count as outside.
 */
export function npmConfigOutside(dir: string): string | null {
  const text = headOfRegular(join(dir, ".npmrc"), runtimeConfigFileBytesMax);
  for (const m of text.matchAll(/^[ \t]*([\w-]+)[ \t]*=[ \t]*(.*?)[ \t]*$/gm)) {
    if (!npmConfigFileKeys.includes(m[1]!.toLowerCase())) continue;
    const value = m[2]!.replace(/^"(.*)"$/, "$1");
    const at = resolve(dir, value);
    if (/^~|\$\{?\w/.test(value) || relative(dir, at).startsWith("..") || isAbsolute(relative(dir, at))) return `${m[1]}=${value}`;
  }
  return null;
}
