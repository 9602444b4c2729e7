/**
 * The CLI's part of config.json besides reading it (src/host/home.ts `readConfig`): which local part holds a key
 * (`key new` rotates it there too), and what keeps each of its channels from starting (`status`). Moved out of
 * main.ts (issue 27: no module over 500 lines).
 */
import { t, type Lang } from "../i18n/messages.js";
import type { Config, Home } from "../host/home.js";
import type { KeyKind } from "../kernel/types.js";

/**
 * What keeps each channel of config.json from starting (issue 26: a Feishu channel without its secret), by name, as
 * its log and doctor say it; secrets.env unreadable counts as empty.
 */
export async function channelProblems(h: Home, config: Config, lang: Lang): Promise<Record<string, string>> {
  const [{ readSecrets }, { channelSetupProblem }] = await Promise.all([import("../host/home.js"), import("../host/channel-setup.js")]);
  let secrets: Record<string, string> = {};
  try {
    secrets = readSecrets(h);
  } catch {
    // unreadable: as if empty
  }
  const out: Record<string, string> = {};
  for (const [name, ch] of Object.entries(config.channels)) {
    const problem = channelSetupProblem(name, ch, secrets, lang);
    if (problem !== null) out[name] = problem;
  }
  return out;
}

/** Which local part of config.json uses the key of this kind and name ("owner", "worker local", "channel file"), or null. */
export async function configHolds(config: Config, kind: KeyKind, name: string, lang: Lang): Promise<string | null> {
  const [{ ownerKeyName }, { own }] = await Promise.all([import("../host/home.js"), import("../kernel/own.js")]);
  if (kind === "owner" && name === ownerKeyName) return t(lang, "key.kindName.owner");
  if (kind === "worker" && config.worker?.name === name) return t(lang, "cli.holder.worker", { name });
  if (kind === "channel" && own(config.channels, name)) return t(lang, "cli.holder.channel", { name });
  return null;
}

/** Writes a rotated key into config.json when config.json holds that key. @returns what holds it, or null. */
export async function updateConfigKey(h: Home, kind: KeyKind, name: string, key: string, lang: Lang): Promise<string | null> {
  const [{ readFileSync }, { readConfig, writeFileAtomic }, { own }] = await Promise.all([import("node:fs"), import("../host/home.js"), import("../kernel/own.js")]);
  const config = readConfig(h, lang);
  const what = await configHolds(config, kind, name, lang);
  if (!what) return null;
  const raw = JSON.parse(readFileSync(h.config, "utf8")) as Config;
  if (kind === "owner") raw.owner = key;
  else if (kind === "worker" && raw.worker) raw.worker.key = key;
  else if (kind === "channel" && own(raw.channels, name)) raw.channels[name]!.key = key;
  writeFileAtomic(h.config, JSON.stringify(raw, null, 2) + "\n", 0o600);
  return what;
}
