/**
 * What a run's first sandboxed launch guarded, kept beside the run (`<attempt folder>/launch.json`, mode 0600, in the
 * hub's home, which every sandbox hides) so that the check after the run also runs when the worker process that
 * launched it is gone: a run recovered after a restart of the worker or the hub mid-run was checked against nothing
 * (issue 26 round 32, F32a-1: a repository with `core.fsmonitor`, a `HEAD` folder and a link in `.git` planted during
 * such a run stayed, with no card). Written before the launch's supervisor starts; read by the attempt that takes the
 * run over. A file that is missing, too large or not of this shape is no record (the run's folders are then named on
 * its card as not looked at: unchecked.ts `unwatchedFolders`).
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { ConfigPass } from "./git-config.js";
import type { RepositoryState } from "./git-state.js";
import type { StateSeen } from "./state-planted.js";
import type { Seen } from "./steering.js";
import { readRegular, writeFileDurable } from "./files.js";
import { plantedSteering, type AsideTo, type Planted } from "./planted.js";
import { gitStateChanged } from "./git-state.js";
import { unwatchedFolders } from "./unchecked.js";
import type { Job } from "../protocol/responses.js";
import { t, type Lang } from "../i18n/messages.js";

/** What the launches' sandboxes guarded in the folders the agent writes (steering.ts), looked at when the run ends. */
export interface Watched {
  folders: Set<string>;
  guarded: Set<string>;
  seen: Seen;
  /** When the first launch began (ms since the epoch): a file changed after it is the run's. */
  sinceMs: number;
  /** The guard's reading of configuration files, in the process that launched (a cache of the check after the run). */
  config?: ConfigPass;
  /** Where git's private folders of the checks are made (git-isolated.ts `gitPrivateDir`). */
  privateDir?: string;
  gitState?: RepositoryState[];
}

/** The record's file in an attempt's folder. */
export const launchRecordFile = "launch.json";
/** The largest record read back (bytes): the guard's own limits keep a real one far below. */
export const launchRecordBytesMax = 64 * 1024 * 1024;
const recordVersion = 1;

/**
 * Writes what the run's launches guarded to `dir`'s record, durably (a crash leaves the old one or the new one).
 * @returns null when kept; else the reason in `lang` (the file system's error, or a record over
 *   `launchRecordBytesMax`, which could not be read back): the launch is then not started — a run the check after it
 *   could not follow after a restart is not run. Never throws.
 */
export function saveLaunchRecord(dir: string, watched: Watched | null, state: StateSeen | null, lang: Lang): string | null {
  const w = watched && {
    folders: [...watched.folders], guarded: [...watched.guarded], seen: watched.seen, sinceMs: watched.sinceMs,
    privateDir: watched.privateDir ?? watched.config?.privateDir ?? null, gitState: watched.gitState ?? null,
  };
  try {
    const text = JSON.stringify({ v: recordVersion, watched: w, state });
    const bytes = Buffer.byteLength(text);
    if (bytes > launchRecordBytesMax) return t(lang, "run.launchRecordFailed", { error: t(lang, "run.launchRecordTooLarge", { bytes, max: launchRecordBytesMax }) });
    writeFileDurable(join(dir, launchRecordFile), text);
    return null;
  } catch (e) {
    return t(lang, "run.launchRecordFailed", { error: (e as Error).message });
  }
}

const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === "string");
const stringMap = (v: unknown): v is Record<string, string> => !!v && typeof v === "object" && !Array.isArray(v) && Object.values(v).every((s) => typeof s === "string");
const seenKeys: readonly (keyof Seen)[] = ["repositories", "gitFolders", "worktreeFolders", "projects", "entries", "enclosing", "hidden", "shadows", "globs", "replaceRefs", "heads"];
/** Keys a record written before them lacks (`globs`: the round-37 review; `replaceRefs`: round 38): read as empty. */
const seenKeysAdded: readonly (keyof Seen)[] = ["globs", "replaceRefs"];

function seenOf(v: unknown): Seen | null {
  if (!v || typeof v !== "object") return null;
  const o = { ...Object.fromEntries(seenKeysAdded.map((k) => [k, []])), ...(v as Record<string, unknown>) };
  return seenKeys.every((k) => strings(o[k])) ? (Object.fromEntries(seenKeys.map((k) => [k, o[k]])) as unknown as Seen) : null;
}

function repositoryOf(v: unknown): RepositoryState | null {
  if (!v || typeof v !== "object") return null;
  const o = v as Record<string, unknown>;
  if (typeof o.tree !== "string" || typeof o.gitDir !== "string" || !strings(o.paths) || typeof o.cut !== "boolean" || !stringMap(o.operations)) return null;
  if ((o.index !== null && !stringMap(o.index)) || (o.head !== null && !stringMap(o.head))) return null;
  return { tree: o.tree, gitDir: o.gitDir, paths: o.paths, index: o.index as RepositoryState["index"], head: o.head as RepositoryState["head"], operations: o.operations, cut: o.cut };
}

