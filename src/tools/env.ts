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
import { createHash } from "node:crypto";
import { starMatch } from "../kernel/rules.js";
import type { Manifest } from "./types.js";

/**
 * The environment of the programs that build a plugin's sandbox (bubblewrap, and the shell that joins its cgroup):
 * the caller's `PATH`, `LANG` and `TZ` alone (issue 26 round 5, F7). Never the plugin's: a manifest's `LD_PRELOAD`,
 * `LD_LIBRARY_PATH`, `GCONV_PATH` or the like given to bwrap ran the plugin's library in bwrap, outside the sandbox,
 * as the hub's user; the plugin's environment is set inside the sandbox only (`sandboxEnvArgs`).
 */
export function launcherEnv(parent: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of ["PATH", "LANG", "TZ"]) if (parent[n] !== undefined) out[n] = parent[n]!;
  return out;
}

/**
 * bwrap arguments that give the sandboxed program `env` and nothing else (`--clearenv`, then `--setenv` each), as the
 * NUL-separated text bwrap's `--args <fd>` reads: never on the command line, which every user of the computer can
 * read in /proc (an MCP plugin's pass-through variables may hold tokens). @returns null when a name or value holds a
 * NUL (it would split into arguments of bwrap's own) or a name is empty or holds `=`.
 */
export function sandboxEnvArgs(env: Record<string, string>): Buffer | null {
  const parts = ["--clearenv"];
  for (const [k, v] of Object.entries(env)) {
    if (k === "" || k.includes("=") || k.includes("\0") || v.includes("\0")) return null;
    parts.push("--setenv", k, v);
  }
  return Buffer.from(parts.map((p) => p + "\0").join(""), "utf8");
}

/** Variables every plugin gets from the caller's environment, when set. */
export const pluginEnvNames = ["PATH", "HOME", "LANG", "TZ"] as const;
/** Never passed through, whatever a manifest's pass-through lists. */
const deniedPrefixes = ["AGENT_AUTOLOOP_"];
/** Never passed through from the caller: its module search paths (issue 26). */
const deniedNames = new Set(["NODE_PATH"]);
/**
 * Set on every plugin process, after the manifest's own variables: no user site-packages (issue 26), and no compiled
 * Python from the plugin's folder — a shipped `__pycache__/*.pyc` compiled unchecked ran instead of the `.py` the owner
 * read (hostile round 43, F43b-5). Python looks for its cache under a prefix no one can make (below `/dev/null`) and
 * writes none, so every start compiles the sources it imports. tsx in a plugin keeps no compile cache either: its
 * cache folder, `/tmp/tsx-<uid>`, can be made first by another local user, who then wrote what a trusted plugin ran
 * (hostile round 44, F44a-4).
 */
export const pluginFixedEnv: Readonly<Record<string, string>> = {
  PYTHONNOUSERSITE: "1", PYTHONDONTWRITEBYTECODE: "1", PYTHONPYCACHEPREFIX: "/dev/null/agent-autoloop-pycache", TSX_DISABLE_CACHE: "1",
};

/**
 * The environment for a process of `manifest`'s plugin.
 * @param parent the caller's environment (only allowlisted names are read from it)
 * @param host variables the host sets (e.g. `CORLINMAN_PLUGIN_ADDR`); `entry_point.env` may override them (as the
 *   public implementation's supervisor does)
 */
export function pluginEnv(parent: NodeJS.ProcessEnv, manifest: Manifest, host: Record<string, string> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of pluginEnvNames) if (parent[n] !== undefined) out[n] = parent[n]!;
  return { ...out, ...passedEnv(parent, manifest), ...host, ...manifest.entry_point.env, ...pluginFixedEnv };
}

/**
 * The names `manifest` asks to take from the hub's environment beyond the base list (issue 26 round 10): its `[mcp]
 * env_passthrough.allow` minus its `deny` globs and the names never passed, in the manifest's order, each once. These
 * are what `plugins inspect` and the doctor tell the owner of; whichever is set where the plugin runs is passed.
 */
export function passedEnvNames(manifest: Manifest): string[] {
  const pass = manifest.mcp?.env_passthrough;
  if (!pass) return [];
  const names = pass.allow.filter((n) => !pass.deny.some((g) => starMatch(g, n)) && !deniedNames.has(n) && !deniedPrefixes.some((p) => n.startsWith(p)));
  return [...new Set(names)].filter((n) => !(pluginEnvNames as readonly string[]).includes(n));
}

/**
 * The variables of `parent` (the hub's, or its worker's, environment) that `manifest`'s plugin is given beyond the base
 * list: `passedEnvNames` that are set. Their names go on the first-use approval card and into the digest the hub's
 * trust is bound to; their values are secrets of every run that may call the plugin (issue 26 round 10: a sandboxed
 * MCP plugin listed serve's GH_TOKEN and handed it to an agent whose rule gives none, unredacted in its summary).
 */
export function passedEnv(parent: NodeJS.ProcessEnv, manifest: Manifest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of passedEnvNames(manifest)) if (parent[n] !== undefined) out[n] = parent[n]!;
  return out;
}

/**
 * The digest a call's approval is bound to (64 hex): the plugin's files digest alone when it takes nothing of the hub's
 * environment, else that digest with the names it takes (`passedEnv`, sorted): a variable newly set where the plugin
 * runs is a change of the plugin, asked again like a changed file (issue 26 round 10).
 */
export function envBoundDigest(filesDigest: string, names: readonly string[]): string {
  if (names.length === 0) return filesDigest;
  return createHash("sha256").update(`${filesDigest}\0env:${[...names].sort().join(",")}`, "utf8").digest("hex");
}
