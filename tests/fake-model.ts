/**
 * A fake model server for driving the real agent CLIs in tests (issue 5): the Anthropic Messages API
 * (`POST /v1/messages`, streamed as server-sent events, as Claude Code calls it) and the OpenAI Responses API
 * (`POST /v1/responses`, streamed, as Codex calls it), on 127.0.0.1 port 0.
 *
 * What the model "says" is decided by a script function from the conversation it is sent (the last user text and
 * whether the last item is a tool result), so a test can ask a question in one launch and finish in the next.
 * Every reply carries fixed token counts, and the server keeps a ledger of what it served, so a test can compare
 * the usage a run reports with what the model really used during that run.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** What the conversation looks like from the model's side. */
export interface Turn {
  api: "anthropic" | "openai";
  /** The user text sent since the model last spoke (all parts joined), or "" when the last item is a tool result. */
  lastUser: string;
  /** All user text of the conversation, joined: replays of earlier turns included. */
  allUser: string;
  /** The output of the tool call this request answers, when it answers one. */
  toolResult: string | null;
  /** The names of the tools the CLI offered. */
  tools: string[];
  /** The model name the CLI asked for. */
  model: string;
  /** The system prompt the CLI sent (Claude Code names the working directory there), "" when none. */
  system: string;
  /** The request's credential: its `Authorization` header (OpenAI) or `x-api-key` (Anthropic), "" when none. */
  credential: string;
}

/**
 * One reply: plain text, or a call of one tool (`input` is the tool's JSON arguments; `namespace`, OpenAI only, the
 * namespace the tool is offered in, as Codex offers MCP servers' tools: `mcp__<server>`).
 */
export type Reply = { text: string } | { tool: string; input: Record<string, unknown>; namespace?: string } | { status: number; error: string };

/** Tokens of one served reply. */
export interface Served {
  api: "anthropic" | "openai";
  at: number;
  input: number;
  output: number;
  reply: Reply;
}

/**
 * An agent's last message as the worker reads it (protocol.md 回执): the first line, then the receipt as JSON in an
 * ```agent-autoloop block.
 */
export function receiptMessage(firstLine: string, receipt: object): string {
  return [firstLine, "```agent-autoloop", JSON.stringify(receipt), "```"].join("\n");
}

/** Fixed figures of every reply: input tokens, output tokens. */
export const replyTokens = { input: 120, output: 30 } as const;

export interface FakeModel {
  /** http://127.0.0.1:PORT (no trailing slash). */
  url: string;
  /** Every reply served, in order. */
  served: Served[];
  /** Replaces the script. */
  setScript(script: (turn: Turn) => Reply): void;
  close(): Promise<void>;
}

/** Field `key` of `v` when `v` is an object, else undefined: a request is read as the CLI sent it, whatever its shape. */
function field(v: unknown, key: string): unknown {
  return typeof v === "object" && v !== null ? (v as Record<string, unknown>)[key] : undefined;
}

/** `v` when it is an array, else none. */
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((c) => {
      const [text, inner] = [field(c, "text"), field(c, "content")];
      return typeof text === "string" ? text : typeof inner === "string" ? inner : Array.isArray(inner) ? textOf(inner) : "";
    })
    .join("\n");
}

/** Reads an Anthropic Messages request into a Turn. */
function anthropicTurn(body: unknown): Omit<Turn, "credential"> {
  const messages = list(field(body, "messages"));
  const users = messages.filter((m) => field(m, "role") === "user");
  const last = messages[messages.length - 1];
  const toolBlock = list(field(last, "content")).find((b) => field(b, "type") === "tool_result");
  const lastAssistant = messages.map((m) => field(m, "role")).lastIndexOf("assistant");
  return {
    api: "anthropic",
    lastUser: toolBlock ? "" : messages.slice(lastAssistant + 1).map((m) => textOf(field(m, "content"))).join("\n"),
    allUser: users.map((m) => textOf(field(m, "content"))).join("\n"),
    toolResult: toolBlock ? textOf(field(toolBlock, "content")) || String(field(toolBlock, "content") ?? "") : null,
    tools: list(field(body, "tools")).map((t) => String(field(t, "name"))),
    model: String(field(body, "model") ?? ""),
    system: textOf(field(body, "system")),
  };
}

/** Reads an OpenAI Responses request into a Turn. */
function openaiTurn(body: unknown): Omit<Turn, "credential"> {
  const input = list(field(body, "input"));
  const last = input[input.length - 1];
  const isUser = (i: unknown) => (field(i, "type") === "message" || field(i, "type") === undefined) && field(i, "role") === "user";
  const userItems = input.filter(isUser);
  const isTool = field(last, "type") === "function_call_output" || field(last, "type") === "custom_tool_call_output";
  const lastAssistant = input.map((i) => field(i, "role") === "assistant" || field(i, "type") === "function_call").lastIndexOf(true);
  const output = field(last, "output");
  const instructions = field(body, "instructions");
  return {
    api: "openai",
    lastUser: isTool ? "" : input.slice(lastAssistant + 1).filter(isUser).map((i) => textOf(field(i, "content"))).join("\n"),
    allUser: userItems.map((i) => textOf(field(i, "content"))).join("\n"),
    toolResult: isTool ? String(typeof output === "string" ? output : JSON.stringify(output)) : null,
    // A namespace (Codex's MCP servers) is listed with its tools as `<namespace>.<tool>`.
    tools: list(field(body, "tools")).flatMap((t) => [
      String(field(t, "name") ?? field(t, "type")),
      ...list(field(t, "tools")).map((inner) => `${String(field(t, "name"))}.${String(field(inner, "name"))}`),
    ]),
    model: String(field(body, "model") ?? ""),
    system: typeof instructions === "string" ? instructions : "",
  };
}

