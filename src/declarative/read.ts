/**
 * Reading one file of a declarative plugin without trusting it (issue 18: fail-closed): a regular file (links inside a
 * plugin are not followed), at most `pluginFileMaxBytes`, strict UTF-8, JSON that parses (the error says where) and
 * nests at most `pluginJsonDepthMax` deep; and Ajv's errors as a plugin author reads them, each with the JSON pointer
 * of the value it is about. Reading never runs anything.
 */
import { closeSync, constants, fstatSync, lstatSync, opendirSync, openSync, readSync, type Dirent } from "node:fs";
import type { ErrorObject } from "ajv";
import { parse as parseJsonc, parseTree, type Node, type ParseError } from "jsonc-parser";
import { t, type Lang, render, said } from "../i18n/messages.js";
import { patternWhat } from "../protocol/describe.js";
import { pluginFileMaxBytes, pluginFolderEntriesMax, pluginJsonDepthMax } from "./limits.js";
import type { PluginError } from "./types.js";

/** A file read: its bytes (for the plugin's digest) and text, or why it cannot be used. */
export type FileRead = { ok: true; bytes: Buffer; text: string } | { ok: false; reason: string };

/**
 * Reads at most `pluginFileMaxBytes` of a regular file as strict UTF-8: never through a link, never waiting on a FIFO
 * or device, even one swapped in between the check and the opening. Never throws. Synchronous: a plugin's files are
 * small and few, and the catalog gives the event loop back between plugins (a thread-pool round trip per file would
 * cost more than the read).
 */
export function readPluginFile(path: string, lang: Lang): FileRead {
  try {
    const st = lstatSync(path);
    if (st.isSymbolicLink()) return { ok: false, reason: t(lang, "decl.file.symlink") };
    if (!st.isFile()) return { ok: false, reason: t(lang, "decl.file.notFile") };
    if (st.size > pluginFileMaxBytes) return { ok: false, reason: t(lang, "decl.file.tooLarge", { limit: pluginFileMaxBytes }) };
    // The lstat above gives the clear reason; this open decides. Without following a link, and without waiting (a
    // FIFO put in the file's place since would hold the event loop until someone writes to it); then the opened file
    // itself must be a regular one within the limit.
    let fd: number;
    try {
      fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ELOOP") return { ok: false, reason: t(lang, "decl.file.symlink") };
      throw e;
    }
    let bytes: Buffer;
    try {
      const opened = fstatSync(fd);
      if (!opened.isFile()) return { ok: false, reason: t(lang, "decl.file.notFile") };
      // Up to one byte more than allowed (a file that grew since lstat is still caught), the buffer grown as needed.
      const cap = pluginFileMaxBytes + 1;
      let buf = Buffer.allocUnsafe(Math.min(opened.size + 1, cap));
      let n = 0;
      for (;;) {
        const got = readSync(fd, buf, n, buf.length - n, null);
        n += got;
        if (got === 0 || n === cap) break;
        if (n === buf.length) buf = Buffer.concat([buf, Buffer.allocUnsafe(Math.min(buf.length, cap - buf.length))]);
      }
      bytes = buf.subarray(0, n);
    } finally {
      closeSync(fd);
    }
    if (bytes.length > pluginFileMaxBytes) return { ok: false, reason: t(lang, "decl.file.tooLarge", { limit: pluginFileMaxBytes }) };
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      return { ok: false, reason: t(lang, "decl.file.utf8") };
    }
    return { ok: true, bytes, text: text.replace(/^\uFEFF/, "") };
  } catch (e) {
    return { ok: false, reason: t(lang, "decl.file.read", { error: (e as NodeJS.ErrnoException).code ?? (e as Error).message }) };
  }
}

/**
 * The entries of a folder of a plugin (dot names left out, sorted by name), read one by one and no further than
 * `pluginFolderEntriesMax`: "tooMany" when it holds more, null when it does not exist (or is no folder). Throws other
 * errors of the file system.
 */
export function listPluginFolder(dir: string): Dirent[] | "tooMany" | null {
  let d;
  try {
    d = opendirSync(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw e;
  }
  const list: Dirent[] = [];
  try {
    for (let e = d.readSync(); e !== null; e = d.readSync()) {
      if (e.name.startsWith(".")) continue;
      if (list.length >= pluginFolderEntriesMax) return "tooMany";
      list.push(e);
    }
  } finally {
    d.closeSync();
  }
  return list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Parses JSON text, checking its depth and that no object gives a key twice (JSON.parse would keep the later one in
 * silence — a second `requires.network` swapped in under the first: issue 26 — where rules.json and TOML refuse it).
 * @returns the value, or why not (with the line and column of a syntax error or of the repeated key's value; `pointer`
 *   names the repeated key).
 */
export function parsePluginJson(text: string, lang: Lang): { ok: true; value: unknown } | { ok: false; reason: string; pointer?: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // JSON.parse says little about where: the strict JSONC parser finds the first error's offset.
    const errors: ParseError[] = [];
    parseJsonc(text, errors, { allowTrailingComma: false, disallowComments: true, allowEmptyContent: false });
    const offset = errors[0]?.offset ?? text.length;
    const before = text.slice(0, offset).split("\n");
    return { ok: false, reason: t(lang, "decl.file.json", { line: before.length, column: [...before.at(-1)!].length + 1 }) };
  }
  if (depthOf(value) > pluginJsonDepthMax) return { ok: false, reason: t(lang, "decl.file.tooDeep", { limit: pluginJsonDepthMax }) };
  const twice = keyGivenTwice(parseTree(text, [], { allowTrailingComma: false, disallowComments: true }));
  if (twice) {
    const before = text.slice(0, twice.offset).split("\n");
    return { ok: false, pointer: pointer(...twice.path), reason: t(lang, "decl.file.twice", { line: before.length, column: [...before.at(-1)!].length + 1 }) };
  }
  return { ok: true, value };
}

/**
 * The first key an object of `root` gives again (its path, and the offset of the later value), or null. Walked
 * without recursion; the depth was checked before.
 */
function keyGivenTwice(root: Node | undefined): { path: (string | number)[]; offset: number } | null {
  const stack: [Node, (string | number)[]][] = root ? [[root, []]] : [];
  while (stack.length > 0) {
    const [node, path] = stack.shift()!;
    const children = node.children ?? [];
    if (node.type === "array") children.forEach((child, i) => stack.push([child, [...path, i]]));
    if (node.type !== "object") continue;
    const seen = new Set<string>();
    for (const prop of children) {
      const [k, v] = prop.children as [Node, Node | undefined];
      const key = String(k.value);
      if (seen.has(key)) return { path: [...path, key], offset: v?.offset ?? k.offset };
      seen.add(key);
      if (v) stack.push([v, [...path, key]]);
    }
  }
  return null;
}

/** How deep objects and arrays nest in `value` (a scalar is 0), walked without recursion. */
export function depthOf(value: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    max = Math.max(max, d);
    if (d > pluginJsonDepthMax) return d; // deeper than allowed: no need to walk the rest
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, d + 1]);
  }
  return max;
}

