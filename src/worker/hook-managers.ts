/**
 * What git hook managers run from a project (issue 26 rounds 18 and 36, the round-35 and round-37 reviews): the hook
 * they install runs, at the owner's next `git commit`, the commands their files name and the files those files load —
 * lefthook's `extends` (files and globs, inside the project or not), `source_dir`, `rc`; overcommit's
 * `plugin_directory`. The guard keeps these read-only (steering.ts); a glob's new matches and a missing script are
 * looked for after the run (planted.ts). Read line by line as the managers' YAML, TOML and JSON are written: a value on
 * the key's line, a list below it (comments and blank lines skipped), a block scalar (`run: |`) as its indented lines.
 */
import { readdirSync } from "node:fs";
import { isAbsolute, join, normalize } from "node:path";
import { lstatOr, realPathOr, within } from "../common/file-checks.js";
import { headOfRegular } from "./files.js";
import { valueWords } from "./config-words.js";
import { executedWords, missingIn, scriptLike } from "./script-words.js";

/**
 * The git hook managers' files, each read for commands (their own names are protected project files: steering.ts
 * `projectSteeringFiles`): pre-commit's, and lefthook's `lefthook` and `lefthook-local` with or without a dot or in
 * `.config/`, in each format it takes (round 18, F18-4).
 */
export const hookManagerFiles = [
  ".pre-commit-config.yaml", ".pre-commit-config.yml",
  ...["lefthook", "lefthook-local"].flatMap((b) => ["", ".", ".config/"].flatMap((dot) => ["yml", "yaml", "json", "jsonc", "toml"].map((e) => `${dot}${b}.${e}`))),
];
/** lefthook's folders of scripts (`script:` names a file there). */
const hookManagerFolders = [".lefthook", ".lefthook-local"];
/** Bytes of one manager file read at most. */
const managerFileBytes = 256 * 1024;
/**
 * Keys whose values are commands: pre-commit's `entry`, lefthook's `run`, `script`, `runner` and top-level
 * `lefthook` (the program its hook runs), overcommit's `command` and `required_executable` (the round-37 review, RN-1).
 */
