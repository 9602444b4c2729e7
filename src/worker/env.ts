/**
 * The environment of an agent process (DESIGN.md 安全): an allowlist. Hub keys, tokens and unrelated
 * secrets never reach the agent; only what a CLI needs to run and find its own credentials does.
 */

/** Variables passed through by exact name. */
const allowedNames = new Set([
  "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TZ", "TMPDIR", "TEMP", "TMP",
  "DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME",
  "SSH_AUTH_SOCK", "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
  "http_proxy", "https_proxy", "no_proxy", "IS_SANDBOX", "SYSTEMROOT", "COMSPEC", "PATHEXT", "APPDATA", "LOCALAPPDATA", "USERPROFILE",
]);
/** Variables passed through by prefix: locales and the agent CLIs' own settings and credentials. */
const allowedPrefixes = ["LC_", "ANTHROPIC_", "CLAUDE_", "CODEX_", "OPENAI_", "DEEPSEEK_", "DSH_", "DISABLE_", "GIT_", "GH_"];
/** Never passed, whatever the lists say. */
const deniedPrefixes = ["AGENT_AUTOLOOP_"];

/**
 * The child environment: the allowlisted part of `parent`, plus `extra` (which wins).
 * @param allow extra names the owner allowed in config.json (`worker.env`).
 */
export function childEnv(parent: NodeJS.ProcessEnv, extra: Record<string, string>, allow: string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(parent)) {
    if (v === undefined || deniedPrefixes.some((p) => k.startsWith(p))) continue;
    if (allowedNames.has(k) || allow.includes(k) || allowedPrefixes.some((p) => k.startsWith(p))) out[k] = v;
  }
  return { ...out, ...extra };
}
