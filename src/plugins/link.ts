/**
 * The engine's SDK for installed plugins (plugins.md 安装): `<home>/node_modules/agent-autoloop` links to the engine's
 * folder, so that a plugin in `<home>/plugins/<name>/` can `import … from "agent-autoloop/sdk"` by Node's ordinary
 * package lookup (up the folders from the plugin's file).
 */
import { existsSync, lstatSync, mkdirSync, readlinkSync, renameSync, rmSync, symlinkSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { dirname, join, resolve } from "node:path";
import { engineDir } from "../common/paths.js";

/**
 * Makes `<home>/node_modules/agent-autoloop` a link to the engine's folder. A link to another folder (an engine that
 * moved or was reinstalled elsewhere) is replaced atomically; a real folder of that name is left alone (someone
 * installed a package there on purpose).
 * @param pluginsDir `<home>/plugins`; the link goes next to it.
 * @returns whether the link now points at `engine`.
 * @throws Error when the home cannot be written (a read-only home, a full disk).
 */
export function linkEngine(pluginsDir: string, engine = engineDir): boolean {
  const modules = join(dirname(resolve(pluginsDir)), "node_modules");
  const link = join(modules, "agent-autoloop");
  const current = linkTarget(link);
  if (current === resolve(engine)) return true;
  if (current === null && existsSync(link)) return false;
  mkdirSync(modules, { recursive: true });
  // A new link under a temporary name, renamed over the old one: a plugin loading meanwhile sees one or the other.
  const temporary = join(modules, `.agent-autoloop-${process.pid}-${randomBytes(4).toString("hex")}`);
  symlinkSync(engine, temporary, "junction");
  try {
    renameSync(temporary, link);
  } catch (e) {
    rmSync(temporary, { force: true });
    if (existsSync(link) && linkTarget(link) === null) return false; // a real folder came in between: leave it
    throw e;
  }
  return true;
}

/** The absolute target of a symbolic link, or null when `path` is not one (or does not exist). */
function linkTarget(path: string): string | null {
  try {
    return lstatSync(path).isSymbolicLink() ? resolve(dirname(path), readlinkSync(path)) : null;
  } catch {
    return null;
  }
}