function sse(res: ServerResponse, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

function anthropicStream(res: ServerResponse, reply: Reply, n: number, model: string): void {
  const usage = { input_tokens: replyTokens.input, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  sse(res, "message_start", { type: "message_start", message: { id: `msg_fake_${n}`, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage } });
  if ("text" in reply) {
    sse(res, "content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
    sse(res, "content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: reply.text } });
  } else if ("tool" in reply) {
    sse(res, "content_block_start", { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: `toolu_fake_${n}`, name: reply.tool, input: {} } });
    sse(res, "content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: JSON.stringify(reply.input) } });
  }
  sse(res, "content_block_stop", { type: "content_block_stop", index: 0 });
  sse(res, "message_delta", { type: "message_delta", delta: { stop_reason: "tool" in reply ? "tool_use" : "end_turn", stop_sequence: null }, usage: { output_tokens: replyTokens.output } });
  sse(res, "message_stop", { type: "message_stop" });
  res.end();
}

/** The `namespace` field of a tool call reply that names one. */
function namespaceOf(reply: Reply): { namespace?: string } {
  return "namespace" in reply && reply.namespace ? { namespace: reply.namespace } : {};
}

function openaiStream(res: ServerResponse, reply: Reply, n: number, model: string): void {
  const id = `resp_fake_${n}`;
  const base = { id, object: "response", created_at: Math.floor(Date.now() / 1000), model, output: [] as unknown[] };
  sse(res, "response.created", { type: "response.created", sequence_number: 0, response: { ...base, status: "in_progress" } });
  const item = "text" in reply
    ? { id: `msg_fake_${n}`, type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: reply.text, annotations: [] }] }
    : { id: `fc_fake_${n}`, type: "function_call", status: "completed", call_id: `call_fake_${n}`, ...namespaceOf(reply), name: (reply as { tool: string }).tool, arguments: JSON.stringify((reply as { input: unknown }).input) };
  sse(res, "response.output_item.added", { type: "response.output_item.added", sequence_number: 1, output_index: 0, item: { ...item, status: "in_progress", ...("content" in item ? { content: [] } : {}) } });
  if ("text" in reply) {
    sse(res, "response.output_text.delta", { type: "response.output_text.delta", sequence_number: 2, item_id: item.id, output_index: 0, content_index: 0, delta: reply.text });
  }
  sse(res, "response.output_item.done", { type: "response.output_item.done", sequence_number: 3, output_index: 0, item });
  const usage = {
    input_tokens: replyTokens.input, input_tokens_details: { cached_tokens: 0 },
    output_tokens: replyTokens.output, output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: replyTokens.input + replyTokens.output,
  };
  sse(res, "response.completed", { type: "response.completed", sequence_number: 4, response: { ...base, status: "completed", output: [item], usage } });
  res.end();
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** Starts the fake model server on 127.0.0.1 port 0. Unknown paths answer 404; a script that throws answers 500. */
export async function startFakeModel(script: (turn: Turn) => Reply): Promise<FakeModel> {
  let current = script;
  const served: Served[] = [];
  let n = 0;
  const server = createServer(async (req, res) => {
    try {
      const path = (req.url ?? "").split("?")[0];
      if (req.method !== "POST" || (path !== "/v1/messages" && path !== "/v1/responses")) {
        res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { type: "not_found_error", message: `no ${req.method} ${path}` } }));
        return;
      }
      const body: unknown = JSON.parse(await readBody(req));
      const api = path === "/v1/messages" ? "anthropic" : "openai";
      const header = api === "anthropic" ? req.headers["x-api-key"] : req.headers.authorization;
      const turn = { ...(api === "anthropic" ? anthropicTurn(body) : openaiTurn(body)), credential: typeof header === "string" ? header : "" };
      const reply = current(turn);
      n += 1;
      if ("status" in reply) {
        res.writeHead(reply.status, { "content-type": "application/json" }).end(JSON.stringify({ type: "error", error: { type: "api_error", message: reply.error } }));
        return;
      }
      served.push({ api, at: Date.now(), input: replyTokens.input, output: replyTokens.output, reply });
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      if (api === "anthropic") anthropicStream(res, reply, n, turn.model);
      else openaiStream(res, reply, n, turn.model);
    } catch (e) {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ type: "error", error: { type: "api_error", message: String(e) } }));
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    served,
    setScript(s) {
      current = s;
    },
    close: () => new Promise((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}
