/**
 * Where the agent CLIs this project runs keep their state, and which parts of it steer them (issue 26 round 10,
 * Medium 6): the built-in `claude`, `codex` and `acp` plugins declare these as their `AgentPlugin.state`.
 *
 * The state folder stays writable in the agent sandbox (sessions, history, logs, caches, refreshed credentials), but
 * the parts the CLI reads as settings or code — settings with hooks and MCP server lists, memory files, its own
 * agents, commands, skills and plugins folders — are read-only there, and made when missing so that no run can
 * create them: a sandboxed run without secrets wrote `SessionStart` hooks into Claude Code's `settings.json`, and the
 * next run of another rule, given GH_TOKEN, ran them. Observed with Claude Code 2.1.332 and Codex 0.171.0: both run
 * and resume sessions with these read-only (Claude Code's write of `.claude.json` and of `plugins/store` then fails
 * quietly, as it already did for `~/.claude.json` in the read-only home).
 */
import { join } from "node:path";
import type { AgentState } from "./agent.js";

/**
 * What Claude Code reads as settings or code in its config folder (`CLAUDE_CONFIG_DIR`, else `~/.claude`): its
 * settings (hooks, `statusLine`, `apiKeyHelper`, permissions, `env`), its memory `CLAUDE.md`, its agents, commands,
 * skills, output styles, rules, workflows and plugins (each can run commands or load code), `backups/`, from
 * which it restores an empty or broken `.claude.json` (which lists MCP servers), and `ide/`, whose lock files tell it
 * which IDE's MCP server to connect to (issue 26 round 11, attempt 15: a run planted one; IDE extensions write them
 * outside the sandbox); and `jobs/`, `daemon/` and `rm-guard/`, whose files its own safety texts say it runs (a script
 * in `rm-guard/` runs in place of `rm`; issue 26 round 12 follow-up: a run could make them, being missing). A name
 * ending in `/` is a folder
 * (`path.join` keeps the `/`).
 */
export const claudeCodeSteering = [
  "settings.json", "settings.local.json", "CLAUDE.md", "CLAUDE.local.md",
  "hooks/", "agents/", "commands/", "skills/", "output-styles/", "rules/", "workflows/", "plugins/", "backups/", "ide/",
  "jobs/", "daemon/", "rm-guard/",
  // What 2.1.332 keeps from its own sandboxed commands' writes besides (issue 26 round 27, F27a-5): remote and managed
  // settings with their consents, its state, shares, teams, agent memory, key bindings, themes, its local install.
  "remote-settings.json", "remote-settings.signature.json", "remote-settings-consent.json", "remote-settings-helper-consent",
  "seed-admin", "access-audit/", "state/", "mcp-discovery-cache/", "shares/", "mcp-skill-archives/", "teams/", "agent-memory/",
  "loop.md", "keybindings.json", "themes/", "local/",
] as const;

/**
 * What Codex reads as settings or code in `CODEX_HOME` (else `~/.codex`): `config.toml` (`notify`, `mcp_servers`,
 * profiles, model providers), the managed and required settings, `hooks.json`, `.env` (variables it loads at every
 * start: a run made one with `BASH_ENV=` that every later Codex command sourced — issue 26 round 13, F13-2), its
 * instructions `AGENTS.md` and
 * `AGENTS.override.md`, its command rules, prompts, skills, plugins and memories.
 */
export const codexSteering = [
  "config.toml", "managed_config.toml", "requirements.toml", "hooks.json", "AGENTS.md", "AGENTS.override.md", ".env",
  "rules/", "prompts/", "skills/", "plugins/", "memories/",
] as const;

/**
 * What Claude Code writes at the top of its config folder (`AgentState.writes`; issue 26 round 12, F12-3): seen with
 * 2.1.332 in print mode — its sessions (`projects/`, `sessions/`, `session-env/`), shell snapshots — and what its
 * interactive use keeps there (todos, tasks, plans, file history, debug logs, caches, statistics, the prompt history,
 * refreshed OAuth credentials `.credentials.json`, `.claude.json`'s temporary files). Every other entry, an owner's
 * `scripts/` among them, is read-only in the sandbox.
 */
export const claudeCodeWrites = [
  "projects/", "sessions/", "session-env/", "shell-snapshots/", "debug/",
  "logs/", "paste-cache/", "image-cache/", "telemetry/", "usage-data/",
  "history.jsonl", "stats-cache.json", ".credentials.json", ".claude.json.tmp.*",
  // Markers of its periodic clean-up: `.last-cleanup` written by a real run with a tool plugin (a full run's notice
  // named it, state-planted.ts); `.last-complete-round` beside it in the 2.1.332 binary.
  ".last-cleanup", ".last-complete-round",
] as const;

/**
 * What Codex writes at the top of `CODEX_HOME` (`AgentState.writes`; F12-3): seen with 0.171.0 — its sessions, shell
 * snapshots, `tmp/`, the thread locks, its SQLite stores (`state_5.sqlite`, `logs_2.sqlite`, … with their `-wal` and
 * `-shm`), `installation_id`, `.sandbox_migration` — and what it keeps there otherwise (archived sessions, `log/`, the
 * prompt history, refreshed credentials `auth.json`, its caches and version check). Every other entry, an owner's
 * `mcp/` or `tools/` among them, is read-only in the sandbox.
 */
