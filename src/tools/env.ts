/**
 * The environment of a plugin process: an allowlist (issue 16). From the caller's environment only `PATH`, `HOME`,
 * `LANG` and `TZ` pass, plus, for an MCP plugin, the names its `[mcp] env_passthrough.allow` lists minus those matching
 * its `deny` globs; then the manifest's `entry_point.env` and the host's own variables (the service socket). Never the
 * hub's keys (`AGENT_AUTOLOOP_*`), whatever a manifest lists.
 */
// A linear match, the same as rules.json's patterns: a manifest's many-star glob must not stall the host (a regular
// expression of .* runs backtracks exponentially).
import { starMatch } from "../kernel/rules.js";
import type { Manifest } from "./types.js";

/** Variables every plugin gets from the caller's environment, when set. */
export const pluginEnvNames = ["PATH", "HOME", "LANG", "TZ"] as const;
/** Never passed through, whatever a manifest's pass-through lists. */
const deniedPrefixes = ["AGENT_AUTOLOOP_"];

/**
 * The environment for a process of `manifest`'s plugin.
 * @param parent the caller's environment (only allowlisted names are read from it)
 * @param host variables the host sets (e.g. `CORLINMAN_PLUGIN_ADDR`); `entry_point.env` may override them (as the
 *   public implementation's supervisor does)
 */
export function pluginEnv(parent: NodeJS.ProcessEnv, manifest: Manifest, host: Record<string, string> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  const take = (name: string) => {
    const v = parent[name];
    if (v !== undefined && !deniedPrefixes.some((p) => name.startsWith(p))) out[name] = v;
  };
  for (const n of pluginEnvNames) take(n);
  const pass = manifest.mcp?.env_passthrough;
  if (pass) for (const n of pass.allow) if (!pass.deny.some((g) => starMatch(g, n))) take(n);
  return { ...out, ...host, ...manifest.entry_point.env };
}
