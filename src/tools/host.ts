/**
 * The tool host: one call API for every kind of tool plugin (spec tool-plugins.md), used alike by the owner's
 * `plugins invoke`, the hub and the agents' tool bridge. A call names `<plugin>.<tool>`; the tool and its arguments are
 * checked against the plugin's tool list and JSON Schema before anything starts; then the plugin runs by its kind's
 * runner, the one dispatch of the one table (runners.ts; sync/async: a fresh process per call; mcp: a long-lived MCP
 * server; service: a supervised gRPC server), in its sandbox when its manifest has one. Long-lived plugins follow the
 * registry: a changed plugin restarts that plugin only; a removed one is stopped.
 */
import { rmdirSync } from "node:fs";
import { join } from "node:path";
import { t, type Lang } from "../i18n/messages.js";
import { argumentsBeyondLimits, checkArguments } from "./arguments.js";
import { resultTooDeep } from "../protocol/tool-result.js";
import { diagnose, type PluginDiagnosis } from "./doctor.js";
import { systemCgroups, type CgroupSystem } from "./cgroup.js";
import { bindRefusal, bindsOf, type LaunchSettings, type PluginProcess } from "./process.js";
import { shownBinds } from "./binds.js";
import { envBoundDigest, passedEnv } from "./env.js";
import { serviceSocketFolder } from "./service.js";
import { endOrphansOf, endOwn, hostMark } from "./orphans.js";
import { checkLeftWatches } from "./bind-check.js";
import { runners } from "./runners.js";
import type { ActivePlugin, Outcome, Runner, RunnerHost } from "./runner.js";
import { callTimeoutMsMax, restartBackoffMs } from "./limits.js";
import type { ToolRegistry } from "./registry.js";
import type { CallCheck, PluginClash, CallContext, CallOutcome, CodeFoldersSeen, DataTools, HttpReach, LongLivedStatus, Manifest, OfferedTool, PluginType, RescanReport, ToolPluginRecord, ToolSpec, ToolsOutcome } from "./types.js";

/** Settings of a tool host; everything but `lang` has a default. */
export interface ToolHostOptions {
  lang: Lang;
  /** Receives log lines; `subsystem` is `plugin.<name>` for a plugin's stderr. Default: dropped. */
  log?: (subsystem: string, line: string) => void;
  /** Where PATH, HOME, LANG, TZ and pass-through variables are read from. Default: `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The bubblewrap program. Default: `bwrap` from PATH. */
  bwrap?: string;
  /** Host paths no sandbox may see (the hub's home, with its keys). */
  hiddenPaths?: string[];
  cgroups?: CgroupSystem;
  /**
   * The folder of this host's service sockets, each service's in a folder of its own inside: a folder no agent and no
   * other plugin can see. Default: a new folder in `<first hidden path>/sockets/` (the hub's home, hidden from every
   * sandbox: `serviceSocketFolder`); a host that hides nothing (a test) gets one in the temp dir, as reachable as
   * everything else then. A path deeper than a socket address holds is reached through its folder (service.ts).
   */
  socketDir?: string;
  /** Waits between restarts of crashed long-lived plugins, in ms (default `restartBackoffMs`). */
  restartBackoffMs?: readonly number[];
  /** Tools that are data (declarative plugins' HTTP tools, kind `http`; issue 18), offered and called alongside. */
  data?: DataTools;
  /** What the hub's starts recorded (LaunchSettings `seen`; host/code-folders.ts). Default: none. */
  seen?: CodeFoldersSeen;
  /**
   * Whether the owner trusts plugin `plugin` at `digest` (the digest a call's approval is bound to: `check`'s): an
   * "always allow" at it. Only then is a plugin's tool list asked as its manifest runs it; otherwise in the review
   * sandbox (review.ts; issue 26 round 11, F5). Default: none is trusted.
   */
  trusted?: (plugin: string, digest: string) => boolean;
  /**
   * Whether rules.json's approvals deny plugin `plugin` whole: such a long-lived plugin is not started with the host
   * (hostile round 41, F41b-4: "a denied plugin never runs"); it is held, and a call the hub allows later starts it.
   * Default: none is.
   */
  denied?: (plugin: string) => boolean;
}

