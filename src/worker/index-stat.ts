/**
 * Changes an agent hid in a repository's index (issue 26 hostile round 14, F14-2): the index stays writable in the
 * sandbox (the agent commits), so an entry can keep the committed object id together with the changed file's stat
 * data. Git takes a file whose stat data match its entry as unchanged without reading it, so the owner's `git status`
 * and `git diff` (and `git diff HEAD`, `git commit -a`) show no change while the file holds the agent's content.
 *
 * After a sandboxed run (planted.ts) each tracked file changed since the launch — its ctime, which no program can set
 * back, at or after the launch — whose entry git would take as unchanged is hashed as a blob and compared with the
 * entry's object id. Git takes an entry as unchanged when its size and whole-second mtime match the file (the fields
 * every `core.checkStat` and build compares; ctime, inode and nanoseconds only some) and it is not racy (the entry's
 * mtime before the index's own: git reads a racy file's content, so its change shows). Only those entries are
 * hashed: a changed file whose stat data do not match shows in `git status` anyway.
 *
 * No program of the repository runs: the file is hashed here (`blob <size>\0<content>`, SHA-1 or SHA-256 by the id's
 * length), never through git's filters. The index holds the id of the *cleaned* content, so a legitimate `git add`
 * of a file git converts would differ from the file's raw hash; to name only a real hiding:
 * - end-of-line conversion (`text`, `eol`, `core.autocrlf`): the content with each CRLF made LF is hashed too, and
 *   either id is taken as the entry's (an agent can add no code by adding carriage returns);
 * - `ident` (a file the index's attributes name so): the content with each `$Id: …$` collapsed to `$Id$` is hashed too;
 * - a `filter` driver or `working-tree-encoding`: git runs a program or a converter the check cannot repeat without
 *   running it — such files are not checked (SECURITY.md names this). Their attributes are read from the index's
 *   `.gitattributes` (`git check-attr --cached`), not the work tree's: an agent that added a filter there to have a
 *   file skipped changed the index's `.gitattributes`, which `git status` shows (or a commit of its own).
 * The index is only read (`git ls-files`), never written: it is the owner's state. Git runs without the repository's
 * configuration, which an agent may have written (git-isolated.ts; round 23, F23-1: a promisor remote's lazy fetch).
 */
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { closeSync, constants, existsSync, fstatSync, lstatSync, openSync, readlinkSync, readSync, realpathSync, type BigIntStats } from "node:fs";
import { join } from "node:path";
import { gitFolderTop, gitFolderTopMax, gitCommonDir, gitReadTimeoutMs } from "./git-read.js";
import { gitPrivateDir, withIsolatedGit } from "./git-isolated.js";

/** How long one git read of the check may take: `gitReadTimeoutMs`, or what is left before `budget.until` (at least 1 ms). */
export function timeLeft(budget: Pick<MaskedLimits, "until">): number {
  return budget.until === undefined ? gitReadTimeoutMs : Math.max(1, Math.min(gitReadTimeoutMs, budget.until - Date.now()));
}

/**
 * How much the check after one run hashes at most, over all the repositories it looks at: `files` files and `bytes`
 * bytes (an agent that changes more leaves the check cut short, and the notice says so: never silently).
 */
export const maskedCheckLimits: MaskedLimits = { files: 20_000, bytes: 512 * 1024 * 1024 };

/** Limits of `maskedChanges`: files hashed and bytes read at most. */
export interface MaskedLimits {
  files: number;
  bytes: number;
  /** When git's reads must be done by (ms since the epoch; `plantedGitMs` over the whole check): none by default. */
  until?: number;
}

/** What `maskedChanges` found in one repository: paths (absolute) whose content is not their entry's, and whether the check stopped early. */
export interface MaskedFound {
  masked: string[];
  /**
   * Paths (absolute) changed since the launch whose stat data git takes as unchanged but which are larger than what
   * is left of the budget to hash (F16-5: a file of 2^32 + 24 bytes matches an entry of 24): each may hide a change.
   */
  unhashed: string[];
  /** True when the limits (`budget`) ran out, the index could not be listed in time, or git could not list it. */
  cut: boolean;
}

/** How many bytes of `git ls-files --debug` output are read at most (about 200 bytes an entry: a million entries). */
const indexDebugBytesMax = 256 * 1024 * 1024;
/** How many files too large to hash one repository's check names at most (past it the check is cut: `cut`). */
const unhashedMax = 100;
/** How far before the launch a file's ctime still counts as changed in the run, in ms: the kernel's file clock is coarse. */
export const ctimeSlackMs = 1000;


/** One stage-0 entry of an index with the stat data git compares; `raw` is its path's bytes (relative). */
interface Entry {
  raw: Buffer;
  mode: string;
  oid: string;
  mtimeSec: bigint;
  size: bigint;
}

/**
 * The tracked files of the repository (git folder `gitDir`, work tree `tree`) changed since `sinceMs` (ms
 * since the epoch: the run's launch) whose content is not the object id their index entry keeps while git takes them
 * as unchanged (see the module). `budget` is what is left of `maskedCheckLimits` for the run and is spent here; when
 * it runs out the rest is not hashed and `cut` is true. Never throws; never writes the index.
 */
