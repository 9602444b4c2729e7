/**
 * `npm run test:mutation` (`node --import tsx sim/mutate.ts [stryker options]`): mutation testing of the kernel
 * (protocol.md 一致性和复现: every kernel mutant must be caught, named when it is not, and a mutant that does not
 * compile is not counted as caught). Runs StrykerJS with `stryker.config.mjs` (src/kernel/**, the tap runner over the
 * kernel-level tests, the TypeScript checker), then reads its JSON report for the counts and prints every mutant that
 * survived or that no test reached, as `file:line:column Mutator: replacement`, from the lines the "survivors"
 * reporter (sim/survivors-reporter.mjs) wrote while the run went on.
 *
 * Exit code: 0 when every valid mutant was killed or timed out; 1 when any survived or had no coverage, or when
 * Stryker itself failed. Options after `--` go to `stryker run` (for example `--mutate src/kernel/cron.ts` or
 * `--incremental` while working on one file).
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { missedStatuses, survivorsFile } from "./survivors-reporter.mjs";

const root = join(import.meta.dirname, "..");
const reportFile = join(root, "reports", "mutation", "mutation.json");
const survivorsPath = join(root, survivorsFile);

/** One mutant of Stryker's JSON report (mutation-testing-report-schema), the field used here. */
interface Mutant {
  status: "Killed" | "Survived" | "NoCoverage" | "CompileError" | "RuntimeError" | "Timeout" | "Ignored" | "Pending";
}

/** Counts per status, how many were caught (killed or timed out), not caught, and valid (either), from a Stryker JSON report. */
export function summarize(report: { files: Record<string, { mutants: Mutant[] }> }) {
  const counts: Record<string, number> = {};
  for (const { mutants } of Object.values(report.files)) {
    for (const m of mutants) counts[m.status] = (counts[m.status] ?? 0) + 1;
  }
  const caught = (counts.Killed ?? 0) + (counts.Timeout ?? 0);
  const missed = missedStatuses.reduce((n, status) => n + (counts[status] ?? 0), 0);
  return { counts, caught, missed, valid: caught + missed };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const t0 = performance.now();
  for (const file of [reportFile, survivorsPath]) if (existsSync(file)) rmSync(file);
  const run = spawnSync(process.execPath, [join(root, "node_modules", "@stryker-mutator", "core", "bin", "stryker.js"), "run", ...process.argv.slice(2)], {
    cwd: root,
    stdio: "inherit",
  });
  const minutes = (performance.now() - t0) / 60_000;
  const named = existsSync(survivorsPath) ? readFileSync(survivorsPath, "utf8").split("\n").filter(Boolean) : [];
  if (!existsSync(reportFile)) {
    console.error(`\nmutation testing did not finish (stryker exit code ${run.status}); no report at ${reportFile}`);
    if (named.length > 0) console.error(`not caught before it stopped (${survivorsFile}):\n${named.map((line) => `  ${line}`).join("\n")}`);
    process.exit(1);
  }
  const { counts, missed, caught, valid } = summarize(JSON.parse(readFileSync(reportFile, "utf8")));
  console.log(`\nkernel mutants: ${Object.entries(counts).map(([k, v]) => `${v} ${k}`).join(", ")}; ${minutes.toFixed(1)} min`);
  console.log(`caught ${caught} of ${valid} mutants that compile (${valid === 0 ? 100 : ((100 * caught) / valid).toFixed(2)}%); CompileError and RuntimeError are not counted as caught`);
  if (missed > 0) {
    console.log(`\n${missed} mutant(s) not caught (${survivorsFile}):`);
    for (const line of named) console.log(`  ${line}`);
    process.exit(1);
  }
  if (run.status !== 0) process.exit(run.status ?? 1);
}
