// @ts-check
/**
 * "Needs you", the landing view: the open question cards, newest first, each with its rule, lane, the agent's text,
 * its options as buttons (the recommended one marked), an answer in one's own words, and resolve; then notices and
 * fyi cards with "mark as handled" (fyi cards are closed when told: the recent ones are shown to read). Answering is `POST /v1/cards/<id>/answer`, the CLI's own call: the first answer
 * wins, and a card answered elsewhere changes in place (its element stays; what is typed in it too, while it is open).
 */
import { api, seg } from "./api.js";
import { fill, h, said, saidWithLinks } from "./dom.js";
import { shown, t, when } from "./i18n.js";
import { cardTemplate, forgetTemplates } from "./ui.js";

/**
 * Option `i` of a card in the reader's language when the hub wrote it (its message id and params; issue 27 #2), else
 * as written. A card's title and text are shown the same way.
 * @param {any} card @param {number} i @returns {string}
 */
const option = (card, i) => shown(card.texts?.options?.[i] ?? {}, card.options[i] ?? "");

/**
 * What a card's element remembers between updates: the version it shows, and a message of the last try to answer.
 * @typedef {{ el: HTMLElement, shown: string, message: { text: string, error: boolean } | null, busy: boolean }} CardUi
 */

/**
 * The view "Needs you", or with `only` one card's page (`#/needs/<id>`, issue 30: a run's page links to the cards it
 * asked): the card whatever its state, from the state when it is open or recent, else from `GET /v1/cards/<id>`.
 * @param {import("./app.js").Ctx} ctx @param {number | null} [only] @returns {import("./app.js").View}
 */
