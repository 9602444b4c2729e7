/**
 * The client's check of what a hub answers, against the published answer shapes (responses.ts), with validators
 * compiled ahead of time (responses.generated.ts): what passes is typed by the contract, never cast by the caller.
 * Unknown fields pass (protocol.md 版本与兼容: clients ignore what they do not know).
 */
import type { ErrorObject } from "ajv";
import type { Static } from "@sinclair/typebox";
import type { responseDefinitions } from "./responses.js";
import * as validators from "./responses.generated.js";
import { fieldName } from "./describe.js";

/** An answer shape clients check (compiled ahead of time by `npm run schema`). */
export type CheckedResponse = keyof typeof validators & keyof typeof responseDefinitions;
/** The value an answer shape describes. */
export type ResponseShape<N extends CheckedResponse> = Static<(typeof responseDefinitions)[N]>;
type CompiledValidator = ((value: unknown) => boolean) & { errors?: ErrorObject[] | null };

/** An answer that does not match its shape: the field (as `runs[0].state`) and Ajv's error for it. */
export interface Mismatch { field: string; error: ErrorObject }

/**
 * Checks `value` against the answer shape `name`. Never throws.
 * @returns the value typed by its shape, or where it first differs.
 */
export function checkResponse<N extends CheckedResponse>(name: N, value: unknown): { ok: true; value: ResponseShape<N> } | ({ ok: false } & Mismatch) {
  const fn = validators[name] as CompiledValidator;
  if (fn(value)) return { ok: true, value: value as ResponseShape<N> };
  const error = fn.errors?.[0] ?? { instancePath: "", keyword: "invalid", schemaPath: "", params: {} };
  const missing = error.keyword === "required" ? String((error.params as { missingProperty?: unknown }).missingProperty) : undefined;
  return { ok: false, field: fieldName(error.instancePath, missing), error };
}

/** The value when it matches the answer shape `name`, else undefined (for reading facts' rows, which may be older). */
export function asShape<N extends CheckedResponse>(name: N, value: unknown): ResponseShape<N> | undefined {
  const checked = checkResponse(name, value);
  return checked.ok ? checked.value : undefined;
}
