/**
 * `agent-autoloop doctor`: for each agent of rules.json that runs on this computer's worker, finds its plugin and its
 * program (there and executable: an agent's program is never run here, outside the sandbox — issue 26), calls the
 * plugin's `check()`, and says what to do next for anything missing. Also warns
 * about channels that take answers from anyone, and says whether the agents run in the sandbox that hides this home
 * from them (src/worker/sandbox.ts), and why not. The exit code tells whether all is well.
 */
import { execFileSync } from "node:child_process";
import { executableFile } from "../common/file-checks.js";
import { PluginLoader } from "../plugins/index.js";
import { readRulesInput } from "../host/rules-file.js";
import { checkHomeFiles } from "../host/home-files.js";
import { findProgram, launchArgv, programWritable, type AgentPlugin } from "../sdk/index.js";
import { readSecrets, type Config, type Home } from "../host/home.js";
import { channelSetupProblem } from "../host/channel-setup.js";
import { own } from "../kernel/own.js";
import type { AgentDef, Rules } from "../kernel/rules.js";
import { isInside, probeSandbox, realPath, sandboxHere } from "../worker/sandbox.js";
import { networkPrograms } from "../worker/sandbox-network.js";
import { expandHome } from "../worker/worker.js";
import { findHub } from "./connect.js";
import { t, type Lang } from "../i18n/messages.js";

export interface Finding { ok: boolean; line: string }

/**
 * The first line `argv --version` prints (argv as `launchArgv` gives it), or null: for bubblewrap, the one program
 * doctor runs itself, a known one found on PATH that the sandbox check has just run anyway. An agent's program is
 * never run (issue 26): it may be any script.
 */
function versionOf(argv: string[]): string | null {
  try {
    return execFileSync(argv[0]!, [...argv.slice(1), "--version"], { encoding: "utf8", timeout: 10_000, stdio: ["ignore", "pipe", "ignore"] }).trim().split("\n")[0] ?? null;
  } catch {
    return null;
  }
}

/** The variables of secrets.env; none when it cannot be read (checkHomeFiles has said why). */
function secretsOf(home: Home): Record<string, string> {
  try {
    return readSecrets(home);
  } catch {
    return {};
  }
}

/**
 * Checks the local setup, each finding one line worded in `lang` (default English). Never throws for a problem it
 * can describe.
 */
