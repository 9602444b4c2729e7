/**
 * Starting a plugin process (spec tool-plugins.md §2 entry_point, §7 sandbox): in its own process group, in the plugin
 * folder, with an allowlisted environment (for a sandboxed plugin set inside the sandbox only: bwrap itself runs with
 * the hub's minimal one, issue 26 round 5, F7); inside bubblewrap and its cgroup when the manifest has `[sandbox]` — and
 * never without them then: a missing bubblewrap or cgroup controller refuses the start, naming the fix. Its stdout is
 * cut into lines (bounded), its stderr goes to the log as `plugin.<name>` lines (bounded), and ending it ends its
 * whole process group and cgroup.
 */
import { hostMarkVariable } from "./orphans.js";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { existsSync, lstatSync, realpathSync } from "node:fs";
import { delimiter, join } from "node:path";
import { t, type Lang } from "../i18n/messages.js";
import { controllerLimitName, createCgroup, joinScript, neededControllers, type Cgroup, type CgroupSystem } from "./cgroup.js";
import { launcherEnv, pluginEnv, sandboxEnvArgs } from "./env.js";
import { bwrapArgv, probeBwrap, probeError, type HostBind } from "./sandbox.js";
import { pathInstalls, shownByRoot } from "./sandbox-root.js";
import { agentFoldersOf, bindCovering, checkBinds, within, type BindChecked } from "./binds.js";
import { checkDevice, deviceRefusalText, isDevicePath } from "./devices.js";
import { autoloopFolders, userHomes } from "../worker/sandbox.js";
import { hubCodeFolders, hubOrigin } from "../worker/hub-code.js";
import { knownHomes } from "../worker/known-homes.js";
import { bindGuards } from "../worker/steering.js";
import { forgetWatch, plantedInBinds, recordWatch, uncheckedBind, type BindWatch } from "./bind-check.js";
import { aliasesOfAll, otherProcMounts, readMounts, type MountEntry } from "../common/mounts.js";
import { realPathOr } from "../common/file-checks.js";
import { tsxCacheDir } from "../common/tsx-cache.js";
import { engineDir } from "../common/paths.js";
import { importConfinementEnv } from "../plugins/import-variables.cjs";
import { importRefusedText } from "../plugins/import-confinement.js";
import { foreignPlaceAbove, npmConfigOutside } from "./places-above.js";
import { descendantsOf, processStart, sameGroup, sameProcessStart, type ProcStat } from "../common/proc.js";
import { bwrapSetupFailed, closeBindSources, openBindSources, watchBwrapStatus } from "../common/bwrap.js";
import { logLineMaxChars, longLivedStderrLogMaxBytes, pipeCloseWaitMs, stderrLogMaxBytes, stdoutLineMaxBytes, stdoutMaxBytes } from "./limits.js";
import { manifestLink } from "./manifest.js";
import type { CodeFoldersSeen, Manifest } from "./types.js";

/** Where the host's processes come from: settings shared by every launch. */
export interface LaunchSettings {
  lang: Lang;
  /** The bubblewrap program (a path, or a name looked up in PATH). */
  bwrap: string;
  /**
   * Host paths a sandbox must not see (the hub's home with its keys). The hub user's home is hidden besides
   * (`userHomes` and the caller's HOME), but for the installs of the programs on its PATH (issue 26).
   */
  hidden: string[];
  cgroups: CgroupSystem;
  /** The environment allowlisted names are read from. */
  parentEnv: NodeJS.ProcessEnv;
  /**
   * The folders plugins are loaded from (the registry's roots: built-in, the home's, `serve --plugins`): no writable
   * bind may lie in or hold one (issue 26 round 5, F1). Default: none.
   */
  pluginRoots?: readonly string[];
  /**
   * What other starts of the hub of this home ran or loaded code from, and their users' homes, as `serve` recorded
   * them (host/code-folders.ts; issue 26 round 6: `plugins invoke` in a CLI whose PATH, HOME and plugin roots differ
   * from the hub's checked binds against its own view only). Checked besides this process's own. Default: none.
   */
  seen?: CodeFoldersSeen;
  /** Receives each log line: `subsystem` is `plugin.<name>`. */
  log: (subsystem: string, line: string) => void;
  /**
   * The host's mark (orphans.ts), put in the environment of every plugin process it starts, for the clean-up at the
   * next start and at its stop (issue 26 round 10). Default: none.
   */
  hostMark?: string;
  /** Whether rules.json's approvals deny plugin `name` whole: then no process of it starts — a restart either (round 57, F57a-3). */
  denied?: (name: string) => boolean;
}

