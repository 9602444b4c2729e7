/**
 * The steps of `decide` for cards (protocol.md 通道, 本人): a channel takes the next card (a long poll), reports a
 * delivery or a failure; a channel or the owner answers, the owner resolves; whoever holds a card's link answers
 * from its page. Each checks the caller, then the card, then the answer, and writes only when all pass.
 */
import type { Ctx } from "./context.js";
import type { Caller, CardRow, InputOf } from "./types.js";
import type { AnswerAnswer, CardNext, Changed, Ok } from "../protocol/responses.js";
import { answerCard, channelSeen, closeCard, delivered, failed, nextCard, ownerCard } from "./cards.js";
import { answerBudgetCard } from "./budget.js";
import { answerRateCard } from "./rate.js";
import { answerToolCard, optionAlways } from "./tool-calls.js";
import { cardLinkToken, safeEqual } from "./credentials.js";
import { cardLinkValidMs } from "./limits.js";
import { own } from "./own.js";
import { assert } from "./assert.js";
import { authorize } from "./authorize.js";
import { done, isReply, ok, refuse as err, type Refusal, type Reply } from "./reply.js";

/** GET /v1/cards/next: the next card for the calling channel, or a held poll (`park`) when there is none. */
export function cardsNext(c: Ctx, input: InputOf<"cardsNext">): Reply<CardNext> {
  const who = authorize(c, input.keyHash, ["channel"]);
  if (isReply(who)) return who;
  channelSeen(c, who.name);
  const card = nextCard(c, who.name);
  return { status: 200, body: { card }, park: card === null };
}

function cardFor(c: Ctx, id: number): CardRow | Refusal {
  return c.tx.get("cards", id) ?? err(404, c.say("notFound.card", { id }));
}

/** The calling channel and the card it names, when the card is offered to that channel. */
function channelCardFor(c: Ctx, keyHash: string | null, id: number): { who: Caller; card: CardRow } | Refusal {
  const who = authorize(c, keyHash, ["channel"]);
  if (isReply(who)) return who;
  const card = cardFor(c, id);
  if (isReply(card)) return card;
  if (!card.channels.includes(who.name)) return err(403, c.say("card.notForChannel"));
  return { who, card };
}

/** POST /v1/cards/:id/delivered: the channel shows version `version` of the card as message `ref`. */
export function cardDelivered(c: Ctx, input: InputOf<"delivered">): Reply<Ok> {
  const got = channelCardFor(c, input.keyHash, input.card);
  if (isReply(got)) return got;
  if (input.version > got.card.version) return err(400, c.say("card.version", { version: got.card.version }));
  delivered(c, got.who.name, got.card, input.version, input.ref);
  return done();
}

/** POST /v1/cards/:id/failed: the channel could not show the card. */
export function cardFailed(c: Ctx, input: InputOf<"failed">): Reply<Ok> {
  const got = channelCardFor(c, input.keyHash, input.card);
  if (isReply(got)) return got;
  if (input.version > got.card.version) return err(400, c.say("card.version", { version: got.card.version }));
  failed(c, got.who.name, got.card, input.error);
  return done();
}

/** The card a link names, when its token is right (404) and it has not expired (410). */
function linkedCard(c: Ctx, id: number, token: string): CardRow | Refusal {
  const card = c.tx.get("cards", id);
  if (!card || !safeEqual(token, cardLinkToken(c.env.master, card.id, card.at))) return err(404, c.say("link.unknown"));
  if (c.now > card.at + cardLinkValidMs) return err(410, c.say("link.expired"));
  return card;
}

/** An answer from a card's link page: the link is the permission (protocol.md 谁能做什么: 带权限的卡片链接). */
export function linkAnswer(c: Ctx, input: InputOf<"linkAnswer">): Reply<AnswerAnswer> {
  const card = linkedCard(c, input.card, input.token);
  if (isReply(card)) return card;
  // A link answers its own card, nothing beyond it: "always allow" would trust the plugin for every later call with any
  // arguments, whoever the link was forwarded to (issue 26 round 18). Once or deny only; always from the console or CLI.
  if (card.toolCall !== undefined && input.choice === optionAlways) return err(403, c.say("link.alwaysRefused"));
  const refused = linkRefusal(card, c.rules.channels);
  if (refused) return err(403, c.say(refused));
  return answerChecked(c, card, input.choice, input.text, "link");
}

