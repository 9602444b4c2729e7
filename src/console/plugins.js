// @ts-check
/**
 * The plugins (issues 17 and 18). `#/plugins`: every plugin of every kind from `GET /v1/plugins` — kind, status, where
 * it was found, and every error (file, JSON pointer, reason) — with a reload button (`POST /v1/plugins/reload`, whose
 * answer is shown), and the tools of the tool plugins (`GET /v1/tools`). While the view is open it reads the list
 * again every `pluginsReadMs` (plugins are files, not facts: the stream does not tell of them), so a reload from the
 * CLI or the hub's file watcher shows without reloading the page. `#/plugins/<id>`: a declarative plugin's panels
 * (ui.js), its settings centre under `plugin:<id>` (secrets masked, never filled in or echoed) and its card templates.
 */
import { api, seg } from "./api.js";
import { fill, h, said, visible } from "./dom.js";
import { t } from "./i18n.js";
import { uiBlock } from "./ui.js";

/** How often an open plugins view reads its plugins again (ms). */
const pluginsReadMs = 3000;

/**
 * An error of a plugin as its parts: a declarative plugin's errors read `<file>#<pointer>: <reason>` (the pointer is
 * left out for a whole file); the file is shown relative to the plugin's folder. Other text is all reason.
 * @param {string} error @param {string} dir @returns {{ file: string, pointer: string, reason: string }}
 */
