// @ts-check
/**
 * The console's words: the hub's message catalog (`/console/catalog.json`, both languages), the language from the
 * reader's choice (kept in local storage, the only thing besides the theme kept there) or else the browser's, and
 * times in the browser's time zone.
 */

/** @typedef {"zh" | "en"} Lang */

/** @type {{ zh: Record<string, string>, en: Record<string, string> }} */
let catalog = { zh: {}, en: {} };
/** @type {Lang} */
let lang = "en";

/** The language the browser asks for first, of the two. @returns {Lang} */
function browserLang() {
  for (const l of navigator.languages ?? [navigator.language]) {
    if (/^zh\b/i.test(l)) return "zh";
    if (/^en\b/i.test(l)) return "en";
  }
  return "en";
}

/** Loads the catalog and picks the language. */
export async function loadCatalog() {
  const res = await fetch("/console/catalog.json", { credentials: "same-origin" });
  catalog = await res.json();
  const chosen = localStorage.getItem("aa.lang");
  lang = chosen === "zh" || chosen === "en" ? chosen : browserLang();
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
}

/** The language in use. @returns {Lang} */
export function currentLang() {
  return lang;
}

/** Changes the language and remembers the choice. @param {Lang} l */
export function setLang(l) {
  lang = l;
  localStorage.setItem("aa.lang", l);
  document.documentElement.lang = l === "zh" ? "zh-CN" : "en";
}

/**
 * A text of the catalog with `{name}` placeholders filled.
 * @param {string} id
 * @param {Record<string, string | number>} [params]
 */
export function t(id, params = {}) {
  const text = catalog[lang][id] ?? catalog.en[id] ?? id;
  return text.replace(/\{(\w+)\}/g, (m, k) => (k in params ? String(params[k]) : m));
}

/** The browser's time zone. */
export const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";

/**
 * A time in the browser's zone: `MM-DD HH:mm:ss` (the CLI's form), or `-`.
 * @param {string | number | null | undefined} at an ISO time or milliseconds
 * @param {string} [tz]
 */
export function when(at, tz = zone) {
  if (at === null || at === undefined) return "-";
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) return "-";
  const f = new Intl.DateTimeFormat("en-CA", { timeZone: tz, month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" });
  /** @type {Record<string, string>} */
  const p = {};
  for (const x of f.formatToParts(d)) p[x.type] = x.value;
  return `${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
}

/**
 * A number with the language's grouping.
 * @param {number} n
 */
export function num(n) {
  return new Intl.NumberFormat(lang === "zh" ? "zh-CN" : "en-US").format(n);
}
