/**
 * The SDK's Markdown tokenizer (src/sdk/markdown.ts), which the card link page and the owner console both render
 * from: inputs → exact tokens, hostile ones included (raw HTML, `javascript:` links, nested emphasis, an unclosed
 * fence, 10,000 marks of one kind, lines that made the old patterns backtrack). Inline spans are also checked against
 * the pattern both renderers used before (kept here as the reference) over seeded random text, so the fold changed
 * nothing of what either shows; and so is the text projection `markdownLines`, which finds links with the same scan.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { httpUrl, inlineSpans, markdownBlocks, markdownLines, type InlineSpan, type MarkdownBlock } from "../src/sdk/index.js";
import { pluginMarkdownMaxChars } from "../src/protocol/plugin-limits.js";

const text = (t: string): InlineSpan => ({ type: "text", text: t });
const code = (t: string): InlineSpan => ({ type: "code", text: t });
const strong = (...children: InlineSpan[]): InlineSpan => ({ type: "strong", children });
const em = (...children: InlineSpan[]): InlineSpan => ({ type: "em", children });
const link = (href: string | null, ...children: InlineSpan[]): InlineSpan => ({ type: "link", href, children });

/** The pattern the link page and the console each read inline Markdown with before this tokenizer (the reference). */
const referencePattern = /(`+)([^`]+?)\1|\*\*([^*]+?)\*\*|__([^_]+?)__|\*([^*\s][^*]*?)\*|_([^_\s][^_]*?)_|\[([^\]]+)\]\(([^)\s]+)\)/g;

/** Inline spans as the reference pattern read them (quadratic on some inputs: only short texts here). */
function referenceSpans(source: string): InlineSpan[] {
  const out: InlineSpan[] = [];
  let at = 0;
  for (const m of source.matchAll(referencePattern)) {
    if (m.index > at) out.push(text(source.slice(at, m.index)));
    if (m[2] !== undefined) out.push(code(m[2]));
    else if (m[3] !== undefined || m[4] !== undefined) out.push(strong(...referenceSpans(m[3] ?? m[4]!)));
    else if (m[5] !== undefined || m[6] !== undefined) out.push(em(...referenceSpans(m[5] ?? m[6]!)));
    else {
      const href = httpUrl(m[8]!);
      out.push(link(href, ...(href ? referenceSpans(m[7]!) : [text(m[7]!)])));
    }
    at = m.index + m[0].length;
  }
  if (at < source.length) out.push(text(source.slice(at)));
  return out;
}

test("markdownBlocks: each kind of block, and where one ends and the next starts", () => {
  const cases: [string, MarkdownBlock[]][] = [
    ["", []],
    [" \t \n\n", []],
    ["# Hi\n\nSome *text*\n- a\n- b", [{ type: "heading", depth: 1, text: "Hi" }, { type: "paragraph", text: "Some *text*" }, { type: "ul", items: ["a", "b"] }]],
    ["###### six\n####### seven\n#no space", [{ type: "heading", depth: 6, text: "six" }, { type: "paragraph", text: "####### seven #no space" }]],
    ["## **Bold** title", [{ type: "heading", depth: 2, text: "**Bold** title" }]],
    ["line one\n   line two  \n\nnext", [{ type: "paragraph", text: "line one line two" }, { type: "paragraph", text: "next" }]],
    ["a\r\nb\rc", [{ type: "paragraph", text: "a b c" }]],
    ["- a\n  * b\n1. c\n2) d\n+ e", [{ type: "ul", items: ["a", "b"] }, { type: "ol", items: ["c", "d"] }, { type: "ul", items: ["e"] }]],
    ["- a\n\n- b", [{ type: "ul", items: ["a"] }, { type: "ul", items: ["b"] }]],
    ["para\n- item\ntext after", [{ type: "paragraph", text: "para" }, { type: "ul", items: ["item"] }, { type: "paragraph", text: "text after" }]],
    ["123456789. nine digits\n1234567890. ten", [{ type: "ol", items: ["nine digits"] }, { type: "paragraph", text: "1234567890. ten" }]],
    ["- \n-x", [{ type: "ul", items: [""] }, { type: "paragraph", text: "-x" }]],
    ["> quoted *x*\n>second\n- l\n> q", [{ type: "quote", text: "quoted *x*" }, { type: "quote", text: "second" }, { type: "ul", items: ["l"] }, { type: "quote", text: "q" }]],
    // Code is as written: marks, HTML and line shapes inside a fence stay text; the fence's info string is dropped.
    ["p\n```js\n<script>alert(1)</script>\n# not a heading\n  ```\nafter", [{ type: "paragraph", text: "p" }, { type: "code", text: "<script>alert(1)</script>\n# not a heading" }, { type: "paragraph", text: "after" }]],
    ["~~~\n```\n~~~", [{ type: "code", text: "```" }]],
    ["```\n```", [{ type: "code", text: "" }]],
    // An unclosed fence runs to the end of the text.
    ["intro\n```\n- not a list\n\n**not bold**", [{ type: "paragraph", text: "intro" }, { type: "code", text: "- not a list\n\n**not bold**" }]],
    // A line separator (U+2028, U+2029) after a heading's or an item's text makes the line a paragraph; one right
    // after the mark is white space like any other.
    ["## a\u2029\n- a\u2028b", [{ type: "paragraph", text: "## a - a\u2028b" }]],
    ["# \u2028\n1.\u2028x\n-  \u2029", [{ type: "heading", depth: 1, text: "" }, { type: "ol", items: ["x"] }, { type: "ul", items: [""] }]],
    // Raw HTML is text like any other.
    ["<script>alert(1)</script>\n<img src=x onerror=alert(2)>", [{ type: "paragraph", text: "<script>alert(1)</script> <img src=x onerror=alert(2)>" }]],
  ];
  for (const [source, blocks] of cases) assert.deepEqual(markdownBlocks(source), blocks, JSON.stringify(source));
});

