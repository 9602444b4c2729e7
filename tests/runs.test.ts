import { test, beforeEach, afterEach } from "node:test";
import assert from "node:assert/strict";
import { hubFixture, type Fixture } from "./helpers.js";

let f: Fixture;
beforeEach(async () => {
  f = await hubFixture();
});
afterEach(async () => {
  await f.close();
});

const event = (id: string, extra: Record<string, unknown> = {}) => f.call("POST", "/v1/events", f.keys.source, { id, type: "alert.cpu", ...extra });
const work = (claim: string, q = "", key = f.keys.worker) => f.call("GET", `/v1/work?claim=${claim}${q}`, key);

test("a worker claims a run; the job has exactly the protocol's shape", async () => {
  await event("e1", { subject: "#1", summary: "hot", detail: "d", link: "https://x.example/1" });
  const r = await work("c1");
  assert.equal(r.status, 200);
  const job = r.body.job;
  assert.equal(typeof job.token, "string");
  assert.deepEqual({ ...job, token: "T", context: { ...job.context, events: job.context.events.map((e: any) => ({ ...e, receivedAt: "R" })) } }, {
    run: 1, token: "T", attempt: 1,
    rule: { name: "alerts", cwd: "/tmp", skill: null, prompt: "handle it" },
    agent: { id: "bot", name: "bot", use: "command", model: null, effort: null, access: "edit", command: ["echo", "hi"], program: null, sandbox: true, env: [] },
    session: null,
    askFirst: ["delete data"],
    context: {
      events: [{ id: "e1", source: "shop", sourceName: "Shop", type: "alert.cpu", subject: "#1", summary: "hot", detail: "d", link: "https://x.example/1", receivedAt: "R" }],
      answers: [], timers: [], waiting: [], open: [], decided: [],
    },
  });
  assert.deepEqual(r.body.cancel, []);
});

test("the same claim id gives the same job with a new token; the old token stops working", async () => {
  await event("e1");
  const a = await work("c1");
  const b = await work("c1");
  assert.equal(b.body.job.run, a.body.job.run);
  assert.equal(b.body.job.attempt, 1);
  assert.notEqual(b.body.job.token, a.body.job.token);
  const old = await f.call("POST", `/v1/runs/1/started`, a.body.job.token, {});
  assert.equal(old.status, 403);
  assert.match(old.body.error, /token/);
  const ok = await f.call("POST", `/v1/runs/1/started`, b.body.job.token, { session: "s-1" });
  assert.equal(ok.status, 200);
  const another = await work("c2");
  assert.equal(another.body.job, null, "the group runs one at a time");
});

test("a worker only gets runs of agents on it; other workers get nothing", async () => {
  await event("e1");
  const other = await work("x", "", f.keys.worker2);
  assert.equal(other.body.job, null);
  const mine = await work("y");
  assert.equal(mine.body.job.run, 1);
});

test("the queue is read a page at a time: a worker's run behind 70 runs of another worker is claimed, oldest first", async () => {
  // 70 queued tickets for w2 (more than two pages of 32), then two alerts for w1.
  for (let i = 0; i < 70; i++) assert.equal((await f.call("POST", "/v1/events", f.keys.source2, { id: `t${i}`, type: "ticket.new", subject: `#${i}` })).status, 200);
  await event("e1");
  const first = await work("c1");
  assert.equal(first.body.job.run, 71);
  assert.equal(first.body.job.context.events[0].id, "e1");
  const w2 = await work("x1", "", f.keys.worker2);
  assert.equal(w2.body.job.run, 1);
  assert.equal((await work("c2")).body.job, null, "the alerts' group runs one at a time");
});

test("a claim id is required, at most 100 characters, and without control characters; each refusal says which", async () => {
  const errors = [];
  for (const claim of ["", "x".repeat(101), "a%01b", "a%7Fb", "a%0Ab"]) {
    const r = await work(claim);
    errors.push([r.status, r.body.error]);
  }
  const long = "claim: required, at most 100 characters";
  assert.deepEqual(errors, [[400, long], [400, long], [400, "claim: no control characters"], [400, "claim: no control characters"], [400, "claim: no control characters"]]);
  assert.equal((await work("x".repeat(100))).status, 200);
});

