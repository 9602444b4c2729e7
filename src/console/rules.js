// @ts-check
/**
 * Rules: each rule of rules.json with its trigger (events, or its cron and next time in the rules' zone), what it has
 * in hand, its pause (who, since, why, until); pause with a reason and an end, resume, and run it now — the CLI's
 * `pause`, `resume` and `run` calls.
 */
import { api, seg } from "./api.js";
import { fill, h, said } from "./dom.js";
import { t, when } from "./i18n.js";

/** @param {import("./app.js").Ctx} ctx @returns {import("./app.js").View} */
export function rulesView(ctx) {
  const list = h("ul", { class: "rules", id: "rules" });
  const empty = h("p", { class: "empty" }, t("console.rules.empty"));
  const el = h("section", { class: "view rules-view" }, h("h1", { tabindex: -1 }, t("console.nav.rules")), empty, list);
  /** Per rule: its element, what it shows, whether its pause form is open, its last message. */
  /** @type {Map<string, { el: HTMLElement, shown: string, form: boolean, message: { text: string, error: boolean } | null }>} */
  const ui = new Map();

  /** @param {import("./app.js").Ctx} c */
  const update = (c) => {
    const s = c.state;
    empty.hidden = s.lines.length > 0;
    const items = s.lines.map((/** @type {any} */ line) => {
      let u = ui.get(line.name);
      if (!u) {
        u = { el: h("li", { class: "rule", "data-rule": line.name }), shown: "", form: false, message: null };
        ui.set(line.name, u);
      }
      const shown = JSON.stringify([line, s.timezone, u.form, u.message]);
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
    const trigger = line.cron
      ? [t("console.rules.onCron", { cron: line.cron }), line.nextAt ? t("console.rules.next", { at: when(line.nextAt, tz), zone: tz }) : null].filter(Boolean).join(" · ")
      : t("console.rules.onEvents", { source: line.source, types: line.types.join(", ") || "*" });
    const p = line.paused;
    /** @type {(Node | null)[]} */
    const parts = [
      h("h2", {}, said(line.name), " ", h("span", { class: p ? "state state-paused" : "state state-active" }, t(p ? "console.rules.pausedBadge" : "console.rules.active"))),
      h("p", { class: "meta" }, `${trigger} · ${t("console.rules.to", { agent: line.to })} · ${t("console.rules.counts", { queued: line.queued, running: line.running })}`),
      p ? h("p", { class: "pause-info" }, t("console.rules.paused", { by: p.by, since: when(p.since) })) : null,
      p?.reason ? h("p", { class: "pause-info" }, t("console.rules.reason", { reason: "" }), said(p.reason)) : null,
      p?.until ? h("p", { class: "pause-info" }, t("console.rules.until", { until: when(p.until) })) : null,
    ];
    const runNow = h("button", { type: "button", onclick: () => act("POST", `/v1/rules/${name}/run`, {}, (r) => t("console.rules.ran", { run: r.run })) }, t("console.rules.runNow"));
    if (p) {
      parts.push(h("div", { class: "actions" },
        h("button", { type: "button", onclick: () => act("POST", `/v1/rules/${name}/resume`, {}, () => t("console.rules.active")) }, t("console.rules.resume")),
        runNow));
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
