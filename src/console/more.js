// @ts-check
/**
 * The smaller views: workers and channels (last seen, online, capacity, agents, runs in hand, cards waiting),
 * spending (today and the last 7 days from the hub's sums; by day and by rule from the runs that ended, as plain bar
 * charts; runs that reported no usage counted apart, never as zero). The plugins are in plugins.js.
 */
import { api, seg } from "./api.js";
import { fill, h, said } from "./dom.js";
import { money, num, t, when } from "./i18n.js";
import { runHeldStates, stateIn } from "./kernel/states.js";

/** @param {import("./app.js").Ctx} ctx @returns {import("./app.js").View} */
export function workersView(ctx) {
  const workers = h("ul", { class: "parts", id: "workers" });
  const channels = h("ul", { class: "parts", id: "channels" });
  const el = h("section", { class: "view workers-view" },
    h("h1", { tabindex: -1 }, t("console.nav.workers")),
    h("h2", {}, t("console.workers.workers")), workers,
    h("h2", {}, t("console.workers.channels")), channels);
  /** @param {import("./app.js").Ctx} c */
  const update = (c) => {
    const s = c.state;
    const names = new Set([...s.workers.map((/** @type {any} */ w) => w.name), ...s.agents.map((/** @type {any} */ a) => a.worker)]);
    const rows = [...names].sort().map((name) => {
      const w = s.workers.find((/** @type {any} */ x) => x.name === name);
      const agents = s.agents.filter((/** @type {any} */ a) => a.worker === name).map((/** @type {any} */ a) => a.name);
      const inHand = s.active.filter((/** @type {any} */ r) => r.worker === name && stateIn(runHeldStates, r.state)).length;
      const online = w?.online === true;
      return h("li", { class: online ? "part" : "part offline" },
        h("h3", {}, said(name), " ", h("span", { class: online ? "state state-online" : "state state-offline" }, t(online ? "console.workers.online" : "console.workers.offline"))),
        h("p", { class: "meta" }, [
          w ? t("console.workers.seen", { at: when(w.seenAt) }) : t("console.workers.neverSeen"),
          // Its slots as its last poll said them; the runs in hand as the hub counts them.
          w?.slots !== null && w?.slots !== undefined ? t("console.workers.slots", { slots: w.slots, free: w.free }) : t("console.workers.slotsUnknown"),
          t("console.workers.inHand", { n: inHand }),
          agents.length ? t("console.workers.agents", { agents: agents.join(", ") }) : null,
        ].filter(Boolean).join(" · ")));
    });
    fill(workers, rows.length ? rows : h("li", { class: "empty" }, t("console.workers.none")));
    fill(channels, s.channels.map((/** @type {any} */ ch) => {
      // The hub counts every open card (the state lists only the newest: issue 30).
      const waiting = ch.waiting;
      return h("li", { class: "part" },
        h("h3", {}, said(ch.name), ch.name !== ch.id ? h("span", { class: "meta" }, ` (${ch.id})`) : null),
        h("p", { class: "meta" }, [
          ch.seenAt ? t("console.workers.seen", { at: when(ch.seenAt) }) : t("console.workers.neverSeen"),
          t("console.workers.waiting", { n: waiting }),
        ].join(" · ")));
    }));
  };
  update(ctx);
  return { el, update, title: t("console.nav.workers") };
}

/** Pages of older runs the spending view reads at most, looking for the runs that ended in the last 7 days. */
const spendingPagesMax = 20;
const dayMs = 86_400_000;

/**
 * A horizontal bar chart: one labelled bar per row, the value written after it; read by screen readers as its label.
 * Plain elements laid out by the style sheet (no library, no SVG): the text keeps the page's size at any width, so
 * the chart reads in a second on a phone as on a desktop. Each bar's length is set through the CSSOM, which the
 * page's Content-Security-Policy allows (a `style` attribute it would refuse).
 * @param {string} title @param {[string, number][]} rows @param {(v: number) => string} format
 */
export function barChart(title, rows, format) {
  const max = Math.max(1e-9, ...rows.map((r) => r[1]));
  const bars = rows.map(([label, v]) => {
    const bar = h("span", { class: "bar" });
    bar.style.width = `${v > 0 ? Math.max(1, (v / max) * 100) : 0}%`;
    return h("div", { class: "bar-row" },
      h("span", { class: "bar-label", title: label }, label),
      h("span", { class: "bar-track" }, bar),
      h("span", { class: "bar-value" }, format(v)));
  });
  return h("figure", { class: "chart" },
    h("figcaption", {}, title),
    h("div", { class: "bars", role: "img", "aria-label": `${title}: ${rows.map(([l, v]) => `${l} ${format(v)}`).join(", ")}` }, bars));
}

