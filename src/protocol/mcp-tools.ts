/**
 * The arguments of `agent-autoloop mcp`'s tools as JSON Schema 2020-12, built from the /v1 protocol's own definitions
 * and limits (schema.ts, kernel/limits.ts): what a tool forwards to the hub is checked by the same schema the hub
 * checks it with, and the MCP client reads the same limits in `tools/list` (issue 27 point 4). `npm run schema`
 * compiles them to src/protocol/mcp-validators.generated.ts (scripts/validators.ts), so the MCP server compiles no
 * schema at start.
 */
import { Type } from "@sinclair/typebox";
import { Answer, EventIn, ResolveCard, TellBody } from "./schema.js";

const runOrCard = () => Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
const raw = Type.Optional(Type.Boolean({ description: "the hub's JSON instead of the summary (many times longer)" }));
const closed = { additionalProperties: false } as const;

/**
 * Each tool's arguments by tool name. `answer` is POST /v1/cards/:id/answer's body without `by` and `ref` (the
 * owner's key answers) plus the card; `resolve` is /resolve's body plus the card; `emit` is POST /v1/events' body;
 * `tell` is POST /v1/tell's notice with `key` and `text` required (an fyi notice once per key).
 */
export const mcpToolArguments = {
  status: Type.Object({ before: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: "older runs: before this run id" })), raw }, closed),
  why: Type.Object({ run: runOrCard(), raw }, closed),
  answer: Type.Object({ card: runOrCard(), choice: Answer.properties.choice, text: Answer.properties.text }, closed),
  resolve: Type.Object({ card: runOrCard(), reason: ResolveCard.properties.reason }, closed),
  stop: Type.Object({ run: runOrCard() }, closed),
  emit: EventIn,
  tell: Type.Object({ key: Type.Optional(TellBody.properties.key, false), text: Type.Optional(TellBody.properties.text, false), title: TellBody.properties.title }, closed),
};

/** The name of one of `mcp`'s tools. */
export type McpToolName = keyof typeof mcpToolArguments;
