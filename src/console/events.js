// @ts-check
/**
 * Events (issue 30): every event the hub recorded, newest first, a page at a time (`GET /v1/events`), with its source,
 * type, subject and summary, the rules that took it, those that skipped it because they were paused, a mark on those
 * no rule took, and the runs it started; and "run this again": a manual run of one of its rules with its subject and
 * a reason, through `POST /v1/rules/<name>/run` (the hub's own rules apply). The filter is in the address.
 */
import { api, seg } from "./api.js";
import { fill, h, said } from "./dom.js";
import { shown, stateWord, t, when } from "./i18n.js";
import { dayStart, filterSelect, hashParams, setHashParams } from "./filters.js";

let formCount = 0;

/**
 * What a list of events keeps across its renders (a list is made anew when facts come): what "run this again" said
 * for each event, so its word stays until the view is left.
 * @typedef {{ said: Map<number, { text: string, run: number | null, error: boolean }> }} EventsMemo
 */

/** A memo for a list of events. @returns {EventsMemo} */
export function eventsMemo() {
  return { said: new Map() };
}

/** Shows what "run this again" said of an event. @param {HTMLElement} message @param {EventsMemo["said"] extends Map<any, infer V> ? V | undefined : never} m */
function showSaid(message, m) {
  if (!m) return fill(message);
  fill(message, m.run === null ? m.text : h("a", { href: `#/runs/${m.run}` }, m.text));
  message.className = m.error ? "message error" : "message";
}

/** Whether a "run this again" form is open in `list` (the list is not made anew under the reader then). @param {Element} list */
export function formOpen(list) {
  return list.querySelector("form.again:not([hidden])") !== null;
}

/**
 * The "run this again" form of an event: which rule (those of the event that are still in the rules), a reason.
 * A paused rule is not offered to run: it says to resume it first.
 * @param {any} e @param {import("./app.js").Ctx} ctx @param {HTMLElement} message @param {HTMLElement} opener @param {EventsMemo} memo
 */
function againForm(e, ctx, message, opener, memo) {
  const n = ++formCount;
  const lines = ctx.state.lines.filter((/** @type {any} */ l) => e.routed.includes(l.name) || e.paused.includes(l.name));
  const runnable = lines.filter((/** @type {any} */ l) => !l.paused);
  const paused = lines.filter((/** @type {any} */ l) => l.paused);
  const rule = /** @type {HTMLSelectElement} */ (h("select", { id: `again-rule-${n}`, name: "rule" }, runnable.map((/** @type {any} */ l) => h("option", { value: l.name }, l.name))));
  const reason = /** @type {HTMLInputElement} */ (h("input", { type: "text", id: `again-reason-${n}`, name: "reason", value: t("console.events.againReason", { event: e.id }) }));
  const form = h("form", { class: "again", hidden: true, onsubmit: async (/** @type {Event} */ ev) => {
    ev.preventDefault();
    try {
      const r = await api("POST", `/v1/rules/${seg(rule.value)}/run`, { ...(e.subject ? { subject: e.subject } : {}), ...(reason.value.trim() ? { reason: reason.value.trim() } : {}) });
      memo.said.set(e.id, { text: t("console.rules.ran", { run: r.run }), run: r.run, error: false });
      form.hidden = true;
      opener.focus();
      ctx.refresh();
    } catch (err) {
      memo.said.set(e.id, { text: /** @type {Error} */ (err).message, run: null, error: true });
    }
    showSaid(message, memo.said.get(e.id));
  } },
  h("div", { class: "field" }, h("label", { for: `again-rule-${n}` }, t("console.events.againRule")), rule),
  h("div", { class: "field" }, h("label", { for: `again-reason-${n}` }, t("console.events.againReasonLabel")), reason),
  h("div", { class: "actions" },
    h("button", { type: "submit", class: "again-start" }, t("console.events.againStart")),
    h("button", { type: "button", class: "quiet", onclick: () => {
      form.hidden = true;
      opener.focus();
    } }, t("console.events.againCancel"))));
  return { form, runnable: runnable.length > 0, pausedNote: paused.map((/** @type {any} */ l) => t("console.events.againPaused", { rule: l.name })) };
}