/** A data tool's call that passed its checks (kind `http`; its source runs it). `timeoutMs`: the tool's own. */
interface DataCall {
  data: true;
  plugin: string;
  tool: string;
  digest: string;
  timeoutMs: number;
  reach: HttpReach;
}

/** The plugin in use of a registry record, as its runner gets it (null when it has no usable manifest or digest). */
function active(rec: ToolPluginRecord | null): ActivePlugin | null {
  return rec?.manifest && rec.digest ? { p: { name: rec.name, dir: rec.dir, manifest: rec.manifest }, digest: rec.digest } : null;
}

/** A call's timeout (ms): the caller's, else its kind's default (runners.ts: the manifest's, 30 s, 5 min), at most one hour. */
function timeoutOf(m: Manifest, callers: number | undefined): number {
  return Math.min(callTimeoutMsMax, Math.max(1, callers ?? runners[m.plugin_type].timeoutMs(m)));
}

/** Splits `<plugin>.<tool>` at the first dot (plugin names have none). */
export function splitToolName(qualified: string): { plugin: string; tool: string } | null {
  const dot = qualified.indexOf(".");
  if (dot <= 0 || dot === qualified.length - 1) return null;
  return { plugin: qualified.slice(0, dot), tool: qualified.slice(dot + 1) };
}

export class ToolHost {
  readonly settings: LaunchSettings;
  /** The folder given, or null until the first service needs the default one. */
  private socketDir: string | null;
  /** The last number given to a service's own socket folder. */
  private socketFolders = 0;
  /** One runner of each kind (runners.ts), made for this host. */
  private readonly runnerOf: Record<PluginType, Runner>;
  private background = new Set<PluginProcess>();
  private statusListeners = new Set<(s: LongLivedStatus) => void>();
  private unsubscribe: (() => void) | null = null;
  private readonly data: DataTools | null;
  private readonly trusted: (plugin: string, digest: string) => boolean;
  private readonly denied: (plugin: string) => boolean;
  /** Long-lived plugins that changed while they ran and wait for a call the hub allows (`follow`). */
  private readonly held = new Set<string>();

  constructor(readonly registry: ToolRegistry, o: ToolHostOptions) {
    this.data = o.data ?? null;
    this.trusted = o.trusted ?? (() => false);
    this.denied = o.denied ?? (() => false);
    this.settings = {
      lang: o.lang, bwrap: o.bwrap ?? "bwrap", hidden: o.hiddenPaths ?? [], cgroups: o.cgroups ?? systemCgroups(),
      parentEnv: o.env ?? process.env, log: o.log ?? (() => {}), pluginRoots: registry.roots.map((r) => r.dir),
      ...(o.seen ? { seen: o.seen } : {}),
      hostMark: hostMark(o.hiddenPaths?.[0] ?? null), denied: this.denied,
    };
    // What a host of this home left when it died (SIGKILL, crash): its plugins' processes, and what they started.
    endOrphansOf(o.hiddenPaths?.[0] ?? null);
    // …and what their sandboxed plugins wrote in writable binds that no check followed (bind-check.ts; F58b-1).
    checkLeftWatches(o.hiddenPaths?.[0] ?? null, o.lang, this.settings.log);
    this.socketDir = o.socketDir ?? null;
    const h: RunnerHost = {
      settings: this.settings, backoff: o.restartBackoffMs ?? restartBackoffMs, background: this.background,
      emit: (st) => this.emit(st),
      socketFolder: () => {
        this.socketDir ??= serviceSocketFolder(this.settings.hidden[0] ?? null);
        return join(this.socketDir, String(++this.socketFolders));
      },
    };
    this.runnerOf = Object.fromEntries(Object.entries(runners).map(([kind, r]) => [kind, r.make(h)])) as Record<PluginType, Runner>;
  }

