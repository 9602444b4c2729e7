/**
 * The sandbox without Docker (spec tool-plugins.md §7, issue 16): bubblewrap builds a new root for the plugin.
 *
 * - Namespaces: `--unshare-all` (user, ipc, pid, net, uts, cgroup); `network = "host"` keeps the host's network.
 *   `"bridge"` (Docker's NAT) has no bubblewrap equivalent: it is taken as "host" (outbound network works; the host's
 *   loopback services are reachable too). `"none"` (the default) leaves only a loopback of its own.
 * - `--die-with-parent`, `--new-session`, `--cap-drop ALL` always (dropping every capability covers any `cap_drop`).
 * - The root is a fresh tmpfs holding read-only binds of the host's system folders only (sandbox-root.ts, issue 26
 *   round 12, F12-6: a root taken from the host's `/` showed the sockets under `/var/lib`, `/var/snap`, `/srv` to a
 *   plugin with no bind): `/usr`, `/etc`, `/bin`, `/sbin`, `/lib*`, `/sys`, `/nix/store`; `/var` holds only its links
 *   and its own `/var/tmp`; `/proc`, `/dev` are new ones, `/tmp` and `/run` empty tmpfs (no host sockets reach the
 *   plugin); the paths the host hides (its home, with keys) are covered. `read_only_root = true` remounts that root
 *   read-only, so only `/tmp` and writable binds take writes; otherwise new folders can be made at the top level and
 *   in `/var/tmp`, and vanish with the sandbox — nothing of the host is ever writable except a writable bind.
 * - The hub user's home is not there either (issue 26, finding 13: ~/.npmrc, ~/.ssh, ~/.claude hold credentials), all
 *   but the folders of the plugin's PATH that lie outside the system folders, each with its parent (the install a
 *   program found there needs: ~/.pyenv, ~/.nvm/versions/node/v20, ~/miniconda3, /opt/node), shown read-only; the
 *   sockets found in them (outside the homes) and in `/etc` are covered. A plugin that needs more names it in
 *   `binds`.
 * - `/dev` is the sandbox's own minimal one; a bind of a host device (by path under `/dev`, or a device node) is made
 *   with `--dev-bind` when src/kernel/devices.ts lets it through and refused with the reason otherwise (process.ts):
 *   a plain bind is mounted `nodev`, where opening the device fails with "Permission denied". `:ro` makes no
 *   difference to a device (a read-only mount never limited what a device does).
 * - The plugin folder is bound read-only at `/workspace`, the working directory (a plugin cannot rewrite its own
 *   manifest); `binds` in Docker `-v` form follow, relative host paths taken from the plugin folder (the launch passes
 *   their real paths, checked by binds.ts: issue 26 #3), then the hidden paths, so no bind uncovers one.
 * - Every bind source but the top-level system folders and devices is bound by descriptor (issue 26 round 2): opened
 *   once, checked to be the real path that was checked, so no link swapped in later is followed (process.ts).
 * - `/proc` is masked as container runtimes mask it (src/common/bwrap.ts; issue 26 round 2, finding 2): /proc/sys and
 *   the other host knobs read-only, kcore, keys, timer_list and the like unreadable.
 * - The plugin's environment is set inside only (issue 26 round 5, F7): bwrap runs with the hub's minimal one and
 *   reads `--clearenv` and the plugin's `--setenv`s from a descriptor (`--args`), so a manifest's loader variables
 *   (`LD_PRELOAD`) never load anything into bwrap outside the sandbox, and no value shows on its command line.
 */
import { spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import type { SandboxSpec } from "./types.js";
import { bwrapBindsByFd, procMaskArgs } from "../common/bwrap.js";
import { t, type Lang } from "../i18n/messages.js";
import { rootArgs, socketsShown } from "./sandbox-root.js";

/** Where the plugin folder appears inside the sandbox (the public implementation's container workdir). */
export const sandboxWorkdir = "/workspace";

/** Whether bubblewrap can make a sandbox here, and if not, what it said (`tooOld`: it has no `--bind-fd`). */
export interface BwrapProbe {
  ok: boolean;
  error: string | null;
  tooOld?: true;
}

/** Why a probe failed, in `lang`: bwrap's own message, or that it is older than 0.8. */
export function probeError(probe: BwrapProbe, lang: Lang): string {
  return probe.tooOld ? t(lang, "sandbox.bwrapTooOld") : probe.error ?? "";
}

const probes = new Map<string, Promise<BwrapProbe>>();

/** Runs `bwrap … true` once per path (cached): a bwrap that exists but cannot make namespaces fails here. */
export function probeBwrap(bwrap: string): Promise<BwrapProbe> {
  let p = probes.get(bwrap);
  if (!p) {
    p = new Promise<BwrapProbe>((done) => {
      const child = spawn(bwrap, ["--unshare-all", "--die-with-parent", "--cap-drop", "ALL", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--", "true"], { stdio: ["ignore", "ignore", "pipe"] });
      let err = "";
      child.stderr.on("data", (d: Buffer) => (err = (err + d.toString()).slice(0, 500)));
      child.on("error", (e) => done({ ok: false, error: (e as NodeJS.ErrnoException).code ?? e.message }));
      child.on("close", (code) => {
        if (code !== 0) return done({ ok: false, error: err.trim() || `exit ${code}` });
        done(bwrapBindsByFd(bwrap) ? { ok: true, error: null } : { ok: false, error: null, tooOld: true });
      });
    });
    probes.set(bwrap, p);
  }
  return p;
}

/** A bind the host adds (a service's socket folder), writable: host folder `path` at `at` inside (default: `path`). */
export interface HostBind {
  path: string;
  at?: string;
}

/**
 * What `bwrapArgv` needs. `hidden` are host paths replaced by an empty tmpfs (folders) or /dev/null (files); `shown`
 * are folders inside them bound again read-only; `devices` maps the bind sources (as `bindSources` gives them) that
 * are devices, checked already, to the real path to bind.
 */
export interface SandboxPlan {
  bwrap: string;
  sandbox: SandboxSpec;
  pluginDir: string;
  /** Host paths hidden after the plugin's binds, which can never show them again (the hub's home). */
  hidden: string[];
  /** The hub user's homes, hidden before the plugin's binds (which may show parts of them again on purpose). */
  homes?: string[];
  /** The installs of the programs on PATH outside the root's system folders, shown read-only (sandbox-root.ts `pathInstalls`). */
  shown?: string[];
  devices?: Map<string, string>;
  hostBinds: HostBind[];
  /**
   * Parts of the writable binds bound again after them (src/worker/steering.ts: `.git` over itself, git's configuration
   * and hooks and the editors' folders read-only): `path` on the host, `at` inside.
   */
  guarded?: { path: string; at: string; readOnly: boolean }[];
  argv: string[];
  /**
   * Whether bwrap reads more arguments (the plugin's environment: `--clearenv`, `--setenv`…) from the descriptor after
   * the bind sources (`--args`; process.ts writes them there).
   */
  envArgs?: boolean;
  /**
   * Whether bwrap reports on the descriptor after those (`--json-status-fd`; process.ts reads it) whether the program
   * ran: a launch that never did is planned again and started once more (`bwrapSetupFailed`).
   */
  status?: boolean;
}

/** The first file descriptor of a plugin sandbox's bind sources (after stdin, stdout, stderr). */
export const pluginFirstBindFd = 3;

/**
 * The bubblewrap command line that runs `plan.argv` in the plugin's sandbox, and the host paths it binds by
 * descriptor (issue 26 round 2, findings 3 and 4: bound by path, a source checked by realpath was resolved again by
 * bwrap after a link was swapped into a parent): `sources[i]` is to be opened (`openBindSource`) as descriptor
 * `pluginFirstBindFd + i` of the process. The plugin folder, its binds (devices aside), the installs shown from the
 * home and the host's own binds all go so; only the top-level system folders and devices are bound by path.
 */
export function bwrapArgv(plan: SandboxPlan): { argv: string[]; sources: string[] } {
  const { sandbox } = plan;
  const sources: string[] = [];
  const byFd = (readOnly: boolean, source: string, dest: string) => {
    sources.push(source);
    return [readOnly ? "--ro-bind-fd" : "--bind-fd", String(pluginFirstBindFd + sources.length - 1), dest];
  };
  const a = [plan.bwrap, "--unshare-all"];
  if (sandbox.network !== "none") a.push("--share-net");
  a.push("--die-with-parent", "--new-session", "--cap-drop", "ALL");
  a.push(...rootArgs(sandbox.read_only_root));
  a.push("--proc", "/proc", ...procMaskArgs(), "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/run");
  const hide = (h: string) => {
    if (!existsSync(h)) return;
    if (statSync(h).isDirectory()) a.push("--tmpfs", h);
    else a.push("--ro-bind", "/dev/null", h);
  };
  // The hub user's home (issue 26 #13) before the plugin's binds, which may show parts of it again on purpose; the
  // programs on PATH installed in it shown read-only.
  for (const h of plan.homes ?? []) hide(h);
  // A socket in what the root shows is covered (issue 26 round 12, F12-6): connecting needs no write permission. An
  // install too large to look through is not shown at all (round 13).
  const look = socketsShown(plan.shown ?? [], plan.homes ?? []);
  for (const d of (plan.shown ?? []).filter((d) => !look.unlooked.includes(d))) a.push(...byFd(true, d, d));
  for (const sock of look.sockets) a.push("--ro-bind", "/dev/null", sock);
  a.push(...byFd(true, plan.pluginDir, sandboxWorkdir));
  for (const m of sandbox.mounts) {
    const host = m.relative ? resolve(plan.pluginDir, m.host) : m.host;
    const device = plan.devices?.get(host);
    if (device) a.push("--dev-bind", device, m.container);
    else a.push(...byFd(m.readOnly, host, m.container));
  }
  // What the owner's own tools later run from a writable bind stays read-only in it (issue 26 round 11, F1 variant D).
  for (const g of plan.guarded ?? []) a.push(...byFd(g.readOnly, g.path, g.at));
  // The hidden paths after the plugin's binds (issue 26 #3): a bind onto or over one never uncovers it. The host's own
  // binds (a service's socket folder) come last: the host puts them where it means them to be.
  for (const h of plan.hidden) hide(h);
  for (const b of plan.hostBinds) a.push(...byFd(false, b.path, b.at ?? b.path));
  if (sandbox.read_only_root) a.push("--remount-ro", "/");
  if (plan.envArgs) a.push("--args", String(pluginFirstBindFd + sources.length));
  if (plan.status) a.push("--json-status-fd", String(pluginFirstBindFd + sources.length + (plan.envArgs ? 1 : 0)));
  a.push("--chdir", sandboxWorkdir, "--", ...plan.argv);
  return { argv: a, sources };
}