/** One plugin to start. `tag` makes its cgroup name unique. */
export interface LaunchRequest {
  name: string;
  dir: string;
  manifest: Manifest;
  tag: string;
  hostEnv?: Record<string, string>;
  hostBinds?: HostBind[];
}

/** A start refused before anything ran: `code` is a `tools.*` string, `message` names the fix. */
export interface LaunchRefusal {
  code: string;
  message: string;
}

/**
 * What a launch runs: the argv, working directory, environment, its cgroup (when the sandbox limits anything), and
 * the open bind sources of its sandbox (descriptors of this process, given to the child as 3, 4, …; sandbox.ts
 * `bwrapArgv`), which `PluginProcess` closes once it has spawned the child.
 */
export interface Launch {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  cgroup: Cgroup | null;
  fds?: number[];
  /**
   * What bwrap reads from its `--args` descriptor (the one after the bind sources): the plugin's environment, set
   * inside the sandbox only (`sandboxEnvArgs`); `env` is then the hub's minimal one (`launcherEnv`).
   */
  args?: Buffer;
  /** Whether bwrap reports its status on the descriptor after the `--args` one (sandbox.ts `SandboxPlan.status`). */
  status?: boolean;
  /** The writable folder binds to look through after the plugin wrote them (bind-check.ts; issue 26 round 57). */
  watch?: BindWatch;
}

/** The catalog text of each way a bind is refused at start (binds.ts). */
const bindRefusalText = {
  missing: "tools.sandbox.bindMissing", root: "tools.sandbox.bindRoot", proc: "tools.sandbox.bindProc", userHome: "tools.sandbox.bindUserHome",
  homeDotFolder: "tools.sandbox.bindHomeDotFolder", hidden: "tools.sandbox.bindHidden", ownFolder: "tools.sandbox.bindOwnFolder", system: "tools.sandbox.bindSystem", hubCode: "tools.sandbox.bindHubCode",
  socketFolder: "tools.sandbox.bindSocketFolder", socketUnread: "tools.sandbox.bindSocketUnread", agentLink: "tools.sandbox.bindAgentLink",
} as const;

/**
 * The binds of a sandboxed manifest as they really are (issue 26 #3 and round 5: real paths, refused or broad),
 * checked against the host's hidden paths, the homes of the hub's user (`homesOf`) and the folders the hub runs or
 * loads code from (the engine, node, the PATH folders of this process and of the plugins, the plugin roots, and what
 * other starts of the hub recorded: `seen`). Empty without `[sandbox]`.
 */
export function bindsOf(m: Manifest, dir: string, s: Pick<LaunchSettings, "hidden" | "parentEnv" | "pluginRoots" | "seen">): BindChecked[] {
  if (!m.sandbox) return [];
  const hubCode = () => {
    const origin = hubOrigin();
    const path = [origin.path, s.parentEnv.PATH ?? ""].filter(Boolean).join(delimiter);
    return [...new Set([...hubCodeFolders({ ...origin, path }, s.pluginRoots ?? []), ...(s.seen?.folders ?? [])])];
  };
  const mounts = readMounts();
  return checkBinds(m.sandbox, dir, { hidden: hiddenOf(s, mounts), userHomes: homesOf(s, mounts), hubCode, mounts, runtimeDir: s.parentEnv.XDG_RUNTIME_DIR, agentFolders: agentFoldersOf(s.hidden) });
}

/**
 * What a plugin's sandbox hides: the host's hidden paths, every folder of the engine in the user's homes (other homes,
 * backups), every home this user's hubs have (worker/known-homes.ts; issue 26 round 10, Medium 7), each also by every
 * other path that shows it (another mount of a folder holding it: src/common/mounts.ts; High 2), every second proc
 * mount (Medium 3), and tsx's compile cache (the home's TypeScript plugins compiled: round 41, F41b-3).
 */
