/**
 * The kind loader of code plugins (agent, channel, source; issue 27, point 1): one record per folder and kind, by the
 * one precedence rule, each with the digest of its folder's files. The plugins an owner names (`wanted`: the hub's
 * rules and config) and, with `installed`, every plugin not built in are loaded on each reload — at start among them —
 * so a broken one is refused with why before its first use, and a changed one is loaded anew (its last good module
 * kept while the new one is refused). Built-in plugins nobody names are not loaded (their code is the engine's).
 */
import { t, type Lang } from "../i18n/messages.js";
import { entryIn, type PluginLoader } from "./code.js";
import { lstatSync } from "node:fs";
import { FileHashCache, plainDigest, pluginFiles } from "./files.js";
import { choose, type Contender } from "./precedence.js";
import { codeKinds, type CodeKind, type KindLoader, type PluginRecord, type ScannedFolder } from "./types.js";

/** A code plugin the owner uses: its kind and name. */
export interface CodeUse {
  kind: CodeKind;
  name: string;
}

/** One folder's entry of one kind, as the last load saw it. */
interface Entry extends Contender {
  kind: CodeKind;
  file: string;
  digest: string;
}

/** Settings of the code kind loader. */
export interface CodeKindOptions {
  loader: PluginLoader;
  lang: Lang;
  /** The plugins to load on each reload (named by the owner's files); the others are loaded at their first use. */
  wanted?: () => readonly CodeUse[];
  /** Whether every installed (not built-in) plugin in use is loaded too (the hub: `true`); default: only `wanted`. */
  installed?: boolean;
  /** Receives a line for each plugin refused when loaded. */
  log?: (line: string) => void;
}

/** The code plugins' kind loader over `o.loader`, whose roots the registry scans. */
export function codePlugins(o: CodeKindOptions): KindLoader {
  const hashes = new FileHashCache();
  let entries: Entry[] = [];
  const said = new Map<string, string>();
  return {
    kinds: codeKinds,
    async load(folders: readonly ScannedFolder[]) {
      const before = new Map(entries.map((e) => [e.file, e.digest]));
      const next: Entry[] = [];
      for (const f of folders) {
        for (const kind of codeKinds.filter((k) => f.kinds.includes(k))) {
          const file = entryIn(kind, f.dir, f.origin);
          if (!file) continue;
          // A folder too large to digest whole (a plugin with its packages) stands for its entry file's bytes.
          const files = pluginFiles(f.dir, hashes);
          const digest = files.ok ? plainDigest(files.files) : entryDigest(file, hashes);
          next.push({ id: f.name, dir: f.dir, origin: f.origin, rootIndex: f.rootIndex, usable: true, kind, file, digest });
          // A changed file is loaded anew at its next load.
          if (before.has(file) && before.get(file) !== digest) o.loader.forget(file);
        }
      }
      entries = next;
      const installed = o.installed ? entries.filter((e) => e.origin !== "builtin").map((e) => ({ kind: e.kind, name: e.id })) : [];
      for (const use of [...(o.wanted?.() ?? []), ...installed]) {
        const file = o.loader.find(use.kind, use.name);
        if (!file) continue;
        await o.loader.loadModule(use.kind, use.name).catch(() => {});
        const why = o.loader.failure(file);
        if (why !== null && said.get(file) !== why) o.log?.(t(o.lang, "plugins.log.rejected", { kind: use.kind, id: use.name, error: why }));
        if (why !== null) said.set(file, why);
        else said.delete(file);
      }
    },
    records(): PluginRecord[] {
      const out: PluginRecord[] = [];
      for (const kind of codeKinds) {
        const ofKind = entries.filter((e) => e.kind === kind);
        const { winnerOf } = choose(kind, ofKind);
        for (const e of ofKind) {
          const winner = winnerOf.get(e) ?? null;
          const failure = o.loader.failure(e.file);
          const status = failure !== null ? "rejected" : winner === e ? "loaded" : "shadowed";
          out.push({
            id: e.id, kind, origin: e.origin, dir: e.dir, digest: status === "loaded" ? e.digest : null, status, errors: failure !== null ? [failure] : [],
            lastGood: status === "loaded" ? e.digest : null, shadowedBy: winner && winner !== e ? { dir: winner.dir, origin: winner.origin } : null,
          });
        }
      }
      return out;
    },
  };
}

/** The sha256 of an entry file's bytes (its stat when it cannot be read). */
function entryDigest(file: string, hashes: FileHashCache): string {
  try {
    return hashes.hash(file, lstatSync(file));
  } catch (e) {
    return `unreadable:${(e as NodeJS.ErrnoException).code ?? ""}`;
  }
}
