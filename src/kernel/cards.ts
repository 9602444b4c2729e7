/**
 * Cards (protocol.md 通道, 本人): creation with per-lane keys, delivery to channels with leases and retries,
 * answers (first one wins), closing and resolving. Asks that get answered become events of their lane.
 */
import type { Ctx } from "./context.js";
import type { RuleDef } from "./rules.js";
import type { CardRow, CardState, Delivery, OutboxRow, RunRow, SystemKind } from "./types.js";
import type { CardTexts, Worded } from "../i18n/messages.js";
import { cardKeyOf, outboxKey } from "./tables.js";
import {
  cardOfferLeaseMs, deliveryGiveUpMs, deliveryRetryFirstMs, deliveryRetryMaxMs, fyiDeliveryWindowMs, heartbeatRecordIntervalMs,
} from "./limits.js";
import { cardLinkToken } from "./credentials.js";
import { enqueue, freeEventId, recordEvent } from "./lanes.js";
import { own } from "./own.js";
import { backoffMs } from "./backoff.js";
import type { Card, OwnerCard } from "../protocol/responses.js";

/** What `createCard` makes a card of (protocol.md 回执: ask, notice). */
export interface NewCard {
  kind: "ask" | "notice";
  /** Notices only. */
  fyi?: boolean;
  /** A text the hub wrote comes `Worded` (`c.worded`): the card keeps its words and, in `texts`, its id and params. */
  title: string | Worded;
  text?: string | Worded | null;
  /** Asks only. */
  options?: (string | Worded)[];
  /** Asks only. */
  recommend?: number | null;
  about?: string | null;
  key?: string | null;
  rule: RuleDef | null;
  lane: string;
  run: number | null;
  /** Hub alerts: what the card is about (its key, if it has one, from `systemCardKey`). */
  system?: SystemKind | null;
  /** The card's source when it has no rule (POST /v1/tell from a source). */
  source?: string | null;
  /** For fyi notices: who may not send the same key twice (default: the run). */
  fyiScope?: string;
  /** A `toolApproval` ask: the tool call it is about (issue 16). */
  toolCall?: number;
  /** A declarative plugin's card template the card is shown with (`<plugin>/<template>`; issue 18). */
  template?: string;
}

/** The key row of an fyi notice: `scope` (a run, or who told it) may send each dedup key once. */
function fyiKey(rule: string | null, lane: string, scope: string | number, base: string): string {
  return cardKeyOf(rule, lane, `fyi:${scope}:${base}`);
}

/** The fyi notice `scope` already sent with this `key` (POST /v1/tell: no rule, no lane), if any. */
export function sentFyiNotice(c: Ctx, scope: string, key: string): number | undefined {
  return c.tx.get("cardkeys", fyiKey(null, "", scope, ownDedupKey(key)))?.card;
}

/** The words of a card's text, whoever wrote it. */
const words = (x: string | Worded): string => (typeof x === "string" ? x : x.words);

/**
 * The key that makes a card unique while open: its own `key`, else its title and text (protocol.md 回执). The hub's
 * own cards (`system`: alerts, tool approvals) keep their keys apart from every key an agent or a source chooses, so
 * a receipt or tell that asks with `toolCall:<n>` or `offline:<worker>` never takes the key of a card the hub must
 * make (issue 26 round 5, F2: the next approval of that lane failed with an invariant).
 */
export function dedupKey(spec: Pick<NewCard, "key" | "title" | "text" | "system"> & { run?: number | null }): string {
  // The hub's and the workers' cards apart from the agents' by text too (issue 26 round 28, F28a-2: a run posted the
  // worker's warning text first, so the warning about the next run was dropped as its duplicate, and closed with it);
  // a worker's about one run never merged into one about another (round 29, F29a-8: a harmless index change's warning,
  // read and left open, swallowed the same words about a later run's dangerous one).
  if (!spec.key && spec.system === "worker") return `sw:${spec.run ?? ""}:${words(spec.title)}\n${words(spec.text ?? "")}`;
  if (!spec.key) return `${spec.system ? "st" : "t"}:${words(spec.title)}\n${words(spec.text ?? "")}`;
  return spec.system ? systemDedupKey(spec.key) : ownDedupKey(spec.key);
}

