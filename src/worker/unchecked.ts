/**
 * Folders the check after a run could not look through (issue 26 round 30, F30a-1): a run that filled its folder past
 * the guard's walk (100,000 folders) had the check after it skip the look for the repositories and steering files it
 * made there — in silence, and a second run on the same folder could remove the flood afterwards, so that the next
 * launch took what was planted for the owner's. A check cut short now fails safe: the folder is marked in the worker's
 * home (`<home>/worker/unchecked/<16 hex>.json`, `{folder, run, at}`; no sandbox reaches the worker's home), the card
 * names it and its mark, and every later launch whose writable folders hold it or lie in it is refused, naming both,
 * until the owner has looked and removed the mark. Marks survive a worker restart. A run whose launch the worker
 * process did not see (round 32, F32a-1: a run going on while `serve` restarted ended with no check at all: what the
 * launch guarded lived in the old process) is named on its card (`unwatchedFolders`), not marked: an update or a
 * service restart during runs would otherwise hold every launch in their folders.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { within } from "../common/file-checks.js";
import { readRegular, writeFileDurable } from "./files.js";
import type { Planted } from "./planted.js";
import type { Job } from "../protocol/responses.js";
import { realPath } from "./sandbox.js";

/** The folder of the marks in the worker's home (`Home.worker`). */
export const uncheckedFolderName = "unchecked";

/** Marks read at most per launch: past it the rest are not looked at (each is one small file). */
export const uncheckedMarksMax = 10_000;

/** One mark: the folder not looked through, the run whose check was cut, when (UTC ISO). */
export interface UncheckedMark {
  folder: string;
  run: number;
  at: string;
}

/**
 * Marks the folder of each `walkCut` entry of `planted` (the check after run `run` could not look through it) in
 * `workerHome`, and sets the entry's `movedTo` to its mark file, which the card names. A mark that cannot be written
 * leaves `movedTo` null (the card still names the folder). Never throws.
 */
export function markUnchecked(workerHome: string, run: number, planted: Planted[]): void {
  const dir = join(workerHome, uncheckedFolderName);
  for (const p of planted) {
    if (p.kind !== "walkCut") continue;
    const file = join(dir, `${createHash("sha256").update(p.path).digest("hex").slice(0, 16)}.json`);
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const mark: UncheckedMark = { folder: p.path, run, at: new Date().toISOString() };
      writeFileDurable(file, JSON.stringify(mark));
      p.movedTo = file;
    } catch {
      // a full disk: the card names the folder all the same
    }
  }
}

/**
 * The first mark in `workerHome` whose folder holds one of `folders` or lies in one (absolute real paths), with its
 * file; null when none. A file that is not a mark (not JSON of its shape: no agent reaches the worker's home, so only
 * a broken disk makes one) marks nothing.
 */
export function uncheckedHolding(workerHome: string, folders: readonly string[]): { mark: UncheckedMark; file: string } | null {
  const dir = join(workerHome, uncheckedFolderName);
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => /^[0-9a-f]{16}\.json$/.test(n)).slice(0, uncheckedMarksMax);
  } catch {
    return null;
  }
  for (const name of names) {
    const file = join(dir, name);
    let mark: UncheckedMark;
    try {
      mark = JSON.parse(readRegular(file)) as UncheckedMark;
    } catch {
      continue;
    }
    if (typeof mark?.folder !== "string" || !isAbsolute(mark.folder)) continue;
    if (folders.some((f) => within(f, mark.folder) || within(mark.folder, f))) return { mark, file };
  }
  return null;
}

/**
 * The folders of a sandboxed run the check after it cannot look at (`unwatched` entries): its cwd and its `writable`
 * folders that exist (real paths), when the worker process did not see its launch — it was recovered after a restart,
 * and what its launch guarded went with the old process. None for a run without the sandbox (nothing is checked) or a
 * workflow (no agent is launched).
 * @param expand turns `~` into the user's home (attempt.ts `expandHome`).
 */
export function unwatchedFolders(job: Job, expand: (p: string) => string): Planted[] {
  if (job.agent.sandbox === false || job.rule.workflow !== undefined) return [];
  const folders = [job.rule.cwd ?? "~", ...(job.agent.writable ?? [])].map((p) => realPath(expand(p))).filter((p) => existsSync(p));
  return [...new Set(folders)].map((path) => ({ path, movedTo: null, kind: "unwatched" as const }));
}
