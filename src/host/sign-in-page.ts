/**
 * The page `agent-autoloop console` hands the browser instead of the sign-in link (issue 26 round 11, F2): a program's
 * command line is readable by every local user (`/proc/<pid>/cmdline`), so the one-time token never goes on
 * `xdg-open`'s or the browser's; the browser gets the `file://` address of a page only the owner can read (0600, in
 * the home's 0700 `console-links` folder), which carries it on to the link — as Jupyter's redirect page does. The hub
 * deletes the page when its token is used (console-session.ts); each new page deletes those whose token has expired.
 */
import { createHash } from "node:crypto";
import { chmodSync, lstatSync, mkdirSync, readdirSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { consoleSignInValidMs } from "../kernel/limits.js";

/** What a page's name looks like: the start of the SHA-256 of its token, so the hub finds it from the token alone. */
const pageName = /^sign-in-[0-9a-f]{32}\.html$/;

/** The file name of the page of the sign-in token `token` (the token cannot be read back from it). */
export function signInPageName(token: string): string {
  return `sign-in-${createHash("sha256").update(token).digest("hex").slice(0, 32)}.html`;
}

/** `text` for HTML text and quoted attributes. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Writes the page that takes the browser to `link` (a sign-in link, its token in the fragment `#sign-in=`) into `dir`,
 * made 0700 when missing; deletes the pages there older than a sign-in token lives (`consoleSignInValidMs`).
 * @param title the page's title and text while it moves on (the catalog's words).
 * @returns the page's path; null when `link` holds no token or `dir` is a link or another user's folder (the caller
 *   then opens nothing; the link is printed anyway).
 * @throws the file system's error when the page cannot be written.
 */
export function writeSignInPage(dir: string, link: string, title: string, now = Date.now()): string | null {
  const token = /#sign-in=([A-Za-z0-9_-]+)$/.exec(link)?.[1];
  if (!token) return null;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  const uid = process.geteuid?.();
  if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) return null;
  if ((st.mode & 0o777) !== 0o700) chmodSync(dir, 0o700);
  for (const name of readdirSync(dir)) {
    if (!pageName.test(name)) continue;
    try {
      if (statSync(join(dir, name)).mtimeMs <= now - consoleSignInValidMs) unlinkSync(join(dir, name));
    } catch {
      // gone meanwhile
    }
  }
  const page = join(dir, signInPageName(token));
  const to = escapeHtml(link);
  // No referrer, a refresh for a browser without scripts, and location.replace so that the page leaves no history entry.
  writeFileSync(page, `<!doctype html>
<html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer"><meta http-equiv="refresh" content="0;url=${to}">
<title>${escapeHtml(title)}</title></head>
<body><p><a href="${to}">${escapeHtml(title)}</a></p><script>location.replace(${JSON.stringify(link).replace(/</g, "\\u003c")});</script></body></html>
`, { mode: 0o600, flag: "wx" });
  return page;
}

/** Deletes the page of `token` from `dir`, if there is one (its token is used up). Never throws. */
export function dropSignInPage(dir: string, token: string): void {
  try {
    unlinkSync(join(dir, signInPageName(token)));
  } catch {
    // none: the link was printed, or opened from another home
  }
}