export function errorParts(error, dir) {
  const m = /^(\/[^#]*?)(?:#(\/[^:]*))?: ([\s\S]*)$/.exec(error);
  if (!m) return { file: "", pointer: "", reason: error };
  const file = m[1] ?? "";
  return { file: file.startsWith(`${dir}/`) ? file.slice(dir.length + 1) : file, pointer: m[2] ?? "", reason: m[3] ?? "" };
}

/** The errors of a plugin as a list. @param {string[]} errors @param {string} dir */
function errorList(errors, dir) {
  return h("ol", { class: "plugin-errors" }, errors.map((e) => {
    const p = errorParts(e, dir);
    // Spaces between the parts: a line may break there (not inside the reason's first word).
    return h("li", {},
      p.file ? [h("code", { class: "err-file" }, visible(p.file)), " "] : null,
      p.pointer ? [h("code", { class: "err-pointer" }, visible(p.pointer)), " "] : null,
      said(p.reason, "span", { class: "err-reason" }));
  }));
}

/** One plugin of the list. @param {any} p */
function pluginItem(p) {
  const m = p.manifest ?? {};
  const id = String(m.id);
  const rejected = p.status === "rejected";
  const openable = p.kind === "declarative" && (!rejected || m.apiVersion !== undefined);
  return h("li", { class: rejected ? "part plugin rejected" : "part plugin", "data-plugin": id, "data-kind": p.kind },
    h("h3", {},
      openable && !rejected ? h("a", { href: `#/plugins/${encodeURIComponent(id)}` }, said(m.name ?? id)) : said(m.name ?? id),
      " ", h("span", { class: "badge" }, t(`console.plugins.kind.${p.kind}`)),
      " ", h("span", { class: rejected ? "state state-cancelled" : "state state-active" }, t(`console.plugins.status.${p.status}`))),
    h("p", { class: "meta" }, [
      m.name && m.name !== id ? id : null,
      m.version ? `v${visible(String(m.version))}` : null,
      t(`console.plugins.origin.${p.origin}`),
    ].filter(Boolean).join(" · "), " · ", h("code", {}, visible(p.dir))),
    m.description ? said(String(m.description), "p", { class: "meta" }) : null,
    rejected ? h("p", { class: "warn" }, t("console.plugins.errors", { n: p.errors.length })) : null,
    p.errors.length ? errorList(p.errors, p.dir) : null);
}

/** @param {import("./app.js").Ctx} ctx @returns {import("./app.js").View} */
export function pluginsView(ctx) {
  const list = h("ul", { class: "parts", id: "plugin-list", "aria-busy": "true" }, h("li", { class: "empty" }, t("console.loading")));
  const tools = h("div", { class: "plugins", id: "plugins", "aria-busy": "true" }, h("p", { class: "empty" }, t("console.loading")));
  const report = h("div", { id: "reload-report", role: "status" });
  const reload = h("button", { type: "button", class: "quiet", id: "reload", onclick: async () => {
    reload.setAttribute("disabled", "");
    try {
      const r = await api("POST", "/v1/plugins/reload");
      const parts = ["loaded", "replaced", "unloaded"].filter((k) => r[k].length).map((k) => t(`console.plugins.reload.${k}`, { ids: r[k].join(", ") }));
      fill(report,
        h("p", {}, parts.length || r.rejected.length ? parts.join(" · ") : t("console.plugins.reload.nothing")),
        r.rejected.map((/** @type {any} */ x) => h("p", { class: "warn" }, t("console.plugins.reload.rejected", { id: x.id, n: x.errors.length }))));
      ctx.announce(t("console.plugins.reloaded"));
      await read();
    } catch (e) {
      fill(report, h("p", { class: "error", role: "alert" }, t("console.failed", { error: /** @type {Error} */ (e).message })));
    } finally {
      reload.removeAttribute("disabled");
    }
  } }, t("console.plugins.reload"));
  const el = h("section", { class: "view plugins-view" },
    h("div", { class: "view-head" }, h("h1", { tabindex: -1 }, t("console.nav.plugins")), reload),
    report, list,
    h("h2", {}, t("console.plugins.tools")), tools);
  let last = "";
  const read = async () => {
    try {
      const plugins = await api("GET", "/v1/plugins");
      const text = JSON.stringify(plugins);
      // The same list again changes nothing on the page (focus and reading place stay).
      if (text !== last) {
        last = text;
        fill(list, plugins.length ? plugins.map(pluginItem) : h("li", { class: "empty" }, t("console.plugins.noPlugins")));
      }
    } catch (e) {
      last = "";
      fill(list, h("li", { class: "error", role: "alert" }, t("console.failed", { error: /** @type {Error} */ (e).message })));
    }
    list.removeAttribute("aria-busy");
  };
  void read();
  const timer = setInterval(read, pluginsReadMs);
  void api("GET", "/v1/tools").then((/** @type {any[]} */ all) => {
    /** @type {Map<string, any[]>} */
    const byPlugin = new Map();
    for (const tool of all) byPlugin.set(tool.pluginId, [...(byPlugin.get(tool.pluginId) ?? []), tool]);
    fill(tools, byPlugin.size === 0 ? h("p", { class: "empty" }, t("console.plugins.none")) : [...byPlugin].map(([plugin, ts]) => h("article", { class: "part" },
      h("h3", {}, said(plugin), " ", h("span", { class: "state" }, ts[0].kind)),
      h("ul", { class: "tools-list" }, ts.map((tool) => h("li", {},
        h("code", {}, said(tool.name)), " ",
        h("span", { class: tool.approval === "auto" ? "state state-active" : "state state-paused" }, t("console.plugins.approval", { mode: t(`console.plugins.approvalMode.${tool.approval}`) })),
        tool.disableModelInvocation ? h("span", { class: "meta" }, ` ${t("console.plugins.hidden")}`) : null,
        tool.description ? said(tool.description, "p", { class: "meta" }) : null))))));
  }, (e) => {
    fill(tools, h("p", { class: "error", role: "alert" }, t("console.failed", { error: /** @type {Error} */ (e).message })));
  }).finally(() => tools.removeAttribute("aria-busy"));
  return { el, update: () => {}, title: t("console.nav.plugins"), dispose: () => clearInterval(timer) };
}

// ── the settings centre ──────────────────────────────────────────────────────────────────────────────────────────
/**
 * One setting's form: its label, description, what changing it does (`hot`: at once; `reload`: at the next reload),
 * its value — for a secret only whether one is set: the field is always empty and the value never comes back.
 * @param {string} plugin @param {any} s @returns {HTMLElement}
 */
function settingItem(plugin, s) {
  const id = `setting-${s.key}`;
  const message = h("p", { class: "message", role: "status" });
  /** @type {any} */
  let input;
  if (s.type === "secret") {
    input = h("input", { id, type: "password", autocomplete: "new-password", spellcheck: "false", placeholder: s.set ? t("console.settings.secretSet") : t("console.settings.unset") });
  } else if (s.type === "boolean" || s.type === "select") {
    const options = s.type === "boolean" ? ["true", "false"] : s.options ?? [];
    const current = s.value ?? s.default;
    input = h("select", { id }, current === null || current === undefined ? h("option", { value: "" }, "—") : null,
      options.map((/** @type {string} */ o) => h("option", { value: o, selected: String(current) === o }, visible(o))));
  } else {
    input = h("input", { id, type: s.type === "number" ? "number" : "text", step: s.type === "number" ? "any" : null, value: s.value === null ? null : String(s.value), placeholder: s.value === null && s.default !== null ? String(s.default) : null });
  }
  const state = s.type === "secret"
    ? h("span", { class: s.set ? "state state-active" : "state state-paused" }, t(s.set ? "console.settings.set" : "console.settings.unset"))
    : null;
  /** @param {string | null} value */
  const save = async (value) => {
    message.className = "message";
    message.textContent = t("console.ui.sending");
    try {
      const r = await api("POST", `/v1/plugins/${seg(plugin)}/settings/${seg(s.key)}`, { value });
      const next = settingItem(plugin, r.setting);
      item.replaceWith(next);
      const m = /** @type {HTMLElement} */ (next.querySelector(".message"));
      m.textContent = t(r.setting.effect === "hot" ? "console.settings.savedHot" : "console.settings.savedReload");
      /** @type {HTMLElement | null} */ (next.querySelector("input, select"))?.focus();
    } catch (e) {
      message.className = "message error";
      message.textContent = t("console.failed", { error: /** @type {Error} */ (e).message });
    }
  };
  const item = h("li", { class: "part setting", "data-key": s.key },
    h("form", { onsubmit: (/** @type {Event} */ e) => {
      e.preventDefault();
      const v = input.value;
      if (s.type === "secret" && v === "") return;
      void save(v === "" ? null : v);
    } },
    h("label", { for: id }, said(s.label), " ", h("code", {}, visible(s.key))),
    s.description ? said(s.description, "p", { class: "meta" }) : null,
    h("div", { class: "row" }, input,
      h("button", { type: "submit" }, t("console.settings.save")),
      s.set ? h("button", { type: "button", class: "quiet", onclick: () => save(null) }, t("console.settings.remove")) : null),
    h("p", { class: "meta" }, state, state ? " " : null, t(s.effect === "hot" ? "console.settings.hot" : "console.settings.reload")),
    message));
  return item;
}

/** A declarative plugin's own view. @param {string} id @param {import("./app.js").Ctx} ctx @returns {import("./app.js").View} */
export function pluginView(id, ctx) {
  const heading = h("h1", { tabindex: -1 }, said(id));
  const panels = h("div", { class: "panels", id: "panels", "aria-busy": "true" }, h("p", { class: "empty" }, t("console.loading")));
  const settings = h("ul", { class: "parts settings", id: "settings", "aria-busy": "true" });
  const cards = h("div", { class: "card-templates", id: "card-templates" });
  const settingsHead = h("h2", { id: "settings-title" }, t("console.settings.title", { group: `plugin:${id}` }));
  const cardsHead = h("h2", {}, t("console.ui.cards"));
  const el = h("section", { class: "view plugin-view" },
    h("p", { class: "meta" }, h("a", { href: "#/plugins" }, t("console.plugins.back"))),
    heading, panels, settingsHead, settings, cardsHead, cards);
  let last = "";
  const read = async () => {
    try {
      const ui = await api("GET", `/v1/plugins/${seg(id)}/ui`);
      const text = JSON.stringify(ui);
      if (text === last) return;
      last = text;
      fill(heading, said(ui.name), " ", h("span", { class: "badge" }, `plugin:${visible(id)}`));
      ctx.announce(ui.name);
      fill(panels, ui.panels.length ? ui.panels.map((/** @type {any} */ p) => uiBlock({ plugin: id, kind: "panel", name: p.id, level: 2 }, p.title, p.body, `panel-${p.id}`)) : h("p", { class: "empty" }, t("console.ui.noPanels")));
      fill(cards, ui.cards.length ? ui.cards.map((/** @type {any} */ c) => uiBlock({ plugin: id, kind: "card", name: c.name, level: 3 }, c.title ?? c.name, c.data, `card-template-${c.name}`)) : h("p", { class: "empty" }, t("console.ui.noCards")));
      cardsHead.hidden = ui.cards.length === 0;
    } catch (e) {
      last = "";
      fill(panels, h("p", { class: "error", role: "alert" }, t("console.failed", { error: /** @type {Error} */ (e).message })));
    } finally {
      panels.removeAttribute("aria-busy");
    }
  };
  void read();
  const timer = setInterval(read, pluginsReadMs);
  void api("GET", `/v1/plugins/${seg(id)}/settings`).then((r) => {
    fill(settings, r.settings.length ? r.settings.map((/** @type {any} */ s) => settingItem(id, s)) : h("li", { class: "empty" }, t("console.settings.none")));
  }, (e) => {
    fill(settings, h("li", { class: "error", role: "alert" }, t("console.failed", { error: /** @type {Error} */ (e).message })));
  }).finally(() => settings.removeAttribute("aria-busy"));
  return { el, update: () => {}, title: id, dispose: () => clearInterval(timer) };
}
