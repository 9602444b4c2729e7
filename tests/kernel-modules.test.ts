/**
 * The kernel's modules form a DAG, drawn at the top of src/kernel/decide.ts as lines of modules: every import of a
 * kernel file (type-only imports included) goes to a module on a lower line, every kernel file is on the drawing, and
 * there is no cycle. A new import that closes a circle, or a file missing from the drawing, fails here. And SQL stays
 * in the view layer: a clause string in any other kernel file fails here too.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const kernel = join(import.meta.dirname, "..", "src", "kernel");

/** Kernel module → the kernel modules it imports (`from "./x.js"` and `import("./x.js")`). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of readdirSync(kernel).filter((f) => f.endsWith(".ts"))) {
    const source = readFileSync(join(kernel, file), "utf8");
    const imports = [...source.matchAll(/(?:from\s+|import\()"\.\/([\w-]+)\.js"/g)].map((m) => m[1]!);
    graph.set(file.slice(0, -3), [...new Set(imports)]);
  }
  return graph;
}

/** The drawing's lines, top first, each the modules named on it. */
function drawing(): string[][] {
  const head = readFileSync(join(kernel, "decide.ts"), "utf8").split("*/")[0]!;
  const lines = head.split("\n").filter((l) => /^ \* {3}[a-z]/.test(l));
  return lines.map((l) => l.slice(5).split(/\s{2,}/)[0]!.split(" · "));
}

/** One cycle of the graph, as a path that ends where it starts, or null. */
function findCycle(graph: Map<string, string[]>): string[] | null {
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (node: string): string[] | null => {
    if (state.get(node) === "done") return null;
    if (state.get(node) === "open") return [...path.slice(path.indexOf(node)), node];
    state.set(node, "open");
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(node, "done");
    return null;
  };
  for (const node of graph.keys()) {
    const cycle = visit(node);
    if (cycle) return cycle;
  }
  return null;
}

test("no kernel file imports another in a circle", () => {
  assert.equal(findCycle(importGraph())?.join(" → ") ?? null, null);
});

test("the check finds a circle when there is one", () => {
  const graph = new Map([["budget", ["cards"]], ["cards", ["lanes", "budget"]], ["lanes", []]]);
  assert.deepEqual(findCycle(graph), ["budget", "cards", "budget"]);
});

test("decide.ts draws every kernel module once, and every import goes to a lower line of the drawing", () => {
  const lines = drawing();
  const line = new Map(lines.flatMap((names, i) => names.map((name) => [name, i] as const)));
  const graph = importGraph();
  assert.deepEqual([...line.keys()].sort(), [...graph.keys()].sort(), "the drawing names exactly the kernel's files");
  assert.equal(line.size, lines.flat().length, "no module drawn twice");
  const upward: string[] = [];
  for (const [from, imports] of graph) {
    for (const to of imports) if (line.get(to)! <= line.get(from)!) upward.push(`${from} → ${to}`);
  }
  assert.deepEqual(upward, []);
});

/** SQL words and fragments a clause string would hold (`state = ?`, `ORDER BY key`, `LIMIT 1`, …). */
const sqlText = /\b(?:SELECT|INSERT|DELETE FROM|UPDATE|WHERE|ORDER BY|GROUP BY|LIMIT|json_extract)\b|[=<>] \?|\? (?:AND|OR)\b/;

test("only the view layer speaks SQL: view.ts reads, evolve.ts is the schema and the only writer; decisions ask typed questions", () => {
  const speaking = readdirSync(kernel)
    .filter((f) => f.endsWith(".ts"))
    .filter((f) => readFileSync(join(kernel, f), "utf8").split("\n").some((line) => sqlText.test(line)));
  assert.deepEqual(speaking.sort(), ["evolve.ts", "view.ts"]);
});

test("the SQL check finds a clause string in decision code", () => {
  assert.ok(sqlText.test(`c.view.where("outbox", "channel = ? AND nextAt <= ? ORDER BY nextAt, key LIMIT 1", channel, c.now)`));
  assert.ok(sqlText.test(`c.view.where("runs", "ck = ?", key)`));
  assert.ok(!sqlText.test(`const hit = c.view.nextOffer(channel, c.now);`));
});
