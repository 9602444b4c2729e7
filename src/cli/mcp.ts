/**
 * `agent-autoloop mcp`: a stdio MCP server (protocol version 2025-11-25, built with @modelcontextprotocol/sdk) whose
 * tools call the hub's own HTTP API: `status`, `why`, `answer`, `resolve`, `stop` with the owner key of config.json,
 * `emit` and `tell` with the source key of config.json's optional `"source": { "name", "key" }`. Only the tools a
 * configured key allows are listed. Standard output carries only JSON-RPC; each call answers on its own, so a slow
 * call does not hold up `ping`. It does not tell callers apart: an answer is recorded as the owner's, so do not give
 * it to agents the hub itself starts (a run could answer its own card).
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";
import { readFileSync } from "node:fs";
import { HubClient } from "../protocol/client.js";

export interface McpConfig { url: string; owner: string | null; source: { name: string; key: string } | null; version: string }

type ToolResult = { content: { type: "text"; text: string }[]; isError?: boolean };

async function result(f: () => Promise<unknown>): Promise<ToolResult> {
  try {
    return { content: [{ type: "text", text: JSON.stringify(await f(), null, 2) }] };
  } catch (e) {
    return { content: [{ type: "text", text: (e as Error).message }], isError: true };
  }
}

/** Builds the server with the tools the configured keys allow. */
export function mcpServer(cfg: McpConfig): McpServer {
  const server = new McpServer({ name: "agent-autoloop", version: cfg.version });
  if (cfg.owner) {
    const owner = new HubClient(cfg.url, cfg.owner);
    server.registerTool("status", { description: "The hub's state: open cards, runs, rules, workers, unrouted events, spending.", inputSchema: { before: z.number().int().positive().optional().describe("older runs: before this run id") } },
      ({ before }) => result(() => owner.state(before)));
    server.registerTool("why", { description: "A run's facts: events, claims, start, receipt, answers, follow-up runs.", inputSchema: { run: z.number().int().positive() } },
      ({ run }) => result(() => owner.call(`/v1/runs/${run}/why`)));
    server.registerTool("answer", { description: "Answer a card: the option number, or your own words.", inputSchema: { card: z.number().int().positive(), choice: z.number().int().min(0).optional(), text: z.string().min(1).max(4000).optional() } },
      ({ card, choice, text }) => result(() => owner.answer(card, { ...(choice !== undefined ? { choice } : {}), ...(text !== undefined ? { text } : {}) })));
    server.registerTool("resolve", { description: "Close a card: no decision needed any more.", inputSchema: { card: z.number().int().positive(), reason: z.string().max(1000).optional() } },
      ({ card, reason }) => result(() => owner.resolve(card, reason)));
    server.registerTool("stop", { description: "Stop a run.", inputSchema: { run: z.number().int().positive() } },
      ({ run }) => result(() => owner.cancel(run)));
  }
  if (cfg.source) {
    const source = new HubClient(cfg.url, cfg.source.key);
    server.registerTool("emit", {
      description: `Post an event as the source "${cfg.source.name}".`,
      inputSchema: { id: z.string().min(1).max(200), type: z.string().min(1).max(64), subject: z.string().max(100).optional(), summary: z.string().max(200).optional(), detail: z.string().max(4000).optional(), link: z.string().max(500).optional() },
    }, (event) => result(() => source.postEvent(event)));
    server.registerTool("tell", { description: "Tell the owner something (an fyi notice, once per key).", inputSchema: { key: z.string().min(1).max(200), text: z.string().min(1).max(4000), title: z.string().max(200).optional() } },
      (body) => result(() => source.call("/v1/tell", { body })));
  }
  return server;
}

/** Runs the server on stdin/stdout until stdin closes. */
export async function runMcp(cfg: McpConfig): Promise<void> {
  const server = mcpServer(cfg);
  await server.connect(new StdioServerTransport());
}

/** The optional `source` entry of config.json for `emit` and `tell`. */
export function sourceFromConfig(configFile: string): McpConfig["source"] {
  const raw = JSON.parse(readFileSync(configFile, "utf8")) as { source?: { name?: unknown; key?: unknown } };
  const s = raw.source;
  return s && typeof s.name === "string" && typeof s.key === "string" ? { name: s.name, key: s.key } : null;
}
