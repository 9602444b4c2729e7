/**
 * Checking a call's arguments against its tool's JSON Schema (Ajv, draft 2020-12) before anything starts: arguments
 * that fail are refused and the plugin is not started (issue 16). Compiled schemas are cached by manifest digest and
 * tool name; the cache is bounded and starts over when full.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { RE2JS } from "re2js";
import { describeError } from "../protocol/validate.js";
import { draft07MetaSchema, usePrecompiledMetaSchemas } from "../protocol/meta-schemas.js";
import { t, type Lang } from "../i18n/messages.js";
import { argumentsDepthMax, argumentsMaxBytes, patternWorkMax } from "./limits.js";

/** Compiled argument schemas kept at once. */
const compiledSchemasMax = 1000;

/**
 * The regular-expression engine of argument schemas (`pattern`, `patternProperties`, `propertyNames`): RE2's
 * linear-time matching (re2js), never JavaScript's backtracking one — a plugin's schema is the plugin's, the string
 * the agent's or a source's, and the check runs in the hub's thread (issue 26 round 29, F29b-3: `^(a+)+$` against 28
 * `a`s and a `!` held every route 8.6 s, each more character doubling it). A pattern RE2 cannot run (a lookaround, a
 * backreference) is not checked by the hub: the plugin gets the arguments and checks them itself (tool-plugins.md);
 * JavaScript's syntax and meaning are kept where RE2 differs (`asRe2`).
 */
const linearRegExp = Object.assign((pattern: string): { test(s: string): boolean; toString(): string } => {
  // Ajv keeps one compiled expression per `toString()`: each must say its own pattern.
  try {
    const re = RE2JS.compile(asRe2(pattern));
    // Linear in the string, but times the program's size: past the budget the plugin checks it (a review of round 29:
    // `(a|aa){1000}$` took 2.2 s on 20,000 characters).
    return { test: (s: string) => re.programSize() * (s.length + 1) > patternWorkMax || re.test(s), toString: () => `/${pattern}/` };
  } catch {
    return { test: () => true, toString: () => `unchecked /${pattern}/` };
  }
}, { code: "linearRegExp" });


/** JavaScript's `\s` (white space and line terminators), as members of an RE2 class. */
const jsSpace = "\\t\\n\\x{b}\\f\\r \\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}";

/**
 * A JSON Schema pattern (ECMAScript syntax) as RE2 reads the same thing: `\uXXXX`, `\u{…}` and `\cX` as `\x{…}`;
 * `.` without the line terminators JavaScript leaves out (RE2 leaves out only `\n`); `\s` and `\S` outside a class
 * with JavaScript's Unicode white space (RE2's are ASCII), `\s` in a class too; `[^]` and `[]`. What RE2 still cannot
 * read (a lookaround, a backreference, a repeat count past 1,000, `\S` in a class) fails to compile: not checked.
 */
export function asRe2(p: string): string {
  let out = "";
  let inClass = false;
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (c === "\\" && i + 1 < p.length) {
      const n = p[i + 1]!;
      const hex4 = p.slice(i + 2, i + 6);
      const braced = n === "u" && p[i + 2] === "{" ? /^\{([0-9a-fA-F]{1,6})\}/.exec(p.slice(i + 2)) : null;
      if (braced) {
        out += `\\x{${braced[1]}}`;
        i += 1 + braced[0].length;
      } else if (n === "u" && /^[0-9a-fA-F]{4}$/.test(hex4)) {
        out += `\\x{${hex4}}`;
        i += 5;
      } else if (n === "c" && /^[A-Za-z]$/.test(p[i + 2] ?? "")) {
        out += `\\x{${(p.charCodeAt(i + 2) % 32).toString(16)}}`;
        i += 2;
      } else if (n === "s" || (n === "S" && !inClass)) {
        out += inClass ? jsSpace : `[${n === "S" ? "^" : ""}${jsSpace}]`;
        i += 1;
      } else {
        out += c + n;
        i += 1;
      }
    } else if (inClass) {
      if (c === "]") inClass = false;
      out += c;
    } else if (p.startsWith("[^]", i)) {
      out += "[\\x{0}-\\x{10ffff}]";
      i += 2;
    } else if (p.startsWith("[]", i)) {
      out += "[^\\x{0}-\\x{10ffff}]";
      i += 1;
    } else if (c === "[") {
      inClass = true;
      out += c;
      if (p[i + 1] === "^") out += p[++i];
    } else out += c === "." ? "[^\\n\\r\\x{2028}\\x{2029}]" : c;
  }
  return out;
}