test("inlineSpans: code, bold, italics, http(s) links; everything else text, as written", () => {
  const cases: [string, InlineSpan[]][] = [
    ["", []],
    ["plain words", [text("plain words")]],
    ["a **b _c_** [d](https://e.example/) [f](javascript:g)", [text("a "), strong(text("b "), em(text("c"))), text(" "), link("https://e.example/", text("d")), text(" "), link(null, text("f"))]],
    ["__a *b* c__ and `x`", [strong(text("a "), em(text("b")), text(" c")), text(" and "), code("x")]],
    ["`<script>` **`a`**", [code("<script>"), text(" "), strong(code("a"))]],
    // Left to right, the first mark that closes wins: here `*` before the code, so the code never opens.
    ["**`a*b`**", [text("*"), em(text("`a")), text("b`**")]],
    ["``a b`` c", [code("a b"), text(" c")]],
    // Code holds no backtick: a run opens, and the next backtick closes it if it starts a run at least as long.
    ["``a `b` c``", [text("`"), code("a "), text("b"), code(" c"), text("`")]],
    // Marks are not CommonMark's: the first mark that closes wins, `` `a`b` `` closes at the first backtick, and so on.
    ["`` a`b ``", [text("`"), code(" a"), text("b ``")]],
    ["x_y_z", [text("x"), em(text("y")), text("z")]],
    ["* not em* and *em*", [text("* not em* and "), em(text("em"))]],
    // Nested emphasis: ** and * (or __ and _) do not nest in each other; what does not close stays text.
    ["***a***", [text("*"), strong(text("a")), text("*")]],
    ["**bold *em* bold**", [text("*"), em(text("bold ")), text("em* bold**")]],
    ["*em **strong** em*", [em(text("em ")), em(text("strong")), text("* em*")]],
    ["_a __b__ c_", [em(text("a ")), em(text("b")), text("_ c_")]],
    // Links: only http(s) becomes a link, its text read again; any other keeps its text as written, no link.
    ["[**b**](https://a.example/x?y=1&z=2)", [link("https://a.example/x?y=1&z=2", strong(text("b")))]],
    ["[**b**](ftp://a.example/)", [link(null, text("**b**"))]],
    ["[x](javascript:alert(1))", [link(null, text("x")), text(")")]],
    ["[x](JavaScript:alert%281%29) [y](data:text/html,<script>x</script>) [z](/relative) [w](//host.example/)", [link(null, text("x")), text(" "), link(null, text("y")), text(" "), link(null, text("z")), text(" "), link(null, text("w"))]],
    ["[a](https://x.example/ y) [](https://x.example/) [b]( https://x.example/)", [text("[a](https://x.example/ y) [](https://x.example/) [b]( https://x.example/)")]],
    ["[a [b](https://x.example/)", [link("https://x.example/", text("a [b"))]],
    ["[a](https://x.example/(p)) tail", [link("https://x.example/(p", text("a")), text(") tail")]],
    // Raw HTML and control characters are text (a renderer escapes them and shows the controls as marks).
    ["<script>alert(1)</script> <b onclick=x>b</b>", [text("<script>alert(1)</script> <b onclick=x>b</b>")]],
    ["a\u202eb\u0000c *\u200fd*", [text("a\u202eb\u0000c "), em(text("\u200fd"))]],
  ];
  for (const [source, spans] of cases) {
    assert.deepEqual(inlineSpans(source), spans, JSON.stringify(source));
    assert.deepEqual(referenceSpans(source), spans, `${JSON.stringify(source)}: as before`);
  }
});

