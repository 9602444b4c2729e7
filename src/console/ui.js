// @ts-check
/**
 * Declarative plugins' panels and card templates as DOM (spec declarative-plugins.md §3.4; issue 18): the closed
 * vocabulary `section · list · kv · form · markdown · doc-ref · actions · chart-lite`, every text a text node (never
 * HTML), every text isolated in its direction with its control characters shown. A node of any other type shows as
 * "unknown node" (the hub refuses such plugins; an older or newer hub may send one). An `actions` button and a `form`
 * submit post `POST /v1/plugins/<id>/events`, which the hub turns into an event from source `plugin:<id>`.
 *
 * Markdown is rendered by the small renderer below, not a library: the console loads no package (its modules are
 * served as they are), and the libraries that render Markdown make HTML strings that would need a sanitiser and
 * `innerHTML`. This one builds elements for a safe subset — headings, paragraphs, lists, quotes, code blocks, inline
 * code, bold, italics and links — and anything else, raw HTML included, stays literal text. A link becomes a link
 * only when it is http(s) (dom.js `safeHref`); any other stays its text.
 */
import { api, seg } from "./api.js";
import { fill, h, safeHref, said, visible } from "./dom.js";
import { t } from "./i18n.js";
import { barChart } from "./more.js";

/**
 * Where a panel or card template lives, so its controls can say which one they belong to.
 * @typedef {{ plugin: string, kind: "panel" | "card", name: string, level: number }} Place
 */

/** A fresh event id: a retry of one press is the same event (crypto.getRandomValues works without a secure context). */
function eventId() {
  const b = crypto.getRandomValues(new Uint8Array(16));
  return `console-${[...b].map((x) => x.toString(16).padStart(2, "0")).join("")}`;
}

/** A heading of level `level` (2–6). @param {number} level @param {string} text */
function heading(level, text) {
  return said(text, `h${Math.min(6, Math.max(2, level))}`, { class: "ui-title" });
}

// ── Markdown, a safe subset ─────────────────────────────────────────────────────────────────────────────────────
/** A doc-ref's id that names a workflow's file, `run:<run id>/<file>` (issue 18; src/kernel/text.ts `artifactRoute`). */
const artifactDocId = /^run:([1-9]\d{0,14})\/([A-Za-z0-9_][A-Za-z0-9_.-]{0,99})$/;

/**
 * The route that serves the artifact a doc-ref names, or null for any other id (shown, not linked).
 * @param {string} docId
 * @returns {string | null}
 */
export function artifactRoute(docId) {
  const m = artifactDocId.exec(docId);
  return m ? `/v1/runs/${m[1]}/artifacts/${m[2]}` : null;
}

const inlinePattern = /(`+)([^`]+?)\1|\*\*([^*]+?)\*\*|__([^_]+?)__|\*([^*\s][^*]*?)\*|_([^_\s][^_]*?)_|\[([^\]]+)\]\(([^)\s]+)\)/g;

/**
 * Inline Markdown as nodes: code, bold, italics, http(s) links; everything else text (control characters shown).
 * @param {string} text @returns {(Node | string)[]}
 */
export function inline(text) {
  /** @type {(Node | string)[]} */
  const out = [];
  let at = 0;
  for (const m of text.matchAll(inlinePattern)) {
    if (m.index > at) out.push(visible(text.slice(at, m.index)));
    if (m[2] !== undefined) out.push(h("code", {}, visible(m[2])));
    else if (m[3] !== undefined || m[4] !== undefined) out.push(h("strong", {}, inline(m[3] ?? m[4] ?? "")));
    else if (m[5] !== undefined || m[6] !== undefined) out.push(h("em", {}, inline(m[5] ?? m[6] ?? "")));
    else {
      const href = safeHref(m[8]);
      out.push(href ? h("a", { href, rel: "noopener noreferrer nofollow", target: "_blank" }, inline(m[7] ?? "")) : visible(m[7] ?? ""));
    }
    at = m.index + m[0].length;
  }
  if (at < text.length) out.push(visible(text.slice(at)));
  return out;
}

/**
 * Markdown as elements (a safe subset: see the module's comment). Headings start at `level`.
 * @param {string} source @param {number} level @returns {HTMLElement}
 */
