/**
 * The sandbox of one launch of an agent (sandbox.ts builds the bubblewrap argv from it): what the agent may write,
 * what it may see of the worker's home, which devices it gets; or why the launch is refused.
 */
import { existsSync, mkdirSync } from "node:fs";
import { uncheckedHolding } from "./unchecked.js";
import { homedir } from "node:os";
import { dirname, relative, resolve } from "node:path";
import type { Job } from "../protocol/responses.js";
import type { PluginLoader } from "../plugins/index.js";
import type { Home } from "../common/paths.js";
import { gitPrivateDir } from "./git-isolated.js";
import { gitStateAt } from "./git-state.js";
import { inGitFolder, linkInAgentFolder, readAgentFolders, recordAgentFolders } from "./agent-folders.js";
import { autoloopFolders, expandTilde, isInside, placeProblem, realPath, sandboxHere, userHomes, type SandboxPlan } from "./sandbox.js";
import { hubCodeFolders, hubCodeProblem, hubOrigin, lookupPlaceProblem, readOnlyPaths, unsandboxedCode } from "./hub-code.js";
import { sharedStoreParts } from "./shared-stores.js";
import { checkDevice, deviceRefusalText } from "../tools/devices.js";
import { aliasesOf, aliasesOfAll, kernelFsTypes, kernelMountsAt, mountOf, otherProcMounts, readMounts, type MountEntry } from "../common/mounts.js";
import { knownHomes } from "./known-homes.js";
import type { AgentPlugin, Turn } from "../sdk/index.js";
import { t, type Lang } from "../i18n/messages.js";
import { createNewFile } from "./files.js";
import { ConfigPass } from "./git-config.js";
import { hardLinked, hardLinkEntriesMax } from "./hard-links.js";
import { executableParts, GuardLimitError, guardLimits, guardLimitText, noneSeen, type Guarded } from "./steering.js";
import { homeView, runtimeView, showProgram } from "./home-view.js";
import { stateView } from "./state-steering.js";
import { StateLimitError, stateLimits, stateLimitText, stateSeenAt, type StateSeen } from "./state-planted.js";
import { loopbackPortsIn, sandboxNetwork } from "./sandbox-network.js";

/**
 * The sandbox around a launch as its plugin is told (`Turn.sandbox`): `none` without one; `closed` when the worker
 * runs as root — the sandbox drops every capability, so a user namespace made inside it cannot map root's ids
 * (bubblewrap 0.8 inside it: "setting up uid map: Operation not permitted", as Codex 0.171.0's sandbox says there) and a CLI
 * cannot sandbox its commands there; else `nestable` (an ordinary user maps its own id without a capability).
 * @param uid the worker's user id (`process.getuid()`; -1 where there is none: Windows).
 */
export function sandboxAround(plan: SandboxPlan | null, uid: number = process.getuid?.() ?? -1): NonNullable<Turn["sandbox"]> {
  if (!plan) return "none";
  return uid === 0 ? "closed" : "nestable";
}

/**
 * The kernel file system (`kernelFsTypes`: proc, sysfs, cgroup, debugfs, …) `path` lies on, named by its mount point
 * and type, or null: an agent writing there changes the kernel's state (as root, sysfs and cgroup files obey file
 * permissions only), and a second proc mount shows every process of the computer. One a folder only holds is covered
 * instead (`heldKernelMounts`, `otherProcMounts`).
 */
function kernelProblem(path: string, mounts: readonly MountEntry[]): { folder: string; fs: string } | null {
  const on = mountOf(path, mounts);
  return on && kernelFsTypes.has(on.fsType) ? { folder: on.at, fs: on.fsType } : null;
}

/**
 * The mounts of kernel file systems other than proc inside the folders `kept` (which the sandbox binds writable, with
 * what is mounted under them): bound read-only over themselves. A proc mount there is hidden (`otherProcMounts`).
 */
function heldKernelMounts(kept: readonly string[], mounts: readonly MountEntry[]): string[] {
  return [...new Set(kept.flatMap((w) => kernelMountsAt(w, mounts).filter((k) => k.fsType !== "proc" && k.at !== w).map((k) => k.at)))];
}