export function maskedChanges(gitDir: string, tree: string, sinceMs: number, budget: MaskedLimits, privateDir = gitPrivateDir()): MaskedFound {
  const index = join(gitDir, "index");
  if (!existsSync(index)) return { masked: [], unhashed: [], cut: false };
  const top = gitFolderTop(gitDir);
  if (top.blocking.length > 0 || top.crowded || (budget.until !== undefined && Date.now() >= budget.until)) return { masked: [], unhashed: [], cut: true };
  let indexMtimeSec: bigint;
  let listed: Entry[] | null;
  let real: string;
  try {
    indexMtimeSec = lstatSync(index, { bigint: true }).mtimeNs / 1_000_000_000n;
    real = realpathSync.native(tree);
    listed = entries(gitDir, tree, timeLeft(budget), privateDir);
  } catch {
    return { masked: [], unhashed: [], cut: true };
  }
  if (listed === null) return { masked: [], unhashed: [], cut: true };
  // Files by the work tree's real path: one is taken only where its path leads with no link on the way (`reachedDirectly`).
  const differing: { entry: Entry; file: Buffer; st: BigIntStats }[] = [];
  const unhashed: string[] = [];
  let cut = false;
  for (const e of listed) {
    const file = Buffer.concat([Buffer.from(`${real}/`), e.raw]);
    let st: BigIntStats;
    try {
      st = lstatSync(file, { bigint: true });
    } catch {
      continue; // missing: git status shows it deleted
    }
    if (Number(st.ctimeMs) < sinceMs - ctimeSlackMs) continue;
    if (e.mode === "120000" ? !st.isSymbolicLink() : !st.isFile()) continue;
    // What git compares: when these differ, or the entry is racy, git reads the file and shows its change.
    // Git keeps the size and seconds as 32 bits and compares `(unsigned int)st_size` (F16-5): so does the check.
    if ((st.size & 0xffffffffn) !== e.size || ((st.mtimeNs / 1_000_000_000n) & 0xffffffffn) !== e.mtimeSec || e.mtimeSec >= indexMtimeSec) continue;
    // A file reached through a link git does not follow is not the entry's (git shows it deleted or changed).
    if (!reachedDirectly(file)) continue;
    if (budget.files < 1) {
      cut = true;
      break;
    }
    // Too large to hash with what is left: named, not hashed (a hiding must not pass for "cut short").
    if (BigInt(budget.bytes) < st.size) {
      if (unhashed.length >= unhashedMax) cut = true;
      else unhashed.push(`${tree}/${e.raw.toString("utf8")}`);
      continue;
    }
    budget.files -= 1;
    budget.bytes -= Number(st.size);
    const content = contentOf(file, e.mode, st);
    if (content !== null && !blobIds(content, e.oid.length).includes(e.oid)) differing.push({ entry: e, file, st });
  }
  if (differing.length === 0) return { masked: [], unhashed, cut };
  const attributes = cleaning(gitDir, tree, differing.map((d) => d.entry.raw), timeLeft(budget), privateDir);
  const masked: string[] = [];
  for (const { entry, file, st } of differing) {
    const a = attributes?.get(entry.raw.toString("latin1"));
    if (a?.program) continue;
    if (a?.ident) {
      const content = contentOf(file, entry.mode, st);
      if (content === null || blobIds(identCollapsed(content), entry.oid.length).includes(entry.oid)) continue;
    }
    masked.push(`${tree}/${entry.raw.toString("utf8")}`);
  }
  return { masked, unhashed, cut };
}

/** The stage-0 entries of the index, with their stat data; null when git did not list them within its limits. */
function entries(gitDir: string, tree: string, timeoutMs: number, privateDir: string): Entry[] | null {
  let out: Buffer;
  try {
    out = isolated(gitDir, tree, privateDir, (env) => execFileSync("git", ["ls-files", "--stage", "-v", "--debug", "-z"], {
      cwd: tree, env, stdio: ["ignore", "pipe", "ignore"], maxBuffer: indexDebugBytesMax, timeout: timeoutMs,
    }));
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { signal?: string | null };
    return err.code === "ENOBUFS" || err.code === "ETIMEDOUT" || err.signal === "SIGTERM" ? null : [];
  }
  const found: Entry[] = [];
  // `<tag> <mode> <object> <stage>\t<path>\0` then five lines of stat data (`  ctime: s:ns`, `  mtime: s:ns`,
  // `  dev: …\tino: …`, `  uid: …\tgid: …`, `  size: …\tflags: …`), none of them the agent's text.
  let at = 0;
  while (at < out.length) {
    const nul = out.indexOf(0, at);
    if (nul < 0) break;
    let end = nul + 1;
    for (let i = 0; i < 5 && end > 0; i++) end = out.indexOf(0x0a, end) + 1;
    if (end <= 0) break;
    const head = out.subarray(at, nul);
    const stat = out.subarray(nul + 1, end).toString("latin1");
    at = end;
    const tab = head.indexOf(0x09);
    const m = /^(.) (\d{6}) ([0-9a-f]{40}|[0-9a-f]{64}) 0$/.exec(head.subarray(0, Math.max(tab, 0)).toString("latin1"));
    const mtime = /mtime: (\d+):/.exec(stat);
    const size = /size: (\d+)\t/.exec(stat);
    if (tab < 0 || !m || !mtime || !size) continue;
    const raw = head.subarray(tab + 1);
    const [, tag, mode, oid] = m as unknown as [string, string, string, string];
    // Marked entries (assume-unchanged: lower case, skip-worktree: S) are named by the hidden check already.
    if (tag !== "H" || raw.length === 0 || raw[0] === 0x2f || raw.toString("latin1").split("/").includes("..")) continue;
    if (mode !== "100644" && mode !== "100755" && mode !== "120000") continue;
    found.push({ raw, mode, oid, mtimeSec: BigInt(mtime[1]!), size: BigInt(size[1]!) });
  }
  return found;
}

