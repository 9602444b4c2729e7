/**
 * config.json of a home (README "Files"; issue 2) as JSON Schema 2020-12 built with TypeBox: where the hub listens and
 * the keys of the parts `serve` runs in its process. Published as protocol/config.schema.json and compiled to the
 * validator `readConfig` and `check` use (config-validator.generated.ts; issue 27). Plain JSON: no comments.
 * A channel's options besides `use` and `key` belong to its plugin (README "Cards on …") and are not checked here.
 */
import { Type, type Static } from "@sinclair/typebox";
import { nullable, record } from "./file-schema.js";

const M = "x-messages";
const key = (description: string) => Type.String({ description, [M]: { type: "configJson.key", required: "configJson.key" } });

export const WorkerConfig = Type.Object({
  name: Type.String({ description: "The worker's name: agents of rules.json name it in worker.", [M]: { required: "configJson.worker", type: "configJson.worker" } }),
  key: key("The worker's key (agent-autoloop key new worker <name>)."),
  capacity: Type.Optional(Type.Integer({ description: "How many runs at once (default 2).", minimum: 1, maximum: Number.MAX_SAFE_INTEGER, [M]: { type: "configJson.capacity", minimum: "configJson.capacity", maximum: "configJson.capacity" } })),
}, { description: "The worker serve runs in its process; null: none (workers elsewhere connect over HTTP).", additionalProperties: false, [M]: { type: "configJson.workerObject" } });

export const ChannelConfig = Type.Object({
  use: Type.String({ description: "The channel plugin: desktop, file, webhook, feishu, or one of your own.", [M]: { required: "configJson.channel", type: "configJson.channel" } }),
  key: key("The channel's key (agent-autoloop key new channel <name>)."),
}, { description: "A channel serve runs: its plugin, its key and the plugin's own options.", additionalProperties: true });

export const SourceConfig = Type.Object({
  name: Type.String({ description: "The source the MCP server's emit and tell post as (a source of rules.json)." }),
  key: key("That source's key."),
}, { description: "The source of `agent-autoloop mcp`'s emit and tell.", additionalProperties: false });

/** config.json. */
export const ConfigFile = Type.Object({
  $schema: Type.Optional(Type.Unknown({ description: "The schema this file follows, for editors (not read)." })),
  listen: Type.String({ description: "Where the hub listens: HOST:PORT (port 0: any free port).", [M]: { type: "configJson.listen", required: "configJson.listen" } }),
  publicUrl: Type.Optional(nullable(Type.String({ description: "The hub's address as others reach it, for card links; null: the local one." }))),
  owner: Type.String({ description: "The owner key the CLI uses.", [M]: { type: "configJson.owner", required: "configJson.owner" } }),
  worker: Type.Optional(nullable(WorkerConfig)),
  channels: Type.Optional(record(ChannelConfig, { description: "The channels serve runs, by name (the names of rules.json channels)." })),
  source: Type.Optional(nullable(SourceConfig)),
}, { title: "agent-autoloop config.json", description: "Where the hub listens and the keys of the parts serve runs in its process.", additionalProperties: false, [M]: { type: "configJson.notObject" } });

export type ConfigFile = Static<typeof ConfigFile>;
