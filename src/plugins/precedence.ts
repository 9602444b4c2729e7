/**
 * The one precedence rule of plugin folders (issue 27, point 1): among folders of the same kind and id, a usable one
 * wins over one that is not; among usable ones the later root wins (built-in, then home, then `serve --plugins`), then
 * the first folder name. The others are shadowed, and each such clash is reported (in the records, the hub's log and
 * `plugins list`): never silent.
 */
import { basename } from "node:path";
import { t, type Lang } from "../i18n/messages.js";
import type { PluginKind, PluginOrigin } from "./types.js";

/** A folder claiming an id: where it is, which root, and whether it has a version that can be used. */
export interface Contender {
  id: string;
  dir: string;
  origin: PluginOrigin;
  rootIndex: number;
  usable: boolean;
}

/** Two folders of one kind with the same id: `winner` is in use, `loser` shadowed. */
export interface PluginClash {
  kind: PluginKind;
  name: string;
  winner: { dir: string; origin: PluginOrigin };
  loser: { dir: string; origin: PluginOrigin };
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

/** A clash as a person reads it: `plugin <id>: <dir> (<origin>) wins over <dir> (<origin>)`. */
export function formatClash(c: Omit<PluginClash, "kind">, lang: Lang): string {
  return t(lang, "tools.clash", { name: c.name, winner: c.winner.dir, winnerOrigin: c.winner.origin, loser: c.loser.dir, loserOrigin: c.loser.origin });
}
