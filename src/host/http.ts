/**
 * The /v1 HTTP adapter (protocol.md): turns web Requests into kernel inputs and decisions into JSON answers.
 * Handlers take a web `Request` (Hono); the Node server is a thin edge (src/host/edge.ts: timeouts and connection
 * caps). Every rejection is a 4xx JSON `{ "error": "…" }` naming the field, and leaves no fact behind. Bodies over
 * 1 MiB get 413 unread; a body that is not UTF-8 gets 400. A credential in the path or headers (key, run token, card
 * link, webhook source and signature header) is checked before the body is read; no credential at all is 401.
 */
import { Hono, type Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { Hub } from "./hub.js";
import { buildState } from "./state.js";
import { check, isRealIsoDate, type Shape, type Validated } from "../protocol/validate.js";
import { hashKey, hashText } from "../kernel/credentials.js";
import { callerOf } from "../kernel/decide.js";
import { claimIdMaxChars, longPollMaxSeconds, requestBodyMaxBytes } from "../kernel/limits.js";
import { keyKinds, type Input, type KeyKind } from "../kernel/types.js";
import { t } from "../i18n/messages.js";
import { newKey, secretsEnvName } from "./home.js";
import type { SourceArgs } from "../sdk/index.js";
import { linkedCard, linkPage } from "./link-page.js";
import { homeIdHeader } from "./lock.js";
import { releaseTag } from "./version.js";
import { rootPage, rootPageHeaders } from "./root-page.js";
import type { EventIn } from "../protocol/schema.js";
import { streamSSE } from "hono/streaming";
import { publicFact, withoutRuleBodies } from "./facts.js";
import { own } from "../kernel/own.js";
import { isName, isOldKeyName } from "../kernel/rules.js";
import { runTokenMatches } from "../kernel/runs.js";
import { lineForbidden } from "../kernel/text.js";
import type { RunRow } from "../kernel/types.js";
import { BoundedLog, clientHungUp } from "./log-limit.js";
import { relayedEvent } from "./relay.js";

/** Facts read from the log per page while streaming. */
const streamPageFacts = 256;
/** A comment line keeps an idle stream open through proxies (ms). */
const streamKeepAliveMs = 25_000;

type J = Record<string, unknown>;

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
  const row = hub.store.view.get<RunRow>("runs", run);
  return row !== undefined && runTokenMatches(hub.env.master, row, token);
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

/** JSON with keys sorted, so equal content gives equal text (replay checks). */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  if (v && typeof v === "object") {
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson((v as J)[k])}`).join(",")}}`;
  }
  return JSON.stringify(v);
}

