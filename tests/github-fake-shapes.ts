/**
 * GitHub's own REST description for the fake GitHub (issue 31): `@octokit/openapi` (pinned in package.json), loaded
 * once and lazily (13 MB), its operations found by method and path, and every request body and response the fake gives
 * validated with Ajv against it.
 *
 * OpenAPI 3.0 is not JSON Schema: `nullable: true` is rewritten once at load as JSON Schema says it
 * (`type: [t, "null"]`, `null` added to an `enum`; `anyOf: [schema, {type: "null"}]` where there is no `type`, as on
 * 135 `$ref`/`allOf` schemas Ajv would otherwise refuse to compile); OpenAPI-only keywords (`example`, `discriminator`,
 * `readOnly`, `x-*`) are ignored (Ajv `strict: false`); formats `date-time`, `date`, `uri` and `email` are checked,
 * `int64` and `uri-template` are not (no check Ajv knows of).
 *
 * `shape(pointer, values)` builds a response body the way GitHub does: every field the description requires, filled
 * from the schema (null where nullable, the first enum value, empty lists), with the fake's real values over it; the
 * result is still validated, so a wrong real value fails the test.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Ajv, type ValidateFunction } from "ajv";

/** An operation of the description: its template path, method and the OpenAPI operation object. */
export interface Operation { template: string; method: string; op: Record<string, any>; pattern: RegExp; literals: number; names: string[] }

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

let loaded: { spec: Json; ajv: Ajv; ops: Operation[] } | null = null;
const compiled = new Map<string, ValidateFunction>();
/** The required fill of each schema built so far (it never changes). */
const samples = new Map<string, Json>();

/** The description's path to the JSON file of `@octokit/openapi`. */
function specFile(): string {
  return createRequire(import.meta.url).resolve("@octokit/openapi/generated/api.github.com.json");
}

/** Rewrites OpenAPI 3.0 `nullable` into JSON Schema in place (see the module comment). */
function denull(node: Json): void {
  if (Array.isArray(node)) { for (const x of node) denull(x); return; }
  if (node === null || typeof node !== "object") return;
  for (const v of Object.values(node)) denull(v);
  if (node.nullable !== true) return;
  delete node.nullable;
  if (typeof node.type === "string") {
    node.type = [node.type, "null"];
    if (Array.isArray(node.enum) && !node.enum.includes(null)) node.enum.push(null);
    return;
  }
  const rest = { ...node };
  for (const k of Object.keys(node)) delete node[k];
  node.anyOf = [rest, { type: "null" }];
}

/** The description, its Ajv and its operations, loaded on first use. */
function load(): { spec: Json; ajv: Ajv; ops: Operation[] } {
  if (loaded) return loaded;
  const spec = JSON.parse(readFileSync(specFile(), "utf8"));
  denull(spec);
  const ajv = new Ajv({ strict: false, validateSchema: false, allErrors: true, logger: false });
  ajv.addFormat("date-time", /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/);
  ajv.addFormat("date", /^\d{4}-\d{2}-\d{2}$/);
  ajv.addFormat("uri", /^[a-z][a-z0-9+.-]*:[^\s]*$/i);
  ajv.addFormat("email", /^[^\s@]+@[^\s@]+$/);
  ajv.addFormat("int64", true);
  ajv.addFormat("uri-template", true);
  ajv.addSchema(spec, "gh");
  const ops: Operation[] = [];
  for (const [template, item] of Object.entries<Json>(spec.paths)) {
    const names: string[] = [];
    const segs = template.split("/").map((s) => {
      const m = /^\{(\w+)\}$/.exec(s);
      if (!m) return s.replace(/[.*+?^$()|[\]\\]/g, "\\$&");
      names.push(m[1]!);
      // `{path}` of contents and `{ref}` of commits may hold slashes; other parameters are one segment
      return m[1] === "path" || m[1] === "ref" ? "(.+)" : "([^/]+)";
    });
    const literals = template.split("/").filter((s) => s && !s.startsWith("{")).length;
    for (const method of ["get", "post", "put", "patch", "delete"]) {
      if (item[method]) ops.push({ template, method: method.toUpperCase(), op: item[method], pattern: new RegExp(`^${segs.join("/")}$`), literals, names });
    }
  }
  // literal segments win over parameters (`/pulls/comments` before `/pulls/{pull_number}`)
  ops.sort((a, b) => b.literals - a.literals);
  loaded = { spec, ajv, ops };
  return loaded;
}

/** The operation `method path` is, with its path parameters (decoded), or null when GitHub has no such request. */
export function findOperation(method: string, path: string): { operation: Operation; params: Record<string, string> } | null {
  for (const operation of load().ops) {
    if (operation.method !== method) continue;
    const m = operation.pattern.exec(path);
    if (!m) continue;
    const params = Object.fromEntries(operation.names.map((n, i) => [n, decodeURIComponent(m[i + 1]!)]));
    return { operation, params };
  }
  return null;
}

