/**
 * Reading an agent's last message (protocol.md Agent 只需要做一件事): the first line's outcome marker
 * (Chinese or English) and the receipt in the last ```agent-autoloop block. A last ```json block holding only
 * receipt fields is a mislabeled receipt, which the worker asks to rewrite; an ordinary json block is left alone.
 */
import type { Receipt } from "../protocol/schema.js";
import { check, isRealIsoDate } from "../protocol/validate.js";
import type { Lang } from "../i18n/messages.js";

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
  /** Why the receipt could not be used (bad JSON, bad field, mislabeled block), or null. */
  receiptError: string | null;
}

const receiptKeys = ["ask", "notice", "resolve", "later", "events"];
const markers: { re: RegExp; outcome: MessageOutcome; needsYou?: boolean }[] = [
  { re: /^\s*(?:没跑成|not run)\s*[:：]\s*(.*)$/i, outcome: "failed" },
  { re: /^\s*(?:待你处理|needs you)\s*[:：]\s*(.*)$/i, outcome: "done", needsYou: true },
  { re: /^\s*(?:没事可做|nothing to do)\s*[:：]\s*(.*)$/i, outcome: "nothing" },
];

/** Fenced code blocks of a Markdown text, in order: their info word and body. */
export function fencedBlocks(text: string): { lang: string; body: string }[] {
  const out: { lang: string; body: string }[] = [];
  const re = /^(`{3,}|~{3,})[ \t]*([\w-]*)[^\n]*\n([\s\S]*?)^\1[ \t]*$/gm;
  for (let m = re.exec(text); m; m = re.exec(text)) out.push({ lang: m[2]!.toLowerCase(), body: m[3]! });
  return out;
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
  return { outcome, summary, error, needsYou, receipt, receiptError };
}

/** Parses and validates a receipt's JSON text. */
export function parseReceipt(body: string, lang: Lang): { ok: true; receipt: Receipt } | { ok: false; error: string } {
  let v: unknown;
  try {
    v = JSON.parse(body.trim() === "" ? "{}" : body);
  } catch (e) {
    return { ok: false, error: `receipt JSON: ${(e as Error).message}` };
  }
  const c = check("Receipt", v, lang);
  if (!c.ok) return { ok: false, error: `receipt: ${c.error}` };
  const bad = (c.value.later ?? []).findIndex((l) => "at" in l && !isRealIsoDate(l.at));
  if (bad >= 0) return { ok: false, error: `receipt: later[${bad}].at is not a real date-time` };
  const badAsk = (c.value.ask ?? []).findIndex((a) => a.recommend !== undefined && a.recommend >= a.options.length);
  if (badAsk >= 0) return { ok: false, error: `receipt: ask[${badAsk}].recommend is not one of its options` };
  return { ok: true, receipt: c.value };
}
