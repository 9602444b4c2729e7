/**
 * The owner console's routes (issue 17): `POST /v1/console/sign-in` (owner key: a one-time sign-in link),
 * `GET /v1/console/sessions` (owner key: the live sessions, issue 30), `DELETE /v1/console/sessions` (owner key: end
 * every session) and `DELETE /v1/console/sessions/:session` (end one), and outside /v1 the page itself — static files under
 * `/console/` (console-files.ts), `POST /console/session` (a sign-in token for the session cookie) and
 * `POST /console/sign-out`. Also the check every /v1 endpoint marked `cookie` runs on a request without a key
 * (endpoint.ts): the session of the cookie, from its own host, and for a changing request from its own origin.
 */
import { Hono, type Context } from "hono";
import type { Hub } from "../hub.js";
import { t, refusal } from "../../i18n/messages.js";
import { consoleSessionIdleMs, consoleSessionMaxMs } from "../../kernel/limits.js";
import { consoleCookieName, originOf, sessionRefPattern } from "../console-session.js";
import { consoleFile, consoleHeaders } from "../console-files.js";
import { acceptsGzip } from "../compress.js";
import { bodyText, consoleSessionOf, hostOf, json, refuse, reply, route, secureHub } from "./endpoint.js";

/** A time in ms since the epoch as the protocol writes times: ISO 8601 in UTC. */
const iso = (ms: number) => new Date(ms).toISOString();

/** The `Set-Cookie` value of the session cookie (`value` null: the one that deletes it). */
function setCookie(hub: Hub, value: string | null): string {
  const secure = secureHub(hub);
  const maxAge = value === null ? 0 : Math.floor(consoleSessionMaxMs / 1000);
  return `${consoleCookieName(secure)}=${value ?? ""}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secure ? "; Secure" : ""}`;
}

/** The origin a sign-in comes from, when it is the hub's own: its `Origin` names the host it was sent to, or the public URL. */
function signInOrigin(c: Context, hub: Hub): string | null {
  const origin = originOf(c.req.header("origin") ?? "");
  if (origin === null) return null;
  if (new URL(origin).host === hostOf(c)) return origin;
  return hub.env.publicUrl !== null && origin === originOf(hub.env.publicUrl) ? origin : null;
}

/** The console's routes. */
export function consoleRoutes(hub: Hub): Hono {
  const app = new Hono();
  const lang = hub.env.lang;
  // The files are read and gzip'd now, while the hub starts, not on the first visit (issue 30: first load); a failure
  // here is the first request's to answer.
  consoleFile("index.html").catch(() => {});

  route(app, hub, "consoleSignIn", (c, req) => {
    const { token, expiresAt } = hub.console.signInToken(req.keyHash!);
    // The token rides in the fragment: browsers never send it to a server, a referrer or a proxy's log.
    const link = `${hub.env.publicUrl ?? `http://${hostOf(c)}`}/console/#sign-in=${token}`;
    return reply(c, hub, "consoleSignIn", { link, expiresAt: new Date(expiresAt).toISOString() });
  });

  route(app, hub, "consoleEnd", (c) => reply(c, hub, "consoleEnd", { ended: hub.console.endAll() }));
  route(app, hub, "consoleSessions", (c) => reply(c, hub, "consoleSessions", {
    sessions: hub.console.list().map((s) => ({
      session: s.ref, origin: s.origin, signedIn: iso(s.createdAt), lastUsed: iso(s.usedAt), idleUntil: iso(s.usedAt + consoleSessionIdleMs), expiresAt: iso(s.expiresAt),
    })),
  }));
  // A well-formed name that is no session's ends nothing: the answer says 0.
  route(app, hub, "consoleEndOne", (c) => {
    const ref = c.req.param("session") ?? "";
    if (!sessionRefPattern.test(ref)) return refuse(c, 400, refusal(lang, "console.sessionName"));
    return reply(c, hub, "consoleEndOne", { ended: hub.console.endRef(ref) ? 1 : 0 });
  });

  /** A console answer with the console's headers. */
  const answer = (c: Context, status: number, body: unknown, cookie?: string) => {
    const res = json(c, status, body);
    for (const [k, v] of Object.entries(consoleHeaders)) res.headers.set(k, v);
    if (cookie !== undefined) res.headers.append("set-cookie", cookie);
    return res;
  };

  app.post("/console/session", async (c) => {
    const origin = signInOrigin(c, hub);
    if (origin === null) return answer(c, 403, refusal(lang, "console.origin"));
    const text = await bodyText(c, hub);
    if (text instanceof Response) return text;
    let token: unknown;
    try {
      token = (JSON.parse(text) as { token?: unknown } | null)?.token;
    } catch {
      return answer(c, 400, refusal(lang, "body.json"));
    }
    if (typeof token !== "string" || token === "") return answer(c, 400, refusal(lang, "field.required", { field: "token" }));
    const signed = hub.console.signIn(token, origin);
    if (!signed) return answer(c, 401, refusal(lang, "console.signInInvalid"));
    // The page secret goes in the answer, which only the page that asked reads (its origin's storage keeps it).
    return answer(c, 200, { ok: true, page: signed.page }, setCookie(hub, signed.cookie));
  });

  app.post("/console/sign-out", (c) => {
    const session = consoleSessionOf(c, hub, true, true);
    if (session instanceof Response) return session;
    if (session) hub.console.end(session);
    return answer(c, 200, { ok: true }, setCookie(hub, null));
  });

  app.get("/console", (c) => c.redirect("/console/", 301));
  app.get("/console/:file{.*}", async (c) => {
    const file = await consoleFile(c.req.param("file") || "index.html");
    if (!file) return answer(c, 404, refusal(lang, "notFound.route", { method: "GET", path: new URL(c.req.url).pathname }));
    const headers = { ...consoleHeaders, "content-type": file.type, "cache-control": file.cache, vary: "accept-encoding" };
    if (acceptsGzip(c.req.header("accept-encoding"))) return c.body(new Uint8Array(file.gzip), 200, { ...headers, "content-encoding": "gzip" });
    return c.body(new Uint8Array(file.body), 200, headers);
  });
  return app;
}
