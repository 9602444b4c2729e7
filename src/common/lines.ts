/**
 * The one bounded NDJSON framer (issue 27 #5): splits a byte stream into lines for the MCP server on stdio
 * (cli/mcp.ts) and the agent's tool relay (worker/tool-relay.ts: its handshake and the lines it passes on). A line is
 * held whole only up to its limit: a longer one is dropped as it arrives and reported once, at its line break.
 */

/** What a line handler may ask: `"stop"` ends the framing after this line (the rest is kept in `rest`). */
export type LineVerdict = "stop" | void;

/** Splits bytes into lines ending in "\n" (given without it, a "\r" before it kept); a line over the limit is null. */
export class LineFramer {
  private parts: Buffer[] = [];
  private bytes = 0;
  private over = false;
  private stopped = false;
  /** After a handler said `"stop"`: the bytes of the chunk after that line (later chunks are not read). */
  rest: Buffer = Buffer.alloc(0);

  /**
   * @param maxBytes the longest line held, in bytes (without its "\n")
   * @param onLine each line as UTF-8 text, or null for one longer than `maxBytes` (its bytes were never kept)
   */
  constructor(private readonly maxBytes: number, private readonly onLine: (line: string | null) => LineVerdict) {}

  /** Takes the next bytes of the stream; calls `onLine` for every line they end. */
  push(chunk: Buffer): void {
    if (this.stopped) return;
    let from = 0;
    for (;;) {
      const nl = chunk.indexOf(10, from);
      const piece = chunk.subarray(from, nl === -1 ? chunk.length : nl);
      if (!this.over && this.bytes + piece.length > this.maxBytes) {
        this.over = true;
        this.parts = [];
      }
      if (!this.over) {
        this.parts.push(piece);
        this.bytes += piece.length;
      }
      if (nl === -1) return;
      const line = this.over ? null : Buffer.concat(this.parts).toString("utf8");
      this.parts = [];
      this.bytes = 0;
      this.over = false;
      from = nl + 1;
      if (this.onLine(line) === "stop") {
        this.stopped = true;
        this.rest = chunk.subarray(from);
        return;
      }
    }
  }
}
