/**
 * The environment of an agent process (DESIGN.md 安全): an allowlist. Hub keys, tokens and unrelated secrets never
 * reach the agent. Every agent gets the base names below; an agent plugin adds the variables of its own CLI
 * (`AgentPlugin.passEnv`: Claude Code's `ANTHROPIC_*`, Codex's `OPENAI_*`, …), and the agent's rules.json `env` adds
 * what the owner grants that agent alone (`GH_TOKEN`, `GIT_*`, `SSH_AUTH_SOCK`, …). README "Agents" lists the same.
 */

/** What every agent gets, by exact name: finding programs, the user and locale, temporary folders, proxies, CAs. */
export const baseEnvNames: readonly string[] = [
  "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_*", "TERM", "TZ", "TMPDIR", "TEMP", "TMP",
  "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "DISPLAY", "WAYLAND_DISPLAY",
  "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy",
  "https_proxy", "no_proxy", "SYSTEMROOT", "COMSPEC", "PATHEXT", "APPDATA", "LOCALAPPDATA", "USERPROFILE",
];

/** Never passed, whatever a list says: the worker's and the hub's own variables. */
const deniedPrefix = "AGENT_AUTOLOOP_";

/**
 * Whether variable `name` is one of `names` (exact names, or prefixes written `PREFIX_*`). On Windows, whose variable
 * names have no case (`Path`, `SystemRoot`, `ComSpec` are PATH, SYSTEMROOT, COMSPEC), names and prefixes are compared
 * without regard to case, the denied prefix too.
 */
export function envNameAllowed(name: string, names: readonly string[], platform: NodeJS.Platform = process.platform): boolean {
  const fold = platform === "win32" ? (s: string) => s.toUpperCase() : (s: string) => s;
  const n = fold(name);
  if (n.startsWith(fold(deniedPrefix))) return false;
  return names.some((w) => (w.endsWith("*") ? n.startsWith(fold(w.slice(0, -1))) : n === fold(w)));
}

/**
 * The child environment: the variables of `parent` that `baseEnvNames` or `allow` name, plus `extra` (which wins: a
 * plugin's own values and the worker's AGENT_AUTOLOOP_CONTEXT / AGENT_AUTOLOOP_RUN).
 * @param allow names and `PREFIX_*` prefixes from the agent's plugin (`passEnv`) and its rules.json `env`.
 * @param platform names are matched without regard to case on win32 (`envNameAllowed`), exactly elsewhere.
 */
export function childEnv(parent: NodeJS.ProcessEnv, allow: readonly string[], extra: Record<string, string>, platform: NodeJS.Platform = process.platform): Record<string, string> {
  const names = [...baseEnvNames, ...allow];
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(parent)) if (v !== undefined && envNameAllowed(k, names, platform)) out[k] = v;
  return { ...out, ...extra };
}
