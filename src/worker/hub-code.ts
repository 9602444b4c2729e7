/**
 * What the hub runs or loads code from outside every sandbox, and the places its programs look in above a folder
 * (issue 26, rounds 3–47): the folders a sandboxed agent or plugin may neither write nor hold (`hubCodeFolders`,
 * `readOnlyPaths`), and the lookup places a `writable` entry may not be (`lookupPlaceProblem`).
 */
import { existsSync, lstatSync, readdirSync, statSync } from "node:fs";
import { basename, delimiter, dirname, join, relative, resolve, sep } from "node:path";
import { homedir, tmpdir } from "node:os";
import { engineDir } from "../common/paths.js";
import { makeTsxCache, tsxCacheDir } from "../common/tsx-cache.js";
import { isInside, realPath } from "./sandbox.js";
import { runtimePlaces } from "./runtime-places.js";
import { pthFolders, unsandboxedProgramFolders } from "./plugin-programs.js";

/**
 * What programs look for in a folder above the one they run in, besides their own (`lookupPlaceProblem`): Node's and
 * tsx's package scope and paths, bun's, deno's and mise's configuration, a virtual environment's marker. Any dot entry
 * there counts too (`.npmrc`, `.yarnrc.yml`, `.env`, `.tool-versions`, `.nvmrc`, `.envrc`, `.npm`, `.config`), `.cache`
 * with them: corepack runs the pnpm and yarn it keeps in `~/.cache/node/corepack` (round 46, F46-1), and other tools run
 * or link what they cache there (uv, Go's build cache).
 */
const lookupNames = new Set(["node_modules", "package.json", "tsconfig.json", "jsconfig.json", "bunfig.toml", "deno.json", "deno.jsonc", "mise.toml", "pyvenv.cfg"]);

/**
 * What runtimes read from the top of a home by default, under names without a dot: Go's `GOPATH` (`~/go`: its module
 * cache `pkg/mod`, which `go run` and `go build` trust without checking again, and the toolchains `GOTOOLCHAIN`
 * switches to, which it runs), R's user library (`~/R`), Perl's local::lib (`~/perl5`).
 */
const homeLookupNames = new Set(["go", "R", "perl5"]);

/**
 * Whether `path` (real) is, or lies in, a place programs of the hub's user read for code or configuration above one of
 * `folders` (the hub's home, the folders it loads or runs code from) or at the top of one of `homes` (the hub user's):
 * a `node_modules`, `package.json`, `tsconfig.json` (`lookupNames`), dot entry or any entry but a folder (`go.work`,
 * `Cargo.toml`) of such a folder, a home's `go`, `R`, `perl5` (`homeLookupNames`); a `node_modules` anywhere above them. Hostile rounds 43–45: an agent's `writable: ["~/package.json"]`, `["~/node_modules"]`,
 * `["~/tsconfig.json"]`, `["~/.npmrc"]` (npm's `script-shell`, `node-options`), `["~/.cache"]` (corepack's pnpm)
 * chose what a trusted plugin ran. The import check refuses what such a file makes a plugin import; npm's PATH and
 * configuration it cannot judge.
 * @returns the folder that place lies in, or null.
 */
export function lookupPlaceProblem(path: string, folders: readonly string[], homes: readonly string[] = []): string | null {
  const parts = path.split(sep);
  const modules = parts.indexOf("node_modules");
  const modulesAbove = modules > 0 ? parts.slice(0, modules).join(sep) || sep : null;
  if (modulesAbove !== null && folders.some((f) => isInside(f, modulesAbove))) return modulesAbove;
  for (let above = dirname(path); ; above = dirname(above)) {
    if (homes.includes(above) || folders.some((f) => isInside(f, above) && f !== above)) {
      const rel = relative(above, path).split(sep);
      const first = rel[0]!;
      if (lookupNames.has(first) || first.startsWith(".") || (homes.includes(above) && homeLookupNames.has(first))) return above;
      // Any file right there: build tools look for their project or workspace file in every folder above the one
      // they run in (round 48, F48a-3: an agent's writable ~/go.work `replace`d a trusted Go plugin's dependency;
      // Cargo.toml, rust-toolchain.toml, global.json, Directory.Build.props, pyproject.toml, settings.gradle alike).
      if (rel.length === 1 && isFileOrMissing(path)) return above;
    }
    if (dirname(above) === above) return null;
  }
}

