/**
 * `agent-autoloop recipe list | add <name> | remove <name>` (issue 29): ready-made scenarios shipped in
 * `examples/recipes/<name>/`. A recipe is data (`recipe.json`): the entries it adds to the home's rules.json (sources,
 * agents, channels, rules; the time zone when the file has none), the files it copies from its `files/` folder into
 * its work folder (the rules' `cwd`), and the keys and secrets the owner creates after. `add` never overwrites: an
 * entry or file that exists with other content stops it before anything is written; the merged rules.json must pass
 * the same check the hub makes, or nothing is written. What it added is recorded in `<home>/recipes.json`, so
 * `remove` takes back exactly that, leaving what the owner changed since (and saying so).
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { applyEdits, findNodeAtLocation, modify, parse as parseJsonc, parseTree, type ParseError } from "jsonc-parser";
import { t, type Lang } from "../i18n/messages.js";
import { engineDir, writeFileAtomic, type Home } from "../host/home.js";
import { parseRules } from "../kernel/rules.js";
import { canonicalJson } from "../protocol/tool-calls.js";
import { CliError } from "./print.js";

/** The folder of the shipped recipes. */
export const recipesDir = join(engineDir, "examples", "recipes");
/** The sections of rules.json a recipe adds named entries to (objects keyed by name). */
const namedSections = ["sources", "agents", "channels"] as const;
/** At most this many files a recipe copies (a named limit on what `add` writes). */
const recipeFilesMax = 50;

/** A recipe as `recipe.json` describes it. */
interface Recipe {
  summary: { en: string; zh: string };
  /** Set as rules.json's `timezone` when the file has none (an IANA name). */
  timezone?: string;
  add: { sources?: Record<string, unknown>; agents?: Record<string, unknown>; channels?: Record<string, unknown>; rules?: Record<string, unknown>[] };
  /** Paths under the recipe's `files/` folder, copied to the same paths in the work folder. */
  files?: string[];
  /** Keys to create: `[kind, name]`, printed as `agent-autoloop key new <kind> <name>`. */
  keys?: [string, string][];
  /** Lines the owner adds to secrets.env (`NAME=<what>`), printed. */
  secrets?: string[];
}

/** What `add` wrote, kept in `<home>/recipes.json` for `remove`. */
interface Added {
  dir: string;
  /** `<section>.<name>` (rules by name; `timezone`) → the canonical JSON of what was added. */
  entries: Record<string, string>;
  /** Absolute path → sha256 hex of the copied content. */
  files: Record<string, string>;
}

const recordPath = (h: Home) => join(h.dir, "recipes.json");

function readRecord(h: Home): Record<string, Added> {
  if (!existsSync(recordPath(h))) return {};
  return JSON.parse(readFileSync(recordPath(h), "utf8")) as Record<string, Added>;
}

function writeRecord(h: Home, record: Record<string, Added>): void {
  if (Object.keys(record).length === 0) rmSync(recordPath(h), { force: true });
  else writeFileAtomic(recordPath(h), JSON.stringify(record, null, 2) + "\n", 0o644);
}

/** The names of the shipped recipes, sorted. */
export function recipeNames(): string[] {
  return readdirSync(recipesDir).filter((n) => existsSync(join(recipesDir, n, "recipe.json"))).sort();
}

/** Reads a shipped recipe. @throws CliError naming the recipes there are when `name` is not one. */
function readRecipe(name: string, lang: Lang): Recipe {
  if (!/^[a-z0-9-]+$/.test(name) || !recipeNames().includes(name)) throw new CliError(t(lang, "recipe.unknown", { name, names: recipeNames().join(", ") }));
  return JSON.parse(readFileSync(join(recipesDir, name, "recipe.json"), "utf8")) as Recipe;
}

