// @ts-check
/**
 * Declarative plugins' panels and card templates as DOM (spec declarative-plugins.md §3.4; issue 18): the closed
 * vocabulary `section · list · kv · form · markdown · doc-ref · actions · chart-lite`, every text a text node (never
 * HTML), every text isolated in its direction with its control characters shown. A node of any other type shows as
 * "unknown node" (the hub refuses such plugins; an older or newer hub may send one). An `actions` button and a `form`
 * submit post `POST /v1/plugins/<id>/events`, which the hub turns into an event from source `plugin:<id>`.
 *
 * Markdown is read by the SDK's tokenizer, the one the card link page uses (src/sdk/markdown.ts, served compiled as
 * `sdk/markdown.js`), not a library: the libraries that render Markdown make HTML strings that would need a sanitiser
 * and `innerHTML`. Its tokens become elements for a safe subset — headings, paragraphs, lists, quotes, code blocks,
 * inline code, bold, italics and links — and anything else, raw HTML included, stays literal text. A link becomes a
 * link only when it is http(s); any other stays its text.
 */
import { api, seg } from "./api.js";
import { fill, h, safeHref, said, visible } from "./dom.js";
import { t } from "./i18n.js";
import { artifactRoute } from "./kernel/text.js";
import { barChart } from "./more.js";
import { inlineSpans, markdownBlocks } from "./sdk/markdown.js";

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
/**
 * Inline spans as nodes: code, bold, italics, http(s) links; everything else text (control characters shown).
 * @param {import("./sdk/markdown.js").InlineSpan[]} spans @returns {(Node | string)[]}
 */
function spanNodes(spans) {
  return spans.flatMap((s) => {
    switch (s.type) {
      case "text":
        return visible(s.text);
      case "code":
        return h("code", {}, visible(s.text));
      case "strong":
      case "em":
        return h(s.type, {}, spanNodes(s.children));
      case "link": {
        const href = s.href === null ? null : safeHref(s.href);
        return href ? h("a", { href, rel: "noopener noreferrer nofollow", target: "_blank" }, spanNodes(s.children)) : spanNodes(s.children);
      }
    }
  });
}

/**
 * Inline Markdown as nodes (`inlineSpans`).
 * @param {string} text @returns {(Node | string)[]}
 */
export function inline(text) {
  return spanNodes(inlineSpans(text));
}

/**
 * Markdown as elements (a safe subset: see the module's comment; blocks of `markdownBlocks`). Headings start at
 * `level`.
 * @param {string} source @param {number} level @returns {HTMLElement}
 */
export function markdown(source, level) {
  return h("div", { class: "md said", dir: "auto" }, markdownBlocks(source).map((b) => {
    switch (b.type) {
      case "paragraph":
        return h("p", {}, inline(b.text));
      case "heading":
        return h(`h${Math.min(6, level + b.depth - 1)}`, {}, inline(b.text));
      case "ul":
      case "ol":
        return h(b.type, {}, b.items.map((i) => h("li", {}, inline(i))));
      case "quote":
        return h("blockquote", {}, h("p", {}, inline(b.text)));
      case "code":
        return h("pre", {}, h("code", {}, visible(b.text)));
    }
  }));
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
 * Each node type's element, `place.level` the heading level of titles at this depth (a section's children get the
 * next one). Typed by the protocol's node types: a type without its entry is an error here (tests/ui-node-kind.test.ts).
 * @type {{ [K in import("../protocol/plugin-schemas.js").UiNodeType]: (place: Place, node: Extract<import("../protocol/plugin-schemas.js").UiNode, { type: K }>) => HTMLElement }}
 */
const nodeElements = {
  section: (place, node) => h("section", { class: "ui-section" },
    node.title ? heading(place.level, node.title) : null,
    (node.children ?? []).map((c) => uiNode({ ...place, level: place.level + 1 }, c))),
  list: (place, node) => h("div", { class: "ui-list" },
    node.title ? heading(place.level, node.title) : null,
    h("ul", {}, node.items.map((i) => said(i, "li")))),
  kv: (place, node) => h("div", { class: "ui-kv" },
    node.title ? heading(place.level, node.title) : null,
    h("dl", {}, node.kv.map(([k, v]) => h("div", {}, said(k, "dt"), said(String(v), "dd"))))),
  form: formNode,
  markdown: (place, node) => markdown(node.markdown, place.level),
  "doc-ref": (_place, node) => {
    // A workflow's file (`run:<id>/<file>`) links to the route that serves it (the console's cookie reads it).
    const route = artifactRoute(node.docId);
    const name = said(node.title ?? node.docId);
    return h("p", { class: "ui-doc-ref" }, h("span", { class: "badge" }, t("console.ui.doc")),
      route ? h("a", { href: route, target: "_blank", rel: "noopener" }, name) : name, node.title ? h("code", {}, visible(node.docId)) : null);
  },
  actions: actionsNode,
  "chart-lite": (_place, node) => {
    const { kind, labels, series } = node.chart;
    if (kind === "line") return lineChart(node.title ?? "", labels, series);
    return barChart(visible(node.title ?? ""), labels.map((l, i) => [visible(l), Number(series[i] ?? 0)]), (v) => String(v));
  },
};

/**
 * One UI node as an element (`nodeElements`); a node of no known type says so (the hub refuses such plugins; an older
 * or newer hub may send one).
 * @param {Place} place @param {any} node @returns {HTMLElement}
 */
export function uiNode(place, node) {
  const type = node?.type;
  if (typeof type === "string" && Object.hasOwn(nodeElements, type)) return /** @type {any} */ (nodeElements)[type](place, node);
  return h("p", { class: "warn" }, t("console.ui.unknownNode", { type: visible(String(type ?? "")) }));
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
