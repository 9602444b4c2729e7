#!/usr/bin/env node
// The agent-autoloop command. Runs the compiled CLI (npm ci builds it; `npm run build` after pulling changes).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const compiled = new URL("../dist/src/cli/main.js", import.meta.url);
if (!existsSync(fileURLToPath(compiled))) {
  process.stderr.write("agent-autoloop: not built yet; run `npm ci` (or `npm run build`) in " + fileURLToPath(new URL("..", import.meta.url)) + "\n");
  process.exit(1);
}
const { main } = await import(compiled.href);
await main(process.argv);
