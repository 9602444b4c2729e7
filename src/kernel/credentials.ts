/**
 * Keys and tokens (protocol.md 谁能做什么, 日志与确定性): access keys are random and kept only as SHA-256;
 * run tokens and card-link tokens are derived from the master key with HMAC-SHA256 and never stored.
 * This file decides stored content (key hashes): changing it changes the format fingerprint.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";

/** SHA-256 of a bearer key, hex. The only form in which keys are stored. */
export function hashKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

/** SHA-256 of any text, hex (request bodies for replay checks, rule files). */
export function hashText(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/**
 * The token of one claim of one attempt of a run: HMAC(master, "run:<run>:<attempt>:<claims>"), base64url.
 * A repeated claim increments `claims`, so the previous token stops working.
 */
export function runToken(master: Buffer, run: number, attempt: number, claims: number): string {
  return createHmac("sha256", master).update(`run:${run}:${attempt}:${claims}`).digest("base64url");
}

/** The token of a card's link page: HMAC(master, "card:<id>:<created ms>"), base64url. */
export function cardLinkToken(master: Buffer, card: number, createdAtMs: number): string {
  return createHmac("sha256", master).update(`card:${card}:${createdAtMs}`).digest("base64url");
}

/**
 * What the hub keeps of an async tool call's task id, the only credential of its callback (issue 16):
 * HMAC(master, "task:<id>"), hex. Without the master key it says nothing of the id, even a short or guessable one.
 */
export function toolTaskHash(master: Buffer, task: string): string {
  return createHmac("sha256", master).update(`task:${task}`).digest("hex");
}

/** What the hub keeps of a call's callback key (issue 34): HMAC(master, "callback:<key>"), hex. */
export function toolCallbackKeyHash(master: Buffer, key: string): string {
  return createHmac("sha256", master).update(`callback:${key}`).digest("hex");
}

/** Constant-time comparison of two strings (false when lengths differ). */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, "utf8");
  const y = Buffer.from(b, "utf8");
  return x.length === y.length && timingSafeEqual(x, y);
}