/**
 * An Ajv for tool argument schemas: draft 2020-12, also accepting schemas that declare draft-07 (compiled with 2020
 * rules, which agree with draft-07 on everything tool schemas use). Not strict: unknown keywords are annotations.
 * Patterns of the schemas it compiles run in linear time (`linearRegExp`); the meta-schemas' own patterns (of `$id`,
 * `$anchor`, `$dynamicAnchor`; linear by their form) are precompiled with JavaScript's (protocol/meta-schemas.ts).
 */
export function schemaAjv(): Ajv2020 {
  // `addUsedSchema: false`: a compiled schema's `$id` is not registered, so schemas of different plugins (or one naming
  // a meta-schema's id) never collide in the Ajv they share (tests/tool-schema-ids.test.ts).
  const a = new Ajv2020({ strict: false, allErrors: false, addUsedSchema: false, code: { regExp: linearRegExp } });
  // Not checked against itself (Ajv would compile draft-07's validator to check its own meta-schema): it is Ajv's.
  a.addMetaSchema(draft07MetaSchema, undefined, false);
  return usePrecompiledMetaSchemas(a);
}

/** Made at the first check (a process that checks none makes none). */
let ajv: Ajv2020 | null = null;
let cache = new Map<string, ValidateFunction>();

/**
 * Whether a call's `args` (from `--args`, an agent, a workflow) stay within the limits every later step relies on —
 * nested at most `argumentsDepthMax` deep (checked first, without recursion), at most `argumentsMaxBytes` as JSON — of
 * every kind of plugin, before the schema check, the digest, the redaction or the plugin's own parser reads them.
 * @returns null when they do, else one message naming the field and the limit, in `lang`.
 */
export function argumentsBeyondLimits(args: unknown, lang: Lang): string | null {
  const rough = roughlyBeyond(args);
  if (rough === "deep") return t(lang, "tools.manifest.tooDeep", { field: "arguments", limit: argumentsDepthMax });
  if (rough === "large") return t(lang, "tools.call.argumentsTooLarge", { limit: argumentsMaxBytes });
  // Within the bound below, so serialising costs at most a few times the limit.
  const json = JSON.stringify(args) ?? "";
  // Bytes are never fewer than UTF-16 code units / 3 nor more than 3 per unit: count only near the limit.
  const over = json.length > argumentsMaxBytes || (json.length * 3 > argumentsMaxBytes && Buffer.byteLength(json, "utf8") > argumentsMaxBytes);
  return over ? t(lang, "tools.call.argumentsTooLarge", { limit: argumentsMaxBytes }) : null;
}

/**
 * One walk of `args` without recursion, stopping at the first limit passed: `deep` (nested deeper than
 * `argumentsDepthMax`) or `large` (more than `argumentsMaxBytes` as JSON by a lower bound of its size: each string's
 * code units and quotes, each key with its quotes and colon, each array's commas, one byte for any other value), else
 * null. Arguments of
 * 600,000 keys took seconds of the hub's thread when serialised whole first (hostile round 41, F41a-1).
 */
function roughlyBeyond(args: unknown): "deep" | "large" | null {
  const values: unknown[] = [args];
  const depths: number[] = [1];
  let bytes = 0;
  while (values.length > 0) {
    const v = values.pop();
    const depth = depths.pop()!;
    if (typeof v === "string") bytes += v.length + 2;
    else if (typeof v === "object" && v !== null) {
      if (depth > argumentsDepthMax) return "deep";
      bytes += 2;
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) {
          values.push(v[i]);
          depths.push(depth + 1);
          if (i > 0 && ++bytes > argumentsMaxBytes) return "large"; // the comma
        }
      } else {
        for (const key in v) {
          const inner = (v as Record<string, unknown>)[key];
          if (!Object.hasOwn(v, key) || inner === undefined) continue; // left out by JSON.stringify
          values.push(inner);
          depths.push(depth + 1);
          bytes += key.length + 3;
          if (bytes > argumentsMaxBytes) return "large";
        }
      }
    } else if (v !== undefined) bytes += 1;
    if (bytes > argumentsMaxBytes) return "large";
  }
  return null;
}

/**
 * Checks `args` against `schema`. @param key identifies the schema (digest + tool) for the cache.
 * @returns null when they fit, else one message naming the field (`name: required`), in `lang`.
 */
export function checkArguments(key: string, schema: Record<string, unknown>, args: unknown, lang: Lang): string | null {
  let fn = cache.get(key);
  if (!fn) {
    if (cache.size >= compiledSchemasMax || !ajv) {
      ajv = schemaAjv();
      cache = new Map();
    }
    try {
      fn = ajv.compile(schema);
    } catch (e) {
      // A schema that compiled at load always compiles again; one from tools/list was checked too. Still: no crash.
      return (e as Error).message;
    }
    cache.set(key, fn);
  }
  if (fn(args)) return null;
  const first = fn.errors?.[0];
  return first ? describeError(first, lang).replace(/^body(?=:)/, "arguments") : "invalid";
}
