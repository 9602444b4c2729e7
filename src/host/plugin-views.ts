/**
 * What `GET /v1/plugins` says of each plugin record (issues 18, 27): the common record — kind, status, errors, origin,
 * folder, digest, last good version, what shadows it — with its kind's own manifest words: a declarative plugin's
 * plugin.json (and the assets rules name), a tool plugin's manifest summary, a code plugin's name. The hub's route and
 * the CLI with no hub running (src/cli/plugin-home.ts) say it alike. A tool plugin's `tools_from` says where its tools
 * come from: its manifest's list (`listed`), `tools/list` (`asked`), its server (`server`), or any name (`any`).
 */
import type { DeclarativeCatalog } from "../declarative/index.js";
import { ruleAssets } from "../declarative/index.js";
import type { PluginRecord } from "../plugins/index.js";
import type { PluginView } from "../protocol/responses.js";
import type { ToolRegistry } from "../tools/kind.js";

/** The views of `records`, whose tool and declarative manifests `tools` (null: none found) and `catalog` hold. */
export function pluginViews(records: readonly PluginRecord[], tools: ToolRegistry | null, catalog: DeclarativeCatalog): PluginView[] {
  const toolRecords = new Map((tools?.list() ?? []).map((x) => [x.dir, x]));
  const declared = new Map(catalog.list().map((x) => [x.dir, x]));
  return records.map((r) => {
    const common = { kind: r.kind, status: r.status, errors: r.errors, origin: r.origin, dir: r.dir, digest: r.digest, lastGood: r.lastGood, shadowedBy: r.shadowedBy };
    if (r.kind === "declarative") {
      const d = declared.get(r.dir);
      return { ...common, manifest: { ...d?.manifest, id: r.id }, ...(d?.current && d.status !== "shadowed" ? ruleAssets(d.current) : {}) };
    }
    if (r.kind === "tool") {
      // A summary: the manifest's own words, not its entry point (whose env may carry what the owner put there).
      const t = toolRecords.get(r.dir);
      const m = t?.manifest;
      const manifest = m
        ? {
          id: r.id, name: m.name, version: m.version, description: m.description, author: m.author, plugin_type: m.plugin_type, manifest_version: m.declared_version,
          tools: m.capabilities.tools.map((x) => x.name), tools_from: t.toolsFrom,
        }
        : { id: r.id };
      return { ...common, manifest };
    }
    return { ...common, manifest: { id: r.id, name: r.id } };
  });
}
