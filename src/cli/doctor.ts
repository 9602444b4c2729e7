/**
 * `agent-autoloop doctor`: for each agent of rules.json that runs on this computer's worker, finds its plugin and its
 * program (and version), calls the plugin's `check()`, and says what to do next for anything missing. Also warns
 * about channels that take answers from anyone, and says whether the agents run in the sandbox that hides this home
 * from them (src/worker/sandbox.ts), and why not. The exit code tells whether all is well.
 */
import { execFileSync } from "node:child_process";
import { PluginLoader } from "../common/plugins.js";
import { readRulesInput } from "../host/rules-file.js";
import { findProgram, type AgentPlugin } from "../sdk/index.js";
import type { Config, Home } from "../host/home.js";
import { own } from "../kernel/own.js";
import type { AgentDef, Rules } from "../kernel/rules.js";
import { isInside, probeSandbox, realPath, sandboxHere } from "../worker/sandbox.js";
import { expandHome } from "../worker/worker.js";
import { findHub } from "./connect.js";
import { t, type Lang } from "../i18n/messages.js";

export interface Finding { ok: boolean; line: string }

function versionOf(program: string): string | null {
  try {
    return execFileSync(program, ["--version"], { encoding: "utf8", timeout: 10_000, stdio: ["ignore", "pipe", "ignore"] }).trim().split("\n")[0] ?? null;
  } catch {
    return null;
  }
}

