/**
 * `agent-autoloop console` (issues 17, 30): a one-time sign-in link to the owner console (opened in a browser unless
 * `--no-open`), `--sessions` to list the live sessions, `--end` to end them all or `--end <name>` one of them.
 */
import { t, type Lang } from "../i18n/messages.js";
import type { HubClient } from "../protocol/client.js";
import { CliError, printable } from "./print.js";

/** The options of `console` as commander gives them: `end` true without a name. */
export interface ConsoleOptions {
  end?: boolean | string;
  sessions?: boolean;
  open: boolean;
}

/**
 * Runs `console` with `owner`, which makes an owner call on this home's hub (connect.ts `call`); the browser is opened
 * on a page in `pagesDir` (the home's `console-links`) that carries the link, never on the link itself.
 * @returns the text to print.
 * @throws CliError when `--end <name>` names no session (the hub's refusal when the name is malformed).
 */
export async function consoleCommand(o: ConsoleOptions, lang: Lang, owner: <T>(f: (c: HubClient) => Promise<T>) => Promise<T>, pagesDir: string): Promise<string> {
  const { localTime } = await import("./why.js");
  if (typeof o.end === "string") {
    const session = o.end;
    const res = await owner((c) => c.consoleEndOne(session));
    if (res.ended === 0) throw new CliError(t(lang, "cli.console.noSuchSession", { session: printable(session) }));
    return t(lang, "cli.console.endedOne", { session });
  }
  if (o.end) return t(lang, "cli.console.ended", { n: (await owner((c) => c.consoleEnd())).ended });
  if (o.sessions) {
    const { sessions } = await owner((c) => c.consoleSessions());
    if (sessions.length === 0) return t(lang, "cli.console.noSessions");
    return sessions.map((s) => t(lang, "cli.console.session", {
      session: s.session, origin: s.origin, signedIn: localTime(s.signedIn), lastUsed: localTime(s.lastUsed), idleUntil: localTime(s.idleUntil), expiresAt: localTime(s.expiresAt),
    })).join("\n");
  }
  const res = await owner((c) => c.consoleSignIn());
  const { openSignIn } = await import("./open-browser.js");
  if (o.open) await openSignIn(res.link, pagesDir, t(lang, "cli.console.opening"));
  return t(lang, "cli.console.link", { link: res.link, until: localTime(res.expiresAt) });
}
