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
 * A run's state as the reader's language words it (`console.state.<state>`), or the state itself when the catalog
 * has no word for it (a newer hub's state).
 * @param {string} state
 */
export function stateWord(state) {
  const id = `console.state.${state}`;
  return catalog[lang][id] ?? catalog.en[id] ?? state;
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

/**
 * @typedef {string | number | { code: string, params: Record<string, unknown> }} WireParam
 * A parameter of a text the hub sent: plain, or a text of its own.
 */

/**
 * A text the hub sent as data (a refusal's `code` + `params`, a fact's text id and params; issue 27 #2) in the reader's
 * language, a parameter that is a text worded first. Null when this console cannot word it: a code its catalog does
 * not have (an older or newer hub), a parameter of another shape, or a placeholder without its value.
 * @param {unknown} code
 * @param {unknown} params
 * @returns {string | null}
 */
export function wordsOf(code, params) {
  if (typeof code !== "string" || !Object.hasOwn(catalog[lang], code)) return null;
  const given = params ?? {};
  if (typeof given !== "object" || Array.isArray(given)) return null;
  /** @type {Record<string, string | number>} */
  const values = {};
  for (const [k, v] of Object.entries(given)) {
    if (typeof v === "string" || typeof v === "number") values[k] = v;
    else if (typeof v === "object" && v !== null) {
      const inner = v.code === "time.at" ? timeWords(v.params?.at) : wordsOf(v.code, v.params);
      if (inner === null) return null;
      values[k] = inner;
    } else return null;
  }
  const text = catalog[lang][code];
  for (const m of text.matchAll(/\{(\w+)\}/g)) if (!Object.hasOwn(values, m[1])) return null;
  return t(code, values);
}

/**
 * A time the hub sent as a text (`time.at`, issue 30: a budget card's period end) in the browser's zone and the
 * reader's language ("Sat, Dec 5, 2026, 08:00 (Asia/Shanghai time)"), or null for a time it cannot read.
 * @param {unknown} at an ISO 8601 time
 * @returns {string | null}
 */
export function timeWords(at) {
  const ms = typeof at === "string" ? Date.parse(at) : NaN;
  if (!Number.isFinite(ms)) return null;
  const f = new Intl.DateTimeFormat(lang === "zh" ? "zh-CN" : "en-US", {
    timeZone: zone, weekday: "short", year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", hourCycle: "h23",
  });
  return t("time.at", { time: f.format(ms), zone });
}

/**
 * What the console shows of a text the hub sent: its words in the reader's language (`wordsOf`), else the hub's own.
 * @param {{ code?: unknown, params?: unknown }} text
 * @param {string} fallback
 */
export function shown(text, fallback) {
  return wordsOf(text.code, text.params) ?? fallback;
}

/**
 * An amount of US dollars in the catalog's one form (`USD 1.44`, `1.44 美元`): totals with cents, a run's own cost
 * with 4 decimals (a run often costs less than a cent).
 * @param {number} usd
 * @param {number} [digits]
 */
export function money(usd, digits = 2) {
  return t("console.spending.cost", { cost: usd.toFixed(digits) });
}

/** The browser's time zone. */
export const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";

/**
 * The formats of `when` by time zone, made once each: a format is costly to make and a view shows hundreds of times
 * (issue 30: the first load at size made one per card).
 * @type {Map<string, Intl.DateTimeFormat>}
 */
const clockFormats = new Map();

/**
 * A time in the browser's zone: `MM-DD HH:mm:ss` (the CLI's form), or `-`.
 * @param {string | number | null | undefined} at an ISO time or milliseconds
 * @param {string} [tz]
 */
export function when(at, tz = zone) {
  if (at === null || at === undefined) return "-";
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) return "-";
  let f = clockFormats.get(tz);
  if (!f) clockFormats.set(tz, (f = new Intl.DateTimeFormat("en-CA", { timeZone: tz, month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" })));
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
  const locale = lang === "zh" ? "zh-CN" : "en-US";
  let f = numberFormats.get(locale);
  if (!f) numberFormats.set(locale, (f = new Intl.NumberFormat(locale)));
  return f.format(n);
}

/** The formats of `num` by locale, made once each. @type {Map<string, Intl.NumberFormat>} */
const numberFormats = new Map();

/**
 * What runs that ended in a window used, in words: cost, tokens and runs, and apart the runs that reported no usage. A
 * kind no run reported is said to be missing, never shown as 0.
 * @param {{ rounds: number, tokens: number, cost: number, missingTokens: number, missingCost: number }} sp a `Spending` of the state
 */
export function spendText(sp) {
  if (sp.rounds === 0) return t("console.spend.none");
  const parts = [
    sp.missingCost < sp.rounds ? money(sp.cost) : t("console.spend.noCost"),
    sp.missingTokens < sp.rounds ? t("console.spending.tokens", { n: num(sp.tokens) }) : t("console.spend.noTokens"),
    t("console.spend.runs", { n: num(sp.rounds) }),
  ];
  const text = parts.join(" · ");
  if (sp.missingCost === 0 && sp.missingTokens === 0) return text;
  const apart = sp.missingCost === sp.missingTokens
    ? t("console.spend.missing", { n: num(sp.missingCost) })
    : t("console.spend.missingEach", { cost: num(sp.missingCost), tokens: num(sp.missingTokens) });
  // The Chinese brackets are full width and need no space before them.
  return `${text}${apart.startsWith("（") ? "" : " "}${apart}`;
}
