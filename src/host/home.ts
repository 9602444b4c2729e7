/**
 * The home directory (`AGENT_AUTOLOOP_HOME`, default `~/.agent-autoloop`): rules.json, config.json,
 * secrets.env, master.key, the database, plugins/ and worker/ (DESIGN.md 接口). `init` creates it once.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { randomBytes } from "node:crypto";
import { writeFileDurable } from "../worker/files.js";
import { engineDir, type Home } from "../common/paths.js";
import { t, type Lang } from "../i18n/messages.js";
import { parseConfig } from "../protocol/config-file.js";
import type { ConfigFile } from "../protocol/config-schema.js";

export interface WorkerConfig { name: string; key: string; capacity: number }
export interface ChannelConfig { use: string; key: string; [option: string]: unknown }
/** config.json (issue 2): where the hub listens and the keys of the parts `serve` runs in its process. */
export interface Config {
  listen: string;
  publicUrl: string | null;
  owner: string;
  worker: WorkerConfig | null;
  channels: Record<string, ChannelConfig>;
}

/** The home's paths and the engine's folder live in src/common (the worker uses them too); re-exported for the host. */
export { engineDir, homePaths, type Home } from "../common/paths.js";

/** A new random access key: 32 random bytes, base64url (43 characters). */
export function newKey(): string {
  return randomBytes(32).toString("base64url");
}

/** Writes a file atomically and durably with the given mode (a temporary file, fsync, rename, fsync of the folder). */
export function writeFileAtomic(path: string, content: string | Buffer, mode = 0o600): void {
  writeFileDurable(path, content, mode);
}

/**
 * Reads config.json, checked against its published schema (protocol/config.schema.json; src/protocol/config-file.ts).
 * @throws Error `<file>:<line>:<column>: <what is wrong, naming the field>` in `lang` (default English: the CLI shows
 * it in its user's language), or `<file>: <why>` when the file cannot be read.
 */
export function readConfig(home: Home, lang: Lang = "en"): Config {
  let text: string;
  try {
    text = readFileSync(home.config, "utf8");
  } catch (e) {
    throw new Error(`${home.config}: ${(e as Error).message}`);
  }
  const parsed = parseConfig(text, lang);
  if (!parsed.ok) throw new Error(`${home.config}:${parsed.line}:${parsed.column}: ${parsed.error}`);
  // The schema held: JSON.parse gives the same value with ordinary objects.
  const c = JSON.parse(text) as ConfigFile;
  const worker = c.worker ? { name: c.worker.name, key: c.worker.key, capacity: c.worker.capacity ?? 2 } : null;
  return { listen: c.listen, publicUrl: c.publicUrl ?? null, owner: c.owner, worker, channels: (c.channels ?? {}) as Record<string, ChannelConfig> };
}

/**
 * Reads (or creates, mode 0600) the master key: 32 random bytes kept as hex in master.key.
 * @throws Error (English, from the catalog) when it is missing without `create`, or not 64 hex characters.
 */
export function readMasterKey(home: Home, create = false): Buffer {
  if (!existsSync(home.masterKey)) {
    if (!create) throw new Error(t("en", "home.noMasterKey", { file: home.masterKey }));
    mkdirSync(home.dir, { recursive: true, mode: 0o700 });
    writeFileAtomic(home.masterKey, randomBytes(32).toString("hex") + "\n", 0o600);
  }
  const hex = readFileSync(home.masterKey, "utf8").trim();
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error(t("en", "home.masterKey", { file: home.masterKey }));
  return Buffer.from(hex, "hex");
}

/** A source or channel name as it appears in a secrets.env variable (see the kernel's `secretsEnvName`). */
export { secretsEnvName } from "../kernel/names.js";

