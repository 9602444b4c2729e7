/**
 * Cards and channels (protocol.md 通道, 本人): a channel takes the next card with `GET /v1/cards/next` (a long poll)
 * and reports `delivered`, `failed` and the answers it got; the owner answers and resolves cards too.
 */
import { Hono, type Context } from "hono";
import type { Hub } from "../hub.js";
import { t, refusal } from "../../i18n/messages.js";
import { answer, decide, held, queryNumber, refuse, reply, route } from "./endpoint.js";
import { idParam } from "./read.js";
import { callerOf } from "../../kernel/authorize.js";
import type { CardNext } from "../../protocol/responses.js";
import { ownerCard } from "../../kernel/cards.js";
import { Ctx } from "../../kernel/context.js";
import { cardTemplateView } from "../../declarative/index.js";

/**
 * The card a channel takes with its card template as loaded now (`templateUi`, issue 18), so that a channel can show
 * it without the owner's key; a template that is not loaded leaves the card as it is (the channel shows the rest).
 */
function withTemplateUi(hub: Hub, body: CardNext): CardNext {
  const ref = body.card?.template;
  if (!body.card || ref === undefined) return body;
  const ui = cardTemplateView(hub.declarative, ref);
  return ui ? { card: { ...body.card, templateUi: ui } } : body;
}

/** The routes of cards and channels. */
export function cardRoutes(hub: Hub): Hono {
  const app = new Hono();
  /** A card id that is not a number: 404, once the key and the body were checked (the kernel answers other unknown ids). */
  const notFound = (c: Context) => refuse(c, 404, refusal(hub.env.lang, "notFound.card", { id: c.req.param("id") ?? "" }));

  route(app, hub, "cardsNext", async (c, req) => {
    const d = await held(c, hub, { kind: "cardsNext", keyHash: req.keyHash }, queryNumber(req.query.wait, 0));
    if (d instanceof Response) return d;
    return d.status === 200 ? reply(c, hub, "cardsNext", withTemplateUi(hub, d.body)) : answer(c, hub, "cardsNext", d);
  });

  route(app, hub, "delivered", (c, req) => {
    const card = idParam(c, "id");
    return card === null ? notFound(c) : decide(c, hub, "delivered", { kind: "delivered", keyHash: req.keyHash, card, version: req.body.version, ref: req.body.ref });
  });

  // An accepted report counts for its channel on GET /metrics (the middleware checked the key is a channel's).
  route(app, hub, "failed", async (c, req) => {
    const card = idParam(c, "id");
    if (card === null) return notFound(c);
    const res = await decide(c, hub, "failed", { kind: "failed", keyHash: req.keyHash, card, version: req.body.version, error: req.body.error ?? null });
    const who = res.status === 200 ? callerOf(hub.store.view, req.keyHash) : undefined;
    if (who) hub.figures.deliveryFailed(who.name);
    return res;
  });

  route(app, hub, "answer", (c, req) => {
    const card = idParam(c, "id");
    const b = req.body;
    return card === null ? notFound(c) : decide(c, hub, "answer", { kind: "answer", keyHash: req.keyHash, card, choice: b.choice ?? null, text: b.text ?? null, by: b.by ?? null, ref: b.ref ?? null });
  });

  // One card whatever its state (issue 30): the console's card page, linked from the run that asked it.
  route(app, hub, "card", (c) => {
    const id = idParam(c, "id");
    const row = id === null ? undefined : hub.store.view.get("cards", id);
    return row ? reply(c, hub, "card", { card: ownerCard(new Ctx(hub.store.view, hub.now(), hub.env), row) }) : notFound(c);
  });

  route(app, hub, "resolve", (c, req) => {
    const card = idParam(c, "id");
    return card === null ? notFound(c) : decide(c, hub, "resolve", { kind: "resolve", keyHash: req.keyHash, card, reason: req.body.reason ?? null });
  });
  return app;
}
