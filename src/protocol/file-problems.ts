/**
 * The one way a file a person writes (rules.json, config.json, manifest.toml) is checked against its schema and its
 * problems told (issue 27 "One way to check files"): Ajv's errors become catalog messages, each at a path of the file;
 * the file's reader (jsonc-parser for JSON, toml-eslint-parser for TOML) turns the path into a line and column.
 *
 * A schema node says which catalog message explains each of its keywords in `x-messages` (an annotation JSON Schema
 * allows and editors ignore): `{ "pattern": "rulesJson.envName" }`, or `[id, params]` when the message has numbers
 * of its own. A keyword the node does not name takes the file's default (`KeywordMessages`). Every message gets
 * `{field}` (the path as people write it: `rules[0].when.source`) and the keyword's numbers (`{max}`, `{limit}`,
 * `{known}`, `{values}`, `{type}`).
 */
import type { ErrorObject } from "ajv";
import type { MessageId } from "../i18n/messages.js";

/** A place in a file's value: object keys and array indexes (an index is a number only inside an array). */
export type FilePath = (string | number)[];
/** The annotation a schema node names its messages in. */
export const messagesKeyword = "x-messages";

/** A message of the catalog with its parameters. */
export type Message = MessageId | readonly [MessageId, Readonly<Record<string, string | number>>];
/** Messages by JSON Schema keyword (`type` may also be keyed `type:string`, `type:array`, … for the file's default). */
export type KeywordMessages = Readonly<Partial<Record<string, Message>>>;

/**
 * One problem of a file: what (`id`, `params`, from the catalog), where (`path`; `key` when it is about the key at
 * `path` rather than its value, as a name over a limit of names), and which keyword of the schema found it.
 */
export interface FileProblem {
  path: FilePath;
  id: MessageId;
  params: Record<string, string | number>;
  keyword: string;
  key: boolean;
}

/** `a.b[0].c` for `["a", "b", 0, "c"]` (an index in brackets), as rules.json and manifest messages name fields. */
export function fieldPath(path: readonly (string | number)[]): string {
  let out = "";
  for (const p of path) out += typeof p === "number" ? `[${p}]` : out ? `.${p}` : p;
  return out;
}

/** The path of an Ajv instance pointer in `data`: a segment is an index only where the value there is an array. */
export function pathOf(pointer: string, data: unknown): FilePath {
  const out: FilePath = [];
  let at: unknown = data;
  for (const raw of pointer === "" ? [] : pointer.slice(1).split("/")) {
    const segment = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    const index = Array.isArray(at) ? Number(segment) : null;
    out.push(index ?? segment);
    at = at !== null && typeof at === "object" ? (at as Record<string, unknown>)[segment] : undefined;
  }
  return out;
}

type Node = Record<string, unknown> | undefined;

function messagesOf(schema: Node): KeywordMessages {
  return ((schema?.[messagesKeyword] as KeywordMessages | undefined) ?? {});
}

/** Keywords in the order a person fixes them at one place: its type first, then what is missing, then its form. */
const keywordRank = [
  "type", "required", "additionalProperties", "propertyNames", "not", "pattern", "maxLength", "minLength", "enum", "const",
  "minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "maxItems", "minItems", "maxProperties", "uniqueItems",
];

function rank(keyword: string): number {
  const i = keywordRank.indexOf(keyword);
  return i < 0 ? keywordRank.length : i;
}

/**
 * Ajv's errors (compiled with `allErrors` and `verbose`) for `data` as problems, one per place (the first by
 * `keywordRank`), in Ajv's order otherwise. `defaults` word the keywords no schema node names.
 */
export function fileProblems(errors: readonly ErrorObject[], data: unknown, defaults: KeywordMessages): FileProblem[] {
  const out: FileProblem[] = [];
  for (const e of errors) {
    const problem = problemOf(e, data, defaults);
    if (problem === null) continue;
    const same = out.findIndex((p) => fieldPath(p.path) === fieldPath(problem.path) && p.key === problem.key);
    if (same < 0) out.push(problem);
    else if (rank(problem.keyword) < rank(out[same]!.keyword)) out[same] = problem;
  }
  return out;
}

/** One Ajv error as a problem, or null for the summary errors Ajv adds beside the real ones (`propertyNames`). */
function problemOf(e: ErrorObject, data: unknown, defaults: KeywordMessages): FileProblem | null {
  const parent = e.parentSchema as Node;
  const p = e.params as Record<string, unknown>;
  const base = pathOf(e.instancePath, data);
  let path = base;
  let own = messagesOf(parent);
  let key = false;
  const params: Record<string, string | number> = {};
  if (e.keyword === "propertyNames") return null;
  if (e.propertyName !== undefined) {
    // An error of a key's name (`propertyNames`): about the key, at the entry it names.
    path = [...base, e.propertyName];
    key = true;
  } else if (e.keyword === "required") {
    const missing = String(p.missingProperty);
    path = [...base, missing];
    const properties = parent?.properties as Record<string, Node> | undefined;
    own = { ...own, ...pick(messagesOf(properties?.[missing]), "required") };
  } else if (e.keyword === "additionalProperties") {
    path = [...base, String(p.additionalProperty)];
    params.known = Object.keys((parent?.properties as object | undefined) ?? {}).join(", ");
  }
  if (typeof p.limit === "number") Object.assign(params, { max: p.limit, limit: p.limit });
  if (p.allowedValues !== undefined) params.values = (p.allowedValues as unknown[]).filter((v) => v !== null).map((v) => JSON.stringify(v)).join(", ");
  const types = Array.isArray(p.type) ? (p.type as string[]) : String(p.type ?? "").split(",");
  if (e.keyword === "type") params.type = types[0]!;
  const message = own[e.keyword] ?? (e.keyword === "type" ? defaults[`type:${types[0]}`] : undefined) ?? defaults[e.keyword] ?? defaults.other!;
  const [id, extra] = typeof message === "string" ? [message as MessageId, {}] : message;
  return { path, id, params: { field: fieldPath(path), ...params, ...extra }, keyword: e.keyword, key };
}

function pick(messages: KeywordMessages, keyword: string): KeywordMessages {
  return messages[keyword] === undefined ? {} : { [keyword]: messages[keyword] };
}

/**
 * 1-based line and column (in UTF-16 code units, as editors count) of a UTF-16 offset in `text`.
 */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  const lines = text.slice(0, offset).split("\n");
  return { line: lines.length, column: lines[lines.length - 1]!.length + 1 };
}
