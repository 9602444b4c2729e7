/**
 * Events an installed source adapter makes from a webhook's body (protocol.md 来源: adapters): their free text —
 * `summary`, `detail` — comes from elsewhere (an issue's title, a message's body), so the hub removes the characters it
 * refuses and cuts it to its limit, as the built-in `github` adapter does, instead of losing the delivery. Identifiers
 * (`id`, `type`, `subject`, `link`) are left as they are and checked: changing them could make two events one.
 */
import { eventDetailMaxCodepoints, eventSummaryMaxCodepoints } from "../kernel/limits.js";
import { relayed } from "../kernel/text.js";

/** An adapter's event with its `summary` and `detail` made acceptable; anything that is not an object is kept. */
export function relayedEvent(e: unknown): unknown {
  if (typeof e !== "object" || e === null || Array.isArray(e)) return e;
  const out = { ...(e as Record<string, unknown>) };
  if (typeof out.summary === "string") out.summary = relayed(out.summary, true, eventSummaryMaxCodepoints);
  if (typeof out.detail === "string") out.detail = relayed(out.detail, false, eventDetailMaxCodepoints);
  return out;
}
