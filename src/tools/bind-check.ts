/**
 * The check after a sandboxed plugin wrote its writable binds (issue 26 round 57, F57b-1): what it planted in their
 * folders that steers the owner's git or tools and that no mount could refuse — a missing `.git/commondir` or
 * `config.worktree` it made, a nested repository, an editor's or CLI's project part — moved aside and logged, as
 * after an agent's run (worker/planted.ts `plantedSteering`). Reported: a plugin bound `~/proj` writable, pointed
 * `.git/commondir` at a common folder of its own whose `core.fsmonitor` and hooks the owner's next `git status` ran
 * outside any sandbox, reading `master.key`. Run when the plugin's process has ended and, for a long-lived plugin,
 * after each of its calls (between two calls it may write unchecked: SECURITY.md says so).
 */
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { t, type Lang } from "../i18n/messages.js";
import { processStart, sameProcessStart } from "../common/proc.js";
import { readRegular, writeFileDurable } from "../worker/files.js";
import { plantedFolderName, plantedNotice, plantedSteering, type Planted } from "../worker/planted.js";
import { markUnchecked, uncheckedHolding } from "../worker/unchecked.js";
import type { Seen } from "../worker/steering.js";

/** What a sandboxed launch with writable folder binds guarded (steering.ts `bindGuards`), for the check after it. */
export interface BindWatch {
  /** The writable binds' folders (real host paths). */
  folders: string[];
  /** The real paths the launch bound over themselves or read-only. */
  guarded: string[];
  seen: Seen;
  /** When the launch was planned (ms since the epoch). */
  sinceMs: number;
  /** The file that keeps this watch until its check ran (`recordWatch`), so a host killed before it is followed up. */
  record?: string;
}

/** The folder of a home that keeps the watches of running sandboxed plugins (`<home>/worker/plugin-binds`). */
const recordsOf = (home: string) => join(home, "worker", "plugin-binds");

/**
 * Keeps `w` of `plugin`'s launch `tag` in the home (`<home>/worker/plugin-binds/<tag>.json`, with this host's pid and
 * start) until its check ran (`forgetWatch`): a hub killed with its plugin (SIGKILL, a crash, power loss) ran no
 * check, and the next launch's guard would take a plant made after the last call for the owner's (round 58, F58b-1). @returns `w` with the
 * record's path, or `w` as it is when it cannot be written (the check at the end still runs).
 */
export function recordWatch(home: string | null, plugin: string, tag: string, w: BindWatch): BindWatch {
  if (!home) return w;
  try {
    mkdirSync(recordsOf(home), { recursive: true, mode: 0o700 });
    const record = join(recordsOf(home), `${tag.replace(/[^A-Za-z0-9_.-]/g, "_")}.json`);
    writeFileDurable(record, JSON.stringify({ pid: process.pid, start: processStart(process.pid), plugin, watch: w }));
    return { ...w, record };
  } catch {
    return w;
  }
}

/** Removes `w`'s record once its final check ran. */
export function forgetWatch(w: BindWatch): void {
  if (w.record) rmSync(w.record, { force: true });
}

/**
 * Runs the check of every watch kept in `home` whose host process is gone (killed before its plugins' checks), then
 * forgets it; a record that cannot be read is removed. Called as a tool host starts, after the dead hosts' plugin
 * processes were ended (orphans.ts). Never throws.
 */
export function checkLeftWatches(home: string | null, lang: Lang, log: (subsystem: string, line: string) => void): void {
  if (!home) return;
  let names: string[];
  try {
    names = readdirSync(recordsOf(home)).filter((n) => n.endsWith(".json"));
  } catch {
    return;
  }
  for (const name of names) {
    const path = join(recordsOf(home), name);
    try {
      const r = JSON.parse(readRegular(path)) as { pid: number; start: string; plugin: string; watch: BindWatch };
      if (sameProcessStart(r.pid, r.start)) continue; // its host is alive: its own checks follow it
      plantedInBinds({ ...r.watch, record: path }, r.plugin, home, lang, log);
    } catch {
      // unreadable: nothing to follow up
    }
    rmSync(path, { force: true });
  }
}

/**
 * Looks through `w`'s folders, moves aside what `plugin` planted there (into `<home>/worker/planted`, which no
 * sandbox shows, when `home` is known; else beside each entry) and logs each as a line of `plugin.<plugin>`.
 * Never throws: a check that failed is logged. @returns what it found.
 */
export function plantedInBinds(w: BindWatch, plugin: string, home: string | null, lang: Lang, log: (subsystem: string, line: string) => void): Planted[] {
  let found: Planted[];
  try {
    found = plantedSteering(w.folders, new Set(w.guarded), w.seen, { run: 0, quarantine: home ? join(home, "worker", plantedFolderName) : null }, { sinceMs: w.sinceMs });
  } catch (e) {
    log(`plugin.${plugin}`, t(lang, "tools.bindCheck.failed", { plugin, folders: w.folders.join(", "), error: (e as Error).message }));
    return [];
  }
  // A folder the check could not look through is marked, as after an agent's run: every later launch in it — a
  // plugin's or an agent's — is refused until the owner has looked (round 59, F59-1: 100,000 folders and a nested
  // repository; the owner removed the flood, and the next launch took the plant for theirs).
  if (home) markUnchecked(join(home, "worker"), 0, found);
  const notice = plantedNotice(found, lang);
  if (notice) log(`plugin.${plugin}`, t(lang, "tools.bindCheck.planted", { plugin, text: `${notice.text ?? ""}`.replace(/\n/g, " · ") }));
  return found;
}

/**
 * The refusal text of a launch whose writable binds `folders` hold or lie in a folder marked unchecked (a check after a
 * plugin's or an agent's run could not look through it: unchecked.ts), or null.
 */
export function uncheckedBind(home: string | null, plugin: string, folders: readonly string[], lang: Lang): string | null {
  const held = home ? uncheckedHolding(join(home, "worker"), folders) : null;
  return held ? t(lang, "tools.sandbox.bindUnchecked", { plugin, folder: held.mark.folder, mark: held.file }) : null;
}
