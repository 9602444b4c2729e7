/**
 * The common plugin layer's types (issue 27, point 1; DESIGN.md "One plugin model"): the kinds a plugin folder may be,
 * where it was found, one record per plugin, what a kind loader does, and what a reload did. Every host (code
 * plugins, tool plugins, declarative plugins) speaks these; none of them imports another.
 */

/**
 * The kinds of plugins, in the order `GET /v1/plugins` lists them: `declarative` (plugin.json), `tool` (manifest.toml
 * or plugin-manifest.toml), and the code plugins `agent`, `channel`, `source` (agent.ts, channel.ts, source.ts).
 */
export const pluginKinds = ["declarative", "tool", "agent", "channel", "source"] as const;
export type PluginKind = (typeof pluginKinds)[number];

/** The kinds that are code the engine imports (spec plugins.md). */
export const codeKinds = ["agent", "channel", "source"] as const;
export type CodeKind = (typeof codeKinds)[number];

/**
 * Where a root of plugin folders comes from: the engine's own (`builtin`), the home's `plugins/` (`home`), or
 * `serve --plugins <dir>` (`serve`). A later root wins a clash over an earlier one (precedence.ts).
 */
export type PluginOrigin = "builtin" | "home" | "serve";

/** A folder of plugin folders. */
export interface PluginRoot {
  dir: string;
  origin: PluginOrigin;
}

/** A plugin folder as the one scan found it: where, which root (its index in the list), and what it holds. */
export interface ScannedFolder {
  dir: string;
  /** The folder's own name. */
  name: string;
  origin: PluginOrigin;
  rootIndex: number;
  /** The kinds its files say it is (classify.ts), in `pluginKinds` order; one folder may be several code kinds. */
  kinds: PluginKind[];
}

/**
 * `loaded`: in use. `rejected`: the folder as it is now is refused (`errors`); while `lastGood` is set, that earlier
 * version stays in use. `shadowed`: another folder of the same kind and id wins (`shadowedBy`): the clash is reported.
 */
export type PluginStatus = "loaded" | "rejected" | "shadowed";

/** One plugin folder of one kind, as every host records it. */
export interface PluginRecord {
  /** The plugin's id: its folder's name (a tool plugin: its manifest's `name`). */
  id: string;
  kind: PluginKind;
  origin: PluginOrigin;
  dir: string;
  /** sha256 (hex) of the version in use (what runs), or null when none is. */
  digest: string | null;
  status: PluginStatus;
  /** Why the folder as it is now is refused, each naming the file; empty when it loaded. */
  errors: string[];
  /** The digest of the last version that loaded, still in use while the folder is refused; null when none ever did. */
  lastGood: string | null;
  /** The folder that wins over this one (status `shadowed`), else null. */
  shadowedBy: ShadowedBy | null;
}

/**
 * The folder that wins over a shadowed one: of the same kind, or (`kind` set) a plugin of another kind whose id names
 * the same tools (`sharedIdKinds`, precedence.ts).
 */
export interface ShadowedBy {
  dir: string;
  origin: PluginOrigin;
  kind?: PluginKind;
}

/** Two plugin folders claiming one id: `winner` is in use, `loser` (of `kind`) shadowed. */
export interface PluginClash {
  kind: PluginKind;
  name: string;
  winner: ShadowedBy;
  loser: { dir: string; origin: PluginOrigin };
}

/** Whether a record's plugin is in use (loaded, or refused with its last good version kept). */
export function inUse(r: PluginRecord): boolean {
  return r.status !== "shadowed" && r.digest !== null;
}

/**
 * A kind's loader (issue 27: "kind loaders register themselves"): it reads the folders of its kinds that the one scan
 * found, keeps what is in use by its own last-good rule, and gives one record per folder. The plugin registry calls
 * every loader on each reload, one reload at a time.
 */
export interface KindLoader {
  /** The kinds it loads. */
  readonly kinds: readonly PluginKind[];
  /** Reads `folders` (those holding one of its kinds) again. Never rejects: a folder it cannot read is refused. */
  load(folders: readonly ScannedFolder[]): Promise<void> | void;
  /** One record per folder of its kinds, as the last load left them. */
  records(): PluginRecord[];
  /**
   * Plugins of its kinds that a plugin of another kind wins over (`kindClashes`, precedence.ts), each shadowed by it
   * until the next call: not in use, and its record `shadowed`. Replaces what the last call said. A loader whose
   * kinds never lose such a clash leaves it out.
   */
  overrule?(clashes: readonly PluginClash[]): void;
}

/**
 * What reloads did (POST /v1/plugins/reload answers exactly this, for every kind): ids loaded (new), replaced (a new
 * version in use) and unloaded (gone) since the registry was last asked, and every plugin refused now with its
 * errors. A tool plugin is named by its manifest's `name`, others by their folder. Ids are sorted.
 */
export interface ReloadReport {
  loaded: string[];
  replaced: string[];
  unloaded: string[];
  rejected: { id: string; errors: string[] }[];
}