/** One segment of a JSON pointer (RFC 6901: `~` → `~0`, `/` → `~1`). */
export function pointerSegment(s: string | number): string {
  return String(s).replace(/~/g, "~0").replace(/\//g, "~1");
}

/** A JSON pointer from its segments (`["http", "url"]` → `/http/url`). */
export function pointer(...segments: (string | number)[]): string {
  return segments.map((s) => `/${pointerSegment(s)}`).join("");
}

/** An error as a line people read: `<file>#<pointer>: <reason>`, or `<file>: <reason>` for the file as a whole. */
export function formatPluginError(e: PluginError): string {
  return `${e.file}${e.pointer ? `#${e.pointer}` : ""}: ${e.reason}`;
}

/** The allowed values of a discriminated `oneOf` (each branch's `const` of the tag), for the unknown-type error. */
function tagValues(schema: unknown, tag: string): string[] {
  const branches = (schema as { oneOf?: { properties?: Record<string, { const?: unknown }> }[] } | undefined)?.oneOf ?? [];
  return branches.map((b) => b.properties?.[tag]?.const).filter((v): v is string => typeof v === "string");
}

/**
 * Ajv's errors (compiled with `allErrors` and `verbose`) as plugin errors of `file`: one per problem, each at the JSON
 * pointer of the value it is about (a missing or unknown field: the field's own pointer). The branch errors of an
 * `anyOf` that failed as a whole are folded into its one error.
 */
export function schemaErrors(file: string, errors: readonly ErrorObject[], lang: Lang): PluginError[] {
  const anyOfs = errors.filter((e) => e.keyword === "anyOf");
  const inAnyOf = (e: ErrorObject) => anyOfs.some((a) => a !== e && a.instancePath === e.instancePath && e.schemaPath.startsWith(`${a.schemaPath}/`));
  const out: PluginError[] = [];
  for (const e of errors) {
    if (inAnyOf(e) || e.keyword === "propertyNames") continue; // the name's own error says it
    const p = e.params as Record<string, unknown>;
    const at = (reason: string, extra?: string) => out.push({ file, pointer: e.instancePath + (extra === undefined ? "" : `/${pointerSegment(extra)}`), reason });
    switch (e.keyword) {
      case "required": at(t(lang, "decl.schema.required"), String(p.missingProperty)); break;
      case "additionalProperties": at(t(lang, "decl.schema.unknown"), String(p.additionalProperty)); break;
      case "type": at(t(lang, "decl.schema.type", { type: String(p.type) })); break;
      case "maxLength": at(t(lang, "decl.schema.maxLength", { limit: Number(p.limit) })); break;
      case "minLength": at(t(lang, "decl.schema.minLength", { limit: Number(p.limit) })); break;
      case "pattern": {
        at(render(lang, said("decl.schema.pattern", { what: patternWhat(e) })), e.propertyName);
        break;
      }
      case "const": at(t(lang, "decl.schema.enum", { values: JSON.stringify([p.allowedValue]) })); break;
      case "enum": at(t(lang, "decl.schema.enum", { values: JSON.stringify(p.allowedValues) })); break;
      case "maximum": at(t(lang, "decl.schema.maximum", { limit: Number(p.limit) })); break;
      case "minimum": at(t(lang, "decl.schema.minimum", { limit: Number(p.limit) })); break;
      case "maxItems": at(t(lang, "decl.schema.maxItems", { limit: Number(p.limit) })); break;
      case "minItems": at(t(lang, "decl.schema.minItems", { limit: Number(p.limit) })); break;
      case "maxProperties": at(t(lang, "decl.schema.maxProperties", { limit: Number(p.limit) })); break;
      case "uniqueItems": at(t(lang, "decl.schema.unique", { i: Number(p.j), j: Number(p.i) })); break;
      case "discriminator": {
        const tag = String(p.tag);
        if (p.error === "mapping") at(t(lang, "decl.schema.tag", { tag, value: String(p.tagValue), values: tagValues(e.parentSchema, tag).join(", ") }), tag);
        else at(t(lang, "decl.schema.required"), tag);
        break;
      }
      case "anyOf": at(t(lang, "decl.schema.anyOf")); break;
      default: at(t(lang, "decl.schema.invalid"));
    }
  }
  return out;
}
