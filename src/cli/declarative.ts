/**
 * The CLI's part of declarative plugins (issue 18): `agent-autoloop plugins reload` shows what the hub's rescan of
 * the plugin folders did (POST /v1/plugins/reload), and exits 1 while a plugin is refused.
 */
import { t, type Lang } from "../i18n/messages.js";
import type { PluginsReload } from "../protocol/responses.js";
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
