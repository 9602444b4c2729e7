/**
 * The last good versions of a home's plugin folders (issue 27, point 1: one truth). A folder that loaded once keeps
 * that version in use while its files are refused, until they are fixed — in the hub, in a worker, and in the CLI
 * when no hub runs, because every loader keeps them here, in the home (hidden from every sandbox), not only in its
 * own memory: `plugins invoke` after a broken edit uses the version the hub uses, and so does a hub started again.
 * The tools a declarative plugin had and lost are kept too (their calls answer "definition missing").
 *
 * One JSON file per kind and folder, written whole under a temporary name and renamed (a reader never sees half of
 * one); at most `lastGoodEntriesMax` files, each at most `lastGoodFileMaxBytes`. A home that cannot be written keeps
 * them in memory only. Never throws.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readBounded } from "./files.js";
import { lastGoodEntriesMax, lastGoodFileMaxBytes } from "./limits.js";
import type { PluginKind } from "./types.js";

/** A kept version: the folder it is of, its digest, and what its loader needs to use it again. */
export interface Kept<T> {
  folder: string;
  digest: string;
  value: T;
}

/** The last good versions of one home (`dir`: `<home>/plugin-state`), or of this process only (`dir` null). */
export class LastGood {
  private readonly memory = new Map<string, Kept<unknown>>();
  private goneNames: Set<string> | null = null;

  constructor(readonly dir: string | null) {}

  /** The kept version of `folder`'s `kind`, or null. */
  get<T>(kind: PluginKind, folder: string): Kept<T> | null {
    const key = this.key(kind, folder);
    const known = this.memory.get(key) as Kept<T> | undefined;
    if (known) return known;
    if (!this.dir) return null;
    const read = readJson<Kept<T>>(join(this.dir, key));
    return read && read.folder === folder && typeof read.digest === "string" ? read : null;
  }

  /** Keeps `value` as the last good version of `folder`'s `kind` (nothing is written when it is kept already). */
  put<T>(kind: PluginKind, folder: string, digest: string, value: T): void {
    const key = this.key(kind, folder);
    if (this.memory.get(key)?.digest === digest) return;
    const kept: Kept<T> = { folder, digest, value };
    this.memory.set(key, kept);
    if (!this.dir) return;
    const onDisk = readJson<Kept<T>>(join(this.dir, key));
    if (onDisk?.folder === folder && onDisk.digest === digest) return;
    const text = JSON.stringify(kept);
    if (Buffer.byteLength(text) > lastGoodFileMaxBytes) return;
    if (this.files().length >= lastGoodEntriesMax) this.forgetOldest();
    writeWhole(this.dir, key, text);
  }

  /** Forgets the kept version of `folder`'s `kind` (the folder is gone). */
  drop(kind: PluginKind, folder: string): void {
    const key = this.key(kind, folder);
    this.memory.delete(key);
    if (this.dir) rmSync(join(this.dir, key), { force: true });
  }

  /** The folders with a kept version of `kind`. */
  folders(kind: PluginKind): string[] {
    const out = new Set([...this.memory].filter(([key]) => key.startsWith(`${kind}-`)).map(([, k]) => k.folder));
    if (this.dir) {
      for (const f of this.files().filter((n) => n.startsWith(`${kind}-`))) {
        const read = readJson<Kept<unknown>>(join(this.dir, f));
        if (read && this.key(kind, read.folder) === f) out.add(read.folder);
      }
    }
    return [...out].sort();
  }

  /** Whether `name` (`<plugin>.<tool>`) was offered once and is gone. */
  isGone(name: string): boolean {
    return this.gone().has(name);
  }

  /** Marks `gone` as gone and `back` as offered again; at most `max` names are kept (the oldest forgotten first). */
  setGone(gone: readonly string[], back: readonly string[], max: number): void {
    const set = this.gone();
    const before = set.size;
    let changed = false;
    for (const n of back) changed = set.delete(n) || changed;
    for (const n of gone) {
      set.delete(n);
      set.add(n);
    }
    while (set.size > max) set.delete(set.values().next().value!);
    if (this.dir && (changed || gone.length > 0 || set.size !== before)) writeWhole(this.dir, "gone.json", JSON.stringify([...set]));
  }

  private gone(): Set<string> {
    if (!this.goneNames) {
      const read = this.dir ? readJson<unknown>(join(this.dir, "gone.json")) : null;
      this.goneNames = new Set(Array.isArray(read) ? read.filter((n): n is string => typeof n === "string") : []);
    }
    return this.goneNames;
  }

  private key(kind: PluginKind, folder: string): string {
    return `${kind}-${createHash("sha256").update(folder).digest("hex").slice(0, 32)}.json`;
  }

  private files(): string[] {
    try {
      return readdirSync(this.dir!).filter((n) => n.endsWith(".json") && n !== "gone.json");
    } catch {
      return [];
    }
  }

  private forgetOldest(): void {
    const dated = this.files().map((n) => {
      try {
        return { n, at: statSync(join(this.dir!, n)).mtimeMs };
      } catch {
        return { n, at: 0 };
      }
    }).sort((a, b) => a.at - b.at);
    for (const { n } of dated.slice(0, Math.max(1, dated.length - lastGoodEntriesMax + 1))) rmSync(join(this.dir!, n), { force: true });
  }
}

/** The JSON value of a file of the store, or null (missing, too large, not JSON). */
function readJson<T>(path: string): T | null {
  try {
    const bytes = readBounded(path, lastGoodFileMaxBytes);
    if (bytes.length > lastGoodFileMaxBytes) return null;
    return JSON.parse(bytes.toString("utf8")) as T;
  } catch {
    return null;
  }
}

/** Writes `text` as `dir/name` whole: a temporary file renamed over it. A home that cannot be written is left alone. */
function writeWhole(dir: string, name: string, text: string): void {
  const temporary = join(dir, `.${name}.${process.pid}.${randomBytes(4).toString("hex")}`);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(temporary, text, { mode: 0o600 });
    renameSync(temporary, join(dir, name));
  } catch {
    rmSync(temporary, { force: true });
  }
}
