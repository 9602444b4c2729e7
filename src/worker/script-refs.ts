/**
 * What a guarded script makes the owner's system run besides itself (issue 26 round 17, F17-2): the interpreter its
 * `#!` line names, and the absolute paths written in a script — pre-commit's generated hook runs
 * `INSTALL_PYTHON=/home/me/p14/.venv/bin/python3`. A script in `~/bin` or a hook stays read-only, but when the program
 * it starts lies in a folder the agent writes (a project's virtualenv), the agent replaces that program instead. The
 * guard (steering.ts) keeps each such path inside the writable folder read-only: a file itself, and for a link (a
 * virtualenv's `bin/python3 -> /usr/bin/python3`, which the agent could replace by a file of its own) the folder
 * holding it, since a mount cannot hold a link's own entry. What such a program then loads is the documented limit
 * "what a script sources or imports" (SECURITY.md).
 */
import { basename, dirname, isAbsolute, join, normalize } from "node:path";
import { entriesUpTo, lstatOr, realPathOr, within } from "../common/file-checks.js";
import { headOfRegular } from "./files.js";
import { valueWords } from "./config-words.js";
import { hookBases, hookGlob, hookText } from "./hook-text.js";
import { executedWords, missingIn, scriptLike } from "./script-words.js";

/** How much of the guarded files is read: files in all, and bytes of each (a `#!` line and a hook's few lines). */
export const scriptRefLimits = { files: 2_000, bytes: 65_536 } as const;

/** Programs a `#!` line names that look the real program up on PATH (whose folders the guard keeps read-only already). */
const pathLookups = new Set(["env"]);

/** Lines of a script read as shell words (a hook is a few dozen; a long script names its programs near the top). */
const scriptLinesRead = 200;

