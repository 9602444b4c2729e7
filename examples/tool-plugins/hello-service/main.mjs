// hello-service: a service tool plugin. Serves corlinman.v1.PluginBridge on the unix socket $CORLINMAN_PLUGIN_ADDR.
// It loads the bridge's .proto from this repository; a plugin of your own ships a copy of src/tools/plugin-bridge.proto.
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

const proto = fileURLToPath(new URL("../../../src/tools/plugin-bridge.proto", import.meta.url));
const def = protoLoader.loadSync(proto, { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true });
const { PluginBridge } = grpc.loadPackageDefinition(def).corlinman.v1;
let served = 0;

function execute(call) {
  const { call_id, tool, args_json, session_key } = call.request;
  const args = JSON.parse(args_json.toString("utf8") || "{}");
  served += 1;
  const result = (value) => call.write({ result: { call_id, result_json: Buffer.from(JSON.stringify(value)), duration_ms: 0 } });
  switch (tool) {
    case "greet":
      call.write({ progress: { message: "looking up the name", fraction: 0.5 } });
      result({ content: `hello, ${args.name}` });
      break;
    case "count":
      result({ served, session_key });
      break;
    case "refuse":
      call.write({ error: { reason: "FORMAT", message: "refused on purpose", retryable: false, upstream_code: "" } });
      break;
    case "ask":
      call.write({ awaiting_approval: { call_id, plugin: "hello-service", tool, args_preview_json: args_json, session_key, reason: "this writes files" } });
      break;
    case "crash":
      process.exit(3);
      break;
    default:
      call.write({ error: { reason: "UNKNOWN", message: `no tool ${tool}`, retryable: false, upstream_code: "" } });
  }
  call.end();
}

const server = new grpc.Server();
server.addService(PluginBridge.service, { Execute: execute });
server.bindAsync(`unix:${process.env.CORLINMAN_PLUGIN_ADDR}`, grpc.ServerCredentials.createInsecure(), (err) => {
  if (err) {
    console.error(`cannot listen: ${err.message}`);
    process.exit(1);
  }
  console.error(`hello-service listening on ${process.env.CORLINMAN_PLUGIN_ADDR}`);
});
process.on("SIGTERM", () => server.tryShutdown(() => process.exit(0)));
