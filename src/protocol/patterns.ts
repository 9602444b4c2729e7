/**
 * Patterns of the protocol that code outside the schema also matches with (the hub's path ids, the worker's session
 * links), kept free of TypeBox so that a module using one does not load the schema library (a starting hub or worker
 * loads none: README "Measurements"; tests/lean-start.test.ts).
 */
import { toolCallbackKeyChars, toolNameMaxChars, toolPluginNameMaxChars, toolTaskIdMaxChars, toolTaskIdMinChars } from "../kernel/limits.js";

/** A link an agent reports for its session: an ASCII URL of any scheme but javascript/data, no spaces. */
export const sessionLinkPattern = "^(?![jJ][aA][vV][aA][sS][cC][rR][iI][pP][tT]:|[dD][aA][tT][aA]:)[A-Za-z][A-Za-z0-9+.-]*:[!-~]+$";

/** A run or card id: 1 to 15 digits, no leading zero (a safe integer). */
export const idPattern = "^[1-9]\\d{0,14}$";

/**
 * An async tool call's task id (issue 16): URL-safe characters only, since it travels in
 * `/v1/plugins/callback/<key>/<task_id>`; any length from 1 (issue 34: the key is the credential).
 */
export const taskIdPattern = `^[A-Za-z0-9._~-]{${toolTaskIdMinChars},${toolTaskIdMaxChars}}$`;

/** The key of a call's `callback_url` (issue 34): base64url, `toolCallbackKeyChars` characters. */
export const callbackKeyPattern = `^[A-Za-z0-9_-]{${toolCallbackKeyChars}}$`;

/** A tool as calls name it (issue 16): `<plugin>.<tool>`, by the names manifests and rules.json allow. */
export const qualifiedToolPattern = `^[A-Za-z0-9][A-Za-z0-9_-]{0,${toolPluginNameMaxChars - 1}}\\.[A-Za-z0-9_][A-Za-z0-9_.-]{0,${toolNameMaxChars - 1}}$`;

/** A SHA-256 digest in hex, as manifests' digests are written. */
export const sha256HexPattern = "^[0-9a-f]{64}$";

/**
 * The kinds of tool plugins, a manifest's `plugin_type` (spec tool-plugins.md §1, and `mcp`: issue 16): the contract's
 * list. Each has its runner in the tool host's one table (src/tools/runners.ts), which the compiler holds to this list.
 */
export const toolPluginTypes = ["sync", "async", "service", "mcp"] as const;
export type ToolPluginType = (typeof toolPluginTypes)[number];
