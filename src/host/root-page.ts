/**
 * The page a browser gets at the hub's root `/`: what this is and where to look. The hub speaks JSON under `/v1` to
 * programs that hold a key; a person who opens its address finds this short page instead of a JSON 404. It names
 * nothing of the home (no path, no key) and has no script, no form and no link out; it points to the owner console
 * (`/console/`, signed in with the link `agent-autoloop console` prints).
 */
import { t, type Lang } from "../i18n/messages.js";
import { page } from "./link-page.js";
import { esc } from "./html.js";

/** Headers of the root page: no script, nothing loaded from elsewhere, no form. */
export const rootPageHeaders = { "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'" };

/** The root page's HTML in `lang`. */
export function rootPage(lang: Lang): string {
  const code = (s: string) => `<code>${esc(s)}</code>`;
  return page(lang, t(lang, "root.title"), [
    `<h1>agent-autoloop</h1>`,
    `<p>${esc(t(lang, "root.what"))}</p>`,
    "<ul>",
    `<li>${esc(t(lang, "root.status", { command: "\u0000" })).replace("\u0000", code("agent-autoloop status"))}</li>`,
    `<li>${esc(t(lang, "root.console", { path: "\u0000", command: "\u0001" })).replace("\u0000", `<a href="/console/">/console/</a>`).replace("\u0001", code("agent-autoloop console"))}</li>`,
    `<li>${esc(t(lang, "root.readme"))}</li>`,
    `<li>${esc(t(lang, "root.health", { path: "\u0000" })).replace("\u0000", `<a href="/v1/health">/v1/health</a>`)}</li>`,
    "</ul>",
  ].join("\n"));
}
