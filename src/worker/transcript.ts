/**
 * Sending runs' transcripts to the hub (issue 30): the steps the output thread read (transcript-lines.ts) become
 * entries of the run's attempt and launch, queued per run and sent with the run's token in batches — every
 * `transcriptBatchIntervalMs`, or at once when `transcriptBatchMaxEntries` are waiting. A hub that cannot be reached
 * gets the batch again next time (at most `transcriptQueueMaxEntries` wait; older ones are dropped); a refusal drops
 * the batch; a hub that says the transcript is cut gets nothing more of that run. What the agent did never holds up
 * its run: sending is in the background, and the rest goes before the run's result.
 */
import { createHmac } from "node:crypto";
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
 * With `o.keys`, keys are replaced too (numbered when two become one); `o.work.tries` counts the numbered names tried
 * (the linear bound a test checks, not a time).
 */
export function redactedDeep<T>(value: T, secrets: readonly string[], o: { keys?: boolean; work?: { tries: number }; fingerprintKey?: Buffer } = {}): T {
  if (secrets.length === 0) return value;
  const text = (v: string): string => {
    const plain = neutralise(v, false);
    const out = redactCutParts(redact(plain, secrets), secrets);
    // A string that spells a fingerprint out itself gets one of its own too (round 58, F58a-2: a key written as
    // "REDACTED ⟨…⟩" by the agent looked like one the card showed for a secret).
    if (out === plain && !(o.fingerprintKey && fingerprintLike.test(v))) return v;
    const shown = identifierRe.test(plain) ? redact(plain, secrets, "REDACTED") : out;
    return o.fingerprintKey ? `${shown} ${fingerprint(o.fingerprintKey, v)}` : shown;
  };
  // With `keys`, an object's keys too; two keys that become the same get " #2", " #3", … (none is lost). Each base
  // goes on from the number it reached (issue 26 round 12, F12-5: starting again at 2 for every key was quadratic —
  // 32,000 keys that all became REDACTED held the hub's event loop 92 s); a name is tried at most once per base.
  const key = (k: string, seen: Set<string>, next: Map<string, number>): string => {
    const base = o.keys ? text(k) : k;
    let out = base;
    if (base !== k && seen.has(out)) {
      let n = next.get(base) ?? 2;
      for (; ; n += 1) {
        if (o.work) o.work.tries += 1;
        out = `${base} #${n}`;
        if (!seen.has(out)) break;
      }
      next.set(base, n + 1);
    }
    seen.add(out);
    return out;
  };
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return text(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === "object") {
      const seen = new Set(Object.keys(v));
      const next = new Map<string, number>();
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [key(k, seen, next), walk(x)]));
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
export function shownArguments(args: unknown, secrets: readonly string[], fingerprintKey?: Buffer): unknown {
  return redactedDeep(args, secrets, { keys: true, ...(fingerprintKey ? { fingerprintKey } : {}) });
}

/** What `fingerprint` writes, anywhere in a text. */
const fingerprintLike = /⟨[0-9a-f]{16}⟩/;

/**
 * `⟨<16 hex>⟩`: the first 64 bits of HMAC-SHA256 of `text` under `key` — what a redacted string of a tool call's
 * arguments carries beside `[redacted]`, so that two calls whose strings differ only where redaction cannot show it (a
 * secret, a control character it removed, a literal "[redacted]") never have the same shown arguments, digest and
 * "allow once" (issue 26 round 56, F56a-1: a card showed `echo [redacted] …; echo harmless`, and the call that used its
 * answer sent `harm\u0001less\u0085`). Keyed by the worker's own random key (`ToolBridges`), never sent: the hub and
 * whoever reads its facts cannot test guesses of a secret against it.
 */
export function fingerprint(key: Buffer, text: string): string {
  return `⟨${createHmac("sha256", key).update(text, "utf8").digest("hex").slice(0, 16)}⟩`;
}

/** Of a secret cut by an excerpt, a part shorter than this is left (a cut right after `gh` tells nothing). */
const cutPartMinChars = 4;

/** What a cut looks like: how texts are cut here, and how an agent plugin quotes a line it could not read. One code unit. */
const cut = "…";

/**
 * `text` with what a cut left of a secret replaced by `[redacted]` too: a start of a secret right before "…" (how
 * texts are cut here, and how an agent plugin quotes a line it could not read), an end of one right after it. An
 * excerpt cut inside a secret keeps a part that `redact` cannot find whole (issue 26 round 10: V8's JSON error quoted
 * ~10 characters of a token). Parts that touch or overlap are one `[redacted]`.
 *
 * Linear in the text and the secrets (issue 26 round 11, F11: this runs in the hub's event loop on what an agent
 * sends, and trying every prefix at every cut took 3.2 s for an argument of 1,000,000 "…"): for each secret, one
 * Knuth–Morris–Pratt pass forward (the longest prefix of the secret ending at each cut) and one backward with the
 * secret reversed (the longest suffix starting after it) — at most 4 steps per character of the text and of the
 * secret. `work.steps` counts them (the bound a test checks, not a time).
 */
