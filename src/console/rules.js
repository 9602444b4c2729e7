// @ts-check
/**
 * Rules: each rule of rules.json with its trigger (events, or its cron in words with its next time in the rules' zone
 * and in the reader's), what it has in hand, what it spent today and in 7 days and its budget, its pause (who, since,
 * why, until); pause with a reason and an end, resume, and run it now — the CLI's `pause`, `resume` and `run` calls.
 */
import { api, seg } from "./api.js";
import { cronWords, loadCronWords } from "./cron.js";
import { fill, h, said } from "./dom.js";
import { currentLang, money, num, spendText, t, when, zone } from "./i18n.js";

/**
 * Who paused a rule, in words: you (the console or the CLI with the owner key), its budget, its start limit; any other
 * name (a newer hub's) as it is.
 * @param {string} by
 */
function pausedBy(by) {
  return by === "owner" ? t("console.card.you") : by === "budget" || by === "rate" ? t(`console.rules.by.${by}`) : by;
}

/** @param {import("./app.js").Ctx} ctx @returns {import("./app.js").View} */
export function rulesView(ctx) {
  const list = h("ul", { class: "rules", id: "rules" });
  const empty = h("p", { class: "empty" }, t("console.rules.empty"));
  const el = h("section", { class: "view rules-view" }, h("h1", { tabindex: -1 }, t("console.nav.rules")), empty, list);
  /** Per rule: its element, what it shows, whether its pause form is open, its last message. */
  /** @type {Map<string, { el: HTMLElement, shown: string, form: boolean, message: { text: string, error: boolean } | null }>} */
  const ui = new Map();
  let words = false;
  // The cron words come with their library, loaded now: the rules are drawn again when it is there.
  void loadCronWords().then(() => {
    words = true;
    update(ctx);
  });

  /** @param {import("./app.js").Ctx} c */
  const update = (c) => {
    ctx = c;
    const s = c.state;
    empty.hidden = s.lines.length > 0;
    const items = s.lines.map((/** @type {any} */ line) => {
      let u = ui.get(line.name);
      if (!u) {
        u = { el: h("li", { class: "rule", "data-rule": line.name }), shown: "", form: false, message: null };
        ui.set(line.name, u);
      }
      const shown = JSON.stringify([line, s.timezone, u.form, u.message, words]);
      if (u.shown !== shown) {
        draw(u, line, s.timezone, c);
        u.shown = shown;
      }
      return u.el;
    });
    fill(list, ...items);
  };

  /**
   * @param {{ el: HTMLElement, shown: string, form: boolean, message: { text: string, error: boolean } | null }} u
   * @param {any} line @param {string} tz @param {import("./app.js").Ctx} c
   */
  const draw = (u, line, tz, c) => {
    /** @param {"POST"} method @param {string} path @param {unknown} body @param {(r: any) => string} ok */
    const act = async (method, path, body, ok) => {
      try {
        const r = await api(method, path, body);
        u.message = { text: ok(r), error: false };
        u.form = false;
      } catch (e) {
        u.message = { text: /** @type {Error} */ (e).message, error: true };
      }
      u.shown = "";
      c.refresh();
      update(c);
    };
    const name = seg(line.name);
    const p = line.paused;
    /** @type {(Node | null)[]} */
    const parts = [
      h("h2", {}, said(line.name), " ", h("span", { class: p ? "state state-paused" : "state state-active" }, t(p ? "console.rules.pausedBadge" : "console.rules.active"))),
      ...trigger(line, tz),
      h("p", { class: "meta" }, `${t("console.rules.to", { agent: line.to })} · ${t("console.rules.counts", { queued: line.queued, running: line.running })}`),
      p ? h("p", { class: "pause-info" }, t("console.rules.paused", { by: pausedBy(p.by), since: when(p.since) })) : null,
      // The budget's reason is data the hub writes the same on every machine (the protocol's Chinese): said in words here.
      p?.by === "budget" ? h("p", { class: "pause-info" }, t("console.rules.reason", { reason: t("console.rules.overBudget") }))
      : p?.by === "rate" ? h("p", { class: "pause-info" }, t("console.rules.reason", { reason: t("console.rules.tooFast") }))
      : p?.reason ? h("p", { class: "pause-info" }, t("console.rules.reason", { reason: "" }), said(p.reason)) : null,
      p?.until ? h("p", { class: "pause-info" }, t("console.rules.until", { until: when(p.until), zone })) : null,
      spending(line, tz),
    ];
    const runNow = h("button", { type: "button", onclick: () => act("POST", `/v1/rules/${name}/run`, {}, (r) => t("console.rules.ran", { run: r.run })) }, t("console.rules.runNow"));
    if (p) {
      // A paused rule runs nothing, not even "now" (the hub would queue it behind the pause): resume first.
      parts.push(h("div", { class: "actions" },
        h("button", { type: "button", onclick: () => act("POST", `/v1/rules/${name}/resume`, {}, () => t("console.rules.active")) }, t("console.rules.resume"))),
      h("p", { class: "hint" }, t("console.rules.resumeToRun")));
    } else if (u.form) {
      const reasonId = `pause-${line.name}-reason`;
      const untilId = `pause-${line.name}-until`;
      const reason = /** @type {HTMLInputElement} */ (h("input", { id: reasonId, type: "text", maxlength: 500 }));
      const until = /** @type {HTMLInputElement} */ (h("input", { id: untilId, type: "datetime-local" }));
      parts.push(h("form", { class: "pause-form", onsubmit: (/** @type {Event} */ e) => {
        e.preventDefault();
        /** @type {{ reason?: string, until?: string }} */
        const body = {};
        if (reason.value.trim()) body.reason = reason.value.trim();
        // The input is in the browser's zone; the hub takes an ISO time with its offset.
        if (until.value) body.until = new Date(until.value).toISOString();
        void act("POST", `/v1/rules/${name}/pause`, body, () => t("console.rules.paused", { by: t("console.card.you"), since: when(Date.now()) }));
      } },
        h("label", { for: reasonId }, t("console.rules.pauseReason")), reason,
        h("label", { for: untilId }, t("console.rules.pauseUntil")), until,
        h("div", { class: "row" },
          h("button", { type: "submit", class: "danger" }, t("console.rules.pauseNow")),
          h("button", { type: "button", class: "quiet", onclick: () => {
            u.form = false;
            u.shown = "";
            update(c);
          } }, t("console.rules.cancel")))));
      queueMicrotask(() => reason.focus());
    } else {
      parts.push(h("div", { class: "actions" },
        h("button", { type: "button", onclick: () => {
          u.form = true;
          u.message = null;
          update(c);
        } }, t("console.rules.pause")),
        runNow));
    }
    parts.push(h("p", { class: u.message?.error ? "message error" : "message", role: u.message?.error ? "alert" : "status" }, u.message?.text ?? ""));
    fill(u.el, ...parts);
  };

  update(ctx);
  return { el, update, title: t("console.nav.rules") };
}

