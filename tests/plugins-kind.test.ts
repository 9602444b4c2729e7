/**
 * Adding a kind of tool plugin (issue 27, point 1, "Done when"): a fixture adds the kind `echo` to the engine's sources
 * as the issue says a kind is added — its runner's file and one entry of the tool host's table (src/tools/runners.ts) —
 * and the compiler, run on the sources with the fixture laid over them (nothing is written to the tree), points at
 * every place that must handle it: the contract's list of kinds (src/protocol/patterns.ts `toolPluginTypes`, which the
 * table is held to) and each member the runner lacks. With those done the sources compile: nothing else of the engine
 * (host, worker, CLI, manifest check, `/v1` bodies) names a kind.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { engine } from "./helpers.js";
import { lineOf, places, Project, sources } from "./overlay-compile.js";

/** The engine's sources under src/, the program's roots (what `npm run build` compiles of the engine). */
const project = new Project("tsconfig.json", () => sources(join(engine, "src")));
const compile = (overlay: Record<string, string>) => project.compile(overlay);

const runnersPath = "src/tools/runners.ts";
const patternsPath = "src/protocol/patterns.ts";
const runnerPath = "src/tools/echo-runner.ts";
const runners = readFileSync(join(engine, runnersPath), "utf8");
const patterns = readFileSync(join(engine, patternsPath), "utf8");
const kinds = 'export const toolPluginTypes = ["sync", "async", "service", "mcp"] as const;';

/** The one table entry: the runner's import and its line in the table. */
const withEntry = runners
  .replace('import { serviceRunner } from "./service.js";', 'import { serviceRunner } from "./service.js";\nimport { echoRunner } from "./echo-runner.js";')
  .replace("  mcp: mcpRunner,\n", "  mcp: mcpRunner,\n  echo: echoRunner,\n");

/** The kind's runner: each call answers its arguments. `members` are what the runner gives (a first try lacks some). */
function runnerFile(members: { conformance: boolean; call: boolean }): string {
  return [
    "/** The `echo` kind of tool plugin: each call answers its arguments (a fixture of tests/plugins-kind.test.ts). */",
    'import type { RunnerKind } from "./runner.js";',
    "",
    "export const echoRunner: RunnerKind = {",
    '  tools: (m) => (m.capabilities.tools.length > 0 ? "listed" : "any"),',
    "  timeoutMs: () => 1000,",
    "  manifestTimeout: false,",
    "  make: () => ({",
    "    knows: () => true,",
    '    list: async (a) => ({ ok: true, tools: a.p.manifest.capabilities.tools, source: "manifest" }),',
    ...(members.call ? ['    call: async (_a, _tool, args) => ({ status: "ok", result: args }),'] : []),
    "  }),",
    ...(members.conformance ? ['  conformance: async (p, _digest, _s, _o, add) => add("tools.conf.tools", "ok", p.name),'] : []),
    "};",
    "",
  ].join("\n");
}

test("a tool-plugin kind added as one runner file and one table entry: the compiler points at every place that must handle it, and with those the engine compiles", () => {
  assert.ok(patterns.includes(kinds), "the contract's list as this test knows it");
  assert.notEqual(withEntry, runners, "the table entry is laid in");
  // A first try: the runner file without its conformance checks, and the table entry. The compiler names the runner
  // (the member it lacks) and the table's line (its kind is not in the contract's list of kinds), and nothing else.
  const firstTry = runnerFile({ conformance: false, call: true });
  const first = compile({ [runnersPath]: withEntry, [runnerPath]: firstTry });
  assert.deepEqual(places(first), [
    `${runnerPath}:${lineOf(firstTry, "export const echoRunner")} TS2741`,
    `${runnersPath}:${lineOf(withEntry, "echo: echoRunner")} TS2353`,
  ], first.join("\n"));
  assert.match(first[0]!, /Property 'conformance' is missing .* required in type 'RunnerKind'/);
  assert.match(first[1]!, /'echo' does not exist in type 'Readonly<Record<"sync" \| "async" \| "service" \| "mcp", RunnerKind>>'/);
  // The contract's list names the kind and the table has no entry: the compiler names the table.
  const contract = patterns.replace(kinds, 'export const toolPluginTypes = ["sync", "async", "service", "mcp", "echo"] as const;');
  const noEntry = compile({ [patternsPath]: contract });
  assert.deepEqual(places(noEntry), [`${runnersPath}:${lineOf(runners, "export const runners")} TS2741`], noEntry.join("\n"));
  assert.match(noEntry[0]!, /Property 'echo' is missing/);

  // Every place it named handled: the runner whole, the table entry, the contract's list. Nothing else fails to compile.
  assert.deepEqual(compile({ [runnersPath]: withEntry, [runnerPath]: runnerFile({ conformance: true, call: true }), [patternsPath]: contract }), []);
});
