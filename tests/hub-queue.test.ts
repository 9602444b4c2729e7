/**
 * The hub's input queue is bounded (issue 27 #5; kernel/limits.ts `hubInputQueueMax`): with that many callers' inputs
 * waiting for a commit, the next is refused at once — 503 with the catalog's text and `Retry-After` over HTTP — and
 * changes nothing, while the hub's own inputs (rules, deadlines) are never refused. What waited is committed as usual.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { Hub, QueueFull } from "../src/host/hub.js";
import { createApp } from "../src/host/http.js";
import { hubInputQueueRetryAfterSeconds } from "../src/kernel/limits.js";
import { hashKey } from "../src/kernel/credentials.js";
import { checkAnswer, makeHome } from "./helpers.js";

for (const lang of ["en", "zh"] as const) {
  test(`a full input queue refuses the next caller with 503, its text (${lang}) and Retry-After, and changes nothing`, async () => {
    const made = makeHome();
    const hub = new Hub({ home: made.home, lang, checkAnswer, inputQueueMax: 3 });
    try {
      await hub.start();
      const app = createApp(hub);
      const seqBefore = hub.store.view.get("meta", "ids");
      const event = (id: string) => ({ kind: "event", keyHash: hashKey(made.keys.source), event: { id, type: "alert.x" } }) as const;
      // Three inputs wait for the next commit (it runs after this turn of the event loop): the queue is full.
      const waiting = ["q1", "q2", "q3"].map((id) => hub.submit(event(id)));
      await assert.rejects(hub.submit(event("q4")), (e) => e instanceof QueueFull && e.message === (lang === "en"
        ? "busy: 3 requests are already waiting, try again shortly" : "中台忙：已有 3 个请求在排队，请稍后再试"));
      const res = await app.request("/v1/work?claim=full", { headers: { authorization: `Bearer ${made.keys.worker}` } });
      assert.equal(res.status, 503);
      assert.equal(res.headers.get("retry-after"), String(hubInputQueueRetryAfterSeconds));
      assert.deepEqual(await res.json(), { error: lang === "en" ? "busy: 3 requests are already waiting, try again shortly" : "中台忙：已有 3 个请求在排队，请稍后再试", code: "hub.queueFull", params: { limit: 3 } });
      // What waited is committed; the refused inputs wrote nothing (no heartbeat of the worker, no fourth event).
      assert.deepEqual((await Promise.all(waiting)).map((d) => d.status), [200, 200, 200]);
      assert.equal(hub.store.view.get("meta", "ids")!.event, (seqBefore?.event ?? 0) + 3);
      assert.equal(hub.store.view.get("workers", "w1"), undefined);
      // The queue drained: the next caller is taken.
      assert.equal((await app.request("/v1/work?claim=after", { headers: { authorization: `Bearer ${made.keys.worker}` } })).status, 200);
    } finally {
      await hub.close();
      rmSync(made.dir, { recursive: true, force: true });
    }
  });
}
