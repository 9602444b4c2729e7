/**
 * The card link page (protocol.md 通道: `links: true`): a plain HTML form with no script showing one card's text and
 * buttons, answerable once by whoever holds the link, valid 7 days from the card's creation. After that it no longer
 * shows the card. The token is derived from the master key (HMAC) and never stored, so links survive restarts. Its
 * text box takes what an answer may hold (`answerTextMaxCodepoints`; browsers count UTF-16 units, so they stop at or
 * before it); a longer answer sent anyway is refused with the limit named (routes/link.ts).
 */
import { optionAlways } from "../kernel/tool-calls.js";
import { linkRefusal } from "../kernel/card-steps.js";
import type { View } from "../kernel/view.js";
import type { CardRow, Env } from "../kernel/types.js";
import { cardLinkToken, safeEqual } from "../kernel/credentials.js";
import { answerTextMaxCodepoints, cardLinkValidMs } from "../kernel/limits.js";
import { t, type Lang } from "../i18n/messages.js";
import type { CardTemplateView } from "../declarative/index.js";
import { templateHtml } from "./template-html.js";
import { esc } from "./html.js";


/** Finds the card a link names, when the token is right and the link has not expired. */
export function linkedCard(view: View, env: Env, now: number, id: number, token: string): { card: CardRow } | { status: 404 | 410 } {
  const card = view.get("cards", id);
  if (!card || !safeEqual(token, cardLinkToken(env.master, card.id, card.at))) return { status: 404 };
  if (now > card.at + cardLinkValidMs) return { status: 410 };
  return { card };
}

/**
 * A whole plain page (no script) around `body`, in `lang`, titled `title` (escaped here), its content in a `main`
 * landmark. Long words (a URL, a hash) wrap anywhere, so a 390 px phone never scrolls sideways (issue 30). Light or
 * dark as the reader's system is (the colours said outright, so that checkers see them; grey text 4.5:1 or more on each).
 */
export function page(lang: Env["lang"], title: string, body: string): string {
  return `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark"><title>${esc(title)}</title><style>:root{color-scheme:light dark}body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;overflow-wrap:anywhere}
pre{white-space:pre-wrap;font:inherit;overflow-wrap:anywhere}button{font:inherit;margin:.25rem 0;padding:.5rem 1rem;display:block;width:100%}
textarea{width:100%;box-sizing:border-box;font:inherit}.muted{color:#595959}html{background:#fff;color:#000}@media (prefers-color-scheme:dark){html{background:#121212;color:#f0f0f0}.muted{color:#b0b0b0}}label{margin-right:.5rem}
.template{border:1px solid #bbb;border-radius:.5rem;padding:0 1rem;margin:1rem 0}</style></head><body><main>${body}</main></body></html>`;
}

/**
 * The HTML of a link page: the card with its buttons while it is open, else its outcome; or why it cannot be shown.
 * A card that names a card template shows it whole after its text (`templateOf` finds it as loaded now; src/host/
 * template-html.ts), its buttons and forms disabled — the link answers this card only; they work in the owner's
 * console (issue 26) — or says that it is not loaded. Its words are in `lang`, the reader's (issue 30: a link is
 * opened by whoever it was sent to; `langOfAcceptLanguage`), the hub's by default. `ownOrigin`: the page's own origin
 * (a template's links to another port of its host name stay text: template-html.ts `inlineHtml`).
 */
export function linkPage(
  view: View, env: Env, now: number, id: number, token: string, templateOf: (ref: string) => CardTemplateView | null = () => null, lang: Lang = env.lang,
  ownOrigin: string | null = null,
): { status: number; html: string } {
  const found = linkedCard(view, env, now, id, token);
  if ("status" in found) {
    const msg = t(lang, found.status === 410 ? "link.expired" : "link.unknown");
    return { status: found.status, html: page(lang, msg, `<h1>${esc(msg)}</h1>`) };
  }
  const card = found.card;
  const parts = [`<h1>${esc(card.title)}</h1>`];
  if (card.rule) parts.push(`<p class="muted">${esc(card.rule)}</p>`);
  if (card.text) parts.push(`<pre>${esc(card.text)}</pre>`);
  // A tool call's approval card: the whole arguments the owner's answer is bound to (issue 26 #5).
  const args = card.toolCall === undefined ? undefined : view.get("calls", card.toolCall)?.args;
  if (args !== undefined) parts.push(`<details open><summary>${esc(t(lang, "link.toolArguments"))}</summary><pre>${esc(args)}</pre></details>`);
  if (card.template !== undefined) {
    const ui = templateOf(card.template);
    parts.push(ui ? templateHtml(ui, lang, ownOrigin) : `<p class="muted">${esc(t(lang, "channel.template.notLoaded", { template: card.template }))}</p>`);
  }
  const action = `/c/${card.id}/${encodeURIComponent(token)}`;
  const refused = card.state === "open" ? linkRefusal(card, view.rules()?.rules.channels) : null;
  if (refused) {
    // Not the link's to answer (card-steps.ts linkAnswer): said, no buttons.
    parts.push(`<p class="muted">${esc(t(lang, refused))}</p>`);
  } else if (card.state === "open" && !card.fyi) {
    const buttons = card.kind === "ask"
      // A tool call's "always allow" is not the link's to give (card-steps.ts linkAnswer): not offered here.
      ? card.options.map((o, i) => (card.toolCall !== undefined && i === optionAlways ? "" : `<button name="choice" value="${i}">${card.recommend === i ? esc(t(lang, "link.optionRecommended", { option: o })) : esc(o)}</button>`)).join("")
      : `<button name="choice" value="0">${esc(t(lang, "answer.handled"))}</button>`;
    parts.push(`<form method="post" action="${action}">${buttons}</form>`);
    if (card.kind === "ask") {
      parts.push(`<form method="post" action="${action}"><p><textarea name="text" rows="3" maxlength="${answerTextMaxCodepoints}" required aria-label="${esc(t(lang, "link.sendText"))}"></textarea></p><button>${esc(t(lang, "link.sendText"))}</button></form>`);
    }
  } else {
    const answer = [card.choice !== null && card.kind === "ask" ? card.options[card.choice] : null, card.answer].filter(Boolean).join(" — ");
    // Who answered: a person's name as the channel gave it; the link itself in words.
    const by = card.by === "link" ? t(lang, "link.byLink") : card.by;
    if (answer) parts.push(`<p><strong>${esc(t(lang, "link.answerIs"))}</strong> ${esc(by ? t(lang, "link.answerBy", { answer, by }) : answer)}</p>`);
    parts.push(`<p class="muted">${esc(card.result ?? t(lang, card.state === "answered" ? "link.answered" : "link.closed"))}</p>`);
  }
  return { status: 200, html: page(lang, card.title, parts.join("\n")) };
}
