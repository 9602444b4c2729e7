/**
 * The built-in `webhook` channel (protocol.md 通道模板与命令行示例): posts each new card to a chat robot's incoming
 * webhook in that platform's own format — `platform`: `dingtalk`, `wecom`, `slack`, `discord` — or to any URL with
 * a custom `body` template whose strings have `{text}` replaced. Checks each platform's success answer (`errcode`,
 * `ok`), refuses (reports failed) a card over the platform's size limit instead of truncating it, keeps mentions
 * from firing on Discord and shows markup in card text literally on Slack, WeCom and Discord.
 * Webhooks cannot edit a sent message, so updates are only reported.
 *
 * Options (config.json): `url`, and `platform` or `body`.
 */
import { cardText, eachCard, langFromEnv, type Card, type ChannelArgs, type TextFormat } from "agent-autoloop/sdk";

/** The options of a webhook channel (config.json `channels.<name>`). */
interface Options { name: string; url?: string; platform?: string; body?: unknown }

/** WeCom markdown messages: at most 2048 bytes. */
export const wecomMaxBytes = 2048;
/** Discord messages: at most 2000 characters. */
export const discordMaxChars = 2000;

const lang = langFromEnv(process.env);
const openLink = lang === "zh" ? "打开链接" : "Open link";

/**
 * WeCom: link markup and angle brackets in card text are shown as they are (full-width), never as links, tags or
 * mentions; a plain web address becomes an "打开链接" / "Open link" link.
 */
export function wecomLiteral(s: string): string {
  return s
    .split(/(https?:\/\/[^\s<>\[\]()]+)/)
    .map((part, i) => (i % 2 === 1 ? `[${openLink}](${part})` : part.replace(/</g, "＜").replace(/>/g, "＞").replace(/\[/g, "［").replace(/\]/g, "］").replace(/\(/g, "（").replace(/\)/g, "）")))
    .join("");
}

/** Slack: `&`, `<` and `>` escaped as Slack asks, so card text cannot mention @channel, a user or make a link. */
export function slackLiteral(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/**
 * Discord: markdown in card text is shown as it is (each markup character escaped with a backslash, as Discord reads
 * it), so card text cannot make a masked link `[shown](elsewhere)`, a heading or a spoiler (issue 26 round 25,
 * F25b-3); a bare URL is left whole, so it stays a link to where it says.
 */
export function discordLiteral(s: string): string {
  return s
    .split(/(https?:\/\/[^\s<>\[\]()]+)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/[\\*_~`|>#\[\]()<]/g, (ch) => `\\${ch}`)))
    .join("");
}

/**
 * How each platform's markup shows card text. WeCom: a bold heading and the card's answer page as a "点击处理" link
 * (a notice without options gets no "1. 已处理" line); Slack: text escaped; others: plain text.
 */
const formats: Record<string, TextFormat> = {
  wecom: { literal: wecomLiteral, heading: (line) => `**${line}**`, link: (label, url) => `[${label}](${url})` },
  slack: { literal: slackLiteral },
  discord: { literal: discordLiteral },
};

/** The message text of a card for a platform: the card's text projection (SDK `cardText`) in that platform's markup. */
export function renderText(card: Card, platform: string | undefined): string {
  return cardText(card, lang, (platform !== undefined && Object.hasOwn(formats, platform) ? formats[platform] : undefined) ?? {});
}

/** Replaces `{text}` in every string of a JSON template. */
export function fillTemplate(template: unknown, text: string): unknown {
  if (typeof template === "string") return template.split("{text}").join(text);
  if (Array.isArray(template)) return template.map((x) => fillTemplate(x, text));
  if (template && typeof template === "object") return Object.fromEntries(Object.entries(template).map(([k, v]) => [k, fillTemplate(v, text)]));
  return template;
}

/**
 * The request body for a card, or the reason it cannot be sent (over the platform's limit).
 * @throws Error when neither `platform` nor `body` is configured.
 */
export function payload(card: Card, options: Options): { body: unknown } | { tooLarge: string } {
  const text = renderText(card, options.platform);
  switch (options.platform) {
    case "dingtalk":
      return { body: { msgtype: "text", text: { content: text } } };
    case "wecom":
      if (Buffer.byteLength(text, "utf8") > wecomMaxBytes) return { tooLarge: `the card is ${Buffer.byteLength(text, "utf8")} bytes; WeCom takes at most ${wecomMaxBytes}` };
      return { body: { msgtype: "markdown", markdown: { content: text } } };
    case "slack":
      return { body: { text } };
    case "discord":
      if ([...text].length > discordMaxChars) return { tooLarge: `the card is ${[...text].length} characters; Discord takes at most ${discordMaxChars}` };
      return { body: { content: text, allowed_mentions: { parse: [] } } };
    case undefined:
      if (options.body === undefined) throw new Error("webhook channel: set platform (dingtalk, wecom, slack, discord) or a body template");
      return { body: fillTemplate(options.body, text) };
    default:
      throw new Error(`webhook channel: unknown platform ${options.platform}`);
  }
}

/** Whether the platform said the message was taken; else why not. */
export async function accepted(res: Response, platform: string | undefined): Promise<string | null> {
  const text = await res.text();
  if (res.status >= 300 && res.status < 400) return `HTTP ${res.status}: the webhook redirects (to ${res.headers.get("location") ?? "?"}); use the final URL`;
  if (!res.ok) return `HTTP ${res.status}: ${text.slice(0, 300)}`;
  if (platform === "dingtalk" || platform === "wecom") {
    try {
      const j = JSON.parse(text) as { errcode?: number; errmsg?: string };
      return j.errcode === 0 ? null : `errcode ${j.errcode}: ${j.errmsg ?? ""}`;
    } catch {
      return `not a JSON answer: ${text.slice(0, 300)}`;
    }
  }
  if (platform === "slack") {
    if (text.trim() === "ok") return null;
    try {
      return (JSON.parse(text) as { ok?: boolean }).ok === true ? null : `Slack answered ${text.slice(0, 300)}`;
    } catch {
      return `Slack answered ${text.slice(0, 300)}`;
    }
  }
  return null;
}

export default async function webhookChannel({ hub, options: raw, log, signal }: ChannelArgs): Promise<void> {
  const options = raw as Options; // config.json values: each is checked where it is used (payload, the url below)
  if (!options.url) throw new Error("webhook channel: url is required");
  const url = options.url;
  await eachCard(hub, log, signal, async (card: Card) => {
    if (card.ref !== null) {
      // a webhook cannot change a sent message: report the new version as shown
      await hub.delivered(card.id, card.version, card.ref).catch(() => {});
      return;
    }
    const p = payload(card, options);
    if ("tooLarge" in p) {
      await hub.failed(card.id, card.version, p.tooLarge).catch(() => {});
      return;
    }
    try {
      // A redirect would turn the POST into a GET without the message: count it as a failure.
      const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(p.body), signal: AbortSignal.timeout(15_000), redirect: "manual" });
      const problem = await accepted(res, options.platform);
      if (problem) await hub.failed(card.id, card.version, problem);
      else await hub.delivered(card.id, card.version, `webhook-${card.id}`);
    } catch (e) {
      await hub.failed(card.id, card.version, (e as Error).message).catch(() => {});
    }
  });
}
