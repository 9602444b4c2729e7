/**
 * What a run's agent is offered of the tool host (issue 16 "Offered to agents"; split from tool-bridge.ts): the tools
 * its rule's patterns name, and each as the MCP client sees it.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { starMatch } from "../kernel/rules.js";
import { t, type Lang } from "../i18n/messages.js";
import type { OfferedTool, PluginType, ToolHost } from "../tools/index.js";

/** A tool as the MCP client sees it. */
export function mcpTool(o: OfferedTool, readOnly: boolean): Tool {
  return {
    name: o.qualifiedName,
    ...(o.tool.description ? { description: o.tool.description } : {}),
    inputSchema: { ...o.tool.parameters, type: "object" },
    // Claude Code's plan mode (access "read") lets through only tools marked read-only; the owner offered these to
    // the rule, and rules.json's approvals decide each call, so they are marked so for such a run.
    ...(readOnly ? { annotations: { readOnlyHint: true } } : {}),
  };
}

/**
 * The tools a rule's `patterns` offer, from the tool host; plugins whose tools cannot be had are logged and left out. A
 * plugin whose tools are unknown offers the tools the patterns name exactly (`namedTools`).
 */
export async function offeredTools(host: ToolHost, patterns: readonly string[], log: (plugin: string, error: string) => void): Promise<OfferedTool[]> {
  const plugins = [...new Set(patterns.map((p) => p.slice(0, p.indexOf("."))))];
  const out: OfferedTool[] = [];
  for (const plugin of plugins) {
    const r = await host.tools(plugin);
    if (!r.ok) {
      log(plugin, r.message);
      continue;
    }
    out.push(...r.tools.filter((o) => !o.disableModelInvocation && patterns.some((p) => starMatch(p, o.qualifiedName))));
    if (r.unknown?.why) log(plugin, r.unknown.why);
    if (r.unknown) out.push(...namedTools(plugin, r.unknown.pluginType, patterns, host.settings.lang, log));
  }
  return out;
}

/**
 * The tools of a plugin whose tools are unknown (a service whose manifest lists none, issue 34 #5; an untrusted plugin
 * that could not be asked in the review sandbox, issue 26 round 11 F5): each pattern of the
 * rule that names one of its tools exactly is offered, any arguments (`{type: "object"}`), its description saying so; a
 * pattern with `*` for it can offer none of them, and the log says so.
 */
function namedTools(plugin: string, pluginType: PluginType, patterns: readonly string[], lang: Lang, log: (plugin: string, error: string) => void): OfferedTool[] {
  const own = patterns.filter((p) => p.slice(0, p.indexOf(".")) === plugin);
  const wild = own.filter((p) => p.includes("*"));
  if (wild.length > 0) log(plugin, t(lang, "bridge.unknownTools", { plugin, pattern: wild[0]! }));
  return own.filter((p) => !p.includes("*")).map((p) => ({
    qualifiedName: p, plugin, pluginType, disableModelInvocation: false,
    tool: { name: p.slice(plugin.length + 1), description: t(lang, "bridge.unknownToolDescription", { plugin }), parameters: { type: "object" } },
  }));
}