/** What a launch's sandbox needs of its worker. */
export interface SandboxWorker {
  home: Home;
  lang: Lang;
  /** The worker's name (in refusals). */
  name: string;
  /** Finds an agent plugin's file (its folder is shown read-only when it lies in the home). */
  plugins: PluginLoader;
  /** Bubblewrap cannot run here (`why`): agents run without a sandbox; the worker says so once. */
  sandboxOff(why: string): void;
  /** Sandboxed agents share the computer's network here (`why`: no pasta); the worker says so once. */
  networkShared?(why: string): void;
  /** The hub's address as the worker reaches it: its port on this computer's loopback is never forwarded (F39a-4). */
  hubUrl?: string;
}

/**
 * The sandbox of a launch (sandbox.ts): the worker's home hidden, the agent's folder (and its plugin's, when
 * installed in the home) shown read-only; writable only the cwd (unless it is the hub user's home), its own
 * temporary folders (TMPDIR=/tmp in `env`), the plugin's state and the agent's `writable` (the cwd stays read-only for `access: "read"`); the agent's `devices` passed through. None when the agent
 * says `"sandbox": false` or bubblewrap cannot run here (said once in the log). Refused, saying why: a cwd inside
 * the worker's home (it cannot be hidden and shown at once), a cwd that holds the hub user's home or lies in a
 * read-only folder, a `writable` entry that is missing or lies in such places, a device the sandbox does not pass, a
 * folder too big to guard (steering.ts `GuardLimits`: its folders, the entries they hold) or a CLI state whose top
 * or memory is too big to look through (state-planted.ts `StateLimits`) — each refused once its limit is read past. `stateSeen`: what the check after the run compares the CLI's state with.
 * @throws what the plugin's `state` throws.
 */
