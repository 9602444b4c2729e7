/**
 * The shape of the engine's modules (issue 27 "Done when"): no import cycle anywhere in src/ — type-only imports
 * included, since a cycle of types is a cycle of meaning — and no module in src/ over `moduleLinesMax` lines but the
 * message catalog. A cycle prints as the files around it, in order.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { engine } from "./helpers.js";
import { filesUnder, importSpecs, resolveRelative } from "./imports.js";

/** The longest a module of src/ may be, in lines. */
const moduleLinesMax = 500;

/**
 * Modules allowed over `moduleLinesMax`, each with why. The catalog holds every text in two languages (the test fails
 * once a listed module is short enough, so no entry outlives its reason).
 */
const longModules: Record<string, string> = {
  "src/i18n/messages.ts": "the message catalog",
};

const rel = (p: string) => relative(engine, p).split(sep).join("/");
const files = filesUnder(join(engine, "src"));

/** The src/ files each file imports (relative imports that resolve to a file), keyed by path relative to the engine. */
const edges = new Map(files.map((f) => [rel(f), [...new Set(importSpecs(f).flatMap((i) => {
  const target = i.spec.startsWith(".") ? resolveRelative(f, i.spec) : null;
  return target ? [rel(target)] : [];
}))]]));

/** The cycles of a graph: one per strongly connected component of more than one file (or a file importing itself). */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = ""; w !== v; ) {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    }
    if (component.length > 1 || graph.get(v)?.includes(v)) out.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

test("the cycle finder finds a cycle of two, one of three and a self-import, and none in a chain", () => {
  const g = new Map([["a", ["b"]], ["b", ["a", "c"]], ["c", ["d"]], ["d", ["e"]], ["e", ["c"]], ["f", ["f"]], ["g", ["h"]], ["h", []]]);
  assert.deepEqual(cycles(g).map((c) => c.join(" ")).sort(), ["a b", "c d e", "f"]);
  assert.deepEqual(cycles(new Map([["x", ["y"]], ["y", ["z"]], ["z", []]])), []);
});

test("no import cycle in src/ (type-only imports count)", () => {
  assert.ok(edges.get("src/kernel/decide.ts")!.includes("src/kernel/types.ts"), "the walk sees type-only imports");
  assert.deepEqual(cycles(edges).map((c) => c.join(" ↔ ")), []);
});

test(`no module in src/ over ${moduleLinesMax} lines but the ones named, each still over it`, () => {
  const lines = (f: string) => readFileSync(f, "utf8").split("\n").length - (readFileSync(f, "utf8").endsWith("\n") ? 1 : 0);
  const long = files.filter((f) => !f.endsWith(".generated.ts") && lines(f) > moduleLinesMax).map(rel);
  assert.deepEqual(long.filter((f) => !Object.hasOwn(longModules, f)).map((f) => `${f}: ${lines(join(engine, f))} lines`), []);
  assert.deepEqual(Object.keys(longModules).filter((f) => !long.includes(f)), [], "an exception whose module is short now: remove it");
});
