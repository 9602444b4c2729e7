/**
 * The one watcher of plugin folders, for every kind (issue 27, point 1; issues 16 and 18: a change shows within 2 s
 * without a reload request). `fs.watch` on each root and each plugin folder answers quickly; a poll every
 * `watchPollMs` catches what file events miss (network file systems, editors that replace files, roots made later).
 * Either only looks: the fingerprint (names, sizes, times and inodes of every plugin file; no file is read) is taken,
 * and a fingerprint that differs from what the last reload read is reloaded only once two looks `watchSettleMs` apart
 * saw it the same — a file an editor is still writing is never read half-written.
 */
import { watch, type FSWatcher } from "node:fs";
import { watchDebounceMs, watchPollMs, watchSettleMs } from "./limits.js";

/** What the watcher watches: a plugin registry (registry.ts), or anything that answers the same. */
export interface Watched {
  watchedDirs(): string[];
  fingerprint(): string;
  readonly loadedFingerprint: string | null;
  reload(): Promise<unknown>;
}

/** A running watcher; `close()` stops its file watches and timers (a reload under way finishes). */
export interface PluginWatcher {
  close(): void;
}

/**
 * Watches `target`'s roots and folders. The first reload is not done here (the caller has done one).
 * @param pollMs the polling interval in ms (default `watchPollMs`).
 */
export function watchPlugins(target: Watched, pollMs = watchPollMs): PluginWatcher {
  const watchers = new Map<string, FSWatcher>();
  let seen: { print: string; at: number } | null = null;
  let soon: NodeJS.Timeout | null = null;
  let busy = false;
  let closed = false;

  const later = (ms: number) => {
    if (soon || closed) return;
    soon = setTimeout(() => {
      soon = null;
      void look();
    }, ms);
    soon.unref();
  };
  const look = async () => {
    if (busy || closed) return;
    busy = true;
    try {
      const print = target.fingerprint();
      if (print === target.loadedFingerprint) seen = null;
      else if (seen?.print === print && Date.now() - seen.at >= watchSettleMs) {
        seen = null;
        await target.reload();
        rewatch();
      } else {
        if (seen?.print !== print) seen = { print, at: Date.now() };
        later(watchSettleMs);
      }
    } finally {
      busy = false;
    }
  };
  /** Watches every root and every plugin folder found; drops watches of folders that are gone. */
  const rewatch = () => {
    if (closed) return;
    const wanted = new Set(target.watchedDirs());
    for (const [dir, w] of watchers) {
      if (wanted.has(dir)) continue;
      w.close();
      watchers.delete(dir);
    }
    for (const dir of wanted) {
      if (watchers.has(dir)) continue;
      try {
        const w = watch(dir, { persistent: false }, () => later(watchDebounceMs));
        // A watched folder that is removed errors; the poll notices the change, and the next rewatch drops it.
        w.on("error", () => {
          w.close();
          watchers.delete(dir);
        });
        watchers.set(dir, w);
      } catch {
        // A root that does not exist yet: the poll finds it when it appears.
      }
    }
  };

  rewatch();
  const poll = setInterval(() => void look(), pollMs);
  poll.unref();
  return {
    close() {
      closed = true;
      clearInterval(poll);
      if (soon) clearTimeout(soon);
      for (const w of watchers.values()) w.close();
      watchers.clear();
    },
  };
}