/** Reads secrets.env (KEY=value lines, # comments) into a map; a missing file is empty. */
export function readSecrets(home: Home): Record<string, string> {
  if (!existsSync(home.secrets)) return {};
  const out: Record<string, string> = {};
  for (const line of readFileSync(home.secrets, "utf8").split(/\r?\n/)) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (m && !line.trimStart().startsWith("#")) out[m[1]!] = m[2]!.replace(/^(['"])(.*)\1$/, "$2");
  }
  return out;
}

/**
 * The starter rules.json written by `init`: a commented example the README's curl line triggers. Its `$schema` is the
 * engine's protocol/rules.schema.json as a file: URL, so an editor completes and explains it (issue 27).
 */
export function starterRules(engine: string): string {
  const agent = JSON.stringify(join(engine, "examples", "agents", "ask-once.mjs"));
  const schema = JSON.stringify(pathToFileURL(join(engine, "protocol", "rules.schema.json")).href);
  return `// agent-autoloop rules (JSONC: comments and trailing commas are fine).
// Which event goes to which agent, where, with which skill, and what reaches you.
// Check a draft with: agent-autoloop check <file>. Edits take effect while the hub runs;
// a broken edit keeps the old rules running and sends you a card saying what is wrong.
{
  // The file's schema: an editor that reads JSON Schema (VS Code, for one) completes and explains every field.
  "$schema": ${schema},

  // Time zone for cron rules and "today" (IANA name). Default: this computer's zone.
  // "timezone": "Asia/Shanghai",

  // Only these kinds of actions make an agent ask you first.
  "askFirst": ["delete data", "stop a service", "spend money", "message people outside"],

  // Who may post events. Give each a key: agent-autoloop key new source <name>
  "sources": {
    "demo": { "name": "Demo" }
  },

  // Who does the work. "worker" is the name of the worker that runs it (config.json "worker.name").
  // "sandbox": true hides this folder (keys, master.key, the database) from the agent where bubblewrap is
  // installed (Linux), and leaves it only its rule's "cwd" (not your home itself), temporary folders and its CLI's
  // own state to change; agent-autoloop doctor says whether it is on. "writable" lists more it may change, for
  // example ["~/.cache/go-build"]. "env" lists more of the worker's environment variables an agent gets, for example
  // ["GH_TOKEN", "GIT_*", "SSH_AUTH_SOCK"]; by default none.
  "agents": {
    "demo-agent": {
      "name": "Demo agent",
      "worker": "local",
      "use": "command",
      // A small script that asks you one question, then finishes with your answer.
      "command": ["node", ${agent}],
      "sandbox": true
    }
    // Claude Code (answers continue its session; access: read | edit | full):
    // "claude": { "worker": "local", "use": "claude", "access": "edit", "sandbox": true },
    // "codex": { "worker": "local", "use": "codex", "access": "edit", "sandbox": true },
    // Any other CLI that prints its last message works as a "command" agent:
    // "other": { "worker": "local", "use": "command", "command": ["my-agent", "--prompt", "{prompt}"], "sandbox": true }
  },

  // Where cards reach you. Keys and options live in config.json "channels".
  "channels": {
    "desktop": { "name": "Desktop" },
    "file": { "name": "Cards file" }
  },

  "rules": [
    {
      "name": "demo",
      "when": { "source": "demo", "types": ["*"] },
      "to": "demo-agent",
      "cwd": "~",
      "prompt": "Read the context file and ask the owner how to proceed."
    }
  ]
}
`;
}

/**
 * Creates the home directory once: master.key (0600), keys for the owner, the local worker and the default
 * channels, the starter rules.json; `register` records the keys in the store before config.json (0600) is written.
 * @returns the new config, or null when the home already has a config.json (nothing is changed then).
 */
export function initHome(home: Home, register: (config: Config) => void, engine = engineDir): Config | null {
  if (existsSync(home.config)) return null;
  mkdirSync(home.dir, { recursive: true, mode: 0o700 });
  readMasterKey(home, true);
  const config: Config = {
    listen: "127.0.0.1:8787",
    publicUrl: null,
    owner: newKey(),
    worker: { name: "local", key: newKey(), capacity: 2 },
    channels: {
      desktop: { use: "desktop", key: newKey() },
      file: { use: "file", key: newKey(), path: home.cards },
    },
  };
  if (!existsSync(home.rules)) writeFileAtomic(home.rules, starterRules(engine), 0o644);
  mkdirSync(home.plugins, { recursive: true });
  mkdirSync(home.worker, { recursive: true, mode: 0o700 });
  register(config);
  writeFileAtomic(home.config, JSON.stringify(config, null, 2) + "\n", 0o600);
  return config;
}

/** The owner key's name in the log (who answered from the CLI). */
export const ownerKeyName = "owner";
