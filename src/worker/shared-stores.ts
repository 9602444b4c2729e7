/**
 * Dependencies a package manager links from a store shared by every project (issue 26, hostile round 49, F49a-2):
 * pnpm hard-links each file of its store into `node_modules/.pnpm` of every project, uv (hard links by default on
 * Linux) each file of its cache into a project's `.venv`. A file there is the same file as the store's, so an agent
 * writing it in the folder it was given changes that package for every project and every trusted plugin that uses it
 * (pnpm's store rewritten ran in a trusted `pnpm dlx` plugin and in the owner's build of a project no agent had).
 * Such a folder is kept read-only in the sandbox when its files are hard links: looked at by a sample of its files,
 * so a project installed with copies (`package-import-method=copy`, `UV_LINK_MODE=copy`) stays the agent's.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { sharedStoreSampleEntriesMax } from "../kernel/limits.js";
import { lstatOr, namesUpTo } from "../common/file-checks.js";

/** The folders of `folder` (an agent's cwd or writable folder) whose files are linked from a shared store. */
export function sharedStoreParts(folder: string): string[] {
  const out: string[] = [];
  // pnpm: its layout file beside the virtual store.
  const modules = join(folder, "node_modules");
  if (isFile(join(modules, ".modules.yaml")) && hasHardLink(join(modules, ".pnpm"))) out.push(join(modules, ".pnpm"));
  // uv: a virtual environment uv made (its pyvenv.cfg names uv).
  for (const venv of [".venv", "venv"]) {
    const dir = join(folder, venv);
    if (!/^uv\s*=/m.test(readSmall(join(dir, "pyvenv.cfg")))) continue;
    for (const lib of ["lib", "lib64"]) if (hasHardLink(join(dir, lib))) out.push(join(dir, lib));
  }
  return out;
}

/** Whether `path` is a regular file (not through a link). */
function isFile(path: string): boolean {
  return lstatOr(path)?.isFile() ?? false;
}

/** The text of a small regular file (at most 4 KiB), or "". */
function readSmall(path: string): string {
  const st = lstatOr(path);
  if (!st?.isFile() || st.size > 4096) return "";
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

/**
 * Whether a regular file with more than one name is found under `dir`, looking at `sharedStoreSampleEntriesMax`
 * entries at most (depth first, so the first package's files come early; links not followed): a store's files are
 * linked all alike, so the first few tell.
 */
function hasHardLink(dir: string): boolean {
  const stack = [dir];
  let seen = 0;
  while (stack.length > 0 && seen < sharedStoreSampleEntriesMax) {
    const d = stack.pop()!;
    for (const n of namesUpTo(d, sharedStoreSampleEntriesMax - seen)) {
      if (++seen > sharedStoreSampleEntriesMax) break;
      const st = lstatOr(join(d, n));
      if (st?.isFile() && st.nlink > 1) return true;
      if (st?.isDirectory()) stack.push(join(d, n));
    }
  }
  return false;
}
