/**
 * Owner console sessions (issue 17, DESIGN.md "Plugin hosts and the console"): `agent-autoloop console` asks the hub
 * for a sign-in link (`POST /v1/console/sign-in` with the owner key); the link carries a random token, good once and
 * for `consoleSignInValidMs`, which the console page exchanges (`POST /console/session`) for a session cookie
 * `HttpOnly; SameSite=Strict; Path=/` (+ `Secure` and the `__Host-` name when the hub's public URL is https).
 *
 * Where the state lives: here, in the hub process's memory, never in the fact log or on disk. A session is a
 * capability a browser holds, not a decision of the kernel: keeping it out of facts keeps the kernel unchanged and
 * no session secret anywhere a file copy or `why` could show it. The price is chosen: a restart of the hub ends every
 * session (run `agent-autoloop console` again). Tokens and cookies are kept only as SHA-256, like keys.
 *
 * A session stands for the owner key that made its link: it ends when that key is removed or replaced (checked on
 * every use, and dropped when keys change), after `consoleSessionMaxMs`, on sign-out, or when the owner ends all
 * sessions (`agent-autoloop console --end`). It remembers the origin it signed in from: a changing request with the
 * cookie must come from that origin (`Origin` header).
 */
import { randomBytes } from "node:crypto";
import { hashKey } from "../kernel/credentials.js";
import { consoleSessionMaxMs, consoleSessionsMax, consoleSignInsPendingMax, consoleSignInValidMs } from "../kernel/limits.js";

/** One signed-in console: the owner key it stands for and where it signed in from. */
export interface ConsoleSession {
  /** SHA-256 of the cookie's value (the map's key). */
  readonly id: string;
  /** The owner key's hash (what the kernel knows keys by). */
  readonly keyHash: string;
  /** `scheme://host[:port]` of the page that signed in. */
  readonly origin: string;
  /** When it ends whatever happens (ms since the epoch). */
  readonly expiresAt: number;
}

/** Whether a hub's public URL is https: its console cookie is then `Secure` and `__Host-` named. */
export function httpsUrl(publicUrl: string | null): boolean {
  return (publicUrl ?? "").startsWith("https:");
}

/** The cookie's name: `__Host-` prefixed (Secure, Path=/, no Domain: the browser enforces them) on https. */
export function consoleCookieName(secure: boolean): string {
  return secure ? "__Host-aa_console" : "aa_console";
}

/** The value of cookie `name` in a `Cookie` header, or null. */
export function cookieValue(header: string | null | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

/** `scheme://host` of a URL, or null when it is not an http(s) URL. */
export function originOf(url: string): string | null {
  try {
    const u = new URL(url);
    return u.protocol === "http:" || u.protocol === "https:" ? u.origin : null;
  } catch {
    return null;
  }
}

/** The console's sign-in tokens and sessions of one hub process. */
export class ConsoleSessions {
  private readonly pending = new Map<string, { keyHash: string; expiresAt: number }>();
  private readonly sessions = new Map<string, ConsoleSession>();
  /** Called whenever sessions end (streams held by them close). */
  readonly ended = new Set<() => void>();

  /**
   * @param clock milliseconds since the epoch.
   * @param ownerKey whether a key hash is still an owner key of the hub.
   */
  constructor(private readonly clock: () => number, private readonly ownerKey: (keyHash: string) => boolean) {}

  /** A new sign-in token for the owner key `keyHash`: 32 random bytes, base64url; good once until `expiresAt` (ms). */
  signInToken(keyHash: string): { token: string; expiresAt: number } {
    const now = this.clock();
    for (const [h, p] of this.pending) if (p.expiresAt <= now) this.pending.delete(h);
    while (this.pending.size >= consoleSignInsPendingMax) this.pending.delete(this.pending.keys().next().value!);
    const token = randomBytes(32).toString("base64url");
    const expiresAt = now + consoleSignInValidMs;
    this.pending.set(hashKey(token), { keyHash, expiresAt });
    return { token, expiresAt };
  }

  /**
   * Exchanges a sign-in token for a session from `origin`. The token is used up whatever the outcome.
   * @returns the cookie's value and the session, or null when the token is unknown, used, expired, or its key gone.
   */
  signIn(token: string, origin: string): { cookie: string; session: ConsoleSession } | null {
    const h = hashKey(token);
    const p = this.pending.get(h);
    this.pending.delete(h);
    const now = this.clock();
    if (!p || p.expiresAt <= now || !this.ownerKey(p.keyHash)) return null;
    while (this.sessions.size >= consoleSessionsMax) this.endOne(this.sessions.keys().next().value!);
    const cookie = randomBytes(32).toString("base64url");
    const session: ConsoleSession = { id: hashKey(cookie), keyHash: p.keyHash, origin, expiresAt: now + consoleSessionMaxMs };
    this.sessions.set(session.id, session);
    return { cookie, session };
  }

  /** The live session a cookie's value names, or null (an expired one, or one whose key is gone, ends here). */
  find(cookie: string | null): ConsoleSession | null {
    if (!cookie) return null;
    const s = this.sessions.get(hashKey(cookie));
    if (!s) return null;
    if (!this.alive(s)) {
      this.endOne(s.id);
      return null;
    }
    return s;
  }

  /** Whether a session still holds: not ended, not expired, its owner key still there. */
  alive(s: ConsoleSession): boolean {
    return this.sessions.get(s.id) === s && s.expiresAt > this.clock() && this.ownerKey(s.keyHash);
  }

  /** Ends one session (sign-out). */
  end(s: ConsoleSession): void {
    if (this.sessions.get(s.id) === s) this.endOne(s.id);
  }

  /** Ends every session and forgets every unused sign-in link. @returns how many sessions ended. */
  endAll(): number {
    const n = this.sessions.size;
    this.sessions.clear();
    this.pending.clear();
    this.notify();
    return n;
  }

  /** Ends the sessions (and forgets the links) whose owner key is gone: called when keys change. */
  dropRevoked(): void {
    for (const [h, p] of this.pending) if (!this.ownerKey(p.keyHash)) this.pending.delete(h);
    let any = false;
    for (const s of [...this.sessions.values()]) {
      if (!this.ownerKey(s.keyHash)) {
        this.sessions.delete(s.id);
        any = true;
      }
    }
    if (any) this.notify();
  }

  /** How many sessions are held (tests, benchmark). */
  get size(): number {
    return this.sessions.size;
  }

  private endOne(id: string): void {
    this.sessions.delete(id);
    this.notify();
  }

  private notify(): void {
    for (const f of [...this.ended]) f();
  }
}
