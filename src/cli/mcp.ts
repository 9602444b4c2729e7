/**
 * `agent-autoloop mcp`: a stdio MCP server (protocol version 2025-11-25, built with @modelcontextprotocol/sdk) whose
 * tools call the hub's own HTTP API: `status`, `why`, `answer`, `resolve`, `stop` with the owner key of config.json,
 * `status` and `why` answering with the text the CLI prints (`raw: true`: the hub's JSON, which is many times longer),
 * `emit` and `tell` with the source key of config.json's optional `"source": { "name", "key" }`. Only the tools a
 * configured key allows are listed. Standard output carries only JSON-RPC; each call answers on its own, so a slow
 * call does not hold up `ping`. It does not tell callers apart: an answer is recorded as the owner's, so do not give
 * it to agents the hub itself starts (a run could answer its own card). A keyed call goes only to a hub that answered
 * with this home's id and proved it holds its master key, checked before every call (connect.ts). A line that is
 * over `mcpLineMaxBytes`, not JSON, or not a JSON-RPC message is answered with a JSON-RPC error (id null unless the
 * message had a usable id) and the server reads on.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Static } from "@sinclair/typebox";
import type { ErrorObject } from "ajv";
import { readFileSync } from "node:fs";
import { MessageLines, type RpcError } from "../worker/mcp-lines.js";
import { HubClient } from "../protocol/client.js";
import { t, type Lang } from "../i18n/messages.js";
import { mcpToolArguments, type McpToolName } from "../protocol/mcp-tools.js";
import * as validators from "../protocol/mcp-validators.generated.js";
import { describeError, firstError } from "../protocol/describe.js";
import { call } from "./connect.js";
import { formatStatus } from "./status.js";
import { timeline } from "./why.js";
import { printable } from "./print.js";

/** The longest line (one JSON-RPC message) `mcp` reads, in bytes without the line break: 10 MiB, the SDK's own limit. */
export const mcpLineMaxBytes = 10 * 1024 * 1024;

export interface McpConfig {
  /** Finds this home's hub and returns its URL; throws with the reason when there is none. */
  hub: () => Promise<string>;
  owner: string | null;
  source: { name: string; key: string } | null;
  version: string;
  /** The language of `status` and `why` text (default English). */
  lang?: Lang;
  /** The channels of this home's config.json, for `status` (see formatStatus). */
  localChannels?: string[];
}

type ToolResult = { content: { type: "text"; text: string }[]; isError?: boolean };

/** A tool's answer: `f`'s value as text (made printable, as the CLI prints it) or as indented JSON. */
async function result(f: () => Promise<unknown>): Promise<ToolResult> {
  try {
    const value = await f();
    return { content: [{ type: "text", text: typeof value === "string" ? printable(value) : JSON.stringify(value, null, 2) }] };
  } catch (e) {
    return { content: [{ type: "text", text: (e as Error).message }], isError: true };
  }
}

/**
 * Calls with `key` on this home's hub, found and proven again before every call (connect.ts): a hub that stopped
 * between two calls may have left its address to another program, which must not get the key (issue 26 round 5,
 * F3); the proof is one keyless request on this computer. Errors are the CLI's (connect.ts `call`): a refusal in
 * `lang`, an unreachable hub saying how to start it.
 */
function hubCaller(cfg: McpConfig, key: string, lang: Lang): <T>(f: (c: HubClient) => Promise<T>) => Promise<T> {
  return async (f) => call(new HubClient(await cfg.hub(), key), f, lang);
}

type Args<N extends McpToolName> = Static<(typeof mcpToolArguments)[N]>;
/** One tool of the server: what the model reads, and what it does with arguments its schema accepted. */
type McpTool<N extends McpToolName> = { description: string; run: (args: Args<N>) => Promise<unknown> };
type McpTools = { [N in McpToolName]?: McpTool<N> };

