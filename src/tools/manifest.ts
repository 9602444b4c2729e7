/**
 * Reading a tool plugin's manifest (spec tool-plugins.md §2, and manifest versions 2 and 3 of the public
 * implementation): TOML read by the one TOML reader (toml.ts), checked against the published schema
 * (manifest-schema.ts, protocol/manifest.schema.json) and by hand for what a schema cannot say (manifest-rules.ts) —
 * every problem named with its key, line and column — then migrated in memory to version 3, every default filled in.
 * Reading never runs plugin code.
 */
import { createHash } from "node:crypto";
import { lstatSync } from "node:fs";
import { join } from "node:path";
import type { ErrorObject } from "ajv";
import { t, type Lang, type MessageId, render } from "../i18n/messages.js";
import { readToml, placeOf } from "./toml.js";
import { fieldPath, fileProblems, type FilePath, type KeywordMessages } from "../protocol/file-problems.js";
import type { ManifestFile } from "./manifest-schema.js";
import { validate as validateManifestFile } from "./manifest-validator.generated.js";
import { handProblems, isTable, manifestOf } from "./manifest-rules.js";
import { manifestDepthMax, manifestMaxBytes, manifestVersionMax } from "./limits.js";
import type { Manifest, ManifestProblem } from "./types.js";

export { checkSchema, isTable, knownHooks, type Table } from "./manifest-rules.js";
/** Plugin names and tool names: as rules.json names them (`<plugin>.<tool>`), defined once in the kernel. */
export { toolPluginNamePattern as pluginNamePattern, toolNamePattern } from "../kernel/names.js";

/** How manifest keywords are worded where a node names no message of its own (the `{field}` texts of the catalog). */
const manifestMessages: KeywordMessages = {
  "type:object": ["field.type", { type: "table" }], type: "field.type", required: "field.required", additionalProperties: "field.unknown",
  maxLength: "field.maxLength", maxItems: "field.maxItems", enum: "field.enum", not: "field.minLength", other: "field.invalid",
};

/** The file names a plugin folder may hold its manifest in: the spec's, then the public implementation's. */
export const manifestFileNames = ["manifest.toml", "plugin-manifest.toml"] as const;

/** The outcome of reading a manifest: the manifest, or every problem found (none is fixed silently). */
export type ManifestResult = { ok: true; manifest: Manifest; digest: string } | { ok: false; problems: ManifestProblem[]; digest: string | null };

/** sha256 (hex) of a manifest's bytes: what trust lists and the tools/list cache are keyed by. */
export function manifestDigest(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

type Validator = ((value: unknown) => boolean) & { errors?: ErrorObject[] | null };

/**
 * Reads a manifest from its bytes. Never throws for bad input: a file over `manifestMaxBytes`, bad UTF-8 or TOML,
 * nesting deeper than `manifestDepthMax`, or any invalid field gives `ok: false` with the problems in `lang`, each
 * with its key, line and column, in the order of the file.
 */
export function readManifest(bytes: Uint8Array, lang: Lang): ManifestResult {
  const digest = manifestDigest(bytes);
  const one = (problem: ManifestProblem): ManifestResult => ({ ok: false, digest, problems: [problem] });
  if (bytes.length > manifestMaxBytes) return one({ key: "", line: null, message: t(lang, "tools.manifest.tooLarge", { limit: manifestMaxBytes }) });
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return one({ key: "", line: null, message: t(lang, "tools.manifest.utf8") });
  }
  const read = readToml(text, manifestDepthMax, lang);
  if (!read.ok) return one({ key: fieldPath(read.path), line: read.place?.line ?? null, column: read.place?.column ?? null, message: render(lang, read) });
  const problem = (path: FilePath, id: MessageId, params: Record<string, string | number> = {}): ManifestProblem => {
    const key = fieldPath(path);
    return { key, ...placeOf(read.places, path), message: render(lang, { id, params: { field: key, ...params } }) };
  };
  const doc = read.value;
  const deep = deepestPath(doc);
  if (deep.length > manifestDepthMax) return one(problem(deep.slice(0, manifestDepthMax + 1), "tools.manifest.tooDeep", { limit: manifestDepthMax }));
  const declared = doc.manifest_version;
  if (typeof declared === "number" && Number.isInteger(declared) && declared > manifestVersionMax) {
    return one(problem(["manifest_version"], "tools.manifest.versionNewer", { version: declared, max: manifestVersionMax }));
  }
  const validate = validateManifestFile as Validator;
  // In the order of the file; a key missing from the top table is missed at its end (it is placed at its start, 1:1).
  const found = validate(doc) ? [] : fileProblems(validate.errors ?? [], doc, manifestMessages).map((p) => ({ ...problem(p.path, p.id, p.params), last: p.keyword === "required" && p.path.length === 1 }));
  found.push(...handProblems(doc).map((p) => ({ ...problem(p.path, p.id, p.params), last: false })));
  if (found.length === 0) return { ok: true, digest, manifest: manifestOf(doc as ManifestFile) };
  const order = (p: (typeof found)[number]) => (p.last ? [Infinity, 0] : [p.line ?? 0, p.column ?? 0]);
  found.sort((a, b) => order(a)[0]! - order(b)[0]! || order(a)[1]! - order(b)[1]!);
  return { ok: false, digest, problems: found.map(({ last: _, ...p }) => p) };
}

/** The path to the deepest value of `doc` (iterative: a hostile file must not exhaust the stack). */
function deepestPath(doc: unknown): FilePath {
  let best: FilePath = [];
  const stack: { v: unknown; path: FilePath }[] = [{ v: doc, path: [] }];
  while (stack.length > 0) {
    const { v, path } = stack.pop()!;
    if (path.length > best.length) best = path;
    if (path.length > manifestDepthMax) continue;
    if (Array.isArray(v)) v.forEach((x, i) => stack.push({ v: x, path: [...path, i] }));
    else if (isTable(v)) for (const [k, x] of Object.entries(v)) stack.push({ v: x, path: [...path, k] });
  }
  return best;
}

/** One problem as a person reads it: `<file>:<line>: <message>` (the message names the key). */
export function formatProblem(file: string, p: ManifestProblem): string {
  return p.line !== null ? `${file}:${p.line}: ${p.message}` : `${file}: ${p.message}`;
}

/**
 * The manifest in `dir` that is no regular file of its own (a symbolic link, or a file with other hard links), or
 * null (issue 26 round 5, F6: `manifest.toml` was a link into a subfolder the plugin bound writable; the registry
 * refuses such a manifest when it reads it, and every start of a sandboxed plugin looks again).
 */
export function manifestLink(dir: string): string | null {
  for (const name of manifestFileNames) {
    const path = join(dir, name);
    try {
      const st = lstatSync(path);
      if (!st.isFile() || st.nlink !== 1) return path;
    } catch {
      // not there
    }
  }
  return null;
}