export function launchSandbox(worker: SandboxWorker, job: Job, turn: Turn, plugin: AgentPlugin, env: Record<string, string>): { plan: SandboxPlan | null; stateSeen?: StateSeen } | { error: string } {
  if (job.agent.sandbox === false) return { plan: null };
  const here = sandboxHere(process.platform, process.env.PATH ?? "", worker.lang);
  if ("off" in here) {
    worker.sandboxOff(here.off);
    return { plan: null };
  }
  const home = realPath(worker.home.dir);
  const cwd = realPath(turn.cwd);
  // Places by what they are, not by their paths (issue 26 round 10): every other path that shows the home, a home of
  // the user or a read-only folder (another mount of a folder holding it) counts as that place.
  const mounts = readMounts();
  const hubAliases = aliasesOf(home, mounts);
  const cwdPaths = [cwd, ...aliasesOf(cwd, mounts)];
  const inHome = [home, ...hubAliases].find((h) => cwdPaths.some((c) => isInside(c, h)));
  if (inHome) {
    return { error: t(worker.lang, "sandbox.cwdInHome", { cwd: turn.cwd, home: inHome, agent: job.agent.id }) };
  }
  const lang = worker.lang;
  const agent = job.agent.id;
  const userHomeList = userHomes();
  const homes = [...userHomeList, ...aliasesOfAll(userHomeList, mounts)];
  const held = homes.find((h) => cwdPaths.some((c) => h !== c && isInside(h, c)));
  if (held) return { error: t(lang, "sandbox.cwdHoldsHome", { cwd: turn.cwd, home: held, agent }) };
  // This engine's other folders (backups, other homes) are places like the home: no cwd or writable folder lies in
  // one, since a folder an agent writes is shown, not hidden (issue 26 round 25, F25a-2: a cwd in the backups folder).
  const engineElsewhere = [...new Set([...autoloopFolders(homes), ...knownHomes(userHomeList).map(realPath)])].filter((d) => d !== home);
  const inEngine = engineElsewhere.find((d) => cwdPaths.some((c) => isInside(c, d)));
  if (inEngine) return { error: t(lang, "sandbox.cwdInHome", { cwd: turn.cwd, home: inEngine, agent }) };
  const cwdLed = ledAway(turn.cwd, cwd, homes, env.HOME || homedir());
  if (cwdLed) return { error: t(lang, "sandbox.ledAway", { path: turn.cwd, agent, real: cwdLed }) };
  // No folder a rule names is reached through a link an agent may have made, nor is a git folder (round 26).
  const agentFolders = readAgentFolders(worker.home.dir);
  const crossed = (named: string, path: string) => {
    const via = linkInAgentFolder(path, agentFolders);
    if (via) return t(lang, "sandbox.linkInAgentFolder", { path: named, agent, link: via.link, folder: via.folder });
    return inGitFolder(realPath(path)) ? t(lang, "sandbox.gitFolder", { path: named, agent, real: realPath(path) }) : null;
  };
  const cwdCrossed = crossed(turn.cwd, turn.cwd);
  if (cwdCrossed) return { error: cwdCrossed };
  // What the hub runs outside the sandbox stays read-only in it; an agent cannot work in such a folder.
  // Plugin folders the hub loads code from besides the engine's and the home's (`serve --plugins`): read-only too, or an
  // agent working around one writes a plugin the hub then runs as itself (issue 26 round 3, F1).
  const origin = hubOrigin();
  const serveRoots = worker.plugins.roots.filter((r) => r.origin === "serve").map((r) => r.dir);
  const pluginRoots = serveRoots.filter((r) => existsSync(r)).map((r) => realPath(r));
  // And what trusted tool plugins run from outside their folders (round 53, F53a-5: an editable project on a trusted
  // plugin's Python path is the hub's code; an agent working in it would choose what the plugin imports).
  const programCode = unsandboxedCode(origin.userHome, worker.plugins.roots.map((r) => r.dir));
  const programs = programCode.filter((d) => existsSync(d)).map((d) => realPath(d));
  const ownPaths = [...new Set([...readOnlyPaths(origin), ...pluginRoots, ...programs])].filter((d) => !isInside(d, home));
  const readOnly = [...ownPaths, ...aliasesOfAll(ownPaths, mounts)].filter((d) => !hubAliases.some((h) => isInside(d, h)));
  const locked = readOnly.find((d) => cwdPaths.some((c) => isInside(c, d)));
  if (locked) return { error: t(lang, "sandbox.cwdReadOnly", { cwd: turn.cwd, folder: locked, agent }) };
  // A `serve --plugins` folder must not lie under an agent's writable folder at all, existing or not (issue 26 round 4):
  // the agent could rename a folder above it, replace a link on its path, make it when missing, or put a node_modules
  // above it — the hub would then load the agent's code as its own. Checked by the path the hub loads from and by
  // where it leads now.
  const rootPaths = worker.plugins.roots.filter((r) => r.origin === "serve").flatMap((r) => [resolve(r.dir), ...(existsSync(r.dir) ? [realPath(r.dir)] : [])]);
  const underCwd = rootPaths.find((r) => cwdPaths.some((c) => isInside(r, c)));
  if (underCwd) return { error: t(lang, "sandbox.cwdHoldsPlugins", { cwd: turn.cwd, folder: underCwd, agent }) };
  const kernel = kernelProblem(cwd, mounts);
  if (kernel) return { error: t(lang, "sandbox.cwdKernelFs", { cwd: turn.cwd, agent, ...kernel }) };
  const places = { hubHome: home, homes, readOnly, hubAliases: [...hubAliases, ...engineElsewhere] };
  const hubCode = hubCodeFolders(origin, serveRoots, worker.plugins.roots.map((r) => r.dir), programCode);
  const userHome = env.HOME || homedir();
  const writable: string[] = [];
  for (const w of job.agent.writable ?? []) {
    const path = expandTilde(w, userHome);
    if (!existsSync(path)) return { error: t(lang, "sandbox.writable.missing", { path: w, agent, worker: worker.name }) };
    const led = ledAway(path, realPath(path), homes, userHome);
    if (led) return { error: t(lang, "sandbox.ledAway", { path: w, agent, real: led }) };
    const wCrossed = crossed(w, path);
    if (wCrossed) return { error: wCrossed };
    // By every path that shows the folder (another mount of it): the first problem counts.
    const problem = [realPath(path), ...aliasesOf(realPath(path), mounts)].map((p) => placeProblem(p, places)).find((x) => x !== null) ?? null;
    if (problem?.why === "inHubHome") return { error: t(lang, "sandbox.writable.inHubHome", { path: w, agent, home }) };
    if (problem?.why === "holdsHome") return { error: t(lang, "sandbox.writable.holdsHome", { path: w, agent, home: problem.home }) };
    if (problem?.why === "readOnly") return { error: t(lang, "sandbox.writable.readOnly", { path: w, agent, folder: problem.folder }) };
    if (problem?.why === "holdsHub") return { error: t(lang, "sandbox.writable.holdsHub", { path: w, agent, folder: problem.folder }) };
    const lookup = lookupPlaceProblem(realPath(path), [home, ...readOnly, ...hubCode], homes);
    if (lookup) return { error: t(lang, "sandbox.writable.lookupPlace", { path: w, agent, folder: lookup }) };
    // The one rule a plugin's writable bind follows too (tools/binds.ts).
    const code = hubCodeProblem([realPath(path), resolve(path), ...aliasesOf(realPath(path), mounts)], hubCode);
    if (code) return { error: t(lang, code.why === "inside" ? "sandbox.writable.readOnly" : "sandbox.writable.holdsHub", { path: w, agent, folder: code.folder }) };
    const onKernel = kernelProblem(realPath(path), mounts);
    if (onKernel) return { error: t(lang, "sandbox.writable.kernelFs", { path: w, agent, ...onKernel }) };
    writable.push(realPath(path));
  }
  // The CLI's own state: folders made when missing; a path in a place the sandbox keeps as it is stays so.
  const state = plugin.state?.(env) ?? {};
  const stateFolders: string[] = [];
  for (const [paths, folders] of [[state.folders ?? [], true], [state.files ?? [], false]] as const) {
    for (const s of paths) {
      const path = expandTilde(s, userHome);
      if (folders && !existsSync(path)) {
        try {
          mkdirSync(path, { recursive: true, mode: 0o700 });
        } catch {
          continue; // cannot be made: the CLI says what it misses
        }
      }
      if (existsSync(path) && !placeProblem(realPath(path), places)) {
        writable.push(realPath(path));
        if (folders) stateFolders.push(realPath(path));
      }
    }
  }
  // What steers the CLI stays read-only at its own place; a folder where such a part is a link is a skeleton (F4).
  const steering = stateView((state.readOnly ?? []).map((s) => expandTilde(s, userHome)), stateFolders, env, state.writes, state.private, stateLimits.top);
  const stateTargets = steering.targets.filter((p) => placeProblem(p, places)?.why !== "inHubHome");
  // What the run then finds new at the state's tops and in the CLI's memory is moved aside after it (round 13).
  let stateSeen: StateSeen;
  try {
    stateSeen = stateSeenAt(stateFolders.map((folder) => ({ folder, writes: state.writes, bound: !steering.skeletons.includes(folder) })), state.memory ?? []);
  } catch (e) {
    if (e instanceof StateLimitError) return { error: stateLimitText(lang, e) };
    throw e;
  }
  writable.splice(0, writable.length, ...writable.filter((w) => !steering.skeletons.includes(w)), ...steering.writable);
  // The temporary folders are the sandbox's own (sandboxArgv: an empty /tmp and /var/tmp per launch; issue 26 round
  // 2, finding 9): a temporary folder named by the environment is /tmp there.
  for (const name of ["TMPDIR", "TEMP", "TMP"]) if (name === "TMPDIR" || env[name] !== undefined) env[name] = "/tmp";
  // `access: "read"`: the cwd stays read-only here too, so that "read" holds whatever the CLI itself enforces (a CLI
  // in a closed sandbox cannot sandbox its own commands: Turn.sandbox).
  const cwdReadOnly = job.agent.access === "read";
  if (!homes.includes(cwd) && !cwdReadOnly) writable.push(cwd);
  // A folder a check after an earlier run could not look through waits for the owner (round 30, F30a-1; unchecked.ts).
  const unchecked = uncheckedHolding(worker.home.worker, [cwd, ...writable]);
  if (unchecked) return { error: t(lang, "sandbox.unchecked", { folder: unchecked.mark.folder, run: String(unchecked.mark.run), agent, mark: unchecked.file }) };
  const devices: string[] = [];
  for (const d of job.agent.devices ?? []) {
    const checked = checkDevice(d);
    if (!checked.ok) return { error: t(lang, "sandbox.deviceRefused", { device: d, agent, why: deviceRefusalText(lang, checked.why) }) };
    devices.push(checked.real);
  }
  const pluginFile = worker.plugins.find("agent", job.agent.use);
  const show = [realPath(turn.folder), ...(pluginFile ? [realPath(dirname(pluginFile))] : [])].filter((d) => isInside(d, home) && d !== home);
  // Other homes of the engine and their backups are hidden too, but one the agent works in (its cwd or a writable
  // folder lies inside it: the owner chose that) and one that holds this hub's home (hidden already).
  const kept = [cwd, ...writable];
  // What the owner's own tools later run from the folders the agent writes stays read-only (steering.ts: git's
  // configuration and hooks, with `.git` a mount point of its own; the editors' and CLIs' project folders). Only in the
  // folders it writes: a read-only cwd needs none, and a writable bind over `.git` there would make it writable.
  // A folder the guard cannot look through within its limits is refused, never left unguarded (issue 26 round 12).
  let parts: Guarded[];
  // One reading of configuration files for the whole launch: each file once, the limit over all its folders (F15-6).
  // Git's private folders inside the home, which every sandbox hides (round 25, F25a-3).
  const pass = new ConfigPass(guardLimits.configFiles, undefined, undefined, gitPrivateDir(home));
  try {
    parts = [...new Set(writable)].filter((w) => !homes.includes(w)).map((w) => executableParts(w, w === cwd, true, guardLimits, pass));
  } catch (e) {
    if (e instanceof GuardLimitError) return { error: guardLimitText(lang, e) };
    throw e;
  }
  const mountPoints = parts.flatMap((p) => p.mountPoints);
  const readOnlyParents = parts.flatMap((p) => p.readOnlyParents);
  const seen = noneSeen();
  for (const p of parts) for (const k of Object.keys(seen) as (keyof typeof seen)[]) seen[k].push(...p.seen[k]);
  // A folder the owner (or the CLI's state: CLAUDE_CONFIG_DIR=<cwd>/.claude) names writable stays so, with what it holds.
  const named = writable.filter((w) => w !== cwd);
  // Bound only where the agent could write it (issue 26 round 23, F23-3): a part whose real path lies elsewhere (where a
  // link the agent made in a git folder leads, a gitfile's `gitdir:`) is read-only or hidden in the sandbox already,
  // and a bind of it, mounted over the hiding, would show it there (the home, /run/user, the host's /proc).
  const guardedParts = parts.flatMap((p) => p.readOnly).filter((p) => !named.some((w) => isInside(w, p)) && kept.some((w) => isInside(p, w)));
  // Dependencies hard-linked from a store every project shares (pnpm, uv: round 49, F49a-2): read-only where written.
  // A folder named writable inside one is refused, not left writable (round 51, F51a-1: ~/site/node_modules/.cache).
  const storeLinked = kept.flatMap((w) => sharedStoreParts(w));
  const inStore = named.find((w) => storeLinked.some((p) => isInside(w, p)));
  if (inStore) return { error: t(lang, "sandbox.writable.storeLinked", { path: inStore, agent, folder: storeLinked.find((p) => isInside(inStore, p))! }) };
  const guarded = [...new Set([...guardedParts, ...storeLinked, ...heldKernelMounts(kept, mounts), ...steering.readOnly, ...stateTargets])];
  // A read-only file with a second name the agent may write is no read-only file (round 35, F35a-2): refused.
  const linked = hardLinked([...guardedParts, ...steering.readOnly, ...stateTargets]);
  if (linked && "cut" in linked) return { error: t(lang, "sandbox.hardLinkCut", { folder: linked.cut, limit: String(hardLinkEntriesMax) }) };
  if (linked) return { error: t(lang, "sandbox.hardLinked", { file: linked.file, links: String(linked.links), agent, folder: kept.find((w) => isInside(linked.file, w)) ?? linked.file }) };
  // Every home this user's hubs have (issue 26 round 10, Medium 7: a second home elsewhere), but one that holds a
  // home of the user or a folder the hub runs code from (hiding it would hide those), and every other path showing
  // one of them or this hub's home; every second proc mount (the sandbox has a /proc of its own).
  const others = knownHomes(userHomeList).map(realPath).filter((d) => d !== home && ![...homes, ...readOnly].some((r) => isInside(r, d)));
  const engineFolders = [...new Set([...autoloopFolders(homes), ...others])];
  // tsx's compile cache holds the hub's TypeScript plugins compiled, their texts and paths in the home: hidden, not shown
  // read-only (round 34, F34b-1); in `readOnly` above only for the checks, where it counts as the hub's code.
  const tsxCache = origin.tsxCache && existsSync(origin.tsxCache) ? [realPath(origin.tsxCache), ...aliasesOf(realPath(origin.tsxCache), mounts)] : [];
  const hidden = [...engineFolders, ...hubAliases, ...aliasesOfAll([home, ...engineFolders], mounts), ...otherProcMounts(mounts), ...tsxCache];
  const shownReadOnly = readOnly.filter((d) => !tsxCache.includes(d));
  // A folder under the sandbox's own /tmp or /var/tmp is not there unless a folder bound from the host holds it.
  const bound = [...kept, ...homes, ...shownReadOnly, ...guarded, ...show];
  const there = (d: string) => !["/tmp", "/var/tmp"].some((t) => isInside(d, t)) || bound.some((b) => isInside(d, b));
  const alsoHide = [...new Set(hidden)].filter((d) => !isInside(home, d) && !kept.some((w) => isInside(w, d)) && there(d));
  // The homes hidden but for what the agent needs (issue 26 round 11, F8/F10), unless the cwd is one (the owner let
  // the agent look at it); the user's runtime folder hidden (F6).
  const declared = [turn.cwd, ...(job.agent.writable ?? []), ...(state.folders ?? []), ...(state.files ?? []), ...(state.readOnly ?? [])].map((p) => expandTilde(p.replace(/\/+$/, ""), userHome));
  for (const r of job.agent.readable ?? []) {
    const path = expandTilde(r, userHome);
    const led = existsSync(path) ? ledAway(path, realPath(path), homes, userHome) : null;
    if (led) return { error: t(lang, "sandbox.ledAway", { path: r, agent, real: led }) };
    const via = existsSync(path) ? linkInAgentFolder(path, agentFolders) : null;
    if (via) return { error: t(lang, "sandbox.linkInAgentFolder", { path: r, agent, link: via.link, folder: via.folder }) };
  }
  const view = homeView(homes, homes.includes(cwd) ? cwd : null, env, declared, job.agent.readable ?? []);
  const homeRead = view.read.filter((p) => placeProblem(p, places)?.why !== "inHubHome");
  // Where this launch lets the agent write: no later launch reaches a named folder through a link made there.
  const agentFoldersNow = recordAgentFolders(worker.home.dir, [...new Set(writable)]);
  // A network of its own (F33a-1) unless the rule says "host"; without pasta the computer's, said once.
  const net = job.agent.network === "host" ? null : sandboxNetwork(job.agent.loopbackPorts ?? [], env, worker.home.worker, process.getuid?.() ?? 0, process.env.PATH ?? "", loopbackPortsIn({ hub: worker.hubUrl ?? "" }));
  if (net && "shared" in net) worker.networkShared?.(t(lang, net.shared === "noPasta" ? "sandbox.noPasta" : "sandbox.noEnvSignal"));
  return {
    stateSeen,
    plan: {
      bwrap: here.bwrap, writable: [...new Set([...writable, ...mountPoints])], homes, readOnly: [...shownReadOnly, ...guarded], hide: home, alsoHide, pinned: alsoHide.filter((d) => tsxCache.includes(d)), show, devices, cwd, cwdReadOnly,
      readOnlyParents,
      watch: { folders: [...new Set(writable)].filter((w) => !homes.includes(w)), guarded: [...mountPoints, ...readOnlyParents, ...guarded], seen, config: pass, gitState: gitStateAt(seen.repositories, guarded, pass.privateDir) },
      hiddenHomes: view.hidden, homeRead, agentFolders: agentFoldersNow, links: [...view.links, ...steering.links], skeletons: steering.skeletons, privates: steering.privates, runtime: runtimeView(env),
      ...(net && "network" in net ? { network: net.network } : {}),
    },
  };
}

