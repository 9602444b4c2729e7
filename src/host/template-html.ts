/**
 * A card template as HTML for the card link page (issue 18; spec declarative-plugins.md §3.4): the closed vocabulary
 * rendered whole on the server, as the console renders it in Needs you (src/console/ui.js), with no script. Every text
 * is escaped and isolated in its direction (`<bdi dir="auto">`), its control characters shown as ⟦U+XXXX⟧ marks
 * instead of obeyed. Markdown is read by the SDK's tokenizer, as the console reads it (src/sdk/markdown.ts: headings,
 * paragraphs, lists, quotes, code blocks, inline code, bold, italics and links) — anything else, raw HTML included,
 * stays literal text; a link is a link only when it is http(s). A chart-lite is a table of its labels and values.
 *
 * Buttons and forms are shown disabled, with a line saying where they work: the owner's console (Needs you). A card's
 * link answers that card only (issue 26): it is no permission to post the template's events, which start runs.
 */
import type { CardTemplateView } from "../declarative/index.js";
import type { UiNode } from "../protocol/plugin-schemas.js";
import { t, type Lang } from "../i18n/messages.js";
import { artifactRoute, inlineSpans, markdownBlocks, templateInteractive, unknownNodeType, type InlineSpan } from "../sdk/index.js";
import { besideOrigin } from "../sdk/markdown.js";
import { esc } from "./html.js";

/** Characters shown as marks instead of obeyed: C0 and C1 controls (not tab or newline) and direction controls. */
const controls = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Text others wrote, escaped, its control characters shown as `⟦U+XXXX⟧`. */
export function shown(text: string): string {
  return esc(text.replace(controls, (c) => `⟦U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}⟧`));
}

/** Text others wrote as an element isolated in its direction. */
const said = (text: string, tag = "bdi") => `<${tag} dir="auto">${shown(text)}</${tag}>`;
const heading = (level: number, text: string) => said(text, `h${Math.min(6, Math.max(2, level))}`);

/**
 * Inline Markdown as HTML (spans of `inlineSpans`): code, bold, italics, http(s) links; everything else escaped text.
 * A link to another port or scheme of `ownOrigin`'s host name stays text: the browser sends the console's cookie there
 * (cookies are not kept per port), and an agent may be the one listening (issue 26 round 32, F32b-1).
 */
export function inlineHtml(text: string, ownOrigin: string | null = null): string {
  return spansHtml(inlineSpans(text), ownOrigin);
}

function spansHtml(spans: readonly InlineSpan[], ownOrigin: string | null): string {
  return spans.map((s) => {
    switch (s.type) {
      case "text":
        return shown(s.text);
      case "code":
        return `<code>${shown(s.text)}</code>`;
      case "strong":
      case "em":
        return `<${s.type}>${spansHtml(s.children, ownOrigin)}</${s.type}>`;
      case "link":
        return s.href && !(ownOrigin !== null && besideOrigin(s.href, ownOrigin))
          ? `<a href="${esc(s.href)}" rel="noopener noreferrer nofollow">${spansHtml(s.children, ownOrigin)}</a>`
          : spansHtml(s.children, ownOrigin);
    }
  }).join("");
}

/**
 * Markdown as HTML (the safe subset of the module's comment, blocks of `markdownBlocks`); headings start at `level`;
 * links as `inlineHtml` makes them.
 */
export function markdownHtml(source: string, level: number, ownOrigin: string | null = null): string {
  const out = markdownBlocks(source).map((b) => {
    switch (b.type) {
      case "paragraph":
        return `<p>${inlineHtml(b.text, ownOrigin)}</p>`;
      case "heading": {
        const h = `h${Math.min(6, level + b.depth - 1)}`;
        return `<${h}>${inlineHtml(b.text, ownOrigin)}</${h}>`;
      }
      case "ul":
      case "ol":
        return `<${b.type}>${b.items.map((i) => `<li>${inlineHtml(i, ownOrigin)}</li>`).join("")}</${b.type}>`;
      case "quote":
        return `<blockquote><p>${inlineHtml(b.text, ownOrigin)}</p></blockquote>`;
      case "code":
        return `<pre><code>${shown(b.text)}</code></pre>`;
    }
  });
  return `<div class="md" dir="auto">${out.join("")}</div>`;
}