export const codexWrites = [
  "sessions/", "archived_sessions/", "shell_snapshots/", "tmp/", "thread-writer-locks/", "log/", "cache/",
  "history.jsonl", "auth.json", "installation_id", "version.json", "models_cache.json", "internal_storage.json",
  ".sandbox_migration", ".personality_migration", "*.sqlite", "*.sqlite-wal", "*.sqlite-shm", "*.sqlite-journal",
] as const;

/**
 * What Claude Code writes in its config folder and runs in the same run (`AgentState.private`; issue 26 round 12,
 * F12-4), seen with 2.1.332: `shell-snapshots/snapshot-bash-<ms>-<random>.sh`, made at start and sourced before every
 * Bash tool command, removed at exit; `session-env/<session>/`, whose scripts (the `CLAUDE_ENV_FILE` of hooks) it
 * sources before Bash commands — a `sessionstart-hook-0.sh` one run left in another rule's session folder was sourced,
 * with that rule's GH_TOKEN, when that session was resumed. A resumed session makes a new snapshot and runs its
 * SessionStart hooks again: it needs nothing there from an earlier run. Also what it writes and reads back as trusted,
 * which its own sandbox keeps its commands from writing (round 27, F27a-5): `file-history/` (the checkpoints `/rewind`
 * writes back into your project: a run rewrote one of an owner's session to `curl … | sh`), `todos/`, `tasks/` and
 * `plans/` (task lists and plans your sessions read back; round 28, F28a-3), `statsig/` (its feature flags), `cache/`
 * (the model catalog): a run gets empty ones of its own, and yours stay as they are.
 */
export const claudeCodePrivate = ["shell-snapshots/", "session-env/", "file-history/", "todos/", "tasks/", "plans/", "statsig/", "cache/"] as const;

/**
 * What Codex writes in `CODEX_HOME` and runs in the same run (`AgentState.private`; F12-4), seen with 0.171.0:
 * `shell_snapshots/<thread>.<ns>.sh`, sourced before each command, and `tmp/arg0-linux/codex-arg0<random>/` with
 * `apply_patch` and `codex-linux-sandbox` (links to its own program it runs through), both removed at exit. `exec
 * resume` makes them anew.
 */
export const codexPrivate = ["shell_snapshots/", "tmp/"] as const;

/**
 * Where Claude Code keeps its auto memory in its config folder (`AgentState.memory`; issue 26 round 13, F13-5):
 * `projects/<cwd, each other character a '-'>/memory/` (`MEMORY.md` and the topic files it names). Runs do not read it
 * (`claudeLaunchEnv`), but the owner's own Claude Code does, into its prompt; `projects/` holds the sessions, so it
 * stays writable, and what a run leaves there is moved aside after it.
 */
export const claudeCodeMemory = ["projects/*/memory/"] as const;

/**
 * Claude Code's state: `CLAUDE_CONFIG_DIR` (its `.claude.json` inside), else `~/.claude` and `~/.claude.json`; the
 * `.claude.json` file and `claudeCodeSteering` read-only, and all but `claudeCodeWrites`; `claudeCodePrivate` the run's own; `claudeCodeMemory` checked after each run. 2.1.332 replaces `.claude.json` through a temporary file
 * beside it, which fails quietly where it is read-only, and print mode works on.
 */
export function claudeCodeState(env: Readonly<Record<string, string>>): AgentState {
  const dir = env.CLAUDE_CONFIG_DIR || "~/.claude";
  const config = env.CLAUDE_CONFIG_DIR ? join(dir, ".claude.json") : "~/.claude.json";
  return { folders: [dir], readOnly: [config, ...claudeCodeSteering.map((p) => join(dir, p))], writes: [...claudeCodeWrites], private: [...claudeCodePrivate], memory: [...claudeCodeMemory] };
}

/**
 * What every launch of Claude Code gets in its environment (issue 26 round 10): auto memory off. Claude Code 2.1.332
 * reads `<config>/projects/<cwd>/memory/MEMORY.md` into its prompt, and any of its runs may write there, for any cwd
 * (`projects/` holds the sessions, so it stays writable): a run of another rule would follow what one wrote.
 */
export const claudeLaunchEnv: Readonly<Record<string, string>> = { CLAUDE_CODE_DISABLE_AUTO_MEMORY: "1" };

/**
 * Codex's state: `CODEX_HOME`, else `~/.codex` (0.171.0 writes nothing else but TMPDIR); `codexSteering` read-only,
 * and all but `codexWrites`; `codexPrivate` the run's own.
 */
export function codexState(env: Readonly<Record<string, string>>): AgentState {
  const dir = env.CODEX_HOME || "~/.codex";
  return { folders: [dir], readOnly: codexSteering.map((p) => join(dir, p)), writes: [...codexWrites], private: [...codexPrivate] };
}
