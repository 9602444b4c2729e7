/**
 * Opens a URL in the person's browser for `agent-autoloop console`, only where one can be expected: the command runs
 * in a terminal (stdout is a TTY), and on Linux and the BSDs a display is set. Tests and scripts (stdout a pipe,
 * `CI` set) never open anything. A failure to open is silent: the link is printed either way.
 */
import { spawn } from "node:child_process";

/** The command that opens `url` here, or null where no browser is expected. */
export function browserCommand(url: string, env: NodeJS.ProcessEnv, platform: NodeJS.Platform, tty: boolean): string[] | null {
  if (!tty || env.CI) return null;
  if (platform === "darwin") return ["open", url];
  if (platform === "win32") return ["cmd", "/c", "start", "", url];
  return env.DISPLAY || env.WAYLAND_DISPLAY ? ["xdg-open", url] : null;
}

/** Opens `url` when `browserCommand` names a way; never throws, never waits for the browser. */
export function openBrowser(url: string): void {
  const argv = browserCommand(url, process.env, process.platform, process.stdout.isTTY === true);
  if (!argv) return;
  try {
    const child = spawn(argv[0]!, argv.slice(1), { detached: true, stdio: "ignore" });
    child.on("error", () => {});
    child.unref();
  } catch {
    // the link is printed: nothing else to do
  }
}
