// @ts-check
/**
 * The smaller views: workers and channels (last seen, online, agents, runs in hand, cards waiting), spending (today
 * and the last 7 days; runs that reported no usage counted apart, never as zero; a plain SVG chart), and the plugins
 * slot (filled with the declarative-plugin work).
 */
import { fill, h, said } from "./dom.js";
import { num, t, when } from "./i18n.js";

const svgNs = "http://www.w3.org/2000/svg";

/**
 * An SVG element (charts only; attributes are numbers and fixed names).
 * @param {string} tag @param {Record<string, string | number>} attrs @param {...(SVGElement | string)} children
 */
function svg(tag, attrs, ...children) {
  const el = document.createElementNS(svgNs, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) el.append(c);
  return el;
}

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
      const inHand = s.active.filter((/** @type {any} */ r) => r.worker === name && ["claimed", "running", "stopping", "uncertain"].includes(r.state)).length;
      const online = w?.online === true;
      return h("li", { class: online ? "part" : "part offline" },
        h("h3", {}, said(name), " ", h("span", { class: online ? "state state-online" : "state state-offline" }, t(online ? "console.workers.online" : "console.workers.offline"))),
        h("p", { class: "meta" }, [
          w ? t("console.workers.seen", { at: when(w.seenAt) }) : t("console.workers.neverSeen"),
          t("console.workers.inHand", { n: inHand }),
          agents.length ? t("console.workers.agents", { agents: agents.join(", ") }) : null,
        ].filter(Boolean).join(" · ")));
    });
    fill(workers, rows.length ? rows : h("li", { class: "empty" }, t("console.workers.none")));
    fill(channels, s.channels.map((/** @type {any} */ ch) => {
      const waiting = s.cards.filter((/** @type {any} */ card) => card.state === "open" && card.channels.includes(ch.id) && !card.deliveries[ch.id]?.ref).length;
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

/** @param {import("./app.js").Ctx} ctx @returns {import("./app.js").View} */
export function spendingView(ctx) {
  const boxes = h("div", { class: "spend" });
  const chart = h("figure", { class: "chart" });
  const el = h("section", { class: "view spending-view" }, h("h1", { tabindex: -1 }, t("console.nav.spending")), boxes, chart);
  /** @param {any} sp @param {string} label */
  const box = (sp, label) => h("div", { class: "spend-box" },
    h("h2", {}, label),
    h("p", { class: "big" }, t("console.spending.cost", { cost: sp.cost.toFixed(2) })),
    h("p", {}, t("console.spending.tokens", { n: num(sp.tokens) }), " · ", t("console.spending.runs", { n: sp.rounds })),
    sp.missingTokens || sp.missingCost ? h("p", { class: "warn" }, t("console.spending.missing", { n: Math.max(sp.missingTokens, sp.missingCost) })) : null);
  /** @param {import("./app.js").Ctx} c */
  const update = (c) => {
    const { today, week } = c.state.spending;
    fill(boxes, box(today, t("console.spending.today")), box(week, t("console.spending.week")));
    // Two bars, today against the week, on one scale: cost when any was reported, else tokens.
    const byCost = week.cost > 0;
    const values = [[t("console.spending.today"), byCost ? today.cost : today.tokens], [t("console.spending.week"), byCost ? week.cost : week.tokens]];
    const max = Math.max(1e-9, ...values.map((v) => Number(v[1])));
    const w = 320;
    const bars = values.map(([label, v], i) => {
      const len = Math.round((Number(v) / max) * (w - 120));
      return [
        svg("text", { x: 0, y: 22 + i * 34, class: "chart-label" }, String(label)),
        svg("rect", { x: 110, y: 8 + i * 34, width: Math.max(len, 1), height: 20, rx: 3, class: "chart-bar" }),
      ];
    }).flat();
    fill(chart,
      svg("svg", { viewBox: `0 0 ${w} 76`, width: "100%", role: "img", "aria-label": values.map(([l, v]) => `${l}: ${byCost ? `$${Number(v).toFixed(2)}` : num(Number(v))}`).join(", ") }, ...bars));
  };
  update(ctx);
  return { el, update, title: t("console.nav.spending") };
}

/** @param {import("./app.js").Ctx} _ctx @returns {import("./app.js").View} */
export function pluginsView(_ctx) {
  const el = h("section", { class: "view plugins-view" }, h("h1", { tabindex: -1 }, t("console.nav.plugins")), h("p", { class: "empty" }, t("console.plugins.slot")));
  return { el, update: () => {}, title: t("console.nav.plugins") };
}
