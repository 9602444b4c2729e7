/**
 * Input validation of the hub, driven by the same schemas that are published in protocol/schema.json.
 * Lengths are counted in Unicode code points (Ajv's default `unicode: true`).
 */
import type { ErrorObject } from "ajv";
import type { Static } from "@sinclair/typebox";
import type { definitions } from "./schema.js";
import * as validators from "./validators.generated.js";
import { t, type Lang } from "../i18n/messages.js";

/** A definition the hub validates input with (compiled ahead of time by `npm run schema`). */
export type Validated = keyof typeof validators & keyof typeof definitions;
/** The value a definition describes. */
export type Shape<N extends Validated> = Static<(typeof definitions)[N]>;
type CompiledValidator = ((value: unknown) => boolean) & { errors?: ErrorObject[] | null };

/** The outcome of a validation: the typed value, or one error text naming the field. */
export type Checked<T> = { ok: true; value: T } | { ok: false; error: string };

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
      const what = (e.parentSchema as { description?: string } | undefined)?.description ?? String(p.pattern);
      return t(lang, "field.pattern", { field: fieldName(e.instancePath), what });
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
 * Picks the most telling error of a failed `anyOf`: Ajv reports each branch's first error, then `anyOf`; the branch
 * that got furthest into the value (the deepest field) is the one the sender meant, e.g. `later[0].cancel` for
 * `{"key":"k","cancel":false}` rather than the other branch's missing `at`. Ties keep Ajv's order.
 */
function firstError(errors: ErrorObject[]): ErrorObject {
  const depth = (e: ErrorObject) => e.instancePath.split("/").length;
  const branches = errors.filter((e) => e.keyword !== "anyOf");
  return branches.reduce<ErrorObject | undefined>((best, e) => (best === undefined || depth(e) > depth(best) ? e : best), undefined) ?? errors[0]!;
}

/**
 * Validates `value` against the protocol definition `name` (protocol/schema.json `$defs`). Never throws for bad input.
 * @returns `{ok:true, value}` or `{ok:false, error}` with one message naming the field, in `lang`.
 */
export function check<N extends Validated>(name: N, value: unknown, lang: Lang): Checked<Shape<N>> {
  const fn = validators[name] as CompiledValidator;
  if (fn(value)) return { ok: true, value: value as Shape<N> };
  return { ok: false, error: describeError(firstError(fn.errors ?? []), lang) };
}

/** Whether a string with an ISO date-time names a real instant (`2026-02-30T…` does not). */
export function isRealIsoDate(s: string): boolean {
  const ms = Date.parse(s);
  if (!Number.isFinite(ms)) return false;
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})/.exec(s);
  if (!m) return false;
  const [y, mo, d, h, mi] = m.slice(1).map(Number) as [number, number, number, number, number];
  const days = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  return mo >= 1 && mo <= 12 && d >= 1 && d <= days && h <= 23 && mi <= 59;
}