function hiddenOf(s: Pick<LaunchSettings, "hidden" | "parentEnv" | "seen">, mounts: readonly MountEntry[]): string[] {
  const users = userHomes([s.parentEnv.HOME, ...(s.seen?.homes ?? [])]);
  const real = (p: string) => realPathOr(p, p);
  const hidden = [...s.hidden.map(real), ...autoloopFolders(users), ...knownHomes(users).map(real).filter((h) => !users.some((u) => within(u, h))), real(tsxCacheDir())];
  return [...new Set([...hidden, ...aliasesOfAll(hidden, mounts), ...otherProcMounts(mounts)])];
}

/**
 * The homes of the hub's user a sandbox hides and no bind may hold: this process's, its HOME's, the recorded ones,
 * each also by every other path that shows it.
 */
function homesOf(s: Pick<LaunchSettings, "parentEnv" | "seen">, mounts: readonly MountEntry[]): string[] {
  const homes = userHomes([s.parentEnv.HOME, ...(s.seen?.homes ?? [])]);
  return [...homes, ...aliasesOfAll(homes, mounts)];
}

/** The refusal of the first refused bind (`tools.bind_missing` or `tools.bind_refused`), or null. */
export function bindRefusal(plugin: string, binds: readonly BindChecked[], lang: Lang): LaunchRefusal | null {
  const bad = binds.find((b) => b.refused !== null);
  if (!bad?.refused) return null;
  if (bad.refused === "socket") {
    return { code: "tools.bind_refused", message: t(lang, "tools.sandbox.bindSocket", { plugin, path: bad.source, socket: bad.socket ?? bad.source }) };
  }
  if (bad.refused === "socketScan") {
    return { code: "tools.bind_refused", message: t(lang, "tools.sandbox.bindSocketScan", { plugin, path: bad.source, limit: bad.limit ?? 0 }) };
  }
  if (bad.refused === "device") {
    return { code: "tools.device_refused", message: t(lang, "tools.sandbox.deviceRefused", { plugin, path: bad.source, why: deviceRefusalText(lang, bad.device ?? "notPassable") }) };
  }
  return { code: bad.refused === "missing" ? "tools.bind_missing" : "tools.bind_refused", message: t(lang, bindRefusalText[bad.refused], { plugin, path: bad.source, folder: bad.folder ?? "" }) };
}

/**
 * Builds the command line of a plugin process (sandbox and cgroup when the manifest asks). Makes the cgroup.
 * Refused before anything runs: no bubblewrap, a bind that is missing or would undo the sandbox (binds.ts), a device
 * bind the policy does not pass (src/kernel/devices.ts, `tools.device_refused` with the reason), no cgroup controller
 * for a limit.
 */