export function markdown(source, level) {
  const box = h("div", { class: "md said", dir: "auto" });
  const lines = source.replace(/\r\n?/g, "\n").split("\n");
  /** @type {string[]} */
  let para = [];
  /** @type {HTMLElement | null} */
  let list = null;
  const flush = () => {
    if (para.length) box.append(h("p", {}, inline(para.join(" "))));
    para = [];
    list = null;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    const fence = /^\s*(```|~~~)/.exec(line);
    if (fence) {
      flush();
      const code = [];
      for (i++; i < lines.length && !(lines[i] ?? "").trimStart().startsWith(fence[1] ?? "```"); i++) code.push(lines[i]);
      box.append(h("pre", {}, h("code", {}, visible(code.join("\n")))));
      continue;
    }
    const head = /^(#{1,6})\s+(.*)$/.exec(line);
    const bullet = /^\s*[-*+]\s+(.*)$/.exec(line);
    const numbered = /^\s*\d{1,9}[.)]\s+(.*)$/.exec(line);
    const quote = /^\s*>\s?(.*)$/.exec(line);
    if (line.trim() === "") flush();
    else if (head) {
      flush();
      box.append(h(`h${Math.min(6, level + (head[1] ?? "#").length - 1)}`, {}, inline(head[2] ?? "")));
    } else if (bullet || numbered) {
      const tag = bullet ? "ul" : "ol";
      if (para.length) flush();
      if (!list || list.tagName.toLowerCase() !== tag) {
        list = h(tag, {});
        box.append(list);
      }
      list.append(h("li", {}, inline((bullet ?? numbered)?.[1] ?? "")));
    } else if (quote) {
      flush();
      box.append(h("blockquote", {}, h("p", {}, inline(quote[1] ?? ""))));
    } else {
      list = null;
      para.push(line.trim());
    }
  }
  flush();
  return box;
}