/** Absolute paths written in a script: a `/` and what follows up to a blank, quote, `=` or shell operator. */
const absolutePaths = /\/[^\s'"`=;|&()<>$\\,]+/g;

/** A hooks folder the guard keeps read-only, with the work tree its hooks run at (git runs a hook at the tree's top). */
export interface HookFolder {
  folder: string;
  tree: string;
}

/** The files of the guarded `parts` (files, and the top files of folders), at most `limits.files`. */
function partFiles(parts: readonly string[], limits: typeof scriptRefLimits): string[] {
  const files: string[] = [];
  for (const p of parts) {
    const st = lstatOr(p);
    if (st?.isFile()) files.push(p);
    // At most the limit read of a folder, not all of it first (unreadable: nothing there runs).
    else if (st?.isDirectory()) for (const e of entriesUpTo(p, limits.files)) files.push(join(p, e.name));
    if (files.length >= limits.files) break;
  }
  return files.slice(0, limits.files);
}

/**
 * The text of a guarded file that the owner's system runs as a script: one with a `#!` line, and any file of a hooks
 * folder (husky's hooks have none: `sh -e` runs them; round 19, F19-3). "" for others (two bytes read first: a program,
 * an ELF binary of `/usr/local/bin`, is not read further).
 */
function scriptText(file: string, hook: boolean, limits: typeof scriptRefLimits): string {
  if (!hook && headOfRegular(file, 2) !== "#!") return "";
  const text = headOfRegular(file, limits.bytes);
  return hook || text.startsWith("#!") ? text : "";
}

/**
 * The paths inside `folder` (a real path the agent may write) that the guarded `parts` (real paths: files, and
 * folders whose top files are read — a hooks folder) start when the owner runs them: each script's `#!` interpreter
 * and the absolute paths its text names, as real paths to keep read-only (see the module); in a hook (a file of one
 * of `hooks`) also each word naming a file relative to its work tree, where git runs it (`./scripts/lint.sh`,
 * `sh scripts/fmt.sh`, `node scripts/msg.js`: round 19, F19-4), read as hook-text.ts reads a hook: its tree's idioms
 * and variables written out, relative to each folder it `cd`s to, a computed piece matching any name (round 20,
 * F20-3, F20-4). Reads at most `scriptRefLimits`; never throws (an
 * unreadable file names nothing: the owner's system cannot run it either).
 */
export function scriptRefs(parts: readonly string[], folder: string, limits = scriptRefLimits, hooks: readonly HookFolder[] = [], missing: string[] = []): string[] {
  // One hooks folder can run in several trees: a repository's common folder in each of its linked worktrees (W1).
  const treesOf = new Map<string, string[]>();
  for (const h of hooks) treesOf.set(h.folder, [...(treesOf.get(h.folder) ?? []), h.tree]);
  const out = new Set<string>();
  for (const file of partFiles(parts, limits)) {
    const trees = treesOf.get(dirname(file));
    // git never runs a hook's `.sample` (`git init` writes 14, some 170 lines: a look at each word would cost ~30,000
    // file lookups a repository).
    if (trees !== undefined && file.endsWith(".sample")) continue;
    const raw = scriptText(file, trees !== undefined, limits);
    if (raw === "") continue;
    for (const tree of trees ?? [undefined]) for (const p of namedBy(raw, tree, folder, missing)) out.add(p);
  }
  return [...out];
}

/**
 * What script text `raw` names that `guardOf` keeps in `folder`; `tree`: the work tree it runs at when it is a hook.
 * A hook's script path in the folder that is missing goes into `missing`.
 */
function namedBy(raw: string, tree: string | undefined, folder: string, missing: string[]): string[] {
  const out: string[] = [];
  // A hook as the shell it is: its tree's idioms and variables written out, its `cd`s followed (hook-text.ts; round 20).
  const text = tree === undefined ? raw : hookText(raw, tree);
  const bases = tree === undefined ? [] : hookBases(text, tree);
  const first = text.slice(0, text.indexOf("\n") < 0 ? undefined : text.indexOf("\n"));
  const [interpreter] = first.startsWith("#!") ? first.slice(2).trim().split(/\s+/) : [];
  // Each line also as the shell reads it: `"$HOME/p14/.venv/bin/python3"`, `${PY:-/home/me/p14/py}` (round 18, F18-3).
  const words = text.split("\n").slice(0, scriptLinesRead).flatMap((line) => valueWords(line, process.env));
  const named = [...(interpreter && !pathLookups.has(basename(interpreter)) ? [interpreter] : []), ...(text.match(absolutePaths) ?? []), ...words];
  for (const n of new Set(named)) {
    const paths = isAbsolute(n) ? [n] : n.startsWith("-") ? [] : bases.map((b) => join(b, n));
    // A piece the hook computes (`lefthook-${osArch}-${cpuArch}`): any name there (F20-4).
    if (tree !== undefined) paths.push(...bases.flatMap((b) => hookGlob(n, b)));
    for (const path of paths) out.push(...guardOf(path, folder));
  }
  // A script the hook runs (a command's first word, an interpreter's operand, a `[ -x … ]` test's) that is missing
  // now: looked for after the run (review r35, W3: an optional local hook).
  if (tree !== undefined) {
    for (const n of text.split("\n").slice(0, scriptLinesRead).flatMap(executedWords)) {
      if (scriptLike(n)) missing.push(...missingIn(isAbsolute(n) ? [n] : bases.map((b) => join(b, n)), folder));
    }
  }
  return out;
}

/** The program a `#!/usr/bin/env [-S] <name>` line looks up on PATH, or null. */
function envInterpreter(text: string): string | null {
  const m = /^#!\s*\S*\/env\s+(?:-S\s+)?([A-Za-z0-9_][A-Za-z0-9._+-]*)/.exec(text);
  return m ? m[1]! : null;
}

/** A `PATH=` assignment in a script line (`export PATH="node_modules/.bin:$PATH"`): its value, quotes kept. */
const pathAssignment = /(?:^|[\s;&|(])(?:export\s+)?PATH=("[^"]*"|'[^']*'|[^\s;&|)]+)/g;
/** A word that names a command to look up on PATH (no `/`, not an option). */
const commandName = /^[A-Za-z0-9_][A-Za-z0-9._+-]*$/;
/** The most places `hookShadows` names (folders of a runner's PATH in the tree, times commands). */
const hookShadowsMax = 2_000;

/**
 * Where a guarded hook runner looks a system command up first inside `folder` (round 19, F19-2: husky 9's own runner
 * `.husky/_/h` does `export PATH="node_modules/.bin:$PATH"` and then `sh -e <hook>`; an agent wrote
 * `node_modules/.bin/sh` and the owner's next `git commit` ran it): for each relative folder a hook file of `hooks`
 * puts on PATH, the paths there of `sh` and of every word of the same work tree's hooks that names a program found on the hub's PATH
 * (`npm`, `git`, `node` — a system command, not a program the project installs there), and the interpreter each of
 * those programs, each hook and each script a hook names by path looks up there by `#!/usr/bin/env <name>` (round 20,
 * F20-1: npm is `#!/usr/bin/env node`, so the agent's `node_modules/.bin/node` ran for husky's default `npm test`). A
 * hook's PATH entries are read after `hookText` (`$(git rev-parse --show-toplevel)/node_modules/.bin`, F20-2). The
 * guard keeps those that exist read-only and looks after the run for those that did not (planted.ts). At most
 * `hookShadowsMax`; never throws.
 */
export function hookShadows(hooks: readonly HookFolder[], folder: string, limits = scriptRefLimits): string[] {
  const system = (process.env.PATH ?? "").split(":").filter((d) => isAbsolute(d));
  const onPath = (name: string) => system.some((d) => lstatOr(join(d, name)) !== null);
  const out = new Set<string>();
  // By work tree: husky's runner (`.husky/_/h`) sets PATH, the hooks it runs (`.husky/pre-commit`) name the commands.
  for (const tree of new Set(hooks.map((h) => h.tree))) {
    const texts = partFiles(hooks.filter((h) => h.tree === tree).map((h) => h.folder), limits).filter((f) => !f.endsWith(".sample")).map((f) => hookText(scriptText(f, true, limits), tree));
    // Relative entries at the top, and absolute ones (`$(git rev-parse --show-toplevel)/node_modules/.bin`, F20-2).
    const dirs = texts.flatMap((text) => [...text.matchAll(pathAssignment)].flatMap((m) => m[1]!.replace(/^["']|["']$/g, "").split(":")))
      .filter((entry) => entry !== "" && !entry.includes("$"))
      .map((entry) => (isAbsolute(entry) ? normalize(entry) : join(tree, entry)))
      .filter((dir) => within(dir, folder));
    if (dirs.length === 0) continue;
    const names = new Set(["sh"]);
    for (const text of texts) {
      for (const line of text.split("\n").slice(0, scriptLinesRead)) {
        for (const w of valueWords(line, process.env)) {
          if (commandName.test(w)) names.add(w);
          // A script the hook starts by its path (`./scripts/lint.sh`): the interpreter its `#!/usr/bin/env bash` looks up.
          else if (w.includes("/") && !w.startsWith("-")) {
            const interpreter = envInterpreter(headOfRegular(isAbsolute(w) ? w : join(tree, w), 256));
            if (interpreter) names.add(interpreter);
          }
        }
      }
      // The interpreter a hook's own `#!/usr/bin/env bash` looks up on that PATH (F20-1).
      const own = envInterpreter(text);
      if (own) names.add(own);
    }
    // The interpreters the programs named look up on it in turn: npm, npx, lint-staged are `#!/usr/bin/env node`
    // (F20-1: the agent's `node_modules/.bin/node` ran for husky's default `npm test`). One level.
    for (const name of [...names]) {
      const program = [...dirs, ...system].map((d) => join(d, name)).find((p) => lstatOr(p) !== null);
      const interpreter = program ? envInterpreter(headOfRegular(program, 256)) : null;
      if (interpreter) names.add(interpreter);
    }
    for (const name of names) {
      if (name !== "sh" && !onPath(name)) continue;
      for (const dir of dirs) if (out.size < hookShadowsMax) out.add(join(dir, name));
    }
  }
  return [...out];
}

/**
 * What keeps the program at `path` (as written) unchanged when the way to it passes through `folder`: each link on
 * the way that lies in the folder, by the folder holding it (the agent could point it elsewhere: `.venv -> ~/venvs/p14`,
 * round 18, F18-1 (b)), and the program itself when it lies in the folder — judged by where each step really is, so
 * a way through a link outside the folder (`~/p14link/.venv/bin/python3`, F18-1 (a)) counts too.
 */
function guardOf(path: string, folder: string): string[] {
  if (!isAbsolute(path)) return [];
  const out: string[] = [];
  // `at`: the real path of the way so far.
  let at = "/";
  for (const step of normalize(path).split("/").filter(Boolean)) {
    const next = join(at, step);
    const st = lstatOr(next);
    if (st === null) return []; // missing: nothing runs it now
    if (!st.isSymbolicLink()) {
      at = next;
      continue;
    }
    // A link at the folder's own top cannot be held by a mount of its holder (the folder is the agent's): SECURITY.md.
    if (within(next, folder) && at !== folder) out.push(at);
    const real = realPathOr(next, null);
    if (real === null) return [];
    at = real;
  }
  if (lstatOr(at)?.isFile() && at !== folder && within(at, folder)) out.push(at);
  return out;
}
