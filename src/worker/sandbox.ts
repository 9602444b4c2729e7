/**
 * The agent sandbox (issue 14): where bubblewrap runs, the worker starts each agent with the worker's home hidden, so
 * that an agent (same OS user) cannot read the run token, config.json's keys, master.key, secrets.env, the database or
 * other runs' files. Only what the agent needs from the home is shown again, read-only: its run's `agent/` folder
 * (the context file) and the folder of its plugin when that is installed in the home. Everything else stays as it is:
 * the network, the rest of the file system (cwd, ~/.claude, CODEX_HOME, …) writable as before. The point is hiding the
 * hub's secrets, not isolating the agent.
 *
 * The agent runs in its own PID namespace (it cannot see the hub's or the worker's processes, their environment or
 * their open files in /proc), in a new session whose process group the worker stops (bwrap's `--info-fd` gives its
 * id), with no capabilities (an agent run as root cannot unmount what hides the home).
 */
import { execFileSync } from "node:child_process";
import { realpathSync } from "node:fs";
import { relative, isAbsolute } from "node:path";
import { findProgram } from "../sdk/index.js";

/** Where bubblewrap is, or why agents run without a sandbox on this computer. */
export type SandboxHere = { bwrap: string } | { off: string };

/** How long `doctor`'s trial run of bubblewrap may take, in ms. */
const sandboxProbeTimeoutMs = 10_000;

/** Finds bubblewrap: Linux only; `bwrap` on PATH. */
export function sandboxHere(platform: NodeJS.Platform = process.platform, path = process.env.PATH ?? ""): SandboxHere {
  if (platform !== "linux") return { off: `bubblewrap runs on Linux only, and this computer runs ${platform}` };
  const bwrap = findProgram("bwrap", path);
  if (!bwrap) return { off: "bubblewrap (bwrap) is not installed: install it (Debian and Ubuntu: apt-get install bubblewrap)" };
  return { bwrap };
}

/** One sandboxed launch: the folder to hide, the folders inside it to show again (read-only), the working folder. */
export interface SandboxPlan {
  bwrap: string;
  hide: string;
  show: string[];
  cwd: string;
}

/** The file descriptor on which bwrap writes `{"child-pid": …}` (the supervisor opens it as a pipe). */
export const sandboxInfoFd = 3;

/**
 * The command line that runs `argv` in the sandbox `plan` describes.
 * @param infoFd where bwrap reports the agent's process id (null: nowhere).
 */
export function sandboxArgv(plan: SandboxPlan, argv: string[], infoFd: number | null = sandboxInfoFd): string[] {
  return [
    plan.bwrap,
    "--bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc",
    "--unshare-pid", "--new-session", "--die-with-parent", "--cap-drop", "ALL",
    ...(infoFd === null ? [] : ["--info-fd", String(infoFd)]),
    "--tmpfs", plan.hide,
    ...plan.show.flatMap((d) => ["--ro-bind", d, d]),
    "--chdir", plan.cwd,
    "--", ...argv,
  ];
}

/** `path` with symbolic links resolved (as the mounts see it); the path itself when it does not exist. */
export function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** Whether `path` is `dir` or lies inside it (both already resolved). */
export function isInside(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/**
 * Runs `true` in a sandbox like the agents' (hiding `hide`), to tell whether bubblewrap works here: a kernel or a
 * container may forbid the namespaces it needs. Returns null when it works, else bwrap's message.
 */
export function probeSandbox(bwrap: string, hide: string): string | null {
  try {
    const argv = sandboxArgv({ bwrap, hide, show: [], cwd: "/" }, ["true"], null);
    execFileSync(argv[0]!, argv.slice(1), { stdio: ["ignore", "ignore", "pipe"], timeout: sandboxProbeTimeoutMs, env: { PATH: process.env.PATH ?? "" } });
    return null;
  } catch (e) {
    const err = e as { stderr?: Buffer; message: string };
    return err.stderr?.toString().trim() || err.message;
  }
}
