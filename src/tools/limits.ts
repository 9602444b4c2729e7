/**
 * Every limit of the tool host, defined once, with its unit in the name. "§" refers to spec tool-plugins.md; where
 * the spec is silent the value is our choice (generous, finite) and says so.
 */

// ── manifest (§2; our bounds) ──────────────────────────────────────────────────────────────────────────────────
/** A manifest file larger than this is refused unread (a real one is a few KiB). */
export const manifestMaxBytes = 64 * 1024;
/** Deepest nesting of tables and arrays in a manifest (a tool's JSON Schema lives inside it). */
export const manifestDepthMax = 24;
/** Tools one manifest (or one `tools/list` answer, or one MCP server) may offer. */
export const manifestToolsMax = 128;
/** The newest `manifest_version` this host knows (1 and 2 are migrated to it). */
export const manifestVersionMax = 3;
/** Plugin names, tool names: 1 to this many characters (as the public implementation; rules.json names them too). */
export { toolPluginNameMaxChars as pluginNameMaxChars, toolNameMaxChars } from "../kernel/limits.js";
/** `version`: 1 to this many characters (as the public implementation). */
export const pluginVersionMaxChars = 32;
/** description, author, and any other free text of a manifest, in characters. */
export const manifestTextMaxChars = 4000;
/** One string of an array (args, binds, hooks, …) or an env value, in characters. */
export const manifestItemMaxChars = 4096;
/** Items of one array (args, binds, cap_drop, hooks, skill_refs, names, …). */
export const manifestArrayItemsMax = 256;
/** Entries of `entry_point.env`. */
export const manifestEnvEntriesMax = 128;

// ── a plugin's files (issue 26 #4: trust follows the code; the common plugin layer's bounds) ─────────────────────
export { pluginFilesMax, pluginFilePathMaxChars, pluginFilesMaxBytes, pluginFolderDepthMax, fileHashCacheEntriesMax, pluginFoldersMax } from "../plugins/limits.js";

// ── sandbox (§7; our bounds) ───────────────────────────────────────────────────────────────────────────────────
/** `[sandbox] memory` below this is refused: no interpreter starts in less. */
export const sandboxMemoryMinBytes = 4 * 1024 * 1024;
/** `[sandbox] cpus`: more than 0, at most this. */
export const sandboxCpusMax = 1024;
/** `[sandbox] pids` (our extension): 1 to this many processes and threads. */
export const sandboxPidsMax = 65_536;
/** The CFS period the `cpus` quota is a share of, in microseconds (the kernel's default). */
export const cgroupCpuPeriodUs = 100_000;

// ── calls (§4) ─────────────────────────────────────────────────────────────────────────────────────────────────
/** `communication.timeout_ms` when the manifest has none (§2). */
export { toolCallTimeoutMsDefault as callTimeoutMsDefault } from "../kernel/limits.js";
/** Starts of one sandboxed plugin launch when bubblewrap ends before the plugin ran (the sandbox planned again each). */
export { sandboxLaunchTriesMax } from "../kernel/limits.js";
/** The longest timeout a manifest or a caller may ask for: one hour (the hub bounds a parked call's deadline by it too). */
export { toolCallTimeoutMsMax as callTimeoutMsMax } from "../kernel/limits.js";
/** One stdout line of a plugin, in bytes: a longer one ends the call as a plugin error. */
export const stdoutLineMaxBytes = 4 * 1024 * 1024;
/**
 * A plugin's `result` (or its error's `data`): arrays and objects inside one another at most this deep, as an async
 * callback's result (the outermost counts 1); a deeper one is a plugin error.
 */
export { toolResultDepthMax as resultDepthMax } from "../kernel/limits.js";
/** A call's arguments (from `--args`, an agent, a workflow): nested at most this deep, else refused before anything starts. */
export const argumentsDepthMax = 64;
/**
 * A call's arguments as JSON, in UTF-8 bytes: larger is refused before anything reads them further (issue 26 round 12,
 * F12-5: the worker redacts a call's arguments on the hub's event loop, and the bridge's 10 MiB line let one call hold
 * it for seconds). A plugin that takes files is given a path, not their content.
 */
