/**
 * Dependencies a package manager links from a store shared by every project (issue 26, hostile round 49, F49a-2):
 * pnpm hard-links each file of its store into `node_modules/.pnpm` of every project, uv (hard links by default on
 * Linux) each file of its cache into a project's `.venv`. A file there is the same file as the store's, so an agent
 * writing it in the folder it was given changes that package for every project and every trusted plugin that uses it
 * (pnpm's store rewritten ran in a trusted `pnpm dlx` plugin and in the owner's build of a project no agent had).
 * Such a folder is kept read-only in the sandbox when its files are hard links: looked at by a sample of its files,
 * so a project installed with copies (`package-import-method=copy`, `UV_LINK_MODE=copy`) stays the agent's. The same
 * for a sandboxed plugin's writable binds (round 50, F50a-2).
 */
import { basename, dirname, join } from "node:path";
import { sharedStorePackagesMax, sharedStoreSampleEntriesMax } from "../kernel/limits.js";
import { entriesUpTo, lstatOr } from "../common/file-checks.js";
import { guardLimits, sharedTempRoots } from "./guard-walk.js";

/**
 * The folders in `folder` (an agent's cwd or writable folder, a plugin's writable bind) whose files are linked from a
 * shared store: every `node_modules` (pnpm's isolated or hoisted layout, bun's, npm's when linked) and every Python
 * virtual environment's `lib`/`lib64` (a folder holding `pyvenv.cfg`: uv, `uv pip` into a `python -m venv`) at any
 * depth where a sample of its files holds a hard link (round 50, F50a-1: a pnpm project one folder below the cwd,
 * pnpm's `node-linker=hoisted`, bun's install). Found by a walk that does not enter `node_modules`, `.git` or a
 * virtual environment, and follows no link, within `limits` (the guard's: it refuses a larger folder first).
 */
export function sharedStoreParts(folder: string, limits: { folders: number; entries: number } = guardLimits): string[] {
  const out: string[] = [];
  // The folder itself may be one (round 51, F51a-4: a writable bind or entry that is a bun node_modules), or lie in one.
  for (let d = folder; ; d = dirname(d)) {
    if (basename(d) === "node_modules" && linkedModules(d)) return [d];
    if (dirname(d) === d) break;
  }
  // Not below a shared temporary root (a rule's cwd "/tmp"): every program's files lie there, as for the guard, which
  // looks at such a folder's own repository only (SECURITY.md names this).
  if (sharedTempRoots().includes(folder)) return [];
  const stack = [folder];
  let folders = 0;
  let entries = 0;
  while (stack.length > 0 && folders++ < limits.folders) {
    const dir = stack.pop()!;
    if (isFile(join(dir, "pyvenv.cfg"))) {
      for (const lib of ["lib", "lib64"]) if (linkedPackages(join(dir, lib))) out.push(join(dir, lib));
      continue;
    }
    // The entries' types as the folder lists them (no stat of each: a project's tree is large).
    for (const e of entriesUpTo(dir, limits.entries - entries)) {
      if (++entries > limits.entries) break;
      const name = e.name;
      const path = join(dir, name);
      if (!e.isDirectory() || name === ".git") continue;
      if (name === "node_modules") {
        if (linkedModules(path)) out.push(path);
      } else stack.push(path);
    }
  }
  return out;
}

/**
 * Whether `modules` (a `node_modules`) holds a package linked from a store: a package's `package.json` with more than one
 * name — every package folder at its top (scoped ones too) and in pnpm's `.pnpm/<id>/node_modules` — or, failing closed,
 * more packages than `sharedStorePackagesMax`. By the packages, not a sample of entries, so no files an agent adds
 * (40,000 empty ones in `node_modules/.cache`: round 51, F51a-5) hide them; then a sample of the rest (other layouts).
 */
function linkedModules(modules: string): boolean {
  let n = 0;
  const linked = (pkg: string) => ++n > sharedStorePackagesMax || (lstatOr(join(pkg, "package.json"))?.nlink ?? 1) > 1;
  const packagesIn = (dir: string): string[] => entriesUpTo(dir, sharedStorePackagesMax).filter((e) => e.isDirectory() && !e.name.startsWith("."))
    .flatMap((e) => (e.name.startsWith("@") ? entriesUpTo(join(dir, e.name), sharedStorePackagesMax).filter((x) => x.isDirectory()).map((x) => join(dir, e.name, x.name)) : [join(dir, e.name)]));
  if (packagesIn(modules).some(linked)) return true;
  const virtual = join(modules, ".pnpm");
  for (const e of entriesUpTo(virtual, sharedStorePackagesMax)) if (e.isDirectory() && packagesIn(join(virtual, e.name, "node_modules")).some(linked)) return true;
  return hasHardLink(modules);
}

/**
 * Whether a virtual environment's `lib` holds a package linked from a store: a file of a `*.dist-info` folder of its
 * site-packages with more than one name, or, failing closed, more than `sharedStorePackagesMax` of them; then a sample.
 */
function linkedPackages(lib: string): boolean {
  let n = 0;
  for (const py of entriesUpTo(lib, 16)) {
    const site = join(lib, py.name, "site-packages");
    for (const e of entriesUpTo(site, sharedStorePackagesMax)) {
      if (!e.isDirectory() || !e.name.endsWith(".dist-info")) continue;
      if (++n > sharedStorePackagesMax || (lstatOr(join(site, e.name, "METADATA"))?.nlink ?? 1) > 1) return true;
    }
  }
  return hasHardLink(lib);
}

/** Whether `path` is a regular file (not through a link). */
function isFile(path: string): boolean {
  return lstatOr(path)?.isFile() ?? false;
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
    for (const e of entriesUpTo(d, sharedStoreSampleEntriesMax - seen)) {
      if (++seen > sharedStoreSampleEntriesMax) break;
      if (e.isDirectory()) stack.push(join(d, e.name));
      else if (e.isFile() && (lstatOr(join(d, e.name))?.nlink ?? 1) > 1) return true;
    }
  }
  return false;
}
