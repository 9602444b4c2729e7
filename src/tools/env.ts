/**
 * The environment of a plugin process: an allowlist (issue 16). From the caller's environment only `PATH`, `HOME`,
 * `LANG` and `TZ` pass, plus, for an MCP plugin, the names its `[mcp] env_passthrough.allow` lists minus those matching
 * its `deny` globs; then the manifest's `entry_point.env` and the host's own variables (the service socket). Never the
 * hub's keys (`AGENT_AUTOLOOP_*`), whatever a manifest lists.
 *
 * Interpreters start without the user's own module paths (issue 26, finding 2): a plugin without `[sandbox]` runs as
 * the hub's user, and whatever sits in that user's site-packages would run with the hub's rights at every call.
 * `PYTHONNOUSERSITE=1` is set last (a manifest cannot undo it), and the caller's `NODE_PATH` never passes (a
 * manifest's own `entry_point.env` may still name the plugin's folders).
 */
// A linear match, the same as rules.json's patterns: a manifest's many-star glob must not stall the host (a regular
// expression of .* runs backtracks exponentially).
import { starMatch } from "../kernel/rules.js";
import type { Manifest } from "./types.js";

/** Variables every plugin gets from the caller's environment, when set. */
export const pluginEnvNames = ["PATH", "HOME", "LANG", "TZ"] as const;
/** Never passed through, whatever a manifest's pass-through lists. */
const deniedPrefixes = ["AGENT_AUTOLOOP_"];
/** Never passed through from the caller: its module search paths (issue 26). */
const deniedNames = new Set(["NODE_PATH"]);
/** Set on every plugin process, after the manifest's own variables: no user site-packages (issue 26). */
export const pluginFixedEnv: Readonly<Record<string, string>> = { PYTHONNOUSERSITE: "1" };

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
    if (v !== undefined && !deniedNames.has(name) && !deniedPrefixes.some((p) => name.startsWith(p))) out[name] = v;
  };
  for (const n of pluginEnvNames) take(n);
  const pass = manifest.mcp?.env_passthrough;
  if (pass) for (const n of pass.allow) if (!pass.deny.some((g) => starMatch(g, n))) take(n);
  return { ...out, ...host, ...manifest.entry_point.env, ...pluginFixedEnv };
}
