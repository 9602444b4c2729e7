// @ts-check
/**
 * The owner console (issue 17): signs in with the link's token, then shows the views of `/v1/state`, kept live by
 * `/v1/stream` (server-sent events; the browser resumes with Last-Event-ID). The console has no power of its own:
 * every change is the same `/v1` call the CLI makes. Views: #/needs (landing), #/needs/<card>, #/runs, #/runs/<id>, #/events, #/search,
 * #/rules, #/workers, #/spending, #/plugins, #/plugins/<id>; a view that filters keeps its filter after `?`
 * (`#/search?q=SHOP-4120&group=failed`).
 */
import { cardsPage, first, firstStatePath, pageSecret } from "./boot.js";
import { answerOf, api, onSignedOut } from "./api.js";
import { fill, h } from "./dom.js";
import { currentLang, loadCatalog, setLang, t } from "./i18n.js";
import { needsView } from "./needs.js";

/**
 * What a view gets: the latest state, a way to ask for a fresh one, to say something in the live region, and to have
 * the state list more open cards (the next `cardsPage`).
 * @typedef {{ state: any, refresh: () => void, announce: (text: string) => void, moreCards: () => void }} Ctx
 * @typedef {{ el: HTMLElement, update: (ctx: Ctx) => void, title: string, dispose?: () => void }} View
 */

const app = /** @type {HTMLElement} */ (document.getElementById("app"));
/** @type {any} */
let state = null;
/** @type {View | null} */
let view = null;
let viewKey = "";
/** @type {EventSource | null} */
let stream = null;
/** @type {ReturnType<typeof setTimeout> | null} */
let refreshTimer = null;
let refreshing = false;
let refreshAgain = false;
let signedIn = false;
/**
 * The open cards the state lists, newest first (issue 30: with 1,000 open cards the first load reads and draws only
 * `cardsPage`, boot.js); "Show more" in Needs you raises it by a page.
 */
let cardsWanted = cardsPage;
/** The state as the views read it: the newest `cardsWanted` open cards, the newest page of runs. */
const statePath = () => `/v1/state?cards=${cardsWanted}`;

/** Lists a page more of the open cards. */
function moreCards() {
  cardsWanted += cardsPage;
  void refresh();
}

const routes = [
  ["needs", "console.nav.needs"],
  ["runs", "console.nav.runs"],
  ["events", "console.nav.events"],
  ["search", "console.nav.search"],
  ["rules", "console.nav.rules"],
  ["workers", "console.nav.workers"],
  ["spending", "console.nav.spending"],
  ["plugins", "console.nav.plugins"],
];

const systemDark = matchMedia("(prefers-color-scheme: dark)");

/** The theme: the reader's choice, else the system's. */
function applyTheme() {
  const theme = localStorage.getItem("aa.theme");
  document.documentElement.dataset.theme = theme === "light" || theme === "dark" ? theme : systemDark.matches ? "dark" : "light";
}

/**
 * What became of the sign-in link's exchange for the session cookie (boot.js made it as the page began): null when it
 * went through or there was no link, else the reason in the reader's words.
 */
async function signInFromLink() {
  try {
    const res = await first.session;
    if (res) await answerOf(res, "/console/session");
    return null;
  } catch (e) {
    return /** @type {Error} */ (e).message;
  }
}

/** The page shown without a session: how to get one. @param {string | null} problem */
function showSignedOut(problem) {
  const was = signedIn;
  signedIn = false;
  stream?.close();
  stream = null;
  leading = false;
  releaseLock?.();
  releaseLock = null;
  if (was) tabs.postMessage({ kind: "signedOut" });
  view?.dispose?.();
  view = null;
  viewKey = "";
  const command = h("code", {}, "agent-autoloop console");
  const [before, after] = t("console.signedOut.how", { command: "\u0000" }).split("\u0000");
  fill(app, h("main", { id: "main", class: "signed-out" },
    h("h1", {}, t("console.signedOut")),
    problem ? h("p", { class: "error", role: "alert" }, t("console.signInFailed", { error: problem })) : null,
    h("p", {}, before, command, after),
  ));
  document.title = t("console.title");
  app.removeAttribute("aria-busy");
}

