/**
 * The card link page (protocol.md 通道: `links: true`): `GET /c/<id>/<token>` shows one card as a plain HTML form,
 * `POST` answers it. The link is the permission to answer this one card, checked before the body is read. A refused
 * answer shows the page again with the reason on top; an answer over `answerTextMaxCodepoints` is refused, never cut.
 *
 * A card that names a card template (issue 18) shows its buttons and forms working: `POST /c/<id>/<token>/act` with
 * `action=<id>` or `form=<id>` and `v.<field>` values is checked against the template as its plugin holds it now,
 * then taken as an event from source `plugin:<id>` (type `action.<id>` / `form.<id>`, subject `card/<template>`),
 * as the owner's press in the console is. Each page shown carries a new nonce, and the event's id is made of the card,
 * the nonce and the control: the same page sent twice is one event. After a press the page says the event's number.
 */
import { Hono, type Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { Hub } from "../hub.js";
import type { CardRow, Input } from "../../kernel/types.js";
import { esc, linkedCard, linkPage } from "../link-page.js";
import { randomBytes } from "node:crypto";
import { cardTemplateView, controlEvent, intentTable, pressOfForm } from "../../declarative/index.js";
import { check } from "../../protocol/validate.js";
import { t } from "../../i18n/messages.js";
import { formFields, idParam, strictUtf8 } from "./read.js";
import { errorOf } from "./endpoint.js";

/** No script, no other origins, nothing cached, no referrer: the page carries a capability. */
const linkHeaders = { "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'", "cache-control": "no-store", "referrer-policy": "no-referrer" };

/** A link page's nonce: 16 random bytes in base64url, 22 characters. */
export const linkNonceChars = 22;
const newNonce = () => randomBytes(16).toString("base64url");
const noncePattern = new RegExp(`^[A-Za-z0-9_-]{${linkNonceChars}}$`);

/** The routes of the link page. */
export function linkRoutes(hub: Hub): Hono {
  const app = new Hono();
  const lang = hub.env.lang;
  /** A card's template as its plugin holds it now (issue 18). */
  const templateOf = (ref: string) => cardTemplateView(hub.declarative, ref);
  /** The page of card `id` with `status`, and `error` on top when an answer was refused. */
  const page = (c: Context, id: number, token: string, status: number, error: string | null) => {
    const p = linkPage(hub.store.view, hub.env, hub.now(), id, token, templateOf, { nonce: newNonce() });
    const html = error === null ? p.html : p.html.replace("<body>", () => `<body><p><strong>${esc(error)}</strong></p>`);
    return c.html(html, status as ContentfulStatusCode, linkHeaders);
  };

  app.get("/c/:id/:token", (c) => {
    const sent = /^[1-9]\d{0,14}$/.test(c.req.query("sent") ?? "") ? Number(c.req.query("sent")) : null;
    const p = linkPage(hub.store.view, hub.env, hub.now(), idParam(c, "id") ?? 0, c.req.param("token"), templateOf, { nonce: newNonce(), sent });
    return c.html(p.html, p.status as ContentfulStatusCode, linkHeaders);
  });

  /**
   * A POST to the page of card `id`: the link checked before the body is read (a stranger's slow body holds nothing),
   * then the form's fields read as UTF-8, then `handle`; refusals show the page again with the reason on top.
   */
  const posted = (handle: (c: Context, id: number, token: string, card: CardRow, form: Record<string, string>) => Promise<Response>) => async (c: Context) => {
    const id = idParam(c, "id") ?? 0;
    const token = c.req.param("token") ?? "";
    const linked = linkedCard(hub.store.view, hub.env, hub.now(), id, token);
    if ("status" in linked) return page(c, id, token, linked.status, null);
    const raw = strictUtf8(await c.req.arrayBuffer());
    const form = raw === null ? null : formFields(raw);
    if (form === null) return page(c, id, token, 400, t(lang, "body.utf8"));
    return handle(c, id, token, linked.card, form);
  };
  /** Submits `input`; on 200 goes back to the page (with `?<then>` when given), else shows the page with the reason. */
  const submitted = async (c: Context, id: number, token: string, input: Input, then: (body: unknown) => string = () => "") => {
    const d = await hub.submit(input).catch(() => null);
    if (d === null) return page(c, id, token, 503, t(lang, "hub.busy"));
    if (d.status !== 200) return page(c, id, token, d.status, errorOf(d.body) ?? t(lang, "internal"));
    const query = then(d.body);
    return c.redirect(`/c/${id}/${encodeURIComponent(token)}${query ? `?${query}` : ""}`, 303);
  };

  app.post("/c/:id/:token/act", posted(async (c, id, token, card, form) => {
    if (!noncePattern.test(form.nonce ?? "")) return page(c, id, token, 400, t(lang, "field.pattern", { field: "nonce", what: t(lang, "pattern.linkNonce", { count: linkNonceChars }) }));
    const ref = card.template ?? "";
    const slash = ref.indexOf("/");
    const plugin = slash < 0 ? null : hub.declarative.get(ref.slice(0, slash));
    if (!plugin) return page(c, id, token, 404, t(lang, "channel.template.notLoaded", { template: ref }));
    const press = pressOfForm(plugin, ref.slice(slash + 1), form);
    const control = press.action !== undefined ? `action-${press.action}` : `form-${press.form ?? ""}`;
    const made = controlEvent(plugin, press, `link-${id}-${form.nonce}-${control}`, lang);
    if (!made.ok) return page(c, id, token, made.status, made.error);
    const input: Input = { kind: "linkPluginEvent", card: id, token, plugin: plugin.id, event: made.event, intents: intentTable(hub.declarative) };
    return submitted(c, id, token, input, (body) => `sent=${(body as { event: number }).event}`);
  }));

  app.post("/c/:id/:token", posted(async (c, id, token, _card, form) => {
    const text = typeof form.text === "string" && form.text.trim() !== "" ? form.text : null;
    if (text !== null) {
      const checked = check("Answer", { text }, lang);
      if (!checked.ok) return page(c, id, token, 400, checked.error);
    }
    const choice = form.choice !== undefined && /^\d{1,3}$/.test(form.choice) ? Number(form.choice) : null;
    return submitted(c, id, token, { kind: "linkAnswer", card: id, token, choice, text });
  }));
  return app;
}
