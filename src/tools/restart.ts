/**
 * Restart bookkeeping of long-lived plugins (service §6, mcp `[mcp]`): crashes are counted in a sliding window; more
 * than the allowed number within it is a crash loop, after which the plugin is not restarted (until its manifest
 * changes or the host restarts). Waits between restarts grow along a list whose last value repeats.
 */

/** Counts crashes within a sliding window of `windowMs`. */
export class CrashWindow {
  private times: number[] = [];

  constructor(private readonly max: number, private readonly windowMs: number) {}

  /** Records a crash at `now` (ms); @returns true when this makes more than `max` within the window: a crash loop. */
  record(now: number): boolean {
    this.times = [...this.times.filter((x) => now - x < this.windowMs), now];
    return this.times.length > this.max;
  }

  /** Crashes within the window as of the last record. */
  get count(): number {
    return this.times.length;
  }
}

/** The wait before restart number `attempt` (1-based) along `steps` (ms); the last step repeats. */
export function backoffMs(attempt: number, steps: readonly number[]): number {
  return steps[Math.min(Math.max(attempt, 1), steps.length) - 1] ?? 0;
}
