/**
 * Running one call of a declarative HTTP tool (spec declarative-plugins.md §3.1; issue 18) once its request is built
 * (template.ts): every request — and every redirect, followed here one hop at a time — goes only to a host the plugin
 * declared in `requires.network`, else "network not declared: <host>" before a byte is sent to it; the credential is
 * dropped on a redirect to another origin; the call ends after `timeoutMs`; an answer over `httpResponseMaxBytes` is
 * cut off; a non-2xx answer is a tool error with its status and a bounded excerpt; `resultPath` picks the part of a
 * JSON answer the tool returns. The credential's value never appears in what the call returns: wherever the server
 * echoed it, it is replaced by `[redacted]`.
 */
import { isIP } from "node:net";
import { networkInterfaces } from "node:os";
import { t, type Lang } from "../i18n/messages.js";
import { redact } from "../kernel/text.js";
import type { ToolOutcome } from "../plugins/tool-seam.js";
import { toolCallHeader } from "../protocol/tool-calls.js";
import { jsonTooDeep, resultTooDeep } from "../protocol/tool-result.js";
import { hostAllowed, networkNotDeclared } from "./network.js";
import { httpErrorExcerptMaxChars, httpRedirectsMax, httpResponseMaxBytes } from "./limits.js";
import type { Built } from "./template.js";

/** What a call needs besides its request. */
export interface HttpCall {
  network: readonly string[];
  timeoutMs: number;
  resultPath: string;
  /** The caller gave up. */
  signal?: AbortSignal;
  /** The tool was unloaded meanwhile: the call ends with `goneMessage`. */
  gone: AbortSignal;
  goneMessage: string;
  /** Values that must not come back (the credential). */
  secrets: string[];
  lang: Lang;
  /**
   * The hub's addresses (null: none known) and the id of the agent's call this is (issue 26): a request that may reach
   * the hub — one of these origins, or on one's port any name or an address of this machine (`toHub`) — carries the
   * `toolCallHeader` header naming the call, so that an event it posts is one hop deeper than the run that called.
   */
  ownHub?: { urls: (string | null)[]; call: number };
}

const redirectStatuses = new Set([301, 302, 303, 307, 308]);

/**
 * `outcome` with the call's secrets replaced in its message, as written and lower-cased (a host name is: the URL
 * parser lowers it) — one exit for every message the host builds from the answer: the redirect's target, a hop's host,
 * the status excerpt (issue 26 round 29, F29b-1: a credential echoed in a redirect's `Location` reached the agent).
 */
function messageWithoutSecrets(outcome: ToolOutcome, secrets: readonly string[]): ToolOutcome {
  if (!("message" in outcome) || typeof outcome.message !== "string") return outcome;
  return { ...outcome, message: redact(outcome.message, asWrittenAndLower(secrets)) } as ToolOutcome;
}

/** Each secret as written and lower-cased (a URL parser lowers a host name; a redirect's target is cut after redaction). */
function asWrittenAndLower(secrets: readonly string[]): string[] {
  return [...secrets, ...secrets.map((x) => x.toLowerCase())];
}

