/**
 * The one TOML reader of the project (issue 27: one reader, not a parser and a line scanner beside it): toml-eslint-
 * parser, a maintained TOML 1.0/1.1 parser whose syntax tree keeps every key's and value's line and column, so that a
 * problem of a manifest is placed exactly where its key is written — quoted and dotted keys, arrays of tables and
 * multi-line strings included. Its syntax errors are worded from the catalog (`tomlSyntax.*`). Pure: text in.
 */
import { getStaticTOMLValue, parseTOML, ParseError, type AST } from "toml-eslint-parser";
import { t, type Lang, type MessageId, render } from "../i18n/messages.js";
import { fieldPath, type FilePath } from "../protocol/file-problems.js";

/** A 1-based line and column (columns in UTF-16 code units, as editors count). */
export type Place = { line: number; column: number };

/** A TOML document read: its value and where each key path is written (`fieldPath` of the path → place). */
export type TomlRead =
  | { ok: true; value: Record<string, unknown>; places: Map<string, Place> }
  | { ok: false; path: FilePath; place: Place | null; id: MessageId; params: Record<string, string | number> };

/** toml-eslint-parser's error messages (its `MESSAGES`, which it does not export) → the code the catalog knows them by. */
const syntaxCodes: [RegExp, string][] = [
  [/^Unterminated string constant$/, "unterminated-string"], [/^Unterminated table-key$/, "unterminated-table-key"],
  [/^Unterminated array$/, "unterminated-array"], [/^Unterminated inline table$/, "unterminated-inline-table"],
  [/^Empty bare keys are not allowed$/, "missing-key"], [/^Must be a newline$/, "missing-newline"],
  [/^Expected equal \(=\) token$/, "missing-equals-sign"], [/^Unspecified values are invalid$/, "missing-value"],
  [/^Expected comma \(,\) token$/, "missing-comma"], [/^Defining a key multiple times is invalid$/, "dupe-keys"],
  [/^Unexpected character$/, "unexpected-char"], [/^Unexpected token$/, "unexpected-token"],
  [/^Control characters/, "invalid-control-character"], [/^Invalid code point .* within comments$/, "invalid-comment-character"],
  [/^The key, equals sign, and value must be on the same line$/, "invalid-key-value-newline"],
  [/^No newlines are allowed between the curly braces/, "invalid-inline-table-newline"],
  [/^Underscores are allowed between digits$/, "invalid-underscore"], [/^Unexpected spaces$/, "invalid-space"],
  [/^Three or more quotes are not permitted$/, "invalid-three-quotes"], [/^Unexpected invalid date$/, "invalid-date"],
  [/^Unexpected invalid time$/, "invalid-time"], [/^Leading zeros are not allowed$/, "invalid-leading-zero"],
  [/^Trailing comma is not permitted in an inline table$/, "invalid-trailing-comma-in-inline-table"],
  [/^Invalid character in escape sequence$/, "invalid-char-in-escape-sequence"],
  [/^Consecutive dots are not permitted in keys$/, "invalid-consecutive-dots-in-key"], [/^Invalid code point/, "invalid-code-point"],
  [/^Keys cannot end with a dot$/, "invalid-trailing-dot-in-key"], [/^Keys cannot start with a dot$/, "invalid-leading-dot-in-key"],
];

/** A syntax error of the parser in words of the catalog; one the catalog does not know keeps the parser's words. */
export function tomlSyntaxText(message: string, lang: Lang): string {
  const code = syntaxCodes.find(([re]) => re.test(message))?.[1];
  return code ? render(lang, { id: `tomlSyntax.${code}` as MessageId }) : t(lang, "tomlSyntax.unknown", { error: message });
}

/**
 * Reads `text`. Never throws: a syntax error, a key `__proto__` (it would change the object it is read into) or an
 * integer a JavaScript number cannot hold exactly is a problem at its place; a document nested so deep that the
 * parser runs out of stack (thousands of levels) is `tomlSyntax.tooDeep` without one. Key paths deeper than
 * `depthMax` are not placed (the caller refuses such a document by its depth).
 */
