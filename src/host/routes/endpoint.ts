/**
 * The one middleware every /v1 endpoint goes through, driven by the endpoint table (src/protocol/endpoints.ts), in
 * the order the edge needs (src/host/edge.ts): first the credential — before the body, so a caller without the right
 * key learns nothing about validation and a stranger's slow body holds nothing — then the query string, then the body
 * (strict UTF-8, JSON, an object, the endpoint's definition through the generated validators). Every refusal is a
 * 4xx `{ "error": "…", "code", "params" }` naming the field, with the kernel's texts; the handler gets typed values. Also the ways a
 * route answers: a decision of the kernel, a held long poll, or an answer the shell builds itself.
 */
import type { Context, Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { QueueFull, type Committed, type Hub } from "../hub.js";
import { endpoints, type Auth, type BodyOf, type EndpointName, type EndpointSpec, type QueryOf, type ResponseOf } from "../../protocol/endpoints.js";
import { checkBody, checkQuery } from "../../protocol/validate.js";
import { hashKey } from "../../kernel/credentials.js";
import { authorize } from "../../kernel/authorize.js";
import { Ctx } from "../../kernel/context.js";
import { runTokenMatches } from "../../kernel/runs.js";
import { hubInputQueueRetryAfterSeconds, longPollMaxSeconds } from "../../kernel/limits.js";
import type { Reply } from "../../kernel/reply.js";
import type { Answers, Input, InputOf } from "../../kernel/types.js";
import { refusal, refusalBody, type RefusalBody } from "../../i18n/messages.js";
import { bearer, idParam, strictUtf8 } from "./read.js";
import { gzipped } from "../compress.js";
import { consoleCookieName, consolePageHeader, cookieValue, httpsUrl, type ConsoleSession } from "../console-session.js";

/** The run of the path, for an endpoint its run's token calls (the middleware found it and checked the token). */
type RunOf<E extends EndpointName> = (typeof endpoints)[E]["auth"] extends "run" ? number : undefined;

/** What the middleware hands a route: the caller's credential and the request's checked query and body. */
export interface Checked<E extends EndpointName> {
  /** The SHA-256 of the bearer key (what the kernel knows keys by), or null without one. */
  keyHash: string | null;
  /** The bearer key or run token as sent, "" without one. */
  token: string;
  run: RunOf<E>;
  query: QueryOf<E>;
  body: BodyOf<E>;
  /** The owner console session the request came with instead of a key (endpoints with `cookie`), else null. */
  session: ConsoleSession | null;
}

/** A route's handler: called once the middleware accepted the request. */
export type Handler<E extends EndpointName> = (c: Context, req: Checked<E>) => Response | Promise<Response>;

/**
 * A JSON answer with any status (Hono types statuses narrowly; the kernel's decisions carry plain numbers), gzip'd
 * when it is long and the client takes gzip (compress.ts; issue 30).
 */
export function json(c: Context, status: number, body: unknown): Response {
  const text = JSON.stringify(body);
  const gz = gzipped(text, c.req.header("accept-encoding"));
  const began = routeBegan.get(c.req.raw);
  // The hub's own time for the answer, from the route's start to its bytes (issue 30: where a first load's time goes;
  // a browser shows it in the request's timing). Only a route's answers carry it.
  if (began !== undefined) c.header("server-timing", `hub;dur=${(performance.now() - began).toFixed(1)}`);
  if (gz === null) return c.body(text, status as ContentfulStatusCode, { "content-type": "application/json" });
  return c.body(gz, status as ContentfulStatusCode, { "content-type": "application/json", "content-encoding": "gzip", vary: "accept-encoding" });
}

/** When each request a route took began (`performance.now()`), for its answer's `Server-Timing`. */
const routeBegan = new WeakMap<Request, number>();

/**
 * A refusal with a 4xx or 5xx status: `{ error, code, params }`, the text in the hub's language with its message id
 * and params (`refusal`), so every client words it in its own language (issue 27 #2).
 */
export function refuse(c: Context, status: number, body: RefusalBody): Response {
  return json(c, status, body);
}

/** What the tests' `checkAnswer` says of an answer of endpoint `name` that does not fit its published shape. */
export function answerMismatch(name: EndpointName, problem: string): string {
  return `the answer of ${name} does not match the protocol: ${problem}`;
}

/**
 * Sends the answer of endpoint `name`. With the hub's `checkAnswer` (tests) it is first checked against the
 * endpoint's published shape: a mismatch throws, so the request fails with 500 and the hub's log names it.
 */
export function send(c: Context, hub: Hub, name: EndpointName, status: number, body: unknown): Response {
  const problem = hub.opts.checkAnswer?.(name, status, body) ?? null;
  if (problem !== null) throw new Error(answerMismatch(name, problem));
  return json(c, status, body);
}

/** Sends an answer the shell built itself, typed by the endpoint's published shape. */
export function reply<E extends EndpointName>(c: Context, hub: Hub, name: E, body: ResponseOf<E>): Response {
  return send(c, hub, name, 200, body);
}

/** Sends a kernel step's answer or refusal (a `Reply` typed by the endpoint's published answer). */
export function answer<E extends EndpointName>(c: Context, hub: Hub, name: E, r: Reply<ResponseOf<E>>): Response {
  return send(c, hub, name, r.status, r.body);
}

/**
 * The endpoints whose published answer an answer of type `B` is: a route sends the kernel's answer to an input only
 * to one of them (issue 27 #4: typed end to end, no cast).
 */
export type AnsweredBy<B> = { [E in EndpointName]: [B] extends [ResponseOf<E>] ? E : never }[EndpointName];

/**
 * The 503 of an input the hub could not take: its queue is full (`QueueFull`: with `Retry-After`), it is closing,
 * or the store is busy.
 */
export function unavailable(c: Context, hub: Hub, e: unknown): Response {
  if (e instanceof QueueFull) {
    c.header("retry-after", String(hubInputQueueRetryAfterSeconds));
    return refuse(c, 503, refusalBody(hub.env.lang, e.text));
  }
  return refuse(c, 503, refusal(hub.env.lang, "hub.busyBecause", { error: (e as Error).message }));
}

/** Decides `input` (after COMMIT) and sends the kernel's answer, typed by endpoint `name`'s; 503 when it cannot. */
export async function decide<I extends Input>(c: Context, hub: Hub, name: AnsweredBy<Answers[I["kind"]]>, input: I): Promise<Response> {
  try {
    const d = await hub.submit(input);
    return send(c, hub, name, d.status, d.body);
  } catch (e) {
    return unavailable(c, hub, e);
  }
}

/**
 * Decides a long poll and holds it up to `waitSeconds` (at most `longPollMaxSeconds`) while it finds nothing; ends
 * early when the client goes away.
 * @returns the decision (typed by its kind's answer), or the 503 when the hub could not take it.
 */
export function held(c: Context, hub: Hub, input: InputOf<"work">, waitSeconds: number, seq?: number): Promise<Committed<Answers["work"]> | Response>;
export function held(c: Context, hub: Hub, input: InputOf<"cardsNext">, waitSeconds: number): Promise<Committed<Answers["cardsNext"]> | Response>;
export async function held(c: Context, hub: Hub, input: InputOf<"work" | "cardsNext">, waitSeconds: number, seq?: number): Promise<Committed | Response> {
  try {
    return await hub.poll(input, Math.min(waitSeconds, longPollMaxSeconds) * 1000, c.req.raw.signal, seq);
  } catch (e) {
    return unavailable(c, hub, e);
  }
}

/** A number of a checked query string: empty or absent is `dflt`. */
export function queryNumber(v: string | undefined, dflt: number): number {
  return v === undefined || v === "" ? dflt : Number(v);
}

/** Reads a body as UTF-8 text, or the 400 refusal when it is not UTF-8. */
export async function bodyText(c: Context, hub: Hub): Promise<string | Response> {
  const text = strictUtf8(await c.req.arrayBuffer());
  return text ?? refuse(c, 400, refusal(hub.env.lang, "body.utf8"));
}

/**
 * The permission check before the body is read (protocol.md 谁能做什么). Keys: the kernel's own check and texts
 * (it checks again when it decides). A run's token: none → 401, no such run → 404, not its current token → 403.
 * @returns the refusal, or what to go on with: the run of the path for a run's token.
 */
function gate(c: Context, hub: Hub, auth: Auth, token: string, keyHash: string | null): Response | { run?: number } {
  if (auth === "none" || auth === "webhook") return {};
  const lang = hub.env.lang;
  if (auth === "run") {
    if (!token) return refuse(c, 401, refusal(lang, "auth.missing"));
    const run = idParam(c, "id");
    const row = run === null ? undefined : hub.store.view.get("runs", run);
    if (!row) return refuse(c, 404, refusal(lang, "notFound.run", { id: c.req.param("id") ?? "" }));
    return runTokenMatches(hub.env.master, row, token) ? { run: row.id } : refuse(c, 403, refusal(lang, "auth.token"));
  }
  const who = authorize(new Ctx(hub.store.view, hub.now(), hub.env), keyHash, [...auth]);
  return "status" in who ? json(c, who.status, who.body) : {};
}

/** The query string of `spec` checked, or the 400 refusal. A header named in `queryHeaders` wins over its parameter. */
function query(c: Context, hub: Hub, spec: EndpointSpec): { value: unknown } | Response {
  if (!spec.query) return { value: undefined };
  const q: Record<string, string> = { ...c.req.query() };
  for (const [field, header] of Object.entries(spec.queryHeaders ?? {})) {
    const v = c.req.header(header);
    if (v !== undefined) q[field] = v;
  }
  const checked = checkQuery(spec.query, q, hub.env.lang);
  return checked.ok ? { value: checked.value } : refuse(c, 400, refusalBody(hub.env.lang, checked.text));
}

/** The body of `spec` read and checked, or the 400 refusal; an empty body is `{}` where the endpoint allows it. */
async function body(c: Context, hub: Hub, spec: EndpointSpec): Promise<{ value: unknown } | Response> {
  if (!spec.body) return { value: undefined };
  const lang = hub.env.lang;
  const text = await bodyText(c, hub);
  if (text instanceof Response) return text;
  let value: unknown = {};
  if (text.trim() !== "" || !spec.emptyBody) {
    try {
      value = JSON.parse(text);
    } catch {
      return refuse(c, 400, refusal(lang, "body.json"));
    }
  }
  if (spec.anyJson && !isContractBody(value)) value = { status: "success", result: value };
  if (typeof value !== "object" || value === null || Array.isArray(value)) return refuse(c, 400, refusal(lang, "body.object"));
  const checked = checkBody(spec.body, value, lang);
  return checked.ok ? { value: checked.value } : refuse(c, 400, refusalBody(hub.env.lang, checked.text));
}

/** Whether a callback body speaks the contract (an object whose `status` is `success` or `error`): else it is the result whole. */
function isContractBody(v: unknown): boolean {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const status = (v as Record<string, unknown>).status;
  return status === "success" || status === "error";
}

/** Whether the hub's public address is https: the cookie is then `Secure` and named `__Host-…`. */
export const secureHub = (hub: Hub) => httpsUrl(hub.env.publicUrl);

/** The host (`name[:port]`) the request was sent to. */
export const hostOf = (c: Context) => new URL(c.req.url).host;

/**
 * The console session of a request's cookie, for an endpoint that takes one. A changing request is taken only with
 * the `Origin` its session signed in from (a page of another site cannot lend itself the cookie's power, whatever a
 * browser's SameSite rules) and with the session's page secret in `consolePageHeader`: a browser sends the cookie to
 * every port of the hub's host, where an agent may listen and replay it with any `Origin` it likes, but keeps the
 * secret in the console origin's own storage (issue 26 round 32, F32b-1). A read takes the cookie alone (issue 30's
 * pinned contract: the cookie reads `/v1/state`); `ending` (sign-out) takes the cookie and the `Origin`.
 * @returns the session, null when there is none (the key check then refuses), or the 403 refusal.
 */
export function consoleSessionOf(c: Context, hub: Hub, changing: boolean, ending = false): ConsoleSession | null | Response {
  const session = hub.console.find(cookieValue(c.req.header("cookie"), consoleCookieName(secureHub(hub))));
  if (!session || !changing) return session;
  if (c.req.header("origin") !== session.origin) return refuse(c, 403, refusal(hub.env.lang, "console.origin"));
  // Ending the session (sign-out) needs no page secret: a page that lost it (storage cleared) can still end it.
  if (!ending && !hub.console.pageOk(session, c.req.header(consolePageHeader))) return refuse(c, 403, refusal(hub.env.lang, "console.page"));
  return session;
}

/**
 * Mounts endpoint `name` of the table on `app`: its method and path (and its aliases), the middleware, then `handler`
 * with the checked request.
 */
export function route<E extends EndpointName>(app: Hono, hub: Hub, name: E, handler: Handler<E>): void {
  const spec: EndpointSpec = endpoints[name];
  app.on(spec.method, [spec.path, ...(spec.aliases ?? [])], async (c) => {
    routeBegan.set(c.req.raw, performance.now());
    const token = bearer(c.req.raw) ?? "";
    let keyHash = token ? hashKey(token) : null;
    // Without a key, the owner console's cookie stands for the owner key that made it, where the table says so.
    let session: ConsoleSession | null = null;
    if (!token && spec.cookie) {
      const found = consoleSessionOf(c, hub, spec.method !== "GET");
      if (found instanceof Response) return found;
      session = found;
      keyHash = found?.keyHash ?? null;
    }
    const allowed = gate(c, hub, spec.auth, token, keyHash);
    if (allowed instanceof Response) return allowed;
    const q = query(c, hub, spec);
    if (q instanceof Response) return q;
    const b = await body(c, hub, spec);
    if (b instanceof Response) return b;
    // The values passed the checks of exactly `spec.auth`, `spec.query` and `spec.body`, which RunOf<E>, QueryOf<E>
    // and BodyOf<E> name: TypeScript cannot follow a table lookup by a generic key, so they are typed here once.
    return handler(c, { keyHash, token, run: allowed.run as RunOf<E>, query: q.value as QueryOf<E>, body: b.value as BodyOf<E>, session });
  });
}
