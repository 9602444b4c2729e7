// @ts-check
/**
 * Runs: the runs in progress and the recent ones (older pages on demand), filtered by rule, state and worker, a
 * failure's reason on its row; and one run's page: its timeline from `GET /v1/runs/<id>/why`, the engine's own steps
 * as the CLI's `why` tells them (src/kernel/timeline.ts), times in the browser's zone, the raw facts on demand, stop,
 * and links to the event that started it and the cards it asked (from the same facts).
 */
import { api, seg } from "./api.js";
import { fill, h, safeHref, said } from "./dom.js";
import { money, num, shown, stateWord, t, when, zone } from "./i18n.js";
import { runLiveStates, runStates } from "./kernel/states.js";
import { renderText, timeline as steps } from "./kernel/timeline.js";
import { hashParams, setHashParams } from "./filters.js";
import { transcriptPart } from "./transcript.js";

/** @type {readonly string[]} */
const liveStates = runLiveStates;

/** Tokens and cost of a run's usage, or "". @param {any} u */
function usageText(u) {
  if (!u) return "";
  const parts = [];
  if (u.input !== undefined || u.output !== undefined) parts.push(t("console.runs.tokens", { n: num((u.input ?? 0) + (u.output ?? 0)) }));
  if (u.cost !== undefined) parts.push(money(u.cost, 4));
  return parts.join(" · ");
}

/**
 * What a queued run waits for, in words (the hub's `waits`: the one test a claim makes, kernel/runs.ts waitsFor).
 * @param {{ why: string, run?: number, limit?: number, worker?: string }} w
 */
function waitsText(w) {
  return t(`why.waits.${w.why}`, { run: w.run ?? "", limit: w.limit ?? "", worker: w.worker ?? "" });
}

/**
 * One run as a list row; with `pick`, a box to select it (the Runs list's bulk stop).
 * @param {any} r @param {{ chosen: Set<number>, changed: () => void }} [pick]
 */
export function runRow(r, pick) {
  // A run that ended well after a failed try keeps that try's error (the run page shows it on its try): the row does
  // not call it failed (issue 30).
  const ended = r.outcome === "done" || r.outcome === "nothing";
  const failed = r.error && !ended && (r.state === "waiting" || r.state === "cancelled" || r.failures > 0);
  const bits = [
    r.lane ? `${r.rule} · ${r.lane}` : r.rule,
    r.attempt > 1 ? t("console.runs.attempt", { n: r.attempt }) : null,
    r.failures ? t("console.runs.failures", { n: r.failures }) : null,
    r.worker,
    r.state === "waiting" ? t("console.runs.retryAt", { at: when(r.readyAt) }) : when(r.endedAt ?? r.startedAt ?? r.claimedAt ?? r.createdAt),
    usageText(r.usage) || null,
  ].filter(Boolean);
  return h("li", { class: failed ? "run failed" : "run", "data-run": r.id, "data-state": r.state },
    h("div", { class: "run-head" },
      pick ? h("input", { type: "checkbox", class: "pick", "data-run": r.id, "aria-label": t("console.bulk.select", { run: r.id }), checked: pick.chosen.has(r.id), onchange: (/** @type {Event} */ e) => {
        if (/** @type {HTMLInputElement} */ (e.target).checked) pick.chosen.add(r.id);
        else pick.chosen.delete(r.id);
        pick.changed();
      } }) : null,
      h("a", { href: `#/runs/${r.id}` }, `#${r.id}`),
      h("span", { class: `state state-${r.state}` }, stateWord(r.state)),
      h("span", { class: "meta" }, bits.join(" · "))),
    r.waits ? h("p", { class: "waits" }, waitsText(r.waits)) : null,
    r.summary ? said(r.summary, "p", { class: "summary" }) : null,
    r.error && !ended ? h("p", { class: "error-line" }, t("console.run.error", { error: "" }), said(r.error)) : null);
}

/** The question before stopping the selected runs (one run: by its number). @param {Set<number>} ids */
export function stopQuestion(ids) {
  return ids.size === 1 ? t("console.run.stopConfirm", { run: [...ids][0] ?? "" }) : t("console.bulk.stopConfirm", { n: ids.size });
}

