/**
 * The lines an MCP server of this engine reads (`agent-autoloop tools mcp`'s relay, a run's tool bridge): only whole
 * JSON-RPC 2.0 messages reach the SDK's transport, which drops any other line in silence — a request whose
 * `_meta.progressToken` was an object was never answered, its caller waiting out its own timeout (issue 26 round 39,
 * F39b-1). Every refused line with an id is answered with its error.
 */
import { JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { Transform, type TransformCallback } from "node:stream";
import { LineFramer } from "../common/lines.js";
import { jsonTextDeeperThan } from "../protocol/tool-result.js";

/** A JSON-RPC error answer to send for a refused line; `over`: the line was longer than allowed. */
export type RpcError = { id: string | number | null; code: number; message: string; over?: true };

/**
 * What a reader checks of a line besides its length, cheapest first. `depthMax`: a line whose arrays and objects nest
 * deeper is refused before it is parsed (JSON.parse of 10 MB nested 4.9 million deep took 6 s of the hub's thread:
 * hostile round 41, F41a-1). `message`: the parsed message's own check, before the SDK parses and validates it
 * again — an error to answer, `"handled"` when the caller answers it itself, or null to pass it on.
 */
export interface LineChecks {
  depthMax?: number;
  message?: (m: { id?: unknown; method?: unknown; params?: unknown }) => RpcError | "handled" | null;
}

/**
 * Splits a stream (the relay's standard input, a run's tools socket) into lines and passes on only whole JSON-RPC messages of at most `maxBytes`; for any other
 * line it calls `refuse` (JSON-RPC 2.0 §5.1: -32700 parse error, -32600 invalid request) and reads on. A line over
 * the limit is dropped as it arrives, never held whole.
 */
export class MessageLines extends Transform {
  private readonly framer: LineFramer;

  constructor(private readonly maxBytes: number, private readonly refuse: (e: RpcError) => void, private readonly checks: LineChecks = {}) {
    super();
    this.framer = new LineFramer(maxBytes, (line) => this.endLine(line));
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.framer.push(chunk);
    done();
  }

  /** One line of stdin (null: over `maxBytes`): passed on when it is a JSON-RPC message, else refused. */
  private endLine(raw: string | null): void {
    if (raw === null) return this.refuse({ id: null, code: -32700, message: `Parse error: line over ${this.maxBytes} bytes, skipped`, over: true });
    const line = raw.replace(/\r$/, "");
    if (line.trim() === "") return;
    const depthMax = this.checks.depthMax;
    if (depthMax !== undefined && jsonTextDeeperThan(line, depthMax)) return this.refuse({ id: null, code: -32600, message: `Invalid Request: nested deeper than ${depthMax} levels` });
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
    const own = this.checks.message?.(value as { id?: unknown; method?: unknown; params?: unknown }) ?? null;
    if (own === "handled") return;
    if (own !== null) return this.refuse(own);
    this.push(line + "\n");
  }
}