  private get lang(): Lang {
    return this.settings.lang;
  }

  /** The runner of a plugin's kind. */
  private runner(m: Manifest): Runner {
    return this.runnerOf[m.plugin_type];
  }

  /**
   * Starts the long-lived plugins that start with the host (every service; MCP servers with `autostart`) and follows
   * the registry from then on. Resolves once each has started or failed (failures show in `statuses()`).
   */
  async start(): Promise<void> {
    this.unsubscribe ??= this.registry.onChange((r) => void this.follow(r));
    await Promise.all(this.registry.list().filter((r) => r.status !== "shadowed").map((r) => this.startLongLived(r.name)));
  }

  private async startLongLived(name: string): Promise<void> {
    const a = active(this.registry.get(name));
    const start = a && this.runner(a.p.manifest).start;
    if (!a || !start) return;
    if (this.denied(name)) {
      if (!this.held.has(name)) this.settings.log(`plugin.${name}`, t(this.lang, "tools.longLived.denied", { plugin: name }));
      this.held.add(name);
      return;
    }
    await start.call(this.runner(a.p.manifest), a);
  }

  /**
   * A registry change: stop what is gone or changed (by digest), start what is new. Other plugins are untouched. A
   * long-lived plugin that changed starts again by itself only at a version the owner trusts (issue 26 round 25,
   * F25b-2: a service whose `[sandbox]` was removed came back unsandboxed with no one asked); until then it is held,
   * and the first call the hub allows at the new version starts it (`dispatch`).
   */
  private async follow(r: RescanReport): Promise<void> {
    for (const name of [...r.removed, ...r.changed]) await this.stopLongLived(name);
    for (const name of r.removed) this.held.delete(name);
    for (const name of r.added) await this.startLongLived(name);
    for (const name of r.changed) {
      const a = active(this.registry.get(name));
      if (!a || !this.runner(a.p.manifest).start) continue;
      if (this.trusted(name, this.callDigest(a))) {
        this.held.delete(name);
        await this.startLongLived(name);
      } else if (!this.held.has(name)) {
        this.held.add(name);
        this.settings.log(`plugin.${name}`, t(this.lang, "tools.longLived.held", { plugin: name }));
      }
    }
  }

  /** The digest a call of the plugin in use `a` is decided at (`check`'s: its files and the names of what it is given of the hub's environment). */
  private callDigest(a: NonNullable<ReturnType<typeof active>>): string {
    return envBoundDigest(a.digest, Object.keys(passedEnv(this.settings.parentEnv, a.p.manifest)));
  }

  private async stopLongLived(name: string): Promise<void> {
    await Promise.all(Object.values(this.runnerOf).map((r) => r.stop?.(name)));
  }

  private emit(s: LongLivedStatus): void {
    for (const fn of this.statusListeners) fn(s);
  }

  /** Hears every state change of a long-lived plugin (e.g. `crash_loop`: a card for the owner). @returns unsubscribe. */
  onStatus(fn: (s: LongLivedStatus) => void): () => void {
    this.statusListeners.add(fn);
    return () => this.statusListeners.delete(fn);
  }

  /** The states of the long-lived plugins the host has met. */
  statuses(): LongLivedStatus[] {
    return [...new Set(Object.values(this.runnerOf))].flatMap((r) => r.statuses?.() ?? []);
  }

