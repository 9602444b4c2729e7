/**
 * A loaded declarative plugin as the home keeps it (issue 27, point 1: the last good version of a folder, shared by
 * every loader of the home — the hub, its worker, the CLI): its maps as lists of entries, so that it is plain JSON.
 */
import type { LoadedPlugin } from "./types.js";

/** A loaded plugin as JSON. */
export interface KeptPlugin {
  id: string;
  dir: string;
  origin: LoadedPlugin["origin"];
  digest: string;
  manifest: LoadedPlugin["manifest"];
  tools: [string, unknown][];
  workflows: [string, unknown][];
  intents: [string, unknown][];
  prompts: [string, string][];
  panels: [string, unknown][];
  cards: [string, unknown][];
  settings: LoadedPlugin["settings"];
}

/** A loaded plugin as the home keeps it. */
export function keep(p: LoadedPlugin): KeptPlugin {
  return {
    id: p.id, dir: p.dir, origin: p.origin, digest: p.digest, manifest: p.manifest, tools: [...p.tools], workflows: [...p.workflows],
    intents: [...p.intents], prompts: [...p.prompts], panels: [...p.panels], cards: [...p.cards], settings: p.settings,
  };
}

/** A kept plugin loaded again (it passed every check when it was kept), or null when it is not one (an older form). */
export function revive(k: KeptPlugin | null | undefined): LoadedPlugin | null {
  const lists = ["tools", "workflows", "intents", "prompts", "panels", "cards"] as const;
  if (!k || typeof k.id !== "string" || typeof k.digest !== "string" || !k.manifest || !lists.every((l) => Array.isArray(k[l])) || !Array.isArray(k.settings)) return null;
  return {
    id: k.id, dir: k.dir, origin: k.origin, digest: k.digest, manifest: k.manifest,
    tools: new Map(k.tools) as LoadedPlugin["tools"], workflows: new Map(k.workflows) as LoadedPlugin["workflows"], intents: new Map(k.intents) as LoadedPlugin["intents"],
    prompts: new Map(k.prompts), panels: new Map(k.panels) as LoadedPlugin["panels"], cards: new Map(k.cards) as LoadedPlugin["cards"], settings: k.settings,
  };
}
