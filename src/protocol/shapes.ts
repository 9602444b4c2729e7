/**
 * The building blocks of the protocol's answer shapes (responses.ts, responses-runs.ts): TypeBox schemas of the
 * primitive fields, nullable and enumerated values, and references to shared shapes by `$id`.
 */
import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { t, type MessageId, type ParamArg, type Said } from "../i18n/messages.js";
import { lineForbiddenClass, textForbiddenClass } from "../kernel/text.js";

/** A string. */
export const str = () => Type.String();
/** An integer of 0 or more. */
export const int = () => Type.Integer({ minimum: 0 });
/** An id: an integer of 1 or more. */
export const id = () => Type.Integer({ minimum: 1 });
/** A boolean. */
export const bool = () => Type.Boolean();
/** An ISO 8601 time in UTC. */
export const iso = () => Type.String({ description: "an ISO 8601 time in UTC" });
/** A value of `t` or null: `type: [..., "null"]` for a string, integer or boolean (compiled far smaller than `anyOf`). */
export const orNull = <T extends TSchema>(t: T) =>
  typeof t.type === "string" && t.type !== "object" && t.type !== "array"
    ? Type.Unsafe<Static<T> | null>({ ...t, type: [t.type, "null"] })
    : Type.Union([t, Type.Null()]);
/** A string that is one of `values` (published as `enum`). */
export const oneOf = <T extends string>(values: readonly T[]) => Type.Unsafe<T>({ type: "string", enum: [...values] });
/**
 * A reference to a shape used in more than one answer (it carries `$id`, its name in `$defs`): published and compiled
 * once instead of copied into every answer that holds it.
 */
export const ref = <T extends TSchema>(shape: T) => Type.Unsafe<Static<T>>(Type.Ref(shape.$id!));

/** A message of the catalog that says what a string pattern asks for (the `{what}` of `field.pattern`). */
export type PatternTextId = Extract<MessageId, `pattern.${string}`>;

/**
 * What a string pattern asks for, as a schema's annotations (issue 27 #2): `description` its English text (what
 * protocol/schema.json publishes) and `x-text` its message id and params, which a refusal carries so that every
 * client words it in its own language (`patternWhat`, src/protocol/describe.ts).
 */
export function patternText<I extends PatternTextId>(id: I, ...params: ParamArg<I>): { description: string; "x-text": Said } {
  const [p] = params;
  return { description: t("en", id, ...params), "x-text": p === undefined ? { id } : { id, params: p } };
}

/** One line of text: no control characters (C0, DEL, C1, bidi and line separators; src/kernel/text.ts). */
export const linePattern = `^[^${lineForbiddenClass}]*$`;
/** Free text: line breaks and tabs allowed, no other control characters (they could drive a terminal or hide text). */
export const textPattern = `^[^${textForbiddenClass}]*$`;
/** A string of one line, `min` to `max` code points, no control characters. */
export const line = (max: number, min = 0) => Type.String({ minLength: min, maxLength: max, pattern: linePattern, ...patternText("pattern.noControl") });
/** A string of free text (line breaks and tabs allowed), `min` to `max` code points, no other control characters. */
export const text = (max: number, min = 0) => Type.String({ minLength: min, maxLength: max, pattern: textPattern, ...patternText("pattern.noControlText") });
