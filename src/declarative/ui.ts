/**
 * Panels and card templates as clients see them, and their controls as events (spec declarative-plugins.md §3.4;
 * issue 18): `uiOf` is what GET /v1/plugins/:id/ui answers; `controlEvent` turns the owner's press of an `actions`
 * button or submit of a `form` — named by its panel or card template and its id — into the event `action.<id>` or
 * `form.<id>` the hub posts from source `plugin:<plugin id>`, after checking that the control exists and that a form's
 * values fit its fields. Nothing here writes; a refusal names the field.
 */
import { type Lang, said, type Said } from "../i18n/messages.js";
import { lineForbidden } from "../kernel/text.js";
import { eventDetailMaxCodepoints, eventTypeMaxChars } from "../kernel/limits.js";
import type { FormField, UiNode } from "../protocol/plugin-schemas.js";
import type { LoadedPlugin } from "./types.js";

/** What GET /v1/plugins/:id/ui answers (src/protocol/responses.ts PluginUi). */
export interface PluginUiView {
  plugin: string;
  name: string;
  panels: { id: string; title: string; body: UiNode[] }[];
  cards: { name: string; kind: string; title: string | null; data: UiNode[] }[];
}

/** The panels and card templates of a loaded plugin, in the order its `provides` names them (without `$schema`). */
export function uiOf(plugin: LoadedPlugin): PluginUiView {
  return {
    plugin: plugin.id,
    name: plugin.manifest.name,
    panels: [...plugin.panels.values()].map((p) => ({ id: p.id, title: p.title, body: p.body })),
    cards: [...plugin.cards].map(([name, c]) => ({ name, kind: c.kind, title: c.title ?? null, data: c.data })),
  };
}

/** A card template as channels and the link page show it: its title and its nodes. */
export interface CardTemplateView {
  title: string | null;
  data: UiNode[];
}

/**
 * The card template a card names (`<plugin>/<template>`, issue 18) as `plugins` holds it now, or null when the plugin
 * or the template is not loaded (or the name has no `/`).
 */
export function cardTemplateView(plugins: { get(id: string): LoadedPlugin | null }, ref: string): CardTemplateView | null {
  const slash = ref.indexOf("/");
  if (slash < 0) return null;
  const c = plugins.get(ref.slice(0, slash))?.cards.get(ref.slice(slash + 1));
  return c ? { title: c.title ?? null, data: c.data } : null;
}

/** What the owner sent: the asset (`panel` or `card`), the control (`action` or `form`), a form's values. */
export interface ControlPress {
  panel?: string;
  card?: string;
  action?: string;
  form?: string;
  values?: Record<string, string | number | boolean>;
}

/** The event a control makes (an EventIn without `hops`), or why not: 400 for the request, 404 for what is not there. */
export type ControlOutcome =
  | { ok: true; event: { id: string; type: string; subject: string; summary: string; detail?: string } }
  | { ok: false; status: 400 | 404; error: Said };

/** Every node of `nodes`, sections' children included, depth first. */
function* walk(nodes: readonly UiNode[]): Generator<UiNode> {
  for (const n of nodes) {
    yield n;
    if (n.type === "section") yield* walk(n.children);
  }
}

/** The one of two fields that is given, or the refusal (neither: the first is required; both: one too many). */
function oneOf(a: [string, string | undefined], b: [string, string | undefined], lang: Lang): { name: string; value: string } | { error: Said } {
  if (a[1] !== undefined && b[1] !== undefined) return { error: said("plugin.event.both", { a: a[0], b: b[0] }) };
  if (a[1] !== undefined) return { name: a[0], value: a[1] };
  if (b[1] !== undefined) return { name: b[0], value: b[1] };
  return { error: said("plugin.event.neither", { a: a[0], b: b[0] }) };
}

