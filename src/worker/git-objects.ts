/**
 * What git takes an object's content from that a sandboxed agent writes (issue 26 hostile round 38, F38a-1, F38a-2):
 * objects, refs and a git folder's caches stay writable so that an agent can commit, but git reads an id's content
 * through `refs/replace/<id>` (every porcelain command honours it) and does not hash a loose object again when it
 * reads it. An agent swapped what the guarded `.husky/pre-commit` is in HEAD without changing HEAD, the index or the
 * work tree, and the owner's `git stash`, `git worktree add` or a local clone wrote the agent's hook. The check after
 * a run moves aside a replace ref the launch did not see, a loose object changed during the run whose content is not
 * its name, and a commit-graph or multi-pack-index written during the run (caches of object data git trusts; it
 * builds them again).
 */
import { createHash } from "node:crypto";
import { lstatSync, readFileSync, type Dirent } from "node:fs";
import { join } from "node:path";
import { inflateSync } from "node:zlib";
import { entriesUpTo } from "../common/file-checks.js";
import { readRegular, writeFileDurable } from "./files.js";

/** Replace refs read at most in one git folder (an owner keeps a handful, if any). */
const replaceRefsMax = 10_000;
/**
 * Loose objects changed during a run hashed at most in one git folder (`files`), loose objects listed at most
 * (`listed`), and the bytes of one read at most (`bytes`).
 */
export const looseObjectChecks = { files: 20_000, listed: 200_000, bytes: 64 * 1024 * 1024 };

/**
 * The replace refs of the git folder whose common folder is `common`, as `<ref> <id>` lines: the loose ones under
 * `refs/replace/` (any depth) and those in `packed-refs`, `replaceRefsMax` at most. Never throws.
 */
export function replaceRefs(common: string): string[] {
  const out: string[] = [];
  const queue = [join(common, "refs", "replace")];
  for (let i = 0; i < queue.length && out.length < replaceRefsMax; i++) {
    for (const e of entriesUpTo(queue[i]!, replaceRefsMax)) {
      const p = join(queue[i]!, e.name);
      if (e.isDirectory()) queue.push(p);
      else out.push(`${p.slice(common.length + 1)} ${idOf(p)}`);
    }
  }
  let packed = "";
  try {
    packed = readRegular(join(common, "packed-refs"));
  } catch {
    // none
  }
  for (const line of packed.split("\n")) {
    const m = /^([0-9a-f]{40,64}) (refs\/replace\/\S+)$/.exec(line);
    if (m) out.push(`${m[2]} ${m[1]}`);
  }
  return out.slice(0, replaceRefsMax);
}

/** A loose ref's id (its first line), or "?" when it cannot be read (a link, a FIFO: never followed). */
function idOf(path: string): string {
  try {
    return readRegular(path).split("\n")[0]!.trim();
  } catch {
    return "?";
  }
}

/**
 * What in git folder `gitDir`'s objects changed since `sinceMs` (ms since the epoch, by inode change time, which no
 * program sets back) that the owner's git would trust, not one listed past `looseObjectChecks.listed`: `forged`, loose objects whose content does not hash to their
 * name (sha1, or sha256 for 64-digit names); `caches`, a `commit-graph`, a `commit-graphs/` chain file or a
 * `multi-pack-index` written during the run. `cut`: more changed loose objects than `looseObjectChecks.files`, or one
 * larger than its `bytes` (named in `unchecked`), the rest not looked at. Never throws.
 */
export function objectsChanged(gitDir: string, sinceMs: number): { forged: string[]; caches: string[]; unchecked: string[]; cut: boolean } {
  const out = { forged: [] as string[], caches: [] as string[], unchecked: [] as string[], cut: false };
  const objects = join(gitDir, "objects");
  const changed = (p: string) => {
    try {
      return lstatSync(p).ctimeMs >= sinceMs;
    } catch {
      return false;
    }
  };
  let looked = 0;
  let listed = 0;
  // Every fan-out folder: an object rewritten in place changes the file's ctime, not its folder's.
  for (const fan of entriesUpTo(objects, 1_000)) {
    if (!fan.isDirectory() || !/^[0-9a-f]{2}$/.test(fan.name)) continue;
    const entries = entriesUpTo(join(objects, fan.name), looseObjectChecks.listed - listed) as Dirent[];
    listed += entries.length;
    if (listed > looseObjectChecks.listed) return { ...out, cut: true };
    for (const e of entries) {
      const p = join(objects, fan.name, e.name);
      if (!e.isFile() || !/^[0-9a-f]{38}([0-9a-f]{24})?$/.test(e.name) || !changed(p)) continue;
      if (++looked > looseObjectChecks.files) return { ...out, cut: true };
      const verdict = looseObjectHolds(p, fan.name + e.name);
      if (verdict === "forged") out.forged.push(p);
      else if (verdict === "unchecked") out.unchecked.push(p);
    }
  }
  const caches = [join(objects, "info", "commit-graph"), join(objects, "pack", "multi-pack-index"), ...entriesUpTo(join(objects, "info", "commit-graphs"), 1_000).map((e) => join(objects, "info", "commit-graphs", e.name))];
  out.caches.push(...caches.filter(changed));
  return out;
}

/** Whether the loose object file `path` holds the object named `id`: "ok", "forged", or "unchecked" (too large, unreadable). */
function looseObjectHolds(path: string, id: string): "ok" | "forged" | "unchecked" {
  try {
    if (lstatSync(path).size > looseObjectChecks.bytes) return "unchecked";
    const raw = inflateSync(readFileSync(path), { maxOutputLength: looseObjectChecks.bytes * 4 });
    return createHash(id.length === 64 ? "sha256" : "sha1").update(raw).digest("hex") === id ? "ok" : "forged";
  } catch (e) {
    // Not zlib data at all, or one inflating past the bound: not what git wrote under that name.
    return (e as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE" ? "unchecked" : "forged";
  }
}

/**
 * Takes the replace refs `refs` (names) out of the common folder `common`'s `packed-refs`, each with the peeled line
 * after it, the file written whole. @returns whether any was there. @throws the file system's error writing it.
 */
export function dropPackedReplaceRefs(common: string, refs: readonly string[]): boolean {
  const file = join(common, "packed-refs");
  let text: string;
  try {
    text = readRegular(file);
  } catch {
    return false;
  }
  const lines = text.split("\n");
  const kept: string[] = [];
  let dropped = false;
  for (let i = 0; i < lines.length; i++) {
    const ref = /^[0-9a-f]{40,64} (\S+)$/.exec(lines[i]!)?.[1];
    if (ref !== undefined && refs.includes(ref)) {
      dropped = true;
      if (lines[i + 1]?.startsWith("^")) i++;
      continue;
    }
    kept.push(lines[i]!);
  }
  if (dropped) writeFileDurable(file, kept.join("\n"), 0o644);
  return dropped;
}
