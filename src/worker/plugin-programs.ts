/**
 * The programs the hub's tool plugins without `[sandbox]` run from outside their own folders (issue 26: a sandboxed
 * agent's `writable` or a sandboxed plugin's writable bind must not be where a trusted plugin's code comes from).
 * The hub's PATH folders and the plugin folders are covered by `hubCodeFolders` already; a manifest may also name a
 * program by absolute path (`command = "/home/ada/venv/bin/python"`) or a script outside its folder
 * (`args = ["/home/ada/tools/fmt.py"]`), whose folders and install prefix the hub runs code from as much.
 */
import { readdirSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, sep } from "node:path";
import { readToml } from "../tools/toml.js";
import { manifestDepthMax, manifestMaxBytes } from "../tools/limits.js";
import { pluginFoldersMax } from "../plugins/limits.js";
import { headOfRegular } from "./files.js";
import { realPath } from "./sandbox.js";
import { sharedTempRoots } from "./guard-walk.js";

/**
 * Folders no program of a plugin is taken from: the root, the shared temporary ones (real paths: a folder is compared
 * as written and where it leads), the kernel's file systems.
 */
const notProgramFolders = new Set([sep, ...sharedTempRoots(), "/dev", "/proc", "/sys"]);

/** A script an interpreter runs, by its name (an argument naming another file is data, not where code comes from). */
const scriptName = /\.(?:py|js|mjs|cjs|ts|mts|cts|sh|bash|zsh|rb|pl|pm|php|lua|jar|r|jl|tcl|awk)$/i;

/** Whether `path` is a regular file that runs as code: executable, or a script by its name. */
function codeFile(path: string): boolean {
  try {
    const st = statSync(path);
    return st.isFile() && ((st.mode & 0o111) !== 0 || scriptName.test(path));
  } catch {
    return false;
  }
}

/** The first `pluginFoldersMax` names in folder `dir`, sorted; none when it cannot be read. */
function firstEntries(dir: string): string[] {
  try {
    return readdirSync(dir).sort().slice(0, pluginFoldersMax);
  } catch {
    return [];
  }
}

/**
 * Every absolute path that a `manifest.toml` read as TOML (a regular file, at most `manifestMaxBytes`) of a plugin folder of
 * `roots` (the first `pluginFoldersMax` entries of each, by name) names as its entry command, or among its arguments
 * as a file that runs as code (`codeFile`), when the manifest asks no `[sandbox]`; as written and where it leads now. Reads files only, never runs anything;
 * a root or manifest that cannot be read gives nothing. @returns paths, existing or not, no duplicates.
 */
export function unsandboxedPrograms(roots: readonly string[]): string[] {
  const out = new Set<string>();
  for (const root of roots) {
    for (const name of firstEntries(root)) {
      // Read as TOML only (not through the manifest's schema, which a start does not load): whatever the registry
      // later refuses, counting its programs only protects more. Bad UTF-8 reads as U+FFFD here.
      const text = headOfRegular(join(root, name, "manifest.toml"), manifestMaxBytes);
      if (text === "") continue;
      const read = readToml(text, manifestDepthMax, "en");
      if (!read.ok || read.value.sandbox !== undefined) continue;
      const entry = read.value.entry_point as { command?: unknown; args?: unknown } | undefined;
      const strings = (v: unknown) => (Array.isArray(v) ? v.filter((a): a is string => typeof a === "string") : []);
      const command = typeof entry?.command === "string" ? [entry.command] : [];
      for (const p of [...command, ...strings(entry?.args).filter((a) => isAbsolute(a) && codeFile(a))]) {
        if (isAbsolute(p)) out.add(p).add(realPath(p));
      }
    }
  }
  return [...out];
}

/**
 * The folders `unsandboxedPrograms` come from — each program's folder as written and where it leads — without the
 * root, the shared temporary folders and the kernel's (`notProgramFolders`: a script in `/tmp` does not make `/tmp`
 * the hub's). The install prefix of each is added by the caller (hub-code.ts `installPrefix`).
 */
export function unsandboxedProgramFolders(roots: readonly string[]): string[] {
  return [...new Set(unsandboxedPrograms(roots).map((p) => dirname(p)))].filter((d) => !notProgramFolders.has(d) && !notProgramFolders.has(realPath(d)));
}

/** A `.pth` file's line that names a folder (not an `import` line, a comment or blank). */
const pthPath = /^(?!import[ \t])(?!#)[ \t]*(\S.*?)[ \t]*$/;
/** An absolute path in quotes: what an `import` line of a `.pth` file or an editable finder's `MAPPING` names. */
const quotedAbsolute = /["'](\/[^"'\r\n]+)["']/g;

/**
 * The folders the `.pth` files (and `*.egg-link` files) of the Python installs of `prefix` put on `sys.path` — and,
 * for a pyenv-like prefix, of each of its `versions/*` —: the `site-packages` and `dist-packages` of each `python3.x`
 * in `lib`, `lib32`, `lib64`, each file read as a regular file of at most `manifestMaxBytes`; a relative line taken
 * from its folder; the quoted absolute paths of an `import` line (`sys.path.append('/x')`: round 55, F55-2b) and of
 * a setuptools editable finder (`__editable___*_finder.py`, whose `MAPPING` maps packages to their folders: F55-2).
 * Issue 26 round 53, F53a-5: `pip install -e ~/pyproj` into a trusted plugin's venv put the project on its path; an
 * agent working there planted `simplejson.py`, which `requests` tries first. Never throws. @returns absolute paths,
 * existing or not.
 */
export function pthFolders(prefix: string): string[] {
  const out = new Set<string>();
  // pyenv's and asdf's layout (round 55, F55-6): `shims` on PATH, the Pythons in `<root>/versions/<version>`.
  const prefixes = [prefix, ...firstEntries(join(prefix, "versions")).map((v) => join(prefix, "versions", v))];
  for (const root of prefixes) {
    for (const lib of firstEntries(root).filter((n) => /^lib(?:32|64)?$/.test(n))) {
      for (const py of firstEntries(join(root, lib)).filter((n) => n.startsWith("python"))) {
        for (const site of ["site-packages", "dist-packages"]) {
          const dir = join(root, lib, py, site);
          for (const f of firstEntries(dir)) {
            const finder = /^__editable___.*_finder\.py$/.test(f);
            if (!finder && !f.endsWith(".pth") && !f.endsWith(".egg-link")) continue;
            const text = headOfRegular(join(dir, f), manifestMaxBytes);
            if (finder) {
              for (const m of text.matchAll(quotedAbsolute)) out.add(m[1]!);
              continue;
            }
            const lines = f.endsWith(".egg-link") ? text.split("\n").slice(0, 1) : text.split("\n");
            for (const raw of lines) {
              const line = raw.replace(/\r$/, "");
              if (/^import[ \t]/.test(line)) {
                for (const m of line.matchAll(quotedAbsolute)) out.add(m[1]!);
                continue;
              }
              const m = pthPath.exec(line);
              if (m) out.add(isAbsolute(m[1]!) ? m[1]! : join(dir, m[1]!));
            }
          }
        }
      }
    }
  }
  return [...out];
}
