/**
 * The relay's program (tool-relay.ts), as the agent's CLI starts it: `node tool-relay-main.js <socket> [zh|en]`.
 * Exits 0 when its stdin ends, 2 without a socket path.
 */
import { runRelay } from "./tool-relay.js";

const socketPath = process.argv[2];
if (!socketPath) {
  process.stderr.write("usage: tool-relay-main <socket> [zh|en]\n");
  process.exit(2);
}
await runRelay(socketPath, process.argv[3] === "zh" ? "zh" : "en");
process.exit(0);
