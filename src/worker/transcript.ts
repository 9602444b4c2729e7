/**
 * Sending runs' transcripts to the hub (issue 30): the steps the output thread read (transcript-lines.ts) become
 * entries of the run's attempt and launch, queued per run and sent with the run's token in batches — every
 * `transcriptBatchIntervalMs`, or at once when `transcriptBatchMaxEntries` are waiting. A hub that cannot be reached
 * gets the batch again next time (at most `transcriptQueueMaxEntries` wait; older ones are dropped); a refusal drops
 * the batch; a hub that says the transcript is cut gets nothing more of that run. What the agent did never holds up
 * its run: sending is in the background, and the rest goes before the run's result.
 */
import type { HubClient } from "../protocol/client.js";
import { HubError } from "../protocol/client.js";
import type { Job } from "../protocol/responses.js";
import type { TranscriptEntry } from "../protocol/schema.js";
import { transcriptBatchIntervalMs, transcriptBatchMaxEntries, transcriptQueueMaxEntries } from "../kernel/limits.js";
import { baseEnvNames, envNameAllowed } from "./env.js";
import { neutralise, redact, redacted } from "../kernel/text.js";

/** One run's queue. */
interface Queue { job: Job; entries: TranscriptEntry[]; timer: NodeJS.Timeout; sending: Promise<void> | null; cut: boolean }

/** The transcripts a worker sends. */
export class TranscriptSender {
  private readonly runs = new Map<number, Queue>();

  /** @param log says why a batch was refused (in the worker's log). */
  constructor(private readonly client: HubClient, private readonly log: (run: number, error: string) => void) {}

  /** Queues `entries` of `job`'s run; sends at once when a batch is full. */
  add(job: Job, entries: readonly TranscriptEntry[]): void {
    if (entries.length === 0) return;
    let q = this.runs.get(job.run);
    if (!q) {
      const timer = setInterval(() => void this.flush(job.run), transcriptBatchIntervalMs);
      timer.unref();
      q = { job, entries: [], timer, sending: null, cut: false };
      this.runs.set(job.run, q);
    }
    q.job = job;
    if (q.cut) return;
    q.entries.push(...entries);
    if (q.entries.length > transcriptQueueMaxEntries) q.entries.splice(0, q.entries.length - transcriptQueueMaxEntries);
    if (q.entries.length >= transcriptBatchMaxEntries) void this.flush(job.run);
  }

  /** Sends one batch of run `run`'s queue, unless one is under way. */
  private flush(run: number): Promise<void> {
    const q = this.runs.get(run);
    if (!q || q.sending || q.entries.length === 0 || q.cut) return q?.sending ?? Promise.resolve();
    const batch = q.entries.splice(0, transcriptBatchMaxEntries);
    q.sending = this.client.request("transcriptPost", { params: { id: run }, body: { entries: batch } }, { auth: q.job.token }).then((a) => {
      if (a.cut) {
        q.cut = true;
        q.entries = [];
      }
    }, (e) => {
      if (e instanceof HubError && e.status >= 400 && e.status < 500) this.log(run, e.message);
      else q.entries.unshift(...batch.slice(0, Math.max(0, transcriptQueueMaxEntries - q.entries.length)));
    }).finally(() => {
      q.sending = null;
      // A full batch waiting (a burst of output) goes at once, not a second later.
      if (q.entries.length >= transcriptBatchMaxEntries && !q.cut) void this.flush(run);
    });
    return q.sending;
  }

  /**
   * Sends what is left of `job`'s run (before its result: the owner reads the whole transcript beside the outcome),
   * one try per batch, then forgets the run.
   */
  async end(job: Job): Promise<void> {
    const q = this.runs.get(job.run);
    if (!q) return;
    q.job = job;
    for (let i = 0; i < 2 * (transcriptQueueMaxEntries / transcriptBatchMaxEntries + 1); i++) {
      // A batch under way (the timer's) is waited for; it takes only what was queued when it went.
      if (q.sending) {
        await q.sending;
        continue;
      }
      if (q.entries.length === 0 || q.cut) break;
      const before = q.entries.length;
      await this.flush(job.run);
      if (q.entries.length >= before && !q.sending) break; // the hub could not take it: do not hold the result up
    }
    clearInterval(q.timer);
    this.runs.delete(job.run);
  }

  /** Stops every timer (the worker stops; what was not sent stays unsent). */
  close(): void {
    for (const q of this.runs.values()) clearInterval(q.timer);
    this.runs.clear();
  }
}

