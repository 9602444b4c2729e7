/**
 * Calendar periods in a time zone ("today", "this week", budgets): known instants across daylight saving, a
 * half-hour zone, a zone whose midnight is skipped, and every day of a week.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { periodOf, startOfDay, startOfWeek } from "../src/kernel/period.js";

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

test("the local day starts at local midnight, also on the days daylight saving starts and ends", () => {
  assert.equal(iso(startOfDay(at("2026-11-04T08:07:09.123Z"), "UTC")), "2026-11-04T00:00:00.000Z");
  assert.equal(iso(startOfDay(at("2026-03-29T12:00:00Z"), "Europe/Berlin")), "2026-03-28T23:00:00.000Z");
  assert.equal(iso(startOfDay(at("2026-10-25T12:00:00Z"), "Europe/Berlin")), "2026-10-24T22:00:00.000Z");
  assert.equal(iso(startOfDay(at("2026-10-25T23:30:00Z"), "Europe/Berlin")), "2026-10-25T23:00:00.000Z");
  assert.equal(iso(startOfDay(at("2026-11-02T18:29:59.999Z"), "Asia/Kolkata")), "2026-11-01T18:30:00.000Z");
  assert.equal(iso(startOfDay(at("2026-11-02T18:30:00.000Z"), "Asia/Kolkata")), "2026-11-02T18:30:00.000Z");
  // Chile moves its clocks from 00:00 to 01:00: that day starts at 01:00 local.
  assert.equal(iso(startOfDay(at("2026-09-06T12:00:00Z"), "America/Santiago")), "2026-09-06T04:00:00.000Z");
  assert.equal(iso(startOfDay(at("2026-09-06T12:34:56.789Z"), "America/Santiago")), "2026-09-06T04:00:00.000Z");
});

test("a day period is 23, 24 or 25 hours long; a week runs Monday to Monday", () => {
  const span = (p: { start: number; end: number }) => [iso(p.start), iso(p.end)];
  assert.deepEqual(span(periodOf(at("2026-03-29T12:00:00Z"), "Europe/Berlin", "day")), ["2026-03-28T23:00:00.000Z", "2026-03-29T22:00:00.000Z"]);
  assert.deepEqual(span(periodOf(at("2026-10-25T12:00:00Z"), "Europe/Berlin", "day")), ["2026-10-24T22:00:00.000Z", "2026-10-25T23:00:00.000Z"]);
  assert.deepEqual(span(periodOf(at("2026-11-04T08:00:00Z"), "UTC", "day")), ["2026-11-04T00:00:00.000Z", "2026-11-05T00:00:00.000Z"]);
  assert.deepEqual(span(periodOf(at("2026-10-25T12:00:00Z"), "Europe/Berlin", "week")), ["2026-10-18T22:00:00.000Z", "2026-10-25T23:00:00.000Z"]);
  assert.deepEqual(span(periodOf(at("2026-03-29T12:00:00Z"), "Europe/Berlin", "week")), ["2026-03-22T23:00:00.000Z", "2026-03-29T22:00:00.000Z"]);
  for (let d = 0; d < 7; d++) {
    const t = at("2026-11-02T10:00:00Z") + d * 24 * 3600_000;
    assert.equal(iso(startOfWeek(t, "UTC")), "2026-11-02T00:00:00.000Z", `day ${d} of the week`);
  }
  assert.equal(iso(startOfWeek(at("2026-11-09T00:00:00Z"), "UTC")), "2026-11-09T00:00:00.000Z");
  assert.equal(iso(startOfWeek(at("2026-11-08T23:59:59.999Z"), "UTC")), "2026-11-02T00:00:00.000Z");
});
