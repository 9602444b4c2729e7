/**
 * The values of declarative plugins' settings (spec declarative-plugins.md §3.6; issue 18). A `secret` value is stored
 * only in the home's secrets file (secrets.env, mode 0600) as `AGENT_AUTOLOOP_PLUGIN_SECRET__<id>__<key>`, and is
 * never shown, echoed, logged, streamed or put in facts: its view says only whether it is set. Other values live in
 * `<home>/plugin-settings.json` (mode 0600). A value is given as text (the CLI's word) and checked against its
 * setting's type before anything is written; a refused value writes nothing.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Home } from "./home.js";
import { readSecrets, writeFileAtomic } from "./home.js";
import { type Lang, said, type Said } from "../i18n/messages.js";
import { lineForbidden } from "../kernel/text.js";
import { pluginLineMaxChars } from "../protocol/plugin-limits.js";
import type { Setting } from "../protocol/plugin-schemas.js";
import type { SettingView } from "../protocol/responses.js";
import type { LoadedPlugin } from "../declarative/index.js";

/** A secret setting's value: at most this many characters (a token, a key). */
export const pluginSecretMaxChars = 4096;

/** The file of non-secret values. */
function valuesFile(home: Home): string {
  return join(home.dir, "plugin-settings.json");
}

/** Escapes a name into `[A-Za-z0-9_]` without collisions: `_`, `-` and `.` become `_5F`, `_2D`, `_2E`. */
function escapeName(s: string): string {
  return s.replace(/[^A-Za-z0-9]/g, (c) => `_${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`);
}

/**
 * The secrets.env variable of a plugin's secret setting. Escaped names hold no `__`, so the two `__` separators keep
 * every (plugin, key) pair apart: one plugin can never read another's secret by its name.
 */
export function pluginSecretVariable(plugin: string, key: string): string {
  return `AGENT_AUTOLOOP_PLUGIN_SECRET__${escapeName(plugin)}__${escapeName(key)}`;
}

/** The value of a plugin's secret setting, read now from secrets.env, or null when it is not set. */
export function pluginSecret(home: Home, plugin: string, key: string): string | null {
  return readSecrets(home)[pluginSecretVariable(plugin, key)] || null;
}

/** The non-secret values of every plugin (a missing or unreadable file holds none). */
function readValues(home: Home): Record<string, Record<string, string | number | boolean>> {
  if (!existsSync(valuesFile(home))) return {};
  try {
    const v = JSON.parse(readFileSync(valuesFile(home), "utf8")) as unknown;
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, Record<string, string | number | boolean>>) : {};
  } catch {
    return {};
  }
}

/** How a setting shows: its declaration and value — for a secret only whether it is set. */
function viewOf(s: Setting, value: string | number | boolean | null): SettingView {
  const secret = s.type === "secret";
  return {
    key: s.key, label: s.label, type: s.type, effect: s.effect ?? "reload", description: s.description ?? null, options: s.options ?? null,
    default: s.default ?? null, value: secret ? null : value, set: value !== null,
  };
}

/** The settings of a loaded plugin with their values (secrets masked: `value` null, `set` says whether there is one). */
export function settingsOf(home: Home, plugin: LoadedPlugin): SettingView[] {
  const values = readValues(home)[plugin.id] ?? {};
  const secrets = readSecrets(home);
  return plugin.settings.map((s) => viewOf(s, s.type === "secret" ? secrets[pluginSecretVariable(plugin.id, s.key)] || null : values[s.key] ?? null));
}

/** `text` as a value of `s`, or the refusal naming the field `value`. */
function parseValue(s: Setting, text: string, lang: Lang): { ok: true; value: string | number | boolean } | { ok: false; error: Said } {
  const no = (type: string) => ({ ok: false as const, error: said("field.type", { field: "value", type }) });
  switch (s.type) {
    case "number":
      return /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(text) && Number.isFinite(Number(text)) ? { ok: true, value: Number(text) } : no("number");
    case "boolean":
      return text === "true" || text === "false" ? { ok: true, value: text === "true" } : no("true or false");
    case "select":
      return s.options?.includes(text) ? { ok: true, value: text } : { ok: false, error: said("field.enum", { field: "value", values: JSON.stringify(s.options ?? []) }) };
    case "secret":
      if (text === "" || [...text].length > pluginSecretMaxChars || lineForbidden.test(text) || text.trim() !== text) {
        return { ok: false, error: said("settings.secretValue", { limit: pluginSecretMaxChars }) };
      }
      return { ok: true, value: text };
    default:
      if ([...text].length > pluginLineMaxChars) return { ok: false, error: said("field.maxLength", { field: "value", limit: pluginLineMaxChars }) };
      return lineForbidden.test(text) ? { ok: false, error: said("field.pattern", { field: "value", what: said("pattern.oneLine") }) } : { ok: true, value: text };
  }
}

/** Writes secrets.env with `variable` set to `value` (null: removed), every other line as it was; mode 0600. */
function writeSecret(home: Home, variable: string, value: string | null): void {
  const lines = existsSync(home.secrets) ? readFileSync(home.secrets, "utf8").split(/\r?\n/) : [];
  if (lines.at(-1) === "") lines.pop();
  const mine = new RegExp(`^\\s*${variable}\\s*=`);
  const kept = lines.filter((l) => !mine.test(l));
  // Quoted: the reader takes what is between the quotes as it is (spaces and quotes inside included).
  if (value !== null) kept.push(`${variable}="${value}"`);
  writeFileAtomic(home.secrets, kept.length > 0 ? `${kept.join("\n")}\n` : "", 0o600);
}

/**
 * Sets (or with null removes) setting `key` of `plugin` from its text. Nothing is written when it is refused.
 * @returns the setting's view after, or the refusal: 404 for a setting the plugin does not declare, 400 for a value.
 */
export function setPluginSetting(home: Home, plugin: LoadedPlugin, key: string, text: string | null, lang: Lang): { ok: true; view: SettingView } | { ok: false; status: number; error: Said } {
  const s = plugin.settings.find((x) => x.key === key);
  if (!s) return { ok: false, status: 404, error: said("settings.noSuchSetting", { plugin: plugin.id, key }) };
  let value: string | number | boolean | null = null;
  if (text !== null) {
    const parsed = parseValue(s, text, lang);
    if (!parsed.ok) return { ok: false, status: 400, error: parsed.error };
    value = parsed.value;
  }
  if (s.type === "secret") writeSecret(home, pluginSecretVariable(plugin.id, key), value as string | null);
  else {
    const all = readValues(home);
    const mine = { ...(all[plugin.id] ?? {}) };
    if (value === null) delete mine[key];
    else mine[key] = value;
    all[plugin.id] = mine;
    writeFileAtomic(valuesFile(home), `${JSON.stringify(all, null, 2)}\n`, 0o600);
  }
  return { ok: true, view: viewOf(s, value) };
}
