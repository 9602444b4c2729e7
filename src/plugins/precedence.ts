/**
 * The one precedence rule of plugin folders (issue 27, point 1): among folders of the same kind and id, a usable one
 * wins over one that is not; among usable ones the later root wins (built-in, then home, then `serve --plugins`), then
 * the first folder name. The others are shadowed, and each such clash is reported (in the records, the hub's log and
 * `plugins list`): never silent.
 */
import { basename } from "node:path";
import { t, type Lang } from "../i18n/messages.js";
import { inUse, type PluginClash, type PluginKind, type PluginOrigin, type PluginRecord } from "./types.js";

export type { PluginClash };

/** A folder claiming an id: where it is, which root, and whether it has a version that can be used. */
export interface Contender {
  id: string;
  dir: string;
  origin: PluginOrigin;
  rootIndex: number;
  usable: boolean;
}


/** The order of the rule: usable first, then the later root, then the folder's name. */
function before(a: Contender, b: Contender): number {
  return Number(b.usable) - Number(a.usable) || b.rootIndex - a.rootIndex || basename(a.dir).localeCompare(basename(b.dir));
}

/**
 * Decides every id of one kind. @returns each contender with the winner of its id (itself when it wins), or null when
 * no folder of that id is usable; and the clashes: each usable folder that lost, with the one that won.
 */
export function choose<C extends Contender>(kind: PluginKind, contenders: readonly C[]): { winnerOf: Map<C, C | null>; clashes: PluginClash[] } {
  const byId = new Map<string, C[]>();
  for (const c of contenders) byId.set(c.id, [...(byId.get(c.id) ?? []), c]);
  const winnerOf = new Map<C, C | null>();
  const clashes: PluginClash[] = [];
  for (const [id, list] of byId) {
    const first = [...list].sort(before)[0];
    const winner = first?.usable ? first : null;
    // In the order they were found (root, then folder name): each loser once.
    for (const c of list) {
      winnerOf.set(c, winner);
      if (winner && c !== winner && c.usable) {
        clashes.push({ kind, name: id, winner: { dir: winner.dir, origin: winner.origin }, loser: { dir: c.dir, origin: c.origin } });
      }
    }
  }
  return { winnerOf, clashes };
}

/**
 * Kinds whose ids name the same things, the earlier kind winning: a tool plugin (by its manifest's `name`) and a
 * declarative plugin (by its folder) both offer tools as `<id>.<tool>`, so one id can be only one of them. The tool
 * plugin wins (as the tool host always chose); the declarative plugin is shadowed whole, and the clash is reported.
 */
export const sharedIdKinds: readonly PluginKind[] = ["tool", "declarative"];

/**
 * The clashes across kinds among `records` (`sharedIdKinds`): each record in use of a later kind whose id a record in
 * use of an earlier kind holds, with that one as the winner (its `kind` set). In the order of `records`.
 */
export function kindClashes(records: readonly PluginRecord[]): PluginClash[] {
  const used = records.filter((r) => inUse(r) && sharedIdKinds.includes(r.kind));
  const rank = (r: PluginRecord) => sharedIdKinds.indexOf(r.kind);
  return used.flatMap((loser) => {
    const winner = used.find((w) => w.id === loser.id && rank(w) < rank(loser));
    return winner ? [{ kind: loser.kind, name: loser.id, winner: { dir: winner.dir, origin: winner.origin, kind: winner.kind }, loser: { dir: loser.dir, origin: loser.origin } }] : [];
  });
}

/**
 * A clash as a person reads it: `plugin <id>: <dir> (<origin>) wins over <dir> (<origin>)`; across kinds (the winner's
 * `kind` other than `loserKind`), also both kinds and why one id cannot be both.
 */
export function formatClash(c: Omit<PluginClash, "kind">, lang: Lang, loserKind?: PluginKind): string {
  const where = { name: c.name, winner: c.winner.dir, winnerOrigin: c.winner.origin, loser: c.loser.dir, loserOrigin: c.loser.origin };
  if (c.winner.kind && loserKind && c.winner.kind !== loserKind) return t(lang, "plugins.clash.kinds", { ...where, winnerKind: c.winner.kind, loserKind });
  return t(lang, "tools.clash", where);
}