/** The tools the configured keys allow: the owner's five with an owner key, `emit` and `tell` with a source key. */
function mcpTools(cfg: McpConfig, lang: Lang): McpTools {
  const tools: McpTools = {};
  if (cfg.owner) {
    const owner = hubCaller(cfg, cfg.owner, lang);
    tools.status = {
      description: "The hub's state as `agent-autoloop status` prints it: open cards, runs, rules, workers, channels, unrouted events, spending.",
      run: ({ before, raw }) => owner(async (c) => {
        const state = await c.state(before);
        return raw ? state : formatStatus(state, lang, c.url, { localChannels: cfg.localChannels ?? null });
      }),
    };
    tools.why = {
      description: "A run's timeline as `agent-autoloop why` prints it: events, claims, start, receipt, answers, follow-up runs.",
      run: ({ run, raw }) => owner(async (c) => {
        const res = await c.why(run);
        return raw ? res : timeline(run, res.facts, lang).join("\n");
      }),
    };
    tools.answer = {
      description: "Answer a card: the option number, or your own words.",
      run: ({ card, choice, text }) => owner((c) => c.answer(card, { ...(choice !== undefined ? { choice } : {}), ...(text !== undefined ? { text } : {}) })),
    };
    tools.resolve = { description: "Close a card: no decision needed any more.", run: ({ card, reason }) => owner((c) => c.resolve(card, reason)) };
    tools.stop = { description: "Stop a run.", run: ({ run }) => owner((c) => c.cancel(run)) };
  }
  if (cfg.source) {
    const source = hubCaller(cfg, cfg.source.key, lang);
    tools.emit = { description: `Post an event as the source "${cfg.source.name}".`, run: (event) => source((c) => c.postEvent(event)) };
    tools.tell = { description: "Tell the owner something (an fyi notice, once per key).", run: (body) => source((c) => c.tell(body)) };
  }
  return tools;
}

type CompiledValidator = ((value: unknown) => boolean) & { errors?: ErrorObject[] | null };

/**
 * Builds the server with the tools the configured keys allow, each declared with its JSON Schema from
 * src/protocol/mcp-tools.ts (the protocol's own limits). MCP 2025-11-25 (server/tools, "Error Handling"; SEP-1303): an
 * unknown tool is a protocol error, JSON-RPC -32602; arguments its schema refuses are a tool execution error
 * (`isError`) naming the field in `lang`, so the model can correct them; a refusal of the hub is one too.
 */
export function mcpServer(cfg: McpConfig): Server {
  const lang = cfg.lang ?? "en";
  const tools = mcpTools(cfg, lang);
  const server = new Server({ name: "agent-autoloop", version: cfg.version }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: (Object.keys(tools) as McpToolName[]).map((name) => ({ name, description: tools[name]!.description, inputSchema: jsonSchema(name) })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const name = req.params.name;
    const tool = Object.hasOwn(tools, name) ? (tools as Record<string, McpTool<McpToolName>>)[name] : undefined;
    // The SDK answers a thrown error with its `code` and `message` (McpError would prefix "MCP error -32602: ").
    if (!tool) throw Object.assign(new Error(t(lang, "mcp.unknownTool", { tool: printable(name) })), { code: ErrorCode.InvalidParams });
    const args = req.params.arguments ?? {};
    const valid = validators[name as McpToolName] as CompiledValidator;
    if (!valid(args)) return { content: [{ type: "text", text: describeError(firstError(valid.errors ?? []), lang) }], isError: true };
    return result(() => tool.run(args as Args<McpToolName>));
  });
  return server;
}

/** A tool's input schema as `tools/list` declares it: plain JSON (TypeBox's symbols dropped), an object schema. */
function jsonSchema(name: McpToolName): { type: "object"; [key: string]: unknown } {
  return JSON.parse(JSON.stringify(mcpToolArguments[name])) as { type: "object" };
}

/** Runs the server on stdin/stdout until stdin closes. */
export async function runMcp(cfg: McpConfig): Promise<void> {
  const server = mcpServer(cfg);
  const refuse = ({ id, code, message }: RpcError) => void process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } }) + "\n");
  const lines = process.stdin.pipe(new MessageLines(mcpLineMaxBytes, refuse));
  // The SDK's own buffer never holds more than one line here; give it room for the longest one and its line break.
  await server.connect(new StdioServerTransport(lines, process.stdout, { maxBufferSize: mcpLineMaxBytes + 2 }));
}

/** The optional `source` entry of config.json for `emit` and `tell`. */
export function sourceFromConfig(configFile: string): McpConfig["source"] {
  const raw = JSON.parse(readFileSync(configFile, "utf8")) as { source?: { name?: unknown; key?: unknown } };
  const s = raw.source;
  return s && typeof s.name === "string" && typeof s.key === "string" ? { name: s.name, key: s.key } : null;
}
