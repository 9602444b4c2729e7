/**
 * Watching the plugin roots so that a changed manifest is picked up within 2 s while the host runs (issue 16; the
 * spec's 60 s is the public implementation's poll). `fs.watch` on each root and each plugin folder answers quickly; a
 * poll every `watchPollMs` catches what file events miss (network file systems, editors that replace files, roots
 * created later). Each rescan reads every manifest, which is cheap (a few KiB each).
 */
import { watch, type FSWatcher } from "node:fs";
import { watchDebounceMs, watchPollMs } from "./limits.js";
import type { ToolRegistry } from "./registry.js";

/** A running watcher; `close()` stops its file watches and timers. */
export interface RegistryWatcher {
  close(): void;
}

/**
 * Watches `registry`'s roots and folders, rescanning on change. The first rescan is not done here (the caller has one).
 * @param pollMs the polling interval in ms (default `watchPollMs`).
 */
export function watchRegistry(registry: ToolRegistry, pollMs = watchPollMs): RegistryWatcher {
  const watchers = new Map<string, FSWatcher>();
  let debounce: NodeJS.Timeout | null = null;
  let closed = false;

  const rescan = () => {
    if (closed) return;
    registry.rescan();
    rewatch();
  };
  const soon = () => {
    if (debounce || closed) return;
    debounce = setTimeout(() => {
      debounce = null;
      rescan();
    }, watchDebounceMs);
    debounce.unref();
  };
  /** Watches every root and every plugin folder found; drops watches of folders that are gone. */
  const rewatch = () => {
    const wanted = new Set([...registry.roots.map((r) => r.dir), ...registry.list().map((p) => p.dir)]);
    for (const [dir, w] of watchers) {
      if (!wanted.has(dir)) {
        w.close();
        watchers.delete(dir);
      }
    }
    for (const dir of wanted) {
      if (watchers.has(dir)) continue;
      try {
        const w = watch(dir, { persistent: false }, soon);
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
  const poll = setInterval(rescan, pollMs);
  poll.unref();
  return {
    close() {
      closed = true;
      clearInterval(poll);
      if (debounce) clearTimeout(debounce);
      for (const w of watchers.values()) w.close();
      watchers.clear();
    },
  };
}
