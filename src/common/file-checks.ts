/**
 * What a path is on this computer, one copy for every part that checks a path before it uses one: its real path (the
 * sandboxes' mounts, the tool host's binds, the plugin layer's listing of a plugin folder) and whether it is a file this
 * user may run (`doctor`, `plugins doctor`); a folder's entries read a bounded number at a time (`entriesUpTo`,
 * `EntryPages`: a folder an agent filled with millions costs no more than the reader's limit or page).
 */
import { accessSync, constants, lstatSync, opendirSync, realpathSync, statSync, type Dir, type Dirent, type Stats } from "node:fs";
import { sep } from "node:path";

/**
 * `path` with every link on the way resolved (realpath), or `otherwise` when it cannot be: it does not exist, a link
 * leads nowhere, or a folder on the way cannot be read.
 */
export function realPathOr<T>(path: string, otherwise: T): string | T {
  try {
    return realpathSync.native(path);
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

/**
 * Whether `path` itself (not through a link) is a regular file of this process's user with mode 0600, as a record
 * written by `writeFileAtomic(…, 0o600)` is: one that is not may be left as it is only after it is written anew.
 */
export function ownPrivateFile(path: string): boolean {
  const st = lstatOr(path);
  return st !== null && st.isFile() && (st.mode & 0o777) === 0o600 && (process.getuid === undefined || st.uid === process.getuid());
}

/** Orders folder entries by name, code unit by code unit (as `readdirSync` lists them; `opendirSync` keeps the disk's order). */
export function byName(a: Dirent, b: Dirent): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** How many entries a directory read by `entriesUpTo` or `EntryPages` takes from the kernel at once. */
const dirBufferEntries = 1024;

/**
 * The entries of folder `dir`, read one by one and at most `max` + 1 of them (more than `max` returned: the folder holds
 * more, and the rest is not read — a folder of millions of entries costs no more than the limit); none when it cannot
 * be read, what was read when it fails meanwhile.
 */
export function entriesUpTo(dir: string, max: number): Dirent[] {
  const pages = EntryPages.open(dir);
  if (!pages) return [];
  try {
    return pages.next(max + 1);
  } finally {
    pages.close();
  }
}

/** The names in folder `dir`, at most `max` + 1 of them (`entriesUpTo`: the rest not read), in name order; [] when it cannot be read. */
export function namesUpTo(dir: string, max: number): string[] {
  return entriesUpTo(dir, max).map((e) => e.name).sort();
}

/**
 * A folder read a page of entries at a time (`opendirSync`), so that a caller holds one page, not the whole folder, and
 * may yield between pages. What is added or removed meanwhile may or may not be read (readdir's rule); an entry that
 * stays is read once.
 */
export class EntryPages {
  private constructor(private readonly dir: Dir) {}

  /** The folder `path` opened, or null when it cannot be read. */
  static open(path: string): EntryPages | null {
    try {
      return new EntryPages(opendirSync(path, { bufferSize: dirBufferEntries }));
    } catch {
      return null;
    }
  }

  /** The next (at most `size`) entries; fewer at the end, none past it or when the folder fails while read. */
  next(size: number): Dirent[] {
    const out: Dirent[] = [];
    try {
      while (out.length < size) {
        const e = this.dir.readSync();
        if (e === null) break;
        out.push(e);
      }
    } catch {
      // gone meanwhile: what was read
    }
    return out;
  }

  /** Closes the folder (once; never throws). */
  close(): void {
    try {
      this.dir.closeSync();
    } catch {
      // closed already
    }
  }
}