export const argumentsMaxBytes = 1024 * 1024;
/**
 * The most work (the program's size times the string's length + 1) one pattern check may take in the hub's thread:
 * 130–160 ms measured for the worst program tried (`(a|aa){1000}$`, 6,003 instructions), 10–30 ms for a plain one
 * over 200,000–330,000 characters.
 */
export const patternWorkMax = 2_000_000;
/** All stdout of one call up to its response, in bytes: more ends the call as a plugin error (a flood). */
export const stdoutMaxBytes = 16 * 1024 * 1024;
/** stderr of one call that reaches the log, in bytes; the rest is read and dropped, with one line saying so. */
export const stderrLogMaxBytes = 64 * 1024;
/** stderr of a service or MCP server that reaches the log over its whole life, in bytes. */
export const longLivedStderrLogMaxBytes = 1024 * 1024;
/** One log line taken from a plugin's stderr, in characters (longer ones are cut). */
export const logLineMaxChars = 2000;
/** After its response, a plugin gets this long to exit on end of input before its process group is killed. */
export const exitGraceMs = 1000;
/** After killing a plugin, its pipes get this long to close; a process that escaped still holding them is cut off. */
export const pipeCloseWaitMs = 2000;
/** `tools/list` for a manifest that lists no tools: at most this long (or the manifest's timeout if shorter). */
export const toolsListTimeoutMs = 10_000;
/** Tool lists asked with `tools/list` kept at once (one per manifest digest). */
export const listCacheEntriesMax = 1000;
/** Async task ids (the only credential of a callback): 16 to 200 characters (issue 16; the hub checks them too). */
export { toolTaskIdMinChars as taskIdMinChars, toolTaskIdMaxChars as taskIdMaxChars } from "../kernel/limits.js";

// ── long-lived plugins: service (§6) and mcp ───────────────────────────────────────────────────────────────────
/**
 * The longest unix socket path that fits a socket address (`sun_path` holds 108 bytes with its final NUL). A service's
 * socket deeper than this (a deep home) is reached through its folder's descriptor on Linux (service.ts).
 */
export const unixSocketPathMaxBytes = 107;
/** A service plugin must accept gRPC on its socket within this long after it starts. */
export const serviceStartTimeoutMs = 10_000;
/** A service call without a caller's timeout ends after this long (§2: `timeout_ms` does not apply to services). */
export const serviceCallTimeoutMsDefault = 300_000;
/** Stopping a long-lived plugin: SIGTERM, then SIGKILL after this long (as the public implementation). */
export const stopGraceMs = 5000;
/** Waits before restarting a crashed service plugin, in order; the last repeats (as the public implementation). */
export const restartBackoffMs: readonly number[] = [1000, 2000, 5000, 10_000];
/** A service plugin that crashes more than this many times within `serviceCrashWindowMs` is given up on. */
export const serviceCrashMax = 3;
export const serviceCrashWindowMs = 60_000;
/** Tools of one MCP server's `tools/list`, pages read at most (each page holds up to `manifestToolsMax`). */
export const mcpListPagesMax = 16;

/**
 * A bind is looked through for sockets (issue 26 round 7, F14: a read-only bind reached a root daemon's socket) as deep
 * as it goes, reading at most this many entries; a bind holding more is refused, since a socket in what was not read
 * could not be ruled out (round 11, F7: a look that stopped at 3 levels or 5,000 entries answered "no socket"). About
 * 100 ms of reading at each start of the plugin; a plugin binds the folders it needs, not a whole tree of the system.
 */
export const bindSocketScanEntriesMax = 100_000;
/**
 * The sandbox root's look for sockets at each start of a sandboxed plugin (issue 26 round 12, F12-6; sandbox-root.ts
 * `socketsShown`): `/etc` and the installs on PATH outside the homes, at most this many entries in all (about 20 ms);
 * each socket found is covered. Past it the rest is shown unlooked (docs/plugins/tool-plugins.md says so).
 */
export const rootSocketScanEntriesMax = 20_000;