/** Each secret as written and as the inside of a JSON string (escaped, and with `/` escaped as `\/`), longest first. */
function jsonForms(secrets: readonly string[]): string[] {
  const escaped = secrets.map((x) => JSON.stringify(x).slice(1, -1));
  return [...new Set([...escaped.map((x) => x.replace(/\//g, "\\/")), ...escaped, ...secrets])].sort((a, b) => b.length - a.length);
}

/** Why the call's controller aborted. */
type Ended = "timeout" | "caller" | "gone";

/** Runs the request. Never throws. */
export async function runHttp(req: Extract<Built, { ok: true }>, o: HttpCall): Promise<ToolOutcome> {
  const ac = new AbortController();
  let ended: Ended | null = null;
  const end = (why: Ended) => {
    ended ??= why;
    ac.abort();
  };
  const timer = setTimeout(() => end("timeout"), o.timeoutMs);
  const onCaller = () => end("caller");
  const onGone = () => end("gone");
  if (o.signal?.aborted) end("caller");
  if (o.gone.aborted) end("gone");
  o.signal?.addEventListener("abort", onCaller, { once: true });
  o.gone.addEventListener("abort", onGone, { once: true });
  try {
    return messageWithoutSecrets(await exchange(req, o, ac.signal), o.secrets);
  } catch (e) {
    if (ended === "timeout") return { status: "timeout", message: t(o.lang, "decl.call.timeout", { ms: o.timeoutMs }) };
    if (ended === "gone") return { status: "error", code: "tools.definition_missing", message: o.goneMessage };
    if (ended === "caller") return { status: "error", code: "tools.aborted", message: t(o.lang, "tools.call.aborted") };
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    return messageWithoutSecrets({ status: "error", code: "tools.http_failed", message: t(o.lang, "decl.call.failed", { error: cause?.code ?? cause?.message ?? (e as Error).message }) }, o.secrets);
  } finally {
    clearTimeout(timer);
    o.signal?.removeEventListener("abort", onCaller);
    o.gone.removeEventListener("abort", onGone);
  }
}

/** The request and its redirects, then the answer read and shaped. Throws what fetch throws (aborts included). */
async function exchange(req: Extract<Built, { ok: true }>, o: HttpCall, signal: AbortSignal): Promise<ToolOutcome> {
  let url = req.url;
  let method = req.method;
  let body = req.body;
  let headers = { ...req.headers };
  for (let hop = 0; ; hop++) {
    if (!hostAllowed(url, o.network)) {
      // Before the first request nothing was sent: a refusal. After a redirect the call did run: an error.
      return { status: hop === 0 ? "refused" : "error", code: "tools.network_not_declared", message: networkNotDeclared(url.host) } as ToolOutcome;
    }
    const sent = o.ownHub && toHub(url, o.ownHub.urls) ? { ...headers, [toolCallHeader]: String(o.ownHub.call) } : headers;
    const res = await fetch(url, { method, headers: sent, body, redirect: "manual", signal });
    const location = res.headers.get("location");
    if (!redirectStatuses.has(res.status) || location === null) return answer(res, method, o, signal);
    await res.body?.cancel();
    if (hop >= httpRedirectsMax) return { status: "error", code: "tools.http_redirects", message: t(o.lang, "decl.call.redirects", { limit: httpRedirectsMax }) };
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      next = new URL("invalid:");
    }
    if (next.protocol !== "http:" && next.protocol !== "https:") {
      return { status: "error", code: "tools.http_redirect", message: t(o.lang, "decl.call.redirectTarget", { location: [...redact(location, asWrittenAndLower(o.secrets))].slice(0, 200).join("") }) };
    }
    // The credential is for the origin the tool names: never carried to another one.
    if (next.origin !== url.origin) headers = Object.fromEntries(Object.entries(headers).filter(([n]) => !req.authHeaders.includes(n)));
    // As browsers do: 303 always, and 301/302 after a POST, go on as GET without the body.
    if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === "POST")) {
      method = method === "HEAD" ? "HEAD" : "GET";
      body = null;
      headers = Object.fromEntries(Object.entries(headers).filter(([n]) => n.toLowerCase() !== "content-type"));
    }
    url = next;
  }
}

/**
 * Whether `url` may reach the hub at one of `urls` — decided by where a connection can land, not by how the host is
 * spelled (issue 26 round 24, F24-1: `0.0.0.0:<port>` and the machine's hostname reached the hub as strangers, and a
 * self-feeding loop ran at hops 0): the same origin; or, on the protocol and port of a hub URL at an address of this
 * machine (the port it listens on), any name (a name can resolve to this machine, and resolve again differently when
 * the request is made) or an address of this machine (loopback, unspecified, one of its interfaces). A host elsewhere
 * on that port gets the call's number, which only ever makes an event it posts deeper. Another name of a public URL
 * (a second name of its proxy) is not known to reach the hub.
 */
export function toHub(url: URL, urls: (string | null)[]): boolean {
  for (const u of urls) {
    let hub: URL;
    try {
      hub = new URL(u ?? "");
    } catch {
      continue;
    }
    if (hub.origin === url.origin) return true;
    // The port the hub listens on (a hub URL at an address of this machine): a public URL's name and port (a proxy's
    // 443) say nothing of other names there.
    const listening = hub.hostname === "localhost" || (isIP(bare(hub.hostname)) !== 0 && localAddress(bare(hub.hostname)));
    if (listening && hub.protocol === url.protocol && hub.port === url.port && (isIP(bare(url.hostname)) === 0 || localAddress(bare(url.hostname)))) return true;
  }
  return false;
}

/** A URL's hostname without the brackets of an IPv6 literal. */
const bare = (hostname: string) => hostname.replace(/^\[(.*)\]$/, "$1");

/** Whether the IP literal `ip` is an address of this machine: loopback, unspecified, or one of its interfaces'. */
function localAddress(ip: string): boolean {
  // An IPv4 address as it is, or mapped into IPv6 (which the URL parser writes in hex: `::ffff:7f00:1`).
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(ip);
  const v4 = hex ? [parseInt(hex[1]!, 16) >> 8, parseInt(hex[1]!, 16) & 255, parseInt(hex[2]!, 16) >> 8, parseInt(hex[2]!, 16) & 255].join(".")
    : /^(?:::ffff:)?(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)?.[1];
  if (v4 !== undefined && (v4.startsWith("127.") || v4 === "0.0.0.0")) return true;
  if (ip === "::" || ip === "::1") return true;
  const mine = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((a) => a.address.toLowerCase()));
  return mine.includes((v4 ?? ip).toLowerCase());
}

/** Reads at most `httpResponseMaxBytes` of the body; null when there was more (the rest is not read). */
async function bodyOf(res: Response, signal: AbortSignal): Promise<Buffer | null> {
  if (!res.body) return Buffer.alloc(0);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    signal.throwIfAborted();
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > httpResponseMaxBytes) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** The answer as the tool's outcome: an error for non-2xx, else the body (JSON when it says so) through `resultPath`. */
async function answer(res: Response, method: string, o: HttpCall, signal: AbortSignal): Promise<ToolOutcome> {
  const bytes = method === "HEAD" ? Buffer.alloc(0) : await bodyOf(res, signal);
  if (bytes === null) return { status: "error", code: "tools.http_too_large", message: t(o.lang, "decl.call.tooLarge", { limit: httpResponseMaxBytes }) };
  const raw = new TextDecoder("utf-8").decode(bytes);
  // As written and as a JSON string writes it, `/` as `\/` too (PHP's json_encode; round 57, F57a-5), whatever the
  // answer's content type says (a text/plain answer is not parsed).
  const text = redact(raw, jsonForms(o.secrets));
  // JSON is redacted as the value it is: a credential it echoes escaped (`\u0073…`) is found once parsed.
  let parsed: { value: unknown } | null = null;
  const isJson = /\bjson\b/i.test(res.headers.get("content-type") ?? "") && text.trim() !== "";
  // Checked before anything parses or walks it (parsing deep text is slow; the redaction and every reader recurse).
  const tooDeep = isJson && jsonTooDeep(raw);
  if (isJson && !tooDeep) {
    try {
      parsed = { value: redactDeep(JSON.parse(raw), o.secrets) };
    } catch {
      parsed = null;
    }
  }
  if (res.status < 200 || res.status > 299) {
    const shown = parsed ? JSON.stringify(parsed.value) : text;
    const chars = [...shown.replace(/\s+/g, " ").trim()];
    const excerpt = chars.length > httpErrorExcerptMaxChars ? `${chars.slice(0, httpErrorExcerptMaxChars - 1).join("")}…` : chars.join("");
    return { status: "error", code: "tools.http_status", message: t(o.lang, "decl.call.status", { status: res.status, excerpt }) };
  }
  if (tooDeep) return resultTooDeep(null, o.lang, true)!;
  const value: unknown = parsed ? parsed.value : text;
  const json = parsed !== null;
  if (o.resultPath === "") return { status: "ok", result: value };
  if (!json) return { status: "error", code: "tools.result_path", message: t(o.lang, "decl.call.resultJson", { path: o.resultPath }) };
  return pick(value, o.resultPath, o.lang);
}

/** `resultPath` (`data.items[0].name`) applied to a JSON value; an absent part is an error naming the path up to it. */
export function pick(value: unknown, path: string, lang: Lang): ToolOutcome {
  let here = value;
  let walked = "";
  for (const m of path.replace(/^\./, "").matchAll(/([^.[\]]+)|\[(\d+)\]/g)) {
    const key = m[1];
    walked += key !== undefined ? (walked ? `.${key}` : key) : `[${m[2]}]`;
    const next = key !== undefined
      ? typeof here === "object" && here !== null && !Array.isArray(here) && Object.hasOwn(here, key) ? (here as Record<string, unknown>)[key] : undefined
      : Array.isArray(here) ? here[Number(m[2])] : undefined;
    if (next === undefined) return { status: "error", code: "tools.result_path", message: t(lang, "decl.call.resultPath", { path, at: walked }) };
    here = next;
  }
  return { status: "ok", result: here };
}


/** A JSON value with every secret replaced in its strings (keys included). */
function redactDeep(v: unknown, secrets: readonly string[]): unknown {
  if (secrets.length === 0) return v;
  if (typeof v === "string") return redact(v, secrets);
  if (Array.isArray(v)) return v.map((x) => redactDeep(x, secrets));
  if (typeof v === "object" && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [redact(k, secrets), redactDeep(x, secrets)]));
  return v;
}
