// @ts-check
/**
 * The search (issue 30): one box over events, runs and cards, answered by the hub's index (`GET /v1/search`), with
 * filters for a group of run states, a rule, a worker and a date range; the whole search is in the address
 * (`#/search?q=…&group=…`), so a view can be shared and reloaded. Runs and cards found can be acted on together:
 * several runs stopped (after a confirmation in the page), several cards resolved, each through its own `/v1` call.
 */
import { api, seg } from "./api.js";
import { fill, h, said } from "./dom.js";
import { t, when } from "./i18n.js";
import { runGroups, runLiveStates } from "./kernel/states.js";
import { eventItem, eventsMemo, formOpen } from "./events.js";
import { dayStart, filterSelect, hashParams, setHashParams } from "./filters.js";
import { runRow, stopQuestion } from "./runs.js";

/**
 * One run found: the Runs list's own row (its subject, tries, usage; an earlier try's error not shown on a run that
 * ended well — issue 30), with a box to select it when it can be stopped.
 * @param {any} r @param {Set<number>} chosen @param {() => void} changed
 */
function runItem(r, chosen, changed) {
  return runRow(r, runLiveStates.includes(r.state) ? { chosen, changed } : undefined);
}

/** One card found, with a box to select it while it is open. @param {any} c @param {Set<number>} chosen @param {() => void} changed */
function cardItem(c, chosen, changed) {
  const box = c.state !== "closed" ? h("input", { type: "checkbox", class: "pick", "data-card": c.id, "aria-label": t("console.bulk.selectCard", { card: c.id }), checked: chosen.has(c.id), onchange: (/** @type {Event} */ e) => {
    if (/** @type {HTMLInputElement} */ (e.target).checked) chosen.add(c.id);
    else chosen.delete(c.id);
    changed();
  } }) : null;
  return h("li", { class: "card found", "data-card": c.id, "data-state": c.state },
    h("div", { class: "run-head" }, box, said(c.title, "strong"),
      h("span", { class: "meta" }, [t(`console.cardState.${c.state}`), c.rule, when(c.at)].filter(Boolean).join(" · ")),
      c.run ? h("a", { href: `#/runs/${c.run}` }, t("console.card.fromRun", { run: c.run })) : null),
    c.text ? said(c.text, "p", { class: "summary" }) : null);
}

/**
 * Does `f` for each id, one after another, and says how many went through and the first refusal.
 * @param {number[]} ids @param {(id: number) => Promise<unknown>} f
 * @returns {Promise<{ ok: number, failed: number, error: string }>}
 */
async function each(ids, f) {
  let ok = 0;
  let failed = 0;
  let error = "";
  for (const id of ids) {
    try {
      await f(id);
      ok++;
    } catch (e) {
      failed++;
      error ||= /** @type {Error} */ (e).message;
    }
  }
  return { ok, failed, error };
}

