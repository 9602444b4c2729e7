/**
 * What both sides of a tool call compute the same way (issue 16): the digest of a call's arguments that the hub
 * records instead of the arguments, and the bounded preview an approval card shows. The worker's tool bridge and the
 * owner's `plugins invoke` build `ToolCallBody` (schema.ts) with these.
 */
import { createHash } from "node:crypto";
import { relayed } from "../kernel/text.js";
import { toolCallPreviewMaxCodepoints } from "../kernel/limits.js";

/**
 * JSON with object keys sorted at every depth (UTF-16 order) and no spaces: equal values give equal text whatever
 * order their keys came in. `undefined` members are left out, as JSON.stringify does.
 */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  if (v && typeof v === "object") {
    return `{${Object.entries(v).filter(([, x]) => x !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(",")}}`;
  }
  return JSON.stringify(v);
}

/** `sha256:<hex>` of the arguments' canonical JSON: what the hub's facts keep of a call's arguments. */
export function toolArgsDigest(args: unknown): string {
  return `sha256:${createHash("sha256").update(canonicalJson(args), "utf8").digest("hex")}`;
}

/**
 * The arguments as an approval card shows them: their JSON on one line, control characters removed, cut to
 * `toolCallPreviewMaxCodepoints` with "…" last when longer.
 */
export function toolArgsPreview(args: unknown): string {
  return relayed(JSON.stringify(args) ?? "null", true, toolCallPreviewMaxCodepoints);
}
