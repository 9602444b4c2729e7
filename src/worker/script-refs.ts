/**
 * What a guarded script makes the owner's system run besides itself (issue 26 round 17, F17-2): the interpreter its
 * `#!` line names, and the absolute paths written in a script — pre-commit's generated hook runs
 * `INSTALL_PYTHON=/home/me/p14/.venv/bin/python3`. A script in `~/bin` or a hook stays read-only, but when the program
 * it starts lies in a folder the agent writes (a project's virtualenv), the agent replaces that program instead. The
 * guard (steering.ts) keeps each such path inside the writable folder read-only: a file itself, and for a link (a
 * virtualenv's `bin/python3 -> /usr/bin/python3`, which the agent could replace by a file of its own) the folder
 * holding it, since a mount cannot hold a link's own entry. What such a program then loads is the documented limit
 * "what a script sources or imports" (SECURITY.md).
 */
import { lstatSync, readdirSync, type Stats } from "node:fs";
import { basename, dirname, isAbsolute, join, normalize } from "node:path";
import { realPathOr, within } from "../common/file-checks.js";
import { headOfRegular } from "./files.js";

/** How much of the guarded files is read: files in all, and bytes of each (a `#!` line and a hook's few lines). */
export const scriptRefLimits = { files: 2_000, bytes: 65_536 } as const;

/** Programs a `#!` line names that look the real program up on PATH (whose folders the guard keeps read-only already). */
const pathLookups = new Set(["env"]);

/** Absolute paths written in a script: a `/` and what follows up to a blank, quote, `=` or shell operator. */
const absolutePaths = /\/[^\s'"`=;|&()<>$\\,]+/g;

/**
 * The paths inside `folder` (a real path the agent may write) that the guarded `parts` (real paths: files, and
 * folders whose top files are read — a hooks folder) start when the owner runs them: each script's `#!` interpreter
 * and the absolute paths its text names, as real paths to keep read-only (see the module). Reads at most
 * `scriptRefLimits`; never throws (an unreadable file names nothing: the owner's system cannot run it either).
 */
export function scriptRefs(parts: readonly string[], folder: string, limits = scriptRefLimits): string[] {
  const files: string[] = [];
  for (const p of parts) {
    const st = statOf(p);
    if (st?.isFile()) files.push(p);
    else if (st?.isDirectory()) {
      try {
        for (const name of readdirSync(p).slice(0, limits.files)) files.push(join(p, name));
      } catch {
        // not readable: nothing there runs
      }
    }
    if (files.length >= limits.files) break;
  }
  const out = new Set<string>();
  for (const file of files.slice(0, limits.files)) {
    const text = headOfRegular(file, limits.bytes);
    if (!text.startsWith("#!")) continue;
    const [interpreter] = text.slice(2, text.indexOf("\n") < 0 ? undefined : text.indexOf("\n")).trim().split(/\s+/);
    const named = [...(interpreter && !pathLookups.has(basename(interpreter)) ? [interpreter] : []), ...(text.match(absolutePaths) ?? [])];
    for (const n of named) for (const p of guardOf(n, folder)) out.add(p);
  }
  return [...out];
}

/** What keeps the program at `path` (as written) unchanged when it lies in `folder`: itself, or the folder of a link. */
function guardOf(path: string, folder: string): string[] {
  if (!isAbsolute(path)) return [];
  const at = normalize(path);
  if (at === folder || !within(at, folder)) return [];
  let st: Stats;
  try {
    st = lstatSync(at);
  } catch {
    return []; // missing: nothing runs it now
  }
  if (st.isSymbolicLink()) {
    const real = realPathOr(at, null);
    const holder = dirname(at);
    return [...(holder !== folder ? [realPathOr(holder, holder)] : []), ...(real !== null && real !== folder && within(real, folder) ? [real] : [])];
  }
  return st.isFile() ? [realPathOr(at, at)] : [];
}

function statOf(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}