/** The header, navigation and the main region, once signed in. */
function shell() {
  const nav = h("nav", { "aria-label": t("console.nav") },
    h("ul", {}, routes.map(([key, id]) => h("li", {}, h("a", { href: `#/${key}`, "data-route": key }, t(id))))));
  const langSelect = h("select", { id: "lang", onchange: (/** @type {Event} */ e) => {
    setLang(/** @type {any} */ (e.target).value);
    rebuild();
  } }, h("option", { value: "zh" }, "中文"), h("option", { value: "en" }, "English"));
  /** @type {HTMLSelectElement} */ (langSelect).value = currentLang();
  const themeSelect = h("select", { id: "theme", onchange: (/** @type {Event} */ e) => {
    const v = /** @type {any} */ (e.target).value;
    if (v === "auto") localStorage.removeItem("aa.theme");
    else localStorage.setItem("aa.theme", v);
    applyTheme();
  } }, ["auto", "light", "dark"].map((v) => h("option", { value: v }, t(`console.theme.${v}`))));
  /** @type {HTMLSelectElement} */ (themeSelect).value = localStorage.getItem("aa.theme") ?? "auto";
  const signOut = h("button", { type: "button", class: "quiet", onclick: async () => {
    try {
      await api("POST", "/console/sign-out");
    } finally {
      pageSecret.clear();
      showSignedOut(null);
    }
  } }, t("console.signOut"));
  fill(app,
    h("a", { class: "skip", href: "#main", onclick: (/** @type {Event} */ e) => {
      e.preventDefault();
      document.getElementById("main")?.focus();
    } }, t("console.skip")),
    h("header", { class: "top" },
      h("div", { class: "brand" }, h("img", { src: "/console/icon.svg", alt: "", width: 24, height: 24 }), h("span", {}, "agent-autoloop")),
      nav,
      h("div", { class: "tools" },
        h("span", { id: "live", class: "live", role: "status" }),
        h("label", { class: "tool" }, h("span", { class: "sr" }, t("console.lang")), langSelect),
        h("label", { class: "tool" }, h("span", { class: "sr" }, t("console.theme")), themeSelect),
        signOut)),
    h("main", { id: "main", tabindex: -1 }),
    h("div", { id: "announce", class: "sr", role: "status", "aria-live": "polite" }));
  app.removeAttribute("aria-busy");
}

/** Says something to screen readers (and tests) once. @param {string} text */
function announce(text) {
  const el = document.getElementById("announce");
  if (el) el.textContent = text;
}

/** Marks the live region: connected or reconnecting. @param {boolean} ok */
function live(ok) {
  const el = document.getElementById("live");
  if (!el) return;
  el.textContent = ok ? t("console.live") : t("console.reconnecting");
  el.className = ok ? "live on" : "live off";
}

/** The route of the address: its view's key and argument (a filter after `?` is the view's own). */
function route() {
  const m = /^#\/(\w+)(?:\/([A-Za-z0-9_-]+))?(?:\?.*)?$/.exec(location.hash);
  const key = m && routes.some(([k]) => k === m[1]) ? m[1] : "needs";
  return { key, arg: m?.[2] ?? null };
}

/**
 * The modules of the views but Needs you (the landing view, loaded with the page), by route: each is fetched when its
 * view is first shown, and all of them 5 s after the first view is drawn, when the browser is idle (issue 30: the
 * first load fetches, compiles and runs only what Needs you needs — 10 of the console's 21 modules).
 * @type {Record<string, () => Promise<any>>}
 */
const viewLoaders = {
  runs: () => import("./runs.js"),
  events: () => import("./events.js"),
  search: () => import("./search.js"),
  rules: () => import("./rules.js"),
  workers: () => import("./more.js"),
  spending: () => import("./more.js"),
  plugins: () => import("./plugins.js"),
};
/** The views' modules loaded so far, by route. @type {Map<string, any>} */
const viewModules = new Map([["needs", { needsView }]]);
/** The loads under way, by route. @type {Map<string, Promise<void>>} */
const viewLoads = new Map();

