/**
 * Reading a JSON file a person writes (rules.json: JSONC, comments and trailing commas allowed; config.json: plain
 * JSON) with jsonc-parser, so that every problem has a line and column: syntax errors in words of the catalog, nesting
 * bounded before anything walks the text, a key given twice found, and a path of the value placed in the text.
 * Pure: text in, tree or problem out.
 */
import { parseTree, findNodeAtLocation, getNodeValue, printParseErrorCode, createScanner, SyntaxKind, type ParseError, type ParseErrorCode, type Node } from "jsonc-parser";
import { t, type Lang, type MessageId } from "../i18n/messages.js";
import { lineColumn, type FilePath, type FileProblem } from "./file-problems.js";

/**
 * A syntax error of jsonc-parser in words (the catalog's `jsonSyntax.*`, one text for each code of its
 * `ParseErrorCode`); a code the library adds later reads as "a JSON syntax error (code N)".
 */
export function jsonSyntaxText(code: ParseErrorCode, lang: Lang): string {
  const name = printParseErrorCode(code);
  return name === "<unknown ParseErrorCode>" ? t(lang, "jsonSyntax.unknown", { code }) : t(lang, `jsonSyntax.${name}`);
}

/** A JSON file read: its tree and value (objects without a prototype: `__proto__` is a key like any other). */
export type JsonRead = { ok: true; root: Node; value: unknown } | { ok: false; id: MessageId; params: Record<string, string | number>; offset: number };

/**
 * Parses `text`: nesting deeper than `depthMax` (`rulesJson.tooDeep`) or a syntax error (`rulesJson.syntax`, with the
 * error in words) is a problem at its offset; `comments` allows comments and trailing commas (JSONC).
 */
export function readJson(text: string, o: { comments: boolean; depthMax: number }, lang: Lang): JsonRead {
  const deep = tooDeep(text, o.depthMax);
  if (deep !== null) return { ok: false, id: "rulesJson.tooDeep", params: { max: o.depthMax }, offset: deep };
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, { allowTrailingComma: o.comments, disallowComments: !o.comments });
  const e = errors[0];
  if (e) return { ok: false, id: "rulesJson.syntax", params: { code: jsonSyntaxText(e.error, lang) }, offset: e.offset };
  // A text without a value (empty, only spaces or comments) is a ValueExpected error above: here there is a tree.
  return { ok: true, root: tree as Node, value: getNodeValue(tree as Node) };
}

/**
 * The offset of the first object or array that opens more than `max` deep, or null. One pass over the tokens,
 * without recursion (strings and comments are tokens of their own). A closing bracket counts only when it closes the
 * innermost opening one, so no text, however broken, nests deeper for the parser than counted here.
 */
function tooDeep(text: string, max: number): number | null {
  const scanner = createScanner(text, true);
  const open: SyntaxKind[] = [];
  for (let token = scanner.scan(); token !== SyntaxKind.EOF; token = scanner.scan()) {
    if (token === SyntaxKind.OpenBraceToken || token === SyntaxKind.OpenBracketToken) {
      if (open.push(token) > max) return scanner.getTokenOffset();
    } else if (token === closing(open[open.length - 1])) open.pop();
  }
  return null;
}

function closing(opening: SyntaxKind | undefined): SyntaxKind | null {
  return opening === SyntaxKind.OpenBraceToken ? SyntaxKind.CloseBraceToken : opening === SyntaxKind.OpenBracketToken ? SyntaxKind.CloseBracketToken : null;
}

/** The first property whose key its object already had (path and offset of the later one's value), or null. */
export function keyGivenTwice(node: Node, path: FilePath = []): { path: FilePath; offset: number } | null {
  const children = node.children ?? [];
  if (node.type === "array") {
    for (const [i, child] of children.entries()) {
      const hit = keyGivenTwice(child, [...path, i]);
      if (hit) return hit;
    }
  }
  if (node.type === "object") {
    const seen = new Set<string>();
    for (const prop of children) {
      const [k, v] = prop.children as [Node, Node];
      const key = String(k.value);
      if (seen.has(key)) return { path: [...path, key], offset: v.offset };
      seen.add(key);
      const hit = keyGivenTwice(v, [...path, key]);
      if (hit) return hit;
    }
  }
  return null;
}

/**
 * The node of `path` in the tree: its value, or for a `key` problem the entry's key; a path with no node (a missing
 * field) gives the nearest object that holds it.
 */
export function nodeAt(root: Node, path: FilePath, key = false): Node {
  let node: Node | undefined;
  for (let n = path.length; node === undefined && n >= 0; n--) node = findNodeAtLocation(root, path.slice(0, n));
  if (key && node?.parent?.type === "property") node = node.parent;
  return node ?? root;
}

/** Where `path` is in the text (see `nodeAt`): 1-based line and column. */
export function locateJson(text: string, root: Node, path: FilePath, key = false): { line: number; column: number } {
  return lineColumn(text, nodeAt(root, path, key).offset);
}

/**
 * The problem that comes first in the text, with its place (ties: the order `fileProblems` gives). A missing field
 * counts where its object ends — it is missed when the object closes — so an unknown field in the same object, often
 * the missing one misspelt, is told first; it is still placed at the object's start.
 */
export function firstInFile(problems: FileProblem[], text: string, root: Node): FileProblem & { place: { line: number; column: number } } {
  const found = problems.map((p) => {
    const node = nodeAt(root, p.path);
    return { p, node, order: p.keyword === "required" ? node.offset + node.length : node.offset };
  });
  const first = found.reduce((best, f) => (f.order < best.order ? f : best));
  return { ...first.p, place: lineColumn(text, first.node.offset) };
}

/**
 * The offset of the item that makes a list too long: the `max`-th (0-based) item of an array, the `max`-th property
 * of an object (its key); null when the list at `path` holds at most `max`.
 */
export function pastLimit(root: Node, path: FilePath, max: number): number | null {
  const node = findNodeAtLocation(root, path);
  const item = node?.children?.[max];
  return item ? item.offset : null;
}