/** `recipe list`: one line per recipe, its summary in `lang`, and whether this home has it. */
export function listRecipes(h: Home, lang: Lang): string {
  const record = readRecord(h);
  return recipeNames().map((n) => `${n}${record[n] ? ` ${t(lang, "recipe.added")}` : ""} — ${readRecipe(n, lang).summary[lang]}`).join("\n");
}

/** Replaces `{engine}`, `{dir}` and `{worker}` in every string of `v`. */
function fill(v: unknown, vars: Record<string, string>): unknown {
  if (typeof v === "string") return v.replace(/\{(engine|dir|worker)\}/g, (_, k: string) => vars[k]!);
  if (Array.isArray(v)) return v.map((x) => fill(x, vars));
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fill(x, vars)]));
  return v;
}

const sha = (b: Buffer | string) => createHash("sha256").update(b).digest("hex");

/** `v` as JSON indented by `indent` after its first line; an array or object that fits in 100 columns stays on one line. */
function pretty(v: unknown, indent: string): string {
  const flat = JSON.stringify(v, null, 1).replace(/\n\s*/g, " ").replace(/\[ /g, "[").replace(/ \]/g, "]");
  if (indent.length + flat.length <= 100 || v === null || typeof v !== "object") return flat;
  const inner = indent + "  ";
  const items = Array.isArray(v) ? v.map((x) => inner + pretty(x, inner)) : Object.entries(v).map(([k, x]) => `${inner}${JSON.stringify(k)}: ${pretty(x, inner)}`);
  return `${Array.isArray(v) ? "[" : "{"}\n${items.join(",\n")}\n${indent}${Array.isArray(v) ? "]" : "}"}`;
}

/**
 * Inserts `value` at `path` (a new member of an object, or an element of an array when `insert`) as one edit that
 * changes no other byte of the file: jsonc-parser places it (after the last member, keeping comments), and the text
 * is laid out here at the indentation of the members around it (its own formatter would re-lay the siblings too).
 */
function insertAt(text: string, path: (string | number)[], value: unknown, insert: boolean): string {
  const [edit] = modify(text, path, value, { isArrayInsertion: insert });
  if (!edit || edit.length !== 0) return applyEdits(text, modify(text, path, value, { isArrayInsertion: insert }));
  const lineStart = text.lastIndexOf("\n", edit.offset - 1) + 1;
  const lineIndent = /^[ \t]*/.exec(text.slice(lineStart))![0];
  const afterMember = edit.content.startsWith(",");
  const indent = afterMember ? lineIndent : lineIndent + "  ";
  const key = path[path.length - 1];
  const body = typeof key === "string" && !insert ? `${JSON.stringify(key)}: ${pretty(value, indent)}` : pretty(value, indent);
  // A member missing with its parent too (no "sources" at all): jsonc-parser's own text is right, only unindented.
  if (!edit.content.replace(/^,/, "").trimStart().startsWith(typeof key === "string" && !insert ? JSON.stringify(key) : "")) return applyEdits(text, [edit]);
  const content = afterMember ? `,\n${indent}${body}` : `\n${indent}${body}\n${lineIndent}`;
  return text.slice(0, edit.offset) + content + text.slice(edit.offset);
}

/** The rules.json text parsed leniently (JSONC), or a CliError naming the file when it does not parse. */
function parsedRules(text: string, file: string, lang: Lang): Record<string, unknown> {
  const errors: ParseError[] = [];
  const v = parseJsonc(text, errors, { allowTrailingComma: true }) as unknown;
  if (errors.length > 0 || !v || typeof v !== "object" || Array.isArray(v)) throw new CliError(t(lang, "recipe.rulesBroken", { file }));
  return v as Record<string, unknown>;
}

/**
 * `recipe add <name>`: merges the recipe's entries into rules.json, copies its files into `dir` (default
 * `~/agent-autoloop-recipes/<name>`) and records both. @returns the lines to print: what it added and what to do next.
 * @throws CliError before writing anything when the recipe is already added, an entry or file exists with other
 *   content, or the merged rules.json would not pass the check.
 */