/** The dedup key of a card that has its own `key`, chosen by an agent or a source. */
function ownDedupKey(key: string): string {
  return `k:${key}`;
}

/** The dedup key of a hub card with the key `systemCardKey` (or the tool-call step) gives it. */
function systemDedupKey(key: string): string {
  return `s:${key}`;
}

/**
 * The open card with this key in the lane, if any. A key row names an open card: `saveCard` deletes it when its
 * card leaves open (fyi keys, kept to stop repeats, are never looked up here).
 */
export function openCardByKey(c: Ctx, rule: string | null, lane: string, key: string): CardRow | undefined {
  const hit = c.tx.get("cardkeys", cardKeyOf(rule, lane, key));
  return hit ? c.tx.get("cards", hit.card) : undefined;
}

/** The open hub alert (no rule, no lane) with this `key`, from `systemCardKey`, if any. */
export function openAlert(c: Ctx, key: string): CardRow | undefined {
  return openCardByKey(c, null, "", systemDedupKey(key));
}

/** The texts of a new card the hub wrote, as data (`CardTexts`); undefined when it wrote none of them. */
function cardTexts(spec: NewCard): CardTexts | undefined {
  const out: CardTexts = {};
  if (typeof spec.title !== "string") out.title = spec.title.text;
  if (spec.text !== undefined && spec.text !== null && typeof spec.text !== "string") out.text = spec.text.text;
  const options = spec.options ?? [];
  if (options.length > 0 && options.every((o) => typeof o !== "string")) out.options = options.map((o) => (o as Worded).text);
  return Object.keys(out).length === 0 ? undefined : out;
}

/**
 * Creates a card unless one with the same key is still open in the lane (fyi notices: unless this run
 * already made it). The card goes to the rule's channels, or to every channel.
 * @returns the new card's id, or null when an equal card is still open.
 */
export function createCard(c: Ctx, spec: NewCard): number | null {
  const fyi = spec.fyi === true;
  const ruleName = spec.rule?.name ?? null;
  const base = dedupKey(spec);
  // Stryker disable next-line StringLiteral: every fyi notice is made by a run or with a fyiScope (tell), so the "" is never used
  const scope = spec.fyiScope ?? spec.run ?? "";
  const rowKey = fyi ? fyiKey(ruleName, spec.lane, scope, base) : cardKeyOf(ruleName, spec.lane, base);
  // An equal card is still open (its key row goes when it leaves open), or this fyi notice was already sent.
  if (c.tx.get("cardkeys", rowKey)) return null;
  const id = c.nextId("card");
  const channels = spec.rule?.channels ?? Object.keys(c.rules.channels);
  const texts = cardTexts(spec);
  const card: CardRow = {
    id, version: 1, kind: spec.kind, fyi,
    state: fyi ? "closed" : "open",
    title: words(spec.title), text: words(spec.text ?? ""),
    options: (spec.options ?? []).map(words),
    recommend: spec.recommend ?? null,
    about: spec.about ?? null, key: spec.key ?? null,
    rule: ruleName, lane: spec.lane, group: spec.rule?.group ?? null, source: spec.source ?? spec.rule?.source ?? null,
    run: spec.run, system: spec.system ?? null, channels, at: c.now,
    choice: null, answer: null, by: null, answeredAt: null, result: null, closedAt: fyi ? c.now : null,
    deliveries: {},
    // Stryker disable next-line ConditionalExpression: equivalent — rows are kept as JSON, which leaves an undefined property out
    ...(spec.toolCall === undefined ? {} : { toolCall: spec.toolCall }),
    // Stryker disable next-line ConditionalExpression: equivalent, as the line above
    ...(spec.template === undefined ? {} : { template: spec.template }),
    // Stryker disable next-line ConditionalExpression: equivalent, as the line above
    ...(texts === undefined ? {} : { texts }),
  };
  c.tx.put("cards", id, card);
  c.tx.put("cardkeys", rowKey, { card: id });
  for (const ch of channels) offer(c, ch, id, c.now);
  if (fyi) c.due("fyiExpire", id, c.now + fyiDeliveryWindowMs);
  c.count({ cards: 1, openCards: fyi ? 0 : 1 });
  return id;
}

function offer(c: Ctx, channel: string, card: number, at: number): void {
  const row: OutboxRow = { channel, card, nextAt: at };
  c.tx.put("outbox", outboxKey(channel, card), row);
  c.wake.channels.add(channel);
}

