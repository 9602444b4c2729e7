/**
 * The PATH of the user's login shell (issue 28; plugins.md: Unix 沿用登录 shell 查找命令). A service starts with the
 * service manager's bare PATH, so agent CLIs installed through nvm, asdf, Homebrew or `~/.local/bin` would not be
 * found: `install` reads the login shell's PATH once and gives it to the service; `doctor` reads it again and says
 * when it changed.
 */
import { spawnSync } from "node:child_process";
import { userInfo } from "node:os";
import { delimiter, dirname } from "node:path";

/** How long the login shell may take to print its PATH (ms): a profile that waits for input is cut. */
export const loginShellTimeoutMs = 10_000;

/** Marks the PATH among whatever the profiles print. */
const marker = "AGENT_AUTOLOOP_LOGIN_PATH=";

/** The user's login shell: `$SHELL`, else the account's shell, else `/bin/sh`. */
export function loginShell(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SHELL && env.SHELL.startsWith("/")) return env.SHELL;
  try {
    const shell = userInfo().shell;
    if (shell && shell.startsWith("/")) return shell;
  } catch {
    // no account entry (a container's numeric user)
  }
  return "/bin/sh";
}

/**
 * The PATH a login shell of the user sets (`<shell> -l -c`, no input, at most `loginShellTimeoutMs`), or null when it
 * cannot be read (no shell, a profile that fails or hangs).
 */
export function loginShellPath(shell = loginShell(), env: NodeJS.ProcessEnv = process.env): string | null {
  const r = spawnSync(shell, ["-l", "-c", `printf '\\n${marker}%s\\n' "$PATH"`], {
    encoding: "utf8", timeout: loginShellTimeoutMs, stdio: ["ignore", "pipe", "ignore"],
    // The login shell builds PATH from the system's profile; it starts from what a login starts with.
    env: { HOME: env.HOME ?? "", USER: env.USER ?? "", LOGNAME: env.LOGNAME ?? env.USER ?? "", SHELL: shell, TERM: "dumb", LANG: env.LANG ?? "C.UTF-8", PATH: "/usr/local/bin:/usr/bin:/bin" },
  });
  if (r.error || r.status !== 0) return null;
  const line = r.stdout.split("\n").reverse().find((l) => l.startsWith(marker));
  const path = line?.slice(marker.length).trim();
  return path ? path : null;
}

/**
 * The PATH the service gets: the login shell's, then the folder of the node running `install` and the folder the
 * command is linked into, when they are missing from it (a node from nvm set up in an interactive rc file only).
 */
export function servicePath(login: string | null, node: string, linkDir: string, fallback = process.env.PATH ?? ""): string {
  const entries = (login ?? fallback).split(delimiter).filter((e) => e !== "");
  for (const extra of [dirname(node), linkDir]) if (!entries.includes(extra)) entries.push(extra);
  return [...new Set(entries)].join(delimiter);
}
