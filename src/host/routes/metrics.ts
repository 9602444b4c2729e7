/**
 * `GET /metrics` (issue 32): the Prometheus text format, for the owner's key or a `metrics` key (which reads this and
 * nothing else). What it holds and how it is computed: src/host/metrics.ts, docs/metrics.md.
 */
import { Hono } from "hono";
import type { Hub } from "../hub.js";
import { route } from "./endpoint.js";
import { metricsContentType, metricsText } from "../metrics.js";

/** The metrics route. */
export function metricsRoutes(hub: Hub): Hono {
  const app = new Hono();
  route(app, hub, "metrics", async (c) => c.body(await metricsText(hub), 200, { "content-type": metricsContentType, "cache-control": "no-store" }));
  return app;
}