export function readToml(text: string, depthMax: number, lang: Lang): TomlRead {
  let ast: AST.TOMLProgram;
  let value: Record<string, unknown>;
  try {
    ast = parseTOML(text, { tomlVersion: "1.0" });
    value = getStaticTOMLValue(ast) as Record<string, unknown>;
  } catch (e) {
    if (e instanceof ParseError) {
      return { ok: false, path: [], place: { line: e.lineNumber, column: e.column + 1 }, id: "tools.manifest.toml", params: { error: tomlSyntaxText(e.message, lang) } };
    }
    if (e instanceof RangeError) return { ok: false, path: [], place: null, id: "tools.manifest.toml", params: { error: t(lang, "tomlSyntax.tooDeep", { limit: depthMax }) } };
    throw e;
  }
  return unreadable(ast, lang) ?? { ok: true, value, places: placed(ast, depthMax) };
}

const placeOfNode = (n: AST.HasLocs): Place => ({ line: n.loc.start.line, column: n.loc.start.column + 1 });
const keyName = (k: AST.TOMLBare | AST.TOMLQuoted) => (k.type === "TOMLBare" ? k.name : k.value);

/** The first unsafe key or inexact integer of the document as a problem, or null. */
function unreadable(ast: AST.TOMLProgram, lang: Lang): TomlRead | null {
  for (const token of ast.tokens) {
    if (token.type === "Integer" && !Number.isSafeInteger(token.number)) {
      return { ok: false, path: [], place: placeOfNode(token), id: "tools.manifest.toml", params: { error: t(lang, "tomlSyntax.integer") } };
    }
  }
  const unsafe = walk(ast, Number.MAX_SAFE_INTEGER).find(({ key }) => key !== null && key.keys.some((k) => keyName(k) === "__proto__"));
  if (!unsafe) return null;
  return { ok: false, path: unsafe.path, place: placeOfNode(unsafe.node), id: "tools.manifest.unsafeKey", params: { field: fieldPath(unsafe.path) } };
}

/** Where each key path is first written: a key, a table header, an array's item; the keys a dotted key or header implies too. */
function placed(ast: AST.TOMLProgram, depthMax: number): Map<string, Place> {
  const places = new Map<string, Place>();
  for (const { path, node, key } of walk(ast, depthMax)) {
    const at = placeOfNode(node);
    // `a.b.c = 1` and `[a.b.c]` also write `a` and `a.b` (and `[[a]]` the array `a`), there unless written before.
    for (let n = 1; n <= path.length; n++) {
      const k = fieldPath(path.slice(0, n));
      if (!places.has(k) && (n === path.length || key !== null)) places.set(k, at);
    }
  }
  return places;
}

type Visit = { path: FilePath; node: AST.HasLocs; key: AST.TOMLKey | null };

/** Every key, header and array item of the document with its path, in the order of the text; no recursion. */
function walk(ast: AST.TOMLProgram, depthMax: number): Visit[] {
  const out: Visit[] = [];
  const stack: { node: AST.TOMLNode; base: FilePath }[] = ast.body[0].body.map((node) => ({ node, base: [] as FilePath })).reverse();
  for (let top = stack.pop(); top; top = stack.pop()) {
    const { node, base } = top;
    if (base.length > depthMax) continue;
    const inner: { node: AST.TOMLNode; base: FilePath }[] = [];
    if (node.type === "TOMLTable") {
      out.push({ path: node.resolvedKey, node, key: node.key });
      inner.push(...node.body.map((kv) => ({ node: kv as AST.TOMLNode, base: node.resolvedKey })));
    } else if (node.type === "TOMLKeyValue") {
      const path = [...base, ...node.key.keys.map(keyName)];
      out.push({ path, node, key: node.key });
      inner.push({ node: node.value, base: path });
    } else if (node.type === "TOMLArray") {
      node.elements.forEach((el, i) => {
        out.push({ path: [...base, i], node: el, key: null });
        inner.push({ node: el, base: [...base, i] });
      });
    } else if (node.type === "TOMLInlineTable") {
      inner.push(...node.body.map((kv) => ({ node: kv as AST.TOMLNode, base })));
    }
    stack.push(...inner.reverse());
  }
  return out;
}

/** Where `path` is written: the path itself, else its nearest written ancestor, else the top of the file. */
export function placeOf(places: ReadonlyMap<string, Place>, path: FilePath): Place {
  for (let n = path.length; n > 0; n--) {
    const at = places.get(fieldPath(path.slice(0, n)));
    if (at) return at;
  }
  return { line: 1, column: 1 };
}
