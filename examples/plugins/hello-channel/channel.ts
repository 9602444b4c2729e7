/**
 * A minimal channel plugin: takes cards from the hub, appends them to a file (`file` option) and reports them
 * delivered. Answer them with `agent-autoloop answer`. Replace the file with your platform's send and update.
 * Types and the take-a-card loop come from the plugin SDK, `agent-autoloop/sdk`.
 */
import { appendFileSync } from "node:fs";
import { eachCard, type ChannelArgs } from "agent-autoloop/sdk";

export default async function helloChannel({ hub, options, log, signal }: ChannelArgs): Promise<void> {
  const file = typeof options.file === "string" ? options.file : "hello-cards.txt";
  await eachCard(hub, log, signal, async (card) => {
    appendFileSync(file, `card ${card.id} v${card.version}: ${card.title} ${card.options.map((o, i) => `[${i}] ${o}`).join(" ")}\n`);
    await hub.delivered(card.id, card.version, card.ref ?? `hello-${card.id}`);
  });
}
