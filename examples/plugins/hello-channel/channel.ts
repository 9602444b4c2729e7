/**
 * A minimal channel plugin: takes cards from the hub, appends them to a file (`file` option) and reports them
 * delivered. Answer them with `agent-autoloop answer`. Replace the file with your platform's send and update.
 */
import { appendFileSync } from "node:fs";

interface Card { id: number; version: number; ref: string | null; title: string; text: string; options: string[] }
interface Args {
  hub: { nextCard(wait: number): Promise<{ card: Card | null }>; delivered(id: number, version: number, ref: string): Promise<unknown> };
  options: { file?: string };
  signal: AbortSignal;
}

export default async function helloChannel({ hub, options, signal }: Args): Promise<void> {
  const file = options.file ?? "hello-cards.txt";
  while (!signal.aborted) {
    const { card } = await hub.nextCard(50).catch(() => ({ card: null }));
    if (!card) continue;
    appendFileSync(file, `card ${card.id} v${card.version}: ${card.title} ${card.options.map((o, i) => `[${i}] ${o}`).join(" ")}\n`);
    await hub.delivered(card.id, card.version, card.ref ?? `hello-${card.id}`);
  }
}