const esc = (s: string) => s.replace(/~/g, "~0").replace(/\//g, "~1");

/** A JSON pointer's target in the description, following `$ref`s of response objects. */
function at(pointer: string): Json {
  let node: Json = load().spec;
  for (const part of pointer.replace(/^#\//, "").split("/")) {
    node = node?.[part.replace(/~1/g, "/").replace(/~0/g, "~")];
    while (node && typeof node.$ref === "string" && !node.type) node = at(node.$ref);
  }
  return node;
}

/** The validator of the schema at `pointer` (`#/components/schemas/…` or a response schema), compiled once. */
function validator(pointer: string): ValidateFunction {
  let v = compiled.get(pointer);
  if (!v) {
    v = load().ajv.getSchema(`gh${pointer}`);
    if (!v) throw new Error(`no schema at ${pointer}`);
    compiled.set(pointer, v);
  }
  return v;
}

/** The JSON Schema pointer of the response `status` of an operation, or null when it has no JSON body there. */
function responsePointer(operation: Operation, status: number): string | null {
  const base = `#/paths/${esc(operation.template)}/${operation.method.toLowerCase()}/responses`;
  let response = operation.op.responses?.[String(status)];
  if (!response) return null;
  let pointer = `${base}/${status}`;
  if (typeof response.$ref === "string") { pointer = response.$ref; response = at(response.$ref); }
  if (!response?.content?.["application/json"]?.schema) return null;
  return `${pointer}/content/${esc("application/json")}/schema`;
}

/**
 * Why a response of `operation` with `status` and `body` is not what the description allows, or null when it is.
 * A status the operation does not document is a fault; so is a body where it documents none.
 */
export function responseFault(operation: Operation, status: number, body: unknown): string | null {
  if (!operation.op.responses?.[String(status)]) return `${operation.method} ${operation.template}: status ${status} is not documented`;
  const pointer = responsePointer(operation, status);
  if (pointer === null) return body === undefined ? null : `${operation.method} ${operation.template} ${status}: no body is documented`;
  const v = validator(pointer);
  if (v(body)) return null;
  return `${operation.method} ${operation.template} ${status}: ${load().ajv.errorsText(v.errors, { dataVar: "body" }).slice(0, 2000)}`;
}

/** Why a JSON request body does not fit the operation's request body schema, or null when it does (or has none). */
export function requestFault(operation: Operation, body: unknown): string | null {
  const rb = operation.op.requestBody;
  if (!rb) return body === undefined ? null : `${operation.method} ${operation.template}: takes no body`;
  const pointer = `#/paths/${esc(operation.template)}/${operation.method.toLowerCase()}/requestBody/content/${esc("application/json")}/schema`;
  if (!at(pointer)) return null;
  if (body === undefined) return rb.required ? `${operation.method} ${operation.template}: a body is required` : null;
  const v = validator(pointer);
  return v(body) ? null : `${operation.method} ${operation.template} request: ${load().ajv.errorsText(v.errors, { dataVar: "body" })}`;
}

/** The fill of a schema's required fields (see the module comment). */
function sample(schema: Json, depth = 0): Json {
  if (depth > 12 || !schema) return null;
  if (schema.$ref) return sample(at(schema.$ref), depth + 1);
  if (schema.allOf) return Object.assign({}, ...schema.allOf.map((s: Json) => sample(s, depth + 1)));
  if (schema.anyOf || schema.oneOf) {
    const options: Json[] = schema.anyOf ?? schema.oneOf;
    return options.some((o) => o.type === "null") ? null : sample(options[0], depth + 1);
  }
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const type = Array.isArray(schema.type) ? (schema.type.includes("null") ? "null" : schema.type[0]) : schema.type;
  switch (type) {
    case "null": return null;
    case "object": {
      const out: Json = {};
      for (const k of schema.required ?? []) out[k] = sample(schema.properties?.[k] ?? {}, depth + 1);
      return out;
    }
    case "array": return [];
    case "integer": case "number": return schema.minimum ?? 0;
    case "boolean": return false;
    case "string": {
      if (schema.format === "date-time") return "2026-01-01T00:00:00Z";
      if (schema.format === "date") return "2026-01-01";
      if (schema.format === "uri") return "https://api.github.com/";
      if (schema.format === "email") return "nobody@example.com";
      return "";
    }
    default: return schema.properties ? sample({ ...schema, type: "object" }, depth) : null;
  }
}

/** `over` laid on `base`: plain objects merge key by key, anything else (arrays too) replaces. */
function overlay(base: Json, over: Json): Json {
  if (over === undefined) return base;
  if (base && over && typeof base === "object" && typeof over === "object" && !Array.isArray(base) && !Array.isArray(over)) {
    const out = { ...base };
    for (const [k, v] of Object.entries(over)) out[k] = overlay(base[k], v);
    return out;
  }
  return over;
}

/**
 * A body of the schema `#/components/schemas/<name>` with `values` laid over the required fill.
 * @throws Error when the result does not fit the schema (a fake's bug, caught at once).
 */
export function shape(name: string, values: Json): Json {
  const pointer = `#/components/schemas/${name}`;
  let fill = samples.get(name);
  if (fill === undefined) samples.set(name, (fill = sample(at(pointer))));
  const body = overlay(structuredClone(fill), values);
  const v = validator(pointer);
  if (!v(body)) throw new Error(`fake GitHub built a ${name} the description refuses: ${load().ajv.errorsText(v.errors, { dataVar: name })}`);
  return body;
}
