/**
 * The plugins of a home as the CLI sees them (issue 27, point 1: one truth): when the home's hub runs, its records
 * (`GET /v1/plugins`) and its roots (a `serve --plugins` folder is where its plugins are); when none does, the same
 * loaders the hub has, over the same roots, with the same last good versions (the home keeps them: what the hub loaded
 * stays in use after a broken edit, here too). Reading runs no plugin code.
 */
import { dirname } from "node:path";
import type { Lang } from "../i18n/messages.js";
import { DeclarativeCatalog, declarativePlugins } from "../declarative/index.js";
import { LastGood, PluginLoader, PluginRegistry, codePlugins, pluginRoots, scanRoots } from "../plugins/index.js";
import { ToolRegistry, toolPlugins } from "../tools/index.js";
import { readConfig, type Home } from "../host/home.js";
import { pluginSecret } from "../host/plugin-settings.js";
import { pluginViews } from "../host/plugin-views.js";
import { HubClient } from "../protocol/client.js";
import type { PluginView } from "../protocol/responses.js";
import { findHub } from "./connect.js";

/** The plugins of a home read here: every record, and the tool and declarative hosts' own. */
export interface LocalPlugins {
  registry: PluginRegistry;
  tools: ToolRegistry;
  declarative: DeclarativeCatalog;
}

/** The records of the home's running hub, or null when none runs (or it cannot be asked). */
export async function hubPluginViews(h: Home, lang: Lang): Promise<PluginView[] | null> {
  const found = await findHub(h, lang);
  if (!("url" in found)) return null;
  try {
    return await new HubClient(found.url, readConfig(h).owner).plugins();
  } catch {
    return null;
  }
}

/** The `serve --plugins` folders of a hub, from its records (the parent of each plugin found there). */
export function serveDirsOf(views: readonly PluginView[] | null): string[] {
  return [...new Set((views ?? []).filter((v) => v.origin === "serve").map((v) => dirname(v.dir)))];
}

/**
 * Loads the home's plugins here as its hub does: the one list of roots (`serveDirs` after the home's), every kind
 * through its loader, the home's last good versions. Runs no plugin code.
 */
export async function localPlugins(h: Home, lang: Lang, serveDirs: readonly string[] = []): Promise<LocalPlugins> {
  const roots = pluginRoots(h.plugins, serveDirs);
  const lastGood = new LastGood(h.pluginState);
  const tools = new ToolRegistry(roots, lang, lastGood);
  const declarative = new DeclarativeCatalog({ roots, lang, lastGood, secret: (plugin, key) => pluginSecret(h, plugin, key) });
  const registry = new PluginRegistry({
    roots, lang, loaders: [declarativePlugins(declarative), toolPlugins(tools), codePlugins({ loader: new PluginLoader(roots, lang), lang })],
  });
  await registry.reload();
  return { registry, tools, declarative };
}

/** Every plugin of the home: the running hub's records, else this CLI's own reading. */
export async function homePluginViews(h: Home, lang: Lang): Promise<{ views: PluginView[]; notes: string[] }> {
  const fromHub = await hubPluginViews(h, lang);
  // What the hub's scan left out before any record (a folder linked out of its root: round 29, F29b-2), read here
  // from the same roots — its log alone said so.
  if (fromHub) return { views: fromHub, notes: scanRoots(pluginRoots(h.plugins, serveDirsOf(fromHub)), lang).notes };
  const local = await localPlugins(h, lang);
  return { views: pluginViews(local.registry.list(), local.tools, local.declarative), notes: local.registry.scanNotes() };
}