test("a result is applied once; the same token and body replay the same answer; another body is 409", async () => {
  await event("e1");
  const { job } = (await work("c1")).body;
  const result = {
    outcome: "done", summary: "asked", session: "s-9", usage: { input: 10, output: 5, cost: 0.01 },
    ask: [{ title: "Restart?", text: "the shop is slow", options: ["yes", "no"], recommend: 0, about: "note", key: "restart" }],
    notice: [{ title: "FYI", text: "look", fyi: true }],
    resolve: [{ card: 999, reason: "gone" }],
    later: [{ key: "check", at: "2030-01-01T09:00:00+08:00", about: "check again" }],
    events: [{ id: "f1", type: "followup.created", subject: "#1" }, { id: "f2", type: "other.type" }],
  };
  const seq = f.seq();
  const r = await f.call("POST", "/v1/runs/1/result", job.token, result);
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, {
    rejected: [
      { card: 999, reason: "没有这张卡片：999" },
      { event: "f2", reason: "type other.type 不在 emits.types 里" },
    ],
  });
  assert.equal(f.seq(), seq + 1, "one transaction, one fact");
  const again = await f.call("POST", "/v1/runs/1/result", job.token, { ...result });
  assert.deepEqual(again, r);
  assert.equal(f.seq(), seq + 1, "a replay writes nothing");
  const other = await f.call("POST", "/v1/runs/1/result", job.token, { ...result, summary: "changed" });
  assert.equal(other.status, 409);
  const state = (await f.call("GET", "/v1/state", f.keys.owner)).body;
  const run = state.runs.find((x: any) => x.id === 1);
  assert.equal(run.state, "done");
  assert.equal(run.session, "s-9");
  assert.deepEqual(run.usage, { input: 10, output: 5, cost: 0.01 });
  assert.deepEqual(state.cards.map((c: any) => [c.kind, c.title, c.lane, c.about]), [["ask", "Restart?", "", "note"]]);
  assert.deepEqual(state.recentCards.map((c: any) => [c.kind, c.fyi, c.state, c.title]), [["notice", true, "closed", "FYI"]]);
  assert.deepEqual(state.timers.map((x: any) => [x.rule, x.key, x.at]), [["alerts", "check", "2030-01-01T01:00:00.000Z"]]);
  // the receipt event f1 was recorded from source shop (emits), one hop deeper, and is not routed (followup.*)
  assert.equal(state.unrouted[0].eventId, "f1");
  assert.equal(state.unrouted[0].source, "shop");
  assert.equal(state.spending.today.rounds, 1);
  assert.equal(state.spending.today.tokens, 15);
});

test("an ask with the same key is not sent again while open", async () => {
  await event("e1");
  let job = (await work("c1")).body.job;
  const ask = { title: "Q?", options: ["a", "b"], key: "k" };
  await f.call("POST", "/v1/runs/1/result", job.token, { outcome: "done", ask: [ask] });
  await event("e2");
  job = (await work("c2")).body.job;
  assert.equal(job.context.open.length, 1, "the open card is in the next run's context");
  await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done", ask: [ask] });
  const state = (await f.call("GET", "/v1/state", f.keys.owner)).body;
  assert.equal(state.cards.length, 1);
});

test("capacity 0 only reports in: no job, and a repeated heartbeat writes nothing", async () => {
  await event("e1");
  const first = await work("h1", "&capacity=0");
  assert.deepEqual(first.body, { job: null, cancel: [] });
  const seq = f.seq();
  const second = await work("h2", "&capacity=0");
  assert.deepEqual(second.body, { job: null, cancel: [] });
  assert.equal(f.seq(), seq, "a blocked heartbeat within a minute writes no fact");
  const state = (await f.call("GET", "/v1/state", f.keys.owner)).body;
  assert.equal(state.workers[0].name, "w1");
  assert.equal(state.workers[0].online, true);
});

test("a held long poll gets the job as soon as an event arrives", async () => {
  const poll = work("lp", "&wait=20");
  await new Promise((r) => setTimeout(r, 200));
  const started = Date.now();
  await event("e-late");
  const r = await poll;
  assert.equal(r.body.job.run, 1);
  assert.ok(Date.now() - started < 5000);
});

