/**
 * Running channel plugins in the hub's process (plugins.md 通道插件): each gets `{ hub, options, log, signal }`,
 * talks to the hub over HTTP with its own key, and is restarted by the supervisor (src/worker/loops.ts) after it
 * returns or throws, or leaves an uncaught error behind. Its errors are logged and never stop the hub.
 */
import { HubClient } from "../protocol/client.js";
import type { PluginLoader } from "../plugins/index.js";
import { answerByMaxCodepoints, answerRefMaxCodepoints, answerTextMaxCodepoints, deliveryErrorMaxCodepoints, deliveryRefMaxCodepoints, loopRestartFirstMs } from "../kernel/limits.js";
import { relayed } from "../kernel/text.js";
import { Supervisor, type Loop } from "../worker/loops.js";
import type { ChannelConfig } from "./home.js";
import { channelSecretVariable, type ChannelHub, type ChannelPlugin } from "../sdk/index.js";

/**
 * A ChannelHub for one channel key; long polls end when `signal` aborts. What a channel reports comes from its
 * platform (a webhook's error body, a chat message's text, its sender and message ids): characters the hub refuses are
 * removed and text over its field's limit is cut (src/kernel/text.ts `relayed`), so that the report is not refused
 * and its reason lost.
 */
export function channelHub(url: string, key: string, signal: AbortSignal): ChannelHub {
  const client = new HubClient(url, key);
  const line = (s: string, max: number) => (typeof s === "string" ? relayed(s, true, max) : s);
  return {
    nextCard: (wait) => client.nextCard(wait, signal),
    delivered: (id, version, ref) => client.delivered(id, version, line(ref, deliveryRefMaxCodepoints)),
    failed: (id, version, error) => client.failed(id, version, typeof error === "string" ? relayed(error, false, deliveryErrorMaxCodepoints) : error),
    answer: (id, a) => client.answer(id, {
      ...a,
      ...(typeof a.text === "string" ? { text: relayed(a.text, false, answerTextMaxCodepoints) } : {}),
      by: line(a.by, answerByMaxCodepoints),
      ref: line(a.ref, answerRefMaxCodepoints),
    }),
  };
}

/**
 * One run of a configured channel: loads its plugin and runs it until `signal` aborts. Returning or throwing early
 * is a failure its supervisor restarts (src/worker/loops.ts).
 * @param plugins the loader of the hub (or worker) that runs the channel: it finds and keeps the channel's plugin.
 * @param secrets the variables of secrets.env, or how to read them: read again at each start of the loop, so a secret
 *   written into secrets.env while the channel keeps failing without it is taken at its next restart (issue 26); the
 *   channel gets only its own, `AGENT_AUTOLOOP_CHANNEL_SECRET_<CHANNEL>`.
 */
export function channelLoop(
  name: string, config: ChannelConfig, url: string, plugins: PluginLoader, log: (line: string) => void,
  secrets: Record<string, string> | (() => Record<string, string>) = {},
): Loop {
  const { key, use, ...rest } = config;
  const options = { ...rest, name };
  const say = (line: string) => log(`channel ${name}: ${line}`);
  return async (signal) => {
    const secret = (typeof secrets === "function" ? secrets() : secrets)[channelSecretVariable(name)] ?? null;
    const plugin = await plugins.load<ChannelPlugin>("channel", use);
    await plugin({ hub: channelHub(url, key, signal), options, log: say, signal, secret });
  };
}

/**
 * Runs one configured channel under its own supervisor until `signal` aborts (`serve` runs all its channels under
 * one supervisor with `channelLoop`).
 * @param restartFirstMs the first restart delay (tests).
 */
export async function runChannel(
  name: string, config: ChannelConfig, url: string, plugins: PluginLoader, signal: AbortSignal,
  log: (line: string) => void, restartFirstMs = loopRestartFirstMs, secrets: Record<string, string> | (() => Record<string, string>) = {},
): Promise<void> {
  const supervisor = new Supervisor(log);
  supervisor.start(`channel ${name}`, channelLoop(name, config, url, plugins, log, secrets), { restartFirstMs });
  if (!signal.aborted) await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
  await supervisor.stop();
}
