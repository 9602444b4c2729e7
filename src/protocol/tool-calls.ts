/**
 * What both sides of a tool call compute the same way (issue 16): the digest of a call's arguments that the hub
 * records instead of the arguments, and the bounded preview an approval card shows. The worker's tool bridge and the
 * owner's `plugins invoke` build `ToolCallBody` (schema.ts) with these.
 */
import { createHash, randomBytes } from "node:crypto";
import { lineForbiddenClass, relayed } from "../kernel/text.js";
import { toolCallbackKeyChars, toolCallArgumentsMaxCodepoints, toolCallPreviewMaxCodepoints, toolErrorCodeMaxChars, toolErrorMessageMaxCodepoints, toolNameMaxChars, toolPluginNameMaxChars } from "../kernel/limits.js";
import { qualifiedToolPattern } from "./patterns.js";
import type { ToolCallBody } from "./schema.js";

/**
 * What JSON.stringify leaves raw but a line of the protocol refuses (DEL, C1, line separators, bidi controls;
 * src/kernel/text.ts), and what no reader sees (issue 26 round 28, F28b-2: zero-width spaces and tag characters hid
 * "and rm -rf ~" in arguments the card showed as `{"name":"Ada"}` — every default-ignorable and format character):
 * canonical JSON writes them as \uXXXX escapes, so its text is one clean line (issue 26 #5 sends
 * it whole) and still parses to the same value (C0 and lone surrogates JSON.stringify has escaped already; with the
 * `u` flag the halves of a real pair are one code point and do not match).
 */
const rawInJson = new RegExp(`[${lineForbiddenClass}\\p{Default_Ignorable_Code_Point}\\p{Cf}]`, "gu");
/** `c` as JSON escapes, one `\\uXXXX` per UTF-16 unit (a tag character is a surrogate pair). */
const escaped = (c: string): string => [...Array(c.length).keys()].map((i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`).join("");
const jsonText = (x: unknown): string | undefined => JSON.stringify(x)?.replace(rawInJson, escaped);

/**
 * JSON with object keys sorted at every depth (UTF-16 order) and no spaces: equal values give equal text whatever
 * order their keys came in. `undefined` members are left out, as JSON.stringify does. No recursion: a value nested
 * however deep (an agent's arguments are refused past a depth, but digested and recorded first) gives its text.
 * Characters a protocol line refuses are escaped (rawInJson): the text has no control character at all.
 */
export function canonicalJson(v: unknown): string {
  const out: string[] = [];
  // Work left to do, last first: a value to write, or text (a comma, a key, a closing bracket) to write as it is.
  const todo: ({ value: unknown } | string)[] = [{ value: v }];
  while (todo.length > 0) {
    const next = todo.pop()!;
    if (typeof next === "string") {
      out.push(next);
      continue;
    }
    const x = next.value;
    if (Array.isArray(x)) {
      const parts: ({ value: unknown } | string)[] = ["["];
      x.forEach((item, i) => parts.push(...(i > 0 ? [","] : []), { value: item }));
      parts.push("]");
      todo.push(...parts.reverse());
    } else if (x && typeof x === "object") {
      const entries = Object.entries(x).filter(([, y]) => y !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      const parts: ({ value: unknown } | string)[] = ["{"];
      entries.forEach(([k, y], i) => parts.push(`${i > 0 ? "," : ""}${jsonText(k)}:`, { value: y }));
      parts.push("}");
      todo.push(...parts.reverse());
    } else {
      out.push(jsonText(x) ?? "");
    }
  }
  return out.join("");
}

/** `sha256:<hex>` of the arguments' canonical JSON: what the hub's facts keep of a call's arguments. */
export function toolArgsDigest(args: unknown): string {
  return `sha256:${createHash("sha256").update(canonicalJson(args), "utf8").digest("hex")}`;
}

/**
 * The arguments as an approval card shows them: their canonical JSON (keys sorted, so padding the agent put first is
 * not first) on one line, control characters removed, cut to `toolCallPreviewMaxCodepoints` with "…" last when longer.
 */
export function toolArgsPreview(args: unknown): string {
  return relayed(canonicalJson(args), true, toolCallPreviewMaxCodepoints);
}

/**
 * What a call body says of its arguments (issue 26 #5): their digest (what an answer is bound to), the card's preview,
 * the length of their canonical JSON in code points, and that JSON whole when it is at most
 * `toolCallArgumentsMaxCodepoints` (the hub checks it against the digest and shows it on the console and link page).
 */
export function toolArgsFields(args: unknown): Pick<ToolCallBody, "argsDigest" | "preview" | "argsLength" | "arguments"> {
  const text = canonicalJson(args);
  const length = [...text].length;
  return {
    argsDigest: toolArgsDigest(args), preview: toolArgsPreview(args), argsLength: length,
    ...(length <= toolCallArgumentsMaxCodepoints ? { arguments: text } : {}),
  };
}

/**
 * The body that tells the hub of a call its tool host refused before the hub was asked (unknown plugin or tool,
 * arguments failing the tool's JSON Schema, a tool not offered to the run): recorded `denied` with `reason`, so every
 * call is audited (issue 16 "Audit and metrics"). `code` is the tool host's (`tools.unknown_plugin`, …); the reason is
 * made one line and cut to `toolErrorMessageMaxCodepoints`. A name that is not `<plugin>.<tool>` has no plugin to
 * record it under: null (the caller refuses it without a record).
 */
export function toolRefusalBody(tool: string, args: unknown, code: string, reason: string): ToolCallBody | null {
  if (!new RegExp(qualifiedToolPattern, "u").test(tool) || tool.length > toolPluginNameMaxChars + 1 + toolNameMaxChars) return null;
  const safeCode = code.replace(/[^A-Za-z0-9._:-]/g, "").slice(0, toolErrorCodeMaxChars) || "refused";
  return {
    tool, argsDigest: toolArgsDigest(args), preview: toolArgsPreview(args),
    refused: { code: safeCode, reason: relayed(reason, true, toolErrorMessageMaxCodepoints) || safeCode },
  };
}

/**
 * The request header naming the hub's id of the agent's tool call that sent a request to the hub itself (a declarative
 * HTTP tool posting an event; issue 26): the event gets the calling run's hops + 1. Set by the tool host only, never
 * by a tool's template (it is one of the headers the host sets).
 */
export const toolCallHeader = "agent-autoloop-tool-call";

/**
 * A new key for one call's `callback_url` (issue 34): `toolCallbackKeyChars` base64url characters of random bytes. The
 * caller reports it with the call's `parked` outcome; the hub keeps only its HMAC, bound to the call and its task id.
 */
export function newCallbackKey(): string {
  return randomBytes((toolCallbackKeyChars * 3) / 4).toString("base64url");
}

/**
 * The `callback_url` a plugin is given (spec tool-plugins.md §5; issue 34): `<hub>/v1/plugins/callback/<key>/`, to which
 * it appends its task id. Whatever the id, only a holder of this call's key completes it.
 */
export function callbackUrlOf(hubUrl: string, key: string): string {
  return `${hubUrl.replace(/\/$/, "")}/v1/plugins/callback/${key}/`;
}