/** Loads the module of route `key` once, and shows its view when the address still names it. @param {string} key */
function loadView(key) {
  let load = viewLoads.get(key);
  if (!load) {
    load = viewLoaders[key]().then((m) => {
      viewModules.set(key, m);
      if (route().key === key) render();
    }, (e) => {
      // The hub did not answer: the next render tries again.
      viewLoads.delete(key);
      announce(t("console.failed", { error: /** @type {Error} */ (e).message }));
    });
    viewLoads.set(key, load);
  }
  return load;
}

/** Shows the view the address names (made anew when the route changes, updated in place otherwise). */
function render() {
  if (!signedIn || !state) return;
  const { key, arg } = route();
  const wanted = `${key}/${arg ?? ""}`;
  const main = /** @type {HTMLElement} */ (document.getElementById("main"));
  const ctx = { state, refresh, announce, moreCards };
  if (wanted !== viewKey || !view) {
    const m = viewModules.get(key);
    // Its module not loaded yet: the view shown stays until it comes (loadView renders then).
    if (!m) return void loadView(key);
    view?.dispose?.();
    /** @type {View} */
    const made = key === "runs" && arg && /^\d+$/.test(arg) ? m.runView(Number(arg), ctx)
      : key === "runs" ? m.runsView(ctx)
      : key === "events" ? m.eventsView(ctx)
      : key === "search" ? m.searchView(ctx)
      : key === "rules" ? m.rulesView(ctx)
      : key === "workers" ? m.workersView(ctx)
      : key === "spending" ? m.spendingView(ctx)
      : key === "plugins" && arg ? m.pluginView(arg, ctx)
      : key === "plugins" ? m.pluginsView(ctx)
      : key === "needs" && arg && /^\d+$/.test(arg) ? m.needsView(ctx, Number(arg))
      : m.needsView(ctx);
    view = made;
    const moved = viewKey !== "";
    viewKey = wanted;
    fill(main, made.el);
    // The view drawn, by route and argument: what a reader of the page (and its tests) can wait for.
    main.dataset.view = wanted;
    for (const a of document.querySelectorAll("nav a")) {
      if (/** @type {HTMLElement} */ (a).dataset.route === key) a.setAttribute("aria-current", "page");
      else a.removeAttribute("aria-current");
    }
    // Moving between views puts the focus on the new view's heading (keyboard and screen-reader users land there).
    if (moved) /** @type {HTMLElement | null} */ (main.querySelector("h1"))?.focus();
    document.title = `${made.title} · ${t("console.title")}`;
  } else {
    view.update(ctx);
    document.title = `${view.title} · ${t("console.title")}`;
  }
}

/** Builds the page again (after a change of language). */
function rebuild() {
  viewKey = "";
  view?.dispose?.();
  view = null;
  shell();
  live(streamOk);
  render();
}

/** Reads `/v1/state` again; calls that come while one is under way make one more after it. */
async function refresh() {
  if (refreshing) {
    refreshAgain = true;
    return;
  }
  refreshing = true;
  try {
    do {
      refreshAgain = false;
      state = await api("GET", statePath());
      render();
    } while (refreshAgain);
  } catch (e) {
    if (signedIn) announce(t("console.failed", { error: /** @type {Error} */ (e).message }));
  } finally {
    refreshing = false;
  }
}

/** Reads the state again soon: one read per 100 ms at most, however many facts come. */
function soon() {
  refreshTimer ??= setTimeout(() => {
    refreshTimer = null;
    void refresh();
  }, 100);
}

/**
 * The tabs of one browser share one stream: a browser opens at most 6 connections to a host, and a stream holds one
 * for good, so every tab holding its own would leave the seventh tab unable to load anything. The tab that holds
 * the lock `aa-console-stream` (Web Locks) follows the stream and tells the others on a BroadcastChannel; when it
 * closes, another tab takes the lock over.
 */
