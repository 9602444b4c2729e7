/**
 * Input validation of the hub, driven by the same schemas that are published in protocol/schema.json.
 * Lengths are counted in Unicode code points (Ajv's default `unicode: true`).
 */
import type { ErrorObject } from "ajv";
import type { Static } from "@sinclair/typebox";
import type { definitions } from "./definitions.js";
import * as validators from "./validators.generated.js";
import { render, said, type Lang, type Said } from "../i18n/messages.js";
import { fieldName, firstError, saidError } from "./describe.js";
import { artifactMaxBytes, claimIdMaxCodepoints, toolResultDepthMax, toolResultMaxBytes } from "../kernel/limits.js";

export { describeError, fieldName, saidError } from "./describe.js";

/** A definition the hub validates input with (compiled ahead of time by `npm run schema`). */
export type Validated = keyof typeof validators & keyof typeof definitions;
/** The value a definition describes. */
export type Shape<N extends Validated> = Static<(typeof definitions)[N]>;
type CompiledValidator = ((value: unknown) => boolean) & { errors?: ErrorObject[] | null };

/**
 * The outcome of a validation: the typed value, or one error naming the field, as text in the caller's language and
 * as data (`text`: its message id and params, what a refusal carries; issue 27 #2).
 */
export type Checked<T> = { ok: true; value: T } | { ok: false; error: string; text: Said };

/** The failed outcome with `text`, worded in `lang`. */
const failed = (text: Said, lang: Lang): { ok: false; error: string; text: Said } => ({ ok: false, error: render(lang, text), text });

/**
 * Validates `value` against the protocol definition `name` (protocol/schema.json `$defs`). Never throws for bad input.
 * @returns `{ok:true, value}` or `{ok:false, error}` with one message naming the field, in `lang`.
 */
export function check<N extends Validated>(name: N, value: unknown, lang: Lang): Checked<Shape<N>> {
  const fn = validators[name] as CompiledValidator;
  if (fn(value)) return { ok: true, value: value as Shape<N> };
  return failed(saidError(firstError(fn.errors ?? [])), lang);
}

/**
 * Validates a query string (every value a string; a value a header gave instead is in it too) against the definition
 * `name`. Never throws. The refusal names the parameter (`query.invalid`); the claim id of GET /v1/work says what a
 * claim id must be.
 * @returns `{ok:true, value}` or `{ok:false, error}` in `lang`.
 */
export function checkQuery<N extends Validated>(name: N, value: Record<string, string>, lang: Lang): Checked<Shape<N>> {
  const fn = validators[name] as CompiledValidator;
  if (fn(value)) return { ok: true, value: value as Shape<N> };
  const e = firstError(fn.errors ?? []);
  const field = e.keyword === "required" ? String(e.params.missingProperty) : fieldName(e.instancePath);
  if (field === "claim") return failed(e.keyword === "pattern" ? said("work.claimControl") : said("work.claim", { limit: claimIdMaxCodepoints }), lang);
  return failed(said("query.invalid", { field }), lang);
}

/** What JSON Schema cannot say about a body, by definition: returns the error, or null. */
type Refinements = { [N in Validated]?: (value: Shape<N>) => Said | null };

const realDate = (field: string) => said("field.pattern", { field, what: said("field.isoTime") });
const recommendOut = (field: string) => said("field.range", { field });

/** A `later.at` or pause `until` that names a real instant; an ask's `recommend` that is one of its options. */
const refinements: Refinements = {
  Result: (b) => {
    const later = (b.later ?? []).findIndex((l) => "at" in l && !isRealIsoDate(l.at));
    if (later >= 0) return realDate(`later[${later}].at`);
    const ask = (b.ask ?? []).findIndex((a) => a.recommend !== undefined && a.recommend >= a.options.length);
    return ask >= 0 ? recommendOut(`ask[${ask}].recommend`) : null;
  },
  TellBody: (b) => (b.ask?.recommend !== undefined && b.ask.recommend >= b.ask.options.length ? recommendOut("ask.recommend") : null),
  PauseBody: (b) => (typeof b.until === "string" && !isRealIsoDate(b.until) ? realDate("until") : null),
  ArtifactBody: (b) => (Buffer.byteLength(b.text, "utf8") > artifactMaxBytes ? said("artifact.tooLarge", { limit: artifactMaxBytes }) : null),
  // Depth first: a value nested too deep must not reach JSON.stringify (it recurses) to have its size measured.
  PluginCallbackBody: (b) => {
    if (b.result === undefined) return null;
    if (nestedDeeperThan(b.result, toolResultDepthMax)) return said("tools.callback.tooDeep", { limit: toolResultDepthMax });
    return Buffer.byteLength(JSON.stringify(b.result), "utf8") > toolResultMaxBytes ? said("tools.callback.tooLarge", { limit: toolResultMaxBytes }) : null;
  },
};

/** Whether a parsed JSON value has arrays and objects nested more than `max` deep (the outermost counts 1); no recursion. */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    if (depth > max) return true;
    for (const inner of Object.values(v)) stack.push([inner, depth + 1]);
  }
  return false;
}

/**
 * Validates a request body: `check`, then what the schema cannot say (a real date, a recommended option that exists).
 * Never throws for bad input.
 * @returns `{ok:true, value}` or `{ok:false, error}` with one message naming the field, in `lang`.
 */
export function checkBody<N extends Validated>(name: N, value: unknown, lang: Lang): Checked<Shape<N>> {
  const checked = check(name, value, lang);
  if (!checked.ok) return checked;
  const text = refinements[name]?.(checked.value) ?? null;
  return text === null ? checked : failed(text, lang);
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
