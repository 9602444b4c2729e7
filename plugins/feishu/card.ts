/**
 * What a card looks like on Feishu, and what a press of one of its buttons says (protocol.md 通道; 回执: an fyi notice
 * is a grey card without the "已处理" button). Pure functions: no Feishu SDK, no network.
 *
 * The message is a Feishu interactive card (card JSON 1.0) with `config.update_multi`, so that one PATCH of the
 * message changes it for everyone in the chat. All card text is `plain_text`: nothing an agent writes can become a
 * link, a mention or markup.
 */
import { cardHeading, t, type Card, type Lang } from "agent-autoloop/sdk";

/** Which Feishu user id of the person who pressed a button becomes the answer's `by` (and is matched with `answerers`). */
export type AnswererIdType = "open_id" | "user_id" | "union_id";
export const answererIdTypes: readonly AnswererIdType[] = ["open_id", "user_id", "union_id"];

/** What a button carries back in its `value`: the card and the option (a notice's "已处理" is option 0). */
export interface ButtonValue { card: number; choice: number }

/** A button press that can be relayed to the hub as `POST /v1/cards/<card>/answer { choice, by, ref }`. */
export interface Press extends ButtonValue {
  /** The presser's Feishu user id of the configured type. */
  by: string;
  /** The message the button is on (`om_…`), which the hub compares with the delivered one. */
  ref: string;
}

type PlainText = { tag: "plain_text"; content: string };
type Button = { tag: "button"; text: PlainText; type: "primary" | "default"; value?: ButtonValue; url?: string };

/** The JSON of a Feishu interactive card (card JSON 1.0), as sent in a message's `content`. */
export interface FeishuCard {
  config: { update_multi: true };
  header: { template: "blue" | "green" | "grey"; title: PlainText };
  elements: ({ tag: "div"; text: PlainText } | { tag: "action"; actions: Button[] })[];
}

const plain = (content: string): PlainText => ({ tag: "plain_text", content });

/**
 * The Feishu card for one version of a card: the heading (title, then the rule) in the header — blue while open,
 * green once answered, grey when closed and always for fyi notices —, the text, what was answered, by whom and the
 * result, and while the card is open one button per option (the recommended one highlighted) or, for a notice that is
 * not fyi, one "已处理" button. A card with a `link` (channels with `links: true`) also gets a button opening it.
 */
export function feishuCard(card: Card, lang: Lang): FeishuCard {
  const elements: FeishuCard["elements"] = [];
  if (card.text) elements.push({ tag: "div", text: plain(card.text) });
  const outcome = outcomeLines(card, lang);
  if (outcome.length > 0) elements.push({ tag: "div", text: plain(outcome.join("\n")) });
  const buttons = cardButtons(card, lang);
  if (buttons.length > 0) elements.push({ tag: "action", actions: buttons });
  const template = card.fyi || card.state === "closed" ? "grey" : card.state === "answered" ? "green" : "blue";
  return { config: { update_multi: true }, header: { template, title: plain(cardHeading(card, lang)) }, elements };
}

/** The option a choice stands for: the ask's option, or "已处理" for a notice. */
export function choiceLabel(card: Pick<Card, "kind" | "options">, choice: number, lang: Lang): string {
  return card.kind === "notice" ? t(lang, "answer.handled") : card.options[choice] ?? String(choice);
}

function outcomeLines(card: Card, lang: Lang): string[] {
  const lines: string[] = [];
  if (card.choice !== null) lines.push(t(lang, "channel.answerLine", { answer: choiceLabel(card, card.choice, lang) }));
  if (card.answer) lines.push(t(lang, "channel.answerLine", { answer: card.answer }));
  if (card.by) lines.push(t(lang, "channel.byLine", { by: card.by }));
  if (card.result) lines.push(t(lang, "channel.resultLine", { result: card.result }));
  return lines;
}

function cardButtons(card: Card, lang: Lang): Button[] {
  if (card.fyi || card.state !== "open") return [];
  const choose = (label: string, choice: number, primary: boolean): Button =>
    ({ tag: "button", text: plain(label), type: primary ? "primary" : "default", value: { card: card.id, choice } });
  const buttons = card.kind === "ask"
    ? card.options.map((o, i) => choose(card.recommend === i ? `${o} (${t(lang, "link.recommended")})` : o, i, card.recommend === i))
    : [choose(t(lang, "answer.handled"), 0, true)];
  if (card.link) buttons.push({ tag: "button", text: plain(t(lang, "channel.answerHere")), type: "default", url: card.link });
  return buttons;
}

/** A whole number ≥ `min` given as a number or as decimal digits; else null. */
function wholeNumber(v: unknown, min: number): number | null {
  const n = typeof v === "number" ? v : typeof v === "string" && /^\d{1,15}$/.test(v) ? Number(v) : NaN;
  return Number.isSafeInteger(n) && n >= min ? n : null;
}

function field(v: unknown, key: string): unknown {
  return v !== null && typeof v === "object" ? (v as Record<string, unknown>)[key] : undefined;
}

function nonEmptyString(v: unknown): string | null {
  return typeof v === "string" && v.length > 0 ? v : null;
}

/**
 * Reads a `card.action.trigger` callback as the SDK's EventDispatcher hands it over (the event's fields with the
 * header's at the top level): the button's `action.value`, the message (`context.open_message_id`, or
 * `open_message_id` at the top) and the presser's id of type `idType` (`operator.<idType>`).
 * @returns the press, or the message-catalog id saying why it cannot be relayed (never throws on any input).
 */
export function readPress(event: unknown, idType: AnswererIdType): Press | { problem: "feishu.badPress" | "feishu.noOperatorId" } {
  const value = field(field(event, "action"), "value");
  const card = wholeNumber(field(value, "card"), 1);
  const choice = wholeNumber(field(value, "choice"), 0);
  const ref = nonEmptyString(field(field(event, "context"), "open_message_id")) ?? nonEmptyString(field(event, "open_message_id"));
  if (card === null || choice === null || ref === null) return { problem: "feishu.badPress" };
  const by = nonEmptyString(field(field(event, "operator"), idType));
  if (by === null) return { problem: "feishu.noOperatorId" };
  return { card, choice, by, ref };
}
