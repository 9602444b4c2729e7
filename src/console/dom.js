// @ts-check
/**
 * Building the page without HTML strings: every element is made with `h`, every text goes in as a text node. Text an
 * agent or a source wrote goes through `said`, which also isolates its direction (a bidi control in it cannot turn
 * the text around it) and shows its control characters as visible marks instead of obeying them.
 */
import { besideOrigin, httpUrl } from "./sdk/markdown.js";

/**
 * @typedef {string | number | Node | null | undefined | false} Child
 * @typedef {{ [name: string]: string | number | boolean | null | undefined | ((e: any) => void) }} Attrs
 */

/**
 * An element with attributes and children. `on<event>` attributes take a function; `true` sets a boolean attribute,
 * `false`, null and undefined leave it out; strings and numbers become text nodes, never HTML.
 * @param {string} tag
 * @param {Attrs} [attrs]
 * @param {...(Child | Child[])} children
 * @returns {HTMLElement}
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (typeof v === "function") el.addEventListener(name.slice(2), v);
    else if (v === true) el.setAttribute(name, "");
    else el.setAttribute(name, String(v));
  }
  append(el, children);
  return el;
}

/**
 * Appends children (text for strings and numbers).
 * @param {Node} el
 * @param {(Child | Child[])[]} children
 */
export function append(el, children) {
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
  }
}

/**
 * Replaces an element's children.
 * @param {Element} el
 * @param {...(Child | Child[])} children
 */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

// C0 and C1 controls but tab and line feed, and the Unicode direction controls (embeddings, overrides, isolates,
// marks): shown as ⟦U+XXXX⟧, never applied.
const controls = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text others wrote (an agent, a source, a channel): its control characters made visible.
 * @param {string | null | undefined} text
 * @returns {string}
 */
export function visible(text) {
  return (text ?? "").replace(controls, (c) => `⟦U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}⟧`);
}

/**
 * Text others wrote, as an element of its own whose direction is isolated from the page around it.
 * @param {string | null | undefined} text
 * @param {string} [tag]
 * @param {Attrs} [attrs]
 */
export function said(text, tag = "bdi", attrs = {}) {
  return h(tag, { ...attrs, dir: "auto", class: `said${attrs.class ? ` ${attrs.class}` : ""}` }, visible(text));
}

/** A URL in text: http(s) up to whitespace or a character that ends prose (quotes, angle brackets). */
const urlInText = /https?:\/\/[^\s<>"'`]+/g;
/** Punctuation that ends a sentence rather than the URL it follows. */
const trailing = /[.,;:!?)\]}'"]+$/;

/**
 * Text others wrote (`said`) whose http(s) URLs are links (issue 30): each link opens in a new tab without a
 * referrer or an opener, its text the URL as written; anything else (`javascript:`, markup, Markdown links) stays text.
 * @param {string | null | undefined} text
 * @param {string} [tag]
 * @param {Attrs} [attrs]
 */
export function saidWithLinks(text, tag = "bdi", attrs = {}) {
  const s = text ?? "";
  /** @type {(string | Node)[]} */
  const parts = [];
  let at = 0;
  for (const m of s.matchAll(urlInText)) {
    const url = m[0].replace(trailing, "");
    const href = safeHref(url);
    if (!href) continue;
    parts.push(visible(s.slice(at, m.index)), h("a", { href, rel: "noopener noreferrer", target: "_blank" }, visible(url)));
    at = (m.index ?? 0) + url.length;
  }
  parts.push(visible(s.slice(at)));
  return h(tag, { ...attrs, dir: "auto", class: `said${attrs.class ? ` ${attrs.class}` : ""}` }, ...parts);
}

/**
 * An http(s) URL, normalised as the browser writes it (`URL.href`), or null for any other: the SDK's rule
 * `httpUrl` (a `javascript:` or `data:` link never becomes a link). Null too for another port (or scheme) of the
 * console's own host name: the browser sends the console's cookie there (cookies are not kept per port), and an
 * agent may be the one listening (issue 26 round 32, F32b-1) — such a URL stays text, to be copied by hand.
 * @param {string | null | undefined} url
 * @returns {string | null}
 */
export function safeHref(url) {
  const ok = url ? httpUrl(url) : null;
  return ok === null || besideOrigin(ok, location.origin) ? null : new URL(ok).href;
}
