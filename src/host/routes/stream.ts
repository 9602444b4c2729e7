/**
 * The stream and `why` (protocol.md 日志与确定性): every fact in order as server-sent events from a sequence number
 * on, and the facts about one run. Neither carries key hashes or capability tokens; `why` carries no rule bodies.
 */
import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import type { Hub } from "../hub.js";
import { publicFact, withoutArtifactTexts, withoutRuleBodies } from "../facts.js";
import { t, refusal } from "../../i18n/messages.js";
import { queryNumber, refuse, reply, route } from "./endpoint.js";
import { artifactFileRe, idParam } from "./read.js";
import { artifactKey } from "../../kernel/tables.js";
import { artifactPath } from "../../kernel/text.js";

/** Facts read from the log per page while streaming. */
const streamPageFacts = 256;
/** A comment line keeps an idle stream open through proxies (ms). */
const streamKeepAliveMs = 25_000;

/** The routes of the stream and `why`. */
export function streamRoutes(hub: Hub): Hono {
  const app = new Hono();

  // `after` (or Last-Event-ID): the stream goes on from the next fact, for as long as the owner key stays valid.
  route(app, hub, "stream", (c, req) => {
    const keyHash = req.keyHash ?? "";
    const signal = c.req.raw.signal;
    return streamSSE(c, async (stream) => {
      let after = queryNumber(req.query.after, 0);
      let wake: (() => void) | null = null;
      const listener = () => wake?.();
      hub.listeners.add(listener);
      hub.console.ended.add(listener);
      signal.addEventListener("abort", listener);
      // A console's stream lasts as long as its session (ended from the CLI, by sign-out, or with its key).
      const session = req.session;
      try {
        while (!signal.aborted && !stream.aborted && hub.keyValid(keyHash) && (session === null || hub.console.alive(session))) {
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
        hub.console.ended.delete(listener);
        signal.removeEventListener("abort", listener);
      }
    });
  });

  route(app, hub, "why", (c) => {
    const run = idParam(c, "id");
    if (run === null || !hub.store.view.get("runs", run)) return refuse(c, 404, refusal(hub.env.lang, "notFound.run", { id: c.req.param("id") ?? "" }));
    const artifacts = hub.store.view.where("artifacts", "run = ? ORDER BY key", run).map(({ row }) => ({ file: row.file, bytes: row.bytes, path: artifactPath(run, row.file) }));
    // `artifacts` only when the run sent some: the answer of a run without stays as it was before artifacts.
    return reply(c, hub, "why", { run, facts: hub.store.factsOfRun(run).map((f) => withoutArtifactTexts(withoutRuleBodies(publicFact(f)))), ...(artifacts.length ? { artifacts } : {}) });
  });

  // A run's transcript (issue 30), a page from a byte offset: the console follows a live run by asking from `next`.
  route(app, hub, "transcript", (c, req) => {
    const run = idParam(c, "id");
    const row = run === null ? undefined : hub.store.view.get("runs", run);
    if (run === null || !row) return refuse(c, 404, refusal(hub.env.lang, "notFound.run", { id: c.req.param("id") ?? "" }));
    const page = hub.transcripts.page(run, queryNumber(req.query.after, 0));
    const { entries, next, more, cut } = page;
    return reply(c, hub, "transcript", { run, entries, next, more, cut, ended: row.endedAt !== null, removed: !page.exists && hub.transcripts.removed(run) });
  });

  // A workflow's file (issue 18) as plain text that nothing can run: not sniffed as HTML, and sandboxed should a
  // browser render it anyway (no script, no same origin, so no use of the owner's cookie).
  route(app, hub, "artifact", (c) => {
    const run = idParam(c, "id");
    const file = c.req.param("file") ?? "";
    const row = run !== null && artifactFileRe.test(file) ? hub.store.view.get("artifacts", artifactKey(run, file)) : undefined;
    if (!row) return refuse(c, 404, refusal(hub.env.lang, "artifact.notFound", { run: c.req.param("id") ?? "", file }));
    return c.body(row.text, 200, { "content-type": "text/plain; charset=utf-8", "x-content-type-options": "nosniff", "content-security-policy": "sandbox" });
  });
  return app;
}