test("hostile sizes: 10,000 marks of one kind, and the longest markdown a plugin may hold, are read whole", () => {
  for (const mark of ["*", "_", "`", "[", "]", "(", "~"]) assert.deepEqual(inlineSpans(mark.repeat(10_000)), [text(mark.repeat(10_000))], mark);
  assert.deepEqual(inlineSpans("[a](".repeat(2_500)), [text("[a](".repeat(2_500))]);
  assert.deepEqual(inlineSpans("**a".repeat(3_000)), Array.from({ length: 3_000 }, (_, i) => (i % 2 ? text("a") : strong(text("a")))));
  // A run of 5,000 backticks closed by 4,999: the first backtick is text, the rest open the code.
  assert.deepEqual(inlineSpans(`${"`".repeat(5_000)}a${"`".repeat(4_999)}`), [text("`"), code("a")]);
  // A line of white space ended by a separator: the marks' white space is never given back one character at a time.
  const spaces = " ".repeat(pluginMarkdownMaxChars - 10);
  for (const mark of ["#", "-", "1."]) {
    assert.deepEqual(markdownBlocks(`${mark}${spaces}a\u2028b`), [{ type: "paragraph", text: `${mark}${spaces}a\u2028b` }], mark);
  }
  const longest = "[".repeat(pluginMarkdownMaxChars);
  assert.deepEqual(inlineSpans(longest), [text(longest)]);
  assert.deepEqual(markdownBlocks("`".repeat(pluginMarkdownMaxChars)), [{ type: "code", text: "" }]);
  assert.deepEqual(markdownBlocks(`- ${"*".repeat(pluginMarkdownMaxChars - 2)}`), [{ type: "ul", items: ["*".repeat(pluginMarkdownMaxChars - 2)] }]);
});

test("httpUrl: an http(s) URL as it is; any other scheme, or no URL, null", () => {
  for (const url of ["http://a.example", "https://a.example/x?y=1#z", "HTTPS://A.EXAMPLE/"]) assert.equal(httpUrl(url), url);
  for (const url of ["javascript:alert(1)", "data:text/html,x", "ftp://a.example/", "/relative", "//host.example/", "", "https//x"]) assert.equal(httpUrl(url), null, url);
});

/** `count` texts of up to 30 pieces of `atoms`, the same each run (mulberry32 from `seed`: a failure names a text that fails again). */
function randomTexts(seed: number, count: number, atoms: readonly string[]): string[] {
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return Array.from({ length: count }, () => {
    let text = "";
    for (let n = Math.floor(random() * 30); n > 0; n--) text += atoms[Math.floor(random() * atoms.length)];
    return text;
  });
}

const inlineAtoms = ["`", "``", "*", "**", "_", "__", "[", "]", "(", ")", "a", "b c", " ", "\t", "\u00a0", "\u2028", "https://y.example/p?q=1", "javascript:x",
  "<b>", "&", "\u200f", "😀", "\ud800", "x_y", "](", "[a](", "**x**", "*y*", "`z`", "[a](http://x.example/)", "[**b** _c_](https://y.example/(p))", "[d](javascript:alert(1))"];

test("inlineSpans reads as the reference pattern did, over 20,000 seeded random texts of marks, words and links", () => {
  for (const source of randomTexts(24301, 20_000, inlineAtoms)) assert.deepEqual(inlineSpans(source), referenceSpans(source), JSON.stringify(source));
});

/** The text projection as it was before it found links with markdownLinks (the reference; quadratic on some lines). */
function referenceLines(source: string): string[] {
  const out: string[] = [];
  for (const raw of source.replace(/\r\n?/g, "\n").split("\n")) {
    if (/^\s*(```|~~~)/.test(raw) || raw.trim() === "") continue;
    out.push(raw
      .replace(/^(#{1,6})\s+/, "")
      .replace(/^\s*[-*+]\s+/, "• ")
      .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_, text: string, url: string) => (httpUrl(url) ? `${text} (${url})` : text))
      .replace(/\*\*([^*]+?)\*\*|__([^_]+?)__/g, (_, a?: string, b?: string) => a ?? b ?? "")
      .replace(/`+([^`]+?)`+/g, "$1"));
  }
  return out;
}

test("markdownLines (a template's Markdown as chat text) reads as before, and linearly: links found by the same scan", () => {
  const atoms = [...inlineAtoms, "\n", "\n", "\r\n", "# ", "- ", "1. ", "```", "  "];
  for (const source of randomTexts(24302, 20_000, atoms)) assert.deepEqual(markdownLines(source), referenceLines(source), JSON.stringify(source));
  for (const mark of ["[", "`", "*", "_"]) assert.deepEqual(markdownLines(`x${mark.repeat(10_000)}`), [`x${mark.repeat(10_000)}`], mark);
  assert.deepEqual(markdownLines("[a](".repeat(2_500)), ["[a](".repeat(2_500)]);
  const brackets = `${"[".repeat(10_000)}a](https://x.example/) \`\`b\`\`\``;
  assert.equal(markdownLines(brackets)[0], `${"[".repeat(9_999)}a (https://x.example/) b`);
  assert.equal(markdownLines(brackets)[0], referenceLines(brackets)[0]);
});
