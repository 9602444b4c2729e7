/**
 * TypeBox helpers of the schemas of the files a person writes (rules-schema.ts, config-schema.ts,
 * src/tools/manifest-schema.ts). Those modules build the published schemas at `npm run schema` and in tests; what reads a
 * file at run time imports only their types and the compiled validators, so a starting hub, worker or CLI loads no
 * TypeBox (tests/lean-start.test.ts). Keep runtime values a reader needs out of the schema modules.
 */
import { Type, type Static, type TSchema, type TUnsafe } from "@sinclair/typebox";

/** `schema` or `null` ("not given"), as one node (`type: [T, "null"]`): no `anyOf`, so an error names one place. */
export function nullable<T extends TSchema>(schema: T): TUnsafe<Static<T> | null> {
  const s = schema as unknown as Record<string, unknown>;
  const copy: Record<string, unknown> = { ...s, type: [s.type, "null"] };
  if (Array.isArray(s.enum)) copy.enum = [...(s.enum as unknown[]), null];
  return Type.Unsafe<Static<T> | null>(copy);
}

/** An object of entries by name: `entry` for each, names as `names` says (a JSON Schema `propertyNames`). */
export function record<T extends TSchema>(entry: T, options: Record<string, unknown>): TUnsafe<Record<string, Static<T>>> {
  return Type.Unsafe<Record<string, Static<T>>>({ type: "object", ...options, additionalProperties: entry });
}
