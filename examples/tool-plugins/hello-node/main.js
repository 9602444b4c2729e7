// hello-node: a sync tool plugin. One JSON-RPC request per stdin line; one response per stdout line.
const lines = require("node:readline").createInterface({ input: process.stdin });

function respond(request) {
  const reply = (body) => ({ jsonrpc: "2.0", id: request.id ?? null, ...body });
  if (request.method !== "tools/call") return reply({ error: { code: -32601, message: "method not found" } });
  if (request.params?.name !== "greet") return reply({ error: { code: -32602, message: "unknown tool" } });
  const who = request.params.arguments?.name ?? "world";
  return reply({ result: { content: `hello, ${who}` } });
}

lines.on("line", (text) => {
  if (text.trim() !== "") process.stdout.write(JSON.stringify(respond(JSON.parse(text))) + "\n");
});
