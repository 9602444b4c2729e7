/**
 * Plugins (issue 18; spec declarative-plugins.md §4–§5): `POST /v1/plugins/reload` rescans the declarative plugin
 * folders and answers exactly what it did — `{loaded, replaced, unloaded, rejected: [{id, errors}]}` — and
 * `GET /v1/plugins` lists every plugin of every kind: declarative ones (from the hub's catalog), tool plugins (read
 * again from their folders), and the agent, channel and source plugins the hub would load. Both for the owner, also
 * under `/api/plugins/reload` and `/api/plugins` (the spec's names), so its §5 checklist works with a key added.
 * `GET /v1/plugins/:id/settings` and `POST /v1/plugins/:id/settings/:key` show and set a declarative plugin's settings
 * (plugin-settings.ts: secrets only in secrets.env, never shown).
 */
import { Hono } from "hono";
import type { Hub } from "../hub.js";
import type { PluginView } from "../../protocol/responses.js";
import { listCodePlugins } from "../../common/plugins.js";
import { decide, refuse, reply, route } from "./endpoint.js";
import { controlEvent, intentTable, uiOf } from "../../declarative/index.js";
import { randomUUID } from "node:crypto";
import { setPluginSetting, settingsOf } from "../plugin-settings.js";
import { t } from "../../i18n/messages.js";
import { ruleAssets } from "../../declarative/index.js";

/** The routes of plugins. */
export function pluginRoutes(hub: Hub): Hono {
  const app = new Hono();

  route(app, hub, "pluginsReload", async (c) => reply(c, hub, "pluginsReload", await hub.declarative.reload()));

  route(app, hub, "plugins", async (c) => {
    const declarative: PluginView[] = hub.declarative.list().map((r) => ({
      kind: "declarative", manifest: { ...r.manifest, id: r.id }, status: r.status, errors: r.errors, origin: r.origin, dir: r.dir,
      ...(r.current ? ruleAssets(r.current) : {}),
    }));
    const host = await hub.toolHost();
    host.registry.rescan();
    const tools: PluginView[] = host.registry.list().filter((r) => r.status !== "shadowed").map((r) => {
      const m = r.manifest;
      // A summary: the manifest's own words, not its entry point (whose env may carry what the owner put there).
      const manifest = m
        ? { id: r.name, name: m.name, version: m.version, description: m.description, author: m.author, plugin_type: m.plugin_type, manifest_version: m.declared_version, tools: m.capabilities.tools.map((x) => x.name) }
        : { id: r.name };
      return { kind: "tool", manifest, status: r.status === "ok" ? "loaded" : "rejected", errors: r.errors, origin: r.origin, dir: r.dir };
    });
    const code: PluginView[] = listCodePlugins(hub.opts.home.plugins).map((p) => ({
      kind: p.kind, manifest: { id: p.name, name: p.name }, status: "loaded", errors: [], origin: p.origin, dir: p.file.slice(0, p.file.lastIndexOf("/")),
    }));
    const order = ["declarative", "tool", "agent", "channel", "source"];
    return reply(c, hub, "plugins", [...declarative, ...tools, ...code.sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind))]);
  });
  route(app, hub, "pluginSettings", (c) => {
    const plugin = hub.declarative.get(c.req.param("id") ?? "");
    if (!plugin) return refuse(c, 404, t(hub.env.lang, "settings.noSuchPlugin", { plugin: c.req.param("id") ?? "" }));
    return reply(c, hub, "pluginSettings", { plugin: plugin.id, group: `plugin:${plugin.id}`, settings: settingsOf(hub.opts.home, plugin) });
  });

  // A secret's value goes to the secrets file only: the answer, the log and the facts never hold it.
  route(app, hub, "pluginSettingSet", (c, req) => {
    const plugin = hub.declarative.get(c.req.param("id") ?? "");
    if (!plugin) return refuse(c, 404, t(hub.env.lang, "settings.noSuchPlugin", { plugin: c.req.param("id") ?? "" }));
    const r = setPluginSetting(hub.opts.home, plugin, c.req.param("key") ?? "", req.body.value, hub.env.lang);
    if (!r.ok) return refuse(c, r.status, r.error);
    return reply(c, hub, "pluginSettingSet", { plugin: plugin.id, setting: r.view });
  });

  route(app, hub, "pluginUi", (c) => {
    const plugin = hub.declarative.get(c.req.param("id") ?? "");
    if (!plugin) return refuse(c, 404, t(hub.env.lang, "settings.noSuchPlugin", { plugin: c.req.param("id") ?? "" }));
    return reply(c, hub, "pluginUi", uiOf(plugin));
  });

  // A panel's button or form, pressed in the console: checked against the plugin as registered now, then an event
  // from source `plugin:<id>` like any source's (the same id again is the same event: a retry posts nothing new).
  route(app, hub, "pluginEvent", (c, req) => {
    const plugin = hub.declarative.get(c.req.param("id") ?? "");
    if (!plugin) return refuse(c, 404, t(hub.env.lang, "settings.noSuchPlugin", { plugin: c.req.param("id") ?? "" }));
    const made = controlEvent(plugin, req.body, req.body.id ?? randomUUID(), hub.env.lang);
    if (!made.ok) return refuse(c, made.status, made.error);
    return decide(c, hub, "pluginEvent", { kind: "pluginEvent", keyHash: req.keyHash, plugin: plugin.id, event: made.event, intents: intentTable(hub.declarative) });
  });
  return app;
}
