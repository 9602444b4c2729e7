#!/usr/bin/env node
// A tiny `command` agent that calls one tool of its run through the run's MCP bridge (issue 29: the tool walk-through
// needs no agent CLI). In rules.json:
//   "command": ["node", "<engine>/examples/agents/call-tool.mjs", "hello-python.greet", "{\"name\":\"Ada\"}"]
// The worker gives a run whose rule offers tools the command of its tools' MCP server in AGENT_AUTOLOOP_TOOLS_MCP
// (a JSON array); this connects to it as an MCP client (the SDK's stdio client), calls the tool with the arguments and
// prints its last message: "The tool answered: <text>", or why it did not ("Not run: …" when the call failed).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [tool, argsText = "{}"] = process.argv.slice(2);
const command = JSON.parse(process.env.AGENT_AUTOLOOP_TOOLS_MCP ?? "null");
if (!tool || !Array.isArray(command)) {
  console.log("Not run: call-tool.mjs needs a tool name and a rule that offers tools (AGENT_AUTOLOOP_TOOLS_MCP is not set)");
  process.exit(0);
}
const client = new Client({ name: "call-tool", version: "1" });
await client.connect(new StdioClientTransport({ command: command[0], args: command.slice(1), env: process.env, stderr: "inherit" }));
try {
  const { tools } = await client.listTools();
  if (!tools.some((t) => t.name === tool)) {
    console.log(`Not run: the run does not offer ${tool} (it offers: ${tools.map((t) => t.name).join(", ") || "nothing"})`);
  } else {
    // An approval card may hold the call: wait as long as the hub holds it (approvalWaitSeconds, at most 600 s).
    const result = await client.callTool({ name: tool, arguments: JSON.parse(argsText) }, undefined, { timeout: 660_000 });
    const text = result.content.filter((c) => c.type === "text").map((c) => c.text).join(" ");
    console.log(result.isError ? `Not run: ${tool} answered an error: ${text}` : `The tool answered: ${text}`);
  }
} finally {
  await client.close();
}