/**
 * One event as a list item (the Events view and the search).
 * @param {any} e an `EventEntry` @param {import("./app.js").Ctx} ctx @param {EventsMemo} memo
 */
export function eventItem(e, ctx, memo) {
  const message = h("p", { class: "message", role: "status" });
  showSaid(message, memo.said.get(e.id));
  const opener = h("button", { type: "button", class: "quiet again-open", onclick: () => {
    again.form.hidden = false;
    /** @type {HTMLElement | null} */ (again.form.querySelector("select"))?.focus();
  } }, t("console.events.again"));
  const again = againForm(e, ctx, message, opener, memo);
  const runs = e.runs.length
    ? h("p", { class: "event-runs" }, t("console.events.runs"), " ",
      e.runs.map((/** @type {any} */ r, /** @type {number} */ i) => [i ? ", " : "", h("a", { href: `#/runs/${r.id}` }, `#${r.id}`), ` ${r.rule} · `, h("span", { class: `state state-${r.state}` }, stateWord(r.state))]).flat(),
      e.runCount > e.runs.length ? ` ${t("console.events.runsMore", { n: e.runCount })}` : "")
    : null;
  return h("li", { class: e.unrouted ? "event unrouted" : e.paused.length ? "event skipped" : "event", "data-event": e.id },
    h("div", { class: "run-head" },
      h("span", {}, `#${e.id}`),
      e.unrouted ? h("span", { class: "badge warn" }, t("console.events.routing.unrouted")) : null,
      e.paused.length ? h("span", { class: "badge warn" }, t("console.events.routing.skipped")) : null,
      // An event the hub made says what made it; its source and type (`schedule · schedule.cron`) are the hub's own.
      h("span", { class: "meta" }, e.internal ? `${when(e.at)} · ${t(`console.events.internal.${e.internal}`)}` : [e.source, e.type, when(e.at)].join(" · "))),
    e.subject ? said(e.subject, "p", { class: "subject" }) : null,
    e.summary ? said(e.texts ? shown(e.texts.summary, e.summary) : e.summary, "p", { class: "summary" }) : null,
    e.unrouted ? h("p", { class: "routing" }, t("console.events.unrouted")) : null,
    e.routed.length ? h("p", { class: "routing" }, t("console.events.takenBy", { rules: e.routed.join(", ") })) : null,
    e.paused.length ? h("p", { class: "routing" }, t("console.events.skippedBy", { rules: e.paused.join(", ") })) : null,
    runs,
    again.pausedNote.map((p) => h("p", { class: "meta" }, p)),
    again.runnable ? h("div", { class: "actions" }, opener) : null,
    again.form, message);
}

