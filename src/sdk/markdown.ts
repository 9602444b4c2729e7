/**
 * The safe Markdown subset of card templates and panels (spec declarative-plugins.md §3.4, node `markdown`), read into
 * tokens with no DOM and no HTML: headings, paragraphs, bullet and numbered lists, quotes and fenced code blocks
 * (`markdownBlocks`), and inside them inline code, bold, italics and links (`inlineSpans`). Anything else — raw
 * HTML, tables, images, a link to anything but http(s) — stays literal text: a renderer escapes (or puts in a text
 * node) every string of a token and builds only the elements the token types name, so no input makes markup of its own.
 *
 * One tokenizer, every renderer: the card link page builds its HTML from these tokens (src/host/template-html.ts), the
 * owner console builds DOM nodes from them (src/console/ui.js, which loads the compiled file as
 * `/console/sdk/markdown.js`), and a channel plugin that renders a card template in its own markup can use them too
 * (`agent-autoloop/sdk`), so a template reads the same everywhere.
 *
 * This module imports nothing, so that a browser loads it alone as one ES module; keep it so (tests/layers.test.ts).
 * Every step is linear in the text's length: no pattern here can backtrack over the text (a plugin's text of
 * `pluginMarkdownMaxChars` hostile characters must not hold the hub's event loop).
 */

/**
 * A block of Markdown. Texts are as written (not escaped); a renderer reads the inline ones with `inlineSpans`.
 * - `paragraph`: consecutive lines, each trimmed, joined with one space;
 * - `heading`: a line `#`…`######`, a space, then `text`; `depth` is the number of `#` (1–6);
 * - `ul` / `ol`: consecutive items (`-`, `*` or `+` then a space; or up to 9 digits, `.` or `)`, then a space);
 * - `quote`: one line `> text` (each quoted line is a block of its own);
 * - `code`: the lines between a fence (```` ``` ```` or `~~~`) and the next line starting with the same fence (or the
 *   end of the text), joined with `\n`, as written: never read further.
 */
export type MarkdownBlock =
  | { type: "paragraph"; text: string }
  | { type: "heading"; depth: number; text: string }
  | { type: "ul" | "ol"; items: string[] }
  | { type: "quote"; text: string }
  | { type: "code"; text: string };

/**
 * A span of inline Markdown:
 * - `text`: literal text, as written (a renderer escapes it);
 * - `code`: `` `text` `` (a run of backticks, then text with none, closed by a run at least as long), as written;
 * - `strong`: `**…**` or `__…__`; `em`: `*…*` or `_…_` (not opened by a space); their `children` read again;
 * - `link`: `[text](url)`; `href` is the URL when it is http(s) (`httpUrl`), and then `children` are the text read
 *   again; for any other URL (`javascript:`, `data:`, relative) `href` is null and `children` is the text as one
 *   `text` span, as written — a renderer shows it and makes no link.
 */
export type InlineSpan =
  | { type: "text"; text: string }
  | { type: "code"; text: string }
  | { type: "strong" | "em"; children: InlineSpan[] }
  | { type: "link"; href: string | null; children: InlineSpan[] };

/** An http(s) URL as it is, or null for any other (a `javascript:` or `data:` link never becomes a link). */
export function httpUrl(url: string): string | null {
  try {
    const u = new URL(url);
    return u.protocol === "http:" || u.protocol === "https:" ? url : null;
  } catch {
    return null;
  }
}

/**
 * Whether the URL `href` is another origin (port or scheme) on the host name of `ownOrigin` (`scheme://host[:port]`).
 * A page makes no link of such a URL: the browser sends the console's cookie to every port of its host (cookies are
 * not kept per port), and an agent may be the one listening there (issue 26 round 32, F32b-1).
 */
export function besideOrigin(href: string, ownOrigin: string): boolean {
  const u = new URL(href);
  return u.hostname === new URL(ownOrigin).hostname && u.origin !== ownOrigin;
}

