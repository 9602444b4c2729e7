/**
 * The check after a sandboxed plugin wrote its writable binds (issue 26 round 57, F57b-1): what it planted in their
 * folders that steers the owner's git or tools and that no mount could refuse — a missing `.git/commondir` or
 * `config.worktree` it made, a nested repository, an editor's or CLI's project part — moved aside and logged, as
 * after an agent's run (worker/planted.ts `plantedSteering`). Reported: a plugin bound `~/proj` writable, pointed
 * `.git/commondir` at a common folder of its own whose `core.fsmonitor` and hooks the owner's next `git status` ran
 * outside any sandbox, reading `master.key`. Run when the plugin's process has ended and, for a long-lived plugin,
 * after each of its calls (between two calls it may write unchecked: SECURITY.md says so).
 */
import { join } from "node:path";
import { t, type Lang } from "../i18n/messages.js";
import { plantedFolderName, plantedNotice, plantedSteering, type Planted } from "../worker/planted.js";
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
  const notice = plantedNotice(found, lang);
  if (notice) log(`plugin.${plugin}`, t(lang, "tools.bindCheck.planted", { plugin, text: `${notice.text ?? ""}`.replace(/\n/g, " · ") }));
  return found;
}
