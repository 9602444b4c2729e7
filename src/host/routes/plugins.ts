/**
 * Plugins (issues 18, 27; spec declarative-plugins.md §4–§5): `GET /v1/plugins` lists the records of the hub's one
 * plugin registry, every kind — declarative, tool, agent, channel, source — each with its kind's manifest summary;
 * `POST /v1/plugins/reload` reloads every kind and answers what changed since the hub was last asked —
 * `{loaded, replaced, unloaded, rejected: [{id, errors}]}`. Both for the owner, also under `/api/plugins/reload` and
 * `/api/plugins` (the spec's names), so its §5 checklist works with a key added.
 * `GET /v1/plugins/:id/settings` and `POST /v1/plugins/:id/settings/:key` show and set a declarative plugin's settings
 * (plugin-settings.ts: secrets only in secrets.env, never shown).
 */
import { Hono } from "hono";
import type { Hub } from "../hub.js";
import { pluginViews } from "../plugin-views.js";
import { decide, refuse, reply, route } from "./endpoint.js";
import { controlEvent, intentTable, uiOf } from "../../declarative/index.js";
import { randomUUID } from "node:crypto";
import { setPluginSetting, settingsOf } from "../plugin-settings.js";
import { t, refusal, refusalBody } from "../../i18n/messages.js";

/** The routes of plugins. */
export function pluginRoutes(hub: Hub): Hono {
  const app = new Hono();

  route(app, hub, "pluginsReload", async (c) => reply(c, hub, "pluginsReload", await hub.pluginRegistry.reloadReport()));

  route(app, hub, "plugins", (c) => reply(c, hub, "plugins", pluginViews(hub.pluginRegistry.list(), hub.toolPlugins.current, hub.declarative)));
  route(app, hub, "pluginSettings", (c) => {
    const plugin = hub.declarative.get(c.req.param("id") ?? "");
    if (!plugin) return refuse(c, 404, refusal(hub.env.lang, "settings.noSuchPlugin", { plugin: c.req.param("id") ?? "" }));
    return reply(c, hub, "pluginSettings", { plugin: plugin.id, group: `plugin:${plugin.id}`, settings: settingsOf(hub.opts.home, plugin) });
  });

  // A secret's value goes to the secrets file only: the answer, the log and the facts never hold it.
  route(app, hub, "pluginSettingSet", (c, req) => {
    const plugin = hub.declarative.get(c.req.param("id") ?? "");
    if (!plugin) return refuse(c, 404, refusal(hub.env.lang, "settings.noSuchPlugin", { plugin: c.req.param("id") ?? "" }));
    const r = setPluginSetting(hub.opts.home, plugin, c.req.param("key") ?? "", req.body.value, hub.env.lang);
    if (!r.ok) return refuse(c, r.status, refusalBody(hub.env.lang, r.error));
    return reply(c, hub, "pluginSettingSet", { plugin: plugin.id, setting: r.view });
  });

  route(app, hub, "pluginUi", (c) => {
    const plugin = hub.declarative.get(c.req.param("id") ?? "");
    if (!plugin) return refuse(c, 404, refusal(hub.env.lang, "settings.noSuchPlugin", { plugin: c.req.param("id") ?? "" }));
    return reply(c, hub, "pluginUi", uiOf(plugin));
  });

  // A panel's button or form, pressed in the console: checked against the plugin as registered now, then an event
  // from source `plugin:<id>` like any source's (the same id again is the same event: a retry posts nothing new).
  route(app, hub, "pluginEvent", (c, req) => {
    const plugin = hub.declarative.get(c.req.param("id") ?? "");
    if (!plugin) return refuse(c, 404, refusal(hub.env.lang, "settings.noSuchPlugin", { plugin: c.req.param("id") ?? "" }));
    const made = controlEvent(plugin, req.body, req.body.id ?? randomUUID(), hub.env.lang);
    if (!made.ok) return refuse(c, made.status, refusalBody(hub.env.lang, made.error));
    return decide(c, hub, "pluginEvent", { kind: "pluginEvent", keyHash: req.keyHash, plugin: plugin.id, event: made.event, intents: intentTable(hub.declarative) });
  });
  return app;
}