/**
 * Stopping several runs of the Runs list at once (issue 30): boxes on the runs in progress, one button naming how
 * many are selected, one confirmation in the page, then the hub's stop (`POST /v1/runs/<id>/cancel`) for each in
 * turn; what became of each run is said per run (stopped, asked to stop, already ended, or the hub's refusal).
 * @param {() => import("./app.js").Ctx} ctx the view's latest context
 */
function bulkStop(ctx) {
  /** @type {Set<number>} */
  const chosen = new Set();
  // The heading takes the focus after the stop, whose button is gone with the selection.
  const head = h("h2", { tabindex: -1 }, t("console.runs.active"));
  const results = h("div", { class: "bulk-results", role: "status" });
  const text = h("p", {});
  const button = h("button", { type: "button", class: "danger", id: "runs-stop", hidden: true, onclick: () => {
    fill(text, stopQuestion(chosen));
    confirm.hidden = false;
    /** @type {HTMLElement} */ (confirm.querySelector("#runs-stop-yes")).focus();
  } });
  /** @type {HTMLElement} */
  let yes;
  /** @type {HTMLElement} */
  let no;
  const confirm = h("div", { class: "confirm", id: "runs-stop-confirm", hidden: true, role: "group", "aria-label": t("console.bulk.stopYes") },
    text,
    yes = h("button", { type: "button", class: "danger", id: "runs-stop-yes", onclick: async () => {
      confirm.hidden = true;
      const ids = [...chosen].sort((a, b) => a - b);
      chosen.clear();
      changed();
      head.focus();
      /** @type {string[]} */
      const lines = [];
      let asked = 0;
      for (const id of ids) {
        try {
          const r = await api("POST", `/v1/runs/${seg(id)}/cancel`, {});
          if (r.changed) asked++;
          lines.push(r.state === "stopping" ? t("console.bulk.runStopping", { run: id })
            : r.changed ? t("console.bulk.runStopped", { run: id }) : t("console.bulk.runEnded", { run: id }));
        } catch (e) {
          // A run that ended before its turn is refused so (run.notCancellable): said as what it is.
          const err = /** @type {import("./api.js").ApiError} */ (e);
          lines.push(err.code === "run.notCancellable" ? t("console.bulk.runEnded", { run: id }) : t("console.bulk.runRefused", { run: id, error: err.message }));
        }
      }
      fill(results, h("p", {}, asked === 1 ? t("console.bulk.stoppedOne") : t("console.bulk.stopped", { n: asked })),
        h("ul", { id: "runs-stop-results", "aria-label": t("console.bulk.results") }, lines.map((l) => h("li", {}, l))));
      ctx().refresh();
    } }),
    no = h("button", { type: "button", class: "quiet", onclick: () => {
      confirm.hidden = true;
      button.focus();
    } }));
  const bar = h("div", { class: "actions bulk" }, button);
  /** Shows the button for what is selected. */
  const changed = () => {
    button.textContent = t("console.bulk.stop", { n: chosen.size });
    yes.textContent = chosen.size === 1 ? t("console.run.stopYes") : t("console.bulk.stopYes");
    no.textContent = chosen.size === 1 ? t("console.run.stopNo") : t("console.bulk.stopNo");
    button.hidden = chosen.size === 0;
    if (button.hidden) confirm.hidden = true;
    else if (!confirm.hidden) fill(text, stopQuestion(chosen));
  };
  return {
    head, bar, confirm, results, pick: { chosen, changed },
    /**
     * Forgets selected runs no longer listed (ended, or filtered out), except while the confirmation is open: it named
     * how many, and each is then asked for (one that ended meanwhile is said to have ended). @param {number[]} listed
     */
    keep: (listed) => {
      if (!confirm.hidden) return;
      const live = new Set(listed);
      for (const id of chosen) if (!live.has(id)) chosen.delete(id);
      changed();
    },
  };
}

/** Pages of runs one look at the hub goes through at most, for a filter that matches few runs. */
const searchPagesMax = 5;

