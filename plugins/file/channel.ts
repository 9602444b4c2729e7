/**
 * The built-in `file` channel: appends each card (and each update of it) to a text file as a readable block.
 * The simplest channel to watch: `tail -f ~/.agent-autoloop/cards.txt`. Answers go in through the CLI.
 * Options (config.json): `path` — the file (default: cards.txt in the current folder).
 */
import { appendFileSync } from "node:fs";
import { eachCard, templateLines, type Card, type ChannelArgs } from "agent-autoloop/sdk";

const zh = /^zh/i.test(process.env.AGENT_AUTOLOOP_LANG || process.env.LANG || "");
const words = zh
  ? { ask: "提问", notice: "通知", fyi: "仅告知", recommended: "推荐", answer: "回答", handled: "已处理", result: "结果", by: "回答人", link: "链接" }
  : { ask: "ask", notice: "notice", fyi: "fyi", recommended: "recommended", answer: "answer", handled: "handled", result: "result", by: "by", link: "link" };

/**
 * A carriage return that ends no line, written out: `cat` and `tail -f` would move back over what came before it
 * (issue 26 round 57, F57a-1: an agent's "Please wire $5000 to mallory\rOK: routine weekly note" showed only its end).
 */
const shown = (text: string): string => text.replace(/\r(?!\n)/g, "\\r");

/** The text block of one card version. */
export function renderCard(card: Card): string {
  const kind = card.fyi ? words.fyi : card.kind === "ask" ? words.ask : words.notice;
  const lines = [`── card ${card.id} · v${card.version} · ${kind} · ${card.state}${card.rule ? ` · ${card.rule}` : ""} · ${card.at}`, card.title];
  if (card.text) lines.push(shown(card.text));
  // A card template as the SDK's text projection shows it (issue 18); its buttons and forms work on the card's link page and in the console.
  if (card.templateUi) lines.push(...templateLines(card.templateUi, zh ? "zh" : "en"));
  card.options.forEach((o, i) => lines.push(`  ${i}) ${o}${card.recommend === i ? `  ← ${words.recommended}` : ""}`));
  if (card.choice !== null) lines.push(`${words.answer}: ${card.choice}) ${card.options[card.choice] ?? ""}`);
  if (card.answer) lines.push(`${words.answer}: ${shown(card.answer)}`);
  if (card.by) lines.push(`${words.by}: ${card.by}`);
  if (card.result) lines.push(`${words.result}: ${shown(card.result)}`);
  if (card.link) lines.push(`${words.link}: ${card.link}`);
  if (card.state === "open" && card.kind === "ask") lines.push(`→ agent-autoloop answer ${card.id} <0-${card.options.length - 1}>`);
  if (card.state === "open" && card.kind === "notice" && !card.fyi) lines.push(`→ agent-autoloop answer ${card.id} 0   (${words.handled})`);
  return lines.join("\n") + "\n\n";
}

export default async function fileChannel({ hub, options, log, signal }: ChannelArgs): Promise<void> {
  if (options.path !== undefined && typeof options.path !== "string") throw new Error("file channel: path must be a file path (a string)");
  const path = options.path ?? "cards.txt";
  await eachCard(hub, log, signal, async (card: Card) => {
    try {
      appendFileSync(path, renderCard(card), { mode: 0o600 });
    } catch (e) {
      await hub.failed(card.id, card.version, (e as Error).message).catch(() => {});
      return;
    }
    await hub.delivered(card.id, card.version, card.ref ?? `file-${card.id}`).catch((e: Error) => log(`delivered: ${e.message}`));
  });
}
