/**
 * `agent-autoloop mcp`: a stdio MCP server (protocol version 2025-11-25, built with @modelcontextprotocol/sdk) whose
 * tools call the hub's own HTTP API: `status`, `why`, `answer`, `resolve`, `stop` with the owner key of config.json,
 * `status` and `why` answering with the text the CLI prints (`raw: true`: the hub's JSON, which is many times longer),
 * `emit` and `tell` with the source key of config.json's optional `"source": { "name", "key" }`. Only the tools a
 * configured key allows are listed. Standard output carries only JSON-RPC; each call answers on its own, so a slow
 * call does not hold up `ping`. It does not tell callers apart: an answer is recorded as the owner's, so do not give
 * it to agents the hub itself starts (a run could answer its own card). A keyed call goes only to a hub that answered
 * with this home's id (connect.ts). A line that is over `mcpLineMaxBytes`, not JSON, or not a JSON-RPC message is
 * answered with a JSON-RPC error (id null unless the message had a usable id) and the server reads on.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { readFileSync } from "node:fs";
import { Transform, type TransformCallback } from "node:stream";
import { LineFramer } from "../common/lines.js";
import { HubClient, HubError } from "../protocol/client.js";
import type { Lang } from "../i18n/messages.js";
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
 * Calls with `key` on this home's hub: the hub is found (and its home id checked) at the first call, and again after
 * a call that could not reach it (the hub may have restarted on another port). Errors are the CLI's (connect.ts
 * `call`): a refusal in `lang`, an unreachable hub saying how to start it.
 */
function hubCaller(cfg: McpConfig, key: string, lang: Lang): <T>(f: (c: HubClient) => Promise<T>) => Promise<T> {
  let client: Promise<HubClient> | null = null;
  return async (f) => {
    client ??= cfg.hub().then((url) => new HubClient(url, key));
    let found: HubClient;
    try {
      found = await client;
    } catch (e) {
      client = null;
      throw e; // findHub's CliError, in `lang`
    }
    return call(found, async (c) => {
      try {
        return await f(c);
      } catch (e) {
        if (!(e instanceof HubError)) client = null; // only a refusal says the hub is still there
        throw e;
      }
    }, lang);
  };
}

/** Builds the server with the tools the configured keys allow. */
export function mcpServer(cfg: McpConfig): McpServer {
  const server = new McpServer({ name: "agent-autoloop", version: cfg.version });
  const lang = cfg.lang ?? "en";
  if (cfg.owner) {
    const owner = hubCaller(cfg, cfg.owner, lang);
    const raw = z.boolean().optional().describe("the hub's JSON instead of the summary (many times longer)");
    server.registerTool("status", {
      description: "The hub's state as `agent-autoloop status` prints it: open cards, runs, rules, workers, channels, unrouted events, spending.",
      inputSchema: { before: z.number().int().positive().optional().describe("older runs: before this run id"), raw },
    }, ({ before, raw }) => result(() => owner(async (c) => {
      const state = await c.state(before);
      return raw ? state : formatStatus(state, lang, c.url, { localChannels: cfg.localChannels ?? null });
    })));
    server.registerTool("why", {
      description: "A run's timeline as `agent-autoloop why` prints it: events, claims, start, receipt, answers, follow-up runs.",
      inputSchema: { run: z.number().int().positive(), raw },
    }, ({ run, raw }) => result(() => owner(async (c) => {
      const res = await c.why(run);
      return raw ? res : timeline(run, res.facts, lang).join("\n");
    })));
    server.registerTool("answer", { description: "Answer a card: the option number, or your own words.", inputSchema: { card: z.number().int().positive(), choice: z.number().int().min(0).optional(), text: z.string().min(1).max(4000).optional() } },
      ({ card, choice, text }) => result(() => owner((c) => c.answer(card, { ...(choice !== undefined ? { choice } : {}), ...(text !== undefined ? { text } : {}) }))));
    server.registerTool("resolve", { description: "Close a card: no decision needed any more.", inputSchema: { card: z.number().int().positive(), reason: z.string().max(1000).optional() } },
      ({ card, reason }) => result(() => owner((c) => c.resolve(card, reason))));
    server.registerTool("stop", { description: "Stop a run.", inputSchema: { run: z.number().int().positive() } },
      ({ run }) => result(() => owner((c) => c.cancel(run))));
  }
  if (cfg.source) {
    const source = hubCaller(cfg, cfg.source.key, lang);
    server.registerTool("emit", {
      description: `Post an event as the source "${cfg.source.name}".`,
      inputSchema: { id: z.string().min(1).max(200), type: z.string().min(1).max(64), subject: z.string().max(100).optional(), summary: z.string().max(200).optional(), detail: z.string().max(4000).optional(), link: z.string().max(500).optional() },
    }, (event) => result(() => source((c) => c.postEvent(event))));
    server.registerTool("tell", { description: "Tell the owner something (an fyi notice, once per key).", inputSchema: { key: z.string().min(1).max(200), text: z.string().min(1).max(4000), title: z.string().max(200).optional() } },
      (body) => result(() => source((c) => c.tell(body))));
  }
  return server;
}

type RpcError = { id: string | number | null; code: number; message: string };

/**
 * Splits standard input into lines and passes on only whole JSON-RPC messages of at most `maxBytes`; for any other
 * line it calls `refuse` (JSON-RPC 2.0 §5.1: -32700 parse error, -32600 invalid request) and reads on. A line over
 * the limit is dropped as it arrives, never held whole.
 */
export class MessageLines extends Transform {
  private readonly framer: LineFramer;

  constructor(private readonly maxBytes: number, private readonly refuse: (e: RpcError) => void) {
    super();
    this.framer = new LineFramer(maxBytes, (line) => this.endLine(line));
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.framer.push(chunk);
    done();
  }

  /** One line of stdin (null: over `maxBytes`): passed on when it is a JSON-RPC message, else refused. */
  private endLine(raw: string | null): void {
    if (raw === null) return this.refuse({ id: null, code: -32700, message: `Parse error: line over ${this.maxBytes} bytes, skipped` });
    const line = raw.replace(/\r$/, "");
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return this.refuse({ id: null, code: -32700, message: "Parse error: not JSON" });
    }
    if (!JSONRPCMessageSchema.safeParse(value).success) {
      const id = (value as { id?: unknown } | null)?.id;
      return this.refuse({ id: typeof id === "string" || typeof id === "number" ? id : null, code: -32600, message: "Invalid Request: not a JSON-RPC 2.0 message" });
    }
    this.push(line + "\n");
  }
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