/**
 * `plan` with the package of the agent's program shown too, when it lies in a hidden home (`showProgram`): the
 * program is known only once the plugin built its command line, which it does knowing the sandbox.
 * @param program the command line's first word (a path, or a name looked up on the agent's PATH)
 */
export function withProgram(plan: SandboxPlan, program: string, env: Readonly<Record<string, string>>): SandboxPlan {
  const view = showProgram({ hidden: plan.hiddenHomes ?? [], read: [...(plan.homeRead ?? [])], links: [...(plan.links ?? [])] }, program, env, plan.agentFolders ?? []);
  return { ...plan, homeRead: view.read, links: view.links };
}

/**
 * Where a folder a rule names (`named`, its real path `real`) leads when a link on its way takes it to a place the
 * sandbox keeps from agents — a home of the user's (`homes`, real paths; `writtenHome` as the environment writes it)
 * or one of its dot-entries (`~/.ssh`, `~/.config`, `~/.local`, `~/.bashrc`) or what lies inside one — and the owner
 * did not name that place itself: an agent that writes a folder above another rule's folder can replace it with such
 * a link before that rule's next launch (issue 26 round 25, F25a-1). Null when the path leads where it says, names
 * such a place itself, or leads elsewhere.
 */
function ledAway(named: string, real: string, homes: readonly string[], writtenHome: string): string | null {
  const path = resolve(named);
  if (real === path) return null;
  const keptPlace = (p: string, h: string) => isInside(p, h) && (p === h || relative(h, p).split("/")[0]!.startsWith("."));
  if ([...homes, resolve(writtenHome)].some((h) => keptPlace(path, h))) return null;
  return homes.some((h) => keptPlace(real, h)) ? real : null;
}
