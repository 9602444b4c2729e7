/**
 * `npm run test:mutation` (`node --import tsx sim/mutate.ts [stryker options]`): mutation testing of the kernel
 * (protocol.md 一致性和复现: every kernel mutant must be caught, named when it is not, and a mutant that does not
 * compile is not counted as caught). Runs StrykerJS with `stryker.config.mjs` (src/kernel/**, the tap runner over the
 * kernel-level tests, the TypeScript checker), then reads its JSON report and prints every mutant that survived or
 * that no test reached, as `file:line:column Mutator: replacement`.
 *
 * Exit code: 0 when every valid mutant was killed or timed out; 1 when any survived or had no coverage, or when
 * Stryker itself failed. Options after `--` go to `stryker run` (for example `--mutate src/kernel/cron.ts` or
 * `--incremental` while working on one file).
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const reportFile = join(root, "reports", "mutation", "mutation.json");

/** One mutant of Stryker's JSON report (mutation-testing-report-schema), the fields used here. */
interface Mutant {
  mutatorName: string;
  replacement?: string;
  status: "Killed" | "Survived" | "NoCoverage" | "CompileError" | "RuntimeError" | "Timeout" | "Ignored" | "Pending";
  location: { start: { line: number; column: number } };
}

/** Counts per status and the mutants that were not caught, from a Stryker JSON report. */
export function summarize(report: { files: Record<string, { mutants: Mutant[] }> }) {
  const counts: Record<string, number> = {};
  const missed: string[] = [];
  for (const [file, { mutants }] of Object.entries(report.files)) {
    for (const m of mutants) {
      counts[m.status] = (counts[m.status] ?? 0) + 1;
      if (m.status === "Survived" || m.status === "NoCoverage") {
        const replacement = (m.replacement ?? "").replace(/\s+/g, " ").slice(0, 100);
        missed.push(`${m.status === "NoCoverage" ? "no coverage" : "survived"}  ${file}:${m.location.start.line}:${m.location.start.column} ${m.mutatorName}: ${replacement}`);
      }
    }
  }
  const caught = (counts.Killed ?? 0) + (counts.Timeout ?? 0);
  const valid = caught + (counts.Survived ?? 0) + (counts.NoCoverage ?? 0);
  return { counts, missed, caught, valid };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const t0 = performance.now();
  if (existsSync(reportFile)) rmSync(reportFile);
  const run = spawnSync(process.execPath, [join(root, "node_modules", "@stryker-mutator", "core", "bin", "stryker.js"), "run", ...process.argv.slice(2)], {
    cwd: root,
    stdio: "inherit",
  });
  const minutes = (performance.now() - t0) / 60_000;
  if (!existsSync(reportFile)) {
    console.error(`\nmutation testing did not finish (stryker exit code ${run.status}); no report at ${reportFile}`);
    process.exit(1);
  }
  const { counts, missed, caught, valid } = summarize(JSON.parse(readFileSync(reportFile, "utf8")));
  console.log(`\nkernel mutants: ${Object.entries(counts).map(([k, v]) => `${v} ${k}`).join(", ")}; ${minutes.toFixed(1)} min`);
  console.log(`caught ${caught} of ${valid} mutants that compile (${valid === 0 ? 100 : ((100 * caught) / valid).toFixed(2)}%); CompileError and RuntimeError are not counted as caught`);
  if (missed.length > 0) {
    console.log(`\n${missed.length} mutant(s) not caught:`);
    for (const line of missed) console.log(`  ${line}`);
    process.exit(1);
  }
  if (run.status !== 0) process.exit(run.status ?? 1);
}
