/**
 * The templating of declarative HTTP tools (spec declarative-plugins.md §3.1; issue 18): `{{param.<name>}}` fills in
 * a call's argument, `{{auth}}` the tool's credential in a header value — nothing else, no expressions, no script.
 * Where a placeholder stands decides how its value is written:
 * - the whole `url`: the value must be an absolute http(s) URL (no user name or password);
 * - in the url's path, query or fragment: percent-encoded (`/`, `?`, `#`, `%`, `@` included), and a value that would
 *   make a `.` or `..` path segment is refused (URL parsers would climb with it);
 * - in `query` values: encoded as a query parameter;
 * - in a header value: as it is, refused when it holds CR, LF or another control character, or a character beyond U+00FF (a header carries bytes);
 * - in the JSON `body`: a string that is one placeholder becomes the argument's JSON value, a placeholder inside a
 *   string its text; the body is then written as JSON, so every value is JSON-encoded.
 * Substitution is one pass over the template: text an argument brought in is never read for placeholders again.
 * The checks a template can get before any call (where placeholders stand, which parameters they name, the literal
 * host) are made when the plugin loads; the rest on each call.
 */
import { t, type Lang } from "../i18n/messages.js";
import type { HttpTool } from "../protocol/plugin-schemas.js";
import { pointer } from "./read.js";
import { toolCallHeader } from "../protocol/tool-calls.js";
import { hostAllowed } from "./network.js";
import { httpRequestBodyMaxBytes } from "./limits.js";
import type { PluginError } from "./types.js";

/** One piece of a template: literal text, an argument, or the credential. */
export type Piece = { lit: string } | { param: string } | { auth: true };

/** Any `{{…}}` of a template (a candidate placeholder). */
const placeholderPattern = /\{\{([^{}]*)\}\}/g;
/** A placeholder of an argument: `param.` and a property name. */
const paramPattern = /^param\.([A-Za-z_$][A-Za-z0-9_$-]*)$/;
/** The words of the catalog texts that show placeholders (the catalog's own `{name}` would read `{{auth}}`). */
export const placeholderWords = { param: "{{param.<name>}}", auth: "{{auth}}" };

/** A template split into pieces; `unknown` lists the `{{…}}` that are no placeholder this host knows. */
export function splitTemplate(s: string): { pieces: Piece[]; unknown: string[] } {
  const pieces: Piece[] = [];
  const unknown: string[] = [];
  let last = 0;
  for (const m of s.matchAll(placeholderPattern)) {
    if (m.index! > last) pieces.push({ lit: s.slice(last, m.index) });
    const inner = m[1]!;
    const param = paramPattern.exec(inner);
    if (param) pieces.push({ param: param[1]! });
    else if (inner === "auth") pieces.push({ auth: true });
    else {
      unknown.push(m[0]);
      pieces.push({ lit: m[0] });
    }
    last = m.index! + m[0].length;
  }
  if (last < s.length) pieces.push({ lit: s.slice(last) });
  return { pieces, unknown };
}

