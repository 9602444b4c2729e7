/**
 * What a path is on this computer, one copy for every part that checks a path before it uses one: its real path (the
 * sandboxes' mounts, the tool host's binds, the plugin layer's listing of a plugin folder) and whether it is a file this
 * user may run (`doctor`, `plugins doctor`).
 */
import { accessSync, constants, lstatSync, realpathSync, statSync, type Stats } from "node:fs";
import { sep } from "node:path";

/**
 * `path` with every link on the way resolved (realpath), or `otherwise` when it cannot be: it does not exist, a link
 * leads nowhere, or a folder on the way cannot be read.
 */
export function realPathOr<T>(path: string, otherwise: T): string | T {
  try {
    return realpathSync(path);
  } catch {
    return otherwise;
  }
}

/** Whether real path `path` is real path `folder` itself or lies inside it. */
export function within(path: string, folder: string): boolean {
  return path === folder || path.startsWith(folder.endsWith(sep) ? folder : folder + sep);
}

/** Whether `file` is a regular file (after links) this user may execute. */
export function executableFile(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Whether a folder entry is there at all, whatever it is (lstat: a dangling symlink is there). */
export function present(path: string): boolean {
  try {
    // A missing entry answers undefined instead of throwing: the plugin watcher asks this of ~13 names in every plugin
    // folder twice a second, nearly all missing, and each thrown ENOENT was an Error with its stack (issue 32: most
    // of an idle hub's allocation, which kept its young generation's pages in use).
    return lstatSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}

/** Whether the entry at `path` is a symbolic link itself (false when there is none). */
export function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Whether `path` leads to a folder (through links, as a program that opens it reads it). */
export function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Whether `path` leads to a regular file (through links; not a named pipe or a device). */
export function isRegularFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** `lstat` of `path` (the entry itself, not through a link), or null when it cannot be looked at (gone, no access). */
export function lstatOr(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}
