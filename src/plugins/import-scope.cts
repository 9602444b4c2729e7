/**
 * Which imports of a plugin's code are its own (issue 26, hostile rounds 43–44). Node looks for a package a module
 * imports by name in folders *above* it too — the nearest `package.json` (a package's imports of its own name, whatever
 * that name, and its `#imports`), then every `node_modules` up to `/` — and loaders read more there (tsx a
 * `tsconfig.json` whose `paths` turn a name into any file: round 44, F44b-1, F44a-1). Above a plugin's folder are the
 * home, the user's home, a shared parent: where an agent's `writable` entry or another local user can put such a file.
 *
 * So whatever a module inside a plugin's folder imports — by name or by path, through any loader — must resolve to a
 * built-in module of Node, a file inside that folder (its `node_modules` too), or a file inside the engine's own
 * folder (its packages, trusted as the engine is: an example plugin run from the engine's checkout imports them);
 * `agent-autoloop/…` resolves from the engine, never from above the plugin. A link leading out of the folder is
 * judged where it leads (round 44, F44a-3: an author re-pointed one after the owner read the plugin).
 *
 * CommonJS, so that a tool plugin's process can load it with `--require` before any other preload (round 44, F44b-2:
 * Node runs every `-r` before any `--import`); the ES modules of the hub import it as it is.
 */
import { realpathSync } from "node:fs";
import Module = require("node:module");
import { sep } from "node:path";

/**
 * What is confined, as real paths: `roots` (every folder directly in a root is one plugin's folder: the home's
 * `plugins/`, a `--plugins` root) and single plugin `folders` (a tool plugin's process). `refused` is the text of a
 * refusal with `{specifier}`, `{found}` and `{folder}` in it, in the owner's language (the catalog stays out of the
 * loader thread and of every plugin process).
 */
export interface ImportScope {
  roots: readonly string[];
  folders: readonly string[];
  refused: string;
}

/** The specifier that names the engine's package: `agent-autoloop` and `agent-autoloop/…`. */
export function namesEngine(specifier: string): boolean {
  return specifier === "agent-autoloop" || specifier.startsWith("agent-autoloop/");
}

/**
 * Whether Node looks `specifier` up by name (a package, or a `#` import of the package scope): not `./`, `../`, `/`,
 * a Windows drive or a URL with a scheme (`node:`, `file:`, `data:`).
 */
export function looksUp(specifier: string): boolean {
  if (specifier.startsWith("./") || specifier.startsWith("../") || specifier === "." || specifier === "..") return false;
  if (specifier.startsWith("/") || specifier.startsWith("\\") || /^[A-Za-z]:[\\/]/.test(specifier)) return false;
  return !/^[A-Za-z][A-Za-z0-9+.-]*:/.test(specifier);
}

/** Whether `path` is `folder` or lies inside it (both real, absolute). */
export function within(path: string, folder: string): boolean {
  return path === folder || path.startsWith(folder.endsWith(sep) ? folder : folder + sep);
}

/** The plugin folder of `scopes` that module file `path` (real) lies in, with its scope, or null. */
export function pluginFolderOf(path: string, scopes: readonly ImportScope[]): { folder: string; scope: ImportScope } | null {
  for (const scope of scopes) {
    for (const folder of scope.folders) if (within(path, folder)) return { folder, scope };
    for (const root of scope.roots) {
      if (!within(path, root) || path === root) continue;
      const rest = path.slice(root.length + (root.endsWith(sep) ? 0 : 1));
      const first = rest.split(sep)[0]!;
      // A file directly in a root is no plugin's; a folder of the root is one plugin's.
      if (rest.includes(sep)) return { folder: root.endsWith(sep) ? root + first : root + sep + first, scope };
    }
  }
  return null;
}

/** The real path of `path` (the kernel's, which follows a link before a `..`), or `path` when it cannot be read. */
export function realOr(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}

/** Whether a module of plugin folder `folder` may load file `path` (real): inside the folder or the engine's. */
export function ownFile(path: string, folder: string, engine: string): boolean {
  return within(path, folder) || within(path, engine);
}

/** The refusal of `specifier` found at `found` (a path or URL) for the plugin in `folder`. */
export function refusal(scope: ImportScope, specifier: string, found: string, folder: string): Error {
  const text = scope.refused.replaceAll("{specifier}", specifier).replaceAll("{found}", found).replaceAll("{folder}", folder);
  return Object.assign(new Error(text), { code: "ERR_AGENT_AUTOLOOP_IMPORT_OUTSIDE" });
}

/** CommonJS's resolver, which Node keeps as a property of `Module` (not in its public types). */
type ResolveFilename = (request: string, parent: Module | undefined, isMain: boolean, options?: unknown) => string;
interface ModuleStatics { _resolveFilename: ResolveFilename; _nodeModulePaths(from: string): string[] }

/**
 * Checks what CommonJS's resolver finds for a module inside a confined folder, as the hooks do for ES modules; a
 * preload (`-r`, whose parent has no file) counts from the working folder, where Node looks for it. `scopes` is read
 * at each call (more may be added). Wraps once per thread.
 * @throws Error (code `ERR_AGENT_AUTOLOOP_IMPORT_OUTSIDE`) from `require` when the module lies outside the folder.
 */
export function wrapRequire(scopes: readonly ImportScope[], engine: string): void {
  const statics = Module as unknown as ModuleStatics;
  const original = statics._resolveFilename;
  const engineModule = new Module(`${engine}${sep}package.json`);
  engineModule.filename = `${engine}${sep}package.json`;
  engineModule.paths = statics._nodeModulePaths(engine);
  statics._resolveFilename = function confined(this: unknown, request, parent, isMain, options) {
    // A preload's own path (`-r /usr/lib/…/tsx/preflight.cjs`) is the command line's, which the manifest wrote.
    const preload = !parent?.filename && parent?.id === "internal/preload";
    const from = preload ? process.cwd() + sep : parent?.filename;
    const owner = typeof from === "string" && scopes.length > 0 ? pluginFolderOf(realOr(from), scopes) : null;
    if (owner === null || (preload && !looksUp(request))) return original.call(this, request, parent, isMain, options);
    if (namesEngine(request)) return original.call(this, request, engineModule, isMain, options);
    const found = original.call(this, request, parent, isMain, options);
    if (Module.isBuiltin(found)) return found;
    const path = realOr(found);
    if (ownFile(path, owner.folder, engine)) return found;
    throw refusal(owner.scope, request, path, owner.folder);
  };
}
