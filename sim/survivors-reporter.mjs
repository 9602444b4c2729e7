/**
 * A StrykerJS reporter plugin, "survivors" (stryker.config.mjs): names every kernel mutant that no test caught the
 * moment it has been tested, one line each in `reports/mutation/survivors.txt` (relative to the directory Stryker runs
 * in, emptied when the run starts) and on stderr, as `survived  src/kernel/cards.ts:53:96 StringLiteral: "…"` (line
 * and column count from 1). The whole kernel takes about three hours on 2 cores; a run cut short still names what it
 * found. `npm run test:mutation` (sim/mutate.ts) prints this file's lines after the run.
 * Plain JavaScript: Stryker imports its plugins without a TypeScript loader.
 */
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { PluginKind, declareClassPlugin } from "@stryker-mutator/api/plugin";

/** Where the lines go, relative to Stryker's working directory (the project root). */
export const survivorsFile = join("reports", "mutation", "survivors.txt");

/** Statuses that count as not caught (sim/mutate.ts fails the run on any). */
export const missedStatuses = ["Survived", "NoCoverage"];

/**
 * One line for a mutant result of Stryker's reporter API (`fileName` absolute, `location.start` counted from 1).
 * @param {{ status: string, fileName: string, mutatorName: string, replacement?: string, location: { start: { line: number, column: number } } }} m
 * @returns {string}
 */
export function missedLine(m) {
  const replacement = (m.replacement ?? "").replace(/\s+/g, " ").slice(0, 100);
  const file = relative(process.cwd(), m.fileName);
  return `${m.status === "NoCoverage" ? "no coverage" : "survived"}  ${file}:${m.location.start.line}:${m.location.start.column} ${m.mutatorName}: ${replacement}`;
}

class SurvivorsReporter {
  static inject = [];

  constructor() {
    mkdirSync(dirname(survivorsFile), { recursive: true });
    writeFileSync(survivorsFile, "");
  }

  /** Called by Stryker once per mutant, as soon as its status is known. */
  onMutantTested(result) {
    if (!missedStatuses.includes(result.status)) return;
    const line = missedLine(result);
    appendFileSync(survivorsFile, `${line}\n`);
    process.stderr.write(`\nnot caught: ${line}\n`);
  }
}

export const strykerPlugins = [declareClassPlugin(PluginKind.Reporter, "survivors", SurvivorsReporter)];