/** Whether `path` is anything but a folder (a link to one counts as what it leads to), or is not there. */
function isFileOrMissing(path: string): boolean {
  try {
    return !statSync(path).isDirectory();
  } catch {
    return true;
  }
}

/**
 * The lookup place `path` is or lies in (`lookupPlaceProblem`), as the entry itself (`/home/u/go` for
 * `/home/u/go/pkg/mod`, `/home/u/.config` for `/home/u/.config/x`), or null.
 */
export function lookupEntry(path: string, folders: readonly string[], homes: readonly string[] = []): string | null {
  const above = lookupPlaceProblem(path, folders, homes);
  return above === null ? null : join(above, relative(above, path).split(sep)[0]!);
}

/** Where the hub's code and the programs it starts come from (this process's, by default). */
export interface HubOrigin {
  /** The engine's folder (the checkout or the installed package: dist/, node_modules/, plugins/). */
  engine: string;
  /** The node executable the hub runs (`process.execPath`). */
  execPath: string;
  /** The hub's PATH and NODE_PATH (`delimiter`-separated). */
  path: string;
  nodePath: string;
  /** The hub's user's home folder (Node's global module folders `~/.node_modules`, `~/.node_libraries`). */
  userHome: string;
  /** tsx's compile cache (`<tmpdir>/tsx-<uid>`): plugins written in TypeScript are loaded through it. */
  tsxCache: string | null;
  /** The folder relative PATH entries are taken from. */
  cwd: string;
  /** Where the user's runtimes run code from as configured, existing or not (runtime-places.ts); none when absent. */
  runtimePlaces?: readonly string[];
}

/**
 * This process's origin; tsx's cache folder is made when missing, so that no agent can make it first (one made by
 * someone else stays named here, read-only for agents; the plugin loader refuses to compile into it: common/tsx-cache.ts).
 */
export function hubOrigin(): HubOrigin {
  const tsxCache = tsxCacheDir();
  makeTsxCache(tsxCache);
  return {
    engine: engineDir, execPath: process.execPath, path: process.env.PATH ?? "", nodePath: process.env.NODE_PATH ?? "",
    userHome: homedir(), tsxCache, cwd: process.cwd(), runtimePlaces: runtimePlaces(process.env, homedir()),
  };
}

/**
 * What a sandboxed agent must not change because the hub runs or loads it outside the sandbox, as real paths that
 * exist: the engine's folder; the node executable and Node's global module folders (`<node>/../../lib/node`,
 * `~/.node_modules`, `~/.node_libraries`); the `node_modules` folders above the engine, where Node looks for a module
 * the engine lacks (an optional dependency); the targets of links in the engine's node_modules; every folder on PATH
 * (where the hub finds `ps`, `git`, `bwrap`, the agents' CLIs) and NODE_PATH, and the install prefix of each such
 * folder and of node (`installPrefix`); tsx's compile cache. Nested paths are left out (their parent covers them).
 */
