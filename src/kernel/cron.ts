/**
 * Cron times (protocol.md 来源: 定时) in the rule file's time zone, with croner. A wall-clock time that does not
 * exist (spring forward) is skipped; a wall-clock time that repeats (fall back) runs once, at its first instant.
 */
import { Cron } from "croner";

/** A croner schedule without a function, so it never fires by itself; one per call: the kernel keeps no state between calls. */
function cron(expr: string, tz: string): Cron {
  return new Cron(expr, { timezone: tz });
}

/** A formatter of local wall-clock times in `tz` (building one costs ~70 µs, using it ~6 µs: one per call of `nextCronAt`). */
function wallClockFormat(tz: string): Intl.DateTimeFormat {
  return new Intl.DateTimeFormat("en-CA", { timeZone: tz, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
}

/** The local wall-clock time of an instant with a formatter of `wallClockFormat`, to the minute ("2026-11-01 01:30"). */
function wallClockWith(format: Intl.DateTimeFormat, ms: number): string {
  const p = Object.fromEntries(format.formatToParts(new Date(ms)).map((x) => [x.type, x.value]));
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}`;
}

/** Whether the instant repeats a wall-clock time an earlier instant already had (the hour after fall back). */
function repeatsWallClock(format: Intl.DateTimeFormat, ms: number): boolean {
  const w = wallClockWith(format, ms);
  return [30, 60, 120].some((min) => wallClockWith(format, ms - min * 60_000) === w);
}

/**
 * The next cron time strictly after `afterMs` (epoch ms), or null when the expression has none.
 * Skips times croner shifts out of a daylight-saving gap and the second instance of a repeated wall-clock time.
 */
export function nextCronAt(expr: string, tz: string, afterMs: number): number | null {
  return cronTimes(expr, tz).next(afterMs);
}

/**
 * The questions one cron-time decision asks of one expression in one time zone (the next time, the latest one,
 * the skipped ones), sharing one schedule and one wall-clock formatter: building them is most of a question's cost
 * (~70 µs a formatter), and a decision is the only place they live — the kernel keeps nothing between calls.
 */
export interface CronTimes {
  /** `nextCronAt` of this expression and zone. */
  next(afterMs: number): number | null;
  /** `latestCronAt` of this expression and zone. */
  latest(sinceMs: number, atMs: number): number;
  /** `skippedCronTimes` of this expression and zone. */
  skipped(fromMs: number, toMs: number, max: number): { count: number; last: number | null };
}

/** The cron times of `expr` in the IANA zone `tz` (see `CronTimes`). @throws when croner refuses the expression or zone. */
export function cronTimes(expr: string, tz: string): CronTimes {
  const c = cron(expr, tz);
  let format: Intl.DateTimeFormat | undefined;
  // The formatter only when a question needs it (the latest time needs none).
  const formatter = () => (format ??= wallClockFormat(tz));
  const times: CronTimes = {
    next: (afterMs) => nextWith(c, formatter(), afterMs),
    latest: (sinceMs, atMs) => {
      const prev = c.previousRuns(1, new Date(atMs + 1))[0];
      // Stryker disable next-line EqualityOperator: a cron time exactly at sinceMs gives sinceMs either way
      return prev && prev.getTime() >= sinceMs && c.match(prev) ? prev.getTime() : sinceMs;
    },
    skipped: (fromMs, toMs, max) => {
      let count = 0;
      let last: number | null = null;
      for (let at: number | null = fromMs; at !== null && at < toMs && count < max; at = times.next(at)) {
        count += 1;
        last = at;
      }
      // Beyond `max` the last skipped time is the latest before `toMs`, found without walking to it.
      if (count === max) last = times.latest(fromMs, toMs - 1);
      return { count, last };
    },
  };
  return times;
}

/** `nextCronAt` with the schedule and formatter already built (counting many times builds them once). */
function nextWith(c: Cron, format: Intl.DateTimeFormat, afterMs: number): number | null {
  let from = new Date(afterMs);
  // Stryker disable next-line EqualityOperator,UpdateOperator: a bound never reached (a skipped time is followed by a valid one within a day); it only stops a loop gone wrong
  for (let i = 0; i < 1000; i++) {
    const d = c.nextRun(from);
    if (!d) return null;
    const ms = d.getTime();
    if (c.match(d) && !repeatsWallClock(format, ms)) return ms;
    from = d;
  }
  return null;
}

/** The latest cron time after `sinceMs` and at or before `atMs` (the one a late wake-up runs), else `sinceMs`. */
export function latestCronAt(expr: string, tz: string, sinceMs: number, atMs: number): number {
  return cronTimes(expr, tz).latest(sinceMs, atMs);
}

/**
 * The cron times a late wake-up skips (protocol.md 失败时会怎样: 定时错过了): those from `fromMs` (a cron time, the
 * one that came due) up to but not including `toMs`, the same times `nextCronAt` gives one by one.
 * @param max counting stops here: each time costs a schedule step (~60 µs), and an every-minute rule asleep for days
 *   would otherwise hold up the hub
 * @returns how many (at most `max`) and the last of them (exact also beyond `max`; null when there are none)
 */
export function skippedCronTimes(expr: string, tz: string, fromMs: number, toMs: number, max: number): { count: number; last: number | null } {
  return cronTimes(expr, tz).skipped(fromMs, toMs, max);
}