/**
 * The runs: those in progress (all of them, from the state) and the recent ones. Without a filter, the recent runs are
 * the state's newest page, with older pages on demand. With a filter, the hub is asked for the runs that match
 * (`GET /v1/state?rule=&state=&worker=`), page after page until a page's worth or `searchPagesMax` pages, and further
 * back on demand; the view says how far back the list reaches either way. Live updates come from the state's newest
 * page, which takes the place of what an older page said of the same run.
 * @param {import("./app.js").Ctx} ctx @returns {import("./app.js").View}
 */
export function runsView(ctx) {
  /** @type {any[]} older pages read so far (no filter) */
  let older = [];
  /** @type {number | null} */
  let nextBefore = null;
  let hasMore = false;
  /** @type {string | null} when the oldest run read was made */
  let reachedAt = null;
  /** What the hub found for the filter: its runs, where to look on, how far back it looked, whether it is looking. */
  let found = { key: "", runs: /** @type {any[]} */ ([]), nextBefore: /** @type {number | null} */ (null), reachedAt: /** @type {string | null} */ (null), busy: false, error: "" };
  // The filter is in the address (`#/runs?state=waiting`), so a view can be shared and reloaded (issue 30).
  const asked = hashParams();
  /** @type {Record<string, string>} */
  const filter = { rule: asked.get("rule") ?? "", state: asked.get("state") ?? "", worker: asked.get("worker") ?? "" };
  const filterKey = () => (filter.rule || filter.state || filter.worker ? JSON.stringify(filter) : "");
  /** @param {string} key @param {string} label */
  const select = (key, label) => {
    const s = /** @type {HTMLSelectElement} */ (h("select", { id: `filter-${key}`, onchange: () => {
      filter[key] = s.value;
      setHashParams("runs", filter);
      void search(true);
    } }));
    return { s, el: h("label", { class: "filter" }, h("span", {}, label), s) };
  };
  const byRule = select("rule", t("console.runs.byRule"));
  const byState = select("state", t("console.runs.byState"));
  const byWorker = select("worker", t("console.runs.byWorker"));
  const active = h("ul", { class: "runs", id: "active-runs" });
  const recent = h("ul", { class: "runs", id: "recent-runs" });
  const reach = h("p", { class: "meta reach", id: "runs-reach", role: "status" });
  const more = h("button", { type: "button", class: "quiet", id: "more-runs", onclick: async () => {
    if (filterKey()) return void search(false);
    if (nextBefore === null) return;
    const page = await api("GET", `/v1/state?before=${seg(nextBefore)}&cards=0`);
    older = [...older, ...page.runs];
    nextBefore = page.nextBefore;
    hasMore = page.hasMore;
    reachedAt = page.reachedAt ?? reachedAt;
    update(ctx);
  } }, t("console.runs.older"));
  const empty = h("p", { class: "empty" });
  const bulk = bulkStop(() => ctx);
  const el = h("section", { class: "view runs-view" },
    h("h1", { tabindex: -1 }, t("console.nav.runs")),
    h("div", { class: "filters" }, byRule.el, byState.el, byWorker.el),
    bulk.head, bulk.bar, bulk.confirm, bulk.results, active,
    h("h2", {}, t("console.runs.recent")), empty, recent, reach, more);

  /**
   * Asks the hub for the runs that match the filter: from the newest (`fresh`) or on from where the last look ended,
   * page after page until a page's worth of runs or `searchPagesMax` pages. A look whose filter changed meanwhile
   * is dropped.
   * @param {boolean} fresh
   */
  const search = async (fresh) => {
    const key = filterKey();
    if (fresh) found = { key, runs: [], nextBefore: null, reachedAt: null, busy: false, error: "" };
    if (!key) return update(ctx);
    found.busy = true;
    update(ctx);
    const wanted = found.runs.length + 60;
    try {
      for (let i = 0; i < searchPagesMax; i++) {
        const q = new URLSearchParams(Object.entries(filter).filter(([, v]) => v !== ""));
        if (found.nextBefore !== null) q.set("before", String(found.nextBefore));
        const page = await api("GET", `/v1/state?${q}&cards=0`);
        if (filterKey() !== key) return;
        found.runs = [...found.runs, ...page.runs];
        found.nextBefore = page.nextBefore;
        found.reachedAt = page.reachedAt ?? found.reachedAt;
        if (page.nextBefore === null || found.runs.length >= wanted) break;
      }
    } catch (e) {
      if (filterKey() === key) found.error = /** @type {Error} */ (e).message;
    }
    if (filterKey() !== key) return;
    found.busy = false;
    update(ctx);
  };

  /**
   * Fills a filter's options, keeping its choice.
   * @param {{ s: HTMLSelectElement }} sel @param {string[]} values
   */
  const options = (sel, values) => {
    const v = filter[sel.s.id.slice("filter-".length)] ?? "";
    fill(sel.s, h("option", { value: "" }, t("console.filter.any")), [...new Set(values)].sort().map((x) => h("option", { value: x }, sel === byState ? stateWord(x) : x)));
    sel.s.value = values.includes(v) ? v : "";
  };

  /** @param {import("./app.js").Ctx} c */
  const update = (c) => {
    ctx = c;
    const s = c.state;
    if (older.length === 0) {
      nextBefore = s.nextBefore;
      hasMore = s.hasMore;
      reachedAt = s.reachedAt ?? null;
    }
    const key = filterKey();
    // The newest page and the active runs are the freshest word on a run: they come first, and win.
    const seen = new Set();
    const runs = [...s.active, ...s.runs, ...(key ? found.runs : older)].filter((r) => !seen.has(r.id) && seen.add(r.id));
    options(byRule, [...s.lines.map((/** @type {any} */ l) => l.name), ...runs.map((r) => r.rule), filter.rule].filter(Boolean));
    options(byState, [...runStates]);
    options(byWorker, [...s.workers.map((/** @type {any} */ w) => w.name), ...s.agents.map((/** @type {any} */ a) => a.worker), ...runs.map((r) => r.worker), filter.worker].filter(Boolean));
    const keep = (/** @type {any} */ r) => (!filter.rule || r.rule === filter.rule) && (!filter.state || r.state === filter.state) && (!filter.worker || r.worker === filter.worker);
    const shownActive = s.active.filter(keep);
    bulk.keep(shownActive.map((/** @type {any} */ r) => r.id));
    // A box that had the focus keeps it in the list made anew.
    const a = document.activeElement;
    const focused = a instanceof HTMLInputElement && a.classList.contains("pick") && active.contains(a) ? a.dataset.run : null;
    fill(active, shownActive.map((/** @type {any} */ r) => runRow(r, bulk.pick)));
    if (focused) /** @type {HTMLElement | null} */ (active.querySelector(`input[data-run="${focused}"]`))?.focus();
    // A run in progress shows once, above; the recent ones are those that ended.
    const shown = runs.filter((r) => keep(r) && !liveStates.includes(r.state)).sort((a, b) => b.id - a.id);
    fill(recent, shown.map((r) => runRow(r)));
    empty.textContent = key && found.busy && shown.length === 0 ? "" : runs.length === 0 && !key ? t("console.runs.empty") : shown.length === 0 ? t("console.runs.none") : "";
    empty.hidden = empty.textContent === "";
    // How far back the list reaches: the hub's look for a filter, else the pages read.
    if (key) {
      reach.textContent = found.error ? t("console.failed", { error: found.error })
        : found.busy ? t("console.runs.searching")
        : found.nextBefore === null ? t("console.runs.searchedAll")
        : t("console.runs.searchedBack", { at: when(found.reachedAt) });
      reach.setAttribute("aria-busy", String(found.busy));
      more.textContent = t("console.runs.searchOlder");
      more.hidden = found.busy || found.nextBefore === null;
    } else {
      reach.textContent = !hasMore ? (runs.length ? t("console.runs.reachAll") : "") : t("console.runs.reachBack", { at: when(reachedAt) });
      reach.setAttribute("aria-busy", "false");
      more.textContent = t("console.runs.older");
      more.hidden = !hasMore;
    }
  };
  update(ctx);
  if (filterKey()) void search(true);
  return { el, update, title: t("console.nav.runs") };
}

