// @ts-check
/**
 * What the views that look for things share (issue 30): their filter in the address (`#/view?a=1&b=2`), so a view
 * can be shared and reloaded, a day of a date input as a time, and a labelled select of a filter.
 */
import { h } from "./dom.js";
import { t } from "./i18n.js";

/** The parameters of the address's query (`#/view?a=1&b=2`). @returns {URLSearchParams} */
export function hashParams() {
  const i = location.hash.indexOf("?");
  return new URLSearchParams(i < 0 ? "" : location.hash.slice(i + 1));
}

/**
 * Puts a view's filter into the address without a new history entry per key typed: `view` and the non-empty values.
 * @param {string} view @param {Record<string, string>} values
 */
export function setHashParams(view, values) {
  const q = new URLSearchParams(Object.entries(values).filter(([, v]) => v !== ""));
  const hash = `#/${view}${q.size ? `?${q}` : ""}`;
  if (location.hash !== hash) history.replaceState(null, "", hash);
}

/** A day of a date input (`YYYY-MM-DD`, the browser's zone) as the ISO time of its start, or "" . @param {string} day @param {number} [add] days after */
export function dayStart(day, add = 0) {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return "";
  const d = new Date(`${day}T00:00:00`);
  d.setDate(d.getDate() + add);
  return Number.isNaN(d.getTime()) ? "" : d.toISOString();
}

/**
 * A select of a filter with its label, "any" first.
 * @param {string} id @param {string} label @param {[string, string][]} options value and text
 */
export function filterSelect(id, label, options) {
  const s = /** @type {HTMLSelectElement} */ (h("select", { id, name: id }, h("option", { value: "" }, t("console.filter.any")), options.map(([v, text]) => h("option", { value: v }, text))));
  return { s, el: h("label", { class: "filter" }, h("span", {}, label), s) };
}