/**
 * A rule's trigger: the events it takes, or its cron in words (when the library has words for it) with the expression
 * itself, and its next time in the rules' zone and, when the reader's differs, in theirs. A paused rule's cron times
 * are skipped: no next time then; times skipped lately are counted.
 * @param {any} line @param {string} tz
 * @returns {HTMLElement[]}
 */
function trigger(line, tz) {
  if (!line.cron) return [h("p", { class: "trigger" }, t("console.rules.onEvents", { source: line.source, types: line.types.join(", ") || "*" }))];
  const words = cronWords(line.cron, currentLang());
  const next = line.paused ? t("console.rules.nextPaused")
    : line.nextAt ? [t("console.rules.next", { at: when(line.nextAt, tz), zone: tz }), zone !== tz ? t("console.rules.yourTime", { at: when(line.nextAt), zone }) : null].filter(Boolean).join(" · ")
    : t("console.rules.noNext");
  return [
    h("p", { class: "trigger" },
      words ? h("strong", { class: "cron-words" }, t("console.rules.cronWords", { words, zone: tz })) : t("console.rules.onCron", { zone: tz }),
      " ", h("code", {}, line.cron)),
    h("p", { class: "meta next" }, next,
      line.skippedCount > 0 ? ` · ${t("console.rules.skipped", { n: line.skippedCount, at: when(line.skippedAt, tz) })}` : ""),
  ];
}

/**
 * What a rule spent, as a small table: today (the rules' zone) and in the last 7 days, runs that reported no usage
 * apart (one row when nothing ended in 7 days); and its budget with what the current period counted against it, in
 * words and as a meter.
 * @param {any} line @param {string} tz
 */
function spending(line, tz) {
  /** @param {string} label @param {...(Node | string)} value */
  const row = (label, ...value) => h("div", {}, h("dt", {}, label), h("dd", {}, ...value));
  const { today, week } = line.spending;
  const rows = week.rounds === 0
    ? [row(t("console.spending.week"), spendText(week))]
    : [row(t("console.spending.today"), spendText(today)), row(t("console.spending.week"), spendText(week))];
  const b = line.budget;
  if (b) {
    const kinds = [
      b.cost !== null ? { limit: money(b.cost), used: money(b.spentCost), share: b.spentCost / Math.max(b.cost, 1e-9) } : null,
      b.tokens !== null ? { limit: t("console.rules.budgetTokens", { n: num(b.tokens) }), used: t("console.rules.budgetTokens", { n: num(b.spentTokens) }), share: b.spentTokens / Math.max(b.tokens, 1e-9) } : null,
    ].filter((k) => k !== null);
    const share = Math.max(...kinds.map((k) => k.share));
    const text = t("console.rules.budgetLine", {
      budget: t(b.per === "day" ? "console.rules.budgetDay" : "console.rules.budgetWeek", { limit: kinds.map((k) => k.limit).join(" · ") }),
      used: t("console.rules.budgetUsed", { used: kinds.map((k) => k.used).join(" · "), percent: Math.floor(share * 100), end: when(b.periodEnd, tz) }),
    });
    rows.push(row(t("console.rules.budget"),
      h("meter", { min: 0, max: 1, low: 0.8, high: 0.99, optimum: 0, value: Math.min(share, 1), "aria-hidden": "true" }),
      h("span", { class: share >= 1 ? "warn" : null }, text)));
  }
  return h("dl", { class: "rule-spend" }, rows);
}