/**
 * Why a card link may not answer `card` beyond "always allow" (see `linkAnswer`), or null. The hub's own cards but a
 * tool call's approval (once or deny) are the owner's — resuming a rule paused by its budget or for starting too often
 * decides later runs, a worker's warning is the owner's only word of what a run planted (issue 26 rounds 25 and 26,
 * F25b-1, F26b-4). A card sent to a channel that names who answers (`answerers`) and carries links (`links: true`) is
 * answered there, as one of them: its link would let whoever reads that chat answer it (F26b-3).
 */
export function linkRefusal(card: CardRow, channels: Readonly<Record<string, { answerers?: readonly string[] | null; links?: boolean }>> | undefined): "link.ownerOnly" | "link.answerersOnly" | null {
  if (card.system !== null && card.system !== "toolApproval") return "link.ownerOnly";
  const carried = (ch: string) => own(channels ?? {}, ch);
  if (card.channels.some((ch) => carried(ch)?.links === true && (carried(ch)?.answerers ?? null) !== null)) return "link.answerersOnly";
  return null;
}

/**
 * POST /v1/cards/:id/answer: the owner's answer, or a channel's on behalf of the person it names (`by`, one of the
 * channel's answerers), for the message it delivered (`ref`).
 */
export function cardAnswer(c: Ctx, input: InputOf<"answer">): Reply<AnswerAnswer> {
  const who = authorize(c, input.keyHash, ["channel", "owner"]);
  if (isReply(who)) return who;
  const card = cardFor(c, input.card);
  if (isReply(card)) return card;
  let by = who.name;
  if (who.kind === "channel") {
    if (!card.channels.includes(who.name)) return err(403, c.say("card.notForChannel"));
    if (input.by === null) return err(400, c.say("card.byRequired"));
    // A channel answers for its own answerers, never as the owner: their answer would read "by you" in why and the
    // console (issue 26 round 56, F56b-2).
    if (input.by === "owner" || c.view.keysNamed("owner", input.by).length > 0) return err(403, c.say("card.byOwner", { by: input.by }));
    if (input.ref === null) return err(400, c.say("card.refRequired"));
    const answerers = own(c.rules.channels, who.name)?.answerers ?? null;
    if (answerers !== null && !answerers.includes(input.by)) return err(403, c.say("card.byNotAnswerer", { by: input.by }));
    const delivery = own(card.deliveries, who.name)?.ref ?? null;
    if (delivery === null) return err(409, c.say("card.notDelivered"));
    if (delivery !== input.ref) return err(409, c.say("card.refMismatch"));
    by = input.by;
  }
  return answerChecked(c, card, input.choice, input.text, by);
}

/** The checks every answer passes: first one wins, a valid choice, fyi never. */
function answerChecked(c: Ctx, card: CardRow, choice: number | null, text: string | null, by: string): Reply<AnswerAnswer> {
  if (card.fyi) return err(409, c.say("card.fyi"));
  if (card.state === "answered") return err(409, c.say("card.answered"));
  if (card.state === "closed") return err(409, c.say(card.choice !== null || card.answer !== null ? "card.answered" : "card.closed"));
  if (card.kind === "ask") {
    if (choice === null && text === null) return err(400, c.say("card.choiceOrText"));
    if (choice !== null && choice >= card.options.length) return err(400, c.say("card.choiceRange", { max: card.options.length - 1 }));
  } else if (choice !== null && choice !== 0) {
    return err(400, c.say("card.noticeChoice"));
  }
  if (card.system === "budget") answerBudgetCard(c, card, choice, by);
  else if (card.system === "tooFast") answerRateCard(c, card, choice, by);
  else if (card.system === "toolApproval") {
    const refused = answerToolCard(c, card, choice, by);
    if (refused) return refused;
  } else answerCard(c, card, choice, text, by);
  const after = c.tx.get("cards", card.id);
  assert(after, "answered-card-exists");
  return ok({ ok: true, card: ownerCard(c, after) });
}

/** POST /v1/cards/:id/resolve: the owner closes a card, no decision needed (with why, when given). */
export function cardResolve(c: Ctx, input: InputOf<"resolve">): Reply<Changed> {
  const who = authorize(c, input.keyHash, ["owner"]);
  if (isReply(who)) return who;
  const card = cardFor(c, input.card);
  if (isReply(card)) return card;
  const result = input.reason ? c.msg("result.notNeededWhy", { reason: input.reason }) : c.msg("result.notNeeded");
  const changed = closeCard(c, card.id, result, null, who.name);
  return ok({ ok: true, changed });
}
