// @ts-check
/**
 * Runs: the runs in progress and the recent ones (older pages on demand), filtered by rule, state and worker, a
 * failure's reason on its row; and one run's page: its timeline from `GET /v1/runs/<id>/why`, the engine's own steps
 * as the CLI's `why` tells them (src/kernel/timeline.ts), times in the browser's zone, the raw facts on demand, and stop.
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

/** One run as a list row. @param {any} r */
function runRow(r) {
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
      h("a", { href: `#/runs/${r.id}` }, `#${r.id}`),
      h("span", { class: `state state-${r.state}` }, stateWord(r.state)),
      h("span", { class: "meta" }, bits.join(" · "))),
    r.waits ? h("p", { class: "waits" }, waitsText(r.waits)) : null,
    r.summary ? said(r.summary, "p", { class: "summary" }) : null,
    r.error && !ended ? h("p", { class: "error-line" }, t("console.run.error", { error: "" }), said(r.error)) : null);
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
  const el = h("section", { class: "view runs-view" },
    h("h1", { tabindex: -1 }, t("console.nav.runs")),
    h("div", { class: "filters" }, byRule.el, byState.el, byWorker.el),
    h("h2", {}, t("console.runs.active")), active,
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
    fill(active, s.active.filter(keep).map(runRow));
    // A run in progress shows once, above; the recent ones are those that ended.
    const shown = runs.filter((r) => keep(r) && !liveStates.includes(r.state)).sort((a, b) => b.id - a.id);
    fill(recent, shown.map(runRow));
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
  const el = h("section", { class: "view run-page" },
    h("p", {}, h("a", { href: "#/runs" }, `← ${t("console.run.back")}`)),
    h("h1", { tabindex: -1 }, t("console.run.title", { run: id })),
    head, h("div", { class: "actions" }, stop, again), confirmStop, message,
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
      }, (e) => {
        message.textContent = /** @type {Error} */ (e).message;
        message.className = "message error";
      });
    }
  };
  update(ctx);
  return { el, update, title: t("console.run.title", { run: id }), dispose: () => transcript.stop() };
}
