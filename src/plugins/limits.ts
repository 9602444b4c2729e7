/**
 * The bounds of the common plugin layer (issue 27, point 1): how many plugin folders a root may hold, how much of a
 * plugin's folder is digested and watched, how often the one watcher looks. Each a named constant with its unit.
 */

/** Plugin folders read from one root; more are reported, not read. */
export const pluginFoldersMax = 1000;
/** Files (and links, folders, other entries) a plugin's folder may hold, `.git` left out; more refuse the plugin. */
export { toolCallFilesMax as pluginFilesMax } from "../kernel/limits.js";
/** A path inside a plugin's folder, at most this many characters; a longer one refuses the plugin. */
export { toolCallFilePathMaxChars as pluginFilePathMaxChars } from "../kernel/limits.js";
/** Bytes of all a plugin's files together, `.git` left out; more refuse the plugin (each byte is hashed). */
export const pluginFilesMaxBytes = 64 * 1024 * 1024;
/** Folders inside one another in a plugin's folder, at most. */
export const pluginFolderDepthMax = 32;
/** File hashes a digest cache keeps (by inode, size and times) so that a rescan hashes only changed files. */
export const fileHashCacheEntriesMax = 20_000;
/** The watcher's poll looks at every plugin folder this often (ms): a change shows within 2 s (issues 16, 18). */
export const watchPollMs = 500;
/** File events closer together than this cause one look (ms). */
export const watchDebounceMs = 100;
/**
 * A change is loaded once the folders held still this long (ms): two looks this far apart saw the same names, sizes and
 * times, so a file an editor is still writing is not read half-written.
 */
export const watchSettleMs = 200;
/** Last good versions a home keeps (one per plugin folder and kind); beyond, the oldest are forgotten. */
export const lastGoodEntriesMax = 2000;
/** A last good version's file, in bytes: a larger one is not kept (a declarative plugin is at most 8 MiB of files). */
export const lastGoodFileMaxBytes = 16 * 1024 * 1024;
