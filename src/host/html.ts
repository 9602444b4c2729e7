/**
 * HTML escaping for the pages the hub writes itself (the card link page, the root page, card templates as HTML): one
 * function, a leaf every page module imports (issue 27 #6: it ended the link-page ↔ template-html import cycle).
 */

const entities: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Escapes text for HTML: element content and quoted attribute values (`&`, `<`, `>`, `"`, `'`). */
export const esc = (s: string): string => s.replace(/[&<>"']/g, (ch) => entities[ch]!);
