/**
 * The imports of a source file, read from its TypeScript syntax tree (so comments and strings never count): static
 * `import` and `export … from`, `import type`, `import x = require(…)`, `import("…")` with a literal string, and
 * `import("…")` types. Shared by tests/layers.test.ts (the layer arrows) and tests/module-shape.test.ts (no cycle).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import ts from "typescript";

/** One import as written: its line, what it names, whether only types come in, and the names it takes (null: all). */
export interface ImportSpec { line: number; spec: string; typeOnly: boolean; names: string[] | null }

const sourceFile = /\.(ts|mts|cts|js|mjs|cjs)$/;

/** Every source file under `dir` (node_modules left out). */
export function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? (n === "node_modules" ? [] : filesUnder(p)) : sourceFile.test(n) ? [p] : [];
  });
}

/** The engine file a relative import names (`./x.js` is `./x.ts` in the sources), or null when there is none. */
export function resolveRelative(from: string, spec: string): string | null {
  const p = resolve(dirname(from), spec);
  for (const c of [p, p.replace(/\.js$/, ".ts"), p.replace(/\.mjs$/, ".mts"), p.replace(/\.cjs$/, ".cts"), `${p}.ts`, join(p, "index.ts")]) {
    if (existsSync(c) && statSync(c).isFile()) return c;
  }
  return null;
}

/** Every import of `file`, in the order written. */
export function importSpecs(file: string): ImportSpec[] {
  const text = readFileSync(file, "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: ImportSpec[] = [];
  const add = (node: ts.Node, spec: string, typeOnly: boolean, names: string[] | null) =>
    out.push({ line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1, spec, typeOnly, names });
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const c = node.importClause;
      const named = c?.namedBindings && ts.isNamedImports(c.namedBindings) ? c.namedBindings.elements : null;
      const typeOnly = !!c && (c.isTypeOnly || (!c.name && !!named && named.length > 0 && named.every((e) => e.isTypeOnly)));
      const names = c && !c.name && named ? named.filter((e) => !e.isTypeOnly).map((e) => (e.propertyName ?? e.name).text) : null;
      add(node, node.moduleSpecifier.text, typeOnly, c ? names : []);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const named = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : null;
      const typeOnly = node.isTypeOnly || (!!named && named.length > 0 && named.every((e) => e.isTypeOnly));
      add(node, node.moduleSpecifier.text, typeOnly, named ? named.filter((e) => !e.isTypeOnly).map((e) => (e.propertyName ?? e.name).text) : null);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference) && ts.isStringLiteral(node.moduleReference.expression)) {
      add(node, node.moduleReference.expression.text, node.isTypeOnly, null);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteralLike(node.arguments[0])) {
      add(node, node.arguments[0].text, false, null);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      add(node, node.argument.literal.text, true, null);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}
