/**
 * A minimal event (source) plugin: checks the `x-shop-signature` header (HMAC-SHA256 of the raw body with the
 * source's secret, hex) in constant time, then turns a shop order into an event. Throw to refuse a request.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

interface Args { headers: Record<string, string>; body: string; secret: string | null }

/** The header with the signature: the hub refuses a request without it before reading the body. */
export const signatureHeader = "x-shop-signature";

export default function helloSource({ headers, body, secret }: Args) {
  if (!secret) throw Object.assign(new Error("no secret configured"), { status: 401 });
  const want = createHmac("sha256", secret).update(body).digest("hex");
  const got = headers["x-shop-signature"] ?? "";
  if (got.length !== want.length || !timingSafeEqual(Buffer.from(got), Buffer.from(want))) {
    throw Object.assign(new Error("bad x-shop-signature"), { status: 401 });
  }
  const order = JSON.parse(body) as { id: number; status: string; customer?: string };
  return [{ id: `order:${order.id}:${order.status}`, type: `order.${order.status}`, subject: `#${order.id}`, summary: `Order ${order.id} is ${order.status}` }];
}