test("a failed result waits 5 minutes for a retry and keeps the session", async () => {
  await event("e1");
  const job = (await work("c1")).body.job;
  await f.call("POST", "/v1/runs/1/started", job.token, { session: "sess-a" });
  const r = await f.call("POST", "/v1/runs/1/result", job.token, { outcome: "failed", error: "network down", notice: [{ title: "n" }], ask: [{ title: "ignored", options: ["x"] }] });
  assert.equal(r.status, 200);
  const state = (await f.call("GET", "/v1/state", f.keys.owner)).body;
  const run = state.runs[0];
  assert.equal(run.state, "waiting");
  assert.equal(run.failures, 1);
  assert.equal(Date.parse(run.readyAt) - Date.parse(run.endedAt ?? run.claimedAt) >= 5 * 60_000 - 5_000, true);
  assert.deepEqual(state.cards.map((c: any) => c.title), ["n"], "failed keeps only notices");
  assert.equal((await work("c2")).body.job, null, "not before the retry time");
  await event("e2");
  const st2 = (await f.call("GET", "/v1/state", f.keys.owner)).body;
  assert.equal(st2.runs.length, 1, "an event for the lane joins the waiting run");
});

test("the owner stops a claimed run: the worker is told, reports cancelled, the run ends cancelled", async () => {
  await event("e1");
  const job = (await work("c1")).body.job;
  const stop = await f.call("POST", "/v1/runs/1/cancel", f.keys.owner, {});
  assert.deepEqual(stop.body, { ok: true, changed: true, state: "stopping" });
  const w = await work("c2", "&running=1&capacity=0");
  assert.deepEqual(w.body.cancel, [1]);
  await f.call("POST", "/v1/runs/1/result", job.token, { outcome: "cancelled" });
  const state = (await f.call("GET", "/v1/state", f.keys.owner)).body;
  assert.equal(state.runs[0].state, "cancelled");
  const again = await f.call("POST", "/v1/runs/1/cancel", f.keys.owner, {});
  assert.equal(again.status, 409);
});

test("stopping a queued run ends it at once", async () => {
  await event("e1");
  const r = await f.call("POST", "/v1/runs/1/cancel", f.keys.owner, {});
  assert.deepEqual(r.body, { ok: true, changed: true, state: "cancelled" });
  assert.equal((await work("c1")).body.job, null);
});

test("parallel rules split lanes by subject; the same subject merges into the queued run", async () => {
  const crm = (id: string, subject: string) => f.call("POST", "/v1/events", f.keys.source2, { id, type: "ticket.new", subject });
  await crm("1", "#a");
  await crm("2", "#b");
  await crm("3", "#a");
  const a = (await work("p1", "", f.keys.worker2)).body.job;
  const b = (await work("p2", "", f.keys.worker2)).body.job;
  assert.deepEqual(a.context.events.map((e: any) => e.id), ["1", "3"]);
  assert.deepEqual(b.context.events.map((e: any) => e.id), ["2"]);
  assert.equal((await work("p3", "", f.keys.worker2)).body.job, null, "parallel 2 means at most 2 at once");
  await crm("4", "#a");
  assert.equal((await work("p4", "", f.keys.worker2)).body.job, null, "one run at a time per lane");
});

