/**
 * A tool plugin's manifest.toml (spec tool-plugins.md §2, with the public implementation's versions 2 and 3) as JSON
 * Schema 2020-12 built with TypeBox (issue 27 "One way to check files"): published as protocol/manifest.schema.json
 * (an editor with a TOML language server that reads JSON Schemas, such as Taplo's `#:schema` comment, completes and
 * explains it) and compiled to the validator manifest.ts reads manifests with (manifest-validator.generated.ts).
 *
 * Every table is closed: an unknown key is refused naming it. What a schema cannot say — a version newer than this
 * host, `[mcp]` only with `plugin_type = "mcp"` at version 3, a tool listed twice, `..` in a path, a memory size, a
 * bind's form, a known capability, a usable JSON Schema in `parameters` — is checked by hand in manifest.ts.
 * Each node names the catalog message of its keywords in `x-messages` (src/protocol/file-problems.ts).
 */
import { Type, type Static, type TSchema, type TString } from "@sinclair/typebox";
import type { Message } from "../protocol/file-problems.js";
import { record } from "../protocol/file-schema.js";
import { toolNamePattern, toolPluginNamePattern } from "../kernel/names.js";
import { toolPluginTypes } from "../protocol/patterns.js";
import {
  callTimeoutMsMax, manifestArrayItemsMax, manifestVersionMax, manifestEnvEntriesMax, manifestItemMaxChars, manifestTextMaxChars, manifestToolsMax,
  pluginNameMaxChars, pluginVersionMaxChars, sandboxCpusMax, sandboxPidsMax, toolNameMaxChars,
} from "./limits.js";

const M = "x-messages";
/** Environment variable names (of `entry_point.env` and `mcp.env_passthrough`). */
export const envNamePattern = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** `protocols` values the public implementation accepts. */
export const knownProtocols = ["openai_function", "block"] as const;

const blank = { type: "string", pattern: "^\\s*$" };
const between = (min: number | string, max: number): Message => ["tools.manifest.between", { min, max }];

/** A string of at most `max` characters; `filled`: not only spaces; `pattern` with the message that says it. */
function str(description: string, max: number, o: { filled?: boolean; pattern?: RegExp; id?: Message } = {}) {
  return Type.String({
    description, maxLength: max,
    ...(o.filled ? { not: blank } : {}),
    ...(o.pattern ? { pattern: o.pattern.source } : {}),
    [M]: { not: "field.minLength", ...(o.id ? { pattern: o.id } : {}) },
  });
}

/** A list of strings (at most `manifestArrayItemsMax`, each at most `manifestItemMaxChars`). */
function strings<T extends TSchema = TString>(description: string, item?: T) {
  return Type.Array((item ?? Type.String({ maxLength: manifestItemMaxChars })) as T, { description, maxItems: manifestArrayItemsMax, [M]: { type: ["field.type", { type: "array of strings" }] } });
}

/** An integer from `min` to `max`. */
const int = (description: string, min: number, max: number) => Type.Integer({ description, minimum: min, maximum: max, [M]: { minimum: between(min, max), maximum: between(min, max) } });

/** One of `values`. */
const oneOf = <T extends string>(description: string, values: readonly T[]) => Type.Unsafe<T>({ type: "string", enum: [...values], description, [M]: { type: "field.enum" } });

/** A table that takes only the keys it names. */
function table<P extends Parameters<typeof Type.Object>[0]>(props: P, description: string) {
  return Type.Object(props, { description, additionalProperties: false });
}

const envNames = (description: string) => strings(description, Type.String({ maxLength: manifestItemMaxChars, pattern: envNamePattern.source, [M]: { pattern: "tools.manifest.envName" } }));
const modes = ["allow", "deny", "all"] as const;

export const ToolEntry = table({
  name: str("The tool's name: letters, digits, _, - and .", toolNameMaxChars, { filled: true, pattern: toolNamePattern, id: "tools.manifest.toolName" }),
  description: Type.Optional(str("What the tool does, for the model.", manifestTextMaxChars)),
  parameters: Type.Optional(record(Type.Unknown(), { description: "A JSON Schema (2020-12) for the tool's arguments (default: {type = \"object\"})." })),
}, "One tool the plugin offers.");

