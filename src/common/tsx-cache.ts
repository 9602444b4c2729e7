/**
 * tsx's compile cache, where the hub's TypeScript plugins are written compiled (issue 26 round 11, F3). tsx names it
 * `<tmpdir>/tsx-<uid>` itself, in the shared temp folder, so another local user can make it first: the hub makes it
 * when missing (mode 0700) and then looks at what is there, without following a link.
 */
import { chmodSync, lstatSync, mkdirSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";

/** tsx's cache folder for this process (tsx's own rule: `os.tmpdir()` and the effective uid, else the user's name). */
export function tsxCacheDir(): string {
  return join(tmpdir(), `tsx-${process.geteuid?.() ?? userInfo().username}`);
}

/**
 * What is wrong with a cache folder: not a folder of its own (a link, a file; or it cannot be made), another user's
 * (`uid` says whose), or writable by others (`mode` says its permission bits, e.g. 0o777): they may have put entries
 * in it already.
 */
export type TsxCacheProblem = { why: "notFolder" } | { why: "owner"; uid: number } | { why: "mode"; mode: number };

/**
 * Makes `dir` (default `tsxCacheDir()`) when missing, mode 0700, then checks it with lstat: it must be a folder (no
 * link), of this process's effective uid (where there is one: not on Windows), writable by no one else. A folder of
 * its own that others may only read (tsx makes it 0755 under umask 022) is made 0700: what is compiled from then on
 * stays private. Never throws.
 * @returns null when it is the hub's own (then 0700), else what is wrong.
 */
export function makeTsxCache(dir = tsxCacheDir()): TsxCacheProblem | null {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch {
    // a file in its place, or a read-only tmp: the look below says so
  }
  let st;
  try {
    st = lstatSync(dir);
  } catch {
    return { why: "notFolder" };
  }
  if (!st.isDirectory()) return { why: "notFolder" };
  const uid = process.geteuid?.();
  if (uid !== undefined && st.uid !== uid) return { why: "owner", uid: st.uid };
  if (process.platform === "win32") return null;
  const mode = st.mode & 0o7777;
  if ((mode & 0o022) !== 0) return { why: "mode", mode };
  if (mode === 0o700) return null;
  try {
    chmodSync(dir, 0o700);
    return null;
  } catch {
    return { why: "mode", mode };
  }
}
