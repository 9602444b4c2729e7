/**
 * The CLI's part of declarative plugins (issue 18): `agent-autoloop plugins reload` shows what the hub's rescan of
 * the plugin folders did (POST /v1/plugins/reload), and exits 1 while a plugin is refused; `plugins settings <id>`
 * and `plugins set <id> <key> [value]` show and set a plugin's settings through the hub, a secret never shown.
 */
import { t, type Lang } from "../i18n/messages.js";
import type { PluginSettingAnswer, PluginSettings, PluginsReload, SettingView } from "../protocol/responses.js";
import type { Printed } from "./plugins.js";

/**
 * A reload's answer for people: one line per change (loaded, replaced, unloaded), each refused plugin with its errors
 * (to stderr); or with `json` the answer as the hub gave it. Exit 1 when a plugin was refused.
 */
export function formatReload(r: PluginsReload, lang: Lang, json: boolean): Printed {
  const code = r.rejected.length > 0 ? 1 : 0;
  if (json) return { out: [JSON.stringify(r, null, 2)], err: [], code };
  const out: string[] = [];
  if (r.loaded.length > 0) out.push(t(lang, "cli.reload.loaded", { ids: r.loaded.join(", ") }));
  if (r.replaced.length > 0) out.push(t(lang, "cli.reload.replaced", { ids: r.replaced.join(", ") }));
  if (r.unloaded.length > 0) out.push(t(lang, "cli.reload.unloaded", { ids: r.unloaded.join(", ") }));
  if (out.length === 0 && r.rejected.length === 0) out.push(t(lang, "cli.reload.none"));
  const err = r.rejected.flatMap(({ id, errors }) => [t(lang, "cli.reload.refused", { id }), ...errors.map((e) => `  ${e}`)]);
  return { out, err, code };
}

/** How a secret that is set shows: never its value, nor its length. */
export const maskedSecret = "••••••";

/** A setting's value for people: a secret masked, an unset one as "-". */
function shown(s: SettingView): string {
  if (!s.set) return "-";
  return s.type === "secret" ? maskedSecret : String(s.value);
}

/** `plugins settings <id>`: one line per setting — key, type, value (secrets masked), effect — or the JSON answer. */
export function formatSettings(r: PluginSettings, lang: Lang, json: boolean): Printed {
  if (json) return { out: [JSON.stringify(r, null, 2)], err: [], code: 0 };
  if (r.settings.length === 0) return { out: [t(lang, "cli.settings.none", { plugin: r.plugin })], err: [], code: 0 };
  return { out: r.settings.map((s) => t(lang, "cli.settings.line", { key: s.key, type: s.type, value: shown(s), effect: t(lang, s.effect === "hot" ? "cli.settings.hot" : "cli.settings.reload") })), err: [], code: 0 };
}

/** `plugins set`: what changed, never the secret itself, and when it takes effect. */
export function formatSettingSet(r: PluginSettingAnswer, lang: Lang): Printed {
  const s = r.setting;
  return { out: [t(lang, "cli.settings.set", { plugin: r.plugin, key: s.key, value: shown(s), effect: t(lang, s.effect === "hot" ? "cli.settings.hot" : "cli.settings.reload") })], err: [], code: 0 };
}