export function needsView(ctx, only = null) {
  /** @type {Map<number, CardUi>} */
  const ui = new Map();
  forgetTemplates();
  const asks = h("ul", { class: "cards", id: "asks" });
  const notices = h("ul", { class: "cards", id: "notices" });
  const emptyAsks = h("p", { class: "empty" }, only === null ? t("console.needs.empty") : "");
  const emptyNotices = h("p", { class: "empty" }, t("console.needs.noNotices"));
  // With more open cards than the state lists (issue 30): how many are not shown, and a button for the next page.
  const moreText = h("span", {});
  const more = h("p", { class: "more-cards", id: "more-cards" }, moreText, " ",
    h("button", { type: "button", class: "quiet", onclick: () => ctx.moreCards() }, t("console.needs.showMore")));
  const title = only === null ? t("console.nav.needs") : t("console.card.label", { card: only });
  const el = only === null
    ? h("section", { class: "view needs" },
      h("h1", { tabindex: -1 }, title),
      emptyAsks, asks, more,
      h("h2", {}, t("console.needs.notices")),
      emptyNotices, notices)
    : h("section", { class: "view needs one-card" },
      h("p", {}, h("a", { href: "#/needs" }, `← ${t("console.card.back")}`)),
      h("h1", { tabindex: -1 }, title),
      emptyAsks, asks);
  /** The card read from the hub (one the state no longer lists), and the log position it was read at. */
  let fetched = { card: /** @type {any} */ (null), seq: -1, busy: false };

  /** @param {import("./app.js").Ctx} c */
  const update = (c) => {
    if (only !== null) return updateOne(c);
    /** @type {any[]} */
    const cards = [...c.state.cards].sort((a, b) => b.id - a.id);
    const isAsk = (/** @type {any} */ card) => card.kind === "ask" && !card.fyi;
    place(asks, cards.filter(isAsk), c);
    // FYI cards are closed when told: the recent ones show below the open notices, to read, with nothing to do.
    const fyi = c.state.recentCards.filter((/** @type {any} */ card) => card.fyi).sort((/** @type {any} */ a, /** @type {any} */ b) => b.id - a.id);
    place(notices, [...cards.filter((card) => !isAsk(card)), ...fyi], c);
    emptyAsks.hidden = asks.childElementCount > 0;
    emptyNotices.hidden = notices.childElementCount > 0;
    more.hidden = !(c.state.moreCards > 0);
    moreText.textContent = t("console.needs.moreCards", { n: c.state.moreCards ?? 0 });
  };

  /**
   * One card's page: the card as the state lists it, else as `GET /v1/cards/<id>` says (read again when facts come).
   * @param {import("./app.js").Ctx} c
   */
  const updateOne = (c) => {
    const listed = [...c.state.cards, ...c.state.recentCards].find((/** @type {any} */ x) => x.id === only);
    if (!listed && fetched.seq !== c.state.seq && !fetched.busy) {
      fetched.busy = true;
      const seq = c.state.seq;
      void api("GET", `/v1/cards/${seg(/** @type {number} */ (only))}`).then((r) => {
        fetched = { card: r.card, seq, busy: false };
      }, (e) => {
        fetched = { card: null, seq, busy: false };
        emptyAsks.textContent = /** @type {Error} */ (e).message;
      }).then(() => updateOne(ctx));
    }
    const card = listed ?? fetched.card;
    place(asks, card ? [card] : [], c);
    emptyAsks.hidden = asks.childElementCount > 0 || emptyAsks.textContent === "";
  };

  /**
   * Puts the cards into `list` in order, reusing each card's element.
   * @param {HTMLElement} list @param {any[]} cards @param {import("./app.js").Ctx} c
   */
  const place = (list, cards, c) => {
    const keep = new Set(cards.map((card) => card.id));
    for (const [id, u] of ui) if (!keep.has(id) && u.el.parentElement === list) { u.el.remove(); ui.delete(id); }
    let before = list.firstElementChild;
    for (const card of cards) {
      let u = ui.get(card.id);
      if (!u) {
        u = { el: h("li", { class: "card", id: `card-${card.id}` }), shown: "", message: null, busy: false };
        ui.set(card.id, u);
      }
      const shown = `${card.version}/${card.state}`;
      if (u.shown !== shown) {
        draw(u, card, c);
        u.shown = shown;
      }
      if (u.el !== before) list.insertBefore(u.el, before);
      else before = before.nextElementSibling;
    }
  };

  /**
   * (Re)draws one card; an answer being typed survives.
   * @param {CardUi} u @param {any} card @param {import("./app.js").Ctx} c
   */
  const draw = (u, card, c) => {
    const draft = /** @type {HTMLTextAreaElement | null} */ (u.el.querySelector("textarea"));
    const typed = draft?.value ?? "";
    const hadFocus = draft !== null && document.activeElement === draft;
    u.el.dataset.state = card.state;
    const titleId = `card-${card.id}-title`;
    u.el.setAttribute("aria-labelledby", titleId);
    // The card's own page, and the run that asked it (issue 30: cards and runs link to each other).
    /** @type {(string | Node)[]} */
    const meta = [h("a", { href: `#/needs/${card.id}`, class: "card-link" }, t("console.card.label", { card: card.id }))];
    if (card.rule) meta.push(t("console.card.ruleLane", { rule: card.rule, lane: card.lane || "-" }));
    if (card.run) meta.push(h("a", { href: `#/runs/${card.run}`, class: "run-link" }, t("console.card.fromRun", { run: card.run })));
    meta.push(when(card.at));
    /** @type {(Node | null)[]} */
    const parts = [
      h("h3", { id: titleId }, card.fyi ? h("span", { class: "badge" }, t("console.card.fyi")) : null, said(shown(card.texts?.title ?? {}, card.title))),
      h("p", { class: "meta" }, meta.flatMap((m, i) => (i ? [" · ", m] : [m]))),
      card.text ? saidWithLinks(shown(card.texts?.text ?? {}, card.text), "p", { class: "text" }) : null,
      // A tool call's approval card: the whole arguments the answer is bound to (issue 26 #5).
      card.toolArguments ? h("details", { class: "args" }, h("summary", {}, t("console.card.toolArguments")), h("pre", {}, said(card.toolArguments))) : null,
      // A declarative plugin's card template, whole (issue 18); the options below answer the card as ever.
      card.template ? cardTemplate(card.template, 4, card.id) : null,
    ];
    for (const [channel, d] of Object.entries(card.deliveries ?? {})) {
      const dv = /** @type {any} */ (d);
      if (dv.error) parts.push(h("p", { class: "warn" }, t("console.card.delivery", { channel, failures: dv.failures, error: "" }), said(dv.error)));
    }
    const status = h("p", { class: u.message?.error ? "message error" : "message", role: u.message?.error ? "alert" : "status" }, u.message?.text ?? "");
    if (card.state === "open") parts.push(actions(u, card, c, typed));
    else parts.push(outcome(card));
    parts.push(status);
    fill(u.el, ...parts);
    if (hadFocus) /** @type {HTMLTextAreaElement | null} */ (u.el.querySelector("textarea"))?.focus();
  };

  /**
   * Sends an answer (or a resolve) of one card and says how it went in the card itself.
   * @param {CardUi} u @param {any} card @param {import("./app.js").Ctx} c
   * @param {"answer" | "resolve"} what @param {{ choice?: number, text?: string }} body
   */
  const send = async (u, card, c, what, body) => {
    if (u.busy) return;
    u.busy = true;
    u.message = { text: t("console.card.sending"), error: false };
    redrawMessage(u);
    try {
      await api("POST", `/v1/cards/${seg(card.id)}/${what}`, body);
      u.message = null;
      c.announce(t("console.card.label", { card: card.id }));
    } catch (e) {
      // Someone else was first (or the card closed meanwhile): the hub's words say so, and the card shows its outcome.
      u.message = { text: /** @type {Error} */ (e).message, error: true };
      c.announce(u.message.text);
    } finally {
      u.busy = false;
      u.shown = "";
      c.refresh();
      redrawMessage(u);
    }
  };

  /** @param {CardUi} u */
  const redrawMessage = (u) => {
    const m = u.el.querySelector(".message");
    if (!m) return;
    m.textContent = u.message?.text ?? "";
    m.className = u.message?.error ? "message error" : "message";
    m.setAttribute("role", u.message?.error ? "alert" : "status");
  };

  /**
   * The controls of an open card.
   * @param {CardUi} u @param {any} card @param {import("./app.js").Ctx} c @param {string} typed
   */
  const actions = (u, card, c, typed) => {
    if (card.fyi) {
      return h("div", { class: "actions" }, h("button", { type: "button", onclick: () => send(u, card, c, "resolve", {}) }, t("console.card.done")));
    }
    if (card.kind === "notice") {
      return h("div", { class: "actions" }, h("button", { type: "button", onclick: () => send(u, card, c, "answer", { choice: 0 }) }, t("console.card.done")));
    }
    const textId = `card-${card.id}-text`;
    const area = /** @type {HTMLTextAreaElement} */ (h("textarea", { id: textId, rows: 2 }));
    area.value = typed;
    return h("div", { class: "answer" },
      h("fieldset", { class: "options" },
        h("legend", {}, t("console.card.options")),
        card.options.map((/** @type {string} */ o, /** @type {number} */ i) => h("button", {
          type: "button",
          class: card.recommend === i ? "option recommended" : "option",
          "data-choice": i,
          onclick: () => send(u, card, c, "answer", { choice: i }),
        }, said(option(card, i)), card.recommend === i ? h("span", { class: "badge" }, t("console.card.recommended")) : null))),
      h("form", { class: "own-words", onsubmit: (/** @type {Event} */ e) => {
        e.preventDefault();
        if (area.value.trim() !== "") void send(u, card, c, "answer", { text: area.value });
      } },
        h("label", { for: textId }, t("console.card.ownWords")),
        area,
        h("div", { class: "row" },
          h("button", { type: "submit" }, t("console.card.send")),
          h("button", { type: "button", class: "quiet", onclick: () => send(u, card, c, "resolve", {}) }, t("console.card.resolve")))));
  };

  /** What became of a card that is no longer open. @param {any} card */
  const outcome = (card) => {
    if (card.fyi) return null;
    if (card.kind === "notice" && card.state === "answered") return h("p", { class: "outcome" }, t("console.card.handledBy", { by: card.by ?? t("console.card.you") }));
    const answer = card.choice !== null && card.kind === "ask" ? option(card, card.choice) : card.answer;
    if (card.state === "answered" || answer) {
      return h("p", { class: "outcome" }, t("console.card.answered", { answer: "\u0000", by: card.by ?? t("console.card.you") }).split("\u0000").flatMap((part, i) => i === 0 ? [part] : [said(answer ?? ""), part]));
    }
    return h("p", { class: "outcome" }, t("console.card.closedAs", { result: "" }), said(card.result ?? card.state));
  };

  update(ctx);
  return { el, update: (c) => {
    ctx = c;
    update(c);
  }, title };
}
