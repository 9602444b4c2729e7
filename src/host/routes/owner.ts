/**
 * The owner (protocol.md 本人, 暂停、恢复、立即运行): the whole picture with `GET /v1/state`, the events and the search
 * (`GET /v1/events`, `GET /v1/search`; issue 30), stopping a run, and
 * pausing, resuming and running a rule now. Also what anyone may ask: `GET /v1/health`, and the root page `/` a browser
 * opening the hub's address gets (root-page.ts).
 */
import { Hono } from "hono";
import type { Hub } from "../hub.js";
import { buildState } from "../state.js";
import { eventsPage, search } from "../find.js";
import { t, refusal } from "../../i18n/messages.js";
import { decide, refuse, reply, route } from "./endpoint.js";
import { idParam } from "./read.js";
import { releaseTag } from "../version.js";
import { rootPage, rootPageHeaders } from "../root-page.js";
import { hubChallengeHeader, hubProof, hubProofHeader, hubProofKey, proofAddress } from "../../protocol/hub-proof.js";
import type { IncomingMessage } from "node:http";

/** The owner's routes, health and the root page. */
export function ownerRoutes(hub: Hub): Hono {
  const app = new Hono();

  // A client here sends a challenge before it sends a key: the answer proves this hub holds the home's master key,
  // which the home id alone (no secret) does not (hub-proof.ts; issue 26 round 5, F3).
  const proofKey = hubProofKey(hub.env.master);
  route(app, hub, "health", async (c) => {
    // The proof names this hub's end of the connection (issue 26 round 11, F11): a relay elsewhere gets a proof of
    // this address, not of its own. No socket (a request made in-process): no proof.
    const socket = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket;
    const here = socket?.localAddress && socket.localPort ? proofAddress(socket.localAddress, socket.localPort) : null;
    const proof = here === null ? null : hubProof(proofKey, c.req.header(hubChallengeHeader), here);
    if (proof !== null) c.header(hubProofHeader, proof);
    return reply(c, hub, "health", { ok: true, version: await releaseTag() });
  });
  // A browser opening the hub's address: what this is and where to look.
  app.get("/", (c) => c.html(rootPage(hub.env.lang), 200, rootPageHeaders));

  route(app, hub, "state", (c, req) => {
    const q = req.query;
    const before = q.before === undefined ? null : Number(q.before);
    const filter = q.rule || q.state || q.worker ? { rule: q.rule || null, state: q.state || null, worker: q.worker || null } : undefined;
    const cards = q.cards ? Number(q.cards) : undefined;
    return reply(c, hub, "state", buildState(hub.store.view, hub.env, hub.now(), hub.store.seq, before, { filter, cards, capacityOf: (w) => hub.workerCapacity(w) }));
  });

  // What the owner looks for (issue 30): the events with their routing and runs, and the search over the index.
  // The search index may lag the log by a few facts (store.ts): brought up first, so a reader never sees it behind.
  route(app, hub, "events", (c, req) => (hub.store.searchUpToDate(), reply(c, hub, "events", eventsPage(hub.store.view, req.query))));
  route(app, hub, "search", (c, req) => (hub.store.searchUpToDate(), reply(c, hub, "search", search(hub.store.view, hub.env, hub.now(), req.query))));

  // The body is checked before the path's run id, as for cards.
  route(app, hub, "cancel", (c, req) => {
    const run = idParam(c, "id");
    if (run === null) return refuse(c, 404, refusal(hub.env.lang, "notFound.run", { id: c.req.param("id") ?? "" }));
    return decide(c, hub, "cancel", { kind: "cancel", keyHash: req.keyHash, run });
  });

  route(app, hub, "pause", (c, req) => {
    const b = req.body;
    return decide(c, hub, "pause", { kind: "pause", keyHash: req.keyHash, rule: c.req.param("name") ?? "", reason: b.reason || null, until: b.until ?? null });
  });

  route(app, hub, "resume", (c, req) => decide(c, hub, "resume", { kind: "resume", keyHash: req.keyHash, rule: c.req.param("name") ?? "" }));

  route(app, hub, "runNow", (c, req) => {
    const b = req.body;
    return decide(c, hub, "runNow", { kind: "runNow", keyHash: req.keyHash, rule: c.req.param("name") ?? "", subject: b.subject ?? null, reason: b.reason ?? null });
  });
  return app;
}
