/** Hub alert cards that several kernel steps raise (protocol.md 一致性和复现: hops). */
import type { Ctx } from "./context.js";
import type { EventRow } from "./types.js";
import { createCard } from "./cards.js";
import { hopsMax } from "./limits.js";
import { systemCardKey } from "./system-cards.js";

/** One notice for an event recorded but not dispatched because it went past the hop limit. */
export function tooDeepNotice(c: Ctx, ev: EventRow): void {
  createCard(c, {
    kind: "notice", key: systemCardKey.hops(ev.source, ev.sid),
    title: c.worded("card.hops.title", { max: hopsMax }),
    text: c.worded("card.hops.text", { source: ev.source, id: ev.sid, type: ev.type, hops: ev.hops }),
    rule: null, lane: "", run: null, system: "hops",
  });
}