  /**
   * The tools of plugin `name`, by its kind's runner: from its manifest; for a sync/async manifest that lists none,
   * from `tools/list` (cached by digest); for mcp, from its server's `tools/list` after `tools_allowlist`. Runs plugin
   * code only in those two cases, only when asked (never on discovery), and — unless the owner trusts the plugin at
   * this digest (`trusted`) or runs it on purpose (`run`: `plugins inspect --run`, a call the hub allowed) — only in
   * the review sandbox (review.ts; issue 26 round 11, F5): a plugin that cannot answer there has its tools `unknown`,
   * with why.
   */
  async tools(name: string, opts: { run?: boolean; denied?: boolean } = {}): Promise<ToolsOutcome> {
    const a = active(this.registry.get(name));
    if (!a) return this.dataTools(name) ?? { ok: false, code: "tools.unknown_plugin", message: this.unknownPlugin(name) };
    const m = a.p.manifest;
    // A plugin the approvals deny whole is never run, not even to list its tools (hostile round 40, F40b-2).
    const asks = runners[m.plugin_type].tools(m);
    if (opts.denied === true && (asks === "asked" || asks === "server")) {
      return { ok: true, source: m.plugin_type === "mcp" ? "mcp" : "tools/list", tools: [], unknown: { why: t(this.lang, "tools.deniedNotAsked", { plugin: name }), pluginType: m.plugin_type } };
    }
    const run = opts.run === true || this.trusted(name, this.callDigest(a));
    const r = await this.runner(m).list(a, run ? "run" : "review");
    if (!r.ok && run) return r;
    if (!r.ok) {
      const why = t(this.lang, "tools.review.unknown", { plugin: name, error: r.message });
      return { ok: true, source: m.plugin_type === "mcp" ? "mcp" : "tools/list", tools: [], unknown: { why, pluginType: m.plugin_type } };
    }
    return {
      ok: true, source: r.source, ...(r.tools.length === 0 && runners[m.plugin_type].tools(m) === "any" ? { unknown: { why: null, pluginType: m.plugin_type } } : {}),
      tools: r.tools.map((tool) => ({ qualifiedName: `${a.p.name}.${tool.name}`, plugin: a.p.name, tool, pluginType: m.plugin_type, disableModelInvocation: m.capabilities.disable_model_invocation })),
    };
  }

  /**
   * The tools of every plugin in use; plugins whose tools cannot be had are listed with why. `denied` says which
   * plugins the approvals deny whole: those are not run to list their tools (`tools`).
   */
  async allTools(denied: (plugin: string) => boolean = () => false): Promise<{ tools: OfferedTool[]; problems: { plugin: string; message: string }[] }> {
    const tools: OfferedTool[] = [];
    const problems: { plugin: string; message: string }[] = [];
    // The plugins in use when asked, taken before the first await: a rescan meanwhile (the watcher's) makes new records.
    const names = this.registry.list().filter((rec) => this.registry.get(rec.name) === rec).map((rec) => rec.name);
    for (const name of names) {
      const r = await this.tools(name, { denied: denied(name) });
      if (r.ok) tools.push(...r.tools);
      else problems.push({ plugin: name, message: r.message });
      if (r.ok && r.unknown?.why) problems.push({ plugin: name, message: r.unknown.why });
    }
    for (const id of this.data?.pluginIds() ?? []) {
      // A tool plugin of the same name wins: the plugin layer shadows such a declarative plugin and reports the clash
      // (precedence.ts `kindClashes`); a catalog no registry overrules is passed over here the same way.
      if (this.registry.get(id)) continue;
      const r = this.dataTools(id);
      if (r?.ok) tools.push(...r.tools);
    }
    // By plugin name, each plugin's tools in their own order (the sort is stable).
    tools.sort((a, b) => a.plugin.localeCompare(b.plugin));
    return { tools, problems };
  }

  /** The data tools (kind `http`) of plugin `id`, or null when it offers none. */
  private dataTools(id: string): ToolsOutcome | null {
    const found = this.data?.toolsOf(id);
    if (!found) return null;
    return {
      ok: true, source: "manifest",
      tools: found.tools.map(({ name, description, parameters }) => ({
        qualifiedName: `${id}.${name}`, plugin: id, tool: { name, description, parameters }, pluginType: "http", disableModelInvocation: false,
      })),
    };
  }