export function readOnlyPaths(o: HubOrigin): string[] {
  const found: string[] = [];
  const add = (p: string) => {
    if (existsSync(p)) found.push(realPath(p));
  };
  const engine = realPath(o.engine);
  add(engine);
  const node = realPath(o.execPath);
  add(node);
  add(join(dirname(dirname(node)), "lib", "node"));
  for (const p of installPrefix(dirname(node), o.userHome)) add(p);
  add(join(o.userHome, ".node_modules"));
  add(join(o.userHome, ".node_libraries"));
  for (let d = dirname(engine); ; d = dirname(d)) {
    add(join(d, "node_modules"));
    if (dirname(d) === d) break;
  }
  // The engine's node_modules by where it leads (round 7, F12: a checkout whose node_modules is a link, or a
  // package manager that links it), and the links among its packages.
  add(join(engine, "node_modules"));
  for (const link of linksIn(join(engine, "node_modules"))) add(link);
  for (const [list, programs] of [[o.path, true], [o.nodePath, false]] as const) {
    for (const entry of list.split(delimiter)) {
      if (!entry) continue;
      const dir = resolve(o.cwd, entry);
      add(dir);
      if (!programs) continue;
      for (const d of new Set([dir, realPath(dir)])) {
        const prefix = installPrefix(d, o.userHome);
        for (const p of prefix) add(p);
        // What its Python's .pth files put on its path (round 53, F53a-5: an editable install's project).
        if (prefix.length > 0) for (const p of pthFolders(dirname(d))) add(p);
      }
    }
  }
  if (o.tsxCache) add(o.tsxCache);
  const unique = [...new Set(found)].sort((a, b) => a.length - b.length);
  return unique.filter((p, i) => !unique.slice(0, i).some((q) => isInside(p, q)));
}

/**
 * What the hub runs or loads code from outside every sandbox (issue 26 rounds 3-7, 48): `readOnlyPaths(o)`, the places
 * the user's runtimes run code from as configured (`o.runtimePlaces`: Go's module cache, GOPATH…) and the plugin
 * roots `roots` (`serve --plugins`, the home's plugins), each root by the path the hub loads from and by where it
 * leads now, existing or not, with every `node_modules` folder above a root that exists; and the folders of the
 * programs the tool plugins of `programRoots` (default: `roots`) without a sandbox name by absolute path, with their
 * install prefix (plugin-programs.ts) — `programCode`, when the caller has read it already (`unsandboxedCode`: each
 * read walks every root's manifests and Python's `.pth` files). No sandbox may write in, or hold, any of them
 * (`hubCodeProblem`).
 */
export function hubCodeFolders(o: HubOrigin, roots: readonly string[], programRoots: readonly string[] = roots, programCode: readonly string[] = unsandboxedCode(o.userHome, programRoots)): string[] {
  const out = readOnlyPaths(o);
  for (const p of o.runtimePlaces ?? []) out.push(resolve(p), realPath(p));
  out.push(...programCode);
  for (const r of roots) {
    out.push(resolve(r), realPath(r));
    // Where Node looks for a module a plugin of the root lacks: every node_modules above it (round 7, F13: a plugin
    // planted @grpc/grpc-js in one, and an unsandboxed service plugin of the root loaded it as the hub).
    for (const start of new Set([resolve(r), realPath(r)])) {
      for (let d = dirname(start); ; d = dirname(d)) {
        const modules = join(d, "node_modules");
        if (existsSync(modules)) out.push(modules, realPath(modules));
        if (dirname(d) === d) break;
      }
    }
  }
  return [...new Set(out)];
}

/**
 * What the tool plugins of `roots` without a sandbox run from outside their folders (plugin-programs.ts): each program's
 * and script's folder named by absolute path, as written and where it leads, with its install prefix (as PATH's: a
 * trusted plugin's `command = "~/venv/bin/python"` — an agent's `writable: ["~/venv"]` chose what it ran) and the
 * folders the `.pth` files there put on Python's path (round 53, F53a-5). Paths, existing or not.
 */
export function unsandboxedCode(userHome: string, roots: readonly string[]): string[] {
  const out: string[] = [];
  for (const d of unsandboxedProgramFolders(roots)) {
    for (const p of new Set([d, realPath(d)])) {
      const prefix = installPrefix(p, userHome);
      out.push(p, ...prefix);
      if (prefix.length > 0) out.push(...pthFolders(dirname(p)));
    }
  }
  return [...new Set(out)];
}

