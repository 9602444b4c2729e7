/**
 * Every limit of the declarative plugin host (spec declarative-plugins.md; issue 18), defined once with its unit in the
 * name. The spec names none: each value is our choice (generous for a hand-written plugin, finite) and the README's
 * "Limits and choices" lists the ones a plugin author meets. The limits of the shapes themselves (lengths, items) are
 * in src/protocol/plugin-schemas.ts, next to the schemas they bound.
 */

// ── loading ────────────────────────────────────────────────────────────────────────────────────────────────────
/** One file of a plugin (plugin.json, an asset, settings.json, a prompt): larger is refused unread. */
export const pluginFileMaxBytes = 256 * 1024;
/** All files one plugin's assets and manifest hold together. */
export const pluginTotalMaxBytes = 8 * 1024 * 1024;
/** Objects and arrays inside one another in one JSON file (the file's own brackets count). */
export const pluginJsonDepthMax = 32;
/** Names one plugin's `provides` holds, all kinds together (tools, workflows, …, setting keys). */
export const pluginAssetsMax = 256;
/**
 * Entries one plugin folder, or one of its asset folders, may hold: a folder with more is refused unread, its entries
 * never looked at one by one (by a reload or the watcher), so a folder of a million files cannot hold the hub up.
 * More can never be valid anyway: `provides` names at most `pluginAssetsMax` assets.
 */
export const pluginFolderEntriesMax = 512;
/** Declarative plugin folders read over all roots; the rest are reported, not read. */
export const declarativePluginsMax = 1000;
/** Errors reported for one refused plugin; more are counted in one last line. */
export const pluginErrorsMax = 100;
/**
 * A reload (or the watcher's look) gives the event loop back whenever it has run this long without a break, checked
 * after each file: other requests wait at most about this long plus the reading of one file (issue 18).
 */
export const reloadSliceMaxMs = 20;
/** Tools that were offered once and are gone, remembered for the stable "definition missing" error. */
export const goneToolsMax = 10_000;

// ── HTTP tools (§3.1) ──────────────────────────────────────────────────────────────────────────────────────────
export { httpTimeoutMsDefault, httpTimeoutMsMax } from "../protocol/plugin-limits.js";
/** The body of one HTTP tool's answer: more ends the call with a tool error. */
export const httpResponseMaxBytes = 4 * 1024 * 1024;
/** The JSON body one HTTP tool sends, after its placeholders are filled in. */
export const httpRequestBodyMaxBytes = 1024 * 1024;
/** Redirects one call follows (each to a declared host only). */
export const httpRedirectsMax = 5;
/** The excerpt of a non-2xx answer's body in the tool error, in characters. */
export const httpErrorExcerptMaxChars = 500;
