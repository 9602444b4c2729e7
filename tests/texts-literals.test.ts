/**
 * No text a person can read is outside the message catalog (issue 27 #2): a walk of src/ for string literals that
 * reach output — `console.log/error/warn`, `process.stdout/stderr.write`, `throw new Error("…")`, `{ error: "…" }`
 * bodies — fails on one with words in it that is not in the allowlist below, each entry with its reason. Texts go
 * through `t`/`said` (src/i18n/messages.ts); a literal of code (a JSON-RPC error of the protocol itself, a newline) is
 * no text for a person.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { engine } from "./helpers.js";

/**
 * Files whose literals that may reach output are known, with how many and why. A new literal in one of them raises its
 * count and fails as in any other file. Keep it short: an entry needs a reason a reviewer accepts.
 */
const allowed: { file: string; count: number; why: string }[] = [
  // Invariants: a broken program, never a person's mistake; they name code, and the log is where a developer reads them.
  { file: "src/kernel/evolve.ts", count: 3, why: "invariant of the fact log (a fact that cannot be applied)" },
  { file: "src/kernel/view.ts", count: 1, why: "invariant of the fact log (a rules version with no fact)" },
  { file: "src/plugins/registry.ts", count: 1, why: "invariant: a kind's loader registered twice" },
  { file: "src/protocol/endpoints.ts", count: 1, why: "invariant: a path built without one of its parameters" },
  { file: "src/protocol/meta-schemas.ts", count: 2, why: "invariants: the precompiled meta-schemas given to an Ajv of their options, which keeps the draft 2020-12 one under its id" },
  { file: "src/worker/windows-job.ts", count: 7, why: "the payload between the worker and its own job host, checked before any person's input" },
  { file: "src/worker/supervisor-main.ts", count: 2, why: "an internal child process's usage and spec, started only by the worker" },
  { file: "src/protocol/conformance.ts", count: 1, why: "the conformance kit's check names are English developer words (protocol.md 一致性)" },
];

/** Whether a literal holds words (two letters or more in a row): a newline, a separator or a code is no text. */
const hasWords = (text: string) => /\p{L}{2,}/u.test(text);

/** The source files of src/: TypeScript and the console's JavaScript. */
function sources(dir = join(engine, "src")): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return /\.(ts|js)$/.test(e.name) && !e.name.endsWith(".generated.ts") ? [path] : [];
  });
}

/** The literal text of `node` when it is a string or template literal (a template's fixed parts joined), else null. */
function literalText(node: ts.Node): string | null {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node)) return [node.head.text, ...node.templateSpans.map((s) => s.literal.text)].join("…");
  return null;
}

/** The literals of one file that reach output, with their line. */
function outputLiterals(path: string): { line: number; text: string }[] {
  const source = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
  const out: { line: number; text: string }[] = [];
  const add = (node: ts.Node) => {
    const text = literalText(node);
    if (text !== null && hasWords(text)) out.push({ line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, text });
  };
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression.getText(source);
      if (/^(console\.(log|error|warn)|process\.(stdout|stderr)\.write)$/.test(callee)) node.arguments.forEach(add);
    }
    if (ts.isNewExpression(node) && ts.isThrowStatement(node.parent) && /^(Error|TypeError|RangeError)$/.test(node.expression.getText(source))) node.arguments?.forEach(add);
    if (ts.isPropertyAssignment(node) && node.name.getText(source) === "error") add(node.initializer);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

test("no literal text that reaches a person is outside the catalog, but the allowlist's, each with its reason", () => {
  const found: string[] = [];
  const counts = new Map<string, number>();
  for (const path of sources()) {
    const file = relative(engine, path);
    if (file === "src/i18n/messages.ts") continue;
    const literals = outputLiterals(path);
    if (literals.length === 0) continue;
    if (allowed.some((a) => a.file === file)) counts.set(file, literals.length);
    else found.push(...literals.map(({ line, text }) => `${file}:${line}: ${JSON.stringify(text)}`));
  }
  assert.deepEqual(found, []);
  assert.deepEqual(allowed.map((a) => [a.file, counts.get(a.file) ?? 0]), allowed.map((a) => [a.file, a.count]), "an allowed file's count changed: fix the new literal, or lower the count");
});