/**
 * The timeline of one run from its facts: the engine's own (src/kernel/timeline.ts, served compiled), the same steps
 * as the CLI's and the MCP server's `why`, worded here with the console's catalog, times in the browser's zone.
 * @param {number} run @param {import("../protocol/responses.js").Fact[]} facts
 * @returns {{ at: string, text: string }[]}
 */
export function timeline(run, facts) {
  /** @type {import("./kernel/timeline.js").Wording} */
  const wording = { say: (id, params) => t(id, params), time: when, fixed: (text, data) => shown(data ?? {}, text) };
  return steps(run, facts).map((s) => ({ at: s.at, text: renderText(s.text, wording) }));
}

/**
 * What a run's facts (`why`) say it links to (issue 30): the event that started it (the first of the run row's
 * `events`, else the first event row of its facts) and the cards it asked (each card's latest row), oldest first.
 * @param {number} run @param {import("../protocol/responses.js").Fact[]} facts
 * @returns {{ event: { id: number, row: any } | null, cards: { id: number, row: any }[] }}
 */
export function runLinks(run, facts) {
  /** @type {Map<number, any>} */
  const cards = new Map();
  /** @type {Map<number, any>} */
  const events = new Map();
  /** @type {number | null} */
  let first = null;
  for (const f of facts) {
    for (const [table, key, row] of f.changes) {
      if (!row || typeof row !== "object") continue;
      const r = /** @type {any} */ (row);
      if (table === "cards" && r.run === run && typeof r.title === "string") cards.set(Number(key), r);
      if (table === "events" && typeof r.source === "string") events.set(Number(key), r);
      if (table === "runs" && Number(key) === run && first === null && Array.isArray(r.events) && Number.isInteger(r.events[0])) first = r.events[0];
    }
  }
  first ??= events.size ? [...events.keys()][0] : null;
  return {
    event: first === null ? null : { id: first, row: events.get(first) ?? null },
    cards: [...cards].sort((a, b) => a[0] - b[0]).map(([id, row]) => ({ id, row })),
  };
}

