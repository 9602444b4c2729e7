/**
 * Running channel plugins in the hub's process (plugins.md 通道插件): each gets `{ hub, options, log, signal }`,
 * talks to the hub over HTTP with its own key, and is restarted by the supervisor (src/worker/loops.ts) after it
 * returns or throws, or leaves an uncaught error behind. Its errors are logged and never stop the hub.
 */
import { HubClient, type ChannelCardView } from "../protocol/client.js";
import { loadPlugin } from "./plugins.js";
import { loopRestartFirstMs } from "../kernel/limits.js";
import { Supervisor, type Loop } from "../worker/loops.js";
import { secretsEnvName, type ChannelConfig } from "./home.js";
import { t, type Lang } from "../i18n/messages.js";

/** What a channel plugin calls (protocol.md 通道). */
export interface ChannelHub {
  nextCard(wait: number): Promise<{ card: ChannelCardView | null }>;
  delivered(id: number, version: number, ref: string): Promise<unknown>;
  failed(id: number, version: number, error: string): Promise<unknown>;
  answer(id: number, a: { choice?: number; text?: string; by: string; ref: string }): Promise<unknown>;
}

export interface ChannelArgs {
  hub: ChannelHub;
  /** The channel's config.json entry without its key. */
  options: Record<string, unknown> & { name: string };
  log: (line: string) => void;
  signal: AbortSignal;
  /** The channel's secret from secrets.env, `AGENT_AUTOLOOP_CHANNEL_SECRET_<CHANNEL>` (name as in `secretsEnvName`), or null. */
  secret: string | null;
}

export type ChannelPlugin = (args: ChannelArgs) => Promise<void>;

/** A ChannelHub for one channel key; long polls end when `signal` aborts. */
export function channelHub(url: string, key: string, signal: AbortSignal): ChannelHub {
  const client = new HubClient(url, key);
  return {
    nextCard: (wait) => client.nextCard(wait, signal),
    delivered: (id, version, ref) => client.delivered(id, version, ref),
    failed: (id, version, error) => client.failed(id, version, error),
    answer: (id, a) => client.answer(id, a),
  };
}

/**
 * One run of a configured channel: loads its plugin and runs it until `signal` aborts. Returning or throwing early
 * is a failure its supervisor restarts (src/worker/loops.ts).
 * @param secrets the variables of secrets.env; the channel gets only its own, `AGENT_AUTOLOOP_CHANNEL_SECRET_<CHANNEL>`.
 */
export function channelLoop(
  name: string, config: ChannelConfig, url: string, pluginsDir: string, log: (line: string) => void, secrets: Record<string, string> = {},
): Loop {
  const { key, use, ...rest } = config;
  const options = { ...rest, name };
  const secret = secrets[`AGENT_AUTOLOOP_CHANNEL_SECRET_${secretsEnvName(name)}`] ?? null;
  const say = (line: string) => log(`channel ${name}: ${line}`);
  return async (signal) => {
    const plugin = await loadPlugin<ChannelPlugin>("channel", use, pluginsDir);
    await plugin({ hub: channelHub(url, key, signal), options, log: say, signal, secret });
  };
}

/**
 * Runs one configured channel under its own supervisor until `signal` aborts (`serve` runs all its channels under
 * one supervisor with `channelLoop`).
 * @param restartFirstMs the first restart delay (tests).
 */
export async function runChannel(
  name: string, config: ChannelConfig, url: string, pluginsDir: string, signal: AbortSignal,
  log: (line: string) => void, restartFirstMs = loopRestartFirstMs, secrets: Record<string, string> = {},
): Promise<void> {
  const supervisor = new Supervisor(log);
  supervisor.start(`channel ${name}`, channelLoop(name, config, url, pluginsDir, log, secrets), { restartFirstMs });
  if (!signal.aborted) await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
  await supervisor.stop();
}

/**
 * The loop of a built-in channel: takes the next card (a long poll of up to 50 s) and hands it to `handle`; when the
 * hub cannot be reached it logs that and tries again 5 s later. Returns when `signal` aborts.
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
      await new Promise((r) => setTimeout(r, 5000));
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
  card: { fyi: boolean; title: string; rule: string | null }, lang: Lang, literal: (s: string) => string = (s) => s,
): string {
  return `${card.fyi ? `[${t(lang, "channel.fyi")}] ` : ""}${literal(card.title)}${card.rule ? ` · ${literal(card.rule)}` : ""}`;
}
