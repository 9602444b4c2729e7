/**
 * `POST /v1/tools/invoke` (owner; issue 34 #5, issue 26 round 6): the owner's own call of a tool, run by the hub's own
 * tool host — the one the agents' calls go through, with the hub's real plugin roots (`serve --plugins` included),
 * PATH and HOME, so that a sandbox's binds are checked against what the hub really runs code from, and service
 * plugins, which only `serve` runs, can be called. Decided and recorded as `POST /v1/tools/calls` and its outcome are
 * (session `owner:<key name>`, never prompted; src/tools/owner-call.ts). The answer is newline-delimited JSON written
 * as the call goes: `{"call"}` once decided, `{"progress"}` per notification (at most `toolInvokeProgressLinesMax`),
 * an empty line every `toolInvokeHeartbeatMs`, and last `{"end"}` (or `{"error"}` when the call could not be recorded).
 * An async plugin's task is parked and its end read at `GET /v1/tools/calls/:call/result`. The call is stopped when
 * the caller goes away or after `toolInvokeStreamMaxMs`.
 */
import type { Context, Hono } from "hono";
import { stream } from "hono/streaming";
import type { Hub } from "../hub.js";
import { QueueFull } from "../hub.js";
import { callbackUrlOf } from "../../protocol/tool-calls.js";
import type { ErrorBody, ToolInvokeLine } from "../../protocol/responses.js";
import { toolInvokeHeartbeatMs, toolInvokeProgressLinesMax, toolInvokeStreamMaxMs } from "../../kernel/limits.js";
import { refusal, refusalBody } from "../../i18n/messages.js";
import { langOfAcceptLanguage } from "../accept-language.js";
import { answerMismatch, route } from "./endpoint.js";

/** The hub could not record the call: the body of its refusal. */
class NotRecorded extends Error {
  constructor(readonly body: ErrorBody) {
    super(body.error);
  }
}

/** The body of an input the hub could not take (its queue is full, it is closing). */
function notTaken(hub: Hub, e: unknown): ErrorBody {
  if (e instanceof NotRecorded) return e.body;
  if (e instanceof QueueFull) return refusalBody(hub.env.lang, e.text);
  return refusal(hub.env.lang, "hub.busyBecause", { error: (e as Error).message });
}

/** Mounts `POST /v1/tools/invoke` on the tool routes. */
export function toolInvokeRoute(app: Hono, hub: Hub): void {
  route(app, hub, "ownerToolInvoke", (c: Context, req) => {
    const keyHash = req.keyHash ?? "";
    // The caller's own language for the texts the hub words for this call (a deny's reason), as the CLI's were.
    const lang = langOfAcceptLanguage(c.req.header("accept-language"), hub.env.lang);
    const origin = new URL(c.req.url).origin;
    c.header("content-type", "application/x-ndjson; charset=utf-8");
    c.header("x-content-type-options", "nosniff");
    return stream(c, async (out) => {
      const stop = new AbortController();
      const signal = c.req.raw.signal;
      const abort = () => stop.abort();
      signal.addEventListener("abort", abort, { once: true });
      const limit = setTimeout(abort, toolInvokeStreamMaxMs);
      // One write after another, in order: progress comes from the plugin's side while the call runs.
      let writes = Promise.resolve();
      const write = (text: string) => {
        writes = writes.then(() => (out.aborted ? undefined : out.write(text).then(() => {}))).catch(() => {});
      };
      const send = (line: ToolInvokeLine) => {
        const problem = hub.opts.checkAnswer?.("ownerToolInvoke", 200, line) ?? null;
        write(JSON.stringify(problem === null ? line : { error: { error: answerMismatch("ownerToolInvoke", problem) } }) + "\n");
      };
      const beat = setInterval(() => write("\n"), toolInvokeHeartbeatMs);
      let progressLines = 0;
      try {
        const { ownerCall } = await import("../../tools/index.js");
        const decided = async <T>(input: Parameters<Hub["submit"]>[0]): Promise<T> => {
          const d = await hub.submit(input);
          if (d.status !== 200) throw new NotRecorded(d.body as ErrorBody);
          return d.body as T;
        };
        const host = await hub.toolHost();
        host.registry.rescan(); // the folders read again, as for GET /v1/tools: an edited manifest counts at once
        const end = await ownerCall(host, {
          decide: (body) => decided({ kind: "ownerToolCall", keyHash, body }),
          outcome: async (call, body) => {
            await decided({ kind: "ownerToolOutcome", keyHash, call, body });
          },
          callbackUrl: async (key) => callbackUrlOf(origin, key),
        }, req.body.tool, req.body.args, {
          lang, signal: stop.signal,
          onCall: (call) => send({ call }),
          onProgress: (p) => {
            if (++progressLines <= toolInvokeProgressLinesMax) send({ progress: p });
          },
        });
        send({ end });
      } catch (e) {
        send({ error: notTaken(hub, e) });
      } finally {
        clearInterval(beat);
        clearTimeout(limit);
        signal.removeEventListener("abort", abort);
        await writes;
      }
    });
  });
}