/** The Events view. @param {import("./app.js").Ctx} ctx @returns {import("./app.js").View} */
export function eventsView(ctx) {
  const input = /** @type {HTMLInputElement} */ (h("input", { type: "search", id: "events-q", name: "q", autocomplete: "off" }));
  const routing = filterSelect("events-routing", t("console.events.routing"), ["unrouted", "skipped", "routed"].map((r) => [r, t(`console.events.routing.${r}`)]));
  const rule = filterSelect("events-rule", t("console.runs.byRule"), []);
  const from = /** @type {HTMLInputElement} */ (h("input", { type: "date", id: "events-from", name: "from" }));
  const to = /** @type {HTMLInputElement} */ (h("input", { type: "date", id: "events-to", name: "to" }));
  const list = h("ul", { class: "events", id: "events" });
  const memo = eventsMemo();
  const status = h("p", { class: "meta", id: "events-status", role: "status" });
  /** @type {any[]} */
  let shown = [];
  /** @type {number | null} */
  let nextBefore = null;
  const older = h("button", { type: "button", class: "quiet", id: "older-events", hidden: true, onclick: () => void look(false) }, t("console.events.older"));

  const values = () => ({ q: input.value.trim(), routing: routing.s.value, rule: rule.s.value, from: from.value, to: to.value });
  const fromAddress = () => {
    const p = hashParams();
    input.value = p.get("q") ?? "";
    for (const [sel, k] of /** @type {const} */ ([[routing, "routing"], [rule, "rule"]])) {
      const v = p.get(k) ?? "";
      if (v && ![...sel.s.options].some((o) => o.value === v)) sel.s.append(h("option", { value: v }, v));
      sel.s.value = v;
    }
    from.value = p.get("from") ?? "";
    to.value = p.get("to") ?? "";
  };

  const form = h("form", { role: "search", class: "search", onsubmit: (/** @type {Event} */ e) => {
    e.preventDefault();
    setHashParams("events", values());
    void look(true);
  } },
  h("div", { class: "field" }, h("label", { for: "events-q" }, t("console.search.label")), input),
  h("div", { class: "filters" }, routing.el, rule.el,
    h("label", { class: "filter" }, h("span", {}, t("console.search.from")), from),
    h("label", { class: "filter" }, h("span", {}, t("console.search.to")), to)),
  h("div", { class: "actions" }, h("button", { type: "submit", id: "events-go" }, t("console.search.go"))));
  for (const el of [routing.s, rule.s, from, to]) el.addEventListener("change", () => /** @type {HTMLFormElement} */ (form).requestSubmit());

  // One event only (`#/events?event=<id>`: a run's page links to the event that started it), with a way back to all.
  const one = h("p", { class: "meta one-event", id: "events-one", hidden: true });
  const el = h("section", { class: "view events-view" },
    h("h1", { tabindex: -1 }, t("console.nav.events")), form, one, status, list, older);

  let asked = "";
  let seq = -1;
  let busy = false;
  let pages = 0;
  /**
   * Reads the first page anew (`fresh`) or the next older one.
   * @param {boolean} fresh
   */
  const look = async (fresh) => {
    if (busy) return;
    busy = true;
    const v = values();
    asked = hashParams().toString();
    const only = /^[1-9]\d{0,14}$/.exec(hashParams().get("event") ?? "")?.[0];
    const q = new URLSearchParams();
    for (const k of ["q", "routing", "rule"]) if (v[k]) q.set(k, v[k]);
    if (dayStart(v.from)) q.set("from", dayStart(v.from));
    if (dayStart(v.to, 1)) q.set("to", dayStart(v.to, 1));
    if (!fresh && nextBefore !== null) q.set("before", String(nextBefore));
    // One event: the page just below the next id starts with it (events are listed newest first, by id).
    if (only) q.set("before", String(Number(only) + 1));
    try {
      const page = await api("GET", `/v1/events?${q}`);
      const events = only ? page.events.filter((/** @type {any} */ e) => e.id === Number(only)) : page.events;
      shown = fresh ? events : [...shown, ...events];
      pages = fresh ? 1 : pages + 1;
      nextBefore = only ? null : page.nextBefore;
      fill(list, shown.map((e) => eventItem(e, ctx, memo)));
      const filtered = Object.values(v).some(Boolean);
      status.textContent = shown.length ? "" : only ? t("console.events.noSuch", { event: only }) : filtered ? t("console.events.none") : t("console.events.empty");
      one.hidden = !only;
      fill(one, only ? [t("console.events.onlyOne", { event: only }), " ", h("a", { href: "#/events", id: "events-all" }, t("console.events.showAll"))] : []);
      older.hidden = nextBefore === null;
    } catch (e) {
      status.textContent = t("console.failed", { error: /** @type {Error} */ (e).message });
    } finally {
      busy = false;
    }
  };

  /** @param {import("./app.js").Ctx} c */
  const update = (c) => {
    ctx = c;
    if (seq === -1) {
      const v = rule.s.value;
      fill(rule.s, h("option", { value: "" }, t("console.filter.any")), c.state.lines.map((/** @type {any} */ l) => h("option", { value: l.name }, l.name)));
      rule.s.value = v;
      fromAddress();
    }
    // The address changed by hand: the form follows it. New facts: the first page again, unless older pages are shown
    // (reading them all again would move the list under the reader).
    if (hashParams().toString() !== asked) {
      fromAddress();
      void look(true);
    } else if (c.state.seq !== seq && pages <= 1 && !formOpen(list)) void look(true);
    else if (formOpen(list)) return;
    seq = c.state.seq;
  };
  update(ctx);
  return { el, update, title: t("console.nav.events") };
}