/**
 * `value` with the run's `secrets` replaced by `[redacted]` in every string it holds (object keys are left), for what a
 * worker reports of an agent besides its transcript: the result (summary, error, the receipt's cards, notices and
 * events), the started link, a workflow's files (issue 26 round 9). A string holding a secret is neutralised first
 * (control characters removed, as the transcript does: one inside a secret would otherwise join it again later); one
 * holding none is left exactly as it is. A string of an identifier's characters only (an event's subject, type or id;
 * a timer's key) gets `REDACTED` instead, so that it keeps its format and the hub does not refuse the whole result
 * (round 9b: `[redacted]` in a subject lost the receipt). Arrays and plain objects are copied; the input is unchanged.
 */
export function redactedDeep<T>(value: T, secrets: readonly string[], o: { keys?: boolean } = {}): T {
  if (secrets.length === 0) return value;
  const text = (v: string): string => {
    const plain = neutralise(v, false);
    const out = redactCutParts(redact(plain, secrets), secrets);
    if (out === plain) return v;
    return identifierRe.test(plain) ? redact(plain, secrets, "REDACTED") : out;
  };
  // With `keys`, an object's keys too; two keys that become the same get " #2", " #3", … (none is lost).
  const key = (k: string, seen: Set<string>): string => {
    const base = o.keys ? text(k) : k;
    let out = base;
    for (let n = 2; base !== k && seen.has(out); n += 1) out = `${base} #${n}`;
    seen.add(out);
    return out;
  };
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return text(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === "object") {
      const seen = new Set(Object.keys(v));
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [key(k, seen), walk(x)]));
    }
    return v;
  };
  return walk(value) as T;
}

/**
 * An agent's tool-call arguments as they leave the worker for the hub (issue 26 round 10: a run's GH_TOKEN the agent
 * put in a call — a value `Bearer <token>`, a key, a nested `headers.Authorization` — was shown whole on the approval
 * card, in /v1/state, search, the fact stream and the database): `redactedDeep` with keys too. The hub's digest, card
 * and "allow once" are of these; the plugin still gets the arguments as they were sent.
 */
export function shownArguments(args: unknown, secrets: readonly string[]): unknown {
  return redactedDeep(args, secrets, { keys: true });
}

/** Of a secret cut by an excerpt, a part shorter than this is left (a cut right after `gh` tells nothing). */
const cutPartMinChars = 4;

/**
 * `text` with what a cut left of a secret replaced by `[redacted]` too: a start of a secret right before "…" (how
 * texts are cut here, and how an agent plugin quotes a line it could not read), an end of one right after it. An
 * excerpt cut inside a secret keeps a part that `redact` cannot find whole (issue 26 round 10: V8's JSON error quoted
 * ~10 characters of a token). Linear in the text for each secret and cut.
 */
export function redactCutParts(text: string, secrets: readonly string[]): string {
  const cut = "…";
  let out = text;
  for (let at = out.indexOf(cut); at >= 0; at = out.indexOf(cut, at + 1)) {
    let before = 0;
    let after = 0;
    for (const s of secrets) {
      for (let k = Math.min(s.length - 1, at); k >= cutPartMinChars && k > before; k -= 1) if (out.endsWith(s.slice(0, k), at)) before = k;
      const room = out.length - at - cut.length;
      for (let k = Math.min(s.length - 1, room); k >= cutPartMinChars && k > after; k -= 1) if (out.startsWith(s.slice(s.length - k), at + cut.length)) after = k;
    }
    if (before === 0 && after === 0) continue;
    const head = before > 0 ? `${out.slice(0, at - before)}${redacted}` : out.slice(0, at);
    out = `${head}${cut}${after > 0 ? redacted : ""}${out.slice(at + cut.length + after)}`;
    at = head.length;
  }
  return out;
}

/** The characters of the hub's identifier formats (event subject and type, ids, keys): `[redacted]` would break them. */
const identifierRe = /^[A-Za-z0-9#._:/@-]*$/;

/** Of a secret, values shorter than this are not looked for (a flag's `1`, a `true`, would be replaced everywhere). */
const secretMinChars = 8;

/**
 * The run's secrets, never to appear in its transcript: the run's token and the values of the agent's environment
 * beyond the base list (its CLI's keys: `ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, …; what its rules.json `env` grants:
 * `GH_TOKEN`, …), longest first so that one holding another is replaced whole.
 */
export function runSecrets(job: Job, env: Readonly<Record<string, string>>, more: readonly string[] = []): string[] {
  const values = Object.entries(env).filter(([k, v]) => !envNameAllowed(k, baseEnvNames) && !k.startsWith("AGENT_AUTOLOOP_") && v.length >= secretMinChars).map(([, v]) => v);
  return [...new Set([job.token, ...values, ...more.filter((v) => v.length >= secretMinChars)])].sort((a, b) => b.length - a.length);
}
