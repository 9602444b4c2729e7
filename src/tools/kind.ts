/**
 * The tool plugins' kind loader (issue 27, point 1): the tool host registers with the common plugin layer through this
 * light entry. Discovery (registry.ts: manifests, their schemas' compiler) is loaded only once a tool plugin folder is
 * found, so a hub without tool plugins loads none of it (tests/lean-start.test.ts); the records then come from the
 * registry, one per folder, a tool plugin named by its manifest's `name`.
 */
import type { LastGood } from "../plugins/last-good.js";
import type { KindLoader, PluginRecord, PluginRoot, ScannedFolder } from "../plugins/types.js";
import type { Lang } from "../i18n/messages.js";
import type { ToolRegistry } from "./registry.js";

export type { ToolRegistry };

/** The tool plugins of a set of roots, for the common registry: the tool registry made at the first folder found. */
export class ToolPlugins implements KindLoader {
  readonly kinds = ["tool"] as const;
  private made: Promise<ToolRegistry> | null = null;
  /** The registry once made (null until a tool plugin folder was found, or the registry was asked for). */
  current: ToolRegistry | null = null;

  /** @param given a registry made already (a CLI command, a worker), used instead of one made here. */
  constructor(readonly roots: readonly PluginRoot[], readonly lang: Lang, readonly lastGood: LastGood, given?: ToolRegistry) {
    if (given) {
      this.current = given;
      this.made = Promise.resolve(given);
    }
  }

  /** The tool registry of these roots, made on first need. */
  registry(): Promise<ToolRegistry> {
    this.made ??= import("./registry.js").then(({ ToolRegistry }) => (this.current = new ToolRegistry(this.roots, this.lang, this.lastGood)));
    return this.made;
  }

  async load(folders: readonly ScannedFolder[]): Promise<void> {
    if (folders.length === 0 && !this.made) return;
    (await this.registry()).rescan(folders);
  }

  records(): PluginRecord[] {
    return (this.current?.list() ?? []).map((r) => ({
      id: r.name, kind: "tool", origin: r.origin, dir: r.dir, digest: r.status === "shadowed" ? null : r.digest,
      status: r.status === "ok" ? "loaded" : r.status, errors: r.errors, lastGood: r.manifest ? r.digest : null, shadowedBy: r.shadowedBy,
    }));
  }
}

/** The kind loader over a tool registry made already (a CLI command, a worker). */
export function toolPlugins(registry: ToolRegistry): KindLoader {
  return new ToolPlugins(registry.roots, registry.lang, registry.lastGood, registry);
}
