/**
 * The text projection of a card template (spec declarative-plugins.md §3.4 and its rule that every card type says how
 * it looks in a chat group; issue 18), shared by every text channel through `cardText`: section titles, list items,
 * kv lines, markdown as text, doc-refs named, a chart as a few numbers, and for buttons and forms their labels only —
 * they work on the card's link page and in the console (a chat message cannot carry them).
 */
import type { UiNode } from "../protocol/plugin-schemas.js";
import { t, type Lang } from "../i18n/messages.js";
import { artifactRoute } from "../kernel/text.js";
import { httpUrl, markdownLinks } from "./markdown.js";

/** The route of the artifact a doc-ref `run:<id>/<file>` names, or null (issue 18; src/kernel/text.ts). */
export { artifactRoute };

/** A node of a card template or panel: the closed vocabulary (protocol/declarative/ui-node.schema.json). */
export type { UiNode };

/** A card template as a channel receives it on a card (`templateUi` of GET /v1/cards/next). */
export interface TemplateUi {
  title: string | null;
  data: unknown[];
}

/** A chart-lite in text shows its first this many points (label and value), then `…`. */
export const templateChartPointsShown = 6;

/**
 * Markdown as plain lines: heading marks, fences, `**`/`__` and inline-code backticks dropped, bullets as `• `, a link
 * as `text (url)` when it is http(s) and as its text otherwise, blank lines left out. Raw HTML stays literal text.
 */
export function markdownLines(source: string): string[] {
  const out: string[] = [];
  for (const raw of source.replace(/\r\n?/g, "\n").split("\n")) {
    if (/^\s*(```|~~~)/.test(raw) || raw.trim() === "") continue;
    const marked = raw.replace(/^(#{1,6})\s+/, "").replace(/^\s*[-*+]\s+/, "• ");
    let linked = "";
    let at = 0;
    for (const l of markdownLinks(marked)) {
      linked += marked.slice(at, l.start) + (httpUrl(l.url) ? `${l.label} (${l.url})` : l.label);
      at = l.end;
    }
    const line = (linked + marked.slice(at))
      .replace(/\*\*([^*]+?)\*\*|__([^_]+?)__/g, (_, a?: string, b?: string) => a ?? b ?? "")
      // Code is tried only where a run of backticks starts (`(?<!`)`): one that fails there fails inside the run too,
      // and trying each backtick of a long run again over what follows is quadratic. A code span ends after a whole
      // run, so nothing else changes.
      .replace(/(?<!`)`+([^`]+?)`+/g, "$1");
    out.push(line);
  }
  return out;
}

/** A chart-lite as one line: `title: A 3 · B 5`, at most `templateChartPointsShown` points, then ` · …`. */
export function chartLine(title: string | undefined, labels: readonly string[], series: readonly number[]): string {
  const points = labels.slice(0, templateChartPointsShown).map((l, i) => `${l} ${series[i] ?? ""}`.trimEnd());
  const more = labels.length > templateChartPointsShown ? " · …" : "";
  return `${title ? `${title}: ` : ""}${points.join(" · ")}${more}`;
}

/** The text of one node without its title for the kinds a richer channel may show otherwise (doc-ref, form, actions). */
export function controlLine(node: Extract<UiNode, { type: "doc-ref" | "form" | "actions" }>, lang: Lang): string {
  switch (node.type) {
    case "doc-ref": {
      // A workflow's file names the hub's route that serves it (to the owner), so a chat reader knows where it is.
      const route = artifactRoute(node.docId);
      return t(lang, "channel.template.doc", { title: node.title ? `${node.title} (${node.docId})` : node.docId }) + (route ? ` · ${route}` : "");
    }
    case "form":
      return t(lang, "channel.template.form", { title: node.title ?? node.submit ?? node.id, fields: node.fields.map((f) => f.label).join(", ") });
    case "actions":
      return node.actions.map((a) => `[${a.label}]`).join(" ");
  }
}

/**
 * The type a node no case of a renderer's `switch` took names, for its "unknown node" line (the hub refuses such
 * plugins; an older or newer hub may send one). Typed `never`: where a type of `uiNodeTypes` reaches it, the renderer
 * lacks that type's case and does not compile (tests/ui-node-kind.test.ts).
 */
export function unknownNodeType(node: never): string {
  return String((node as { type?: unknown } | null)?.type ?? "");
}

/** Whether a template has buttons or forms (a channel then says where they work and links the card's page). */
export function templateInteractive(nodes: readonly unknown[]): boolean {
  return (nodes as UiNode[]).some((n) => {
    switch (n?.type) {
      case "actions":
      case "form":
        return true;
      case "section":
        return templateInteractive(n.children ?? []);
      case "list":
      case "kv":
      case "markdown":
      case "doc-ref":
      case "chart-lite":
        return false;
      default:
        // No controls in a node of no known type (and a type of `uiNodeTypes` without its case here fails to compile).
        n satisfies never;
        return false;
    }
  });
}

/**
 * The template's text lines (spec §3.4): its title, then each node depth first — a section's title then its children;
 * a list's title then `• item`; a kv's title then `key: value`; markdown by `markdownLines`; a doc-ref, a form and
 * an actions row by `controlLine`; a chart-lite by `chartLine`; a node of another type named as unknown (the hub
 * refuses such plugins; an older or newer hub may send one). Titles and texts are as the plugin wrote them: the
 * channel's `literal` makes them safe for its markup.
 */
export function templateLines(ui: TemplateUi, lang: Lang): string[] {
  const lines: string[] = ui.title ? [ui.title] : [];
  const walk = (nodes: readonly unknown[]) => {
    for (const n of nodes as UiNode[]) {
      switch (n?.type) {
        case "section":
          if (n.title) lines.push(n.title);
          walk(n.children ?? []);
          break;
        case "list":
          if (n.title) lines.push(n.title);
          for (const item of n.items) lines.push(`• ${item}`);
          break;
        case "kv":
          if (n.title) lines.push(n.title);
          for (const [k, v] of n.kv) lines.push(`${k}: ${String(v)}`);
          break;
        case "markdown":
          lines.push(...markdownLines(n.markdown));
          break;
        case "chart-lite":
          lines.push(chartLine(n.title, n.chart.labels, n.chart.series));
          break;
        case "doc-ref":
        case "form":
        case "actions":
          lines.push(controlLine(n, lang));
          break;
        default:
          lines.push(t(lang, "channel.template.unknown", { type: unknownNodeType(n) }));
      }
    }
  };
  walk(ui.data);
  return lines;
}