/** A form's values checked against its fields, normalised (empty optional values left out), or the refusal. */
export function checkFormValues(fields: readonly FormField[], values: Record<string, string | number | boolean>, lang: Lang): { ok: true; values: Record<string, string | number | boolean> } | { ok: false; error: Said } {
  const byName = new Map(fields.map((f) => [f.name, f]));
  for (const name of Object.keys(values)) {
    if (!byName.has(name)) return { ok: false, error: said("field.unknown", { field: `values.${name}` }) };
  }
  const out: Record<string, string | number | boolean> = {};
  for (const f of fields) {
    const field = `values.${f.name}`;
    const v = Object.hasOwn(values, f.name) ? values[f.name] : undefined;
    const type = f.type ?? "text";
    if (v === undefined || v === "") {
      if (f.required) return { ok: false, error: said("field.required", { field }) };
      continue;
    }
    switch (type) {
      case "number":
        if (typeof v !== "number" || !Number.isFinite(v)) return { ok: false, error: said("field.type", { field, type: "number" }) };
        break;
      case "checkbox":
        if (typeof v !== "boolean") return { ok: false, error: said("field.type", { field, type: "boolean" }) };
        if (f.required && v !== true) return { ok: false, error: said("field.required", { field }) };
        break;
      case "select":
        if (typeof v !== "string" || !(f.options ?? []).includes(v)) return { ok: false, error: said("field.enum", { field, values: JSON.stringify(f.options ?? []) }) };
        break;
      case "textarea":
        if (typeof v !== "string") return { ok: false, error: said("field.type", { field, type: "string" }) };
        break;
      default:
        if (typeof v !== "string") return { ok: false, error: said("field.type", { field, type: "string" }) };
        if (lineForbidden.test(v)) return { ok: false, error: said("field.pattern", { field, what: said("pattern.oneLine") }) };
    }
    out[f.name] = v;
  }
  return { ok: true, values: out };
}

/**
 * The event of a press of a control of `plugin`, with event id `id`: type `action.<action>` or `form.<form>`, subject
 * `panel/<name>` or `card/<name>`, summary the button's label or the form's title, and for a form its checked values
 * as JSON in `detail` (what the rule's prompt reads).
 */
export function controlEvent(plugin: LoadedPlugin, press: ControlPress, id: string, lang: Lang): ControlOutcome {
  const bad = (error: Said): ControlOutcome => ({ ok: false, status: 400, error });
  const where = oneOf(["panel", press.panel], ["card", press.card], lang);
  if ("error" in where) return bad(where.error);
  const nodes = where.name === "panel" ? plugin.panels.get(where.value)?.body : plugin.cards.get(where.value)?.data;
  if (!nodes) return { ok: false, status: 404, error: said("plugin.event.noAsset", { plugin: plugin.id, kind: where.name, name: where.value }) };
  const what = oneOf(["action", press.action], ["form", press.form], lang);
  if ("error" in what) return bad(what.error);
  // An event's type holds at most eventTypeMaxChars: `action.` or `form.` leaves the rest for the id.
  if (what.name.length + 1 + what.value.length > eventTypeMaxChars) return bad(said("field.maxLength", { field: what.name, limit: eventTypeMaxChars - what.name.length - 1 }));
  const subject = `${where.name}/${where.value}`;
  const missing = (): ControlOutcome => ({ ok: false, status: 404, error: said("plugin.event.noControl", { kind: what.name, id: what.value, asset: subject }) });
  if (what.name === "action") {
    if (press.values !== undefined) return bad(said("field.unknown", { field: "values" }));
    for (const n of walk(nodes)) {
      const action = n.type === "actions" ? n.actions.find((a) => a.id === what.value) : undefined;
      if (action) return { ok: true, event: { id, type: `action.${action.id}`, subject, summary: action.label } };
    }
    return missing();
  }
  for (const n of walk(nodes)) {
    if (n.type !== "form" || n.id !== what.value) continue;
    const checked = checkFormValues(n.fields, press.values ?? {}, lang);
    if (!checked.ok) return bad(checked.error);
    const detail = JSON.stringify(checked.values);
    if ([...detail].length > eventDetailMaxCodepoints) return bad(said("field.maxLength", { field: "values", limit: eventDetailMaxCodepoints }));
    return { ok: true, event: { id, type: `form.${n.id}`, subject, summary: n.title ?? n.submit ?? n.id, detail } };
  }
  return missing();
}