/** The search view. @param {import("./app.js").Ctx} ctx @returns {import("./app.js").View} */
export function searchView(ctx) {
  const input = /** @type {HTMLInputElement} */ (h("input", { type: "search", id: "search-q", name: "q", "aria-describedby": "search-hint", autocomplete: "off" }));
  const group = filterSelect("search-group", t("console.search.group"), runGroups.map((g) => [g, t(`console.search.group.${g}`)]));
  const rule = filterSelect("search-rule", t("console.runs.byRule"), []);
  const worker = filterSelect("search-worker", t("console.runs.byWorker"), []);
  const from = /** @type {HTMLInputElement} */ (h("input", { type: "date", id: "search-from", name: "from" }));
  const to = /** @type {HTMLInputElement} */ (h("input", { type: "date", id: "search-to", name: "to" }));
  const status = h("p", { class: "meta", id: "search-status", role: "status" });
  const message = h("p", { class: "message", role: "status", id: "bulk-message" });
  const events = h("ul", { class: "events", id: "found-events" });
  const memo = eventsMemo();
  const runs = h("ul", { class: "runs", id: "found-runs" });
  const cards = h("ul", { class: "runs", id: "found-cards" });
  const eventsHead = h("h2", {});
  // The headings take the focus after a bulk action, whose button is gone with the selection.
  const runsHead = h("h2", { tabindex: -1 });
  const cardsHead = h("h2", { tabindex: -1 });
  /** @type {Set<number>} */
  const pickedRuns = new Set();
  /** @type {Set<number>} */
  const pickedCards = new Set();

  /** The filter as the form says it. @returns {Record<string, string>} */
  const values = () => ({ q: input.value.trim(), group: group.s.value, rule: rule.s.value, worker: worker.s.value, from: from.value, to: to.value });
  /** Sets the form from the address. */
  const fromAddress = () => {
    const p = hashParams();
    input.value = p.get("q") ?? "";
    for (const [sel, k] of /** @type {const} */ ([[group, "group"], [rule, "rule"], [worker, "worker"]])) {
      const v = p.get(k) ?? "";
      // A value the list does not offer yet (a rule or worker of another hub's address) is kept as an option.
      if (v && ![...sel.s.options].some((o) => o.value === v)) sel.s.append(h("option", { value: v }, v));
      sel.s.value = v;
    }
    from.value = p.get("from") ?? "";
    to.value = p.get("to") ?? "";
  };

  const stopBar = h("div", { class: "actions bulk" });
  const stopButton = h("button", { type: "button", class: "danger", id: "bulk-stop", onclick: () => {
    confirm.hidden = false;
    fill(confirmText, stopQuestion(pickedRuns));
    /** @type {HTMLElement} */ (confirm.querySelector("#bulk-stop-yes")).focus();
  } });
  const confirmText = h("p", {});
  const confirm = h("div", { class: "confirm", id: "bulk-stop-confirm", hidden: true, role: "group", "aria-label": t("console.bulk.stopYes") },
    confirmText,
    h("button", { type: "button", class: "danger", id: "bulk-stop-yes", onclick: async () => {
      confirm.hidden = true;
      const ids = [...pickedRuns];
      const r = await each(ids, (id) => api("POST", `/v1/runs/${seg(id)}/cancel`, {}));
      pickedRuns.clear();
      runsHead.focus();
      say(t("console.bulk.stopped", { n: r.ok }), r);
    } }, t("console.bulk.stopYes")),
    h("button", { type: "button", class: "quiet", onclick: () => {
      confirm.hidden = true;
      stopButton.focus();
    } }, t("console.bulk.stopNo")));
  fill(stopBar, stopButton);
  const resolveButton = h("button", { type: "button", id: "bulk-resolve", onclick: async () => {
    const ids = [...pickedCards];
    const r = await each(ids, (id) => api("POST", `/v1/cards/${seg(id)}/resolve`, {}));
    pickedCards.clear();
    cardsHead.focus();
    say(t("console.bulk.resolved", { n: r.ok }), r);
  } });

  /** Says what a bulk action did and looks again. @param {string} text @param {{ failed: number, error: string }} r */
  const say = (text, r) => {
    message.textContent = r.failed ? `${text} · ${t("console.bulk.failedSome", { n: r.failed, error: r.error })}` : text;
    message.className = r.failed ? "message error" : "message";
    void look();
  };

  /** Shows the bulk buttons for what is selected. */
  const changed = () => {
    stopButton.textContent = t("console.bulk.stop", { n: pickedRuns.size });
    stopButton.hidden = pickedRuns.size === 0;
    if (stopButton.hidden) confirm.hidden = true;
    resolveButton.textContent = t("console.bulk.resolve", { n: pickedCards.size });
    resolveButton.hidden = pickedCards.size === 0;
  };

  const form = h("form", { role: "search", class: "search", onsubmit: (/** @type {Event} */ e) => {
    e.preventDefault();
    setHashParams("search", values());
    void look();
  } },
  h("div", { class: "field" }, h("label", { for: "search-q" }, t("console.search.label")), input, h("p", { class: "meta", id: "search-hint" }, t("console.search.hint"))),
  h("div", { class: "filters" }, group.el, rule.el, worker.el,
    h("label", { class: "filter" }, h("span", {}, t("console.search.from")), from),
    h("label", { class: "filter" }, h("span", {}, t("console.search.to")), to)),
  h("div", { class: "actions" }, h("button", { type: "submit", id: "search-go" }, t("console.search.go"))));
  // A choice of a filter searches at once (and goes into the address); the text waits for Enter or the button.
  for (const el of [group.s, rule.s, worker.s, from, to]) el.addEventListener("change", () => /** @type {HTMLFormElement} */ (form).requestSubmit());

  const el = h("section", { class: "view search-view" },
    h("h1", { tabindex: -1 }, t("console.nav.search")),
    form, status, message,
    eventsHead, events,
    runsHead, stopBar, confirm, runs,
    cardsHead, h("div", { class: "actions bulk" }, resolveButton), cards);

  let seq = -1;
  let busy = false;
  let again = false;
  let asked = "";
  /** Asks the hub for what the address says (once at a time; a change meanwhile asks once more after). */
  const look = async () => {
    if (busy) return void (again = true);
    busy = true;
    try {
      do {
        again = false;
        const v = values();
        asked = hashParams().toString();
        const q = new URLSearchParams();
        for (const k of ["q", "group", "rule", "worker"]) if (v[k]) q.set(k, v[k]);
        if (dayStart(v.from)) q.set("from", dayStart(v.from));
        if (dayStart(v.to, 1)) q.set("to", dayStart(v.to, 1));
        status.setAttribute("aria-busy", "true");
        status.textContent = t("console.search.searching");
        try {
          show(await api("GET", `/v1/search?${q}`), Boolean(v.group || v.worker));
        } catch (e) {
          status.textContent = t("console.failed", { error: /** @type {Error} */ (e).message });
        }
        status.setAttribute("aria-busy", "false");
      } while (again);
    } finally {
      busy = false;
    }
  };

  /** Shows an answer of the search. @param {any} found @param {boolean} runsOnly */
  const show = (found, runsOnly) => {
    const a = document.activeElement;
    const focused = a instanceof HTMLInputElement && a.classList.contains("pick")
      ? a.dataset.run ? `input[data-run="${a.dataset.run}"]` : `input[data-card="${a.dataset.card}"]` : null;
    const live = new Set(found.runs.map((/** @type {any} */ r) => r.id));
    for (const id of pickedRuns) if (!live.has(id)) pickedRuns.delete(id);
    const open = new Set(found.cards.map((/** @type {any} */ c) => c.id));
    for (const id of pickedCards) if (!open.has(id)) pickedCards.delete(id);
    const more = (/** @type {boolean} */ m, /** @type {number} */ n) => (m ? h("li", { class: "meta" }, t("console.search.more", { n })) : null);
    fill(eventsHead, t("console.search.events", { n: found.events.length }));
    fill(events, found.events.map((/** @type {any} */ e) => eventItem(e, ctx, memo)), more(found.more.events, found.events.length));
    fill(runsHead, t("console.search.runs", { n: found.runs.length }));
    fill(runs, found.runs.map((/** @type {any} */ r) => runItem(r, pickedRuns, changed)), more(found.more.runs, found.runs.length));
    fill(cardsHead, t("console.search.cards", { n: found.cards.length }));
    fill(cards, found.cards.map((/** @type {any} */ c) => cardItem(c, pickedCards, changed)), more(found.more.cards, found.cards.length));
    // A box that had the focus keeps it in the list made anew.
    if (focused) /** @type {HTMLElement | null} */ (el.querySelector(focused))?.focus();
    eventsHead.hidden = events.hidden = cardsHead.hidden = cards.hidden = runsOnly;
    const n = found.events.length + found.runs.length + found.cards.length;
    status.textContent = n === 0 ? t("console.search.nothing")
      : `${t("console.search.found", { events: found.events.length, runs: found.runs.length, cards: found.cards.length })}${runsOnly ? ` ${t("console.search.runsOnly")}` : ""}`;
    changed();
  };

  /** @param {import("./app.js").Ctx} c */
  const update = (c) => {
    ctx = c;
    const s = c.state;
    const keep = (/** @type {{ s: HTMLSelectElement }} */ sel, /** @type {string[]} */ names) => {
      const v = sel.s.value;
      fill(sel.s, h("option", { value: "" }, t("console.filter.any")), [...new Set([...names, v].filter(Boolean))].sort().map((x) => h("option", { value: x }, x)));
      sel.s.value = v;
    };
    if (seq === -1) {
      keep(rule, s.lines.map((/** @type {any} */ l) => l.name));
      keep(worker, [...s.workers.map((/** @type {any} */ w) => w.name), ...s.agents.map((/** @type {any} */ a) => a.worker)]);
      fromAddress();
    }
    // The address changed by hand (or back and forward): the form follows it. New facts: look again.
    if (hashParams().toString() !== asked) {
      fromAddress();
      void look();
    } else if (s.seq !== seq && !formOpen(events)) void look();
    else if (formOpen(events)) return;
    seq = s.seq;
  };
  update(ctx);
  changed();
  return { el, update, title: t("console.nav.search") };
}