/**
 * Saves a card that changed state `from` open or answered to answered or closed (never an fyi notice: it is
 * closed from the start) with the next version, and offers the change to channels that already show it;
 * channels that never got it do not get it at all. Leaving open frees its key (no other open card can hold it).
 */
export function saveCard(c: Ctx, card: CardRow, from: CardState): void {
  card.version += 1;
  c.tx.put("cards", card.id, card);
  if (from === "open") {
    c.count({ openCards: -1 });
    c.tx.del("cardkeys", cardKeyOf(card.rule, card.lane, dedupKey(card)));
    // A hub card without a key opened before its text had a space of its own holds the agents' key (F28a-2); a
    // worker's opened before its run was part of its key, the hub's (F29a-8).
    for (const system of [null, "hops" as const]) { // the agents' space, then the hub's (`st:`: any hub kind but a worker's)
      const before = cardKeyOf(card.rule, card.lane, dedupKey({ ...card, system }));
      if (card.system !== null && !card.key && c.tx.get("cardkeys", before)?.card === card.id) c.tx.del("cardkeys", before);
    }
  }
  for (const ch of card.channels) {
    if (own(card.deliveries, ch)?.ref) offer(c, ch, card.id, c.now);
    else c.tx.del("outbox", outboxKey(ch, card.id));
  }
}

/** Closes a card (notice handled, card resolved, hub alert cleared) with a result text. No-op if closed. */
export function closeCard(c: Ctx, id: number, result: string, answer: string | null = null, by: string | null = null): boolean {
  const card = c.tx.get("cards", id);
  if (!card || card.state === "closed") return false;
  const from = card.state;
  card.state = "closed";
  card.closedAt = c.now;
  card.result = result;
  if (answer !== null) card.answer = answer;
  if (by !== null) card.by = by;
  saveCard(c, card, from);
  return true;
}

/** The card as a channel sees it (protocol.md 通道): no lane, no about. */
export function channelCard(c: Ctx, card: CardRow, channel: string | null): Card {
  const links = channel !== null && own(c.rules.channels, channel)?.links === true;
  return {
    id: card.id, version: card.version, ref: channel ? own(card.deliveries, channel)?.ref ?? null : null,
    kind: card.kind, fyi: card.fyi, state: card.state, title: card.title, text: card.text,
    options: card.options, recommend: card.recommend, choice: card.choice, answer: card.answer, by: card.by,
    result: card.result, link: links && c.env.publicUrl ? cardLink(c, card) : null,
    rule: card.rule, at: c.iso(card.at),
    ...(card.template === undefined ? {} : { template: card.template }),
    ...(card.texts === undefined ? {} : { texts: card.texts }),
  };
}

/**
 * The card as the owner sees it: the channel view plus `lane`, `about`, `run` and deliveries, and for a tool call's
 * approval card the call's whole arguments when they were kept (issue 26 #5).
 */
export function ownerCard(c: Ctx, card: CardRow): OwnerCard {
  const args = card.toolCall === undefined ? undefined : c.tx.get("calls", card.toolCall)?.args;
  return {
    ...channelCard(c, card, null),
    ...(args === undefined ? {} : { toolArguments: args }),
    lane: card.lane, about: card.about, run: card.run, channels: card.channels,
    deliveries: Object.fromEntries(Object.entries(card.deliveries).map(([k, d]) => [k, { ref: d.ref, version: d.version, failures: d.failures, gaveUp: d.gaveUp, error: d.error }])),
  };
}

/** The URL of a card's link page (protocol.md 谁能做什么: 带权限的卡片链接) under `publicUrl`. */
export function cardLink(c: Ctx, card: CardRow): string {
  return `${c.env.publicUrl}/c/${card.id}/${cardLinkToken(c.env.master, card.id, card.at)}`;
}

/** Records that a channel polled, at most once a minute (protocol.md Agent: heartbeats are thinned). */
export function channelSeen(c: Ctx, channel: string): void {
  const seen = c.tx.get("channels", channel);
  if (!seen || c.now - seen.seenAt >= heartbeatRecordIntervalMs) c.tx.put("channels", channel, { name: channel, seenAt: c.now });
}