/** Runs `read` with the environment of a git without the repository's configuration (git-isolated.ts), as git-read.ts `gitlinks`. */
function isolated<T>(gitDir: string, tree: string, privateDir: string, read: (env: Record<string, string>) => T): T {
  return withIsolatedGit(gitDir, gitCommonDir(gitDir), tree, gitFolderTopMax, privateDir, read);
}

/** Whether the folder holding `file` is where its path says (no link on the way: git does not follow one in a work tree). */
function reachedDirectly(file: Buffer): boolean {
  const parent = file.subarray(0, file.lastIndexOf(0x2f));
  try {
    return realpathSync.native(parent, { encoding: "buffer" }).equals(parent);
  } catch {
    return false;
  }
}

/**
 * What the blob of `file` holds (a link's target, a regular file's bytes) when it is still the one `st` described
 * (never followed, same inode and size); null when it changed meanwhile or cannot be read.
 */
function contentOf(file: Buffer, mode: string, st: BigIntStats): Buffer | null {
  if (mode === "120000") {
    try {
      return readlinkSync(file, { encoding: "buffer" });
    } catch {
      return null;
    }
  }
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOFOLLOW ?? 0));
  } catch {
    return null;
  }
  try {
    const now = fstatSync(fd, { bigint: true });
    if (!now.isFile() || now.ino !== st.ino || now.dev !== st.dev || now.size !== st.size) return null;
    const buf = Buffer.alloc(Number(st.size));
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, got);
      if (n === 0) break;
      got += n;
    }
    return got === buf.length ? buf : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * The ids (`hexLength` 40: SHA-1, 64: SHA-256) `content` has as a blob: as it is, and with each CRLF made LF (what
 * git's end-of-line conversion stores; an agent adds no code by adding carriage returns).
 */
function blobIds(content: Buffer, hexLength: number): string[] {
  const algorithm = hexLength === 64 ? "sha256" : "sha1";
  const id = (b: Buffer) => createHash(algorithm).update(`blob ${b.length}\0`).update(b).digest("hex");
  const ids = [id(content)];
  if (content.includes("\r\n")) ids.push(id(Buffer.from(content.toString("latin1").replaceAll("\r\n", "\n"), "latin1")));
  return ids;
}

/** `content` as git's `ident` attribute stores it: each `$Id: …$` (on one line) collapsed to `$Id$`. */
function identCollapsed(content: Buffer): Buffer {
  return Buffer.from(content.toString("latin1").replace(/\$Id:[^$\n]*\$/g, "$Id$"), "latin1");
}

/**
 * For each of `paths` (bytes, relative), how git cleans it as the index's `.gitattributes` say (`check-attr --cached`:
 * the work tree's are the agent's): through a program or a converter the check does not run (`filter`,
 * `working-tree-encoding`), or with `ident`. Keys are the paths as latin1 text. Null when git cannot say: every entry
 * is then named (a hiding is not left unnamed because attributes could not be read).
 */
function cleaning(gitDir: string, tree: string, paths: Buffer[], timeoutMs: number, privateDir: string): Map<string, { program: boolean; ident: boolean }> | null {
  let out: Buffer;
  try {
    out = isolated(gitDir, tree, privateDir, (env) => execFileSync("git", ["check-attr", "--cached", "-z", "--stdin", "filter", "working-tree-encoding", "ident"], {
      cwd: tree, env, input: Buffer.concat(paths.flatMap((p) => [p, Buffer.from([0])])),
      stdio: ["pipe", "pipe", "ignore"], timeout: timeoutMs, maxBuffer: indexDebugBytesMax,
    }));
  } catch {
    return null;
  }
  const found = new Map<string, { program: boolean; ident: boolean }>();
  const parts = out.toString("latin1").split("\0");
  // `<path>\0<attribute>\0<value>\0` for each path and attribute.
  for (let i = 0; i + 2 < parts.length; i += 3) {
    const [path, attribute, value] = [parts[i]!, parts[i + 1]!, parts[i + 2]!];
    const a = found.get(path) ?? { program: false, ident: false };
    const set = value !== "unspecified" && value !== "unset";
    if (attribute === "ident") a.ident ||= set;
    else a.program ||= set;
    found.set(path, a);
  }
  return found;
}
