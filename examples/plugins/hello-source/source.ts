/**
 * A minimal event (source) plugin: checks the `x-shop-signature` header (HMAC-SHA256 of the raw body with the
 * source's secret, hex) in constant time, then turns a shop order into an event. Throw to refuse a request: a
 * `Refusal` from the plugin SDK (`agent-autoloop/sdk`) carries the HTTP status (401 or 403; anything else is 400).
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { Refusal, type SourceArgs, type SourceEvent } from "agent-autoloop/sdk";

/** The header with the signature: the hub refuses a request without it before reading the body. */
export const signatureHeader = "x-shop-signature";

export default function helloSource({ headers, body, secret }: SourceArgs): SourceEvent[] {
  if (!secret) throw new Refusal(401, "no secret configured");
  const want = createHmac("sha256", secret).update(body).digest("hex");
  const got = headers["x-shop-signature"] ?? "";
  if (got.length !== want.length || !timingSafeEqual(Buffer.from(got), Buffer.from(want))) throw new Refusal(401, "bad x-shop-signature");
  const order = JSON.parse(body) as { id: number; status: string; customer?: string };
  return [{ id: `order:${order.id}:${order.status}`, type: `order.${order.status}`, subject: `#${order.id}`, summary: `Order ${order.id} is ${order.status}` }];
}
