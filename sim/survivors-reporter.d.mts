/** Types of sim/survivors-reporter.mjs (a StrykerJS reporter plugin, plain JavaScript so Stryker can import it). */

/** Where the reporter writes its lines, relative to the project root: `reports/mutation/survivors.txt`. */
export declare const survivorsFile: string;

/** Statuses that count as not caught: "Survived" and "NoCoverage". */
export declare const missedStatuses: readonly string[];

/** One line for a mutant result: `survived  <file>:<line>:<column> <Mutator>: <replacement>` (1-based positions). */
export declare function missedLine(m: {
  status: string;
  fileName: string;
  mutatorName: string;
  replacement?: string;
  location: { start: { line: number; column: number } };
}): string;

export declare const strykerPlugins: unknown[];