// ── charts ──────────────────────────────────────────────────────────────────────────────────────────────────────
const svgNs = "http://www.w3.org/2000/svg";
/** An SVG element with attributes. @param {string} tag @param {Record<string, string | number>} attrs */
function svg(tag, attrs) {
  const el = document.createElementNS(svgNs, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

/**
 * A line chart: one polyline over the labels, read by screen readers as its label and values.
 * @param {string} title @param {string[]} labels @param {number[]} series
 */
function lineChart(title, labels, series) {
  const w = 320;
  const hgt = 120;
  const finite = series.filter((v) => Number.isFinite(v));
  const max = Math.max(1e-9, ...finite);
  const min = Math.min(0, ...finite);
  const x = (/** @type {number} */ i) => (series.length <= 1 ? w / 2 : 8 + (i * (w - 16)) / (series.length - 1));
  const y = (/** @type {number} */ v) => hgt - 8 - ((v - min) / (max - min || 1)) * (hgt - 16);
  const chart = svg("svg", { viewBox: `0 0 ${w} ${hgt}`, class: "line-chart", "aria-hidden": "true", focusable: "false" });
  chart.append(svg("polyline", { points: series.map((v, i) => `${x(i)},${y(v)}`).join(" "), class: "line" }));
  for (const [i, v] of series.entries()) chart.append(svg("circle", { cx: x(i), cy: y(v), r: 3, class: "dot" }));
  return h("figure", { class: "chart" },
    title ? h("figcaption", {}, visible(title)) : null,
    h("div", { role: "img", "aria-label": `${visible(title)}: ${labels.map((l, i) => `${visible(l)} ${series[i] ?? ""}`).join(", ")}` }, chart),
    h("p", { class: "meta line-labels" }, labels.map((l) => visible(l)).join(" · ")));
}

// ── controls ───────────────────────────────────────────────────────────────────────────────────────────────────
/**
 * Posts a press of a control and says in `message` what became of it.
 * @param {Place} place @param {Record<string, unknown>} press @param {HTMLElement} message
 */
async function send(place, press, message) {
  message.className = "message";
  message.textContent = t("console.ui.sending");
  try {
    const r = await api("POST", `/v1/plugins/${seg(place.plugin)}/events`, { id: eventId(), [place.kind]: place.name, ...press });
    message.textContent = r.routed.length
      ? t("console.ui.sent", { event: r.event, rules: r.routed.join(", ") })
      : t("console.ui.sentUnrouted", { event: r.event });
  } catch (e) {
    message.className = "message error";
    message.textContent = t("console.failed", { error: /** @type {Error} */ (e).message });
  }
}

/** @param {Place} place @param {any} node */
function actionsNode(place, node) {
  const message = h("p", { class: "message", role: "status" });
  return h("div", { class: "ui-actions" },
    h("div", { class: "actions" }, node.actions.map((/** @type {any} */ a) => h("button", {
      type: "button",
      class: a.style === "danger" ? "danger" : a.style === "secondary" ? "quiet" : null,
      "data-action": a.id,
      onclick: () => send(place, { action: a.id }, message),
    }, said(a.label)))),
    message);
}

let formCount = 0;
/** @param {Place} place @param {any} node */
function formNode(place, node) {
  const n = ++formCount;
  const message = h("p", { class: "message", role: "status" });
  /** @type {[any, HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement][]} */
  const inputs = [];
  const fields = node.fields.map((/** @type {any} */ f) => {
    const id = `uf${n}-${f.name}`;
    const type = f.type ?? "text";
    const common = { id, name: f.name, required: f.required === true, placeholder: f.placeholder ?? null };
    /** @type {any} */
    let input;
    if (type === "textarea") input = h("textarea", { ...common, rows: 3 }, f.default === undefined ? null : String(f.default));
    else if (type === "select") {
      input = h("select", { id, name: f.name, required: f.required === true },
        f.required ? null : h("option", { value: "" }, "—"),
        (f.options ?? []).map((/** @type {string} */ o) => h("option", { value: o, selected: f.default === o }, visible(o))));
    } else if (type === "checkbox") input = h("input", { id, name: f.name, type: "checkbox", required: f.required === true, checked: f.default === true });
    else input = h("input", { ...common, type: type === "number" ? "number" : "text", step: type === "number" ? "any" : null, value: f.default === undefined ? null : String(f.default) });
    inputs.push([f, input]);
    const label = h("label", { for: id }, said(f.label), f.required ? h("span", { class: "sr" }, ` (${t("console.ui.required")})`) : null);
    return type === "checkbox" ? h("div", { class: "check" }, input, label) : h("div", { class: "field" }, label, input);
  });
  const form = h("form", { class: "ui-form", novalidate: false, onsubmit: (/** @type {Event} */ e) => {
    e.preventDefault();
    /** @type {Record<string, string | number | boolean>} */
    const values = {};
    for (const [f, input] of inputs) {
      if (f.type === "checkbox") values[f.name] = /** @type {HTMLInputElement} */ (input).checked;
      else if (input.value === "") continue;
      else values[f.name] = f.type === "number" ? Number(input.value) : input.value;
    }
    void send(place, { form: node.id, values }, message);
  } },
  node.title ? heading(place.level, node.title) : null,
  fields,
  h("div", { class: "actions" }, h("button", { type: "submit" }, said(node.submit ?? t("console.ui.submit")))),
  message);
  return form;
}

/**
 * One UI node as an element. `place.level` is the heading level of titles at this depth (a section's children get
 * the next one).
 * @param {Place} place @param {any} node @returns {HTMLElement}
 */
export function uiNode(place, node) {
  switch (node?.type) {
    case "section":
      return h("section", { class: "ui-section" },
        node.title ? heading(place.level, node.title) : null,
        (node.children ?? []).map((/** @type {any} */ c) => uiNode({ ...place, level: place.level + 1 }, c)));
    case "list":
      return h("div", { class: "ui-list" },
        node.title ? heading(place.level, node.title) : null,
        h("ul", {}, node.items.map((/** @type {string} */ i) => said(i, "li"))));
    case "kv":
      return h("div", { class: "ui-kv" },
        node.title ? heading(place.level, node.title) : null,
        h("dl", {}, node.kv.map((/** @type {[string, unknown]} */ [k, v]) => h("div", {}, said(k, "dt"), said(String(v), "dd")))));
    case "form":
      return formNode(place, node);
    case "markdown":
      return markdown(node.markdown, place.level);
    case "doc-ref": {
      // A workflow's file (`run:<id>/<file>`) links to the route that serves it (the console's cookie reads it).
      const route = artifactRoute(node.docId);
      const name = said(node.title ?? node.docId);
      return h("p", { class: "ui-doc-ref" }, h("span", { class: "badge" }, t("console.ui.doc")),
        route ? h("a", { href: route, target: "_blank", rel: "noopener" }, name) : name, node.title ? h("code", {}, visible(node.docId)) : null);
    }
    case "actions":
      return actionsNode(place, node);
    case "chart-lite": {
      const { kind, labels, series } = node.chart;
      if (kind === "line") return lineChart(node.title ?? "", labels, series);
      return barChart(visible(node.title ?? ""), labels.map((/** @type {string} */ l, /** @type {number} */ i) => [visible(l), Number(series[i] ?? 0)]), (v) => String(v));
    }
    default:
      return h("p", { class: "warn" }, t("console.ui.unknownNode", { type: visible(String(node?.type ?? "")) }));
  }
}

/**
 * A panel or card template whole: its title and its nodes.
 * @param {Place} place @param {string | null} title @param {any[]} nodes @param {string} id
 */
export function uiBlock(place, title, nodes, id) {
  const el = h("article", { class: `part ui-${place.kind}`, id, "data-name": place.name });
  fill(el, title ? heading(place.level, title) : null, nodes.map((n) => uiNode({ ...place, level: place.level + 1 }, n)));
  return el;
}

/** The panels and card templates of each plugin, read once per view that shows cards (a view made anew reads again). */
const templates = new Map();

/** Forgets the plugins' templates read so far (a new view reads them again). */
export function forgetTemplates() {
  templates.clear();
}

/**
 * The card template card `card` names (`<plugin>/<template>`), rendered whole once its plugin's templates are read; if
 * the plugin or the template is not loaded, it says so (the card's own title, text and options stay usable).
 * @param {string} ref @param {number} level @param {number} card @returns {HTMLElement}
 */
export function cardTemplate(ref, level, card) {
  const [plugin = "", name = ""] = ref.split("/");
  const box = h("div", { class: "card-template", "data-template": ref, "aria-busy": "true" });
  if (!templates.has(plugin)) templates.set(plugin, api("GET", `/v1/plugins/${seg(plugin)}/ui`).catch(() => null));
  void templates.get(plugin).then((/** @type {any} */ ui) => {
    const found = ui?.cards.find((/** @type {any} */ c) => c.name === name);
    fill(box, found
      ? uiBlock({ plugin, kind: "card", name, level }, found.title, found.data, `card-${card}-template`)
      : h("p", { class: "meta" }, t("console.ui.noTemplate", { template: visible(ref) })));
    box.removeAttribute("aria-busy");
  });
  return box;
}
