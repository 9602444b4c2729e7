/**
 * The reader's language from an `Accept-Language` header (RFC 9110 §12.5.4), for pages a stranger opens — the card
 * link page (issue 30) — rather than the hub's own language: the tag of highest weight that is Chinese (`zh…`) or
 * English (`en…`); `fallback` when none is, or the header is missing or unreadable. At most the first
 * `acceptLanguageMaxTags` tags are looked at.
 */
import type { Lang } from "../i18n/messages.js";

/** How many tags of a header are read (a named limit on a header anyone can send). */
const acceptLanguageMaxTags = 32;

/** The language for a reader who sent `header`. */
export function langOfAcceptLanguage(header: string | undefined, fallback: Lang): Lang {
  if (!header) return fallback;
  let best: { lang: Lang; q: number } | null = null;
  for (const part of header.split(",").slice(0, acceptLanguageMaxTags)) {
    const [tag = "", ...params] = part.trim().toLowerCase().split(";");
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (!Number.isFinite(q) || q <= 0 || q > 1) continue;
    const lang: Lang | null = tag === "zh" || tag.startsWith("zh-") ? "zh" : tag === "en" || tag.startsWith("en-") ? "en" : null;
    if (lang !== null && (best === null || q > best.q)) best = { lang, q };
  }
  return best?.lang ?? fallback;
}
