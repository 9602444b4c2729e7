/**
 * The real agent CLIs for tests (issue 5): where `npm run agents:install` put them (tests/agent-clis), and the
 * settings that point each at the fake model server (tests/fake-model.ts) with no other network use, as observed
 * in ../shared/research/agent-clis (Claude Code 2.1.332, Codex 0.171.0, claude-agent-acp 0.49.0).
 */
import assert from "node:assert/strict";
import { spawn, execFile, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { engine, until } from "./helpers.js";
import type { State } from "../src/protocol/responses.js";

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
    // The fake model's URL in Codex's environment too (config.toml names it for Codex): a sandboxed agent reaches a port
    // of this computer's loopback only when its environment or loopbackPorts names it (issue 26 round 40, F40a-1).
    OPENAI_BASE_URL: `${modelUrl}/v1`,
  };
}

/** The `-c` overrides that point Codex at the fake model, as a rule's `--codex-config` arguments would (the delivery plugin's default Codex reviewer ignores the user's config.toml, so agentEnv's does not reach it). */
export const fakeProvider = (url: string): string[] => [
  'model="gpt-5.5"', 'model_provider="fake"',
  `model_providers.fake={name="fake",base_url="${url}/v1",env_key="OPENAI_API_KEY",wire_api="responses",request_max_retries=0,stream_max_retries=0}`,
  "analytics.enabled=false",
];

/** Sets this test process's environment to `agentEnv(modelUrl, dir)`, for agents launched by an in-process worker. */
export function pointAgentsAt(modelUrl: string, dir: string): void {
  Object.assign(process.env, agentEnv(modelUrl, dir));
}

/**
 * A real `agent-autoloop serve` process (hub + local worker) on a fresh home in `<dir>/aa`, for the agents pointed at
 * the fake model: `agentEnv` plus the home, English, no display. The home gets `rules` (its rules.json), only the file
 * channel, and a source key for `lab`; `files` are copied into it first (plugins, say).
 */
export interface RealHub {
  /** The environment of the hub and of the CLI commands. */
  env: Record<string, string>;
  url: string;
  owner: string;
  /** Everything the hub processes printed so far (shown when a wait times out). */
  output(): string;
  /** Runs an `agent-autoloop` command against the hub without blocking this process; its stdout, trimmed. */
  cli(...args: string[]): Promise<string>;
  /** GET /v1/state as the owner. */
  state(): Promise<State>;
  /** Posts an event of `type` (id `<type>-1`) as the source `lab`. */
  post(type: string): Promise<void>;
  /** Starts the hub (again). */
  start(): Promise<void>;
  /** Kills it with SIGKILL and waits for it to go. */
  kill(): Promise<void>;
}

/**
 * Makes the home and starts the hub. The CLI runs without blocking this process: a synchronous call would hold the
 * event loop for seconds, during which the hub may close an idle keep-alive connection of this process's fetch pool
 * unseen, and the next POST on it fails with "other side closed".
 */
export async function realHub(dir: string, modelUrl: string, rules: object, prepare: (home: string) => void = () => {}): Promise<RealHub> {
  const bin = join(engine, "bin", "agent-autoloop.js");
  const home = join(dir, "aa");
  const env: Record<string, string> = { ...(process.env as Record<string, string>), ...agentEnv(modelUrl, dir), AGENT_AUTOLOOP_HOME: home, AGENT_AUTOLOOP_LANG: "en", DISPLAY: "", WAYLAND_DISPLAY: "" };
  let child: ChildProcess | null = null;
  let output = "";
  let url = "http://127.0.0.1:1"; // no hub yet: key new writes the key locally
  let sourceKey = "";
  const cli = async (...args: string[]): Promise<string> => {
    const { stdout } = await promisify(execFile)(process.execPath, [bin, ...args], { env: { ...env, AGENT_AUTOLOOP_URL: url }, encoding: "utf8" });
    return stdout.trim();
  };
  await cli("init");
  prepare(home);
  writeFileSync(join(home, "rules.json"), JSON.stringify(rules, null, 2));
  const config = JSON.parse(readFileSync(join(home, "config.json"), "utf8")) as { owner: string; channels: Record<string, unknown> };
  config.channels = { file: config.channels.file };
  writeFileSync(join(home, "config.json"), JSON.stringify(config));
  sourceKey = await cli("key", "new", "source", "lab");
  const hub: RealHub = {
    env, owner: config.owner, cli,
    get url() {
      return url;
    },
    output: () => output,
    async state() {
      return (await (await fetch(`${url}/v1/state`, { headers: { authorization: `Bearer ${config.owner}` } })).json()) as State;
    },
    async post(type) {
      const res = await fetch(`${url}/v1/events`, {
        method: "POST",
        headers: { authorization: `Bearer ${sourceKey}`, "content-type": "application/json" },
        body: JSON.stringify({ id: `${type}-1`, type }),
      });
      assert.equal(res.status, 200, await res.text());
    },
    async start() {
      const started = spawn(process.execPath, [bin, "serve", "--listen", "127.0.0.1:0"], { env, stdio: ["ignore", "pipe", "pipe"] });
      child = started;
      let out = "";
      started.stdout!.on("data", (d) => ((out += d), (output += d)));
      started.stderr!.on("data", (d) => ((out += d), (output += d)));
      url = (await until(() => /listening on (http:\/\/\S+)/.exec(out)?.[1], 60_000, () => `the hub to listen (output: ${out})`))!;
    },
    async kill() {
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      const gone = new Promise((r) => c.once("exit", r));
      c.kill("SIGKILL");
      await gone;
    },
  };
  await hub.start();
  return hub;
}
