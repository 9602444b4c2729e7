/**
 * How names of rules.json become names elsewhere. Its own module, with no imports, so that the home's files can be
 * read without loading the rules parser (the CLI's start-up time: src/cli/main.ts).
 */

/**
 * A source or channel name as it appears in a secrets.env variable: upper case, every character other than `A-Z` and
 * `0-9` (such as `-`) turned into `_` (protocol.md 来源: AGENT_AUTOLOOP_SECRET_<来源>).
 */
export function secretsEnvName(name: string): string {
  return name.toUpperCase().replace(/[^A-Z0-9]/g, "_");
}

/** The secrets.env variable that holds a channel's secret: `AGENT_AUTOLOOP_CHANNEL_SECRET_<NAME>` (protocol.md 通道). */
export function channelSecretVariable(name: string): string {
  return `AGENT_AUTOLOOP_CHANNEL_SECRET_${secretsEnvName(name)}`;
}

/** Names of sources, agents, channels, workers: what a key name and a URL segment can carry. */
export const namePattern = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;
/** An environment variable name an agent may get, or a prefix of names written `PREFIX_*` (rules.json `env`). */
export const agentEnvNamePattern = /^[A-Za-z_][A-Za-z0-9_]{0,99}$|^[A-Za-z][A-Za-z0-9_]{0,98}_\*$/;
/** A tool plugin's name (spec tool-plugins.md §2): letters, digits, `_` and `-` (a `.` would split `<plugin>.<tool>`). */
export const toolPluginNamePattern = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
/** A tool's name within its plugin: letters, digits, `_`, `-` and `.` (as MCP tool names). */
export const toolNamePattern = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
/** A declarative plugin's asset: `<plugin>/<name>`, both parts letters, digits, `_` and `-` (issue 18). */
export const assetRefPattern = /^[A-Za-z0-9][A-Za-z0-9_-]{0,99}\/[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$/;
/** An agent's or source's `use`/`adapter`: a code plugin's folder name. */
export const codePluginNamePattern = /^[a-z0-9-]+$/;
