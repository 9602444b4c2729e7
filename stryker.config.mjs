// Mutation testing of the kernel (DESIGN.md: "mutation testing of the kernel in which every mutant must be caught").
// `npm run test:mutation` (sim/mutate.ts) runs it and lists every mutant that survived; see README "Proof".
//
// - The tap runner runs each test file as `node -r <stryker hook> --import tsx --test-reporter=tap <file>`, records
//   which mutants each file executes, and runs a mutant only against the files that reach it, stopping at the first
//   file that fails. Files are listed fastest first.
// - The typescript checker type-checks every mutant first: a mutant that does not compile is a CompileError, never
//   counted as killed (and excluded from the score). It checks the kernel and what the kernel imports
//   (tsconfig.mutation.json, 32 files), not the whole project (567 files): on 2 cores the whole project made the
//   checker the bottleneck (about 3 mutants a minute). A mutant that breaks only the shell's types is run against the
//   tests instead, where it is caught or named as a survivor (then check it with `npm run typecheck` by hand).
//   Mutants are checked in groups (prioritizePerformanceOverAccuracy): an error TypeScript misses in a group makes a
//   mutant run its tests in the same way.
// - The test files are the kernel-level ones (the real kernel on a real SQLite file, through `decide`, through the
//   in-process hub over HTTP), plus the simulation and a sample of the enumeration at a size 2 cores can afford
//   (sim/proof.test.ts). Files that spawn hub processes or wait on timers are left out: their processes do not carry
//   the mutant, or they take tens of seconds per mutant.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  mutate: ["src/kernel/**/*.ts"],
  testRunner: "tap",
  tap: {
    testFiles: [
      "tests/rules-table.test.ts",
      "tests/run-state.test.ts",
      "tests/auth.test.ts",
      "tests/decide-table.test.ts",
      "tests/invariants.test.ts",
      "tests/github.test.ts",
      "tests/view.test.ts",
      "tests/cron.test.ts",
      "tests/credentials.test.ts",
      "tests/period.test.ts",
      "tests/kernel.test.ts",
      "tests/spending.test.ts",
      "tests/budget.test.ts",
      "tests/tell.test.ts",
      "tests/lanes.test.ts",
      "tests/delivery.test.ts",
      "tests/due.test.ts",
      "tests/worker-clean.test.ts",
      "tests/time.test.ts",
      "tests/tell-budget.test.ts",
      "tests/control.test.ts",
      "tests/link.test.ts",
      "tests/events.test.ts",
      "tests/webhook.test.ts",
      "tests/cards.test.ts",
      "tests/permissions.test.ts",
      "tests/runs.test.ts",
      "tests/rules.test.ts",
      "tests/text.test.ts",
      "tests/deadlines.test.ts",
      "tests/tool-calls.test.ts",
      "tests/tool-calls-clock.test.ts",
      "tests/approvals.test.ts",
      "tests/declarative-panels.test.ts",
      "tests/refusals.test.ts",
      "tests/artifacts.test.ts",
      "tests/rate.test.ts",
      "sim/proof.test.ts",
    ],
    nodeArgs: ["--import", "tsx", "--test-reporter=tap"],
    forceBail: true,
  },
  checkers: ["typescript"],
  tsconfigFile: "tsconfig.mutation.json",
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  coverageAnalysis: "perTest",
  concurrency: 2,
  timeoutMS: 20000,
  // "survivors" (sim/survivors-reporter.mjs) names each mutant no test caught as soon as it is tested.
  plugins: ["@stryker-mutator/*", "./sim/survivors-reporter.mjs", "./sim/assert-ignorer.mjs"],
  // "assert" (sim/assert-ignorer.mjs) leaves `assert(…);` statements unmutated: an invariant check that never fires
  // cannot be killed by a test, and the guard stays (STYLE.md); the simulation shows it holds.
  ignorers: ["assert"],
  reporters: ["clear-text", "progress", "json", "survivors"],
  clearTextReporter: { allowEmojis: false, logTests: false, reportMutants: true, reportScoreTable: true },
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  // Every mutant must be caught: any survivor (or mutant no test reaches) makes the run fail.
  thresholds: { high: 100, low: 100, break: 100 },
  tempDirName: ".stryker-tmp",
  // dist/ is copied into the sandbox: plugins import `agent-autoloop/sdk`, which the package's exports map to
  // dist/src/sdk (built by `npm ci`'s prepare); without it every test of a built-in adapter fails the dry run.
  ignorePatterns: ["reports", ".tmp"],
};
