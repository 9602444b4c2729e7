/**
 * Which workers and channels are polling the hub, so that `serve` can say in one line when one connects or goes
 * silent and stay quiet otherwise. A worker polls `GET /v1/work` and a channel `GET /v1/cards/next`, each a long poll
 * held up to 50 s and asked again at once; one that has not polled for `silentAfterMs` while none of its polls is held
 * has gone silent. This is kept in memory from the polls themselves, not from the recorded `seenAt` rows: those are
 * written at most once a minute (heartbeats are thinned), so a part that comes back within a minute of its last record
 * writes nothing, and a hub that restarts would never say that its worker or its channels are there.
 */
import { t, type Lang } from "../i18n/messages.js";

/** What polls: a worker (`GET /v1/work`) or a channel (`GET /v1/cards/next`). */
export type PartKind = "worker" | "channel";

/**
 * A part that polls; a worker also with what its last poll said: `free`, the runs it can take now (`capacity`), and
 * `inHand`, how many it listed in `running`.
 */
interface Part { kind: PartKind; name: string; held: number; lastAt: number; silent: boolean; said: { free: number; inHand: number } | null }

export interface PresenceOptions {
  /** The clock (ms since epoch). */
  clock: () => number;
  /** No poll for this long (ms), and none held, is silence. */
  silentAfterMs: number;
  log: (line: string) => void;
  lang: Lang;
  /** Whether to look for silence on a timer by itself (false: the caller calls `check`, as tests do). */
  timers?: boolean;
}

/** The workers and channels that poll, and the one timer that notices when one goes silent. */
export class Presence {
  private readonly parts = new Map<string, Part>();
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly opts: PresenceOptions) {}

  /**
   * A poll of `name` began; says "connected" when it is the first, or the first since it went silent. A worker's poll
   * also says how many runs it can take now and how many it has in hand (`said`; null for a channel).
   */
  pollStarted(kind: PartKind, name: string, said: { free: number; inHand: number } | null = null): void {
    const key = `${kind}:${name}`;
    const part = this.parts.get(key) ?? { kind, name, held: 0, lastAt: 0, silent: true, said: null };
    part.said = said ?? part.said;
    if (part.silent) this.opts.log(t(this.opts.lang, "presence.connected", { part: this.label(part) }));
    part.silent = false;
    part.held += 1;
    part.lastAt = this.opts.clock();
    this.parts.set(key, part);
    this.arm();
  }

  /** A poll of `name` was answered (or its client went away). */
  pollEnded(kind: PartKind, name: string): void {
    const part = this.parts.get(`${kind}:${name}`);
    if (!part) return;
    part.held = Math.max(0, part.held - 1);
    part.lastAt = this.opts.clock();
  }

  /** Says "went silent" for each part that has just gone silent. */
  check(): void {
    const now = this.opts.clock();
    for (const part of this.parts.values()) {
      if (part.silent || part.held > 0 || now - part.lastAt < this.opts.silentAfterMs) continue;
      part.silent = true;
      this.opts.log(t(this.opts.lang, "presence.silent", { part: this.label(part), seconds: Math.round((now - part.lastAt) / 1000) }));
    }
  }

  /** When a part that is not silent may have gone silent next (ms), or null when every part is silent. */
  nextCheckAt(): number | null {
    const now = this.opts.clock();
    let next: number | null = null;
    for (const part of this.parts.values()) {
      if (part.silent) continue;
      // A held poll ends within 50 s, and the next look after that ending is silentAfterMs on from then.
      const at = (part.held > 0 ? now : part.lastAt) + this.opts.silentAfterMs;
      next = next === null ? at : Math.min(next, at);
    }
    return next;
  }

  /**
   * A worker's slots as its last poll said them: the runs it can take now (`free`) plus those it has in hand, or null
   * when it has not polled since this hub started (kept in memory only, like everything here).
   */
  capacityOf(name: string): { slots: number; free: number } | null {
    const said = this.parts.get(`worker:${name}`)?.said;
    return said ? { slots: said.free + said.inHand, free: said.free } : null;
  }

  /** Every part that polled since this hub started: its kind, name, long polls held now, and whether it went silent. */
  list(): { kind: PartKind; name: string; held: number; silent: boolean }[] {
    return [...this.parts.values()].map(({ kind, name, held, silent }) => ({ kind, name, held, silent }));
  }

  /** Stops the timer. */
  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** One timer at a time, for the next possible silence; it arms the next when it fires. Never keeps the process up. */
  private arm(): void {
    if (this.timer || this.closed || this.opts.timers === false) return;
    const next = this.nextCheckAt();
    if (next === null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.check();
      this.arm();
    }, Math.max(0, next - this.opts.clock()));
    this.timer.unref?.();
  }

  private label(part: Part): string {
    return t(this.opts.lang, part.kind === "worker" ? "presence.worker" : "presence.channel", { name: part.name });
  }
}