const tabs = new BroadcastChannel("aa-console");
/** Whether this tab holds the stream, and how to let the lock go. */
let leading = false;
/** @type {(() => void) | null} */
let releaseLock = null;
/** The stream's state as this tab last knew it (told by the tab that holds it). */
let streamOk = false;

/** Marks the live region and, leading, tells the other tabs. @param {boolean} ok */
function setLive(ok) {
  streamOk = ok;
  live(ok);
  if (leading) tabs.postMessage({ kind: "live", ok });
}

tabs.addEventListener("message", (e) => {
  const m = e.data ?? {};
  if (m.kind === "facts") soon();
  else if (m.kind === "live") {
    streamOk = m.ok === true;
    live(streamOk);
  } else if (m.kind === "hello" && leading) tabs.postMessage({ kind: "live", ok: streamOk });
  else if (m.kind === "signedOut" && signedIn) void refresh();
});

/** Follows the fact log from the state's sequence number (the browser resumes with Last-Event-ID). */
function openStream() {
  stream = new EventSource(`/v1/stream?after=${state.seq}`);
  stream.addEventListener("open", () => setLive(true));
  stream.addEventListener("fact", () => {
    soon();
    tabs.postMessage({ kind: "facts" });
  });
  stream.addEventListener("error", () => {
    setLive(false);
    // A closed stream is not retried by the browser (a refusal): the session may be gone; the state read says.
    if (stream?.readyState === EventSource.CLOSED) {
      stream = null;
      setTimeout(async () => {
        await refresh();
        if (signedIn && !stream) openStream();
      }, 2000);
    }
  });
}

/** Takes part in the stream: holds it when this tab gets the lock, else hears it from the tab that does. */
function follow() {
  if (!("locks" in navigator)) {
    leading = true;
    openStream();
    return;
  }
  tabs.postMessage({ kind: "hello" });
  void navigator.locks.request("aa-console-stream", () => new Promise((release) => {
    if (!signedIn) return release(undefined);
    leading = true;
    releaseLock = () => release(undefined);
    // The stream goes on from the state this tab read last (its `seq`): what happened while another tab held the
    // stream came here as that tab's word (a read each time), so no read is needed first (issue 30: the first load
    // read the whole state twice).
    openStream();
  }));
}

/**
 * A sign-in link pasted into a tab that shows the console changes only the fragment, which loads nothing: start over,
 * so the link is taken (and leaves the address bar) in this same tab (issue 30).
 */
function takePastedSignIn() {
  if (/^#sign-in=/.test(location.hash)) location.reload();
}

async function start() {
  addEventListener("hashchange", takePastedSignIn);
  applyTheme();
  systemDark.addEventListener("change", applyTheme);
  await loadCatalog();
  const problem = await signInFromLink();
  onSignedOut(() => showSignedOut(null));
  // The first read is the one boot.js made as the page began (the same path); a retry asks again.
  let read = () => first.state.then((res) => answerOf(res, firstStatePath));
  for (;;) {
    try {
      state = await read();
      break;
    } catch (e) {
      if (/** @type {any} */ (e).status === 401) {
        showSignedOut(problem);
        return;
      }
      // The hub did not answer (busy, restarting, out of reach): that is no sign-out. Say so and ask again.
      fill(app, h("main", { id: "main" }, h("h1", {}, t("console.title")),
        h("p", { class: "error", role: "alert" }, t("console.failed", { error: /** @type {Error} */ (e).message }))));
      app.removeAttribute("aria-busy");
      await new Promise((r) => setTimeout(r, 3000));
      read = () => api("GET", statePath());
    }
  }
  signedIn = true;
  shell();
  render();
  follow();
  addEventListener("hashchange", render);
  // The other views' modules, 5 s after the first view is drawn and once the browser has nothing else to do:
  // compiling them while it is drawn held up the first click (1 s after was still too soon on a busy machine).
  setTimeout(() => ("requestIdleCallback" in window ? requestIdleCallback : setTimeout)(() => Object.keys(viewLoaders).forEach(loadView)), 5000);
}

void start();
