/**
 * Tools (issue 16): `GET /v1/tools` (also `/api/tools`, spec declarative-plugins.md's name) lists every tool of this
 * home's tool plugins for the owner — `<plugin>.<tool>`, the plugin's kind, the tool's description and JSON Schema,
 * and the approval mode the current rules give it. The folders are read again at each request (a changed manifest
 * shows at once); tools a manifest does not list are asked of the plugin the first time (tools/list in its sandbox,
 * cached by manifest digest; an MCP server's list), as for a run's tool list. A plugin whose tools cannot be had is
 * left out, and the hub's log says why (at most once a minute per plugin).
 */
import { Hono } from "hono";
import type { Hub } from "../hub.js";
import { approvalRuleFor, approvalsOf } from "../../kernel/rules.js";
import type { ToolView } from "../../protocol/responses.js";
import { t } from "../../i18n/messages.js";
import { reply, route } from "./endpoint.js";

/** The routes of tools. */
export function toolRoutes(hub: Hub): Hono {
  const app = new Hono();

  route(app, hub, "tools", async (c) => {
    const host = await hub.toolHost();
    host.registry.rescan();
    const { tools, problems } = await host.allTools();
    for (const p of problems) hub.logForCaller(`tools ${p.plugin}`, t(hub.env.lang, "tools.listFailed", { plugin: p.plugin, error: p.message }));
    const rules = hub.store.view.rules()?.rules;
    const approvals = rules ? approvalsOf(rules) : [];
    const views: ToolView[] = tools.map((o) => ({
      name: o.qualifiedName, pluginId: o.plugin, kind: o.pluginType, description: o.tool.description, parameters: o.tool.parameters,
      approval: approvalRuleFor(approvals, o.plugin, o.qualifiedName)?.rule.mode ?? "auto", disableModelInvocation: o.disableModelInvocation,
    }));
    return reply(c, hub, "tools", views);
  });
  return app;
}