const commandKey = /^\s*-?\s*["']?(entry|run|script|runner|lefthook|command|required_executable)["']?\s*[:=]\s*(.*)$/;
/** lefthook's `root:` of a command block: the folder its `run` runs in (the round-35 review, W2). */
const rootKey = /^\s*-?\s*["']?root["']?\s*[:=]\s*(.+)$/;
/**
 * Keys naming more files the manager loads or runs (round 36, F36a-1): lefthook's `extends` (files, globs),
 * `source_dir` and `source_dir_local` (folders of scripts), `rc` (a file its hook sources); overcommit's `plugin_directory`.
 */
const indirectionKey = /^\s*-?\s*["']?(extends|source_dir|source_dir_local|rc|plugin_directory)["']?\s*[:=]\s*(.*)$/;
/** A YAML list item (`- x`), or a quoted JSON or TOML array element, alone on its line (a comment after it taken off first). */
const listItem = /^\s*(?:-\s+(["']?)([^"'\s,[\]#]+)\1|(["'])([^"']+)\3)\s*,?\s*$/;
/** Files read at most beyond `hookManagerFiles`: what their `extends` name. */
export const hookManagerExtendsMax = 32;
/** Matches of one glob looked at most (each folder of the way listed once). */
const globMatchesMax = 1_000;

/** A line with its YAML/TOML comment taken off (a `#` at its start or after a blank). */
const uncommented = (line: string) => line.replace(/(^|\s)#.*$/, "");

/**
 * The value of the key on `lines[i]` (`inline`, what follows the `:`): the inline text, or a block scalar's more
 * indented lines (`|`, `>`, with `-`/`+`), or the list items below it (blank and comment lines skipped).
 */
function valueLines(lines: readonly string[], i: number, inline: string): string[] {
  const v = uncommented(inline).trim();
  const indent = (l: string) => l.length - l.trimStart().length;
  if (/^[|>][-+]?\d*$/.test(v)) {
    const out: string[] = [];
    for (let j = i + 1; j < lines.length && (lines[j]!.trim() === "" || indent(lines[j]!) > indent(lines[i]!)); j++) out.push(lines[j]!);
    return out;
  }
  if (v !== "" && v !== "[") return [v];
  const out: string[] = [];
  for (let j = i + 1; j < lines.length; j++) {
    const l = uncommented(lines[j]!);
    if (l.trim() === "") continue;
    const m = listItem.exec(l);
    if (!m) break;
    out.push(m[2] ?? m[4]!);
  }
  return out;
}

/** The items of an indirection key's value: inline (`a`, `[a, "b"]`) or listed below. */
function items(lines: readonly string[], i: number, inline: string): string[] {
  return valueLines(lines, i, inline).flatMap((v) => v.replace(/^\[|\]\s*,?$/g, "").split(",")).map((v) => v.trim().replace(/^(["'])(.*)\1$/, "$2")).filter(Boolean);
}

/**
 * The paths that glob `pattern` (absolute; `*`, `?`, `[…]` within a part, `**` taken as `*`) matches now, at most
 * `globMatchesMax`. Never throws: a folder that cannot be listed matches nothing.
 */
export function globMatches(pattern: string): string[] {
  const parts = normalize(pattern).split("/").filter(Boolean);
  let at = ["/"];
  for (const part of parts) {
    if (!/[*?[]/.test(part)) {
      at = at.map((d) => join(d, part)).filter((p) => lstatOr(p) !== null);
      continue;
    }
    const re = new RegExp(`^${part.replace(/\*\*/g, "*").replace(/[.+^${}()|\\]/g, "\\$&").replace(/\*/g, "[^/]*").replace(/\?/g, "[^/]")}$`);
    at = at.flatMap((d) => {
      try {
        return readdirSync(d).filter((n) => re.test(n) && !(n.startsWith(".") && !part.startsWith("."))).map((n) => join(d, n));
      } catch {
        return [];
      }
    }).slice(0, globMatchesMax);
  }
  return at;
}

/** What `hookManagerRefs` finds: paths to keep read-only, missing scripts to look for, globs whose new matches to look for. */
export interface ManagerRefs {
  kept: string[];
  missing: string[];
  globs: string[];
}

/**
 * What the git hook managers' files of project `dir` name (round 18, F18-2: pre-commit's `entry: tools/fmt.sh` and
 * lefthook's `run: .lefthook/pre-commit/check.sh` ran at the owner's next `git commit`), as real paths wherever they
 * lie (the caller keeps those in the folder an agent writes): each word of a command value (as the shell splits it,
 * variables expanded) that names a file — relative ones at the project's top, where the managers run them, and at
 * each lefthook `root:` — and lefthook's script folders; the files and folders the managers load or run from
 * (`extends`, `source_dir`, `rc`…), an extended file read the same way (`hookManagerExtendsMax` of those at most), each
 * match of a glob (F36a-1; the round-37 review: `../shared/x.yml`, `lefthook-*.yml`). `missing`: a script a command
 * runs, or an indirection, that is not there now (W3); `globs`: the glob patterns, absolute.
 */
export function hookManagerRefs(dir: string): ManagerRefs {
  const out: ManagerRefs = { kept: [], missing: [], globs: [] };
  const files = hookManagerFiles.map((n) => join(dir, n));
  const keep = (p: string) => {
    const st = lstatOr(p);
    if (st === null) return false;
    if (p !== dir) out.kept.push(realPathOr(p, p));
    return true;
  };
  for (let f = 0; f < files.length && f < hookManagerFiles.length + hookManagerExtendsMax; f++) {
    const lines = headOfRegular(files[f]!, managerFileBytes).split("\n");
    const roots = lines.flatMap((line) => valueWords(rootKey.exec(line)?.[1] ?? "", process.env)).map((r) => join(dir, r));
    const bases = [dir, ...new Set(roots)];
    lines.forEach((line, i) => {
      const m = commandKey.exec(line);
      if (!m) return;
      const value = valueLines(lines, i, m[2]!);
      for (const w of value.flatMap((v) => valueWords(v.replace(/,\s*$/, ""), process.env))) {
        const paths = isAbsolute(w) ? [normalize(w)] : bases.map((b) => join(b, w));
        for (const p of paths) if (lstatOr(p)?.isFile()) keep(p);
      }
      for (const w of value.flatMap(executedWords)) if (scriptLike(w)) out.missing.push(...missingIn(isAbsolute(w) ? [normalize(w)] : bases.map((b) => join(b, w)), "/"));
    });
    lines.forEach((line, i) => {
      const m = indirectionKey.exec(line);
      if (!m) return;
      for (const item of items(lines, i, m[2]!)) {
        const p = (isAbsolute(item) ? normalize(item) : join(dir, item)).replace(/(.)\/+$/, "$1");
        const extended = m[1] === "extends";
        if (/[*?[]/.test(p)) {
          out.globs.push(p);
          for (const match of globMatches(p)) if (keep(match) && extended && !files.includes(match)) files.push(match);
        } else if (keep(p)) {
          if (extended && lstatOr(p)?.isFile() && !files.includes(p)) files.push(p);
        } else out.missing.push(...missingIn([p], "/"));
      }
    });
  }
  for (const f of hookManagerFolders) if (lstatOr(join(dir, f))?.isDirectory()) keep(join(dir, f));
  return out;
}

/**
 * What hook managers name (`hookManagerRefs`) that lies in writable folder `folder`, into `out` (steering.ts):
 * read-only when there, looked for after the run when missing (a script, an indirection) or when a glob matches anew.
 */
export function managerParts(refs: ManagerRefs, folder: string, out: { readOnly: string[]; seen: { shadows: string[]; globs: string[] } }): void {
  const inFolder = (p: string) => p !== folder && within(p, folder);
  out.readOnly.push(...refs.kept.filter(inFolder));
  out.seen.shadows.push(...refs.missing.filter(inFolder));
  out.seen.globs.push(...refs.globs);
}
