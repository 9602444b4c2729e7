/**
 * A git hook read as the shell it is, as far as a guard can without running it (issue 26 round 20): a hook runs at
 * its work tree's top, so the idioms that name that top — `$(git rev-parse --show-toplevel)`, `$PWD`, `$(pwd)`, with
 * backquotes too — are the tree; a variable the hook sets to a value made of those and plain text (`ROOT=$(git
 * rev-parse --show-toplevel)`, lefthook's `dir="$(git rev-parse --show-toplevel)"`) is that value wherever the hook
 * uses it (F20-2, F20-4: the hub's environment has no such variable); and a `cd`/`pushd` to a folder makes the words
 * after it relative to that folder too (`(cd frontend && ./lint.sh)`, F20-3); a piece of a path the hook computes
 * otherwise (`lefthook-${osArch}-${cpuArch}`, from `uname`) matches any name there (`hookGlob`). What a hook computes
 * beyond that is beyond this reading: SECURITY.md says so.
 */
import { entriesUpTo } from "../common/file-checks.js";
import { isAbsolute, join, normalize } from "node:path";

/** The idioms of a hook that give its work tree's top (where git runs hooks). */
const topIdioms = [/\$\(\s*git\s+rev-parse\s+--show-toplevel\s*\)/g, /`\s*git\s+rev-parse\s+--show-toplevel\s*`/g, /\$\{PWD\}/g, /\$PWD\b/g, /\$\(\s*pwd\s*\)/g, /`\s*pwd\s*`/g];
/** An assignment at a line's start (`export`, `local`, `readonly` allowed): name and value as written. */
const assignment = /^\s*(?:export\s+|local\s+|readonly\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$/;
/** A change of folder: `cd x`, `pushd x` (its word as written). */
const folderChange = /(?:^|[\s;&|(])(?:cd|pushd)\s+("[^"]*"|'[^']*'|[^\s;&|)]+)/g;
/** Assignments followed through (a variable made of another). */
const assignmentRounds = 3;

/** `text` with the top's idioms replaced by `tree`. */
function withTop(text: string, tree: string): string {
  return topIdioms.reduce((t, re) => t.replace(re, tree), text);
}

/**
 * The hook's text with the work tree's idioms and the variables it sets from them (and plain text) written out: what
 * the guard then reads as words (see the module). Lines are kept, so line limits still apply.
 */
export function hookText(text: string, tree: string): string {
  let out = withTop(text, tree);
  for (let round = 0; round < assignmentRounds; round++) {
    const vars = new Map<string, string>();
    for (const line of out.split("\n")) {
      const m = assignment.exec(line);
      if (!m) continue;
      const value = m[2]!.trim().replace(/^"(.*)"$|^'(.*)'$/, "$1$2");
      if (!/[$`]/.test(value) && value !== "") vars.set(m[1]!, value);
    }
    if (vars.size === 0) break;
    const before = out;
    for (const [name, value] of vars) out = out.replace(new RegExp(`\\$\\{${name}\\}|\\$${name}\\b`, "g"), value);
    if (out === before) break;
  }
  return out;
}

/** The folders a hook's relative words may be relative to: its work tree's top, and each folder it `cd`s to. */
export function hookBases(text: string, tree: string): string[] {
  const out = new Set([tree]);
  for (const m of text.matchAll(folderChange)) {
    const to = m[1]!.replace(/^"(.*)"$|^'(.*)'$/, "$1$2");
    if (to === "" || /[$`]/.test(to) || to === "-") continue;
    out.add(normalize(isAbsolute(to) ? to : join(tree, to)));
  }
  return [...out];
}

/** A variable in a word: `$NAME`, `${NAME}`, `${NAME:-x}`. */
const variable = /\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*/g;
/** How many names of one folder `hookGlob` reads, and how many paths it gives. */
const globLimits = { names: 2_000, paths: 50 } as const;
/** Characters a piece with variables keeps besides them for `hookGlob` to match it (`lefthook--` of `lefthook-${os}-${cpu}`). */
const globFixedMin = 3;

/**
 * The existing paths a hook's word with variables the guard cannot know may name (`"$dir/node_modules/lefthook-${osArch}-
 * ${cpuArch}/bin/lefthook"` after `hookText`: each of `lefthook-<anything>-<anything>` in `/p/node_modules`), each variable matching any
 * part of a name, relative words at `base`; [] for a word without one, or whose fixed start is not absolute after
 * `base`, or with a piece of fewer than `globFixedMin` other characters. Reads at most `globLimits`; never throws.
 */
export function hookGlob(word: string, base: string): string[] {
  if (!word.includes("$")) return [];
  const path = isAbsolute(word) ? word : join(base, word);
  let at = ["/"];
  for (const segment of normalize(path).split("/").filter(Boolean)) {
    if (!/\$/.test(segment)) {
      at = at.map((d) => join(d, segment));
      continue;
    }
    // A piece all variables (`"$LEFTHOOK_BIN"`) would match every name: too little to go on.
    if (segment.replace(variable, "").length < globFixedMin) return [];
    const re = new RegExp(`^${segment.split(variable).map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`);
    const next: string[] = [];
    for (const dir of at) {
      // At most the limit read, not the whole folder first (not a folder, or unreadable: nothing there).
      const names = entriesUpTo(dir, globLimits.names).slice(0, globLimits.names).map((e) => e.name);
      for (const n of names) if (re.test(n) && next.length < globLimits.paths) next.push(join(dir, n));
    }
    at = next;
  }
  return at;
}