/** Checks the local setup. Never throws for a problem it can describe; each finding is one line. */
export async function doctor(home: Home, config: Config): Promise<Finding[]> {
  const out: Finding[] = [];
  const plugins = new PluginLoader(home.plugins);
  // Read as the hub reads it (a FIFO or a huge file is refused, never waited on).
  const read = readRulesInput(home.rules, "en");
  if (read.kind === "rulesError") {
    return [{ ok: false, line: `${read.error} — ${read.missing ? "run agent-autoloop init" : "fix it; agent-autoloop check shows the same"}` }, await hubFinding(home, "en")];
  }
  const rules = read.rules;
  const local = config.worker?.name ?? null;
  out.push({ ok: true, line: `rules.json: ${rules.rules.length} rules, ${Object.keys(rules.agents).length} agents` });
  if (!local) out.push({ ok: true, line: "config.json has no local worker: agents run on workers elsewhere" });
  for (const agent of Object.values(rules.agents)) {
    if (agent.worker !== local) {
      out.push({ ok: true, line: `agent ${agent.id}: runs on worker ${agent.worker}, not here` });
      continue;
    }
    const file = plugins.find("agent", agent.use);
    if (!file) {
      out.push({ ok: false, line: `agent ${agent.id}: no agent plugin "${agent.use}" — install it with agent-autoloop add <git url>, or use "command"` });
      continue;
    }
    // The program to look for: the agent's own `program`, the first word of `command`, or the CLI of a known plugin;
    // other plugins say what they need through check().
    const knownCli: Record<string, string> = { claude: "claude", codex: "codex", dsh: "dsh" };
    const programName = agent.program ?? (agent.use === "command" || agent.use === "acp" ? agent.command?.[0] ?? null : own(knownCli, agent.use) ?? null);
    if (programName) {
      const program = findProgram(programName);
      if (!program) {
        out.push({ ok: false, line: `agent ${agent.id}: program ${programName} is not on PATH — install it, or set "program" to its full path` });
        continue;
      }
      const version = versionOf(program);
      out.push({ ok: true, line: `agent ${agent.id}: ${program}${version ? ` (${version})` : ""}` });
    }
    try {
      const plugin = await plugins.load<AgentPlugin>("agent", agent.use);
      const next = plugin.check ? await plugin.check({ program: agent.program ?? null, command: agent.command ?? null }) : null;
      if (next) out.push({ ok: false, line: `agent ${agent.id}: ${next}` });
      else if (!programName) out.push({ ok: true, line: `agent ${agent.id}: plugin ${agent.use}` });
    } catch (e) {
      out.push({ ok: false, line: `agent ${agent.id}: plugin ${agent.use} does not load: ${(e as Error).message}` });
    }
  }
  out.push(...sandboxFindings(home, rules, Object.values(rules.agents).filter((a) => a.worker === local)));
  for (const ch of Object.values(rules.channels)) {
    const configured = own(config.channels, ch.id);
    if (!configured) out.push({ ok: true, line: `channel ${ch.id}: not run by this computer's serve (no entry in config.json)` });
    else if (!plugins.find("channel", configured.use)) out.push({ ok: false, line: `channel ${ch.id}: no channel plugin "${configured.use}"` });
    else if (configured.use === "webhook") {
      const platform = configured.platform;
      if (typeof configured.url !== "string" || !/^https?:\/\//.test(configured.url)) out.push({ ok: false, line: `channel ${ch.id}: webhook needs "url" (an http or https address) in config.json` });
      else if (platform !== undefined && !["dingtalk", "wecom", "slack", "discord"].includes(String(platform))) out.push({ ok: false, line: `channel ${ch.id}: unknown platform "${platform}" (dingtalk, wecom, slack, discord, or a "body" template)` });
      else if (platform === undefined && configured.body === undefined) out.push({ ok: false, line: `channel ${ch.id}: webhook needs "platform" or a "body" template` });
      else out.push({ ok: true, line: `channel ${ch.id}: webhook ${platform ?? "custom body"}` });
    } else if (ch.answerers === null && !["file", "desktop"].includes(configured.use)) out.push({ ok: true, line: `channel ${ch.id}: note: no answerers set, so anyone in that chat can answer its cards` });
  }
  out.push(await hubFinding(home, "en"));
  return out;
}

/**
 * Whether this home's hub answers, found as every command finds it (connect.ts): up at its URL; not running (a note:
 * doctor is often run before `serve`), with how to start it; or a server of another home on the address, a FIX.
 */
export async function hubFinding(home: Home, lang: Lang): Promise<Finding> {
  const found = await findHub(home, lang);
  if ("url" in found) return { ok: true, line: t(lang, "doctor.hubUp", { url: found.url }) };
  return found.down ? { ok: true, line: t(lang, "doctor.hubDown", { reason: found.reason }) } : { ok: false, line: t(lang, "doctor.hubOther", { reason: found.reason }) };
}

/**
 * Whether this computer's agents run with this home hidden (README "Agents"): a note for each agent that turned the
 * sandbox off, then one line for the others: on (bubblewrap's version, after a trial run), or off and why — a FIX on
 * Linux, where installing bubblewrap or letting it make namespaces turns it on; a note elsewhere, where it cannot be.
 * A rule whose cwd lies inside the home cannot run sandboxed: a FIX naming it.
 */
function sandboxFindings(home: Home, rules: Rules, local: AgentDef[]): Finding[] {
  const out: Finding[] = [];
  for (const a of local.filter((x) => !x.sandbox)) {
    out.push({ ok: true, line: `agent ${a.id}: note: sandbox off ("sandbox": false in rules.json), so it can read this home's keys` });
  }
  const boxed = local.filter((x) => x.sandbox);
  if (boxed.length === 0) return out;
  const names = boxed.map((a) => a.id).join(", ");
  const here = sandboxHere();
  if ("off" in here) {
    const fixable = process.platform === "linux";
    out.push({ ok: !fixable, line: `sandbox: off for ${names}, which can read this home's keys: ${here.off}` });
    return out;
  }
  const failed = probeSandbox(here.bwrap, realPath(home.dir));
  if (failed) {
    out.push({ ok: false, line: `sandbox: ${here.bwrap} does not run here (${failed}), so runs of ${names} fail — let it make namespaces, or set "sandbox": false on them` });
    return out;
  }
  out.push({ ok: true, line: `sandbox: on for ${names} (${versionOf(here.bwrap) ?? here.bwrap}): this home is hidden from them` });
  const homeDir = realPath(home.dir);
  for (const r of rules.rules) {
    if (!boxed.some((a) => a.id === r.to)) continue;
    const cwd = realPath(expandHome(r.cwd ?? "~"));
    if (isInside(cwd, homeDir)) out.push({ ok: false, line: `rule ${r.name}: cwd ${r.cwd ?? "~"} is inside this home, which the sandbox hides from agent ${r.to} — choose another folder` });
  }
  return out;
}