/** A form field: its label and an input of its type, disabled (its values are not sent from the page). */
function fieldHtml(f: Extract<UiNode, { type: "form" }>["fields"][number], id: string): string {
  const type = f.type ?? "text";
  const label = `<label for="${esc(id)}">${said(f.label)}</label>`;
  const dflt = f.default === undefined ? "" : String(f.default);
  const attrs = `id="${esc(id)}" disabled`;
  if (type === "textarea") return `<p>${label}<textarea ${attrs}>${shown(dflt)}</textarea></p>`;
  if (type === "select") return `<p>${label}<select ${attrs}>${(f.options ?? []).map((o) => `<option${o === f.default ? " selected" : ""}>${shown(o)}</option>`).join("")}</select></p>`;
  if (type === "checkbox") return `<p><input type="checkbox" ${attrs}${f.default === true ? " checked" : ""}>${label}</p>`;
  return `<p>${label}<input type="${type === "number" ? "number" : "text"}" ${attrs} value="${shown(dflt)}"></p>`;
}

/** One node as HTML; `level` is the heading level of titles at this depth. */
/** What the nodes of one template share: how many forms so far (their ids), and the page's origin (`inlineHtml`). */
interface TemplatePage {
  forms: number;
  ownOrigin: string | null;
}

function nodeHtml(node: UiNode, level: number, lang: Lang, page: TemplatePage): string {
  const title = (s: string | undefined) => (s ? heading(level, s) : "");
  switch (node?.type) {
    case "section":
      return `<section>${title(node.title)}${node.children.map((c) => nodeHtml(c, level + 1, lang, page)).join("")}</section>`;
    case "list":
      return `<div>${title(node.title)}<ul>${node.items.map((i) => said(i, "li")).join("")}</ul></div>`;
    case "kv":
      return `<div>${title(node.title)}<dl>${node.kv.map(([k, v]) => `<div>${said(k, "dt")}${said(String(v), "dd")}</div>`).join("")}</dl></div>`;
    case "markdown":
      return markdownHtml(node.markdown, level, page.ownOrigin);
    case "doc-ref": {
      // A workflow's file (`run:<id>/<file>`) links to the route that serves it to the owner; other ids are shown.
      const route = artifactRoute(node.docId);
      const name = said(node.title ?? node.docId);
      return `<p>${esc(t(lang, "link.template.doc"))} ${route ? `<a href="${esc(route)}" rel="noopener">${name}</a>` : name}${node.title ? ` <code>${shown(node.docId)}</code>` : ""}</p>`;
    }
    case "chart-lite":
      return `<table><caption>${said(node.title ?? "")}</caption><tbody>${node.chart.labels.map((l, i) => `<tr><th scope="row">${said(l)}</th><td>${node.chart.series[i] ?? ""}</td></tr>`).join("")}</tbody></table>`;
    case "actions":
      return `<p>${node.actions.map((a) => `<button type="button" disabled>${said(a.label)}</button>`).join("")}</p>`;
    case "form": {
      const n = ++page.forms;
      const fields = node.fields.map((f) => fieldHtml(f, `f${n}-${f.name}`)).join("");
      const submit = said(node.submit ?? t(lang, "link.template.submit"));
      return `<fieldset disabled><legend>${said(node.title ?? node.id)}</legend>${fields}<button type="button" disabled>${submit}</button></fieldset>`;
    }
    default:
      return `<p>${esc(t(lang, "channel.template.unknown", { type: unknownNodeType(node) }))}</p>`;
  }
}

/**
 * A card template whole as HTML: a `<div class="template">` with its title (`<h2>`), its nodes (titles from `<h3>`).
 * Its buttons and forms are disabled, and a line says where they work. `ownOrigin`: the page's origin (links beside
 * it stay text, `inlineHtml`).
 */
export function templateHtml(ui: CardTemplateView, lang: Lang, ownOrigin: string | null = null): string {
  const page: TemplatePage = { forms: 0, ownOrigin };
  const body = ui.data.map((n) => nodeHtml(n, 3, lang, page)).join("\n");
  const where = templateInteractive(ui.data) ? `\n<p class="muted">${esc(t(lang, "channel.template.controls"))}</p>` : "";
  return `<div class="template">${ui.title ? heading(2, ui.title) : ""}\n${body}${where}</div>`;
}