export function createApp(hub: Hub): Hono {
  const app = new Hono();
  const lang = hub.env.lang;
  const fail = (c: Context, status: number, error: string) => c.json({ error }, status as 400);
  // Every log line a caller can cause goes through this: at most one of a kind a minute (log-limit.ts).
  const callerLog = new BoundedLog(hub.opts.log, () => hub.now(), lang);

  // Every answer, refusals included, says which home this hub serves: the CLI checks it before it sends a key.
  app.use("*", async (c, next) => { await next(); c.header(homeIdHeader, hub.homeId); });
  app.use(
    "*",
    bodyLimit({
      maxSize: requestBodyMaxBytes,
      // The rest of the body is not read: close the connection so no client reuses a half-read socket.
      onError: (c) => c.json({ error: t(lang, "body.tooLarge", { limit: requestBodyMaxBytes }) }, 413, { connection: "close" }),
    }),
  );

  /** Reads a body as UTF-8 text, or answers 400 when it is not UTF-8. */
  async function bodyText(c: Context): Promise<string | Response> {
    const text = strictUtf8(await c.req.arrayBuffer());
    return text ?? fail(c, 400, t(lang, "body.utf8"));
  }

  /** Reads and validates a JSON body; an empty body counts as `{}` where `emptyOk`. */
  async function body<N extends Validated>(c: Context, schema: N, emptyOk = false): Promise<Shape<N> | Response> {
    const text = await bodyText(c);
    if (text instanceof Response) return text;
    let value: unknown;
    if (text.trim() === "" && emptyOk) value = {};
    else {
      try {
        value = JSON.parse(text);
      } catch {
        return fail(c, 400, t(lang, "body.json"));
      }
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) return fail(c, 400, t(lang, "body.object"));
    const checked = check(schema, value, lang);
    return checked.ok ? checked.value : fail(c, 400, checked.error);
  }

  const keyHashOf = (c: Context) => {
    const b = bearer(c.req.raw);
    return b ? hashKey(b) : null;
  };

  const idParam = (c: Context, name: string): number | null => {
    const v = c.req.param(name) ?? "";
    return /^[1-9]\d{0,14}$/.test(v) ? Number(v) : null;
  };

  /**
   * The permission table checked before the body is read, so a caller without the right key learns nothing
   * about validation. The kernel checks again when it decides.
   */
  function gate(c: Context, kinds: KeyKind[]): Response | null {
    const keyHash = keyHashOf(c);
    if (!keyHash) return fail(c, 401, t(lang, "auth.missing"));
    const who = callerOf(hub.store.view, keyHash);
    if (!who) return fail(c, 401, t(lang, "auth.unknown"));
    if (!kinds.includes(who.kind)) return fail(c, 403, t(lang, "auth.kind", { actual: who.kind, expected: kinds.join("/") }));
    return null;
  }

  /**
   * The run token of `POST /v1/runs/<id>/started|result`, checked before the body is read: none → 401, no such run →
   * 404, not the run's current token → 403 (the kernel checks again when it decides).
   */
  function runGate(c: Context, run: number | null): Response | null {
    const token = bearer(c.req.raw);
    if (!token) return fail(c, 401, t(lang, "auth.missing"));
    const row = run === null ? undefined : hub.store.view.get<RunRow>("runs", run);
    if (!row) return fail(c, 404, t(lang, "notFound.run", { id: c.req.param("id") ?? "" }));
    if (!runTokenMatches(hub.env.master, row, token)) return fail(c, 403, t(lang, "auth.token"));
    return null;
  }

  async function answer(c: Context, input: Input): Promise<Response> {
    try {
      const d = await hub.submit(input);
      return c.json(d.body as J, d.status as 200);
    } catch (e) {
      return fail(c, 503, `busy, try again: ${(e as Error).message}`);
    }
  }

  app.get("/v1/health", async (c) => c.json({ ok: true, version: await releaseTag() }));
  // A browser opening the hub's address: what this is and where to look (root-page.ts).
  app.get("/", (c) => c.html(rootPage(lang), 200, rootPageHeaders));

  // Card link pages: plain HTML, no script; the link is the permission to answer this one card.
  const linkHeaders = { "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'", "cache-control": "no-store", "referrer-policy": "no-referrer" };
  app.get("/c/:id/:token", (c) => {
    const id = idParam(c, "id");
    const p = linkPage(hub.store.view, hub.env, hub.now(), id ?? 0, c.req.param("token"));
    return c.html(p.html, p.status as 200, linkHeaders);
  });
  app.post("/c/:id/:token", async (c) => {
    const id = idParam(c, "id") ?? 0;
    const token = c.req.param("token");
    const page = (status: number, error: string | null) => {
      const p = linkPage(hub.store.view, hub.env, hub.now(), id, token);
      const html = error === null ? p.html : p.html.replace("<body>", `<body><p><strong>${error.replace(/[&<>"']/g, "")}</strong></p>`);
      return c.html(html, status as 400, linkHeaders);
    };
    // The link is the credential: checked before the body is read, so a stranger's slow body holds nothing.
    const linked = linkedCard(hub.store.view, hub.env, hub.now(), id, token);
    if ("status" in linked) return page(linked.status, null);
    const raw = strictUtf8(await c.req.arrayBuffer());
    const form = raw === null ? null : formFields(raw);
    if (form === null) return page(400, t(lang, "body.utf8"));
    const choiceRaw = form.choice;
    const text = typeof form.text === "string" && form.text.trim() !== "" ? [...form.text].slice(0, 4000).join("") : null;
    if (text !== null) {
      const checked = check("Answer", { text }, lang);
      if (!checked.ok) return page(400, checked.error);
    }
    const choice = choiceRaw !== undefined && /^\d{1,3}$/.test(choiceRaw) ? Number(choiceRaw) : null;
    const d = await hub.submit({ kind: "linkAnswer", card: id, token, choice, text }).catch(() => null);
    if (d && d.status === 200) return c.redirect(`/c/${id}/${encodeURIComponent(token)}`, 303);
    return page(d?.status ?? 503, d ? (d.body as { error: string }).error : "busy, try again");
  });

  app.post("/v1/events", async (c) => {
    const denied = gate(c, ["source"]);
    if (denied) return denied;
    const ev = await body(c, "EventIn");
    if (ev instanceof Response) return ev;
    return answer(c, { kind: "event", keyHash: keyHashOf(c), event: ev });
  });

  /** Logs why a declared webhook source refused a delivery, at most once per reason and interval. */
  const logRefusal = (source: string, reason: string) => callerLog.say(`in\u0000${source}\u0000${reason}`, t(lang, "in.refusedLog", { source, reason }));

  app.post("/v1/in/:source", async (c) => {
    const source = c.req.param("source");
    // Everything that can be checked without the body is, before reading it; the caller has no key, so every such
    // refusal is the same 401 that names nothing (which sources exist, which have adapters, where the home is).
    const refused = () => c.json({ error: t(lang, "in.refused") }, 401, { connection: "close" });
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
    const raw = await bodyText(c);
    if (raw instanceof Response) return raw;
    const headers: Record<string, string> = {};
    c.req.raw.headers.forEach((v, k) => (headers[k.toLowerCase()] = v));
    let events: unknown;
    try {
      events = adapter({ headers, body: raw, secret });
    } catch (e) {
      const status = (e as { status?: number }).status;
      return fail(c, status === 401 || status === 403 ? status : 400, (e as Error).message);
    }
    if (!Array.isArray(events)) return fail(c, 400, t(lang, "in.bad", { n: 0, error: "the adapter did not return a list" }));
    const checked: EventIn[] = [];
    for (const [i, e] of events.entries()) {
      const r = check("EventIn", relayedEvent(e), lang);
      if (!r.ok) return fail(c, 400, t(lang, "in.bad", { n: i, error: r.error }));
      checked.push(r.value);
    }
    return answer(c, { kind: "eventsIn", source, events: checked });
  });

  app.post("/v1/tell", async (c) => {
    const denied = gate(c, ["source", "worker"]);
    if (denied) return denied;
    const b = await body(c, "TellBody");
    if (b instanceof Response) return b;
    if (b.ask?.recommend !== undefined && b.ask.recommend >= b.ask.options.length) return fail(c, 400, t(lang, "field.range", { field: "ask.recommend" }));
    return answer(c, { kind: "tell", keyHash: keyHashOf(c), body: b });
  });

  app.get("/v1/work", async (c) => {
    const denied = gate(c, ["worker"]);
    if (denied) return denied;
    const q = c.req.query();
    const claim = q.claim ?? "";
    if (claim.length < 1 || claim.length > claimIdMaxChars) return fail(c, 400, t(lang, "work.claim", { limit: claimIdMaxChars }));
    if (lineForbidden.test(claim)) return fail(c, 400, t(lang, "work.claimControl"));
    const wait = intParam(q.wait, 0);
    if (wait === null || wait < 0) return fail(c, 400, t(lang, "query.invalid", { field: "wait" }));
    const capacity = intParam(q.capacity, 1);
    if (capacity === null || capacity < 0) return fail(c, 400, t(lang, "query.invalid", { field: "capacity" }));
    const running: number[] = [];
    for (const part of (q.running ?? "").split(",").filter((p) => p !== "")) {
      if (!/^[1-9]\d{0,14}$/.test(part) || running.length >= 1000) return fail(c, 400, t(lang, "query.invalid", { field: "running" }));
      running.push(Number(part));
    }
    return poll(c, { kind: "work", keyHash: keyHashOf(c), claim, running, capacity }, wait);
  });

  app.get("/v1/cards/next", async (c) => {
    const denied = gate(c, ["channel"]);
    if (denied) return denied;
    const wait = intParam(c.req.query("wait"), 0);
    if (wait === null || wait < 0) return fail(c, 400, t(lang, "query.invalid", { field: "wait" }));
    return poll(c, { kind: "cardsNext", keyHash: keyHashOf(c) }, wait);
  });

  async function poll(c: Context, input: Extract<Input, { kind: "work" | "cardsNext" }>, waitSeconds: number): Promise<Response> {
    try {
      const d = await hub.poll(input, Math.min(waitSeconds, longPollMaxSeconds) * 1000, c.req.raw.signal);
      return c.json(d.body as J, d.status as 200);
    } catch (e) {
      return fail(c, 503, `busy, try again: ${(e as Error).message}`);
    }
  }

  app.post("/v1/runs/:id/started", async (c) => {
    const run = idParam(c, "id");
    const denied = runGate(c, run);
    if (denied || run === null) return denied!;
    const b = await body(c, "Started", true);
    if (b instanceof Response) return b;
    return answer(c, { kind: "started", run, token: bearer(c.req.raw) ?? "", session: b.session ?? null, link: b.link ?? null });
  });

  app.post("/v1/runs/:id/result", async (c) => {
    const run = idParam(c, "id");
    const denied = runGate(c, run);
    if (denied || run === null) return denied!;
    const b = await body(c, "Result");
    if (b instanceof Response) return b;
    const badLater = (b.later ?? []).findIndex((l) => "at" in l && !isRealIsoDate(l.at));
    if (badLater >= 0) return fail(c, 400, t(lang, "field.pattern", { field: `later[${badLater}].at`, what: "a real ISO date-time with Z or an offset" }));
    const badAsk = (b.ask ?? []).findIndex((a) => a.recommend !== undefined && a.recommend >= a.options.length);
    if (badAsk >= 0) return fail(c, 400, t(lang, "field.range", { field: `ask[${badAsk}].recommend` }));
    return answer(c, { kind: "result", run, token: bearer(c.req.raw) ?? "", result: b, hash: hashText(canonicalJson(b)) });
  });

  app.post("/v1/runs/:id/cancel", async (c) => {
    const denied = gate(c, ["owner"]);
    if (denied) return denied;
    const run = idParam(c, "id");
    const b = await body(c, "CancelRun", true);
    if (b instanceof Response) return b;
    if (run === null) return fail(c, 404, t(lang, "notFound.run", { id: c.req.param("id") }));
    return answer(c, { kind: "cancel", keyHash: keyHashOf(c), run });
  });

  app.post("/v1/cards/:id/:action{delivered|failed|answer|resolve}", async (c) => {
    const card = idParam(c, "id");
    const action = c.req.param("action");
    const keyHash = keyHashOf(c);
    const denied = gate(c, action === "answer" ? ["channel", "owner"] : action === "resolve" ? ["owner"] : ["channel"]);
    if (denied) return denied;
    const notFound = () => fail(c, 404, t(lang, "notFound.card", { id: c.req.param("id") }));
    switch (action) {
      case "delivered": {
        const b = await body(c, "Delivered");
        if (b instanceof Response) return b;
        return card === null ? notFound() : answer(c, { kind: "delivered", keyHash, card, version: b.version, ref: b.ref });
      }
      case "failed": {
        const b = await body(c, "Failed");
        if (b instanceof Response) return b;
        return card === null ? notFound() : answer(c, { kind: "failed", keyHash, card, version: b.version, error: b.error ?? null });
      }
      case "answer": {
        const b = await body(c, "Answer");
        if (b instanceof Response) return b;
        return card === null ? notFound() : answer(c, { kind: "answer", keyHash, card, choice: b.choice ?? null, text: b.text ?? null, by: b.by ?? null, ref: b.ref ?? null });
      }
      default: {
        const b = await body(c, "ResolveCard", true);
        if (b instanceof Response) return b;
        return card === null ? notFound() : answer(c, { kind: "resolve", keyHash, card, reason: b.reason ?? null });
      }
    }
  });

  app.post("/v1/rules/:name/:action{pause|resume|run}", async (c) => {
    const denied = gate(c, ["owner"]);
    if (denied) return denied;
    const rule = c.req.param("name");
    const keyHash = keyHashOf(c);
    switch (c.req.param("action")) {
      case "pause": {
        const b = await body(c, "PauseBody", true);
        if (b instanceof Response) return b;
        if (typeof b.until === "string" && !isRealIsoDate(b.until)) return fail(c, 400, t(lang, "field.pattern", { field: "until", what: "a real ISO date-time with Z or an offset" }));
        return answer(c, { kind: "pause", keyHash, rule, reason: b.reason || null, until: b.until ?? null });
      }
      case "resume": {
        const b = await body(c, "ResumeBody", true);
        if (b instanceof Response) return b;
        return answer(c, { kind: "resume", keyHash, rule });
      }
      default: {
        const b = await body(c, "RunNowBody", true);
        if (b instanceof Response) return b;
        return answer(c, { kind: "runNow", keyHash, rule, subject: b.subject ?? null, reason: b.reason ?? null });
      }
    }
  });

  app.get("/v1/stream", (c) => {
    const denied = gate(c, ["owner"]);
    if (denied) return denied;
    const from = c.req.header("last-event-id") ?? c.req.query("after") ?? "0";
    if (!/^\d{1,15}$/.test(from)) return fail(c, 400, t(lang, "query.invalid", { field: "after" }));
    const keyHash = keyHashOf(c)!;
    const signal = c.req.raw.signal;
    return streamSSE(c, async (stream) => {
      let after = Number(from);
      let wake: (() => void) | null = null;
      const listener = () => wake?.();
      hub.listeners.add(listener);
      signal.addEventListener("abort", listener);
      try {
        while (!signal.aborted && !stream.aborted && hub.keyValid(keyHash)) {
          // Read the log a page at a time and send it as fast as the subscriber takes it; never the whole log.
          const page = hub.store.factsAfter(after, streamPageFacts);
          for (const f of page) {
            await stream.writeSSE({ id: String(f.seq), event: "fact", data: JSON.stringify(publicFact(f)) });
            after = f.seq;
          }
          if (page.length === streamPageFacts) continue;
          await new Promise<void>((resolve) => {
            wake = resolve;
            setTimeout(resolve, streamKeepAliveMs);
          });
          wake = null;
          if (hub.store.seq === after && !signal.aborted) await stream.write(": keep-alive\n\n");
        }
      } finally {
        hub.listeners.delete(listener);
        signal.removeEventListener("abort", listener);
      }
    });
  });

  app.get("/v1/runs/:id/why", (c) => {
    const denied = gate(c, ["owner"]);
    if (denied) return denied;
    const run = idParam(c, "id");
    if (run === null || !hub.store.view.get("runs", run)) return fail(c, 404, t(lang, "notFound.run", { id: c.req.param("id") }));
    return c.json({ run, facts: hub.store.factsOfRun(run).map((f) => withoutRuleBodies(publicFact(f))) });
  });

  app.get("/v1/state", (c) => {
    const denied = gate(c, ["owner"]);
    if (denied) return denied;
    const beforeRaw = c.req.query("before");
    const before = beforeRaw === undefined ? null : /^[1-9]\d{0,14}$/.test(beforeRaw) ? Number(beforeRaw) : NaN;
    if (Number.isNaN(before)) return fail(c, 400, t(lang, "query.invalid", { field: "before" }));
    return c.json(buildState(hub.store.view, hub.env, hub.now(), hub.store.seq, before));
  });

  app.on(["POST", "DELETE"], "/v1/keys/:kind/:name", async (c) => {
    const denied = gate(c, ["owner"]);
    if (denied) return denied;
    const kind = c.req.param("kind") as KeyKind;
    const name = c.req.param("name");
    if (!keyKinds.includes(kind)) return fail(c, 400, t(lang, "key.kind"));
    if (c.req.method === "DELETE") {
      if (!isOldKeyName(name)) return fail(c, 400, t(lang, "key.oldName"));
      return answer(c, { kind: "keyRemove", keyHash: keyHashOf(c), local: false, keyKind: kind, name });
    }
    if (!isName(name)) return fail(c, 400, t(lang, "key.name"));
    const key = newKey();
    const d = await hub.submit({ kind: "keyNew", keyHash: keyHashOf(c), local: false, keyKind: kind, name, newHash: hashKey(key) }).catch((e: Error) => e);
    if (d instanceof Error) return fail(c, 503, d.message);
    if (d.status !== 200) return c.json(d.body as J, d.status as 400);
    return c.json({ ok: true, kind, name, key });
  });

  app.notFound((c) => fail(c, 404, t(lang, "notFound.route", { method: c.req.method, path: new URL(c.req.url).pathname })));
  // The message may name files of the home: it goes to the hub's log, not to a caller that may hold no key.
  // A client that hung up is no internal error; the others are logged at most once a minute per route and error.
  app.onError((e, c) => {
    if (clientHungUp(c.req.raw, e)) return fail(c, 400, t(lang, "body.aborted"));
    const kind = `${c.req.method} ${c.req.routePath} ${(e as NodeJS.ErrnoException).code ?? e.name}`;
    callerLog.say(kind, `internal error: ${c.req.method} ${new URL(c.req.url).pathname}: ${e.stack ?? e.message}`);
    return fail(c, 500, t(lang, "internal"));
  });
  return app;
}

function intParam(v: string | undefined, dflt: number): number | null {
  if (v === undefined || v === "") return dflt;
  return /^\d{1,6}$/.test(v) ? Number(v) : null;
}