export function addRecipe(h: Home, name: string, workerName: string, dirOption: string | undefined, lang: Lang): string[] {
  const recipe = readRecipe(name, lang);
  const record = readRecord(h);
  if (record[name]) throw new CliError(t(lang, "recipe.already", { name }));
  const dir = resolve(dirOption ?? join(homedir(), "agent-autoloop-recipes", name));
  const vars = { engine: engineDir, dir, worker: workerName };
  const add = fill(recipe.add, vars) as Recipe["add"];
  const text = readFileSync(h.rules, "utf8");
  const current = parsedRules(text, h.rules, lang);
  const entries: Record<string, string> = {};
  const conflicts: string[] = [];
  const skipped: string[] = [];
  let edited = text;
  const put = (path: (string | number)[], label: string, value: unknown, existing: unknown, insert = false) => {
    if (existing !== undefined) {
      if (canonicalJson(existing) === canonicalJson(value)) skipped.push(label);
      else conflicts.push(label);
      return;
    }
    edited = insertAt(edited, path, value, insert);
    entries[label] = canonicalJson(value);
  };
  if (recipe.timezone && current.timezone === undefined) put(["timezone"], "timezone", recipe.timezone, undefined);
  for (const section of namedSections) {
    const have = (current[section] ?? {}) as Record<string, unknown>;
    for (const [key, value] of Object.entries(add[section] ?? {})) put([section, key], `${section}.${key}`, value, Object.hasOwn(have, key) ? have[key] : undefined);
  }
  const rules = Array.isArray(current.rules) ? (current.rules as Record<string, unknown>[]) : [];
  for (const rule of add.rules ?? []) {
    const existing = rules.find((r) => r && r.name === rule.name);
    put(["rules", rules.length + Object.keys(entries).filter((k) => k.startsWith("rules.")).length], `rules.${String(rule.name)}`, rule, existing, true);
  }
  // Files: the same content is already there (skipped); other content is never overwritten.
  const files = (recipe.files ?? []).slice(0, recipeFilesMax).map((f) => {
    const from = join(recipesDir, name, "files", f);
    const to = join(dir, f);
    if (relative(dir, to).startsWith("..")) throw new CliError(t(lang, "recipe.unknown", { name, names: recipeNames().join(", ") }));
    const content = readFileSync(from);
    const same = existsSync(to) && statSync(to).isFile() && sha(readFileSync(to)) === sha(content);
    if (existsSync(to) && !same) conflicts.push(to);
    return { to, content, same, mode: statSync(from).mode & 0o755 };
  });
  if (conflicts.length > 0) throw new CliError(t(lang, "recipe.conflicts", { name, what: conflicts.join(", ") }));
  // What the hub would load: a recipe that does not fit this home (an agent's worker, a clash the check finds) writes nothing.
  const checked = parseRules(edited, { timezone: "UTC" }, lang);
  if (!checked.ok) throw new CliError(t(lang, "recipe.wouldBreak", { name, error: `${h.rules}:${checked.line}:${checked.column}: ${checked.error}` }));
  mkdirSync(dir, { recursive: true });
  const copied: Record<string, string> = {};
  for (const f of files) {
    if (f.same) continue;
    mkdirSync(dirname(f.to), { recursive: true });
    writeFileAtomic(f.to, f.content, f.mode | 0o600);
    copied[f.to] = sha(f.content);
  }
  record[name] = { dir, entries, files: copied };
  // The record first: a crash between the two leaves a record remove can take back (it skips what is not there).
  writeRecord(h, record);
  if (edited !== text) writeFileAtomic(h.rules, edited, statSync(h.rules).mode & 0o777);
  const out = [t(lang, "recipe.addedHeader", { name, dir })];
  for (const label of Object.keys(entries)) out.push(`  + ${label}`);
  for (const path of Object.keys(copied)) out.push(`  + ${path}`);
  for (const label of skipped) out.push(`  = ${label} ${t(lang, "recipe.same")}`);
  const next = [
    ...(recipe.keys ?? []).map(([kind, key]) => `  agent-autoloop key new ${kind} ${key}`),
    ...(recipe.secrets ?? []).map((s) => `  ${t(lang, "recipe.secret", { line: s, file: h.secrets })}`),
  ];
  if (next.length > 0) out.push(t(lang, "recipe.next"), ...next);
  out.push(t(lang, "recipe.note", { file: join(recipesDir, name, "README.md") }));
  return out;
}

