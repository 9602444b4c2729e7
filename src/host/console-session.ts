/**
 * Owner console sessions (issue 17, issue 30; DESIGN.md "Plugin hosts and the console"): `agent-autoloop console` asks
 * the hub for a sign-in link (`POST /v1/console/sign-in` with the owner key); the link carries a random token, good
 * once and for `consoleSignInValidMs`, which the console page exchanges (`POST /console/session`) for a session cookie
 * `HttpOnly; SameSite=Strict; Path=/` (+ `Secure` and the `__Host-` name when the hub's public URL is https).
 *
 * Where the state lives: in the hub's memory and, so that a restart (an update of the service) signs nobody out, in
 * the home's `console-sessions.json` (mode 0600) — never in the fact log. A session is a capability a browser holds,
 * not a decision of the kernel: keeping it out of facts keeps the kernel unchanged and no session anywhere `why` could
 * show it. The file holds only SHA-256 hashes of the cookies (like keys), so reading it signs nobody in. Sign-in
 * links stay in memory only: a restart forgets the unused ones (they live five minutes anyway).
 *
 * A session stands for the owner key that made its link: it ends when that key is removed or replaced (checked on
 * every use, and dropped when keys change), `consoleSessionIdleMs` after its last use, `consoleSessionMaxMs` after its
 * sign-in, on sign-out, when the owner ends it (`agent-autoloop console --end <id>`) or all of them (`--end`). It
 * remembers the origin it signed in from: a changing request with the cookie must come from that origin (`Origin`).
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { writeFileAtomic } from "./home.js";
import { dropSignInPage } from "./sign-in-page.js";
import { hashKey } from "../kernel/credentials.js";
import { consoleSessionIdleMs, consoleSessionMaxMs, consoleSessionsMax, consoleSessionTouchMs, consoleSignInsPendingMax, consoleSignInValidMs } from "../kernel/limits.js";

/** One signed-in console: the owner key it stands for and where it signed in from. All times in ms since the epoch. */
export interface ConsoleSession {
  /** SHA-256 of the cookie's value (the map's key). */
  readonly id: string;
  /** The session's public name (12 hex characters) that `console --sessions` lists and `--end <ref>` ends. */
  readonly ref: string;
  /** The owner key's hash (what the kernel knows keys by). */
  readonly keyHash: string;
  /** `scheme://host[:port]` of the page that signed in. */
  readonly origin: string;
  /**
   * SHA-256 of the page secret (issue 26 round 32, F32b-1): a second secret the console page keeps in its origin's
   * storage and sends (`consolePageHeader`) with every request. A browser sends the cookie to every port of the hub's
   * host, where an agent may listen; it keeps the origin's storage for the origin alone, so the cookie without it
   * changes nothing.
   */
  readonly pageHash: string;
  /** When it signed in. */
  readonly createdAt: number;
  /** When it was last used (a request with its cookie). */
  usedAt: number;
  /** When it ends whatever happens. */
  readonly expiresAt: number;
}

/**
 * Where sessions are kept between hub processes (the home's console-sessions.json; tests use memory). `load` returns
 * what `save` last wrote, or undefined when nothing was; `save` replaces it whole. Both may throw; the sessions then
 * live in memory only (a failed `load` starts with none) and the hub says so through `onError`.
 */
export interface ConsoleSessionStore {
  load(): unknown;
  save(value: StoredSessions): void;
  /** A sign-in token was used up: its page, when `console` opened one, goes (issue 26 round 11, F2). */
  usedUp?(token: string): void;
}

/** What a store keeps: a version and the sessions (hashes and times only). */
export interface StoredSessions {
  v: number;
  sessions: readonly ConsoleSession[];
}

/**
 * The stored form's version: 2 since sessions have a page secret (issue 26 round 32, F32b-1). A file of another
 * version is not read: its sessions end (the update that brought page secrets signs every console out once).
 */
const storedVersion = 2;
const hex64 = /^[0-9a-f]{64}$/;
/** A session's public name (`ConsoleSession.ref`): 12 lowercase hex characters. */
export const sessionRefPattern = /^[0-9a-f]{12}$/;

/**
 * The sessions a store's value holds that are well formed; anything else in it is left out (a damaged or hand-edited
 * file signs those consoles out, never in: each kept one still needs its cookie, whose hash only the file holds).
 */
export function storedSessions(value: unknown): ConsoleSession[] {
  const v = value as { v?: unknown; sessions?: unknown } | null;
  if (!v || v.v !== storedVersion || !Array.isArray(v.sessions)) return [];
  const out: ConsoleSession[] = [];
  for (const raw of v.sessions.slice(0, consoleSessionsMax) as Record<string, unknown>[]) {
    if (!raw || typeof raw !== "object") continue;
    const { id, ref, keyHash, origin, pageHash, createdAt, usedAt, expiresAt } = raw;
    if (typeof id !== "string" || !hex64.test(id) || typeof ref !== "string" || !sessionRefPattern.test(ref) || typeof keyHash !== "string" || keyHash === "") continue;
    if (typeof pageHash !== "string" || !hex64.test(pageHash)) continue;
    if (typeof origin !== "string" || originOf(origin) !== origin) continue;
    if (![createdAt, usedAt, expiresAt].every((n) => typeof n === "number" && Number.isSafeInteger(n) && n >= 0)) continue;
    out.push({ id, ref, keyHash, origin, pageHash, createdAt: createdAt as number, usedAt: usedAt as number, expiresAt: expiresAt as number });
  }
  return out;
}

/** The header the console page sends its page secret in (`ConsoleSession.pageHash`). */
export const consolePageHeader = "x-aa-console";

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

