// @ts-check
/**
 * A rule's cron expression in words, in the reader's language: cronstrue (a small, well-kept library with a Chinese
 * locale) as its npm package builds it, served by the hub as `/console/vendor/cronstrue.js` and loaded the first time
 * a view asks for it (the landing view never does). The words are cronstrue's; what the hub accepts is croner's cron,
 * so croner's own forms are first written the way cronstrue knows them (`?` in any field for `*`, `5#L` or `FRI#L`
 * for `5L`, the last Friday of the month). An expression cronstrue cannot word exactly gets no words (the page shows
 * the expression itself): croner's `+` before the weekday (the day of the month AND the weekday must match, where
 * cron's usual reading is either), a range of last weekdays, or anything cronstrue refuses.
 */

/** @type {Promise<void> | null} */
let loading = null;
/** @type {{ toString: (expr: string, options: object) => string } | null} */
let cronstrue = null;

/**
 * Loads cronstrue and its Chinese locale once; resolves when they are there (or failed to load: then there are no
 * words, and the expression stands alone).
 */
export function loadCronWords() {
  // Not literal specifiers: the files come from the hub (the type check does not look for them in this folder).
  /** @type {string[]} */
  const files = ["/console/vendor/cronstrue.js", "/console/vendor/cronstrue-zh_CN.js"];
  loading ??= (async () => {
    // The locale registers itself with the library it finds on globalThis: the library first.
    for (const f of files) await import(f);
    cronstrue = /** @type {any} */ (globalThis).cronstrue ?? null;
  })().catch(() => {
    loading = null;
  });
  return loading;
}

/** Croner's weekday names (its cron), for `FRI#L`. */
const weekdays = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

/**
 * The expression as cronstrue reads it, or null when cronstrue would word it other than croner runs it.
 * @param {string} expr a cron expression the hub accepted (croner's: 5 or 6 fields, or 7 with a year; or a nickname)
 * @returns {string | null}
 */
export function forCronstrue(expr) {
  const text = expr.trim();
  if (text.startsWith("@")) return text;
  const fields = text.split(/\s+/).map((f) => (f === "?" ? "*" : f));
  if (fields.length < 5) return null;
  // The weekday is the 5th field of 5, else the 6th (seconds first; a 7th is the year).
  const dow = fields.length === 5 ? 4 : 5;
  const d = /** @type {string} */ (fields[dow]);
  if (d.includes("+")) return null;
  const last = /^([0-7]|[A-Za-z]{3})#L$/i.exec(d);
  if (last) {
    const day = /** @type {string} */ (last[1]);
    const n = /^\d$/.test(day) ? Number(day) % 7 : weekdays.indexOf(day.toUpperCase());
    if (n < 0) return null;
    fields[dow] = `${n}L`;
  } else if (d.includes("#L")) {
    return null;
  }
  return fields.join(" ");
}

/**
 * A cron expression in words, in 24-hour times, or null when there are none (not loaded yet, or see `forCronstrue`).
 * @param {string} expr
 * @param {"zh" | "en"} lang
 * @returns {string | null}
 */
export function cronWords(expr, lang) {
  const readable = forCronstrue(expr);
  if (!cronstrue || readable === null) return null;
  try {
    return cronstrue.toString(readable, { locale: lang === "zh" ? "zh_CN" : "en", use24HourTimeFormat: true, throwExceptionOnParseError: true });
  } catch {
    return null;
  }
}
