/**
 * Checking a call's arguments against its tool's JSON Schema (Ajv, draft 2020-12) before anything starts: arguments
 * that fail are refused and the plugin is not started (issue 16). Compiled schemas are cached by manifest digest and
 * tool name; the cache is bounded and starts over when full.
 */
import { createRequire } from "node:module";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { RE2JS } from "re2js";
import { describeError, nestedDeeperThan } from "../protocol/validate.js";
import { t, type Lang } from "../i18n/messages.js";
import { argumentsDepthMax, argumentsMaxBytes } from "./limits.js";

/** Compiled argument schemas kept at once. */
const compiledSchemasMax = 1000;

/** Draft-07's meta-schema: MCP servers' tool schemas often name it in `$schema` (zod's output does). */
const draft07 = createRequire(import.meta.url)("ajv/dist/refs/json-schema-draft-07.json") as Record<string, unknown>;

/**
 * The regular-expression engine of argument schemas (`pattern`, `patternProperties`, `propertyNames`): RE2's
 * linear-time matching (re2js), never JavaScript's backtracking one — a plugin's schema is the plugin's, the string
 * the agent's or a source's, and the check runs in the hub's thread (issue 26 round 29, F29b-3: `^(a+)+$` against 28
 * `a`s and a `!` held every route 8.6 s, each more character doubling it). A pattern RE2 cannot run (a lookaround, a
 * backreference) is not checked by the hub: the plugin gets the arguments and checks them itself (tool-plugins.md).
 */
const linearRegExp = Object.assign((pattern: string): { test(s: string): boolean; toString(): string } => {
  // Ajv keeps one compiled expression per `toString()`: each must say its own pattern.
  try {
    const re = RE2JS.compile(pattern);
    return { test: (s: string) => re.test(s), toString: () => `/${pattern}/` };
  } catch {
    return { test: () => true, toString: () => `unchecked /${pattern}/` };
  }
}, { code: "linearRegExp" });

/**
 * An Ajv for tool argument schemas: draft 2020-12, also accepting schemas that declare draft-07 (compiled with 2020
 * rules, which agree with draft-07 on everything tool schemas use). Not strict: unknown keywords are annotations.
 * Patterns run in linear time (`linearRegExp`).
 */
export function schemaAjv(): Ajv2020 {
  const a = new Ajv2020({ strict: false, allErrors: false, code: { regExp: linearRegExp } });
  a.addMetaSchema(draft07);
  return a;
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
  if (nestedDeeperThan(args, argumentsDepthMax)) return t(lang, "tools.manifest.tooDeep", { field: "arguments", limit: argumentsDepthMax });
  const json = JSON.stringify(args) ?? "";
  // Bytes are never fewer than UTF-16 code units / 3 nor more than 3 per unit: count only near the limit.
  const over = json.length > argumentsMaxBytes || (json.length * 3 > argumentsMaxBytes && Buffer.byteLength(json, "utf8") > argumentsMaxBytes);
  return over ? t(lang, "tools.call.argumentsTooLarge", { limit: argumentsMaxBytes }) : null;
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
