/**
 * Opens a URL in the person's browser for `agent-autoloop console`, only where one can be expected: the command runs
 * in a terminal (stdout is a TTY), and on Linux and the BSDs a display is set. Tests and scripts (stdout a pipe,
 * `CI` set) never open anything. A failure to open is silent: the link is printed either way. A secret never goes into
 * the URL handed over (every local user reads a command line): `openSignIn` hands a page only the owner can read.
 */
import { spawn } from "node:child_process";
import { pathToFileURL } from "node:url";

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

/**
 * Opens the console's sign-in `link` without putting its token on any command line (issue 26 round 11, F2): the browser
 * is given the `file://` address of a page only the owner reads, written into `dir` (the home's `console-links`), which
 * carries it on (src/host/sign-in-page.ts). Where no browser is expected, or the page cannot be written, nothing is
 * opened (the link is printed either way). Never throws.
 * @param title the page's words while it moves on.
 */
export async function openSignIn(link: string, dir: string, title: string): Promise<void> {
  if (!browserCommand(link, process.env, process.platform, process.stdout.isTTY === true)) return;
  const { writeSignInPage } = await import("../host/sign-in-page.js");
  let page: string | null;
  try {
    page = writeSignInPage(dir, link, title);
  } catch {
    return;
  }
  if (page !== null) openBrowser(pathToFileURL(page).href);
}