test("bad work and result requests are refused with the field named, and leave no fact", async () => {
  await event("e1");
  const job = (await work("c1")).body.job;
  const seq = f.seq();
  const bad: [string, string, string | null, unknown, number, RegExp][] = [
    ["GET", "/v1/work", f.keys.worker, undefined, 400, /^claim: required/],
    ["GET", "/v1/work?claim=x&wait=abc", f.keys.worker, undefined, 400, /wait/],
    ["GET", "/v1/work?claim=x&running=1,a", f.keys.worker, undefined, 400, /running/],
    ["GET", "/v1/work?claim=x&capacity=-1", f.keys.worker, undefined, 400, /capacity/],
    ["POST", "/v1/runs/1/result", job.token, { outcome: "maybe" }, 400, /^outcome: must be one of \["done","nothing","failed","cancelled"\]$/],
    ["POST", "/v1/runs/1/started", job.token, { link: "javascript:alert(1)" }, 400, /^link: wrong format/],
    ["POST", "/v1/runs/1/started", job.token, { link: "https://ä.example" }, 400, /^link: wrong format/],
    ["POST", "/v1/runs/1/started", job.token, { session: "a\u0000b" }, 400, /^session: wrong format/],
    ["POST", "/v1/runs/1/result", job.token, { outcome: "done", usage: { input: -1 } }, 400, /^usage.input: out of range$/],
    ["POST", "/v1/runs/1/result", job.token, { outcome: "done", usage: [] }, 400, /^usage: must be object$/],
    ["POST", "/v1/runs/1/result", job.token, { outcome: "done", later: [{ key: "k", at: "2026-02-30T09:00:00Z" }] }, 400, /^later\[0\]\.at: /],
    ["POST", "/v1/runs/1/result", job.token, { outcome: "done", later: [{ key: "k", at: "2026-03-01T09:00:00" }] }, 400, /^later\[0\]\.at: /],
    ["POST", "/v1/runs/1/result", job.token, { outcome: "done", ask: [{ title: "t", options: ["a"], recommend: 1 }] }, 400, /^ask\[0\]\.recommend: out of range$/],
    ["POST", "/v1/runs/1/result", job.token, { outcome: "done", ask: [{ title: "t", options: [] }] }, 400, /^ask\[0\]\.options: at least 1 items$/],
    ["POST", "/v1/runs/1/result", job.token, { outcome: "done", notice: [{ title: "t", fyi: "yes" }] }, 400, /^notice\[0\]\.fyi: must be boolean$/],
    ["POST", "/v1/runs/1/result", "wrong-token", { outcome: "done" }, 403, /token/],
    ["POST", "/v1/runs/77/result", job.token, { outcome: "done" }, 404, /^no such run: 77$/],
    ["POST", "/v1/runs/abc/result", job.token, { outcome: "done" }, 404, /^no such run: abc$/],
    ["POST", "/v1/runs/1/started", "wrong-token", {}, 403, /token/],
    ["POST", "/v1/runs/1/cancel", f.keys.worker, {}, 403, /owner/],
    ["POST", "/v1/runs/1/cancel", f.keys.owner, { force: true }, 400, /^force: unknown field$/],
  ];
  for (const [method, path, key, body, status, error] of bad) {
    const r = await f.call(method, path, key, body);
    assert.equal(r.status, status, `${method} ${path} ${JSON.stringify(body)}`);
    assert.match(r.body.error, error, `${method} ${path} ${JSON.stringify(body)}`);
  }
  const infinite = await f.call("POST", "/v1/runs/1/result", job.token, undefined, '{"outcome":"done","usage":{"cost":1e400}}');
  assert.equal(infinite.status, 400, "1e400 parses to Infinity: usage must be finite");
  assert.equal(infinite.body.error, "usage.cost: out of range");
  const link = await f.call("POST", "/v1/runs/1/started", job.token, { session: "s", link: "claude://resume/s" });
  assert.equal(link.status, 200, "a session link may use the agent's own scheme");
  assert.equal(f.seq(), seq + 1, "only the accepted start wrote a fact");
});

test("a long poll decided in the same commit group as the event it waits for still gets the job (no lost wake)", async () => {
  const { hashKey } = await import("../src/kernel/credentials.js");
  const hub = f.running.hub;
  // Both inputs go into one group commit: the poll is decided first (nothing yet), the event second.
  const poll = hub.poll({ kind: "work", keyHash: hashKey(f.keys.worker), claim: "same-group", running: [], capacity: 1 }, 20_000);
  void hub.submit({ kind: "event", keyHash: hashKey(f.keys.source), event: { id: "g1", type: "alert.x" } });
  const t0 = Date.now();
  const d = await poll;
  assert.equal((d.body as any).job?.run, 1);
  assert.ok(Date.now() - t0 < 10_000, "answered at once, not after the 20 s wait");
});

test("a newer poll with the same claim id supersedes a held one, which then never claims (its token would replace the live one)", async () => {
  // A worker that aborted its poll asks again with the same claim id at once; the hub may not have seen the first
  // connection close yet. Were both held, the stale one could claim after the live one and invalidate its token.
  const stale = work("c-same", "&wait=20");
  await new Promise((r) => setTimeout(r, 200));
  const live = work("c-same", "&wait=20");
  const first = await Promise.race([stale, new Promise((r) => setTimeout(() => r("still held"), 3000))]);
  assert.deepEqual(first, { status: 200, body: { job: null, cancel: [] } }, "the older poll is answered, with no job");
  await new Promise((r) => setTimeout(r, 200));
  await event("e1");
  const got = await live;
  assert.equal(got.body.job.run, 1);
  const started = await f.call("POST", "/v1/runs/1/started", got.body.job.token, {});
  assert.equal(started.status, 200, "the live poll's token is the valid one");
});
