/** Cron times at their edges (protocol.md 来源: 定时): the latest time a late wake-up runs, and none before `since`. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { latestCronAt, nextCronAt } from "../src/kernel/cron.js";

const at = (iso: string) => Date.parse(iso);

test("latestCronAt: a cron time exactly at the wake-up counts", () => {
  assert.equal(latestCronAt("0 9 * * *", "UTC", at("2026-11-29T12:00:00Z"), at("2026-11-30T09:00:00.000Z")), at("2026-11-30T09:00:00.000Z"));
  assert.equal(latestCronAt("0 9 * * *", "UTC", at("2026-11-29T12:00:00Z"), at("2026-11-30T08:59:59.999Z")), at("2026-11-29T12:00:00Z"), "none yet: since");
});

test("latestCronAt: the latest cron time before `since` is not run again", () => {
  assert.equal(latestCronAt("0 9 * * *", "UTC", at("2026-11-30T10:00:00Z"), at("2026-11-30T11:00:00Z")), at("2026-11-30T10:00:00Z"));
  assert.equal(latestCronAt("0 * * * *", "UTC", at("2026-11-30T09:30:00Z"), at("2026-11-30T12:10:00Z")), at("2026-11-30T12:00:00Z"), "of several missed, the latest");
});

test("latestCronAt and nextCronAt skip a wall-clock time that does not exist (New York, 2026-03-08 02:30)", () => {
  const ny = "America/New_York";
  // croner would give 03:00 EDT (07:00Z) for the skipped 02:30: it does not match, so nothing runs
  assert.equal(latestCronAt("30 2 * * *", ny, at("2026-03-08T05:00:00Z"), at("2026-03-08T08:00:00Z")), at("2026-03-08T05:00:00Z"));
  assert.equal(nextCronAt("30 2 * * *", ny, at("2026-03-08T05:00:00Z")), at("2026-03-09T06:30:00Z"), "the next real 02:30 is the day after (EDT)");
});