export const ManifestFile = table({
  manifest_version: Type.Optional(Type.Integer({ description: "The manifest's version: 1 (default), 2 or 3 (MCP plugins need 3).", minimum: 1, [M]: { minimum: between(1, manifestVersionMax) } })),
  name: str("The plugin's name: letters, digits, _ and -, starting with a letter or digit.", pluginNameMaxChars, { filled: true, pattern: toolPluginNamePattern, id: "tools.manifest.name" }),
  version: str("The plugin's version.", pluginVersionMaxChars, { filled: true }),
  description: Type.Optional(str("What the plugin is for.", manifestTextMaxChars)),
  author: Type.Optional(str("Who wrote it.", manifestTextMaxChars)),
  plugin_type: oneOf("How the plugin is run: sync (one process per call), async, service or mcp.", toolPluginTypes),
  entry_point: table({
    command: str("The program to run, in the plugin's folder or on PATH (no .. segment).", manifestItemMaxChars, { filled: true }),
    args: Type.Optional(strings("Its arguments (no .. segment).")),
    env: Type.Optional(record(Type.String({ maxLength: manifestItemMaxChars }), {
      description: "Environment variables it gets.", maxProperties: manifestEnvEntriesMax,
      propertyNames: { pattern: envNamePattern.source, [M]: { pattern: "tools.manifest.envName" } }, [M]: { maxProperties: "field.maxItems" },
    })),
  }, "How the plugin is started."),
  communication: Type.Optional(table({
    timeout_ms: Type.Optional(int("How long a call may take, in milliseconds.", 1, callTimeoutMsMax)),
  }, "How calls are made.")),
  capabilities: Type.Optional(table({
    tools: Type.Optional(Type.Array(ToolEntry, { description: "The tools the plugin offers ([[capabilities.tools]]).", maxItems: manifestToolsMax, [M]: { type: ["field.type", { type: "array of tables" }] } })),
    disable_model_invocation: Type.Optional(Type.Boolean({ description: "Hide the tools from agents: only the owner may call them." })),
  }, "What the plugin offers.")),
  sandbox: Type.Optional(table({
    memory: Type.Optional(str("The most memory, such as 256m (units b, k, kb, m, mb, g, gb, t, tb; at least 4m).", 64, { filled: true })),
    cpus: Type.Optional(Type.Number({ description: "A share of CPUs, such as 0.5.", exclusiveMinimum: 0, maximum: sandboxCpusMax, [M]: { exclusiveMinimum: between("0 (excluded)", sandboxCpusMax), maximum: between("0 (excluded)", sandboxCpusMax) } })),
    pids: Type.Optional(int("The most processes and threads at once.", 1, sandboxPidsMax)),
    read_only_root: Type.Optional(Type.Boolean({ description: "Whether the plugin's file system is read-only." })),
    cap_drop: Type.Optional(strings("Linux capabilities to drop, such as ALL or NET_RAW.")),
    network: Type.Optional(oneOf("none (default), bridge or host.", ["none", "bridge", "host"] as const)),
    binds: Type.Optional(strings("Folders bound in, in Docker -v form host:/container/path[:ro|rw].")),
  }, "Runs the plugin in a sandbox (bubblewrap).")),
  mcp: Type.Optional(table({
    autostart: Type.Optional(Type.Boolean({ description: "Start the server with the host (default false)." })),
    restart_policy: Type.Optional(oneOf("never, on_crash (default) or always.", ["never", "on_crash", "always"] as const)),
    crash_loop_max: Type.Optional(int("Crashes within the window before it is given up (default 3).", 1, 1000)),
    crash_loop_window_secs: Type.Optional(int("The crash window, in seconds (default 60).", 1, 86_400)),
    handshake_timeout_ms: Type.Optional(int("How long the MCP handshake may take (default 5000).", 1, callTimeoutMsMax)),
    idle_shutdown_secs: Type.Optional(int("Stop the server after so long unused (0: never).", 0, 86_400 * 7)),
    env_passthrough: Type.Optional(table({ allow: Type.Optional(envNames("Variables passed to the server.")), deny: Type.Optional(strings("Globs of variables never passed.")) }, "Which environment variables reach the server.")),
    tools_allowlist: Type.Optional(table({ mode: Type.Optional(oneOf("allow (default), deny or all.", modes)), names: Type.Optional(strings("Tool names.")) }, "Which of the server's tools are offered.")),
    resources_allowlist: Type.Optional(table({ mode: Type.Optional(oneOf("allow (default), deny or all.", modes)), patterns: Type.Optional(strings("Resource patterns.")) }, "Which of the server's resources are offered.")),
  }, "An MCP server plugin (plugin_type = \"mcp\", manifest_version = 3).")),
  protocols: Type.Optional(strings("Call formats the plugin speaks (default [\"openai_function\"]).", Type.Unsafe<string>({ type: "string", enum: [...knownProtocols], [M]: { type: "field.enum" } }))),
  hooks: Type.Optional(strings("Hooks of the public implementation.")),
  skill_refs: Type.Optional(strings("Skills the plugin refers to.")),
  meta: Type.Optional(record(Type.Unknown(), { description: "Anything else, kept as it is." })),
}, "manifest.toml of a tool plugin (spec tool-plugins.md §2).");

export type ManifestFile = Static<typeof ManifestFile>;
/** A manifest file with its `mcp` table and tools as the schema reads them (null where absent). */
export type McpFile = NonNullable<ManifestFile["mcp"]>;
