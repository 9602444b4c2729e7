/**
 * Conformance of one tool plugin folder to the contract of spec tool-plugins.md (later `agent-autoloop plugins
 * conformance <folder>`): its manifest, its tool list, a good call, a call of a tool that does not exist, the id echo,
 * stdout discipline, exit at end of input and answering within its timeout. One line per check: `ok`, `warn` (the
 * host copes, but the plugin should change), `fail` (the host cannot use it so), `skip`. The checks after the manifest
 * are its kind's (each runner's `conformance`).
 */
import { existsSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { t, render } from "../i18n/messages.js";
import { readBounded } from "../plugins/files.js";
import { systemCgroups } from "./cgroup.js";
import type { ConformanceAdd, ConformanceOptions } from "./conformance-kit.js";
import { formatProblem, manifestFileNames, readManifest } from "./manifest.js";
import type { LaunchSettings } from "./process.js";
import type { RunnablePlugin } from "./runner.js";
import { runners } from "./runners.js";
import { manifestMaxBytes } from "./limits.js";
import type { ConformanceLine } from "./types.js";

export { sampleArguments, type ConformanceOptions } from "./conformance-kit.js";

/** Runs the checks on the plugin folder `folder`. Never throws; ends every process it started. */
export async function conformance(folder: string, o: ConformanceOptions): Promise<ConformanceLine[]> {
  const lines: ConformanceLine[] = [];
  const lang = o.lang;
  const add: ConformanceAdd = (id, verdict, detail) => lines.push({ check: render(lang, { id }), verdict, detail });
  const dir = resolve(folder);
  const file = manifestFileNames.map((f) => join(dir, f)).find((f) => existsSync(f));
  if (!file) {
    add("tools.conf.manifest", "fail", `${dir}: no ${manifestFileNames.join(" or ")}`);
    return lines;
  }
  const read = readManifest(readBounded(file, manifestMaxBytes), lang);
  if (!read.ok) {
    add("tools.conf.manifest", "fail", read.problems.map((p) => formatProblem(file, p)).join("; "));
    return lines;
  }
  const m = read.manifest;
  add("tools.conf.manifest", "ok", `${m.name} ${m.version} ${m.plugin_type} (${basename(file)}, sha256 ${read.digest.slice(0, 12)})`);
  const refused = o.refusal?.(m.name) ?? null;
  if (refused !== null) {
    add("tools.conf.denied", "fail", refused);
    return lines;
  }
  const s: LaunchSettings = { lang, bwrap: o.bwrap ?? "bwrap", hidden: o.hidden ?? [], cgroups: systemCgroups(), parentEnv: process.env, log: o.log ?? (() => {}) };
  const p: RunnablePlugin = { name: m.name, dir, manifest: m };
  await runners[m.plugin_type].conformance(p, read.digest, s, o, add);
  return lines;
}

