/**
 * Adding a UI node type of declarative plugins (issue 27, "Done when"): a fixture adds the type `badge` (one line of
 * text) where a type starts — `uiNodeTypes` and its fields in `UiNodeFields` (src/protocol/plugin-schemas.ts) — and
 * the compiler, run on the sources with the fixture laid over them (nothing is written to the tree), names every place
 * that must handle it: the type's schema, the loader's hand checks, the link page's HTML, the channels' text and its
 * "has controls" test (the SDK), Feishu's card, and the console's renderer (its own project, tsconfig.console.json).
 * With those handled both projects compile: no renderer shows a type of the vocabulary as "unknown" in silence.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { engine } from "./helpers.js";
import { lineOf, places, Project, sources, type Overlay } from "./overlay-compile.js";

/** The engine (src/ and the built-in plugins, which render nodes too) and the console, each as `npm run typecheck` checks it. */
const engineProject = new Project("tsconfig.json", () => [...sources(join(engine, "src")), ...sources(join(engine, "plugins"))]);
const consoleProject = new Project("tsconfig.console.json", () => sources(join(engine, "src/console"), ".js"));

const read = (path: string) => readFileSync(join(engine, path), "utf8");
/** `text` with `before` (found once) replaced by `after`. */
function edit(text: string, before: string, after: string): string {
  assert.equal(text.split(before).length, 2, `once: ${before}`);
  return text.replace(before, after);
}

const paths = {
  schemas: "src/protocol/plugin-schemas.ts",
  load: "src/declarative/load.ts",
  html: "src/host/template-html.ts",
  text: "src/sdk/card-template.ts",
  feishu: "plugins/feishu/card.ts",
  console: "src/console/ui.js",
} as const;
const source = Object.fromEntries(Object.entries(paths).map(([k, p]) => [k, read(p)])) as Record<keyof typeof paths, string>;

/** Where a type starts: the list of types and the type's fields. */
const added = edit(
  edit(source.schemas, '"actions", "chart-lite"] as const;', '"actions", "chart-lite", "badge"] as const;'),
  '  "chart-lite": { title?: string; chart:', '  badge: { text: string };\n  "chart-lite": { title?: string; chart:',
);

/** Each place the compiler names, handled. */
const handled: Overlay = {
  [paths.schemas]: edit(added, '  "chart-lite": shape({', '  badge: shape({ text: line() }, ["text"]),\n  "chart-lite": shape({'),
  [paths.load]: edit(source.load, '      case "doc-ref":\n        break;', '      case "doc-ref":\n      case "badge":\n        break;'),
  [paths.html]: edit(source.html, '    case "actions":\n      return `<p>', '    case "badge":\n      return `<p>${said(node.text)}</p>`;\n    case "actions":\n      return `<p>'),
  [paths.text]: edit(
    edit(source.text, '      case "chart-lite":\n        return false;', '      case "chart-lite":\n      case "badge":\n        return false;'),
    '        case "chart-lite":\n          lines.push(', '        case "badge":\n          lines.push(n.text);\n          break;\n        case "chart-lite":\n          lines.push(',
  ),
  [paths.feishu]: edit(source.feishu, '        case "chart-lite":\n          out.push(', '        case "badge":\n          out.push(div(node.text));\n          break;\n        case "chart-lite":\n          out.push('),
  [paths.console]: edit(source.console, "  actions: actionsNode,\n", '  actions: actionsNode,\n  badge: (_place, node) => said(node.text, "p"),\n'),
};

const sorted = (list: string[]) => [...list].sort();

test("a UI node type added to the vocabulary: the compiler names each renderer, the schema and the loader's checks, and with those handled both projects compile", () => {
  const engineErrors = engineProject.compile({ [paths.schemas]: added });
  assert.deepEqual(sorted(places(engineErrors)), sorted([
    `${paths.feishu}:${lineOf(source.feishu, "{ type: unknownNodeType(node) }")} TS2345`,
    `${paths.load}:${lineOf(source.load, "n satisfies never;")} TS1360`,
    `${paths.html}:${lineOf(source.html, "{ type: unknownNodeType(node) }")} TS2345`,
    `${paths.schemas}:${lineOf(added, "const nodeShapes:")} TS2741`,
    `${paths.text}:${lineOf(source.text, "n satisfies never;")} TS1360`,
    `${paths.text}:${lineOf(source.text, "{ type: unknownNodeType(n) }")} TS2345`,
  ]), engineErrors.join("\n"));
  // Each names the new type: a renderer's `switch` reaches its `never` default with it, the schema table lacks it.
  for (const e of engineErrors) assert.match(e, /'badge'|"badge"/, e);
  const consoleErrors = consoleProject.compile({ [paths.schemas]: added });
  assert.deepEqual(sorted(places(consoleErrors)), sorted([
    `${paths.console}:${lineOf(source.console, "const nodeElements = {")} TS2741`,
    `${paths.schemas}:${lineOf(added, "const nodeShapes:")} TS2741`,
  ]), consoleErrors.join("\n"));
  assert.match(consoleErrors.find((e) => e.startsWith(paths.console))!, /Property 'badge' is missing/);

  // Every place it named handled: nothing else of the engine or the console fails to compile.
  assert.deepEqual(engineProject.compile(handled), []);
  // The console's project compiles its own files and the protocol's (not the engine's other overlaid files).
  assert.deepEqual(consoleProject.compile({ [paths.schemas]: handled[paths.schemas]!, [paths.console]: handled[paths.console]! }), []);
});

test("a type in the list without its fields: the compiler names the node type's definition", () => {
  const listOnly = edit(source.schemas, '"actions", "chart-lite"] as const;', '"actions", "chart-lite", "badge"] as const;');
  const errors = consoleProject.compile({ [paths.schemas]: listOnly });
  assert.ok(errors.includes(`${paths.schemas}:${lineOf(listOnly, "export type UiNode =")} TS2536 Type 'K' cannot be used to index type 'UiNodeFields'.`), errors.join("\n"));
});
