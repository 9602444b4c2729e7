/**
 * What a card looks like on Feishu, and what a press of one of its buttons says (protocol.md 通道; 回执: an fyi notice
 * is a grey card without the "已处理" button). Pure functions: no Feishu SDK, no network.
 *
 * The message is a Feishu interactive card (card JSON 1.0) with `config.update_multi`, so that one PATCH of the
 * message changes it for everyone in the chat. All card text is `plain_text`: nothing an agent writes can become a
 * link, a mention or markup.
 */
import { cardHeading, chartLine, controlLine, markdownLines, t, templateInteractive, unknownNodeType, type Card, type Lang, type TemplateUi, type UiNode } from "agent-autoloop/sdk";

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

type Field = { is_short: boolean; text: PlainText };
/** One element of a Feishu card (card JSON 1.0): a text, a text with fields (two a row when short), a rule, buttons. */
export type FeishuElement =
  | { tag: "div"; text: PlainText }
  | { tag: "div"; fields: Field[] }
  | { tag: "hr" }
  | { tag: "action"; actions: Button[] };

/** The JSON of a Feishu interactive card (card JSON 1.0), as sent in a message's `content`. */
export interface FeishuCard {
  config: { update_multi: true };
  header: { template: "blue" | "green" | "grey"; title: PlainText };
  elements: FeishuElement[];
}

const plain = (content: string): PlainText => ({ tag: "plain_text", content });
const div = (content: string): FeishuElement => ({ tag: "div", text: plain(content) });

/**
 * A card template as Feishu elements (issue 18; spec §3.4, how a card looks in a chat group): a rule (`hr`) above
 * it, its title and each section's title as a text, a list as one text of `• item` lines under its title, a kv as
 * fields (short ones two a row) under its title, markdown as text (SDK `markdownLines`: Feishu's own markdown also
 * reads tags such as `<at id=all>`, so a template's markdown is never handed to it), a doc-ref, a chart-lite, a form
 * and an actions row as the SDK's text lines. A template's buttons and forms are not Feishu buttons: a press would
 * come back over the channel, which may answer the card but not post a plugin's event; they work on the card's link
 * page (a button below, when the channel has links) and in the console.
 */
export function templateElements(ui: TemplateUi, lang: Lang): FeishuElement[] {
  const out: FeishuElement[] = [{ tag: "hr" }];
  if (ui.title) out.push(div(ui.title));
  const walk = (nodes: readonly unknown[]) => {
    for (const node of nodes as UiNode[]) {
      switch (node?.type) {
        case "section":
          if (node.title) out.push(div(node.title));
          walk(node.children);
          break;
        case "list":
          out.push(div([...(node.title ? [node.title] : []), ...node.items.map((i) => `• ${i}`)].join("\n")));
          break;
        case "kv":
          if (node.title) out.push(div(node.title));
          out.push({ tag: "div", fields: node.kv.map(([k, v]) => ({ is_short: `${k}${String(v)}`.length <= kvShortMaxChars, text: plain(`${k}\n${String(v)}`) })) });
          break;
        case "markdown":
          out.push(div(markdownLines(node.markdown).join("\n")));
          break;
        case "chart-lite":
          out.push(div(chartLine(node.title, node.chart.labels, node.chart.series)));
          break;
        case "doc-ref":
        case "form":
        case "actions":
          out.push(div(controlLine(node, lang)));
          break;
        default:
          out.push(div(t(lang, "channel.template.unknown", { type: unknownNodeType(node) })));
      }
    }
  };
  walk(ui.data);
  if (templateInteractive(ui.data)) out.push(div(t(lang, "channel.template.controls")));
  return out;
}

/** A kv pair whose key and value hold at most this many characters together is a short field (two a row). */
export const kvShortMaxChars = 24;

/**
 * The Feishu card for one version of a card: the heading (title, then the rule) in the header — blue while open,
 * green once answered, grey when closed and always for fyi notices —, the text, what was answered, by whom and the
 * result, and while the card is open one button per option (the recommended one highlighted) or, for a notice that is
 * not fyi, one "已处理" button. A card with a `link` (channels with `links: true`) also gets a button opening it (an
 * fyi or closed card too when its template has buttons or forms). A card template shows as `templateElements` after
 * the text; one that is not loaded is said so.
 */
export function feishuCard(card: Card, lang: Lang): FeishuCard {
  const elements: FeishuCard["elements"] = [];
  if (card.text) elements.push({ tag: "div", text: plain(card.text) });
  if (card.templateUi) elements.push(...templateElements(card.templateUi, lang));
  else if (card.template !== undefined) elements.push(div(t(lang, "channel.template.notLoaded", { template: card.template })));
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
  // A template's buttons and forms are shown on the card's link page: an fyi or closed card still links it.
  const page: Button[] = card.link ? [{ tag: "button", text: plain(t(lang, "channel.answerHere")), type: "default", url: card.link }] : [];
  if (card.fyi || card.state !== "open") return card.templateUi && templateInteractive(card.templateUi.data) ? page : [];
  const choose = (label: string, choice: number, primary: boolean): Button =>
    ({ tag: "button", text: plain(label), type: primary ? "primary" : "default", value: { card: card.id, choice } });
  const buttons = card.kind === "ask"
    ? card.options.map((o, i) => choose(card.recommend === i ? `${o} (${t(lang, "link.recommended")})` : o, i, card.recommend === i))
    : [choose(t(lang, "answer.handled"), 0, true)];
  return [...buttons, ...page];
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