  private unknownPlugin(name: string): string {
    const rec = this.registry.list().find((r) => r.name === name && r.status === "rejected");
    if (rec) return t(this.lang, "tools.call.rejected", { plugin: name, error: rec.errors[0] ?? "" });
    return this.data?.refusal(name) ?? t(this.lang, "tools.call.unknownPlugin", { plugin: name });
  }

  /**
   * The checks of a call of a data tool (kind `http`), as for any other call: the tool, then its arguments against its
   * `parameters`. Null when no data tool source knows the plugin.
   */
  private checkedData(qualifiedName: string, plugin: string, tool: string, args: unknown): Extract<Outcome, { status: "refused" }> | DataCall | null {
    const found = this.data?.toolsOf(plugin);
    const spec = found?.tools.find((x) => x.name === tool);
    if (!found || !spec) {
      const gone = this.data?.missing(qualifiedName) ?? null;
      if (gone !== null) return { status: "refused", code: "tools.definition_missing", message: gone };
      return found ? { status: "refused", code: "tools.unknown_tool", message: t(this.lang, "tools.call.unknownTool", { plugin, tool }) } : null;
    }
    const argsError = typeof args !== "object" || args === null || Array.isArray(args)
      ? t(this.lang, "field.type", { field: "arguments", type: "object" })
      : checkArguments(`${found.digest}\0${spec.name}`, spec.parameters, args, this.lang);
    if (argsError !== null) return { status: "refused", code: "tools.invalid_arguments", message: t(this.lang, "tools.call.arguments", { tool: qualifiedName, error: argsError }) };
    return { data: true, plugin, tool, digest: found.digest, timeoutMs: spec.timeoutMs, reach: spec.reach };
  }

  /**
   * Calls `<plugin>.<tool>` with `args`. Never throws. Refused (nothing started): a name that is not
   * `<plugin>.<tool>`, an unknown plugin or tool, arguments that are not an object or fail the tool's JSON Schema, a
   * sandbox that cannot be made, a service that is not running. The timeout is the caller's, else the manifest's
   * `communication.timeout_ms`, else 30 s (services: 5 min), at most one hour.
   */
  async call(qualifiedName: string, args: unknown, ctx: CallContext): Promise<CallOutcome> {
    const started = performance.now();
    let o = await this.dispatch(qualifiedName, args, ctx);
    // Whatever kind of tool answered, a result nobody could serialise does not leave the host.
    if (o.status === "ok") o = resultTooDeep(o.result, this.lang) ?? o;
    return { ...o, durationMs: Math.round(performance.now() - started) } as CallOutcome;
  }

  /**
   * The values of the hub's environment plugin `name` is given beyond the base list (env.ts `passedEnv`; issue 26
   * round 10): secrets of every run that may call it. [] for a plugin not in use.
   */
  passedValues(name: string): string[] {
    const m = this.registry.get(name)?.manifest;
    return m ? Object.values(passedEnv(this.settings.parentEnv, m)) : [];
  }

