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
