/**
 * Ajv's errors as people read them: the field named as in the body (`ask[0].title`), the problem from the message
 * catalog. Shared by the hub's input validation (validate.ts) and the client's check of answers (response-check.ts).
 */
import type { ErrorObject } from "ajv";
import { localize, t, type Lang } from "../i18n/messages.js";

/** Turns an Ajv instance path (`/ask/0/title`) into a field name people read (`ask[0].title`). */
export function fieldName(instancePath: string, extra?: string): string {
  const parts = instancePath.split("/").slice(1).map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
  if (extra !== undefined) parts.push(extra);
  let out = "";
  for (const p of parts) out += /^\d+$/.test(p) ? `[${p}]` : out ? `.${p}` : p;
  return out || "body";
}

/** Formats the first Ajv error as a catalog message naming the field. */
export function describeError(e: ErrorObject, lang: Lang): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case "required":
      return t(lang, "field.required", { field: fieldName(e.instancePath, String(p.missingProperty)) });
    case "additionalProperties":
      return t(lang, "field.unknown", { field: fieldName(e.instancePath, String(p.additionalProperty)) });
    case "type":
      return t(lang, "field.type", { field: fieldName(e.instancePath), type: String(p.type) });
    case "maxLength":
      return t(lang, "field.maxLength", { field: fieldName(e.instancePath), limit: Number(p.limit) });
    case "minLength":
      return t(lang, "field.minLength", { field: fieldName(e.instancePath) });
    case "pattern": {
      return t(lang, "field.pattern", { field: fieldName(e.instancePath), what: patternWhat(e, lang) });
    }
    case "const":
    case "enum":
      return t(lang, "field.enum", { field: fieldName(e.instancePath), values: JSON.stringify(p.allowedValue ?? p.allowedValues) });
    case "maximum":
    case "minimum":
      return t(lang, "field.range", { field: fieldName(e.instancePath) });
    case "maxItems":
      return t(lang, "field.maxItems", { field: fieldName(e.instancePath), limit: Number(p.limit) });
    case "minItems":
      return t(lang, "field.minItems", { field: fieldName(e.instancePath), limit: Number(p.limit) });
    default:
      return t(lang, "field.invalid", { field: fieldName(e.instancePath) });
  }
}

/**
 * What the string pattern of a failed `pattern` check asks for, in `lang`. A schema's `description` is the English
 * text of a `pattern.*` catalog message (protocol/schema.json publishes the English), shown in `lang` with its numbers
 * kept; a description that is no catalog text (a plugin's own schema) stays as it is, and without one the pattern is
 * shown. tests/pattern-texts.test.ts checks that every pattern of our schemas has its catalog text.
 */
export function patternWhat(e: ErrorObject, lang: Lang): string {
  const description = (e.parentSchema as { description?: string } | undefined)?.description;
  return description === undefined ? String(e.params.pattern) : localize(description, lang);
}

/**
 * Picks the most telling error of a failed `anyOf`: Ajv reports each branch's first error, then `anyOf`; the branch
 * that got furthest into the value (the deepest field) is the one the sender meant, e.g. `later[0].cancel` for
 * `{"key":"k","cancel":false}` rather than the other branch's missing `at`. Ties keep Ajv's order.
 */
export function firstError(errors: ErrorObject[]): ErrorObject {
  const depth = (e: ErrorObject) => e.instancePath.split("/").length;
  const branches = errors.filter((e) => e.keyword !== "anyOf");
  return branches.reduce<ErrorObject | undefined>((best, e) => (best === undefined || depth(e) > depth(best) ? e : best), undefined) ?? errors[0]!;
}