  /**
   * Checks a call of `<plugin>.<tool>` with `args` as `call` does before it starts anything: the name, the plugin, the
   * tool (asking the plugin for its tool list the first time when its manifest lists none), the arguments against the
   * tool's JSON Schema. Starts no tool. What a caller needs to have the call decided first (the hub's approvals: the
   * manifest digest, whether the plugin is built in, whether models may call the tool) comes with it. Never throws.
   * With `startPlugin: false` nothing of the plugin runs, not even its tool list: when only the plugin can say what its
   * tools are (an MCP server, a manifest that lists none and a list not asked yet) the answer is `toolChecked: false`
   * and the tool and arguments are left for a second check once the owner's approvals allowed the call (a `deny` must
   * not start the plugin: issue 16).
   */
  async check(qualifiedName: string, args: unknown, opts: { startPlugin?: boolean } = {}): Promise<CallCheck> {
    const c = await this.checked(qualifiedName, args, opts.startPlugin ?? true);
    if ("status" in c) return { ok: false, status: c.status, code: c.code, message: c.message };
    if ("data" in c) return { ok: true, plugin: c.plugin, tool: c.tool, digest: c.digest, builtIn: false, disableModelInvocation: false, pluginType: "http", timeoutMs: c.timeoutMs, toolChecked: true, binds: [], http: c.reach };
    const env = Object.keys(passedEnv(this.settings.parentEnv, c.a.p.manifest));
    return {
      ok: true, plugin: c.a.p.name, tool: c.tool, digest: envBoundDigest(c.a.digest, env), builtIn: c.origin === "builtin", ...(c.files ? { files: c.files } : {}),
      binds: shownBinds(bindsOf(c.a.p.manifest, c.a.p.dir, this.settings)), sandboxed: c.a.p.manifest.sandbox !== null, ...(env.length > 0 ? { env } : {}),
      ...(c.a.p.manifest.sandbox && c.a.p.manifest.sandbox.network !== "none" ? { sandboxNetwork: c.a.p.manifest.sandbox.network } : {}),
      disableModelInvocation: c.a.p.manifest.capabilities.disable_model_invocation, pluginType: c.a.p.manifest.plugin_type,
      timeoutMs: timeoutOf(c.a.p.manifest, undefined), toolChecked: c.toolChecked,
    };
  }

  /**
   * The checks of `check`, with what a call then runs: the plugin, its digest and origin, the tool's name and spec.
   * Without `startPlugin`, a tool list only the plugin can give is not asked for (`toolChecked: false`).
   */
  private async checked(qualifiedName: string, args: unknown, startPlugin = true, allowed = false): Promise<
    | Extract<Outcome, { status: "refused" | "error" }>
    | { a: ActivePlugin; files: string[] | null; origin: ToolPluginRecord["origin"]; tool: string; spec: ToolSpec | undefined; toolChecked: boolean }
    | DataCall
  > {
    const split = splitToolName(qualifiedName);
    if (!split) return { status: "refused", code: "tools.bad_name", message: t(this.lang, "tools.call.name", { name: qualifiedName }) };
    // Before anything recurses through them (the schema check, the digest, the plugin's own parser), of every kind.
    const error = argumentsBeyondLimits(args, this.lang);
    if (error !== null) {
      return { status: "refused", code: "tools.invalid_arguments", message: t(this.lang, "tools.call.arguments", { tool: qualifiedName, error }) };
    }
    const rec = this.registry.get(split.plugin);
    const a = active(rec);
    if (!a || !rec) {
      return this.checkedData(qualifiedName, split.plugin, split.tool, args) ?? { status: "refused", code: "tools.unknown_plugin", message: this.unknownPlugin(split.plugin) };
    }
    const { p, digest } = a;
    const m = p.manifest;
    const kind = runners[m.plugin_type];
    // Binds that would undo the sandbox refuse the call before anything of the plugin runs (issue 26 #3).
    const badBind = bindRefusal(p.name, bindsOf(m, p.dir, this.settings), this.lang);
    if (badBind) return { status: "refused", ...badBind };
    if (kind.allows && !kind.allows(m, split.tool)) {
      return { status: "refused", code: "tools.unknown_tool", message: t(this.lang, "tools.long.notAllowed", { plugin: p.name, tool: split.tool }) };
    }
    if (!this.runner(m).knows(a) && !startPlugin) return { a, files: rec.files, origin: rec.origin, tool: split.tool, spec: undefined, toolChecked: false };
    // Before the hub's decision, in review unless trusted; a call it allowed runs the plugin as its manifest says.
    const listed = await this.tools(p.name, { run: allowed });
    // A server that cannot be started is a refusal (nothing ran); a tool list that came back wrong is the plugin's error.
    if (!listed.ok) return { status: listed.code === "tools.unavailable" ? "refused" : "error", code: listed.code, message: listed.message };
    const spec = listed.tools.find((x) => x.tool.name === split.tool)?.tool;
    // Tools unknown in review: the tool and arguments are checked again once the hub allowed the call (`dispatch`).
    if (!spec && listed.unknown?.why) return { a, files: rec.files, origin: rec.origin, tool: split.tool, spec: undefined, toolChecked: false };
    if (!spec && kind.tools(m) !== "any") return { status: "refused", code: "tools.unknown_tool", message: t(this.lang, "tools.call.unknownTool", { plugin: p.name, tool: split.tool }) };
    const argsError = typeof args !== "object" || args === null || Array.isArray(args)
      ? t(this.lang, "field.type", { field: "arguments", type: "object" })
      : spec ? checkArguments(`${digest}\0${spec.name}`, spec.parameters, args, this.lang) : null;
    if (argsError !== null) return { status: "refused", code: "tools.invalid_arguments", message: t(this.lang, "tools.call.arguments", { tool: qualifiedName, error: argsError }) };
    return { a, files: rec.files, origin: rec.origin, tool: split.tool, spec, toolChecked: true };
  }

