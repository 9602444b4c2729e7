/**
 * The limits and patterns of a declarative plugin's shapes (issue 18), without the schema library: plugin-schemas.ts
 * builds the schemas from them, and the loader, the HTTP tools and the settings read them at run time (a starting hub
 * loads no TypeBox: tests/lean-start.test.ts).
 */

// Our choices: generous, finite; the README's "Limits and choices" lists them.
/** A plugin's `id` (its folder's name): lowercase letters, digits and `-`, 1 to this many characters. */
export const pluginIdMaxChars = 64;
/** An asset's name (a file name without extension), a setting's key, a step's, action's, form's or field's id. */
export const assetNameMaxChars = 64;
/** `name`, `version`, titles, labels, list items, option texts: one line of at most this many characters. */
export const pluginLineMaxChars = 200;
/** `description` and other free text of a manifest or asset, in characters. */
export const pluginTextMaxChars = 4000;
/** A `markdown` node's text or a workflow `prompt` step's template, in characters. */
export const pluginMarkdownMaxChars = 65_536;
/** Entries of `requires.network`. */
export const networkHostsMax = 100;
/** Names of one kind in `provides`. */
export const providedNamesMax = 200;
/** An HTTP tool's `url` template, in characters. */
export const httpUrlMaxChars = 4096;
/** Headers, and query parameters, of one HTTP tool. */
export const httpHeadersMax = 64;
/** One header value or query value template, in characters. */
export const httpValueMaxChars = 8192;
/** An HTTP tool's `timeoutMs` when it names none: 10 s (issue 18). */
export const httpTimeoutMsDefault = 10_000;
/** The longest `timeoutMs` an HTTP tool may ask for: 5 minutes. */
export const httpTimeoutMsMax = 300_000;
/** Steps of one workflow. */
export const workflowStepsMax = 100;
/** Intents of one `intents/*.json` file, and `includes_any` phrases of one intent. */
export const intentsMax = 100;
/** Fields of one form (or slots of one intent), options of one field or `hitl` step. */
export const formFieldsMax = 50;
/** Nodes of one list in a panel or card: `body`, `data`, a section's `children`; items of `list`, `kv`, `actions`. */
export const uiItemsMax = 200;
/** One value a `form` submits (issue 18: a panel's form in the console), in characters; all of them together fit an event's detail. */
export const formValueMaxChars = 4000;
/** Labels and values of one `chart-lite`. */
export const chartPointsMax = 200;
/** Settings one plugin declares. */
export const settingsMax = 100;

/** A plugin id: the folder's name (spec §2: 唯一；即目录名). */
export const pluginIdPattern = "^[a-z0-9][a-z0-9-]*$";
/** An asset's name, without extension: letters, digits, `_` and `-` (a `.` would split `<plugin>.<tool>`). */
export const assetNamePattern = "^[A-Za-z0-9_][A-Za-z0-9_-]*$";
/** A setting's key: letters, digits, `_`, `-` and `.` (`models.chat.apiKey`). */
export const settingKeyPattern = "^[A-Za-z0-9_][A-Za-z0-9_.-]*$";
/** An `id` inside an asset (a step, a form, an action, a field): letters, digits, `_` and `-`. */
export const localIdPattern = assetNamePattern;
/** `apiVersion`: `<major>.<minor>`. */
export const apiVersionPattern = "^(0|[1-9][0-9]{0,3})\\.(0|[1-9][0-9]{0,3})$";
/**
 * A `requires.network` entry: a host name (`api.example.com`), a wildcard of its subdomains (`*.example.com`), an IPv4
 * address or a bracketed IPv6 one, each with an optional `:port` (without one, any port).
 */
export const networkHostPattern = "^(\\*\\.)?([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*(:[0-9]{1,5})?$|^\\[[0-9A-Fa-f:.]+\\](:[0-9]{1,5})?$";
/** An HTTP header name (RFC 9110 token). */
export const headerNamePattern = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";
/** `authRef`: `env:NAME` (the tool host's environment) or a key of the plugin's own settings. */
export const authRefPattern = "^env:[A-Za-z_][A-Za-z0-9_]*$|^[A-Za-z0-9_][A-Za-z0-9_.-]*$";
/** `resultPath`: a dot path with array indexes (`data.items`, `data.items[0].name`), or empty for the whole body. */
export const resultPathPattern = "^$|^\\.?([A-Za-z0-9_$-]+|\\[[0-9]{1,9}\\])(\\.[A-Za-z0-9_$-]+|\\[[0-9]{1,9}\\])*$";
/** A workflow `artifact` file name: no folder, no `..` (defined with the artifacts' routes, src/kernel/text.ts). */
export { artifactFilePattern } from "../kernel/text.js";
/** A card template as a receipt's ask or notice names it (issue 18): `<plugin id>/<cards/ file name>`. */
export const cardTemplateRefPattern = "^[a-z0-9][a-z0-9-]{0,63}/[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$";
/** A tool as a workflow names it: `<pluginId>.<tool>`. */
export const qualifiedToolPattern = "^[A-Za-z0-9][A-Za-z0-9_-]*\\.[A-Za-z0-9_][A-Za-z0-9_.-]*$";
