/**
 * Glob matching of rules.json (protocol.md 规则; issue 16): `when.types` and `emits.types` globs (`*` and `?`), and the
 * star-only patterns of a rule's `tools` and of `allow_session_keys`. Pure, linear in the lengths: no backtracking
 * regular expression, which a hostile pattern could make take exponential time.
 */

const starCode = 42; // "*"
const anyCode = 63; // "?"

/**
 * Glob match for `when.types` and `emits.types`: `*` is any run of characters, `?` one character (one UTF-16 code
 * unit), everything else literal; the whole type must match.
 * One pass over the type that only ever goes back to just after the last `*` passed, one character further each time:
 * fewer than (pattern length + 1) × (type length + 1) steps, and about the type's length for a few stars, where a
 * backtracking regular expression takes exponential time. `counter.steps`, when given, grows by the steps taken.
 */
export function globMatch(pattern: string, value: string, counter?: { steps: number }): boolean {
  let p = 0;
  let v = 0;
  let steps = 0;
  // After the last star passed: where the pattern goes on (0: no star yet) and where in the value its run ends so far.
  let afterStar = 0;
  let starEnd = 0;
  while (v < value.length) {
    steps++;
    const c = pattern.charCodeAt(p); // NaN past the end: equal to nothing
    if (c === starCode) {
      afterStar = ++p;
      starEnd = v;
    } else if (c === anyCode || c === value.charCodeAt(v)) {
      p++;
      v++;
    } else if (afterStar > 0) {
      p = afterStar;
      v = ++starEnd;
    } else {
      if (counter) counter.steps += steps;
      return false; // no star to go back to
    }
  }
  for (; pattern.charCodeAt(p) === starCode; p++) steps++;
  if (counter) counter.steps += steps;
  return p === pattern.length;
}

/** Whether any of the globs matches `value`. */
export function anyGlob(patterns: string[], value: string): boolean {
  for (const p of patterns) if (globMatch(p, value)) return true;
  return false;
}

/**
 * Whether `value` matches `pattern`, in which `*` stands for any run of characters (none included) and every other
 * character, `?` too, is literal: rules.json's tool patterns and `allow_session_keys` (issue 16). Each piece between
 * stars is looked for once, left to right (the leftmost place is always the right one when only `*` is special).
 */
export function starMatch(pattern: string, value: string): boolean {
  const pieces = pattern.split("*");
  const first = pieces[0]!;
  if (pieces.length === 1) return pattern === value;
  const last = pieces[pieces.length - 1]!;
  if (first.length + last.length > value.length || !value.startsWith(first) || !value.endsWith(last)) return false;
  const end = value.length - last.length;
  let at = first.length;
  for (const piece of pieces.slice(1, -1)) {
    const found = value.indexOf(piece, at);
    if (found < 0 || found + piece.length > end) return false;
    at = found + piece.length;
  }
  return true;
}