  /** Checks a call, then runs it by its plugin's kind: the one dispatch of every kind (runners.ts). */
  private async dispatch(qualifiedName: string, args: unknown, ctx: CallContext): Promise<Outcome> {
    // Every caller of `call` runs it after the hub's decision (an agent's call, the owner's, a workflow's step).
    // The plugin folders read again first: a change during the owner's answer counts now, not at the next scan.
    if (ctx.decidedDigest !== undefined) this.registry.rescan();
    const c = await this.checked(qualifiedName, args, true, true);
    if ("status" in c) return c;
    const now = "data" in c ? c.digest : this.callDigest(c.a);
    if (ctx.decidedDigest !== undefined && now !== ctx.decidedDigest) {
      return { status: "refused", code: "tools.changed", message: t(this.lang, "tools.call.changed", { tool: qualifiedName, decided: ctx.decidedDigest.slice(0, 12), now: now.slice(0, 12) }) };
    }
    if ("data" in c) return this.data!.call(c.plugin, c.tool, args as Record<string, unknown>, ctx);
    // Held since it changed (`follow`): this call, which the hub allowed at this version, starts it.
    if (this.held.delete(c.a.p.name)) await this.startLongLived(c.a.p.name);
    const m = c.a.p.manifest;
    return this.runner(m).call(c.a, c.tool, args as Record<string, unknown>, ctx, timeoutOf(m, ctx.timeoutMs));
  }

  /**
   * The health of every plugin folder found: manifest, entry point, sandbox, clashes (runs no plugin code).
   * `acrossKinds`: the plugin layer's clashes of other kinds (a declarative plugin a tool plugin here wins over).
   */
  diagnose(acrossKinds: readonly PluginClash[] = []): Promise<PluginDiagnosis[]> {
    return diagnose(this.registry, this.settings, acrossKinds);
  }

  /** Stops every long-lived plugin and every accepted async task's process; stops following the registry. */
  async close(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = null;
    const names = new Set(this.statuses().map((st) => st.plugin));
    await Promise.all([...names].map((n) => this.stopLongLived(n)));
    await Promise.all([...this.background].map((p) => p.end()));
    this.background.clear();
    // What outlived its plugin: a child in a session of its own, its parent gone (issue 26 round 10).
    if (this.settings.hostMark !== undefined) endOwn(this.settings.hostMark);
    try {
      if (this.socketDir !== null) rmdirSync(this.socketDir); // only when empty: each service's folder went as it stopped
    } catch {
      // never made, or not ours to empty
    }
  }
}
