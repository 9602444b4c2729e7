/**
 * `npm run benchmark -- --json` (issue 32, pinned): the shape of its figures, never their times. The formatter is
 * checked for every figure and every way an entry can be wrong; one cheap run of the script (`--quick --only
 * sim-steps` with a short simulation) prints the array last on stdout.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { figure, figureNames, figureProblems, goals } from "../scripts/figures.js";
import { engine } from "./helpers.js";

test("the figures are the pinned names, in order, plus the capacity run's and the scrape's", () => {
  assert.deepEqual(figureNames.slice(0, 11), [
    "idle-rss", "rss-1000-polls", "start", "claim-median", "events-1-client", "events-32-clients", "rebuild-1.1m-seconds", "rebuild-1.1m-rss",
    "tool-call-bridge", "sim-steps", "capacity-claim-p99",
  ]);
  assert.deepEqual(figureNames.slice(11), ["capacity-claim-p50", "capacity-event-p50", "capacity-event-p99", "capacity-result-p50", "capacity-result-p99",
    "capacity-runs-per-hour", "capacity-hub-cpu", "capacity-hub-rss", "metrics-scrape",
    "instructions-event", "instructions-claim", "instructions-result", "instructions-state"]);
});

test("an instruction count is met up to 1.1 times the count recorded in scripts/instruction-counts.json", () => {
  const recorded = JSON.parse(readFileSync(join(engine, "scripts", "instruction-counts.json"), "utf8")) as { counts: Record<string, number> };
  assert.deepEqual(Object.keys(recorded.counts), ["event", "claim", "result", "state"]);
  for (const [path, count] of Object.entries(recorded.counts)) {
    const name = `instructions-${path}` as (typeof figureNames)[number];
    assert.deepEqual(figure(name, count, null), { name, value: Number(count.toPrecision(4)), unit: "instructions", limit: null, limitUnit: null, ratio: null, goal: `≤ 1.1 × ${count} (recorded in scripts/instruction-counts.json)`, met: true });
    assert.equal(figure(name, 1.08 * count, null).met, true);
    assert.equal(figure(name, 1.12 * count, null).met, false);
  }
});

test("a figure: value, limit and their ratio as printed, the goal's text, and met computed from the numbers", () => {
  assert.deepEqual(figure("idle-rss", 73.4567, 51.2), { name: "idle-rss", value: 73.46, unit: "MB", limit: 51.2, limitUnit: "MB", ratio: 1.435, goal: "≤ 60 MB", met: false });
  assert.equal(figure("idle-rss", 60, 51.2).met, true);
  assert.deepEqual(figure("start", 150, 100), { name: "start", value: 150, unit: "ms", limit: 100, limitUnit: "ms", ratio: 1.5, goal: "≤ 1.6× bare Node in the same run", met: true });
  assert.equal(figure("start", 161, 100).met, false);
  assert.equal(figure("events-1-client", 5100, 8500).met, true, "exactly 60 %");
  assert.equal(figure("events-1-client", 5099, 8500).met, false);
  assert.equal(figure("events-32-clients", 9999, 9000).met, false);
  assert.equal(figure("tool-call-bridge", 120, 100).met, true);
  assert.equal(figure("claim-median", 0.31, 0.1).met, false);
  // The quick rebuild runs a tenth of the facts: its seconds count ten times against the goal.
  assert.equal(figure("rebuild-1.1m-seconds", 1.5, 0.25, { scale: 10 }).met, true);
  assert.equal(figure("rebuild-1.1m-seconds", 1.6, 0.25, { scale: 10 }).met, false);
  assert.deepEqual(figure("sim-steps", 5000, null), { name: "sim-steps", value: 5000, unit: "steps/s", limit: null, limitUnit: null, ratio: null, goal: "≥ 5k", met: true });
  assert.equal(figure("capacity-claim-p99", 12, null).met, true);
  assert.equal(figure("capacity-claim-p99", 12, null, { failed: true }).met, false);
  assert.throws(() => figure("idle-rss", NaN, 50), /idle-rss: value NaN/);
  assert.throws(() => figure("idle-rss", 70, 0), /idle-rss: value 70, limit 0/);
});

test("figureProblems accepts what figure makes for every name and names each way an entry is wrong", () => {
  const all = figureNames.map((n) => figure(n, 10, goals[n].limitUnit === null ? null : 4));
  assert.deepEqual(figureProblems(JSON.parse(JSON.stringify(all))), []);
  const e = figure("start", 150, 100);
  assert.deepEqual(figureProblems({}), ["not an array"]);
  assert.deepEqual(figureProblems([{ ...e, ratio: 1.4 }]), ["[0] start: limit, limitUnit or ratio"]);
  assert.deepEqual(figureProblems([{ ...e, met: false }]), ["[0] start: met is not the goal's test"]);
  assert.deepEqual(figureProblems([{ ...e, goal: "fast" }]), ["[0] start: value, unit, goal or met"]);
  assert.deepEqual(figureProblems([{ ...e, extra: 1 }]), ["[0] start: fields name,value,unit,limit,limitUnit,ratio,goal,met,extra"]);
  assert.deepEqual(figureProblems([{ ...e, name: "speed" }]), ["[0] speed: unknown name"]);
  assert.deepEqual(figureProblems([{ ...e, limit: null }]), ["[0] start: limit, limitUnit or ratio"]);
});

test("npm run benchmark -- --json --quick --only sim-steps prints one JSON array last on stdout; an unknown figure is refused", () => {
  const run = (...args: string[]) => spawnSync(process.execPath, ["--import", "tsx", join(engine, "scripts", "benchmark.ts"), "--json", "--quick", ...args], {
    cwd: engine, encoding: "utf8", env: { ...process.env, BENCH_SIM_STEPS: "300" }, timeout: 120_000,
  });
  const r = run("--only", "sim-steps");
  assert.equal(r.status, 0, r.stderr);
  const last = JSON.parse(r.stdout.trim().split("\n").pop()!);
  assert.deepEqual(figureProblems(last), []);
  assert.deepEqual(last.map((f: { name: string }) => f.name), ["sim-steps"]);
  const bad = run("--only", "sim-steps,speed");
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /--only: no figure speed \(figures: idle-rss, /);
});
