/**
 * The sandbox without Docker (spec tool-plugins.md §7, issue 16): bubblewrap builds a new root for the plugin.
 *
 * - Namespaces: `--unshare-all` (user, ipc, pid, net, uts, cgroup); `network = "host"` keeps the host's network.
 *   `"bridge"` (Docker's NAT) has no bubblewrap equivalent: it is taken as "host" (outbound network works; the host's
 *   loopback services are reachable too). `"none"` (the default) leaves only a loopback of its own.
 * - `--die-with-parent`, `--new-session`, `--cap-drop ALL` always (dropping every capability covers any `cap_drop`).
 * - The root is a fresh tmpfs holding read-only binds of the host's top-level folders, except `/proc`, `/dev` (new
 *   ones), `/tmp` and `/run` (empty tmpfs: no host sockets reach the plugin) and the paths the host hides (its home,
 *   with keys). `read_only_root = true` remounts that root read-only, so only `/tmp` and writable binds take writes;
 *   otherwise new folders can be made at the top level and in `/var/tmp`, and vanish with the sandbox — nothing of
 *   the host is ever writable except a writable bind.
 * - The plugin folder is bound read-only at `/workspace`, the working directory (a plugin cannot rewrite its own
 *   manifest); `binds` in Docker `-v` form follow, relative host paths taken from the plugin folder (the launch passes
 *   their real paths, checked by binds.ts: issue 26 #3), then the hidden paths, so no bind uncovers one.
 */
import { spawn } from "node:child_process";
import { existsSync, lstatSync, readdirSync, readlinkSync, statSync } from "node:fs";
import { resolve } from "node:path";
import type { SandboxSpec } from "./types.js";

/** Where the plugin folder appears inside the sandbox (the public implementation's container workdir). */
export const sandboxWorkdir = "/workspace";
/** Top-level folders never bound from the host. */
const notBound = new Set(["proc", "dev", "tmp", "run", "workspace"]);

/** Whether bubblewrap can make a sandbox here, and if not, what it said. */
export interface BwrapProbe {
  ok: boolean;
  error: string | null;
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
      child.on("close", (code) => done(code === 0 ? { ok: true, error: null } : { ok: false, error: err.trim() || `exit ${code}` }));
    });
    probes.set(bwrap, p);
  }
  return p;
}

/** A bind the host adds (a service's socket folder): same path inside and out, writable. */
export interface HostBind {
  path: string;
}

/** What `bwrapArgv` needs. `hidden` are host paths replaced by an empty tmpfs (folders) or /dev/null (files). */
export interface SandboxPlan {
  bwrap: string;
  sandbox: SandboxSpec;
  pluginDir: string;
  hidden: string[];
  hostBinds: HostBind[];
  argv: string[];
}

/** The bubblewrap command line that runs `plan.argv` in the plugin's sandbox. */
export function bwrapArgv(plan: SandboxPlan): string[] {
  const { sandbox } = plan;
  const a = [plan.bwrap, "--unshare-all"];
  if (sandbox.network !== "none") a.push("--share-net");
  a.push("--die-with-parent", "--new-session", "--cap-drop", "ALL");
  for (const entry of readdirSync("/")) {
    if (notBound.has(entry)) continue;
    const path = `/${entry}`;
    const st = lstatSync(path);
    if (st.isSymbolicLink()) a.push("--symlink", readlinkSync(path), path);
    else a.push("--ro-bind", path, path);
  }
  a.push("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/run");
  if (!sandbox.read_only_root && existsSync("/var/tmp")) a.push("--tmpfs", "/var/tmp");
  a.push("--ro-bind", plan.pluginDir, sandboxWorkdir);
  for (const m of sandbox.mounts) a.push(m.readOnly ? "--ro-bind" : "--bind", m.relative ? resolve(plan.pluginDir, m.host) : m.host, m.container);
  // The hidden paths after the plugin's binds (issue 26 #3): a bind onto or over one never uncovers it. The host's own
  // binds (a service's socket folder) come last: the host puts them where it means them to be.
  for (const h of plan.hidden) {
    if (!existsSync(h)) continue;
    if (statSync(h).isDirectory()) a.push("--tmpfs", h);
    else a.push("--ro-bind", "/dev/null", h);
  }
  for (const b of plan.hostBinds) a.push("--bind", b.path, b.path);
  if (sandbox.read_only_root) a.push("--remount-ro", "/");
  a.push("--chdir", sandboxWorkdir, "--", ...plan.argv);
  return a;
}
