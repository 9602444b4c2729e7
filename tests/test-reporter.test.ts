/**
 * The reporter of `npm test` (scripts/test-reporter.mjs) on three small files (tests/fixtures/reporter/): one line per
 * file with its counts, each failure with its whole error, a failing file's output, a summary, and the runner's
 * closing lines last.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { engine } from "./helpers.js";

const fixtures = join(engine, "tests", "fixtures", "reporter");
/** A file that throws at load, one with a failing test, one whose tests a helper module writes, one that passes. */
const files = ["passing.test.mjs", "failing.test.mjs", "crashing.test.mjs", "helped.test.mjs"];

/** `node --test` with the reporter over `files` (one at a time; the runner takes them in name order), from the fixtures' folder. */
function runTests(files: string[], concurrency = 1, progressMs = 60_000): Promise<{ code: number; out: string }> {
  // A runner inside a test would otherwise see this test's own runner context and report to it instead.
  const { NODE_TEST_CONTEXT: _, ...parent } = process.env;
  const env = { ...parent, AGENT_AUTOLOOP_TEST_PROGRESS_MS: String(progressMs) };
  return new Promise((resolve) => {
    execFile(process.execPath, ["--test", `--test-concurrency=${concurrency}`, `--test-reporter=${join(engine, "scripts", "test-reporter.mjs")}`, ...files], { cwd: fixtures, env, encoding: "utf8" },
      (err, stdout) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: stdout }));
  });
}

test("one line per file with its counts, failures with their whole error and the file's output, a summary, the runner's closing lines last", async () => {
  const { code, out } = await runTests(files);
  assert.equal(code, 1);
  const lines = out.replace(/\(\d+\.\d s\)/g, "(N s)").split("\n");
  const fileLines = lines.filter((l) => /^(ok  |FAIL) \[/.test(l));
  assert.deepEqual(fileLines, [
    "FAIL [1/4] crashing.test.mjs: 0 passed, 1 failed (N s)",
    "FAIL [2/4] failing.test.mjs: 1 passed, 1 failed (N s)",
    "ok   [3/4] helped.test.mjs: 2 passed (N s)",
    "ok   [4/4] passing.test.mjs: 4 passed, 1 skipped, 1 todo (N s)",
  ]);
  // The failure comes before its file's line, whole: the assertion's message with its diff, and where it was thrown.
  const failure = out.slice(out.indexOf("✖ failing.test.mjs › wrong sum\n"), out.indexOf("FAIL [2/4]"));
  assert.match(failure, /AssertionError \[ERR_ASSERTION\]: Expected values to be strictly deep-equal:/);
  assert.match(failure, /\+ {3}sum: 2\n[\s\S]*- {3}sum: 3/);
  assert.match(failure, /at TestContext\.<anonymous> \(file:\/\/\S+failing\.test\.mjs:7:10\)/);
  // A failing file's output follows its line; a passing file's does not show.
  assert.match(out, /FAIL \[2\/4\] failing\.test\.mjs: .*\n {4}output of failing\.test\.mjs:\n {4}computing the sum\n/);
  assert.match(out, /FAIL \[1\/4\] crashing\.test\.mjs: .*\n {4}output of crashing\.test\.mjs:\n[\s\S]*Error: broken at load/);
  assert.equal(out.includes("quiet unless the file fails"), false);
  // The summary, then the node test runner's own closing lines, last.
  const end = lines.slice(lines.indexOf("4 test files: 2 passed, 2 failed"));
  assert.deepEqual(end.map((l) => l.replace(/^# duration_ms [\d.]+$/, "# duration_ms N")), [
    "4 test files: 2 passed, 2 failed",
    "  failed: crashing.test.mjs (1)",
    "  failed: failing.test.mjs (1)",
    "# tests 11",
    "# suites 0",
    "# pass 7",
    "# fail 2",
    "# cancelled 0",
    "# skipped 1",
    "# todo 1",
    "# duration_ms N",
    "",
  ]);
});

test("with files run two at a time, as npm test runs them, each file still gets one line with its own counts and time", async () => {
  const { code, out } = await runTests(files, 2);
  assert.equal(code, 1);
  const fileLines = out.replace(/\(\d+\.\d s\)/g, "(N s)").replace(/\[\d\/4\] /g, "").split("\n").filter((l) => /^(ok  |FAIL) /.test(l));
  assert.deepEqual(fileLines.sort(), [
    "FAIL crashing.test.mjs: 0 passed, 1 failed (N s)",
    "FAIL failing.test.mjs: 1 passed, 1 failed (N s)",
    "ok   helped.test.mjs: 2 passed (N s)",
    "ok   passing.test.mjs: 4 passed, 1 skipped, 1 todo (N s)",
  ]);
  assert.match(out, /\n# tests 11\n# suites 0\n# pass 7\n# fail 2\n# cancelled 0\n# skipped 1\n# todo 1\n# duration_ms [\d.]+\n$/);
});

test("a long file says it is still running, with its time; each skipped test is listed with its reason (issue 29)", async () => {
  const { code, out } = await runTests(["slow.test.mjs", "passing.test.mjs"], 1, 300);
  assert.equal(code, 0);
  assert.match(out, /\n {2}… still running: slow\.test\.mjs \(1 s\)\n/);
  assert.match(out, /\nok {3}\[\d\/2\] passing\.test\.mjs: 4 passed, 1 skipped, 1 todo \(\d+\.\d s\)\n {4}skipped: skipped — not here\n/);
  assert.match(out, /\nok {3}\[\d\/2\] slow\.test\.mjs: 1 passed, 1 skipped \(\d+\.\d s\)\n {4}skipped: skipped without a reason — no reason given\n/);
  const ticks = out.split("\n").filter((l) => l.startsWith("  … still running: "));
  assert.ok(ticks.every((l) => /^ {2}… still running: (slow|passing)\.test\.mjs \(\d s\)$/.test(l)), ticks.join("\n"));
});
