/**
 * Giving the event loop back during long work (a reload, the watcher's look): `breathe()` after each unit of work
 * yields once `reloadSliceMaxMs` has passed since the last yield, so other requests are never held up for longer than
 * that plus one unit.
 */
import { reloadSliceMaxMs } from "./limits.js";

/** A slicer: call `breathe()` between units of work. */
export class Slicer {
  private since = performance.now();

  /** Yields to the event loop when the current slice is used up; else resolves at once. */
  async breathe(): Promise<void> {
    if (performance.now() - this.since < reloadSliceMaxMs) return;
    await new Promise((r) => setImmediate(r));
    this.since = performance.now();
  }
}