/**
 * GET /v1/cards/next: the card this channel should send or update now, leased for a minute.
 * @returns the card, or null when there is nothing to send now.
 */
export function nextCard(c: Ctx, channel: string): Card | null {
  const hit = c.view.nextOffer(channel, c.now);
  if (!hit) return null;
  const card = c.tx.get("cards", hit.row.card);
  if (!card) {
    // Stryker disable next-line StringLiteral: cards are never deleted, so an outbox row always names a card
    c.tx.del("outbox", hit.key);
    return null;
  }
  c.tx.put("outbox", hit.key, { ...hit.row, nextAt: c.now + cardOfferLeaseMs });
  return channelCard(c, card, channel);
}

function delivery(card: CardRow, channel: string): Delivery {
  return own(card.deliveries, channel) ?? { ref: null, version: 0, failures: 0, firstFailedAt: null, gaveUp: false, error: null };
}

/** POST /v1/cards/:id/delivered: the channel sent `version` as message `ref`. */
export function delivered(c: Ctx, channel: string, card: CardRow, version: number, ref: string): void {
  const d = delivery(card, channel);
  const key = outboxKey(channel, card.id);
  if (version === card.version) c.tx.del("outbox", key);
  else if (c.tx.get("outbox", key) === undefined) offer(c, channel, card.id, c.now);
  if (d.ref === ref && d.version >= version && !d.error) return;
  card.deliveries[channel] = { ...d, ref, version: Math.max(d.version, version), error: null, gaveUp: false };
  c.tx.put("cards", card.id, card);
}

/**
 * POST /v1/cards/:id/failed: a first send is retried with growing gaps (30 s doubling, at most 15 min)
 * and given up an hour after its first failure; a failed update is only recorded (protocol.md 通道).
 */
export function failed(c: Ctx, channel: string, card: CardRow, error: string | null): void {
  const d = delivery(card, channel);
  const key = outboxKey(channel, card.id);
  d.failures += 1;
  d.error = error ?? "failed";
  if (d.ref !== null) {
    c.tx.del("outbox", key);
  } else {
    d.firstFailedAt ??= c.now;
    const giveUpAt = d.firstFailedAt + deliveryGiveUpMs;
    if (c.now >= giveUpAt) {
      d.gaveUp = true;
      c.tx.del("outbox", key);
    } else {
      const wait = backoffMs(d.failures, deliveryRetryFirstMs, deliveryRetryMaxMs);
      c.tx.put("outbox", key, { channel, card: card.id, nextAt: Math.min(c.now + wait, giveUpAt) } satisfies OutboxRow);
    }
  }
  card.deliveries[channel] = d;
  c.tx.put("cards", card.id, card);
}

/** The run that made a card, for its session. */
function askingRun(c: Ctx, card: CardRow): RunRow | undefined {
  return card.run !== null ? c.tx.get("runs", card.run) : undefined;
}

/**
 * Records an answer (the caller checked it is the first and valid; a budget card's answer is budget.ts's). A notice
 * closes as handled; an ask becomes an answer event of its lane and a run that continues the asking run's session.
 */
export function answerCard(c: Ctx, card: CardRow, choice: number | null, text: string | null, by: string): void {
  if (card.kind === "notice") {
    closeCard(c, card.id, c.msg("answer.handled"), text, by);
    return;
  }
  const from = card.state;
  card.state = "answered";
  card.choice = choice;
  card.answer = text;
  card.by = by;
  card.answeredAt = c.now;
  saveCard(c, card, from);
  const rule = card.rule !== null ? c.rule(card.rule) : undefined;
  if (!rule || card.source === null) return; // hub alerts and cards of deleted rules only record the answer
  const asker = askingRun(c, card);
  const ev = recordEvent(c, {
    source: card.source, sid: freeEventId(c, card.source, `card:${card.id}:answer`), type: "card.answer",
    subject: card.lane || null, summary: card.title, detail: null, link: null, hops: asker?.hops ?? 0, internal: "answer",
  });
  ev.routed = [rule.name];
  c.tx.put("events", ev.id, ev);
  const session = asker?.session ?? null;
  enqueue(c, rule, card.lane, {
    answers: [card.id], hops: asker?.hops ?? 0,
    sessionHint: session ? { session, agent: asker?.agent ?? null } : null,
  });
}
