/**
 * Which imports of a plugin's code are its own (issue 26, hostile round 43: F43b-1, F43b-2). Node looks for a package
 * a module imports by name in folders *above* it too: the nearest `package.json` (a package's imports of its own name,
 * whatever that name, and its `#imports`), then every `node_modules` from the module's folder up to `/`. Above a
 * plugin's folder those are the home, the user's home, a shared parent — where an agent's `writable` entry or another
 * local user can put a `package.json` named like a package the plugin imports, or a `node_modules` holding one.
 *
 * So a module inside a plugin's folder may import by name only what lies inside that folder (its `node_modules`), a
 * built-in module of Node, what lies inside the engine's own folder (its packages, trusted as the engine is: an example
 * plugin run from the engine's checkout imports them), and the engine's `agent-autoloop/…` (resolved from the engine,
 * never from above the plugin).
 * A relative or absolute path, or a URL, is the author's own choice and is not confined. Shared by the loader thread's
 * hooks (import-hooks.ts) and the CommonJS side (import-confinement.ts); no I/O but `realpath`.
 */
import { realpathSync } from "node:fs";
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

/** The refusal of `specifier` found at `found` (a path or URL) for the plugin in `folder`. */
export function refusal(scope: ImportScope, specifier: string, found: string, folder: string): Error {
  const text = scope.refused.replaceAll("{specifier}", specifier).replaceAll("{found}", found).replaceAll("{folder}", folder);
  return Object.assign(new Error(text), { code: "ERR_AGENT_AUTOLOOP_IMPORT_OUTSIDE" });
}
