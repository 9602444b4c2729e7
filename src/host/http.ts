/**
 * The /v1 HTTP adapter (protocol.md): turns web Requests into kernel inputs and decisions into JSON answers. It is
 * composed of one route module per protocol section (src/host/routes/), each endpoint mounted from the endpoint table
 * (src/protocol/endpoints.ts) through one validating middleware (routes/endpoint.ts). Handlers take a web `Request`
 * (Hono), so `createApp(hub).request(…)` answers without a socket; the Node server is a thin edge (src/host/edge.ts:
 * timeouts and connection caps). Every rejection is a 4xx JSON `{ "error": "…" }` naming the field, and leaves no
 * fact behind. Bodies over 1 MiB get 413 unread; a body that is not UTF-8 gets 400. A credential in the path or
 * headers (key, run token, card link, webhook source and signature header) is checked before the body is read; no
 * credential at all is 401.
 */
import { Hono, type Context } from "hono";
import type { IncomingMessage } from "node:http";
import { bodyLimit } from "hono/body-limit";
import type { Hub } from "./hub.js";
import { requestBodyMaxBytes } from "../kernel/limits.js";
import { t, refusal } from "../i18n/messages.js";
import { homeIdHeader } from "./lock.js";
import { BoundedLog, clientHungUp } from "./log-limit.js";
import { refuse } from "./routes/endpoint.js";
import { eventRoutes } from "./routes/events.js";
import { workRoutes } from "./routes/work.js";
import { cardRoutes } from "./routes/cards.js";
import { ownerRoutes } from "./routes/owner.js";
import { streamRoutes } from "./routes/stream.js";
import { keyRoutes } from "./routes/keys.js";
import { linkRoutes } from "./routes/link.js";
import { toolRoutes } from "./routes/tools.js";
import { consoleRoutes } from "./routes/console.js";
import { pluginRoutes } from "./routes/plugins.js";
import { metricsRoutes } from "./routes/metrics.js";
import type { Latency } from "./metrics.js";

export { bearer, bearerOf, canonicalJson, formFields, runTokenValid, strictUtf8 } from "./routes/read.js";

/** The hub's HTTP app: every section's routes behind the home header and the body limit. */
export function createApp(hub: Hub): Hono {
  const app = new Hono();
  const lang = hub.env.lang;
  // Every log line a caller can cause goes through this: at most one of a kind a minute (log-limit.ts).
  const callerLog = new BoundedLog(hub.opts.log, () => hub.now(), lang);

  // Every answer, refusals included, says which home this hub serves: the CLI checks it before it sends a key. Set on
  // the answer's own headers: Hono's c.header() after the handler copies the answer into a new web Response (issue 32:
  // ~0.1 ms a request); an answer whose headers cannot change (none of the hub's today) still takes that way.
  app.use("*", async (c, next) => {
    await next();
    try {
      c.res.headers.set(homeIdHeader, hub.homeId);
    } catch {
      c.header(homeIdHeader, hub.homeId);
    }
  });
  // The rest of the body is not read: close the connection so no client reuses a half-read socket.
  const tooLarge = (c: Context) => c.json(refusal(lang, "body.tooLarge", { limit: requestBodyMaxBytes }), 413, { connection: "close" });
  const chunkedLimit = bodyLimit({ maxSize: requestBodyMaxBytes, onError: tooLarge });
  app.use("*", (c, next) => {
    // Over a socket, a body with a length is judged by its header before it is read, as Hono's bodyLimit does, but
    // without its look at `c.req.raw.body`, which turns @hono/node-server's light request into a whole web Request
    // with a stream (issue 32: ~0.3 ms of a 1.7 ms event). A chunked body (no length) is counted as it is read, there.
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    if (!incoming || incoming.headers["transfer-encoding"] !== undefined) return chunkedLimit(c, next);
    const length = incoming.headers["content-length"];
    return length !== undefined && Number.parseInt(length, 10) > requestBodyMaxBytes ? Promise.resolve(tooLarge(c)) : next();
  });

  // GET /metrics: how long accepted events and results took, request to answer (a claim is timed by the hub itself).
  const timed = (l: Latency) => async (c: { res: Response }, next: () => Promise<void>) => {
    const t0 = performance.now();
    await next();
    if (c.res.status === 200) l.since(t0);
  };
  app.post("/v1/events", timed(hub.figures.event));
  app.post("/v1/in/:source", timed(hub.figures.event));
  app.post("/v1/runs/:id/result", timed(hub.figures.result));

  app.route("/", eventRoutes(hub, callerLog));
  for (const section of [linkRoutes, workRoutes, cardRoutes, ownerRoutes, streamRoutes, keyRoutes, toolRoutes, consoleRoutes, pluginRoutes, metricsRoutes]) app.route("/", section(hub));

  app.notFound((c) => refuse(c, 404, refusal(lang, "notFound.route", { method: c.req.method, path: new URL(c.req.url).pathname })));
  // The message may name files of the home: it goes to the hub's log, not to a caller that may hold no key.
  // A client that hung up is no internal error; the others are logged at most once a minute per route and error.
  app.onError((e, c) => {
    if (clientHungUp(c.req.raw, e)) return refuse(c, 400, refusal(lang, "body.aborted"));
    const kind = `${c.req.method} ${c.req.routePath} ${(e as NodeJS.ErrnoException).code ?? e.name}`;
    callerLog.say(kind, t(lang, "hub.internalRequest", { method: c.req.method, path: new URL(c.req.url).pathname, stack: e.stack ?? e.message }));
    return refuse(c, 500, refusal(lang, "internal"));
  });
  return app;
}
