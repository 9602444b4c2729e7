/**
 * Lookups by name in plain records. Names of sources, agents, channels and workers are chosen by people and may be
 * any property name every JavaScript object inherits ("constructor", "toString", …): a plain `record[name]` would
 * find the inherited function instead of nothing. Every lookup keyed by such a name goes through `own`.
 */

/** `record[key]` when `key` is the record's own property, else undefined (never an inherited one). */
export function own<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
