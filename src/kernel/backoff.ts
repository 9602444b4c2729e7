/**
 * The one backoff formula (issue 27 #5): waits that double from a first wait up to a most, by how many tries failed
 * in a row. The kernel's retries (a run's attempts, a card's delivery, a deadline's handler) and the worker's (a hub
 * it cannot reach, a part that keeps failing) all wait by it. Pure: no clock, no randomness.
 */

/**
 * The wait (ms) after `failures` failed tries in a row: `firstMs` after the first, doubling with each further one, at
 * most `maxMs`. `failures` below 1 counts as 1; a count so large that the doubling overflows gives `maxMs`.
 */
export function backoffMs(failures: number, firstMs: number, maxMs: number): number {
  return Math.min(firstMs * 2 ** Math.max(0, failures - 1), maxMs);
}
