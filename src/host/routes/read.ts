/**
 * Reading the parts of a request the routes share: the bearer credential, path ids, a body as strict UTF-8, form
 * fields, and the canonical JSON a result's replay is recognised by.
 */
import type { Context } from "hono";
import type { Hub } from "../hub.js";
import { runTokenMatches } from "../../kernel/runs.js";
import { idPattern } from "../../protocol/patterns.js";
import { artifactFilePattern } from "../../protocol/plugin-limits.js";

/** A workflow artifact's file name (issue 18), as the artifact step's schema allows it: no folder, no `..`. */
export const artifactFileRe = new RegExp(artifactFilePattern);

/** The bearer key or token of a request, or null. */
export function bearer(req: Request): string | null {
  return bearerOf(req.headers.get("authorization"));
}

/** The bearer key or token in an Authorization header's value, or null. */
export function bearerOf(authorization: string | null | undefined): string | null {
  const m = authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
  return m ? m[1]! : null;
}

/** Whether `token` is the current token of run `run` (constant-time; false for a run that does not exist). */
export function runTokenValid(hub: Hub, run: number, token: string): boolean {
  const row = hub.store.view.get("runs", run);
  return row !== undefined && runTokenMatches(hub.env.master, row, token);
}

const idRe = new RegExp(idPattern);
/** The path parameter `name` as a run or card id (1 to 15 digits, no leading zero), or null. */
export function idParam(c: Context, name: string): number | null {
  const v = c.req.param(name) ?? "";
  return idRe.test(v) ? Number(v) : null;
}

/** Decodes a body as UTF-8, or null when it is not (invalid bytes are never replaced: two ids must not become one). */
export function strictUtf8(bytes: ArrayBuffer): string | null {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

/** The fields of an `application/x-www-form-urlencoded` body, or null when one is not UTF-8 once percent-decoded. */
export function formFields(text: string): Record<string, string> | null {
  const out: Record<string, string> = {};
  try {
    for (const pair of text.split("&")) {
      if (pair === "") continue;
      const eq = pair.indexOf("=");
      const [k, v] = eq < 0 ? [pair, ""] : [pair.slice(0, eq), pair.slice(eq + 1)];
      out[decodeURIComponent(k.replace(/\+/g, " "))] ??= decodeURIComponent(v.replace(/\+/g, " "));
    }
  } catch {
    return null;
  }
  return out;
}

/** JSON with keys sorted, so equal content gives equal text (replay checks); defined with the tool calls' digests. */
export { canonicalJson } from "../../protocol/tool-calls.js";
