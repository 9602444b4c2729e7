/**
 * The mutation run's "survivors" reporter (sim/survivors-reporter.mjs): each mutant not caught becomes one line in
 * reports/mutation/survivors.txt the moment it is tested; caught ones leave nothing.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { missedLine, strykerPlugins, survivorsFile } from "../sim/survivors-reporter.mjs";
import { tempDir } from "./helpers.js";

const result = (status: string, line = 53) => ({
  status, fileName: join(process.cwd(), "src", "kernel", "cards.ts"), mutatorName: "StringLiteral",
  replacement: '"Stryker\n  was here!"', location: { start: { line, column: 96 }, end: { line, column: 98 } },
});

test("a line names the status, the file from the project root, line:column (from 1), the mutator and the replacement on one line", () => {
  assert.equal(missedLine(result("Survived")), 'survived  src/kernel/cards.ts:53:96 StringLiteral: "Stryker was here!"');
  assert.equal(missedLine(result("NoCoverage")), 'no coverage  src/kernel/cards.ts:53:96 StringLiteral: "Stryker was here!"');
});

test("the reporter empties the file when the run starts and appends one line per mutant not caught, as it is tested", () => {
  const dir = tempDir("aa-survivors-");
  const cwd = process.cwd();
  process.chdir(dir);
  try {
    const Reporter = (strykerPlugins[0] as { injectableClass: new () => { onMutantTested(r: unknown): void } }).injectableClass;
    new Reporter().onMutantTested(result("Survived", 1));
    const reporter = new Reporter(); // a new run
    assert.equal(readFileSync(survivorsFile, "utf8"), "");
    for (const [status, line] of [["Killed", 2], ["Survived", 3], ["Timeout", 4], ["CompileError", 5], ["NoCoverage", 6]] as const) {
      reporter.onMutantTested({ ...result(status, line), fileName: join(dir, "src", "kernel", "cards.ts") });
    }
    assert.equal(readFileSync(join(dir, "reports", "mutation", "survivors.txt"), "utf8"),
      'survived  src/kernel/cards.ts:3:96 StringLiteral: "Stryker was here!"\nno coverage  src/kernel/cards.ts:6:96 StringLiteral: "Stryker was here!"\n');
  } finally {
    process.chdir(cwd);
  }
});
