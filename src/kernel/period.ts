/** Calendar periods in a time zone, for "today", "this week" and budgets (protocol.md 本人: spending). */

function parts(ms: number, tz: string) {
  const p = Object.fromEntries(
    new Intl.DateTimeFormat("en-US", { timeZone: tz, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit", weekday: "short" })
      .formatToParts(new Date(ms)).map((x) => [x.type, x.value]),
  );
  return { h: Number(p.hour), m: Number(p.minute), s: Number(p.second), weekday: ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].indexOf(p.weekday!) };
}

/** The start of the local day of `ms` in `tz` (epoch ms). */
export function startOfDay(ms: number, tz: string): number {
  const p = parts(ms, tz);
  let start = ms - (((p.h * 60 + p.m) * 60 + p.s) * 1000 + (ms % 1000));
  // A day that began in another UTC offset (daylight saving changed today): find the real local midnight.
  for (let i = 0; i < 3; i++) {
    const q = parts(start, tz);
    const off = ((q.h * 60 + q.m) * 60 + q.s) * 1000;
    if (off === 0) break;
    start -= q.h >= 12 ? off - 24 * 3600_000 : off;
  }
  return start;
}

/** The start of the local week (Monday 00:00) of `ms` in `tz` (epoch ms). */
export function startOfWeek(ms: number, tz: string): number {
  let day = startOfDay(ms, tz);
  // Stryker disable next-line ConditionalExpression,EqualityOperator,UpdateOperator: a bound never reached (7 steps back always meet a Monday); it only stops a loop gone wrong
  for (let i = 0; i < 7; i++) {
    if (parts(day, tz).weekday === 0) break;
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
