/**
 * The card link page (protocol.md 通道: `links: true`): `GET /c/<id>/<token>` shows one card as a plain HTML form,
 * `POST` answers it. The link is the permission to answer this one card, checked before the body is read. A refused
 * answer shows the page again with the reason on top; an answer over `answerTextMaxCodepoints` is refused, never cut.
 *
 * A card that names a card template (issue 18) shows it whole, its buttons and forms disabled: a link answers its card
 * only (issue 26 — a link forwarded into a group chat must not start runs); the template's events are posted from the
 * owner's console. `POST /c/<id>/<token>/act`, where a page of an earlier version sent presses, is refused (403) once
 * the link itself is checked, its body unread.
 */
import { Hono, type Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { Hub } from "../hub.js";
import type { CardRow, InputOf } from "../../kernel/types.js";
import { linkedCard, linkPage } from "../link-page.js";
import { esc } from "../html.js";
import { cardTemplateView } from "../../declarative/index.js";
import { check } from "../../protocol/validate.js";
import { t } from "../../i18n/messages.js";
import { formFields, idParam, strictUtf8 } from "./read.js";
import { langOfAcceptLanguage } from "../accept-language.js";

/**
 * No script, no other origins, nothing cached, no referrer: the page carries a capability. Never in a frame of another
 * site (issue 30: a click in a frame would record an answer) — `frame-ancestors 'none'`, and `X-Frame-Options` for
 * browsers without it — and never sniffed as another type.
 */
const linkHeaders = {
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
  "x-frame-options": "DENY", "x-content-type-options": "nosniff", "cache-control": "no-store", "referrer-policy": "no-referrer",
};

/** The routes of the link page. */
export function linkRoutes(hub: Hub): Hono {
  const app = new Hono();
  /** The reader's language (their browser's Accept-Language), the hub's when it names neither. */
  const readerLang = (c: Context) => langOfAcceptLanguage(c.req.header("accept-language"), hub.env.lang);
  /** A card's template as its plugin holds it now (issue 18). */
  const templateOf = (ref: string) => cardTemplateView(hub.declarative, ref);
  /**
   * The page's own origin, whose other ports and schemes its links leave as text (template-html.ts `inlineHtml`): the
   * public URL's when the request came to its host (`http://` behind a TLS proxy is still the https page), else the
   * request's.
   */
  const ownOrigin = (c: Context) => {
    const asked = new URL(c.req.url);
    const pub = hub.env.publicUrl ? new URL(hub.env.publicUrl) : null;
    return pub && pub.host === asked.host ? pub.origin : asked.origin;
  };
  /** The page of card `id` with `status`, and `error` on top when an answer was refused. */
  const page = (c: Context, id: number, token: string, status: number, error: string | null) => {
    const p = linkPage(hub.store.view, hub.env, hub.now(), id, token, templateOf, readerLang(c), ownOrigin(c));
    const html = error === null ? p.html : p.html.replace("<body>", () => `<body><p><strong>${esc(error)}</strong></p>`);
    return c.html(html, status as ContentfulStatusCode, linkHeaders);
  };

  app.get("/c/:id/:token", (c) => {
    const p = linkPage(hub.store.view, hub.env, hub.now(), idParam(c, "id") ?? 0, c.req.param("token"), templateOf, readerLang(c), ownOrigin(c));
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
    if (form === null) return page(c, id, token, 400, t(readerLang(c), "body.utf8"));
    return handle(c, id, token, linked.card, form);
  };
  /** Submits `input`; on 200 goes back to the page, else shows the page with the reason. */
  const submitted = async (c: Context, id: number, token: string, input: InputOf<"linkAnswer">) => {
    const d = await hub.submit(input).catch(() => null);
    if (d === null) return page(c, id, token, 503, t(readerLang(c), "hub.busy"));
    if (d.status !== 200) return page(c, id, token, d.status, d.body.error);
    return c.redirect(`/c/${id}/${encodeURIComponent(token)}`, 303);
  };

  // A press of a card template's button or form: never taken from a link (issue 26). The link's own refusal (unknown,
  // expired) comes first, as for an answer; then the page with why, the body unread.
  app.post("/c/:id/:token/act", (c) => {
    const id = idParam(c, "id") ?? 0;
    const token = c.req.param("token") ?? "";
    const linked = linkedCard(hub.store.view, hub.env, hub.now(), id, token);
    return page(c, id, token, "status" in linked ? linked.status : 403, "status" in linked ? null : t(readerLang(c), "link.template.ownerOnly"));
  });

  app.post("/c/:id/:token", posted(async (c, id, token, _card, form) => {
    const text = typeof form.text === "string" && form.text.trim() !== "" ? form.text : null;
    if (text !== null) {
      const checked = check("Answer", { text }, readerLang(c));
      if (!checked.ok) return page(c, id, token, 400, checked.error);
    }
    const choice = form.choice !== undefined && /^\d{1,3}$/.test(form.choice) ? Number(form.choice) : null;
    return submitted(c, id, token, { kind: "linkAnswer", card: id, token, choice, text });
  }));
  return app;
}