/**
 * The one rule for a folder a sandbox may write — an agent's `writable` entry, a plugin's writable bind (issue 26
 * round 5, F1: a plugin's writable bind of a `serve --plugins` folder planted a plugin the hub ran as itself; one of
 * ~/.cargo/bin planted the `python3` an unsandboxed plugin ran): it must neither lie inside nor hold one of `folders`
 * (`hubCodeFolders`). Holding counts as much as lying inside: whoever writes a folder above one can move it aside,
 * make it when missing, or put a link or a `node_modules` on its way.
 * @param paths the folder's paths: as written and where it leads now (absolute)
 * @returns the first folder it lies inside (`inside`), else the first it holds (`holds`), or null.
 */
export function hubCodeProblem(paths: readonly string[], folders: readonly string[]): { why: "inside" | "holds"; folder: string } | null {
  for (const p of paths) {
    const folder = folders.find((d) => isInside(p, d));
    if (folder) return { why: "inside", folder };
  }
  for (const p of paths) {
    const folder = folders.find((d) => isInside(d, p));
    if (folder) return { why: "holds", folder };
  }
  return null;
}

/** The names of a folder of programs whose parent is the programs' install prefix. */
const programFolderNames = new Set(["bin", "sbin", "shims", ".bin"]);

/**
 * The parts of an install prefix its programs load code or settings from: libraries and site-packages (`lib*`,
 * `libexec`), configuration (`etc`: a git's `etc/gitconfig`, conda's `etc/conda/activate.d`), data with code in it
 * (`share`: git's templates and hooks), a Go's `src`, `pkg` and `go.env`, a JDK's `conf` and `jmods`, conda's
 * `conda-meta`, `condabin`, `ssl`, a version manager's `versions` and `plugins`, a virtual environment's `pyvenv.cfg`.
 */
const installParts = ["lib", "lib32", "lib64", "libexec", "etc", "share", "include", "src", "pkg", "conf", "jmods", "conda-meta", "condabin", "ssl", "versions", "plugins", "pyvenv.cfg", "go.env"];

/** The parts of a home that a `--prefix=$HOME` install uses beside `~/bin` (not `~/src`, `~/pkg`: people's own folders). */
const homeInstallParts = ["lib", "lib64", "libexec", "etc", "share"];

/**
 * Where the programs of folder `dir` (on PATH, or node's) load their own code from besides `dir`: the parts of the
 * install prefix above a `bin` (`sbin`, `shims`) folder (`installParts`) — a Python's `lib/python3.x` and its
 * site-packages, a conda or venv environment's, a Node's `lib/node_modules`, a git's `etc/gitconfig`, a Go's `src` —
 * and the whole `node_modules` above a `node_modules/.bin` (issue 26 round 47, F47a-1: with `~/miniconda3/bin` on PATH,
 * an agent's `writable: ["~/miniconda3/lib/python3.12/site-packages"]` chose what every Python plugin imported). The
 * parts, not the whole prefix: a repository whose `bin` is on PATH (`~/dotfiles/bin`) stays an agent's to work in,
 * its `bin` and `lib` read-only. Not below `/` nor a shared temporary root (`/tmp/bin`); for a home (`~/bin`),
 * `homeInstallParts`. @returns paths, existing or not.
 */
function installPrefix(dir: string, userHome: string): string[] {
  const name = basename(dir);
  if (!programFolderNames.has(name)) return [];
  const prefix = dirname(dir);
  if (prefix === dir || prefix === sep || ["/tmp", "/var/tmp", tmpdir()].includes(prefix)) return [];
  if (name === ".bin") return [prefix];
  const parts = prefix === userHome || prefix === realPath(userHome) ? homeInstallParts : installParts;
  return parts.map((n) => join(prefix, n));
}

/** The links among the packages of a node_modules folder (scoped ones too): `npm link` and workspaces make them. */
function linksIn(modules: string): string[] {
  const out: string[] = [];
  const names = (dir: string) => {
    try {
      return readdirSync(dir);
    } catch {
      return [];
    }
  };
  for (const name of names(modules)) {
    const p = join(modules, name);
    const entries = name.startsWith("@") ? names(p).map((n) => join(p, n)) : [p];
    for (const e of entries) {
      try {
        if (lstatSync(e).isSymbolicLink()) out.push(e);
      } catch {
        // gone meanwhile
      }
    }
  }
  return out;
}
