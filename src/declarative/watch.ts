/**
 * Watching the declarative plugin folders so that a change is picked up within 2 s (issue 18) without a reload
 * request: every `pluginWatchPollMs` the catalog's fingerprint (names, sizes, times of every plugin file; no file is
 * read) is taken, and a fingerprint that differs from what the last reload read, and held still since the previous
 * look, reloads — so a file caught half-written by an editor is not loaded, and the change shows within two looks.
 */
import { pluginWatchPollMs } from "./limits.js";
import type { DeclarativeCatalog } from "./catalog.js";

/** A running watcher; `close()` stops it (a reload under way finishes). */
export interface CatalogWatcher {
  close(): void;
}

/** Watches `catalog`'s roots. The first reload is not done here (the caller has done one). */
export function watchCatalog(catalog: DeclarativeCatalog, pollMs = pluginWatchPollMs): CatalogWatcher {
  let previous: string | null = null;
  let busy = false;
  let closed = false;
  const look = async () => {
    if (busy || closed) return;
    busy = true;
    try {
      const now = await catalog.fingerprint();
      if (!closed && now !== catalog.loadedFingerprint && now === previous) await catalog.reload();
      previous = now;
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void look(), pollMs);
  timer.unref();
  return {
    close() {
      closed = true;
      clearInterval(timer);
    },
  };
}
