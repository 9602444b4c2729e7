/** The worker keeps a run's folder for 14 days after the run was reported, then removes it when it starts. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hubFixture } from "./helpers.js";
import { Worker } from "../src/worker/worker.js";

test("a reported run's folder is kept for 14 days and removed after", async () => {
  const f = await hubFixture();
  try {
    const runs = join(f.home.worker, "runs");
    const day = 24 * 60 * 60_000;
    const folder = (name: string, ageMs: number | null) => {
      mkdirSync(join(runs, name), { recursive: true });
      if (ageMs === null) return;
      const marker = join(runs, name, "submitted");
      writeFileSync(marker, "");
      const at = (Date.now() - ageMs) / 1000;
      utimesSync(marker, at, at);
    };
    folder("old", 14 * day + 60_000);
    folder("recent", 14 * day - 60_000);
    folder("unreported", null);
    const w = new Worker({ url: f.url, key: f.keys.worker, name: "w1", capacity: 1, home: f.home, lang: "en" });
    const running = w.run(); // the clean-up runs before the first request
    w.stop();
    await running;
    assert.deepEqual(["old", "recent", "unreported"].map((n) => existsSync(join(runs, n))), [false, true, true]);
  } finally {
    await f.close();
  }
});