/** Header names the host sets itself (the connection's framing and target are not a plugin's to write). */
const reservedHeaders = new Set(["host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "te", "trailer", "expect", "proxy-authorization", "proxy-connection", toolCallHeader]);

/** The literal start of a url template that is not one placeholder: scheme and authority, and where they end. */
const literalOrigin = /^(https?):\/\/([^/?#{}\s]*)/i;

/** A tool's url template classified: one placeholder (`whole`), or a literal origin then path/query/fragment. */
export type UrlTemplate = { whole: string } | { origin: URL; pieces: Piece[] };

/**
 * Checks an HTTP tool's templates when its plugin loads (the `tools/<name>.json` file is `file`).
 * @param network the plugin's `requires.network`
 * @param secretKeys the plugin's settings of type `secret`
 * @returns every error found (none when the templates are usable).
 */
export function checkToolTemplates(file: string, tool: HttpTool, network: readonly string[], secretKeys: ReadonlySet<string>, lang: Lang): PluginError[] {
  const errors: PluginError[] = [];
  const err = (reason: string, ...at: (string | number)[]) => errors.push({ file, pointer: pointer(...at), reason });
  const properties = new Set(Object.keys(((tool.parameters as { properties?: unknown }).properties ?? {}) as object));
  const http = tool.http;
  let usesAuth = false;
  /** Checks the placeholders of one template; `authOk` where `{{auth}}` may stand. */
  const check = (s: string, authOk: boolean, ...at: (string | number)[]) => {
    const { pieces, unknown } = splitTemplate(s);
    for (const u of unknown) err(t(lang, "decl.tool.placeholder", { text: u, ...placeholderWords }), ...at);
    for (const p of pieces) {
      if ("param" in p && !properties.has(p.param)) err(t(lang, "decl.tool.unknownParam", { text: `{{param.${p.param}}}` }), ...at);
      if ("auth" in p) {
        usesAuth = true;
        if (!authOk) err(t(lang, "decl.tool.authPlace", placeholderWords), ...at);
      }
    }
    return pieces;
  };
  const urlPieces = check(http.url, false, "http", "url");
  if (!(urlPieces.length === 1 && "param" in urlPieces[0]!)) {
    const m = literalOrigin.exec(http.url);
    const next = m ? http.url[m[0].length] : undefined;
    if (!m || (next !== undefined && !"/?#".includes(next))) err(t(lang, m ? "decl.tool.urlHost" : "decl.tool.urlAbsolute"), "http", "url");
    else {
      let origin: URL | null = null;
      try {
        origin = new URL(m[0]);
      } catch {
        err(t(lang, "decl.tool.urlAbsolute"), "http", "url");
      }
      if (origin && (origin.username || origin.password)) err(t(lang, "decl.tool.urlUserinfo"), "http", "url");
      else if (origin && !hostAllowed(origin, network)) err(t(lang, "decl.tool.hostUndeclared", { host: origin.host }), "http", "url");
    }
  }
  for (const [name, value] of Object.entries(http.headers ?? {})) {
    if (reservedHeaders.has(name.toLowerCase())) err(t(lang, "decl.tool.headerReserved", { name }), "http", "headers", name);
    check(value, true, "http", "headers", name);
  }
  for (const [name, value] of Object.entries(http.query ?? {})) {
    if (splitTemplate(name).pieces.some((p) => !("lit" in p)) || name.includes("{{")) err(t(lang, "decl.tool.keyPlaceholder"), "http", "query", name);
    check(value, false, "http", "query", name);
  }
  if (http.body !== undefined) {
    const method = http.method ?? "GET";
    if (method === "GET" || method === "HEAD") err(t(lang, "decl.tool.bodyMethod", { method }), "http", "body");
    walkStrings(http.body, [], (s, path, isKey) => {
      if (isKey) {
        if (s.includes("{{")) err(t(lang, "decl.tool.keyPlaceholder"), "http", "body", ...path);
      } else check(s, false, "http", "body", ...path);
    });
  }
  if (usesAuth && http.authRef === undefined) err(t(lang, "decl.tool.authWithout", placeholderWords), "http");
  if (http.authRef !== undefined) {
    if (!http.authRef.startsWith("env:") && !secretKeys.has(http.authRef)) err(t(lang, "decl.tool.authSetting", { key: http.authRef }), "http", "authRef");
    const authorization = Object.entries(http.headers ?? {}).find(([n]) => n.toLowerCase() === "authorization");
    if (authorization && !usesAuth) err(t(lang, "decl.tool.authHeader", placeholderWords), "http", "headers", authorization[0]);
  }
  return errors;
}

/** Calls `fn` with every string of a JSON value — object keys (`isKey`) and string values — and its path. */
function walkStrings(v: unknown, path: (string | number)[], fn: (s: string, path: (string | number)[], isKey: boolean) => void): void {
  if (typeof v === "string") fn(v, path, false);
  else if (Array.isArray(v)) v.forEach((x, i) => walkStrings(x, [...path, i], fn));
  else if (typeof v === "object" && v !== null) {
    for (const [k, x] of Object.entries(v)) {
      fn(k, [...path, k], true);
      walkStrings(x, [...path, k], fn);
    }
  }
}

/** An argument as text: a string as it is, a number or boolean as written, null or absent as "", else its JSON. */
function textOf(v: unknown): string {
  if (v === undefined || v === null) return "";
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return JSON.stringify(v);
}

/** Fills in one template's pieces in one pass; `encode` writes an argument's text where it stands. */
function fill(pieces: Piece[], args: Record<string, unknown>, auth: string | null, encode: (s: string) => string): string {
  return pieces.map((p) => ("lit" in p ? p.lit : "param" in p ? encode(textOf(args[p.param])) : auth ?? "")).join("");
}

/** A request ready to send, or why the call's arguments cannot make one. */
export type Built = { ok: true; method: string; url: URL; headers: Record<string, string>; authHeaders: string[]; body: string | null } | { ok: false; message: string };

/** Characters no header value may hold (CR, LF, NUL and the other controls but tab). */
const headerForbidden = /[\u0000-\u0008\u000a-\u001f\u007f]/;
/** Characters a header value cannot carry at all: HTTP sends header values as bytes (fetch takes U+0000–U+00FF). */
const headerBeyondLatin1 = /[^\u0000-\u00ff]/;

/** Why a header value cannot be sent (a line break or control, or a character beyond Latin-1), or null. */
function headerRefusal(name: string, value: string, lang: Lang): string | null {
  if (headerForbidden.test(value)) return t(lang, "decl.call.headerLine", { name });
  return headerBeyondLatin1.test(value) ? t(lang, "decl.call.headerLatin1", { name }) : null;
}
/** A path segment that URL parsers read as "this folder" or "the folder above" (`.`, `..`, `%2e`, `.%2E`, …). */
const dotSegment = /^(?:\.|%2e){1,2}$/i;

/**
 * Builds the request of one call: `args` already passed the tool's `parameters`, `auth` is the credential (null when
 * the tool has no authRef). Never throws.
 */
export function buildRequest(tool: HttpTool, args: Record<string, unknown>, auth: string | null, lang: Lang): Built {
  const http = tool.http;
  const method = http.method ?? "GET";
  const urlPieces = splitTemplate(http.url).pieces;
  let url: URL;
  const only = urlPieces.length === 1 ? urlPieces[0]! : null;
  if (only && "param" in only) {
    const value = args[only.param];
    const param = `{{param.${only.param}}}`;
    let parsed: URL | null = null;
    try {
      parsed = typeof value === "string" ? new URL(value) : null;
    } catch {
      parsed = null;
    }
    if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) return { ok: false, message: t(lang, "decl.call.notUrl", { param }) };
    if (parsed.username || parsed.password) return { ok: false, message: t(lang, "decl.call.userinfo", { param }) };
    url = parsed;
  } else {
    // Walk the pieces knowing where each stands: the path until a literal `?` or `#`, then query or fragment.
    let built = "";
    let inPath = true;
    const filled: [number, number][] = [];
    for (const p of urlPieces) {
      if ("lit" in p) {
        built += p.lit;
        if (/[?#]/.test(p.lit)) inPath = false;
        continue;
      }
      const start = built.length;
      built += encodeURIComponent("param" in p ? textOf(args[p.param]) : "");
      if (inPath) filled.push([start, built.length]);
    }
    const pathEnd = built.search(/[?#]/);
    const path = pathEnd < 0 ? built : built.slice(0, pathEnd);
    // A segment that holds a placeholder (an encoded value has no `/`: it lies in one segment, even when empty) must
    // not be a dot segment.
    let offset = 0;
    for (const segment of path.split("/")) {
      const end = offset + segment.length;
      if (dotSegment.test(segment) && filled.some(([a, b]) => a >= offset && b <= end)) return { ok: false, message: t(lang, "decl.call.dotSegment") };
      offset = end + 1;
    }
    try {
      url = new URL(built);
    } catch {
      return { ok: false, message: t(lang, "decl.call.notUrl", { param: http.url }) };
    }
  }
  for (const [name, value] of Object.entries(http.query ?? {})) {
    const pieces = splitTemplate(value).pieces;
    const lone = pieces.length === 1 ? pieces[0]! : null;
    // An optional argument that is absent leaves its parameter out, rather than sending it empty.
    if (lone && "param" in lone && args[lone.param] === undefined) continue;
    // Appended as written (not through searchParams, which would write the template's own query again its way).
    url.search = `${url.search || "?"}${url.search.length > 1 ? "&" : ""}${encodeURIComponent(name)}=${encodeURIComponent(fill(pieces, args, null, (s) => s))}`;
  }
  const headers: Record<string, string> = {};
  const authHeaders: string[] = [];
  for (const [name, value] of Object.entries(http.headers ?? {})) {
    const pieces = splitTemplate(value).pieces;
    const v = fill(pieces, args, auth, (s) => s);
    const refused = headerRefusal(name, v, lang);
    if (refused !== null) return { ok: false, message: refused };
    headers[name] = v;
    if (pieces.some((p) => "auth" in p)) authHeaders.push(name);
  }
  if (auth !== null && authHeaders.length === 0) {
    const refused = headerRefusal("Authorization", auth, lang);
    if (refused !== null) return { ok: false, message: refused };
    headers.Authorization = `Bearer ${auth}`;
    authHeaders.push("Authorization");
  }
  let body: string | null = null;
  if (http.body !== undefined) {
    body = JSON.stringify(fillJson(http.body, args));
    if (Buffer.byteLength(body) > httpRequestBodyMaxBytes) return { ok: false, message: t(lang, "decl.call.bodyTooLarge", { limit: httpRequestBodyMaxBytes }) };
    if (!Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) headers["Content-Type"] = "application/json";
  }
  return { ok: true, method, url, headers, authHeaders, body };
}

/**
 * Fills a JSON body template: a string that is one placeholder becomes the argument's value (absent: the key is left
 * out of its object, null in an array), a string with placeholders inside gets their text.
 */
function fillJson(v: unknown, args: Record<string, unknown>): unknown {
  if (typeof v === "string") {
    const pieces = splitTemplate(v).pieces;
    const lone = pieces.length === 1 ? pieces[0]! : null;
    if (lone && "param" in lone) return args[lone.param];
    return fill(pieces, args, null, (s) => s);
  }
  if (Array.isArray(v)) return v.map((x) => fillJson(x, args) ?? null);
  if (typeof v === "object" && v !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const filled = fillJson(x, args);
      if (filled !== undefined) out[k] = filled;
    }
    return out;
  }
  return v;
}