/** The console's sign-in tokens of one hub process, and its sessions, kept in `store` across processes. */
export class ConsoleSessions {
  private readonly pending = new Map<string, { keyHash: string; expiresAt: number }>();
  private readonly sessions = new Map<string, ConsoleSession>();
  /** Per session: the `usedAt` the store holds (a use is written only when it is `consoleSessionTouchMs` newer). */
  private readonly stored = new Map<string, number>();
  /** Called whenever sessions end (streams held by them close). */
  readonly ended = new Set<() => void>();

  /**
   * Loads the sessions `store` kept (those still alive).
   * @param clock milliseconds since the epoch.
   * @param ownerKey whether a key hash is still an owner key of the hub.
   * @param store where sessions outlive the process; none: memory only.
   * @param onError told when the store cannot be read or written (the sessions then stay in memory).
   */
  constructor(
    private readonly clock: () => number,
    private readonly ownerKey: (keyHash: string) => boolean,
    private readonly store: ConsoleSessionStore | null = null,
    private readonly onError: (e: Error) => void = () => {},
  ) {
    let kept: ConsoleSession[] = [];
    try {
      kept = storedSessions(store?.load());
    } catch (e) {
      onError(e as Error);
    }
    for (const s of kept) {
      this.sessions.set(s.id, s);
      this.stored.set(s.id, s.usedAt);
    }
    const before = this.sessions.size;
    for (const s of kept) if (!this.alive(s)) this.sessions.delete(s.id);
    if (this.sessions.size !== before) this.save();
  }

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
   * @returns the cookie's value, the page secret (the page keeps it; `find` wants both) and the session, or null when
   *   the token is unknown, used, expired, or its key gone.
   */
  signIn(token: string, origin: string): { cookie: string; page: string; session: ConsoleSession } | null {
    const h = hashKey(token);
    const p = this.pending.get(h);
    this.pending.delete(h);
    if (p) this.store?.usedUp?.(token);
    const now = this.clock();
    if (!p || p.expiresAt <= now || !this.ownerKey(p.keyHash)) return null;
    while (this.sessions.size >= consoleSessionsMax) this.endOne(this.sessions.keys().next().value!);
    const cookie = randomBytes(32).toString("base64url");
    const page = randomBytes(32).toString("base64url");
    const session: ConsoleSession = {
      id: hashKey(cookie), ref: randomBytes(6).toString("hex"), keyHash: p.keyHash, origin, pageHash: hashKey(page), createdAt: now, usedAt: now, expiresAt: now + consoleSessionMaxMs,
    };
    this.sessions.set(session.id, session);
    this.save();
    return { cookie, page, session };
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
    s.usedAt = this.clock();
    if (s.usedAt - (this.stored.get(s.id) ?? 0) >= consoleSessionTouchMs) this.save();
    return s;
  }

  /**
   * Whether `page` (a request's `consolePageHeader`) is the session's page secret: compared as hashes in constant time.
   * False for none (issue 26 round 32, F32b-1).
   */
  pageOk(s: ConsoleSession, page: string | undefined): boolean {
    if (!page) return false;
    return timingSafeEqual(Buffer.from(hashKey(page)), Buffer.from(s.pageHash));
  }

  /** Whether a session still holds: not ended, not expired, not idle too long, its owner key still there. */
  alive(s: ConsoleSession): boolean {
    const now = this.clock();
    return this.sessions.get(s.id) === s && s.expiresAt > now && s.usedAt + consoleSessionIdleMs > now && this.ownerKey(s.keyHash);
  }

  /** The live sessions, oldest sign-in first (dead ones end here). */
  list(): ConsoleSession[] {
    for (const s of [...this.sessions.values()]) if (!this.alive(s)) this.endOne(s.id);
    return [...this.sessions.values()].sort((a, b) => a.createdAt - b.createdAt);
  }

  /** Ends the session named `ref` (its public name). @returns whether one ended. */
  endRef(ref: string): boolean {
    const s = [...this.sessions.values()].find((x) => x.ref === ref);
    if (!s) return false;
    this.endOne(s.id);
    return true;
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
    this.save();
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
    if (any) {
      this.save();
      this.notify();
    }
  }

  /** How many sessions are held (tests, benchmark). */
  get size(): number {
    return this.sessions.size;
  }

  private endOne(id: string): void {
    this.sessions.delete(id);
    this.save();
    this.notify();
  }

  /** Writes every session to the store (the whole set: at most `consoleSessionsMax` lines of hashes). */
  private save(): void {
    if (!this.store) return;
    const all = [...this.sessions.values()];
    try {
      this.store.save({ v: storedVersion, sessions: all });
    } catch (e) {
      this.onError(e as Error);
      return;
    }
    this.stored.clear();
    for (const s of all) this.stored.set(s.id, s.usedAt);
  }

  private notify(): void {
    for (const f of [...this.ended]) f();
  }
}

/**
 * The home's console-sessions.json as a store: JSON, written atomically and durably with mode 0600 (writeFileAtomic).
 * A file that is not there loads as nothing; one that cannot be read or parsed throws (the hub logs it and starts
 * with no sessions, and the next sign-in writes it anew). `pages`: the home's `console-links`, where a used-up token's
 * page is deleted.
 */
export function fileSessionStore(path: string, pages?: string): ConsoleSessionStore {
  return {
    usedUp(token) {
      if (pages !== undefined) dropSignInPage(pages, token);
    },
    load() {
      let text: string;
      try {
        text = readFileSync(path, "utf8");
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
        throw e;
      }
      return JSON.parse(text) as unknown;
    },
    save(value) {
      writeFileAtomic(path, JSON.stringify(value) + "\n");
    },
  };
}