/** @param {import("./app.js").Ctx} ctx @returns {import("./app.js").View} */
export function spendingView(ctx) {
  const boxes = h("div", { class: "spend" });
  const charts = h("div", { class: "charts" });
  const note = h("p", { class: "meta" });
  const el = h("section", { class: "view spending-view" }, h("h1", { tabindex: -1 }, t("console.nav.spending")), boxes, charts, note);
  /** @type {any[]} the older pages read (runs ended within 7 days may be on them) */
  let older = [];
  let olderRead = false;
  /** @param {any} sp @param {string} label */
  const box = (sp, label) => h("div", { class: "spend-box" },
    h("h2", {}, label),
    // A kind that every run left unreported is said so, never shown as 0.
    h("p", { class: "big" }, sp.rounds > 0 && sp.missingCost === sp.rounds ? t("console.spend.noCost") : money(sp.cost)),
    h("p", {}, sp.rounds > 0 && sp.missingTokens === sp.rounds ? t("console.spend.noTokens") : t("console.spending.tokens", { n: num(sp.tokens) }), " · ", t("console.spending.runs", { n: sp.rounds })),
    sp.missingTokens || sp.missingCost ? h("p", { class: "warn" }, t("console.spending.missing", { n: Math.max(sp.missingTokens, sp.missingCost) })) : null);

  /** Reads older pages until they reach back 7 days (at most `spendingPagesMax`), once. @param {any} s */
  const readOlder = async (s) => {
    olderRead = true;
    let before = s.nextBefore;
    const from = Date.now() - 7 * dayMs;
    for (let i = 0; i < spendingPagesMax && before !== null; i++) {
      const page = await api("GET", `/v1/state?before=${seg(before)}&cards=0`);
      older = [...older, ...page.runs];
      const last = page.runs.at(-1);
      if (!page.hasMore || !last || Date.parse(last.createdAt) < from) break;
      before = page.nextBefore;
    }
    update(ctx);
  };

  /** @param {import("./app.js").Ctx} c */
  const update = (c) => {
    ctx = c;
    const s = c.state;
    const { today, week } = s.spending;
    fill(boxes, box(today, t("console.spending.today")), box(week, t("console.spending.week")));
    if (!olderRead && s.hasMore) void readOlder(s);
    // The runs that ended in the last 7 days, by day (the browser's zone) and by rule.
    const seen = new Set();
    const from = Date.now() - 7 * dayMs;
    const ended = [...s.runs, ...older].filter((r) => !seen.has(r.id) && seen.add(r.id) && r.endedAt && Date.parse(r.endedAt) >= from);
    const byCost = ended.some((r) => r.usage?.cost !== undefined);
    const value = (/** @type {any} */ r) => (byCost ? r.usage?.cost : r.usage?.input !== undefined || r.usage?.output !== undefined ? (r.usage.input ?? 0) + (r.usage.output ?? 0) : undefined);
    /** @type {Map<string, number>} */
    const days = new Map();
    for (let i = 6; i >= 0; i--) days.set(dayKey(Date.now() - i * dayMs), 0);
    /** @type {Map<string, number>} */
    const rules = new Map();
    let missing = 0;
    for (const r of ended) {
      const v = value(r);
      if (v === undefined) {
        missing++;
        continue;
      }
      const d = dayKey(Date.parse(r.endedAt));
      if (days.has(d)) days.set(d, (days.get(d) ?? 0) + v);
      rules.set(r.rule, (rules.get(r.rule) ?? 0) + v);
    }
    const what = t(byCost ? "console.spending.usd" : "console.spending.tokenCount");
    // The catalog's one form of an amount (`USD 1.63`, `1.63 美元`), never a dollar sign in the Chinese console.
    const format = (/** @type {number} */ v) => (byCost ? money(v) : num(Math.round(v)));
    fill(charts,
      barChart(t("console.spending.byDay", { what }), [...days], format),
      barChart(t("console.spending.byRule", { what }), [...rules].sort((a, b) => b[1] - a[1]), format));
    note.textContent = t("console.spending.fromRuns", { n: ended.length, missing });
  };
  update(ctx);
  return { el, update, title: t("console.nav.spending") };
}

/** `MM-DD` of a time in the browser's zone. @param {number} ms */
function dayKey(ms) {
  return when(ms).slice(0, 5);
}
