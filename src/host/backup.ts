/**
 * `agent-autoloop backup <file>` and `agent-autoloop restore <file>` (issue 32): the home in one archive and back.
 * The CLI reaches it through host/serve.ts, the one door from the command line to the database (tests/layers.test.ts).
 *
 * backup — while the hub runs and takes writes, or while none runs — copies the database with SQLite's online backup
 * API (a consistent snapshot: the facts up to one commit, the projection as of that commit), and beside it the files
 * that make the home this home: rules.json, config.json (the owner, worker and channel keys), secrets.env,
 * master.key (run tokens and card links derive from it), home.id, plugin-settings.json and recipes.json. A
 * `manifest.json` names the format, when and by which version it was taken, the number of facts and the sha256 of
 * every file. The archive is a gzip'd tar written private (0600): it holds every secret of the home. Installed
 * plugins (`plugins/`), run folders and logs are not in it: plugins come back with `add`.
 *
 * restore — only into an empty home, and never onto a running hub (it holds the home's lock meanwhile) — unpacks into
 * a folder beside the home, checks every file against the manifest, runs SQLite's integrity check and counts the
 * facts, and only then moves the files in. A database of another format version is kept as it is: the hub rebuilds
 * its projection from the facts at its first start (store.ts), as after any upgrade.
 */