/**
 * Removes the member or element at `path` and the separator before it (after it, when it is the first), so a text
 * `insertAt` made gives back the text before it byte for byte; comments around other members stay.
 */
function removeAt(text: string, path: (string | number)[]): string {
  const value = findNodeAtLocation(parseTree(text, [], { allowTrailingComma: true })!, path)!;
  const node = typeof path[path.length - 1] === "string" ? value.parent! : value; // an object member is its property node
  const siblings = node.parent!.children!;
  const i = siblings.indexOf(node);
  const end = node.offset + node.length;
  if (i > 0) {
    const prev = siblings[i - 1]!;
    return text.slice(0, prev.offset + prev.length) + text.slice(end);
  }
  const next = siblings[i + 1];
  return text.slice(0, node.offset) + text.slice(next ? next.offset : end);
}

/**
 * `recipe remove <name>`: takes back what `add` recorded — each rules.json entry still as it was added, each copied
 * file still with its content, the work folder when it is left empty — and keeps (naming them) what changed since.
 * @returns the lines to print. @throws CliError when the recipe is not added to this home.
 */
export function removeRecipe(h: Home, name: string, lang: Lang): string[] {
  const record = readRecord(h);
  const added = record[name];
  if (!added) throw new CliError(t(lang, "recipe.notAdded", { name }));
  const text = readFileSync(h.rules, "utf8");
  const current = parsedRules(text, h.rules, lang);
  let edited = text;
  const out = [t(lang, "recipe.removedHeader", { name })];
  for (const [label, was] of Object.entries(added.entries)) {
    const [section, ...rest] = label.split(".");
    const key = rest.join(".");
    let path: (string | number)[] | null = null;
    let now: unknown;
    if (section === "timezone") [path, now] = [["timezone"], current.timezone];
    else if (section === "rules") {
      const i = Array.isArray(current.rules) ? (current.rules as Record<string, unknown>[]).findIndex((r) => r && r.name === key) : -1;
      if (i >= 0) [path, now] = [["rules", i], (current.rules as unknown[])[i]];
    } else {
      const have = (current[section!] ?? {}) as Record<string, unknown>;
      if (Object.hasOwn(have, key)) [path, now] = [[section!, key], have[key]];
    }
    if (path === null) continue; // gone already
    if (canonicalJson(now) !== was) {
      out.push(`  ! ${label} ${t(lang, "recipe.kept")}`);
      continue;
    }
    edited = removeAt(edited, path);
    // Later rules move up one place once an earlier one is gone: read the indexes again.
    Object.assign(current, parsedRules(edited, h.rules, lang));
    out.push(`  - ${label}`);
  }
  for (const [path, digest] of Object.entries(added.files)) {
    if (!existsSync(path)) continue;
    if (sha(readFileSync(path)) !== digest) {
      out.push(`  ! ${path} ${t(lang, "recipe.kept")}`);
      continue;
    }
    rmSync(path);
    out.push(`  - ${path}`);
  }
  // The work folder and the folders the files were in go only when empty (what the agent wrote there stays).
  for (const d of [...new Set(Object.keys(added.files).map((p) => dirname(p))), added.dir].sort((a, b) => b.length - a.length)) {
    try {
      rmdirSync(d);
    } catch {
      // not empty, or gone
    }
  }
  if (edited !== text) writeFileAtomic(h.rules, edited, statSync(h.rules).mode & 0o777);
  delete record[name];
  writeRecord(h, record);
  return out;
}
