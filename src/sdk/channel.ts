/**
 * The channel plugin contract (plugins.md 通道插件; protocol.md 通道): what a channel gets (`ChannelArgs`, with the
 * `hub` handle it talks to the hub through), the card it receives (`Card`), and helpers channels share: the take-a-card
 * loop (`eachCard`) and the card's text projection for chat platforms (`cardHeading`, `cardText`). Part of the plugin
 * SDK (`agent-autoloop/sdk`); the hub runs channels with the same definitions (src/host/channels.ts).
 */
import type { AnswerAnswer, Card as WireCard, CardNext, Ok } from "../protocol/responses.js";
import { t, type Lang } from "../i18n/messages.js";
import { templateInteractive, templateLines } from "./card-template.js";

/** One version of a card as `GET /v1/cards/next` hands it to a channel (protocol.md 通道). */
export type Card = WireCard;

/** What a channel plugin calls: the hub, with the channel's own key (protocol.md 通道). */
export interface ChannelHub {
  /** The next card version to show, waiting up to `wait` seconds (at most 50) for one; `card` is null when none came. */
  nextCard(wait: number): Promise<CardNext>;
  /** This version of the card is shown; `ref` is the platform's message id (a later version updates that message). */
  delivered(id: number, version: number, ref: string): Promise<Ok>;
  /** This version could not be shown (the hub retries it later); `error` says why. */
  failed(id: number, version: number, error: string): Promise<Ok>;
  /** An answer given on the platform: an option number or a text, who gave it (`by`) and on which message (`ref`). */
  answer(id: number, a: { choice?: number; text?: string; by: string; ref: string }): Promise<AnswerAnswer>;
}

/** What the hub hands a channel plugin when it starts it (plugins.md 通道插件). */
export interface ChannelArgs {
  hub: ChannelHub;
  /** The channel's config.json entry without its key; `name` is the channel's name. */
  options: Record<string, unknown> & { name: string };
  /** A line for the hub's log, prefixed with the channel's name. */
  log: (line: string) => void;
  /** Aborts when the hub stops the channel: the plugin returns then. */
  signal: AbortSignal;
  /** The channel's secret from secrets.env, the variable `channelSecretVariable(options.name)`, or null. */
  secret: string | null;
}

/**
 * A channel plugin (a channel.ts's default export): runs until `signal` aborts. Returning or throwing before that is a
 * failure the hub restarts it after.
 */
export type ChannelPlugin = (args: ChannelArgs) => Promise<void>;

/** The secrets.env variable that holds a channel's secret (defined beside the other secret names, which load nothing). */
export { channelSecretVariable } from "../kernel/names.js";

/** After the hub could not be reached for the next card, the channel asks again after this long (ms). */
export const nextCardRetryMs = 5_000;

/**
 * The loop of a channel: takes the next card (a long poll of up to 50 s) and hands it to `handle`; when the hub
 * cannot be reached it logs that and tries again `nextCardRetryMs` later. Returns when `signal` aborts.
 */
export async function eachCard<C>(
  hub: { nextCard(wait: number): Promise<{ card: C | null }> }, log: (line: string) => void, signal: AbortSignal,
  handle: (card: C) => Promise<void>,
): Promise<void> {
  while (!signal.aborted) {
    let card: C | null;
    try {
      card = (await hub.nextCard(50)).card;
    } catch (e) {
      if (signal.aborted) return;
      log(`next card: ${(e as Error).message}`);
      await new Promise((r) => setTimeout(r, nextCardRetryMs));
      continue;
    }
    if (card) await handle(card);
  }
}

/**
 * The first line of a card on a chat channel (protocol.md 通道模板与命令行示例): `[仅告知] ` / `[FYI] ` for fyi notices,
 * the title, then ` · ` and the rule that made the card. `literal` makes the title and rule safe for the platform's
 * markup (identity by default).
 */
export function cardHeading(
  card: Pick<Card, "fyi" | "title" | "rule">, lang: Lang, literal: (s: string) => string = (s) => s,
): string {
  return `${card.fyi ? `[${t(lang, "channel.fyi")}] ` : ""}${literal(card.title)}${card.rule ? ` · ${literal(card.rule)}` : ""}`;
}

/** How a platform's markup shows a card's text (see `cardText`); every part defaults to plain text. */
export interface TextFormat {
  /** Makes text that came from the card (title, rule, text, options) show as it is in the markup. */
  literal?: (s: string) => string;
  /** Wraps the heading line (markdown bold, say). */
  heading?: (line: string) => string;
  /** The line that opens the card's answer page; plain: `<label>: <url>`. */
  link?: (label: string, url: string) => string;
}

/**
 * The text projection of a card for a chat platform that shows one message (protocol.md 通道模板与命令行示例): the
 * heading, the text, its card template's lines (`templateLines`; or that the template is not loaded), an ask's
 * options numbered from 0 (the recommended one marked), a line saying where a template's buttons and forms work when
 * it has any, then — unless the card is an fyi notice without such controls — a line opening the card's page when it
 * has a `link`, else (not for fyi notices) the `agent-autoloop answer` command that answers it. Lines are joined with `\n`; nothing is cut (a platform's size limit is the channel's to check).
 */
export function cardText(
  card: Pick<Card, "id" | "kind" | "fyi" | "title" | "rule" | "text" | "options" | "recommend" | "link" | "template" | "templateUi">, lang: Lang,
  format: TextFormat = {},
): string {
  const literal = format.literal ?? ((s: string) => s);
  const head = cardHeading(card, lang, literal);
  const lines = [format.heading ? format.heading(head) : head];
  if (card.text) lines.push(literal(card.text));
  if (card.templateUi) lines.push(...templateLines(card.templateUi, lang).map(literal));
  else if (card.template !== undefined) lines.push(literal(t(lang, "channel.template.notLoaded", { template: card.template })));
  const hasOptions = card.kind === "ask" && card.options.length > 0;
  if (hasOptions) {
    card.options.forEach((o, i) => lines.push(`${i}. ${literal(o)}${card.recommend === i ? ` (${t(lang, "link.recommended")})` : ""}`));
  }
  const interactive = card.templateUi !== undefined && templateInteractive(card.templateUi.data);
  if (interactive) lines.push(literal(t(lang, "channel.template.controls")));
  if (card.link && (!card.fyi || interactive)) {
    const label = t(lang, "channel.answerHere");
    lines.push(format.link ? format.link(label, card.link) : `${label}: ${card.link}`);
  } else if (!card.fyi) {
    lines.push(literal(t(lang, "channel.answerCommand", { id: card.id, choices: hasOptions ? `<0-${card.options.length - 1}>` : "0" })));
  }
  return lines.join("\n");
}
