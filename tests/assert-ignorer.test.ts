/**
 * The mutation run's "assert" ignorer (sim/assert-ignorer.mjs): over Babel's own paths of a kernel file (the parser
 * Stryker instruments with), exactly the `assert(…);` statements are ignored, with their reason; the code around them
 * and other calls are not.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { AssertIgnorer, assertIgnoredReason, strykerPlugins } from "../sim/assert-ignorer.mjs";

// Babel comes with Stryker's instrumenter (a dev dependency); loaded untyped.
const babel = createRequire(import.meta.url)("@babel/core") as {
  parseSync(code: string, opts: object): unknown;
  traverse(ast: unknown, visitors: { enter(path: { node: { type: string; start: number; end: number } }): void }): void;
};

/** The source text of every node the ignorer ignores in `code`. */
function ignored(code: string): string[] {
  const ast = babel.parseSync(code, { filename: "x.ts", presets: [createRequire(import.meta.url).resolve("@babel/preset-typescript")], configFile: false, babelrc: false });
  const ignorer = new AssertIgnorer();
  const out: string[] = [];
  babel.traverse(ast, {
    enter(path) {
      const why = ignorer.shouldIgnore(path);
      if (why !== undefined) {
        assert.equal(why, assertIgnoredReason);
        out.push(code.slice(path.node.start, path.node.end));
      }
    },
  });
  return out;
}

test("only statements that call assert(…) are ignored", () => {
  const code = `function f(run: { state: string } | undefined, n: number) {
  assert(run?.state === "waiting", "retry-deadline-names-waiting-run");
  const ok = assert.name === "x" || n > 1;
  other(run, "assert");
  if (n > 2) assert(false, "due-kind-known");
  x.assert(n, "member");
  return ok;
}`;
  assert.deepEqual(ignored(code), [
    `assert(run?.state === "waiting", "retry-deadline-names-waiting-run");`,
    `assert(false, "due-kind-known");`,
  ]);
});

test("in the kernel, every assert call is a statement the ignorer ignores", () => {
  for (const file of ["decide.ts", "runs.ts"]) {
    const code = readFileSync(join(import.meta.dirname, "..", "src", "kernel", file), "utf8");
    const calls = code.match(/^\s*(?:default: )?assert\(.*\);$/gm) ?? [];
    assert.ok(calls.length > 0, file);
    assert.equal(ignored(code).length, calls.length, file);
  }
});

test("the plugin is declared as an ignorer named assert", () => {
  assert.deepEqual(strykerPlugins.map((p) => [(p as { kind: string }).kind, (p as { name: string }).name]), [["Ignore", "assert"]]);
});
