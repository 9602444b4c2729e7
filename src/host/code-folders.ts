/**
 * The home's record of the folders the hub runs or loads code from, and of its users' homes (issue 26 round 6, F1v).
 *
 * A sandboxed tool plugin's writable binds are checked against them (tools/binds.ts): no plugin may write where the
 * hub later runs code. The hub knows its own (its PATH, HOME, `serve --plugins` folders); a `plugins invoke` in the
 * owner's shell does not — its PATH and HOME may differ, the hub may be down, a `serve --plugins` folder may hold no
 * plugin yet. So every `serve` adds what it uses to `code-folders.json` in the home (hidden from every sandbox), and
 * every tool host of the home checks against the union: a folder some start of the hub used stays protected.
 * Bounded by `codeFoldersKeptMax` each (the most recent first). A file that cannot be read counts as empty.
 */
import { readFileSync } from "node:fs";
import { ownPrivateFile } from "../common/file-checks.js";
import { codeFoldersKeptMax } from "../kernel/limits.js";
import type { CodeFoldersSeen } from "../tools/types.js";
import { userHomes } from "../worker/sandbox.js";
import { hubCodeFolders, hubOrigin } from "../worker/hub-code.js";
import { writeFileAtomic, type Home } from "./home.js";

/** The record of home `h`: empty when there is none or it cannot be read (never throws). */
export function readCodeFolders(h: Home): CodeFoldersSeen {
  try {
    const j = JSON.parse(readFileSync(h.codeFolders, "utf8")) as Partial<Record<keyof CodeFoldersSeen, unknown>>;
    const paths = (v: unknown) => (Array.isArray(v) ? v.filter((p): p is string => typeof p === "string" && p.startsWith("/")).slice(0, codeFoldersKeptMax) : []);
    return { folders: paths(j.folders), homes: paths(j.homes) };
  } catch {
    return { folders: [], homes: [] };
  }
}

/**
 * Adds `now` (a start's folders and homes, absolute) to the record of home `h`, newest first, each list cut to
 * `codeFoldersKeptMax`. Written atomically, 0600. @throws when the home cannot be written.
 */
export function recordCodeFolders(h: Home, now: CodeFoldersSeen): CodeFoldersSeen {
  const was = readCodeFolders(h);
  const merged = (a: readonly string[], b: readonly string[]) => [...new Set([...a, ...b])].slice(0, codeFoldersKeptMax);
  const out = { folders: merged(now.folders, was.folders), homes: merged(now.homes, was.homes) };
  // A start like the last one changes nothing: no write, whose sync was a tenth of a start (issue 32).
  const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((p, i) => p === b[i]);
  // Written anew all the same when the file is not this user's private regular file (a link, looser mode): a start repairs it.
  if (same(out.folders, was.folders) && same(out.homes, was.homes) && ownPrivateFile(h.codeFolders)) return out;
  writeFileAtomic(h.codeFolders, JSON.stringify(out, null, 1) + "\n", 0o600);
  return out;
}

/**
 * Records what this process, starting as the hub of home `h` with plugin roots `roots` (absolute), runs or loads code
 * from (`hubCodeFolders`: the engine, node, its PATH and NODE_PATH folders, the roots) and its user's homes. Reads the
 * engine's node_modules (tens of ms). @throws when the home cannot be written.
 */
export function recordThisStart(h: Home, roots: readonly string[]): CodeFoldersSeen {
  return recordCodeFolders(h, { folders: hubCodeFolders(hubOrigin(), roots), homes: userHomes([process.env.HOME]) });
}
