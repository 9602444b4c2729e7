/**
 * Events and sources (protocol.md 来源): `POST /v1/events` with a source key, `POST /v1/in/<source>` for webhooks a
 * source's adapter verifies and translates, and `POST /v1/tell` (a source or worker tells the owner something).
 */
import { Hono } from "hono";
import type { Hub } from "../hub.js";
import { check } from "../../protocol/validate.js";
import type { EventIn } from "../../protocol/schema.js";
import { own } from "../../kernel/own.js";
import { t, refusal } from "../../i18n/messages.js";
import { secretsEnvName } from "../home.js";
import type { BoundedLog } from "../log-limit.js";
import { relayedEvent } from "../relay.js";
import type { SourceArgs } from "../../sdk/index.js";
import { bodyText, decide, refuse, route } from "./endpoint.js";
import { intentTable } from "../../declarative/index.js";
import { toolCallHeader } from "../../protocol/tool-calls.js";
import { idPattern } from "../../protocol/patterns.js";
import type { Context } from "hono";

const idRe = new RegExp(idPattern);

/**
 * The agent's tool call a request names in its `toolCallHeader` header (a declarative HTTP tool posting to its own
 * hub, issue 26): `{ viaCall }`, or nothing when the header is absent or no call id. It can only make an event deeper
 * (more hops), never shallower: whoever sends it gains nothing by it.
 */
function viaCall(c: Context): { viaCall?: number } {
  const v = c.req.header(toolCallHeader) ?? "";
  return idRe.test(v) ? { viaCall: Number(v) } : {};
}

/**
 * The routes of events and sources.
 * @param callerLog the hub's bounded log of what callers cause: why a declared webhook source refused a delivery.
 */
export function eventRoutes(hub: Hub, callerLog: BoundedLog): Hono {
  const app = new Hono();
  const lang = hub.env.lang;

  route(app, hub, "postEvent", (c, req) => decide(c, hub, "postEvent", { kind: "event", keyHash: req.keyHash, event: req.body, intents: intentTable(hub.declarative), ...viaCall(c) }));

  route(app, hub, "tell", (c, req) => decide(c, hub, "tell", { kind: "tell", keyHash: req.keyHash, body: req.body }));

  /** Logs why a declared webhook source refused a delivery, at most once per reason and interval. */
  const logRefusal = (source: string, reason: string) => callerLog.say(`in\u0000${source}\u0000${reason}`, t(lang, "in.refusedLog", { source, reason }));

  route(app, hub, "webhook", async (c) => {
    const source = c.req.param("source") ?? "";
    // Everything that can be checked without the body is, before reading it; the caller has no key, so every such
    // refusal is the same 401 that names nothing (which sources exist, which have adapters, where the home is).
    const refused = () => c.json(refusal(lang, "in.refused"), 401, { connection: "close" });
    const def = own(hub.store.view.rules()?.rules.sources ?? {}, source);
    if (!def?.adapter) return refused();
    const secret = hub.secret(source);
    if (!secret) {
      logRefusal(source, t(lang, "in.noSecret", { variable: `AGENT_AUTOLOOP_SECRET_${secretsEnvName(source)}` }));
      return refused();
    }
    // What the module holds is not trusted to be a SourceModule: its default export's answer is checked below.
    let adapter: (a: SourceArgs) => unknown;
    let signatureHeader: unknown;
    try {
      const mod = await hub.plugins.loadModule("source", def.adapter);
      adapter = mod.default as typeof adapter;
      signatureHeader = mod.signatureHeader;
    } catch (e) {
      logRefusal(source, `adapter ${def.adapter}: ${(e as Error).message}`);
      return refused();
    }
    if (typeof signatureHeader === "string" && !c.req.header(signatureHeader)) {
      logRefusal(source, t(lang, "in.noSignature", { header: signatureHeader }));
      return refused();
    }
    const raw = await bodyText(c, hub);
    if (raw instanceof Response) return raw;
    const headers: Record<string, string> = {};
    c.req.raw.headers.forEach((v, k) => (headers[k.toLowerCase()] = v));
    let events: unknown;
    try {
      events = adapter({ headers, body: raw, secret });
    } catch (e) {
      const status = (e as { status?: number }).status;
      return refuse(c, status === 401 || status === 403 ? status : 400, refusal(lang, "foreign.text", { text: (e as Error).message }));
    }
    if (!Array.isArray(events)) return refuse(c, 400, refusal(lang, "in.notList"));
    const checked: EventIn[] = [];
    for (const [i, e] of events.entries()) {
      const r = check("EventIn", relayedEvent(e), lang);
      if (!r.ok) return refuse(c, 400, refusal(lang, "in.bad", { n: i, error: r.text }));
      checked.push(r.value);
    }
    return decide(c, hub, "webhook", { kind: "eventsIn", source, events: checked, intents: intentTable(hub.declarative), ...viaCall(c) });
  });
  return app;
}
