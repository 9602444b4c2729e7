/**
 * Typed readers for the tables of a parsed manifest: each reads one field, fills its default, and records a problem
 * naming the key and its line when the field is missing, of the wrong type, out of range, or unknown. The manifest
 * validator (manifest.ts) is written with these.
 */
import { t, type Lang, type MessageId } from "../i18n/messages.js";
import { keyPath, lineOf, type LineIndex } from "./toml-lines.js";
import { manifestArrayItemsMax, manifestItemMaxChars } from "./limits.js";
import type { ManifestProblem } from "./types.js";

export type Table = Record<string, unknown>;
type Path = (string | number)[];

/** A plain table of the parsed document (not an array, not a date). */
export function isTable(v: unknown): v is Table {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** Collects problems for one manifest; every reader returns a usable value (the default) even after a problem. */
export class Checker {
  readonly problems: ManifestProblem[] = [];

  constructor(readonly lang: Lang, private readonly lines: LineIndex) {}

  /** Records a problem at `path` with a catalog message whose `{field}` is the key. */
  add(path: Path, id: MessageId, params: Record<string, string | number> = {}): void {
    const key = keyPath(path);
    this.problems.push({ key, line: lineOf(this.lines, key), message: t(this.lang, id, { field: key, ...params }) });
  }

  /** Refuses every key of `table` not in `known`. */
  known(table: Table, path: Path, known: readonly string[]): void {
    for (const k of Object.keys(table)) if (!known.includes(k)) this.add([...path, k], "field.unknown");
  }

  /** A sub-table; absent → null (or a problem when `required`); present but not a table → a problem and null. */
  table(parent: Table, path: Path, field: string, required = false): Table | null {
    const v = parent[field];
    if (v === undefined) {
      if (required) this.add([...path, field], "field.required");
      return null;
    }
    if (!isTable(v)) {
      this.add([...path, field], "field.type", { type: "table" });
      return null;
    }
    return v;
  }

  /** A string of `min`..`max` characters (after trimming, for the blank check); absent → `fallback` or a problem. */
  str(parent: Table, path: Path, field: string, opts: { min?: number; max: number; fallback?: string }): string {
    const v = parent[field];
    const key = [...path, field];
    if (v === undefined) {
      if (opts.fallback === undefined) this.add(key, "field.required");
      return opts.fallback ?? "";
    }
    if (typeof v !== "string") {
      this.add(key, "field.type", { type: "string" });
      return opts.fallback ?? "";
    }
    if ((opts.min ?? 0) > 0 && v.trim().length === 0) this.add(key, "field.minLength");
    else if ([...v].length > opts.max) this.add(key, "field.maxLength", { limit: opts.max });
    return v;
  }

  /** An integer in `min`..`max`; absent → `fallback` (null = optional without default). */
  int<F extends number | null>(parent: Table, path: Path, field: string, min: number, max: number, fallback: F): number | F {
    const v = parent[field];
    const key = [...path, field];
    if (v === undefined) return fallback;
    if (typeof v !== "number" || !Number.isInteger(v)) {
      this.add(key, "field.type", { type: "integer" });
      return fallback;
    }
    if (v < min || v > max) {
      this.add(key, "tools.manifest.between", { min, max });
      return fallback;
    }
    return v;
  }

  /** A boolean; absent → `fallback`. */
  bool(parent: Table, path: Path, field: string, fallback: boolean): boolean {
    const v = parent[field];
    if (v === undefined) return fallback;
    if (typeof v !== "boolean") {
      this.add([...path, field], "field.type", { type: "boolean" });
      return fallback;
    }
    return v;
  }

  /** One of `values`; absent → `fallback` (undefined = required). */
  oneOf<T extends string>(parent: Table, path: Path, field: string, values: readonly T[], fallback?: T): T {
    const v = parent[field];
    const key = [...path, field];
    if (v === undefined) {
      if (fallback === undefined) this.add(key, "field.required");
      return fallback ?? values[0]!;
    }
    if (typeof v !== "string" || !values.includes(v as T)) {
      this.add(key, "field.enum", { values: values.map((x) => `"${x}"`).join(", ") });
      return fallback ?? values[0]!;
    }
    return v as T;
  }

  /** An array of strings (each at most `manifestItemMaxChars`, at most `manifestArrayItemsMax` of them). */
  strings(parent: Table, path: Path, field: string, fallback: string[] = []): string[] {
    const v = parent[field];
    const key = [...path, field];
    if (v === undefined) return [...fallback];
    if (!Array.isArray(v)) {
      this.add(key, "field.type", { type: "array of strings" });
      return [...fallback];
    }
    if (v.length > manifestArrayItemsMax) {
      this.add(key, "field.maxItems", { limit: manifestArrayItemsMax });
      return [...fallback];
    }
    const out: string[] = [];
    v.forEach((item, i) => {
      if (typeof item !== "string") this.add([...key, i], "field.type", { type: "string" });
      else if ([...item].length > manifestItemMaxChars) this.add([...key, i], "field.maxLength", { limit: manifestItemMaxChars });
      else out.push(item);
    });
    return out;
  }
}
