/**
 * `agent-autoloop mcp` against the MCP project's own conformance suite (@modelcontextprotocol/conformance, issue 30):
 * the server scenarios that apply to this server — the handshake, ping and the tool list. The suite speaks Streamable
 * HTTP and the hub's MCP server speaks stdio (as the agents that use it do), so the test puts the SDK's own Streamable
 * HTTP server transport in front of it: each session the suite opens gets its own `agent-autoloop mcp` child, and
 * every message is passed through unchanged.
 *
 * Scenarios left out, and why: `tools-call-*`, `json-schema-2020-12`, `elicitation-*` call tools of the suite's own
 * reference server (`test_simple_text`, …) that this server does not have; `resources-*`, `prompts-*`, `completion-*`
 * and `logging-set-level` test capabilities this server does not announce; `server-sse-*` and
 * `dns-rebinding-protection` test the HTTP transport, which here is the SDK's (the test's bridge), not the product's.
 *
 * The suite is pinned at 0.1.13: from 0.1.14 it imports `fs.globSync`, which Node 20 does not have.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { hubFixture, engine, tempDir } from "./helpers.js";

/** The conformance suite's scenarios this server answers (see the file's comment for the others). */
const scenarios = ["server-initialize", "ping", "tools-list"];

/** A Streamable HTTP endpoint at `/mcp` whose every session is one `agent-autoloop mcp` child over stdio. */
async function bridge(env: Record<string, string>): Promise<{ url: string; close(): Promise<void> }> {
  const sessions = new Map<string, { http: StreamableHTTPServerTransport; stdio: StdioClientTransport }>();
  const open = async (): Promise<StreamableHTTPServerTransport> => {
    const stdio = new StdioClientTransport({ command: process.execPath, args: [join(engine, "bin", "agent-autoloop.js"), "mcp"], env });
    const http: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => { sessions.set(id, { http, stdio }); },
    });
    http.onmessage = (message) => { void stdio.send(message); };
    stdio.onmessage = (message) => { void http.send(message); };
    await stdio.start();
    await http.start();
    return http;
  };
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    try {
      const id = req.headers["mcp-session-id"];
      const known = typeof id === "string" ? sessions.get(id) : undefined;
      await (known ? known.http : await open()).handleRequest(req, res);
    } catch (e) {
      if (!res.headersSent) res.writeHead(500).end(String(e));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: async () => {
      for (const s of sessions.values()) { await s.stdio.close(); await s.http.close(); }
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The checks of one scenario, as the suite writes them to `checks.json` in its output folder. */
interface Check { id: string; status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED"; errorMessage?: string }

test("the MCP conformance suite's handshake, ping and tool-list scenarios pass against `agent-autoloop mcp`", async () => {
  const f = await hubFixture();
  const config = JSON.parse(readFileSync(f.home.config, "utf8"));
  writeFileSync(f.home.config, JSON.stringify({ ...config, source: { name: "shop", key: f.keys.source } }));
  const b = await bridge({ PATH: process.env.PATH!, AGENT_AUTOLOOP_HOME: f.home.dir, AGENT_AUTOLOOP_URL: f.url, AGENT_AUTOLOOP_LANG: "en" });
  const cli = join(engine, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
  try {
    for (const scenario of scenarios) {
      const out = tempDir("aa-mcp-conf-");
      const code = await new Promise<{ code: number; text: string }>((resolve) =>
        execFile(process.execPath, [cli, "server", "--url", b.url, "--scenario", scenario, "-o", out], { encoding: "utf8", timeout: 60_000 },
          (e, stdout, stderr) => resolve({ code: e ? (typeof e.code === "number" ? e.code : 1) : 0, text: stdout + stderr })));
      const checks = JSON.parse(readFileSync(findChecks(out, scenario), "utf8")) as Check[];
      const judged = checks.filter((c) => c.status !== "INFO");
      assert.ok(judged.length > 0, `${scenario}: the suite judged nothing\n${code.text}`);
      assert.deepEqual(judged.filter((c) => c.status !== "SUCCESS").map((c) => `${c.id}: ${c.status} ${c.errorMessage ?? ""}`), [], `${scenario}\n${code.text}`);
      assert.equal(code.code, 0, `${scenario}\n${code.text}`);
      rmSync(out, { recursive: true, force: true });
    }
  } finally {
    await b.close();
    await f.close();
  }
});

/** The `checks.json` the suite wrote for `scenario` under `dir` (it adds a folder named after the scenario and time). */
function findChecks(dir: string, scenario: string): string {
  const found = (readdirSync(dir, { recursive: true }) as string[]).map((p) => join(dir, p)).filter((p) => p.endsWith("checks.json") && p.includes(scenario));
  assert.equal(found.length, 1, `checks.json of ${scenario} in ${dir}: ${found.join(", ")}`);
  return found[0]!;
}