export async function prepareLaunch(req: LaunchRequest, s: LaunchSettings): Promise<{ ok: true; launch: Launch } | { ok: false; refusal: LaunchRefusal }> {
  const m = req.manifest;
  if (s.denied?.(req.name)) return { ok: false, refusal: { code: "tools.denied", message: t(s.lang, "tools.longLived.denied", { plugin: req.name }) } };
  const mark: Record<string, string> = s.hostMark === undefined ? {} : { [hostMarkVariable]: s.hostMark };
  const env = pluginEnv(s.parentEnv, m, req.hostEnv);
  const direct = [m.entry_point.command, ...m.entry_point.args];
  // Without a sandbox the plugin runs as the hub's user with its manifest's environment, loader variables included:
  // its code runs with the hub's rights anyway, and its manifest is part of what "always allow" trusts. The host's
  // mark goes to it and to bwrap, not into a sandbox (which ends with bwrap; the mark names the home).
  if (!m.sandbox) {
    const dir = realPathOr(req.dir, req.dir);
    const engine = realPathOr(engineDir, engineDir);
    const above = foreignPlaceAbove(dir, engine);
    if (above !== null) return { ok: false, refusal: { code: "tools.path_refused", message: t(s.lang, "tools.foreignAbove", { plugin: req.name, path: above }) } };
    const npmrc = npmConfigOutside(dir);
    if (npmrc !== null) return { ok: false, refusal: { code: "tools.path_refused", message: t(s.lang, "tools.npmrcOutside", { plugin: req.name, setting: npmrc }) } };
    // What its Node code imports stays inside its folder (hostile round 43, F43b-1: a package.json an agent wrote in
    // the user's home, named like a package the plugin imports, ran in a plugin trusted by "always allow").
    const confined = importConfinementEnv(dir, importRefusedText(s.lang), engine, env.NODE_OPTIONS);
    return { ok: true, launch: { argv: direct, cwd: req.dir, env: { ...env, ...confined, ...mark }, cgroup: null } };
  }
  const args = sandboxEnvArgs(env);
  if (args === null) return { ok: false, refusal: { code: "tools.env_refused", message: t(s.lang, "tools.sandbox.envNul", { plugin: req.name }) } };
  const outer = { ...launcherEnv(s.parentEnv), ...mark };
  const link = manifestLink(req.dir);
  if (link) return { ok: false, refusal: { code: "tools.manifest_link", message: t(s.lang, "tools.sandbox.manifestLink", { plugin: req.name, path: link }) } };
  const probe = await probeBwrap(s.bwrap);
  if (!probe.ok) return { ok: false, refusal: { code: "tools.sandbox_unavailable", message: t(s.lang, "tools.sandbox.noBwrap", { plugin: req.name, error: probeError(probe, s.lang) }) } };
  const binds = bindsOf(m, req.dir, s);
  const refused = bindRefusal(req.name, binds, s.lang);
  if (refused) return { ok: false, refusal: refused };
  // Host devices go in with --dev-bind, when the policy lets them through (issue 26, finding 15).
  const devices = new Map<string, string>();
  for (const b of binds) {
    if (!isDevicePath(b.source)) continue;
    const checked = checkDevice(b.source);
    if (!checked.ok) return { ok: false, refusal: { code: "tools.device_refused", message: t(s.lang, "tools.sandbox.deviceRefused", { plugin: req.name, path: b.source, why: deviceRefusalText(s.lang, checked.why) }) } };
    devices.set(b.source, checked.real);
  }
  // Only the system folders are taken from the host (sandbox-root.ts; issue 26 #13, round 12 F12-6), and the installs
  // of the programs on PATH outside them; a plugin's binds may show parts of the home again on purpose.
  const table = readMounts();
  const homes = homesOf(s, table);
  const checked = hiddenOf(s, table);
  // The hub's own PATH, never the plugin's (`[entry_point.env]`): one naming ~/.ssh had it shown (round 13, F13-3).
  const shown = pathInstalls(s.parentEnv.PATH ?? "", homes, checked.map((h) => (existsSync(h) ? realpathSync.native(h) : h)));
  const covering = bindCovering(binds.filter((b) => !within(b.source, realPathOr(req.dir, req.dir))), shown); // a PATH install covered by a bind not of the plugin (F37b-4)
  if (covering) return { ok: false, refusal: { code: "tools.bind_refused", message: t(s.lang, "tools.sandbox.bindCovers", { plugin: req.name, path: covering.container }) } };
  // What lies outside the root's system folders is not there unless something shown holds it; the binds that passed
  // hold no hidden path. The host's own hidden paths stay.
  const own = s.hidden.map((h) => realPathOr(h, h));
  const held = [...shown, ...(req.hostBinds ?? []).map((b) => realPathOr(b.path, b.path))];
  const hidden = checked.filter((h) => own.includes(h) || shownByRoot(h) || held.some((d) => within(h, d)));
  // The real sources are bound, not the paths as written, and by descriptor (issue 26 round 2, findings 3 and 4): each
  // is opened here and kept only when the file opened is the one checked, so no link swapped in later is followed.
  const mounts = binds.map((b) => ({ host: b.source, relative: false, container: b.container, readOnly: b.readOnly }));
  // A path whose links cannot be resolved stays as it is (then opening it fails, saying so).
  const hostBinds = (req.hostBinds ?? []).map((b) => ({ path: realPathOr(b.path, b.path), at: b.at ?? b.path }));
  const guards = bindGuards(binds.filter((b) => !b.readOnly && !devices.has(b.source)), s.lang);
  if (!guards.ok) return { ok: false, refusal: { code: "tools.bind_refused", message: guards.message } };
  const guarded = guards.guarded;
  const unchecked = uncheckedBind(s.hidden[0] ?? null, req.name, guards.folders, s.lang);
  if (unchecked) return { ok: false, refusal: { code: "tools.bind_refused", message: unchecked } };
  const planned: BindWatch | null = guards.folders.length ? { folders: guards.folders, guarded: guarded.map((g) => g.path), seen: guards.seen, sinceMs: Date.now() } : null;
  const { argv: sandboxed, sources } = bwrapArgv({ bwrap: s.bwrap, sandbox: { ...m.sandbox, mounts }, pluginDir: realPathOr(req.dir, req.dir), hidden, homes, shown, devices, hostBinds, guarded, argv: direct, envArgs: true, status: true });
  const opened = openBindSources(sources);
  if ("problem" in opened) {
    const { path, problem } = opened;
    if (problem.why === "missing") return { ok: false, refusal: { code: "tools.bind_missing", message: t(s.lang, "tools.sandbox.bindMissing", { plugin: req.name, path }) } };
    return { ok: false, refusal: { code: "tools.bind_refused", message: t(s.lang, "tools.sandbox.bindChanged", { plugin: req.name, path, now: problem.now }) } };
  }
  const fds = opened.fds;
  const watch = planned ? recordWatch(s.hidden[0] ?? null, req.name, req.tag, planned) : undefined;
  const limits = { memoryBytes: m.sandbox.memoryBytes, cpus: m.sandbox.cpus, pids: m.sandbox.pids };
  if (neededControllers(limits).length === 0) return { ok: true, launch: { argv: sandboxed, cwd: req.dir, env: outer, cgroup: null, fds, args, status: true, watch } };
  const made = createCgroup(`${req.name}-${req.tag}`, limits, s.cgroups);
  if (!made.ok) {
    closeBindSources(fds);
    if (watch) forgetWatch(watch);
    const { controller, error } = made.failure;
    return { ok: false, refusal: { code: "tools.cgroup_unavailable", message: t(s.lang, "tools.sandbox.noCgroup", { plugin: req.name, what: controllerLimitName[controller], controller, error }) } };
  }
  // The shell keeps the descriptors as they are (3, 4, …) through its `exec` of bwrap.
  const argv = ["/bin/sh", "-c", joinScript, "sh", ...made.cgroup.procsFiles, "--", ...sandboxed];
  return { ok: true, launch: { argv, cwd: req.dir, env: outer, cgroup: made.cgroup, fds, args, status: true, watch } };
}

