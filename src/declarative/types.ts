/**
 * The public types of the declarative plugin host (spec declarative-plugins.md; issue 18): a plugin as loaded, one
 * error of a refused plugin, the roots plugins are found under, and what a reload did.
 */
import type { CardTemplate, HttpTool, Intent, Panel, PluginManifest, Setting, Workflow } from "../protocol/plugin-schemas.js";

import type { PluginOrigin, PluginRoot, ShadowedBy } from "../plugins/types.js";

/** Where a root of plugin folders comes from: the engine's own, the home's `plugins/`, or `serve --plugins <dir>`. */
export type DeclarativeOrigin = PluginOrigin;

/** A folder of plugin folders (the common plugin layer's roots). */
export type DeclarativeRoot = PluginRoot;

/** One thing wrong with a plugin: the file (absolute path), a JSON pointer into it ("" for the file itself), why. */
export interface PluginError {
  file: string;
  pointer: string;
  reason: string;
}

/** An intent with the file it came from. */
export interface IntentEntry {
  file: string;
  intent: Intent;
}

/**
 * A plugin that passed every check: its manifest and every asset by name. `digest` (sha256, hex) covers every file the
 * loader read, so an unchanged folder is known as such.
 */
export interface LoadedPlugin {
  id: string;
  dir: string;
  origin: DeclarativeOrigin;
  digest: string;
  manifest: PluginManifest;
  tools: Map<string, HttpTool>;
  workflows: Map<string, Workflow>;
  /** By intent id (unique within the plugin). */
  intents: Map<string, IntentEntry>;
  /** Prompt templates by name: the Markdown text. */
  prompts: Map<string, string>;
  panels: Map<string, Panel>;
  cards: Map<string, CardTemplate>;
  settings: Setting[];
}

/**
 * A plugin folder as the catalog knows it: `current` is what is registered (null when never loaded), `errors` why the
 * folder as it is now is refused (empty when it loaded), `manifest` the manifest to show (the current one, else the
 * refused folder's plugin.json when it was a JSON object). `shadowed`: another folder of its id wins (`shadowedBy`).
 */
export interface DeclarativeRecord {
  id: string;
  dir: string;
  origin: DeclarativeOrigin;
  status: "loaded" | "rejected" | "shadowed";
  errors: string[];
  manifest: Record<string, unknown>;
  current: LoadedPlugin | null;
  shadowedBy: ShadowedBy | null;
}

/** What one reload did (POST /v1/plugins/reload answers exactly this). Ids are sorted. */
export interface ReloadReport {
  loaded: string[];
  replaced: string[];
  unloaded: string[];
  rejected: { id: string; errors: string[] }[];
}
