/**
 * The real agent CLIs for tests (issue 5): where `npm run agents:install` put them (tests/agent-clis), and the
 * settings that point each at the fake model server (tests/fake-model.ts) with no other network use, as observed
 * in ../shared/research/agent-clis (Claude Code 2.1.332, Codex 0.171.0, claude-agent-acp 0.49.0).
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { engine } from "./helpers.js";

/** The folder of the pinned CLIs' executables. */
export const agentBin = join(engine, "tests", "agent-clis", "node_modules", ".bin");

/**
 * Why the real-CLI tests cannot run here, or null when they can. CI sets AGENT_AUTOLOOP_REQUIRE_AGENT_CLIS=1,
 * which turns a missing CLI into a failure instead of a skip.
 */
export function agentsMissing(names: string[]): string | null {
  const missing = names.filter((n) => !existsSync(join(agentBin, n)));
  if (missing.length === 0) return null;
  const why = `${missing.join(", ")} not installed: run \`npm run agents:install\``;
  if (process.env.AGENT_AUTOLOOP_REQUIRE_AGENT_CLIS === "1") throw new Error(why);
  return why;
}

/**
 * The environment that makes agents reach only the fake model: an isolated HOME (Claude Code keeps sessions in
 * $HOME/.claude), the Anthropic base URL and a dummy key, Claude Code's switches against vendor traffic and
 * retries, IS_SANDBOX=1 (bypassPermissions is refused to root without it), and a CODEX_HOME whose config.toml names
 * the fake provider, with TMPDIR outside it (Codex's sandbox fails when TMPDIR lies inside a CODEX_HOME under
 * /tmp). The CLIs' folder goes first on PATH. Creates the folders and Codex's config.
 * @param dir a fresh temporary folder for HOME, CODEX_HOME and TMPDIR.
 */
export function agentEnv(modelUrl: string, dir: string): Record<string, string> {
  const home = join(dir, "home");
  const codexHome = join(dir, "codex-home");
  const tmp = join(dir, "tmp");
  for (const d of [home, codexHome, tmp]) mkdirSync(d, { recursive: true });
  writeFileSync(join(codexHome, "config.toml"), [
    `model = "gpt-5.5"`,
    `model_provider = "fake"`,
    `[model_providers.fake]`,
    `name = "fake"`,
    `base_url = "${modelUrl}/v1"`,
    `env_key = "OPENAI_API_KEY"`,
    `wire_api = "responses"`,
    `request_max_retries = 0`,
    `stream_max_retries = 0`,
    `[analytics]`,
    `enabled = false`,
    `[features]`,
    `plugins = false`,
    `remote_plugin = false`,
    `apps = false`,
    ``,
  ].join("\n"));
  return {
    PATH: `${agentBin}:${process.env.PATH}`,
    HOME: home,
    TMPDIR: tmp,
    ANTHROPIC_BASE_URL: modelUrl,
    ANTHROPIC_API_KEY: "sk-ant-fake-key",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    CLAUDE_CODE_MAX_RETRIES: "0",
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    IS_SANDBOX: "1",
    CODEX_HOME: codexHome,
    OPENAI_API_KEY: "sk-fake-key",
  };
}

/** Sets this test process's environment to `agentEnv(modelUrl, dir)`, for agents launched by an in-process worker. */
export function pointAgentsAt(modelUrl: string, dir: string): void {
  Object.assign(process.env, agentEnv(modelUrl, dir));
}
