/**
 * The declarative plugins' kind loader (issue 27, point 1): the catalog registers with the common plugin layer through
 * it, so that the one registry reloads it with every other kind from the one scan, and lists its records.
 */
import type { KindLoader, PluginRecord, ScannedFolder } from "../plugins/types.js";
import type { DeclarativeCatalog } from "./catalog.js";

/** The kind loader over a catalog: each folder's record, the version in use by its digest. */
export function declarativePlugins(catalog: DeclarativeCatalog): KindLoader {
  return {
    kinds: ["declarative"],
    async load(folders: readonly ScannedFolder[]) {
      await catalog.reload(folders);
    },
    records(): PluginRecord[] {
      return catalog.list().map((r) => ({
        id: r.id, kind: "declarative", origin: r.origin, dir: r.dir, digest: r.status === "shadowed" ? null : r.current?.digest ?? null, status: r.status,
        errors: r.errors, lastGood: r.current?.digest ?? null, shadowedBy: r.shadowedBy,
      }));
    },
    overrule(clashes) {
      catalog.overrule(clashes);
    },
  };
}