/** The links of a run's page: the event that started it, the cards it asked. @param {ReturnType<typeof runLinks>} l */
function linksPart(l) {
  const e = l.event;
  // The event as its owner knows it: its subject and summary (its source's id and type are on the Events view).
  const name = e?.row ? [e.row.subject, e.row.summary ? shown(e.row.texts?.summary ?? {}, e.row.summary) : null].filter(Boolean).join(" — ") : "";
  return [
    e ? h("p", { class: "started-by" }, h("a", { href: `#/events?event=${e.id}`, id: "run-event" }, t("console.run.startedBy", { event: e.id })), name ? " · " : null, name ? said(name) : null) : null,
    l.cards.length ? h("h2", {}, t("console.run.cardsAsked")) : null,
    l.cards.length ? h("ul", { class: "asked", id: "run-cards" }, l.cards.map((c) => h("li", { "data-card": c.id },
      h("a", { href: `#/needs/${c.id}` }, said(shown(c.row.texts?.title ?? {}, c.row.title))),
      ` · ${t("console.card.label", { card: c.id })}`))) : null,
  ];
}

/** One run's page. @param {number} id @param {import("./app.js").Ctx} ctx @returns {import("./app.js").View} */
export function runView(id, ctx) {
  const head = h("div", { class: "run-detail" });
  const steps = h("ol", { class: "timeline", id: "timeline" });
  const raw = h("pre", { class: "raw" });
  const message = h("p", { class: "message", role: "status" });
  /** Runs `f` and says its outcome (or the hub's refusal) in the message line, then reads the state again. */
  const act = async (/** @type {() => Promise<string>} */ f) => {
    try {
      message.textContent = await f();
      message.className = "message";
    } catch (e) {
      message.textContent = /** @type {Error} */ (e).message;
      message.className = "message error";
    }
    ctx.refresh();
  };
  // Stopping ends work an agent is doing: it asks once more, in the page, before it is sent.
  const confirmStop = h("div", { class: "confirm", id: "stop-confirm", hidden: true, role: "group", "aria-label": t("console.run.stopConfirm", { run: id }) },
    h("p", {}, t("console.run.stopConfirm", { run: id })),
    h("button", { type: "button", class: "danger", id: "stop-run-yes", onclick: () => {
      confirmStop.hidden = true;
      void act(async () => t("console.run.stopped", { state: (await api("POST", `/v1/runs/${seg(id)}/cancel`, {})).state }));
    } }, t("console.run.stopYes")),
    h("button", { type: "button", class: "quiet", onclick: () => {
      confirmStop.hidden = true;
      stop.focus();
    } }, t("console.run.stopNo")));
  const stop = h("button", { type: "button", class: "danger", id: "stop-run", onclick: () => {
    confirmStop.hidden = false;
    /** @type {HTMLElement} */ (confirmStop.querySelector("#stop-run-yes")).focus();
  } }, t("console.run.stop"));
  /** The run being shown, as the state last listed it (for "run again"). @type {any} */
  let shown = null;
  // Run again: a manual run of the same rule and subject, through POST /v1/rules/:name/run (the hub's own rules apply).
  const again = h("button", { type: "button", id: "run-again", onclick: () => void act(async () => {
    const r = await api("POST", `/v1/rules/${seg(shown.rule)}/run`, { ...(shown.subject ? { subject: shown.subject } : {}), reason: t("console.run.againReason", { run: id }) });
    return t("console.rules.ran", { run: r.run });
  }) }, t("console.run.again"));
  // What the agent did (issue 30), followed live while the run goes on.
  const transcript = transcriptPart(id);
  // The event that started the run and the cards it asked (issue 30), from the same facts as the timeline.
  const links = h("div", { class: "run-links", id: "run-links" });
  const el = h("section", { class: "view run-page" },
    h("p", {}, h("a", { href: "#/runs" }, `← ${t("console.run.back")}`)),
    h("h1", { tabindex: -1 }, t("console.run.title", { run: id })),
    head, h("div", { class: "actions" }, stop, again), confirmStop, message, links,
    transcript.el,
    h("h2", {}, t("console.run.timeline", { zone })), steps,
    h("details", {}, h("summary", {}, t("console.run.raw")), raw));
  let factsSeen = -1;

  /** @param {import("./app.js").Ctx} c */
  const update = (c) => {
    const r = [...c.state.active, ...c.state.runs].find((x) => x.id === id);
    if (r) {
      const link = safeHref(r.link);
      fill(head,
        h("ul", { class: "runs" }, runRow(r)),
        link ? h("p", {}, h("a", { href: link, rel: "noopener noreferrer", target: "_blank" }, said(link))) : null);
    }
    stop.hidden = r ? !liveStates.includes(r.state) : true;
    transcript.update(Boolean(r && liveStates.includes(r.state)));
    if (stop.hidden) confirmStop.hidden = true;
    shown = r ?? null;
    // A run of a paused rule, or one whose rule is gone, cannot run again from here.
    const line = r ? c.state.lines.find((/** @type {any} */ l) => l.name === r.rule) : null;
    again.hidden = !line || Boolean(line.paused);
    // The facts of a run change only when the log grows: read them again then.
    if (c.state.seq !== factsSeen) {
      factsSeen = c.state.seq;
      void api("GET", `/v1/runs/${seg(id)}/why`).then((w) => {
        fill(steps, timeline(id, w.facts).map((s) => h("li", {}, h("time", { datetime: s.at }, when(s.at)), " ", said(s.text))));
        raw.textContent = JSON.stringify(w.facts, null, 2);
        fill(links, linksPart(runLinks(id, w.facts)));
      }, (e) => {
        message.textContent = /** @type {Error} */ (e).message;
        message.className = "message error";
      });
    }
  };
  update(ctx);
  return { el, update, title: t("console.run.title", { run: id }), dispose: () => transcript.stop() };
}
