/**
 * The source plugin contract (plugins.md 事件插件): a source plugin turns one request to `POST /v1/in/<source>` into
 * events. It only translates — no requests, no state — and refuses a request by throwing. Part of the plugin SDK
 * (`agent-autoloop/sdk`); the hub calls source plugins with the same definitions (src/host/http.ts).
 */
import type { EventIn } from "../protocol/schema.js";

/** What the hub hands a source plugin for one request. */
export interface SourceArgs {
  /** The request's headers, names in lowercase. */
  headers: Record<string, string>;
  /** The raw body as UTF-8 text (check a signature over exactly this). */
  body: string;
  /** The source's secret from secrets.env (`AGENT_AUTOLOOP_SECRET_<SOURCE>`), or null when none is set. */
  secret: string | null;
}

/** One event a source plugin returns: the shape of an event in `POST /v1/events` (protocol.md 事件). */
export type SourceEvent = EventIn;

/**
 * A source plugin (a source.ts's default export): the events of one request, possibly none. Throwing refuses the
 * request: with the thrown error's `status` when it is 401 or 403 (see `Refusal`), else 400, and its message.
 */
export type SourcePlugin = (args: SourceArgs) => SourceEvent[];

/**
 * The module of a source plugin: its default export, and `signatureHeader`, the header that carries the request's
 * signature (the hub refuses a request without it before reading the body).
 */
export interface SourceModule { default: SourcePlugin; signatureHeader?: string }

/** An error a source plugin throws to refuse a request with `status` (401 or 403; the hub answers others with 400). */
export class Refusal extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}