/** A fence line: optional white space, then ```` ``` ```` or `~~~`. */
const fenceLine = /^\s*(```|~~~)/;
// The white space after a heading's or an item's mark is taken whole, `(?=(\s+))\1`, never given back a character at a
// time: `(.*)$` fails on a line separator (U+2028, U+2029) after the text, and giving back 60,000 spaces one by one,
// each followed by a new try of `(.*)$`, is quadratic. Giving back never helps (the separator stays in what follows),
// so the lines read are the same. The text is the last group.
const headingLine = /^(#{1,6})(?=(\s+))\2(.*)$/;
const bulletLine = /^\s*[-*+](?=(\s+))\1(.*)$/;
const numberedLine = /^\s*\d{1,9}[.)](?=(\s+))\1(.*)$/;
const quoteLine = /^\s*>\s?(.*)$/;

/**
 * Markdown's blocks, in order (see `MarkdownBlock` for each). Line ends may be `\n`, `\r\n` or `\r`. A blank line
 * ends a paragraph or a list; a heading, quote or fence ends them too; a list item ends a paragraph; a line of text
 * ends a list and starts a paragraph; an item of the other kind of list starts a new list.
 * Example: `"# Hi\n\nSome *text*\n- a\n- b"` → `[{ type: "heading", depth: 1, text: "Hi" },
 * { type: "paragraph", text: "Some *text*" }, { type: "ul", items: ["a", "b"] }]`.
 */
export function markdownBlocks(source: string): MarkdownBlock[] {
  const out: MarkdownBlock[] = [];
  const lines = source.replace(/\r\n?/g, "\n").split("\n");
  let para: string[] = [];
  let list: { type: "ul" | "ol"; items: string[] } | null = null;
  const flush = () => {
    if (para.length) out.push({ type: "paragraph", text: para.join(" ") });
    if (list) out.push(list);
    para = [];
    list = null;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = fenceLine.exec(line);
    if (fence) {
      flush();
      const code: string[] = [];
      for (i++; i < lines.length && !lines[i]!.trimStart().startsWith(fence[1]!); i++) code.push(lines[i]!);
      out.push({ type: "code", text: code.join("\n") });
      continue;
    }
    const head = headingLine.exec(line);
    const bullet = bulletLine.exec(line);
    const numbered = numberedLine.exec(line);
    const quote = quoteLine.exec(line);
    if (line.trim() === "") flush();
    else if (head) {
      flush();
      out.push({ type: "heading", depth: head[1]!.length, text: head[3]! });
    } else if (bullet || numbered) {
      const type = bullet ? "ul" : "ol";
      if (para.length || (list && list.type !== type)) flush();
      list ??= { type, items: [] };
      list.items.push((bullet ?? numbered)![2]!);
    } else if (quote) {
      flush();
      out.push({ type: "quote", text: quote[1]! });
    } else {
      if (list) flush();
      para.push(line.trim());
    }
  }
  flush();
  return out;
}

/**
 * A search for the first index at or after `i` where `pattern` (global, one character long) matches, or the text's
 * length when none does. It remembers its last answer: asked again for an index between its last question and that
 * answer, it answers the same without searching (nothing matches in between). A scan that asks with growing indexes
 * so searches each stretch of the text once: linear, where searching afresh from every opening mark is quadratic
 * (`[[[[…` or a run of backticks).
 */
function nextOf(text: string, pattern: RegExp): (i: number) => number {
  let asked = -1;
  let found = -1;
  return (i) => {
    if (i < asked || i > found) {
      pattern.lastIndex = i;
      asked = i;
      found = pattern.exec(text)?.index ?? text.length;
    }
    return found;
  };
}

/** A search of one text (nextOf). */
type Search = (i: number) => number;

/** The link `[label](url)` that opens at `p` (a `[`), given the text's searches for `]` and for a URL's end, or null. */
function linkAt(text: string, p: number, bracket: Search, url: Search): { label: string; url: string; end: number } | null {
  const close = bracket(p + 1);
  if (close === p + 1 || close >= text.length || text[close + 1] !== "(") return null;
  const end = url(close + 2);
  if (end === close + 2 || text[end] !== ")") return null;
  return { label: text.slice(p + 1, close), url: text.slice(close + 2, end), end: end + 1 };
}

const backtick = /`/g;
const notBacktick = /[^`]/g;
const star = /\*/g;
const underscore = /_/g;
const closingBracket = /]/g;
/** Where a link's URL ends: `)`, or white space (which makes it no link). */
const urlEnd = /[)\s]/g;
/** A character that may open a span: text without one is all text. */
const marks = /[`*_[]/;
/** One white-space character. */
const space = /\s/;

/**
 * Inline Markdown's spans, in order (see `InlineSpan` for each). At each position, the first of these that closes
 * wins, tried left to right: code, `**`, `__`, `*`, `_`, link; text between them is `text`. Marks inside code are text;
 * `**` and `*` do not nest in each other (nor `__` and `_`); a link's text holds no `]`, its URL no `)` or space.
 * Linear in the text's length (see nextOf).
 * Example: `"a **b _c_** [d](https://e.example/) [f](javascript:g)"` → `[text "a ", strong [text "b ", em [text "c"]],
 * text " ", link "https://e.example/" [text "d"], text " ", link null [text "f"]]`.
 */
export function inlineSpans(text: string): InlineSpan[] {
  const n = text.length;
  if (!marks.test(text)) return n ? [{ type: "text", text }] : [];
  // One search per kind of mark, each asked with growing indexes (see nextOf): an opening run of backticks and a
  // closing one are searched apart, as their indexes grow apart.
  const tick = nextOf(text, backtick);
  const openEnd = nextOf(text, notBacktick);
  const closeEnd = nextOf(text, notBacktick);
  const stars = nextOf(text, star);
  const underscores = nextOf(text, underscore);
  const bracket = nextOf(text, closingBracket);
  const url = nextOf(text, urlEnd);

  /** The span that starts at `p` and where it ends, or null when none does. */
  const spanAt = (p: number): [InlineSpan, number] | null => {
    const ch = text[p];
    if (ch === "`") {
      // The whole run opens (fewer backticks would leave a backtick first in the code); the code is what runs to the
      // next backtick, which must start a run at least as long.
      const from = openEnd(p);
      const to = tick(from);
      if (to >= n || closeEnd(to) - to < from - p) return null;
      return [{ type: "code", text: text.slice(from, to) }, to + from - p];
    }
    if (ch === "*" || ch === "_") {
      const next = ch === "*" ? stars : underscores;
      if (text[p + 1] === ch) {
        const to = next(p + 2);
        return to > p + 2 && to < n && text[to + 1] === ch ? [{ type: "strong", children: inlineSpans(text.slice(p + 2, to)) }, to + 2] : null;
      }
      const first = text[p + 1];
      if (first === undefined || space.test(first)) return null;
      const to = next(p + 1);
      return to < n ? [{ type: "em", children: inlineSpans(text.slice(p + 1, to)) }, to + 1] : null;
    }
    if (ch === "[") {
      const link = linkAt(text, p, bracket, url);
      if (!link) return null;
      const href = httpUrl(link.url);
      return [{ type: "link", href, children: href ? inlineSpans(link.label) : [{ type: "text", text: link.label }] }, link.end];
    }
    return null;
  };

  const out: InlineSpan[] = [];
  let at = 0;
  for (let p = 0; p < n; p++) {
    const found = spanAt(p);
    if (!found) continue;
    if (p > at) out.push({ type: "text", text: text.slice(at, p) });
    out.push(found[0]);
    at = found[1];
    p = at - 1;
  }
  if (at < n) out.push({ type: "text", text: text.slice(at) });
  return out;
}

/**
 * Each `[label](url)` of a text, leftmost first and none overlapping, found as `inlineSpans` finds a link but with
 * links the only mark, whatever the URL: `start` and `end` (exclusive) index the text. Linear in its length. For the
 * text projection of a template (card-template.ts `markdownLines`), which writes a link as `label (url)`.
 * Example: `"see [a](https://x.example/) [b](c)"` → `[{ start: 4, end: 27, label: "a", url: "https://x.example/" },
 * { start: 28, end: 34, label: "b", url: "c" }]`.
 */
export function markdownLinks(text: string): { start: number; end: number; label: string; url: string }[] {
  const bracket = nextOf(text, closingBracket);
  const url = nextOf(text, urlEnd);
  const out: { start: number; end: number; label: string; url: string }[] = [];
  for (let p = text.indexOf("["); p !== -1; p = text.indexOf("[", p)) {
    const link = linkAt(text, p, bracket, url);
    if (link) out.push({ start: p, end: link.end, label: link.label, url: link.url });
    p = link ? link.end : p + 1;
  }
  return out;
}
