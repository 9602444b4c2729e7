/**
 * Keys and tokens (protocol.md 谁能做什么, 日志与确定性): known answers for the derivations, so that a change to what
 * is hashed is caught (it would also change the format fingerprint and every outstanding token and card link).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { cardLinkToken, hashKey, hashText, runToken, safeEqual } from "../src/kernel/credentials.js";

const master = Buffer.alloc(32, 1);

test("key hashes, run tokens and card-link tokens have their known values", () => {
  assert.equal(hashKey("key"), "2c70e12b7a0646f92279f427c7b38e7334d8e5389cff167a1dc30e73f826b683");
  assert.equal(hashText("key"), hashKey("key"));
  assert.equal(runToken(master, 5, 2, 3), "0_qAuVgsrMMeqz8I6JRaVirq9XPrxcaD8Nj6DEddcHY");
  assert.equal(cardLinkToken(master, 7, Date.parse("2026-11-02T08:00:00Z")), "vgiNV7dTVWvX7bQGCHhzfhpOH-33i89096-bOrhHcCg");
});

test("tokens differ by every part they are derived from", () => {
  const runs = [runToken(master, 5, 2, 3), runToken(master, 6, 2, 3), runToken(master, 5, 3, 3), runToken(master, 5, 2, 4), runToken(Buffer.alloc(32, 2), 5, 2, 3)];
  assert.equal(new Set(runs).size, runs.length);
  const t = Date.parse("2026-11-02T08:00:00Z");
  const cards = [cardLinkToken(master, 7, t), cardLinkToken(master, 8, t), cardLinkToken(master, 7, t + 1), cardLinkToken(Buffer.alloc(32, 2), 7, t)];
  assert.equal(new Set(cards).size, cards.length);
});

test("safeEqual: equal strings only, also when lengths differ or characters are multi-byte", () => {
  assert.equal(safeEqual("abc", "abc"), true);
  assert.equal(safeEqual("abc", "abd"), false);
  assert.equal(safeEqual("abc", "abcd"), false);
  assert.equal(safeEqual("é", "e\u0301"), false);
  assert.equal(safeEqual("", ""), true);
});
