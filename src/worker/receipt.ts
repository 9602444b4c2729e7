/**
 * Reading an agent's last message (protocol.md Agent 只需要做一件事): the first line's outcome marker
 * (Chinese or English) and the receipt in the last ```agent-autoloop block. A last ```json block holding only
 * receipt fields is a mislabeled receipt, which the worker asks to rewrite; an ordinary json block is left alone.
 * A message that calls for the owner without an ask (issue 14: the owner is never left unaware) is rewritten too:
 * a first line "待你处理：" / "Needs you:", or a last line outside code blocks that ends with a question mark.
 */
import type { Notice, Receipt, Result, Usage } from "../protocol/schema.js";
import { cardTextMaxCodepoints, receiptItemsMax } from "../kernel/limits.js";
import { relayed } from "../kernel/text.js";
import { check, isRealIsoDate } from "../protocol/validate.js";
import { parseJson } from "../kernel/json-error.js";
import { t, type Lang } from "../i18n/messages.js";

export type MessageOutcome = "done" | "nothing" | "failed";

export interface ReadMessage {
  outcome: MessageOutcome;
  /** The first line, as the one-sentence conclusion. */
  summary: string;
  /** For `failed`: the reason after the marker. */
  error: string | null;
  /** The first line said the owner must act (待你处理 / Needs you). */
  needsYou: boolean;
  /** The receipt, `{}` when the message has none. */
  receipt: Receipt;
  /**
   * Why the message must be written again, or null: the receipt could not be used (bad JSON, bad field, mislabeled
   * block), or the message calls for the owner without an ask (`unasked`).
   */
  receiptError: string | null;
  /**
   * A `done` message with a readable receipt but no ask that still calls for the owner: `needsYou` (its first line
   * has the 待你处理 / Needs you marker; `line` is that line) or `question` (its last line outside code blocks
   * ends with "?" or "？"; `line` is that line). Its receipt is kept: what it lacks is the ask.
   */
  unasked: { kind: "needsYou" | "question"; line: string } | null;
}

/** The receipt's fields (`ReceiptFields` in src/protocol/schema.ts), listed here without loading the schema library. */
const listedReceiptKeys = ["ask", "notice", "resolve", "later", "events"] as const satisfies readonly (keyof Receipt)[];
const receiptKeys: readonly string[] = listedReceiptKeys;
/** A field of the receipt missing above: the type check fails here, naming it (`true` is not assignable to it). */
type Unlisted = Exclude<keyof Receipt, (typeof listedReceiptKeys)[number]>;
const everyReceiptKeyListed: [Unlisted] extends [never] ? true : Unlisted = true;
const markers: { re: RegExp; outcome: MessageOutcome; needsYou?: boolean }[] = [
  { re: /^\s*(?:没跑成|not run)\s*[:：]\s*(.*)$/i, outcome: "failed" },
  { re: /^\s*(?:待你处理|needs you)\s*[:：]\s*(.*)$/i, outcome: "done", needsYou: true },
  { re: /^\s*(?:没事可做|nothing to do)\s*[:：]\s*(.*)$/i, outcome: "nothing" },
];