export async function doctor(home: Home, config: Config, lang: Lang = "en"): Promise<Finding[]> {
  const out: Finding[] = [];
  const plugins = new PluginLoader(home.plugins);
  // A folder where the home keeps a file (rules.json too), or a file where it keeps a folder: the advice `init`,
  // `serve` and `key new` give (move or remove it), not "run init", which would refuse the same way (issue 15).
  try {
    checkHomeFiles(home, lang);
  } catch (e) {
    // The hub cannot be looked for when its own files are folders (home.id, hub.json): then this line alone.
    const hub = await hubFinding(home, lang).catch(() => null);
    return [{ ok: false, line: (e as Error).message }, ...(hub ? [hub] : [])];
  }
  // Read as the hub reads it (a FIFO or a huge file is refused, never waited on).
  const read = readRulesInput(home.rules, lang);
  if (read.kind === "rulesError") {
    return [{ ok: false, line: t(lang, read.missing ? "doctor.rulesMissing" : "doctor.rulesError", { error: read.error }) }, await hubFinding(home, lang)];
  }
  const rules = read.rules;
  const local = config.worker?.name ?? null;
  out.push({ ok: true, line: t(lang, "doctor.rules", { rules: rules.rules.length, agents: Object.keys(rules.agents).length }) });
  if (!local) out.push({ ok: true, line: t(lang, "doctor.noWorker") });
  for (const agent of Object.values(rules.agents)) {
    if (agent.worker !== local) {
      out.push({ ok: true, line: t(lang, "doctor.elsewhere", { agent: agent.id, worker: agent.worker }) });
      continue;
    }
    const file = plugins.find("agent", agent.use);
    if (!file) {
      out.push({ ok: false, line: t(lang, "doctor.noPlugin", { agent: agent.id, use: agent.use }) });
      continue;
    }
    // The program to look for: the agent's own `program`, the first word of `command`, or the CLI of a known plugin;
    // other plugins say what they need through check().
    const knownCli: Record<string, string> = { claude: "claude", codex: "codex", dsh: "dsh" };
    const programName = agent.program ?? (agent.use === "command" || agent.use === "acp" ? agent.command?.[0] ?? null : own(knownCli, agent.use) ?? null);
    if (programName) {
      const program = findProgram(programName);
      if (!program) {
        out.push({ ok: false, line: t(lang, "doctor.noProgram", { agent: agent.id, program: programName }) });
        continue;
      }
      // Windows: how the worker would start it (npm's .cmd shims by their JS entry), or why it would not.
      const run = launchArgv([program], { lang });
      if ("error" in run) {
        out.push({ ok: false, line: t(lang, "doctor.next", { agent: agent.id, next: run.error }) });
        continue;
      }
      // Found, and executable by this user: nothing of it is run (not even `--version`), as the worker would run it
      // in the sandbox and doctor runs outside it (issue 26).
      if (!executableFile(program)) {
        out.push({ ok: false, line: t(lang, "doctor.notExecutable", { agent: agent.id, program }) });
        continue;
      }
      // Whether this user — and so an agent, which runs as the hub's user — could change what the program runs: then
      // nothing runs it here, not even a plugin's version check (issue 26 round 2 #8), and the line says so.
      const writable = programWritable(program);
      out.push({ ok: true, line: writable === null ? t(lang, "doctor.program", { agent: agent.id, program }) : t(lang, "doctor.programWritable", { agent: agent.id, program, path: writable }) });
    }
    try {
      const plugin = await plugins.load<AgentPlugin>("agent", agent.use);
      const next = plugin.check ? await plugin.check({ program: agent.program ?? null, command: agent.command ?? null }) : null;
      if (next) out.push({ ok: false, line: t(lang, "doctor.next", { agent: agent.id, next }) });
      else if (!programName) out.push({ ok: true, line: t(lang, "doctor.plugin", { agent: agent.id, use: agent.use }) });
    } catch (e) {
      out.push({ ok: false, line: t(lang, "doctor.pluginFails", { agent: agent.id, use: agent.use, error: (e as Error).message }) });
    }
  }
  out.push(...sandboxFindings(home, rules, Object.values(rules.agents).filter((a) => a.worker === local), lang));
  const secrets = secretsOf(home);
  for (const ch of Object.values(rules.channels)) {
    const configured = own(config.channels, ch.id);
    const channel = ch.id;
    if (!configured) out.push({ ok: true, line: t(lang, "doctor.channelNotHere", { channel }) });
    else if (!plugins.find("channel", configured.use)) out.push({ ok: false, line: t(lang, "doctor.noChannelPlugin", { channel, use: configured.use }) });
    else if (channelSetupProblem(channel, configured, secrets, lang) !== null) {
      // What the channel logs at each failed start, and status shows: serve takes the secret at the channel's next restart.
      out.push({ ok: false, line: t(lang, "doctor.channelProblem", { channel, problem: channelSetupProblem(channel, configured, secrets, lang)! }) });
    }
    else if (configured.use === "webhook") {
      const platform = configured.platform;
      if (typeof configured.url !== "string" || !/^https?:\/\//.test(configured.url)) out.push({ ok: false, line: t(lang, "doctor.webhookUrl", { channel }) });
      else if (platform !== undefined && !["dingtalk", "wecom", "slack", "discord"].includes(String(platform))) out.push({ ok: false, line: t(lang, "doctor.webhookPlatform", { channel, platform: String(platform) }) });
      else if (platform === undefined && configured.body === undefined) out.push({ ok: false, line: t(lang, "doctor.webhookNeeds", { channel }) });
      else out.push({ ok: true, line: t(lang, "doctor.webhook", { channel, platform: platform === undefined ? t(lang, "doctor.customBody") : String(platform) }) });
    } else if (ch.answerers === null && !["file", "desktop"].includes(configured.use)) out.push({ ok: true, line: t(lang, "doctor.anyone", { channel }) });
  }
  out.push(await hubFinding(home, lang));
  const { refreshServicePath } = await import("./service/install.js");
  const service = refreshServicePath(home, lang);
  if (service) out.push(service);
  return out;
}

/**
 * Whether this home's hub answers, found as every command finds it (connect.ts): up at its URL (only a hub that proved
 * it holds the home's master key); not running (a note: doctor is often run before `serve`), with how to start it; or
 * a server of another home on the address, or one naming this home without the proof (a possible impostor), a FIX.
 */
export async function hubFinding(home: Home, lang: Lang): Promise<Finding> {
  const found = await findHub(home, lang);
  if ("url" in found) return { ok: true, line: t(lang, "doctor.hubUp", { url: found.url }) };
  return found.down ? { ok: true, line: t(lang, "doctor.hubDown", { reason: found.reason }) } : { ok: false, line: t(lang, "doctor.hubOther", { reason: found.reason }) };
}

/**
 * The network of the sandboxed agents `boxed` (issue 26 round 33, F33a-1; src/worker/sandbox-network.ts): a note for
 * each that says `"network": "host"`, then one line for the others: a network of their own (pasta found), or a FIX —
 * without pasta they share the computer's network and can take the hub's address while it is down.
 */
function networkFindings(boxed: readonly AgentDef[], lang: Lang): Finding[] {
  const out: Finding[] = boxed.filter((a) => a.network === "host").map((a) => ({ ok: true, line: t(lang, "doctor.networkHostAgent", { agent: a.id }) }));
  const own = boxed.filter((a) => a.network !== "host").map((a) => a.id).join(", ");
  if (!own) return out;
  // What the worker of this user would find (R39-9: pasta alone is not enough for an ordinary user's worker).
  const here = networkPrograms(process.getuid?.() ?? 0);
  if ("shared" in here) out.push({ ok: false, line: t(lang, "doctor.networkShared", { agents: own, why: t(lang, here.shared === "noPasta" ? "sandbox.noPasta" : "sandbox.noEnvSignal") }) });
  else out.push({ ok: true, line: t(lang, "doctor.networkOwn", { agents: own, pasta: here.pasta }) });
  return out;
}

/**
 * Whether this computer's agents run with this home hidden (README "Agents"): a note for each agent that turned the
 * sandbox off, then one line for the others: on (bubblewrap's version, after a trial run), or off and why — a FIX on
 * Linux, where installing bubblewrap or letting it make namespaces turns it on; a note elsewhere, where it cannot be.
 * A rule whose cwd lies inside the home cannot run sandboxed: a FIX naming it.
 */
function sandboxFindings(home: Home, rules: Rules, local: AgentDef[], lang: Lang): Finding[] {
  const out: Finding[] = [];
  for (const a of local.filter((x) => !x.sandbox)) out.push({ ok: true, line: t(lang, "doctor.sandboxOffAgent", { agent: a.id }) });
  const boxed = local.filter((x) => x.sandbox);
  if (boxed.length === 0) return out;
  const agents = boxed.map((a) => a.id).join(", ");
  const here = sandboxHere(process.platform, process.env.PATH ?? "", lang);
  if ("off" in here) {
    const fixable = process.platform === "linux";
    out.push({ ok: !fixable, line: t(lang, "doctor.sandboxOff", { agents, why: here.off }) });
    return out;
  }
  const failed = probeSandbox(here.bwrap, realPath(home.dir), lang);
  if (failed) {
    out.push({ ok: false, line: t(lang, "doctor.sandboxFails", { bwrap: here.bwrap, error: failed, agents }) });
    return out;
  }
  out.push({ ok: true, line: t(lang, "doctor.sandboxOn", { agents, version: versionOf([here.bwrap]) ?? here.bwrap }) });
  out.push(...networkFindings(boxed, lang));
  const homeDir = realPath(home.dir);
  for (const r of rules.rules) {
    if (!boxed.some((a) => a.id === r.to)) continue;
    const cwd = realPath(expandHome(r.cwd ?? "~"));
    if (isInside(cwd, homeDir)) out.push({ ok: false, line: t(lang, "doctor.cwdInside", { rule: r.name, cwd: r.cwd ?? "~", agent: r.to }) });
  }
  return out;
}