export function redactCutParts(text: string, secrets: readonly string[], work: { steps: number } = { steps: 0 }): string {
  if (!text.includes(cut)) return text;
  // Two reads of the text, counting then placing (an indexOf per cut, or an array grown a million times, costs far more).
  const cutCode = cut.charCodeAt(0);
  let count = 0;
  for (let i = 0; i < text.length; i += 1) if (text.charCodeAt(i) === cutCode) count += 1;
  const cuts = new Int32Array(count);
  for (let i = 0, j = 0; i < text.length; i += 1) if (text.charCodeAt(i) === cutCode) cuts[j++] = i;
  const before = new Int32Array(cuts.length);
  const after = new Int32Array(cuts.length);
  for (const s of secrets) {
    if (s.length <= cutPartMinChars) continue;
    const forward = longestPartsAt(text, s, cuts, 1, work);
    const backward = longestPartsAt(text, s.split("").reverse().join(""), cuts, -1, work); // by code units, as it reads
    for (let j = 0; j < cuts.length; j += 1) {
      before[j] = Math.max(before[j]!, forward[j]!);
      after[j] = Math.max(after[j]!, backward[j]!);
    }
  }
  // The parts as ranges of the text, in order of their starts, merged where they touch or overlap.
  const ranges: [number, number][] = [];
  for (let j = 0; j < cuts.length; j += 1) {
    if (before[j]! > 0) ranges.push([cuts[j]! - before[j]!, cuts[j]!]);
    if (after[j]! > 0) ranges.push([cuts[j]! + cut.length, cuts[j]! + cut.length + after[j]!]);
  }
  if (ranges.length === 0) return text;
  ranges.sort((a, b) => a[0] - b[0]);
  const parts: string[] = [];
  let from = 0;
  let open: [number, number] | null = null;
  for (const r of ranges) {
    if (open && r[0] <= open[1]) {
      open[1] = Math.max(open[1], r[1]);
      continue;
    }
    if (open) parts.push(text.slice(from, open[0]), redacted), (from = open[1]);
    open = [r[0], r[1]];
  }
  parts.push(text.slice(from, open![0]), redacted, text.slice(open![1]));
  return parts.join("");
}

/**
 * For each cut of `cuts` (ascending positions of `cut` in `text`), the length of the longest part of `pattern` next to
 * it of at least `cutPartMinChars` and shorter than the pattern, else 0. `dir` 1: a prefix of `pattern` ending right
 * before the cut; `dir` -1 (`pattern` reversed by the caller): a suffix of the secret starting right after it. One
 * Knuth–Morris–Pratt scan of the text in that direction; `work.steps` counts each character read and each fallback.
 */
function longestPartsAt(text: string, pattern: string, cuts: Int32Array, dir: 1 | -1, work: { steps: number }): Int32Array {
  const m = pattern.length;
  // fail[q]: the longest proper border of pattern[0, q) — the next shorter prefix that also ends here.
  const fail = new Int32Array(m + 1);
  for (let i = 1, k = 0; i < m; i += 1) {
    work.steps += 1;
    while (k > 0 && pattern.charCodeAt(i) !== pattern.charCodeAt(k)) (k = fail[k]!), (work.steps += 1);
    if (pattern.charCodeAt(i) === pattern.charCodeAt(k)) k += 1;
    fail[i + 1] = k;
  }
  const out = new Int32Array(cuts.length);
  let q = 0;
  // Forward: read text[0, lastCut) and look at each cut before reading it. Backward: read from the end down to just
  // after the first cut, looking at each cut before reading it (what was read is what follows it).
  let j = dir === 1 ? 0 : cuts.length - 1;
  const end = dir === 1 ? cuts[cuts.length - 1]! : cuts[0]!;
  for (let i = dir === 1 ? 0 : text.length - 1; ; i += dir) {
    while (j >= 0 && j < cuts.length && cuts[j] === i) {
      const k = q === m ? fail[m]! : q; // a whole secret here was redacted already; the longest shorter part counts
      out[j] = k >= cutPartMinChars ? k : 0;
      j += dir;
    }
    if (i === end) break;
    work.steps += 1;
    const c = text.charCodeAt(i);
    if (q === m) q = fail[m]!;
    while (q > 0 && c !== pattern.charCodeAt(q)) (q = fail[q]!), (work.steps += 1);
    if (c === pattern.charCodeAt(q)) q += 1;
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