/** A fenced code block of Markdown: the fence, the info word, the body. */
const fencedBlockRe = /^(`{3,}|~{3,})[ \t]*([\w-]*)[^\n]*\n([\s\S]*?)^\1[ \t]*$/gm;

/** Fenced code blocks of a Markdown text, in order: their info word and body. */
export function fencedBlocks(text: string): { lang: string; body: string }[] {
  return [...text.matchAll(fencedBlockRe)].map((m) => ({ lang: m[2]!.toLowerCase(), body: m[3]! }));
}

/**
 * The last non-blank line of a message outside its fenced code blocks, trimmed, if it ends with a question mark
 * (ASCII or full width) before any closing Markdown emphasis; else null. A summary that only mentions a question
 * ends otherwise; a question meant for the owner is nearly always the last thing said.
 */
function closingQuestion(text: string): string | null {
  const prose = text.replace(fencedBlockRe, "").trimEnd();
  const last = prose.slice(prose.lastIndexOf("\n") + 1).trim();
  return /[?？][*_]*$/.test(last) ? last : null;
}

/** Reads a last message into outcome, summary and receipt. Never throws. */
export function readMessage(text: string, lang: Lang = "en"): ReadMessage {
  const first = text.split(/\r?\n/).find((l) => l.trim() !== "")?.trim() ?? "";
  let outcome: MessageOutcome = "done";
  let error: string | null = null;
  let needsYou = false;
  for (const m of markers) {
    const hit = m.re.exec(first);
    if (hit) {
      outcome = m.outcome;
      needsYou = m.needsYou === true;
      if (m.outcome === "failed") error = hit[1]!.trim() || first;
      break;
    }
  }
  const summary = [...first].slice(0, 1000).join("");
  const blocks = fencedBlocks(text);
  const own = [...blocks].reverse().find((b) => b.lang === "agent-autoloop");
  let receipt: Receipt = {};
  let receiptError: string | null = null;
  if (own) {
    const parsed = parseReceipt(own.body, lang);
    if (parsed.ok) receipt = parsed.receipt;
    else receiptError = parsed.error;
  } else {
    const json = [...blocks].reverse().find((b) => b.lang === "json");
    if (json) {
      try {
        const v = JSON.parse(json.body) as unknown;
        if (v && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length > 0 && Object.keys(v).every((k) => receiptKeys.includes(k))) {
          receiptError = "the receipt is in a ```json block; it must be in an ```agent-autoloop block";
        }
      } catch {
        // an ordinary json block, not ours
      }
    }
  }
  let unasked: ReadMessage["unasked"] = null;
  if (outcome === "done" && receiptError === null && !receipt.ask?.length) {
    const question = closingQuestion(text);
    if (needsYou) unasked = { kind: "needsYou", line: first };
    else if (question !== null) unasked = { kind: "question", line: question };
    if (unasked) receiptError = t(lang, unasked.kind === "needsYou" ? "receipt.needsYouNoAsk" : "receipt.questionNoAsk");
  }
  return { outcome, summary, error, needsYou, receipt, receiptError, unasked };
}

/**
 * The notice the worker adds when a message's receipt error stands after the rewrites (or the agent has no session):
 * for a message that called for the owner without an ask, its first line (and its closing question) and where its
 * output is; else the error and where the output is, the receipt voided.
 * @param output the path of the last launch's output file
 */
export function receiptErrorNotice(msg: ReadMessage, error: string, run: number, output: string, lang: Lang): { title: string; text: string } {
  if (msg.unasked === null) return { title: t(lang, "card.receipt.title", { run }), text: `${error}\n${output}` };
  const lines = [...new Set([msg.summary, msg.unasked.line])];
  return { title: t(lang, msg.unasked.kind === "needsYou" ? "card.needsYou.title" : "card.question.title", { run }), text: [...lines, output].join("\n") };
}

/**
 * What a run reports when the hub refused its result (`body`) for the hub's `reason` (issue 26 round 12, F12-9): the
 * outcome, summary, error, session and usage as they were, the receipt voided — none of its asks, notices,
 * resolutions, timers or events — and as notices the worker's `own` (what it found after the run, which the owner
 * must hear whatever the agent wrote) and one saying why, with the run's folder `where`.
 */
export function voidedResult(body: Result, own: readonly Notice[], reason: string, run: number, where: string, lang: Lang): Result {
  const { outcome, summary, error, session, usage } = body;
  const why: Notice = { title: t(lang, "card.resultRefused.title", { run }), text: [...`${relayed(reason, false, cardTextMaxCodepoints)}\n${where}`].slice(0, cardTextMaxCodepoints).join("") };
  return { outcome, summary, error, session, usage, workerNotice: [...own, why].slice(-receiptItemsMax) };
}

/**
 * Adds a launch's usage `u` to a run's sums `sum` (only finite figures of 0 or more), each sum held at
 * `Number.MAX_VALUE` (the protocol's maximum): two figures near it would add up to Infinity, which JSON writes as
 * null and the hub refuses with the whole result (issue 26 round 13, F13-4).
 */
export function addUsage(sum: Usage, u: Usage | undefined): void {
  if (!u) return;
  for (const k of ["input", "output", "cached", "cost"] as const) {
    const v = u[k];
    if (typeof v === "number" && Number.isFinite(v) && v >= 0) sum[k] = Math.min((sum[k] ?? 0) + v, Number.MAX_VALUE);
  }
}

/** Parses and validates a receipt's JSON text. */
export function parseReceipt(body: string, lang: Lang): { ok: true; receipt: Receipt } | { ok: false; error: string } {
  // Where it is not JSON, never V8's message: that quotes the agent's text around the fault (issue 26 round 10: ~10
  // characters of a run's secret on a notice card, never whole, so never redacted).
  const read = parseJson(body.trim() === "" ? "{}" : body);
  if (!read.ok) return { ok: false, error: t(lang, "receipt.json", { error: t(lang, "json.at", { ...read.at }) }) };
  const v = read.value;
  const c = check("Receipt", v, lang);
  if (!c.ok) return { ok: false, error: t(lang, "receipt.invalid", { error: c.error }) };
  const bad = (c.value.later ?? []).findIndex((l) => "at" in l && !isRealIsoDate(l.at));
  if (bad >= 0) return { ok: false, error: t(lang, "receipt.laterAt", { index: bad }) };
  const badAsk = (c.value.ask ?? []).findIndex((a) => a.recommend !== undefined && a.recommend >= a.options.length);
  if (badAsk >= 0) return { ok: false, error: t(lang, "receipt.recommend", { index: badAsk }) };
  return { ok: true, receipt: c.value };
}