/** Why stdout was cut off: one line too long, or too much output in all. */
export type StdoutOverflow = "line" | "total";

/** How a process ended. */
export interface ProcessExit {
  code: number | null;
  signal: string | null;
}

/**
 * A running plugin process. Lines of stdout go to `onLine` until `stopReading()`; an overflow goes to `onOverflow` once
 * and stops reading. `exited` resolves when the main process ends; `end()` kills the group and removes the cgroup.
 */
export class PluginProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly exited: Promise<ProcessExit>;
  /** Resolves when stdout and stderr are closed (every process holding them is gone). */
  readonly closed: Promise<void>;
  readonly spawnError: Promise<Error>;
  /**
   * Resolves once the process ended: true when it was a sandboxed launch bwrap ended before the plugin's program ran
   * (the sandbox could not be set up; nothing of the plugin ran, so a caller may prepare it again and start once more).
   */
  readonly setupFailed: Promise<boolean>;
  onLine: (line: string) => void = () => {};
  onOverflow: (kind: StdoutOverflow) => void = () => {};
  private reading = true;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private totalBytes = 0;
  private stderrBytes = 0;
  private stderrRest = "";
  private ended = false;
  /** Descendants seen so far (found through their parents), including those that left the process group: pid → start. */
  private known = new Map<number, string>();
  /**
   * The start time of the group's leader (this child), read before the child can be reaped: a signal to the group
   * after the child ended goes nowhere when its number now names another process (proc.ts `sameGroup`).
   */
  private readonly leaderStart: string;

  /**
   * @param longLived a service or MCP server: its stdout has no total bound (only per line), and its stderr budget is
   *   `longLivedStderrLogMaxBytes` for its whole life.
   */
  constructor(readonly launch: Launch, readonly name: string, private readonly s: LaunchSettings, private readonly longLived = false) {
    // detached: a process group of its own, so a timeout can end the plugin and everything it started. The sandbox's
    // bind sources follow stdio (3, 4, …); bwrap has its copies once spawned, this process keeps none.
    // The sandboxed program's environment follows them, on a pipe bwrap reads to its end (`--args`).
    const fds = launch.fds ?? [];
    try {
      this.child = spawn(launch.argv[0]!, launch.argv.slice(1), { cwd: launch.cwd, env: launch.env, detached: true, stdio: ["pipe", "pipe", "pipe", ...fds, ...(launch.args ? ["pipe" as const] : []), ...(launch.status ? ["pipe" as const] : [])] }) as ChildProcessWithoutNullStreams;
    } finally {
      closeBindSources(fds);
    }
    if (launch.args) {
      const pipe = this.child.stdio[3 + fds.length] as Writable | null;
      pipe?.on("error", () => {}); // bwrap gone before reading it: its exit says why
      pipe?.end(launch.args);
    }
    // Read in the same turn as the spawn: Node reaps an exited child only when the event loop turns.
    this.leaderStart = this.child.pid === undefined ? "" : processStart(this.child.pid);
    this.spawnError = new Promise((r) => this.child.once("error", r));
    this.exited = new Promise((r) => this.child.once("exit", (code, signal) => r({ code, signal })));
    const status$ = launch.status ? (this.child.stdio[3 + fds.length + (launch.args ? 1 : 0)] as Readable | null) : null;
    const status = status$ ? watchBwrapStatus(status$, this.exited) : null;
    // Ended by this host (a timeout, a stop) before it exited: no case of a sandbox that could not be set up.
    const endedByUs = new Promise<boolean>((r) => this.child.once("exit", () => r(this.ended)));
    // A spawn that failed (ENOENT) has no exit: no sandbox was set up either.
    const setup = status ? Promise.all([this.exited, endedByUs, status.closed]).then(([x, ours]) => !ours && bwrapSetupFailed(status.status, x)) : Promise.resolve(false);
    this.setupFailed = Promise.race([setup, this.spawnError.then(() => false)]);
    // Once the sandbox is gone, what it left in its writable binds is looked at (bind-check.ts).
    this.closed = new Promise<void>((r) => this.child.once("close", () => r())).then(() => void this.checkBinds(true));
    this.child.stdin.on("error", () => {}); // a plugin that exits without reading its input
    this.child.stdout.on("data", (d: Buffer) => this.stdout(d));
    this.child.stderr.on("data", (d: Buffer) => this.stderr(d));
    this.child.stderr.on("end", () => this.flushStderr());
  }

  /** Looks through the writable binds (bind-check.ts `plantedInBinds`); none without. A long-lived plugin's after each call. */
  checkBinds(final = false): void {
    if (!this.launch.watch) return;
    plantedInBinds(this.launch.watch, this.name, this.s.hidden[0] ?? null, this.s.lang, this.s.log);
    if (final) forgetWatch(this.launch.watch); // its record is kept until the check after the process ended
  }

  get pid(): number | null {
    return this.child.pid ?? null;
  }

  /** Writes one line to stdin. */
  write(line: string): void {
    if (!this.child.stdin.destroyed) this.child.stdin.write(line + "\n");
  }

  /** Closes stdin (end of input). */
  endInput(): void {
    if (!this.child.stdin.destroyed) this.child.stdin.end();
  }

  /** Stops delivering stdout lines; what follows is read and dropped (so the plugin never blocks on a full pipe). */
  stopReading(): void {
    this.reading = false;
    this.pending = [];
  }

  /** Signals the whole process group (ignored once it is gone, or when its number names another group now). */
  signal(sig: NodeJS.Signals): void {
    if (this.child.pid === undefined || !sameGroup(this.child.pid, this.leaderStart)) return;
    try {
      process.kill(-this.child.pid, sig);
    } catch {
      // the group is gone
    }
  }

  /** Whether the kernel's OOM killer ended a process of its cgroup. */
  oomKilled(): boolean {
    return this.launch.cgroup?.oomKilled() ?? false;
  }

  /**
   * Notes the descendants living now, so that `end()` reaches them even if they left the process group (setsid) and
   * their parent is gone by then. Outside a sandbox this is the only way to find them; inside one, the sandbox's pid
   * namespace and cgroup end them anyway.
   */
  noteDescendants(): void {
    for (const p of this.descendants()) this.known.set(p.pid, p.start);
  }

  /** The child's descendants now; none once the child is gone (its number may name a stranger by then). */
  private descendants(): ProcStat[] {
    const pid = this.child.pid;
    if (pid === undefined || this.leaderStart === "" || !sameProcessStart(pid, this.leaderStart)) return [];
    return descendantsOf(pid);
  }

  /**
   * SIGKILLs the group and every descendant noted or found now, empties and removes the cgroup, and waits for the
   * pipes to close — at most `pipeCloseWaitMs`: a process that escaped everything must not hold the call. Idempotent.
   */
  async end(): Promise<void> {
    if (!this.ended) {
      this.ended = true;
      // Frozen first, then found, then killed: a process that forks between a look and the kill would escape (seen in
      // a full run: a setsid child started as the call timed out). A stopped process forks no more, so a few looks,
      // each stopping what it finds, reach every descendant there is.
      this.signal("SIGSTOP");
      for (const [pid, start] of this.known) signalPid(pid, start, "SIGSTOP");
      for (let look = 0; look < endLooksMax; look++) {
        const fresh = this.descendants().filter((p) => !this.known.has(p.pid));
        if (fresh.length === 0) break;
        for (const p of fresh) {
          this.known.set(p.pid, p.start);
          signalPid(p.pid, p.start, "SIGSTOP");
        }
      }
      this.signal("SIGKILL");
      for (const [pid, start] of this.known) signalPid(pid, start, "SIGKILL");
      await this.launch.cgroup?.destroy();
    }
    // A process that never started has no pipes to wait for.
    if (this.child.pid === undefined) return;
    const waited = await Promise.race([this.closed.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), pipeCloseWaitMs).unref())]);
    if (!waited) {
      this.child.stdout.destroy();
      this.child.stderr.destroy();
    }
  }

  private stdout(d: Buffer): void {
    this.totalBytes += d.length;
    if (!this.reading) return;
    if (!this.longLived && this.totalBytes > stdoutMaxBytes) return this.overflow("total");
    let start = 0;
    for (let i = d.indexOf(10); i >= 0; i = d.indexOf(10, start)) {
      const line = Buffer.concat([...this.pending, d.subarray(start, i)]).toString("utf8");
      this.pending = [];
      this.pendingBytes = 0;
      start = i + 1;
      this.onLine(line);
      if (!this.reading) return;
    }
    if (start < d.length) {
      this.pending.push(d.subarray(start));
      this.pendingBytes += d.length - start;
      if (this.pendingBytes > stdoutLineMaxBytes) this.overflow("line");
    }
  }

  private overflow(kind: StdoutOverflow): void {
    this.stopReading();
    this.onOverflow(kind);
  }

  private stderr(d: Buffer): void {
    const max = this.longLived ? longLivedStderrLogMaxBytes : stderrLogMaxBytes;
    if (this.stderrBytes > max) return;
    this.stderrBytes += d.length;
    const text = this.stderrRest + d.toString("utf8");
    const lines = text.split("\n");
    this.stderrRest = lines.pop() ?? "";
    for (const l of lines) this.logLine(l);
    if (this.stderrBytes > max) {
      this.stderrRest = "";
      this.s.log(`plugin.${this.name}`, t(this.s.lang, "tools.call.stderrCut", { limit: max }));
    }
  }

  private flushStderr(): void {
    if (this.stderrRest) this.logLine(this.stderrRest);
    this.stderrRest = "";
  }

  private logLine(line: string): void {
    const l = line.replace(/\r$/, "");
    if (l.trim() === "") return;
    this.s.log(`plugin.${this.name}`, [...l].length > logLineMaxChars ? [...l].slice(0, logLineMaxChars).join("") + "…" : l);
  }
}

/** Sends `sig` to process `pid`, if it is still the process that started at `start` (not a later one with its number). */
function signalPid(pid: number, start: string, sig: NodeJS.Signals): void {
  if (!sameProcessStart(pid, start)) return;
  try {
    process.kill(pid, sig);
  } catch {
    // gone already
  }
}

/** How many times `end()` looks for descendants of a frozen plugin (each look stops what it finds). */
const endLooksMax = 8;
