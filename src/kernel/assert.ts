/**
 * Invariants the kernel's decisions rely on (STYLE.md: assert where they must hold, fail loudly). A broken one throws
 * `InvariantError` out of `decide`; the shell logs the input's kind, the invariant and the stack, answers 500 and
 * commits nothing of that input (src/host/store.ts rolls it back alone). The simulation (sim/) is what shows they
 * hold; mutation testing leaves `assert(…)` calls alone (sim/assert-ignorer.mjs).
 */

/** A kernel invariant did not hold: the projection holds something a decision cannot work with. */
export class InvariantError extends Error {
  /** The invariant's name, kebab-case, as given to `assert` (for example `retry-deadline-names-waiting-run`). */
  readonly invariant: string;

  constructor(invariant: string) {
    super(`invariant ${invariant}`);
    this.name = "InvariantError";
    this.invariant = invariant;
  }
}

/**
 * Checks what a decision relies on.
 * @param invariant the name the shell logs, kebab-case, saying what must hold.
 * @throws InvariantError when `condition` is falsy.
 */
export function assert(condition: unknown, invariant: string): asserts condition {
  if (!condition) throw new InvariantError(invariant);
}
