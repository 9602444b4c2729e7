/**
 * A health check of every tool plugin found (later `agent-autoloop plugins doctor`): its manifest, its entry point
 * (found without running it), whether the sandbox it asks for can be made here, and name clashes. Runs no plugin code.
 */
import { delimiter, join, resolve } from "node:path";
import { t, render, type MessageId } from "../i18n/messages.js";
import { cgroupBases, controllerLimitName, controllerMissing, neededControllers } from "./cgroup.js";
import { probeBwrap, probeError } from "./sandbox.js";
import { executableFile } from "../common/file-checks.js";
import { formatClash, type PluginClash } from "../plugins/precedence.js";
import type { ToolRegistry } from "./registry.js";
import { runners } from "./runners.js";
import { bindRefusal, bindsOf, type LaunchSettings } from "./process.js";
import { passedEnvNames } from "./env.js";
import type { ConformanceLine, ToolPluginRecord } from "./types.js";

/** One plugin's checks: its name and folder, and a line per check. */
export interface PluginDiagnosis {
  plugin: string;
  dir: string;
  lines: ConformanceLine[];
}

/** Where `command` would be run from: a path relative to the plugin folder, or the first match in `PATH`. */
export function resolveCommand(command: string, dir: string, path: string): string | null {
  if (command.includes("/")) {
    const file = resolve(dir, command);
    return executableFile(file) ? file : null;
  }
  for (const d of path.split(delimiter).filter(Boolean)) if (executableFile(join(d, command))) return join(d, command);
  return null;
}

/**
 * Checks every plugin folder of `registry` (the last rescan). Verdicts: ok, warn (shadowed, or shadowing a plugin of
 * another kind: `acrossKinds`, the plugin layer's `kindClashes`), fail (needs fixing).
 */
export async function diagnose(registry: ToolRegistry, s: LaunchSettings, acrossKinds: readonly PluginClash[] = []): Promise<PluginDiagnosis[]> {
  const out: PluginDiagnosis[] = [];
  const clashes = registry.problems().clashes;
  for (const rec of registry.list()) {
    const own = clashes.filter((c) => c.name === rec.name).map((c) => formatClash(c, s.lang));
    const others = acrossKinds.filter((c) => c.winner.dir === rec.dir).map((c) => formatClash(c, s.lang, c.kind));
    out.push({ plugin: rec.name, dir: rec.dir, lines: await check(rec, s, own, others) });
  }
  return out;
}

async function check(rec: ToolPluginRecord, s: LaunchSettings, clashes: string[], acrossKinds: string[]): Promise<ConformanceLine[]> {
  const lines: ConformanceLine[] = [];
  const add = (id: MessageId, verdict: ConformanceLine["verdict"], detail: string) => lines.push({ check: render(s.lang, { id }), verdict, detail });
  add("tools.conf.manifest", rec.errors.length > 0 ? "fail" : "ok", rec.errors.join("; ") || rec.manifestPath);
  if (clashes.length > 0) add("tools.doctor.clash", rec.status === "shadowed" ? "warn" : "ok", clashes.join("; "));
  // It wins, but the plugin it shadows is out of use whole: one of the two wants another name.
  if (acrossKinds.length > 0) add("tools.doctor.clash", "warn", acrossKinds.join("; "));
  const m = rec.manifest;
  if (!m) return lines;
  // Inside a sandbox the folder is /workspace, but a relative command is the same file.
  const found = resolveCommand(m.entry_point.command, rec.dir, s.parentEnv.PATH ?? "");
  add("tools.doctor.entry", found ? "ok" : "fail", found ?? t(s.lang, "tools.doctor.noCommand", { command: m.entry_point.command }));
  // What it takes of the hub's environment (issue 26 round 10): a token serve holds for a rule reaches the plugin.
  const passed = passedEnvNames(m);
  if (passed.length > 0) add("tools.doctor.env", "warn", t(s.lang, "tools.doctor.envPassed", { names: passed.join(", ") }));
  // A service that lists no tools (issue 34 #5): nothing can tell which it has.
  if (runners[m.plugin_type].tools(m) === "any") add("tools.doctor.tools", "warn", t(s.lang, "tools.doctor.toolsUnknown", { plugin: rec.name }));
  if (!m.sandbox) return lines;
  // An async plugin calls back over the network; with `network = "none"` its sandbox's loopback has no hub (issue 34 #7)
  if (m.plugin_type === "async" && m.sandbox.network === "none") add("tools.doctor.callback", "warn", t(s.lang, "tools.doctor.noCallback", { plugin: rec.name }));
  // Binds that would undo the sandbox (issue 26 #3): the plugin will not start until they are fixed.
  const badBind = bindRefusal(rec.name, bindsOf(m, rec.dir, s), s.lang);
  if (badBind) add("tools.doctor.binds", "fail", badBind.message);
  const probe = await probeBwrap(s.bwrap);
  const controllers = neededControllers({ memoryBytes: m.sandbox.memoryBytes, cpus: m.sandbox.cpus, pids: m.sandbox.pids });
  const bases = cgroupBases(s.cgroups);
  const missing = controllers.filter((c) => !bases[c]);
  if (!probe.ok) add("tools.doctor.sandbox", "fail", t(s.lang, "tools.sandbox.noBwrap", { plugin: rec.name, error: probeError(probe, s.lang) }));
  else if (missing.length > 0) add("tools.doctor.sandbox", "fail", t(s.lang, "tools.sandbox.noCgroup", { plugin: rec.name, what: controllerLimitName[missing[0]!], controller: missing[0]!, error: controllerMissing }));
  else add("tools.doctor.sandbox", "ok", ["bubblewrap", ...controllers.map((c) => `${c}: ${bases[c]}`)].join(", "));
  return lines;
}
