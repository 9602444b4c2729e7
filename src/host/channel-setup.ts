/**
 * What keeps a channel of config.json from starting, found without starting it (issue 26): the words the channel
 * itself logs at each failed start, `doctor` prints as a FIX and `status` shows for a channel that never polled, so
 * the three agree. Knows the built-in `feishu` channel's app secret; other channels say their problems as they run.
 */
import type { ChannelConfig } from "./home.js";
import { channelSecretVariable } from "../kernel/names.js";
import { t, type Lang } from "../i18n/messages.js";

/**
 * Why channel `name` cannot start as configured here, or null when nothing is known to be wrong: a `feishu` channel
 * with its app secret neither in secrets.env (`secrets`: its variables, `channelSecretVariable(name)`) nor in
 * config.json's `appSecret` — the message the channel's own option check throws (plugins/feishu/channel.ts).
 */
export function channelSetupProblem(name: string, config: ChannelConfig, secrets: Record<string, string>, lang: Lang): string | null {
  if (config.use !== "feishu") return null;
  const variable = channelSecretVariable(name);
  const inConfig = typeof config.appSecret === "string" && config.appSecret.trim() !== "";
  return secrets[variable] || inConfig ? null : t(lang, "feishu.noSecret", { variable });
}
