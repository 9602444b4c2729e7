/**
 * The one check every tool's result gets before anyone reads it (issue 16, issue 18): a result nested deeper than
 * `toolResultDepthMax` is a tool error. JSON.parse builds values of any depth without trouble, but every reader after
 * it — JSON.stringify (the audit, the tool bridge, `plugins invoke`), a redaction walk — recurses and would throw.
 * In the protocol layer: both tool hosts use it (src/tools, and src/declarative's HTTP tools, which may not import
 * the tool plugin host).
 */
import { t, type Lang } from "../i18n/messages.js";
import { toolResultDepthMax } from "../kernel/limits.js";
import { nestedDeeperThan } from "./validate.js";

/** The tool error of a result nested too deep (a `ToolOutcome` of the tool host, src/tools/types.ts). */
export interface ResultTooDeep {
  status: "error";
  code: "tools.result_too_deep";
  message: string;
}

/**
 * The outcome of a result nested too deep, or null when `result` is within `toolResultDepthMax` (`known`: the caller
 * found it too deep already, e.g. by `jsonTooDeep`). Never throws.
 */
export function resultTooDeep(result: unknown, lang: Lang, known = false): ResultTooDeep | null {
  if (!known && !nestedDeeperThan(result, toolResultDepthMax)) return null;
  return { status: "error", code: "tools.result_too_deep", message: t(lang, "tools.callback.tooDeep", { limit: toolResultDepthMax }) };
}

/**
 * Whether JSON text opens arrays and objects more than `toolResultDepthMax` deep (the outermost counts 1), found by
 * one pass over the characters (strings skipped) before parsing: JSON.parse of deeply nested text is slow (seconds for
 * a few MB, the event loop held all along), and such a result is refused anyway. Text that is not JSON may answer
 * either way; JSON.parse still decides that.
 */
export function jsonTooDeep(text: string): boolean {
  return jsonTextDeeperThan(text, toolResultDepthMax);
}

/**
 * Whether JSON text opens arrays and objects more than `max` deep (the outermost counts 1), read once without parsing:
 * brackets inside strings do not count. Linear in the text's length; stops at the first level past `max`.
 */
export function jsonTextDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
