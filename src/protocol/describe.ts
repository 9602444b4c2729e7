/**
 * Ajv's errors as people read them: the field named as in the body (`ask[0].title`), the problem from the message
 * catalog. Shared by the hub's input validation (validate.ts) and the client's check of answers (response-check.ts).
 */
import type { ErrorObject } from "ajv";
import { render, said, type Lang, type Said } from "../i18n/messages.js";

/** Turns an Ajv instance path (`/ask/0/title`) into a field name people read (`ask[0].title`). */
export function fieldName(instancePath: string, extra?: string): string {
  const parts = instancePath.split("/").slice(1).map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
  if (extra !== undefined) parts.push(extra);
  let out = "";
  for (const p of parts) out += /^\d+$/.test(p) ? `[${p}]` : out ? `.${p}` : p;
  return out || "body";
}

/** Formats the first Ajv error as a catalog message naming the field, in `lang`. */
export function describeError(e: ErrorObject, lang: Lang): string {
  return render(lang, saidError(e));
}

/** The first Ajv error as a text as data (issue 27 #2): a catalog message naming the field, with its params. */
export function saidError(e: ErrorObject): Said {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case "required":
      return said("field.required", { field: fieldName(e.instancePath, String(p.missingProperty)) });
    case "additionalProperties":
      return said("field.unknown", { field: fieldName(e.instancePath, String(p.additionalProperty)) });
    case "type":
      return said("field.type", { field: fieldName(e.instancePath), type: String(p.type) });
    case "maxLength":
      return said("field.maxLength", { field: fieldName(e.instancePath), limit: Number(p.limit) });
    case "minLength":
      return said("field.minLength", { field: fieldName(e.instancePath) });
    case "pattern": {
      return said("field.pattern", { field: fieldName(e.instancePath), what: patternWhat(e) });
    }
    case "const":
    case "enum":
      return said("field.enum", { field: fieldName(e.instancePath), values: JSON.stringify(p.allowedValue ?? p.allowedValues) });
    case "maximum":
    case "minimum":
      return said("field.range", { field: fieldName(e.instancePath) });
    case "maxItems":
      return said("field.maxItems", { field: fieldName(e.instancePath), limit: Number(p.limit) });
    case "minItems":
      return said("field.minItems", { field: fieldName(e.instancePath), limit: Number(p.limit) });
    default:
      return said("field.invalid", { field: fieldName(e.instancePath) });
  }
}

/**
 * What the string pattern of a failed `pattern` check asks for: the message its schema names in `x-text`
 * (`patternText`, src/protocol/shapes.ts), else the schema's own `description` (a plugin's own schema), else the
 * pattern itself. tests/pattern-texts.test.ts checks that every pattern of our schemas names its message.
 */
export function patternWhat(e: ErrorObject): Said | string {
  const schema = e.parentSchema as { description?: string; "x-text"?: Said } | undefined;
  return schema?.["x-text"] ?? schema?.description ?? String(e.params.pattern);
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