import { createHash, randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import Database from "better-sqlite3";
import * as tar from "tar";
import { t, type Lang } from "../i18n/messages.js";
import { formatFingerprint } from "./store.js";
import { lockHeldBy, tryLockHome } from "./lock.js";
import { releaseSync } from "./version.js";
import type { Home } from "./home.js";
import { autoloopFolders, isInside, realPath, userHomes } from "../worker/sandbox.js";

/** The format of the archive's manifest. */
const backupFormat = "agent-autoloop-backup";
const backupVersion = 1;
/** The home's files an archive carries besides the database, and the mode each is restored with. */
const homeFiles: Record<string, number> = {
  "rules.json": 0o644, "config.json": 0o600, "secrets.env": 0o600, "master.key": 0o600, "home.id": 0o644,
  "plugin-settings.json": 0o600, "recipes.json": 0o644,
};
const databaseFile = "hub.db";
const manifestFile = "manifest.json";
/** At most this many bytes of a manifest are read (a named limit on what restore trusts before checking). */
const manifestMaxBytes = 64 * 1024;

/** What `manifest.json` says. */
interface Manifest {
  format: typeof backupFormat;
  version: number;
  createdAt: string;
  engine: string;
  facts: number;
  lastSeq: number;
  fingerprint: string | null;
  /** File name → sha256 hex. */
  files: Record<string, string>;
}

const sha = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

/**
 * Whether `file` lies where every sandbox of this engine hides it: in the home `h`, or in a folder of the engine in the
 * user's homes (`~/.agent-autoloop-backups`: src/worker/sandbox.ts `autoloopFolders`; issue 26 round 7, F15).
 */
function hiddenFromAgents(h: Home, file: string): boolean {
  const folder = realPath(dirname(file));
  return [realPath(h.dir), ...autoloopFolders(userHomes())].some((d) => isInside(folder, d));
}

/**
 * Writes the home's archive to `file`. @returns the lines to print (what it holds).
 * @throws Error when the home has no database or `file`'s folder does not exist.
 */
export async function backupHome(h: Home, file: string, lang: Lang): Promise<string[]> {
  const target = resolve(file);
  if (!existsSync(h.database)) throw new Error(t(lang, "backup.noDatabase", { home: h.dir }));
  if (!existsSync(dirname(target))) throw new Error(t(lang, "backup.noFolder", { folder: dirname(target) }));
  // A private staging folder beside the archive (same file system as its rename), removed whatever happens.
  const staging = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString("hex")}.tmp`);
  mkdirSync(staging, { mode: 0o700 });
  try {
    const source = new Database(h.database, { readonly: true, fileMustExist: true });
    try {
      source.pragma("busy_timeout = 5000");
      // SQLite's online backup: pages copied in steps; a write of the hub between steps restarts the copy from a
      // consistent point, so the copy is the database as of one commit.
      await source.backup(join(staging, databaseFile));
    } finally {
      source.close();
    }
    // SQLite makes the copy with the process's umask: private like every other entry (round 24, F24-4).
    chmodSync(join(staging, databaseFile), 0o600);
    const copy = new Database(join(staging, databaseFile), { readonly: true });
    let facts: number;
    let lastSeq: number;
    let fingerprint: string | null;
    try {
      ({ n: facts, s: lastSeq } = copy.prepare(`SELECT COUNT(*) AS n, COALESCE(MAX(seq), 0) AS s FROM facts`).get() as { n: number; s: number });
      fingerprint = (copy.prepare(`SELECT value FROM store_meta WHERE key = 'fingerprint'`).get() as { value: string } | undefined)?.value ?? null;
    } finally {
      copy.close();
    }
    const files: Record<string, string> = { [databaseFile]: sha(join(staging, databaseFile)) };
    for (const name of Object.keys(homeFiles)) {
      const from = join(h.dir, name);
      if (!existsSync(from) || !statSync(from).isFile()) continue;
      writeFileSync(join(staging, name), readFileSync(from), { mode: 0o600 });
      files[name] = sha(join(staging, name));
    }
    const { tag } = releaseSync();
    const manifest: Manifest = { format: backupFormat, version: backupVersion, createdAt: new Date().toISOString(), engine: tag ?? "unreleased", facts, lastSeq, fingerprint, files };
    writeFileSync(join(staging, manifestFile), JSON.stringify(manifest, null, 2) + "\n", { mode: 0o600 });
    // Made new and private inside the private staging folder before tar writes into it (round 24, F24-3: a
    // `<file>.partial` by path followed a link an agent planted beside the archive), then renamed over `file` (a
    // link there is replaced, never followed).
    const partial = join(staging, "archive.partial");
    writeFileSync(partial, "", { mode: 0o600, flag: "wx" });
    chmodSync(partial, 0o600);
    await tar.create({ gzip: true, file: partial, cwd: staging, portable: true }, [manifestFile, ...Object.keys(files)]);
    renameSync(partial, target);
    const done = t(lang, "backup.done", { file: target, facts, seq: lastSeq, files: Object.keys(files).join(", ") });
    return hiddenFromAgents(h, target) ? [done] : [done, t(lang, "backup.readable", { file: target })];
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * Restores the archive `file` into the home `h`, which must be empty (or not exist) and have no hub running.
 * @returns the lines to print. @throws Error, writing nothing into the home, when a hub runs there, the home is
 *   not empty, or the archive is not a backup of this format, a file does not match its digest, or the database
 *   fails SQLite's integrity check or holds another number of facts than the manifest says.
 */
export async function restoreHome(h: Home, file: string, lang: Lang): Promise<string[]> {
  const source = resolve(file);
  if (!existsSync(source)) throw new Error(t(lang, "backup.noArchive", { file: source }));
  const running = existsSync(h.dir) ? lockHeldBy(h) : null;
  if (running) throw new Error(t(lang, "restore.running", { pid: running.pid, home: h.dir }));
  const present = existsSync(h.dir) ? [databaseFile, ...Object.keys(homeFiles)].filter((n) => existsSync(join(h.dir, n))) : [];
  if (present.length > 0) throw new Error(t(lang, "restore.notEmpty", { home: h.dir, files: present.join(", ") }));
  mkdirSync(h.dir, { recursive: true, mode: 0o700 });
  const lock = tryLockHome(h, "restore");
  if (!("release" in lock)) throw new Error(t(lang, "restore.running", { pid: lock.holder ?? "?", home: h.dir }));
  const staging = join(dirname(h.dir), `.${basename(h.dir)}.restore-${randomBytes(6).toString("hex")}`);
  mkdirSync(staging, { mode: 0o700 });
  try {
    const allowed = new Set([manifestFile, databaseFile, ...Object.keys(homeFiles)]);
    const refused: string[] = [];
    try {
      await tar.extract({
        file: source, cwd: staging, strict: true,
        // Only the plain files a backup writes, at the top: no links, folders or other paths are ever unpacked.
        filter: (path, entry) => {
          const ok = allowed.has(path) && "type" in entry && entry.type === "File";
          if (!ok) refused.push(path);
          return ok;
        },
      });
    } catch (e) {
      throw new Error(t(lang, "restore.notArchive", { file: source, error: (e as Error).message }));
    }
    if (refused.length > 0) throw new Error(t(lang, "restore.unexpected", { file: source, names: refused.join(", ") }));
    const manifestPath = join(staging, manifestFile);
    if (!existsSync(manifestPath) || statSync(manifestPath).size > manifestMaxBytes) throw new Error(t(lang, "restore.notArchive", { file: source, error: manifestFile }));
    let manifest: Manifest;
    try {
      manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as Manifest;
    } catch (e) {
      throw new Error(t(lang, "restore.notArchive", { file: source, error: `${manifestFile}: ${(e as Error).message}` }));
    }
    if (manifest.format !== backupFormat || manifest.version !== backupVersion || typeof manifest.files !== "object" || manifest.files === null) {
      throw new Error(t(lang, "restore.notArchive", { file: source, error: t(lang, "restore.manifestFormat", { manifest: manifestFile }) }));
    }
    const names = readdirSync(staging).filter((n) => n !== manifestFile);
    for (const name of new Set([...names, ...Object.keys(manifest.files)])) {
      if (!existsSync(join(staging, name)) || manifest.files[name] !== sha(join(staging, name))) throw new Error(t(lang, "restore.digest", { file: source, name }));
    }
    if (!names.includes(databaseFile) || !names.includes("master.key")) throw new Error(t(lang, "restore.digest", { file: source, name: names.includes(databaseFile) ? "master.key" : databaseFile }));
    const db = new Database(join(staging, databaseFile), { readonly: true });
    let sameFormat: boolean;
    try {
      const check = db.pragma("integrity_check", { simple: true });
      if (check !== "ok") throw new Error(t(lang, "restore.integrity", { file: source, error: String(check) }));
      const { n } = db.prepare(`SELECT COUNT(*) AS n FROM facts`).get() as { n: number };
      if (n !== manifest.facts) throw new Error(t(lang, "restore.integrity", { file: source, error: t(lang, "restore.factCount", { n, expected: manifest.facts }) }));
      const master = Buffer.from(readFileSync(join(staging, "master.key"), "utf8").trim(), "hex");
      sameFormat = manifest.fingerprint === formatFingerprint(master);
    } finally {
      db.close();
    }
    for (const name of names) {
      renameSync(join(staging, name), join(h.dir, name));
      chmodSync(join(h.dir, name), name === databaseFile ? 0o600 : homeFiles[name]!);
    }
    return [
      t(lang, "restore.done", { home: h.dir, facts: manifest.facts, seq: manifest.lastSeq, at: manifest.createdAt, engine: manifest.engine }),
      t(lang, sameFormat ? "restore.sameFormat" : "restore.otherFormat"),
    ];
  } finally {
    rmSync(staging, { recursive: true, force: true });
    lock.release();
  }
}