function stateOf(v: unknown): StateSeen | null {
  if (!v || typeof v !== "object") return null;
  const o = v as Record<string, unknown>;
  if (!Array.isArray(o.folders) || !strings(o.memory) || !strings(o.memoryFolders) || !strings(o.ids) || !stringMap(o.files)) return null;
  const folders = o.folders.map((f) => {
    const x = f as Record<string, unknown> | null;
    return x && typeof x.folder === "string" && strings(x.writes) && typeof x.bound === "boolean" ? { folder: x.folder, writes: x.writes, bound: x.bound } : null;
  });
  if (folders.some((f) => f === null)) return null;
  return { folders: folders as StateSeen["folders"], memory: o.memory, memoryFolders: o.memoryFolders, ids: o.ids, files: o.files };
}

/**
 * The record in `dir` (`saveLaunchRecord`), or null when there is none or it does not read as one. Each part is
 * checked for its shape: a part that does not read is null, and the whole record is then no record.
 */
export function loadLaunchRecord(dir: string): { watched: Watched | null; state: StateSeen | null } | null {
  const file = join(dir, launchRecordFile);
  let v: Record<string, unknown>;
  try {
    if (statSync(file).size > launchRecordBytesMax) return null;
    v = JSON.parse(readRegular(file, "en")) as Record<string, unknown>;
  } catch {
    return null; // none (a launch of a worker before records, or none sandboxed), unreadable, or not JSON
  }
  if (!v || v.v !== recordVersion) return null;
  const state = v.state === null ? null : stateOf(v.state);
  if (v.state !== null && state === null) return null;
  if (v.watched === null) return { watched: null, state };
  const w = v.watched as Record<string, unknown> | null;
  if (!w || !strings(w.folders) || !strings(w.guarded) || typeof w.sinceMs !== "number" || !Number.isFinite(w.sinceMs)) return null;
  const seen = seenOf(w.seen);
  const gitState = w.gitState === null ? undefined : Array.isArray(w.gitState) ? w.gitState.map(repositoryOf) : [null];
  if (!seen || gitState?.some((r) => r === null) || (w.privateDir !== null && typeof w.privateDir !== "string")) return null;
  return {
    watched: {
      folders: new Set(w.folders), guarded: new Set(w.guarded), seen, sinceMs: w.sinceMs,
      privateDir: (w.privateDir as string | null) ?? undefined, gitState: gitState as RepositoryState[] | undefined,
    },
    state,
  };
}

/** Whether launch folder `ldir` got as far as its supervisor: `spec.json` is written just before it starts (supervise.ts). */
function launchStarted(ldir: string): boolean {
  return existsSync(join(ldir, "spec.json"));
}

/**
 * The number of the latest launch an earlier worker process started in the attempt folder `dir` (its folder `<n>`
 * holds `spec.json`), or 0. A launch folder without it was left by a worker stopped before that launch's supervisor
 * started — during the guard's walk of the cwd, which can take seconds: nothing ran there, so the launch is made again,
 * not watched (that read "the agent process did not start" and failed the run).
 */
export function latestLaunch(dir: string): number {
  let n = 0;
  for (const name of readdirSync(dir)) if (/^\d+$/.test(name) && Number(name) > n && launchStarted(join(dir, name))) n = Number(name);
  return n;
}

/**
 * Whether an earlier worker process may have started a sandboxed launch in the attempt folder `dir` that left no
 * record this worker can read: a record file is there but does not read (`loadLaunchRecord` null), or a launch folder
 * (`<n>`, or one kept as `<n>.setup-failed`) holds a `spec.json` of a sandboxed launch. A launch stopped before its
 * supervisor started ran nothing, and an unsandboxed one is not checked (CI, 2026-12-07: a hub killed during the
 * launch named the run's cwd as "not looked at"). Never throws: what cannot be read counts as begun.
 */
export function sandboxedLaunchBegun(dir: string): boolean {
  try {
    if (existsSync(join(dir, launchRecordFile))) return true;
    return readdirSync(dir).some((n) => /^\d+(\.setup-failed)?$/.test(n) && launchStarted(join(dir, n))
      && (JSON.parse(readRegular(join(dir, n, "spec.json"), "en")) as { sandboxed?: unknown }).sandboxed !== false);
  } catch {
    return true;
  }
}

/**
 * What the check after a run finds in the folders its launches guarded (`watched`): what the agent planted for the
 * owner's git that no sandbox mount could refuse (planted.ts `plantedSteering`), and what git holds for the guarded
 * paths and its operations in progress (git-state.ts; round 27, F27a-2, F27a-4), moved aside to `to`. `unrecorded`:
 * the job of a run taken over after a restart with no record of its launches — its folders are named as not looked
 * at (round 32, F32a-1). Never throws: a failure the checks did not expect is said as a check stopped short in each
 * folder (the worker would otherwise try the run again as recovered, without what the launch guarded: round 29
 * review); not marked, since the folders include the CLI state every rule shares (round 30 review).
 */
export function plantedAfterRun(w: Watched | null, to: AsideTo, unrecorded: Job | null, expand: (p: string) => string): Planted[] {
  const planted: Planted[] = [];
  try {
    const privateDir = w?.config?.privateDir ?? w?.privateDir;
    if (w) planted.push(...plantedSteering([...w.folders], w.guarded, w.seen, to, { sinceMs: w.sinceMs, before: w.config, privateDir }));
    if (w?.gitState && privateDir) planted.push(...gitStateChanged(w.gitState, [...w.folders], to, privateDir));
  } catch {
    for (const f of w?.folders ?? []) planted.push({ path: f, movedTo: null, kind: "maskCut" });
  }
  if (unrecorded) planted.push(...unwatchedFolders(unrecorded, expand));
  return planted;
}
