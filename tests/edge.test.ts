/**
 * The HTTP edge against slow and hostile clients (issue 14, items 7 and 10): credentials checked before any body is
 * read, header and body timeouts that leave long polls and the stream alone, a cap on connections without a key per
 * address that keyed workers and channels do not count against, bodies that are not UTF-8, and "no credential" → 401
 * on every route with nothing of the home's names or paths in the refusal. Raw sockets on a real hub; the attack of
 * the issue runs against a real `serve` child process with a small descriptor limit.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { createHmac } from "node:crypto";
import { rmSync } from "node:fs";
import { baseRules, hubFixture, makeHome, serveProcess, until, prose } from "./helpers.js";
import { anonymousConnectionsPerAddressMax } from "../src/kernel/limits.js";
import { BoundedLog } from "../src/host/log-limit.js";
import { callBody, toolRules } from "./tool-calls-helpers.js";
import { endpoints } from "../src/protocol/endpoints.js";

/** A raw HTTP/1.1 connection: what it received so far, and whether the hub closed it. */
interface Raw { socket: Socket; received(): string; closed(): boolean; status(): number | null }

function open(url: string, text = ""): Promise<Raw> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    let got = "";
    let closed = false;
    const socket = connect(Number(port), hostname, () => {
      if (text) socket.write(text);
      resolve({
        socket,
        received: () => got,
        closed: () => closed,
        status: () => {
          const m = /^HTTP\/1\.1 (\d{3})/.exec(got);
          return m ? Number(m[1]) : null;
        },
      });
    });
    socket.on("data", (d) => (got += d.toString("latin1")));
    socket.on("error", () => {});
    socket.on("close", () => (closed = true));
    socket.once("error", reject);
  });
}

/** Request headers announcing a body of `length` bytes, then the first `sent` bytes of it. */
function partial(method: string, path: string, headers: Record<string, string>, length: number, sent: string): string {
  const lines = [`${method} ${path} HTTP/1.1`, "Host: 127.0.0.1", `Content-Length: ${length}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  return `${lines.join("\r\n")}\r\n\r\n${sent}`;
}

const secret = "It's a Secret to Everybody";
const ghRules = { ...baseRules, sources: { ...baseRules.sources, gh: { name: "GitHub", adapter: "github" } }, channels: { ch1: { name: "One", links: true }, ch2: { name: "Two" } } };

test("credentials in the path or headers are checked before the body is read: a partial body gets its refusal and the connection is closed", async () => {
  const f = await hubFixture(ghRules, {}, `AGENT_AUTOLOOP_SECRET_GH="${secret}"\n`);
  try {
    await f.call("POST", "/v1/events", f.keys.source, { id: "e1", type: "alert.x" });
    const job = (await f.call("GET", "/v1/work?claim=c1", f.keys.worker)).body.job;
    const json = { "content-type": "application/json" };
    const form = { "content-type": "application/x-www-form-urlencoded" };
    const cases: [string, string, Record<string, string>, number][] = [
      ["POST", "/c/1/not-the-token", form, 404],
      ["POST", `/c/${job.run}/${"A".repeat(43)}`, form, 404],
      ["POST", "/v1/in/gh", json, 401], // an adapter and a secret, but no X-Hub-Signature-256
      ["POST", "/v1/in/shop", json, 401], // declared without an adapter
      ["POST", "/v1/in/nosuch", json, 401],
      ["POST", `/v1/runs/${job.run}/result`, json, 401],
      ["POST", `/v1/runs/${job.run}/started`, json, 401],
      ["POST", `/v1/runs/${job.run}/result`, { ...json, authorization: "Bearer not-the-token" }, 403],
      ["POST", "/v1/runs/999/result", { ...json, authorization: `Bearer ${job.token}` }, 404],
      ["POST", "/v1/events", json, 401],
      ["POST", "/v1/cards/1/answer", json, 401],
    ];
    const seq = f.seq();
    for (const [method, path, headers, status] of cases) {
      const r = await open(f.url, partial(method, path, headers, 100_000, "{\"id\":"));
      await until(() => r.status() !== null, 5000, `an answer to ${method} ${path} before its body`);
      assert.equal(r.status(), status, `${method} ${path}: ${r.received()}`);
      await until(() => r.closed(), 5000, `${method} ${path} to be closed with its body unread`);
    }
    assert.equal(f.seq(), seq, "nothing recorded");
  } finally {
    await f.close();
  }
});

test("headers or a body that arrive too slowly get 408, with a key or without; long polls and the stream outlast that limit", async () => {
  const f = await hubFixture(baseRules, {}, "", { limits: { requestHeadersTimeoutMs: 300, requestBodyTimeoutMs: 600, timeoutCheckIntervalMs: 100 } });
  try {
    const headers = await open(f.url, "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    const keyed = await open(f.url, partial("POST", "/v1/events", { authorization: `Bearer ${f.keys.source}`, "content-type": "application/json" }, 100, "{"));
    const poll = f.call("GET", "/v1/work?claim=p1&wait=2", f.keys.worker);
    const stream = await fetch(`${f.url}/v1/stream?after=${f.seq()}`, { headers: { authorization: `Bearer ${f.keys.owner}` } });
    for (const r of [headers, keyed]) {
      await until(() => r.closed(), 5000, "the slow request to be cut off");
      assert.equal(r.status(), 408, r.received());
    }
    assert.deepEqual(await poll, { status: 200, body: { job: null, cancel: [] } }, "the long poll waited its 2 s and answered");
    assert.equal((await f.call("POST", "/v1/events", f.keys.source, { id: "late", type: "alert.x" })).status, 200);
    const reader = stream.body!.getReader();
    let text = "";
    while (!text.includes('"late"')) text += new TextDecoder().decode((await reader.read()).value);
    assert.match(text, /event: fact/);
    await reader.cancel();
  } finally {
    await f.close();
  }
});

test("connections without a key are capped per address; keyed workers and channels on the same address keep working", async () => {
  const cap = 8;
  const f = await hubFixture(baseRules, {}, "", { limits: { anonymousConnectionsPerAddressMax: cap } });
  const raws: Raw[] = [];
  try {
    for (let i = 0; i < 40; i++) raws.push(await open(f.url));
    await until(() => raws.filter((r) => !r.closed()).length <= cap, 5000, "the oldest connections without a key to be closed");
    assert.deepEqual(raws.map((r) => r.closed()), [...Array(32).fill(true), ...Array(8).fill(false)], "the oldest went first");
    // a worker's long poll and a source's event on the same address go through, and a held long poll is never evicted
    const poll = f.call("GET", "/v1/work?claim=k1&wait=2", f.keys.worker);
    const next = f.call("GET", "/v1/cards/next?wait=2", f.keys.channel);
    await new Promise((r) => setTimeout(r, 200));
    for (let i = 0; i < 40; i++) raws.push(await open(f.url));
    assert.equal((await f.call("POST", "/v1/events", f.keys.source, { id: "k", type: "alert.x" })).status, 200);
    const got = await poll;
    assert.equal(got.status, 200);
    assert.equal(got.body.job.rule.name, "alerts");
    assert.deepEqual(await next, { status: 200, body: { card: null } });
    await until(() => raws.filter((r) => !r.closed()).length <= cap, 5000, "the cap to hold");
    // a request without a key that is refused before its body is closed with its body unread
    const anon = await open(f.url, partial("POST", "/v1/in/nosuch", {}, 10, ""));
    await until(() => anon.closed(), 5000, "the refused request's connection to close");
  } finally {
    for (const r of raws) r.socket.destroy();
    await f.close();
  }
});

test("a burst of keyed clients on one address, far over the cap, is not cut before its keys are seen", async () => {
  const f = await hubFixture(baseRules, {}, "", { limits: { anonymousConnectionsPerAddressMax: 8 } });
  const raws: Raw[] = [];
  try {
    // 50 connections at once (a proxy, many channels), each sending its keyed request a round trip after connecting
    raws.push(...(await Promise.all(Array.from({ length: 50 }, () => open(f.url)))));
    await new Promise((r) => setTimeout(r, 250));
    for (const r of raws) r.socket.write(`GET /v1/cards/next?wait=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${f.keys.channel}\r\n\r\n`);
    await until(() => raws.every((r) => r.status() !== null || r.closed()), 10_000, "every poll to be answered");
    assert.deepEqual(raws.map((r) => r.status()), Array(50).fill(200));
  } finally {
    for (const r of raws) r.socket.destroy();
    await f.close();
  }
});

test("a valid run token counts as a key on every run-token route: 150 silent keyless connections cut no held tool-call wait (issue 26, finding 7)", async () => {
  // The reported case: a tool call held for the owner's answer (GET …/tools/calls/:call?waitSeconds) was cut 2 s into
  // a flood of silent connections without a key, as a run token counted as "no key" outside started/result. Varied:
  // a keep-alive connection on each run-token route of the endpoint table, idle after its answer (idle connections
  // without a key are the first the cap closes); a wrong token and another run's token still count as none.
  const cap = 8;
  const rules = toolRules([{ plugin: "x", mode: "prompt" }], ["x.*"], 30);
  const f = await hubFixture(rules, {}, "", { limits: { anonymousConnectionsPerAddressMax: cap } });
  const raws: Raw[] = [];
  const flood: Raw[] = [];
  try {
    await f.call("POST", "/v1/events", f.keys.source, { id: "e1", type: "alert.x", subject: "a" });
    await f.call("POST", "/v1/events", f.keys.source, { id: "e2", type: "alert.x", subject: "b" });
    const job = (await f.call("GET", "/v1/work?claim=c1", f.keys.worker)).body.job;
    const other = (await f.call("GET", "/v1/work?claim=c2", f.keys.worker)).body.job;
    const asked = await f.call("POST", `/v1/runs/${job.run}/tools/calls`, job.token, callBody("x.t"));
    assert.equal(asked.body.decision, "prompt");
    const call = asked.body.call as number;
    const request = (method: string, path: string, token: string, body?: unknown) => {
      const text = body === undefined ? "" : JSON.stringify(body);
      const head = [`${method} ${path} HTTP/1.1`, "Host: 127.0.0.1", `Authorization: Bearer ${token}`, "Connection: keep-alive",
        ...(body === undefined ? [] : ["Content-Type: application/json", `Content-Length: ${Buffer.byteLength(text)}`])];
      return `${head.join("\r\n")}\r\n\r\n${text}`;
    };
    // Every endpoint the table says takes a run token, so a route added later is covered too.
    const runRoutes = Object.values(endpoints).filter((e) => e.auth === "run").map((e) => `${e.method} ${e.path}`).sort();
    assert.deepEqual(runRoutes, [
      "GET /v1/runs/:id/tools/calls/:call", "GET /v1/runs/:id/tools/calls/:call/result", "POST /v1/runs/:id/result",
      "POST /v1/runs/:id/started", "POST /v1/runs/:id/tools/calls", "POST /v1/runs/:id/tools/calls/:call/outcome",
      "POST /v1/runs/:id/transcript", "PUT /v1/runs/:id/artifacts/:file",
    ]);
    const held = await open(f.url, request("GET", `/v1/runs/${job.run}/tools/calls/${call}?waitSeconds=8`, job.token));
    const keyed = [
      await open(f.url, request("POST", `/v1/runs/${job.run}/started`, job.token, {})),
      await open(f.url, request("POST", `/v1/runs/${job.run}/tools/calls`, job.token, callBody("x.u"))),
      await open(f.url, request("POST", `/v1/runs/${job.run}/tools/calls/${call}/outcome`, job.token, { status: "ok", durationMs: 1 })),
      await open(f.url, request("GET", `/v1/runs/${job.run}/tools/calls/${call}/result`, job.token)),
      await open(f.url, request("PUT", `/v1/runs/${job.run}/artifacts/notes.md`, job.token, { text: "hi" })),
    ];
    const unkeyed = [
      await open(f.url, request("GET", `/v1/runs/${job.run}/tools/calls/${call}/result`, "not-the-token")),
      await open(f.url, request("GET", `/v1/runs/${other.run}/tools/calls/${call}/result`, job.token)),
      await open(f.url, request("POST", `/v1/runs/${job.run}/tools/calls`, other.token, callBody("x.u"))),
    ];
    raws.push(held, ...keyed, ...unkeyed);
    await until(() => [...keyed, ...unkeyed].every((r) => r.status() !== null), 5000, "every request answered");
    assert.deepEqual(keyed.map((r) => r.status()), [200, 200, 409, 409, 200], keyed.map((r) => r.received().split("\r\n")[0]).join("; "));
    assert.deepEqual(unkeyed.map((r) => r.status()), [403, 403, 403]);
    // 150 connections without a key that say nothing: over the cap, the oldest closable ones go.
    for (let i = 0; i < 150; i++) flood.push(await open(f.url));
    await until(() => unkeyed.every((r) => r.closed()), 10_000, "the connections with a wrong or another run's token to be closed");
    await until(() => flood.filter((r) => !r.closed()).length <= cap, 10_000, "the flood to be capped");
    assert.deepEqual([held, ...keyed].map((r) => r.closed()), Array(6).fill(false), "a connection with a valid run token was closed");
    await until(() => held.status() !== null, 15_000, "the held wait to answer when its 8 s are up");
    assert.equal(held.status(), 200, held.received());
    assert.match(held.received(), /"decision":"prompt"/);
  } finally {
    for (const r of [...raws, ...flood]) r.socket.destroy();
    await f.close();
  }
});

test("a body that is not UTF-8 is refused with 400 and records nothing: two different ids cannot collide as duplicates", async () => {
  const f = await hubFixture(ghRules, {}, `AGENT_AUTOLOOP_SECRET_GH="${secret}"\n`);
  try {
    const seq = f.seq();
    const post = (body: Uint8Array<ArrayBuffer>, path = "/v1/events", headers: Record<string, string> = { authorization: `Bearer ${f.keys.source}` }) =>
      fetch(f.url + path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body }).then(async (r) => [r.status, prose(r.status, await r.json())]);
    const bytes = (a: string, b: number[], c: string) => new Uint8Array(Buffer.concat([Buffer.from(a), Buffer.from(b), Buffer.from(c)]));
    const notUtf8 = [400, { error: "the request body is not valid UTF-8" }];
    assert.deepEqual(await post(bytes('{"id":"a', [0xff], 'b","type":"alert.x"}')), notUtf8);
    assert.deepEqual(await post(bytes('{"id":"a', [0xfe], 'b","type":"alert.x"}')), notUtf8);
    assert.deepEqual(await post(bytes('{"id":"a', [0xed, 0xa0, 0x80], 'b","type":"alert.x"}')), notUtf8, "an encoded surrogate");
    assert.deepEqual(await post(bytes('{"id":"a', [0xc0, 0xaf], 'b","type":"alert.x"}')), notUtf8, "an overlong form");
    const signed = bytes('{"action":"opened","issue":{"title":"', [0xff], '"}}');
    const signature = "sha256=" + createHmac("sha256", secret).update(signed).digest("hex");
    assert.deepEqual(await post(signed, "/v1/in/gh", { "x-github-event": "issues", "x-hub-signature-256": signature }), notUtf8);
    assert.equal(f.seq(), seq);
    // the link page's form: percent-encoded bytes that are not UTF-8
    const form = await fetch(`${f.url}/c/1/x`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new Uint8Array(Buffer.from("text=%FF%FE")) });
    assert.equal(form.status, 404, "an unknown link is refused before its body is read");
    await f.call("POST", "/v1/events", f.keys.source, { id: "l1", type: "alert.x" });
    const job = (await f.call("GET", "/v1/work?claim=l", f.keys.worker)).body.job;
    await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done", ask: [{ title: "Q", options: ["a", "b"] }] });
    const card = (await f.call("GET", "/v1/cards/next", f.keys.channel)).body.card;
    const answer = (body: string) => fetch(card.link, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new Uint8Array(Buffer.from(body)), redirect: "manual" });
    const bad = await answer("text=%FF%FE");
    assert.equal(bad.status, 400);
    assert.match(await bad.text(), /the request body is not valid UTF-8/);
    const bidi = await answer("text=" + encodeURIComponent("ok \u202e gnp.exe"));
    assert.equal(bidi.status, 400);
    assert.match(await bidi.text(), /text: wrong format, expected no control characters except line breaks and tabs/);
    assert.equal((await f.call("GET", "/v1/state", f.keys.owner)).body.cards[0].state, "open", "nothing answered");
    assert.equal((await answer("text=" + encodeURIComponent("fine, thanks"))).status, 303);
  } finally {
    await f.close();
  }
});

test("no credential → 401 on every route, and no refusal to a caller without a key names a source, adapter or path", async () => {
  const f = await hubFixture(ghRules, {}, `AGENT_AUTOLOOP_SECRET_GH="${secret}"\n`);
  try {
    const routes: [string, string][] = [
      ["POST", "/v1/events"], ["POST", "/v1/in/gh"], ["POST", "/v1/in/shop"], ["POST", "/v1/in/nosuch"], ["POST", "/v1/in/constructor"],
      ["POST", "/v1/tell"], ["GET", "/v1/work?claim=x"], ["GET", "/v1/cards/next"],
      ["POST", "/v1/runs/1/started"], ["POST", "/v1/runs/1/result"], ["POST", "/v1/runs/x/result"], ["POST", "/v1/runs/1/cancel"],
      ["POST", "/v1/cards/1/delivered"], ["POST", "/v1/cards/1/failed"], ["POST", "/v1/cards/1/answer"], ["POST", "/v1/cards/1/resolve"],
      ["POST", "/v1/rules/alerts/pause"], ["POST", "/v1/rules/alerts/resume"], ["POST", "/v1/rules/alerts/run"],
      ["GET", "/v1/state"], ["GET", "/v1/stream"], ["GET", "/v1/runs/1/why"], ["POST", "/v1/keys/source/x"], ["DELETE", "/v1/keys/source/x"],
    ];
    const names = [f.home.dir, "gh", "github", "GitHub", "shop", "Shop", "crm", "alerts", "bot", "ch1", "plugins", "rules.json", "secrets", "AGENT_AUTOLOOP"];
    for (const [method, path] of routes) {
      const r = await f.call(method, path, null, method === "POST" ? {} : undefined);
      assert.equal(r.status, 401, `${method} ${path}: ${JSON.stringify(r.body)}`);
      assert.deepEqual(Object.keys(r.body), ["error"]);
      for (const n of names) assert.ok(!r.body.error.includes(n), `${method} ${path} names "${n}": ${r.body.error}`);
    }
    // a signature that does not match is still the adapter's own refusal, after the body
    const body = JSON.stringify({ zen: "x" });
    const wrong = await fetch(`${f.url}/v1/in/gh`, { method: "POST", headers: { "x-github-event": "ping", "x-hub-signature-256": `sha256=${"0".repeat(64)}` }, body });
    assert.deepEqual([wrong.status, await wrong.json()], [401, { error: "X-Hub-Signature-256 does not match the body", code: "foreign.text", params: { text: "X-Hub-Signature-256 does not match the body" } }]);
  } finally {
    await f.close();
  }
});

test("the slow-body attack of issue 14 (400 connections, one byte now and then) leaves a real hub answering and its worker finishing runs", async () => {
  const agent = ["node", "-e", "console.log('finished it')"];
  const rules = { ...baseRules, agents: { bot: { worker: "local", use: "command", command: agent } }, rules: [{ name: "alerts", when: { source: "shop", types: ["alert.*"] }, to: "bot", cwd: "/tmp" }], channels: { ch1: { name: "One", links: true } } };
  const workerKey = "w".repeat(43);
  const { dir, keys } = makeHome(rules, { worker: { name: "local", key: workerKey, capacity: 1 } });
  const raws: Raw[] = [];
  let dribble: NodeJS.Timeout | undefined;
  // A small descriptor limit, as a hub under attack would reach a large one.
  const hub = await serveProcess(dir, 256);
  try {
    const url = hub.url;
    const kinds = [
      () => partial("POST", "/c/1/x", { "content-type": "application/x-www-form-urlencoded" }, 100_000, "c"),
      () => partial("POST", "/v1/in/shop", { "content-type": "application/json" }, 100_000, "{"),
      () => "POST /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n",
      () => "",
    ];
    for (let i = 0; i < 400; i++) raws.push(await open(url, kinds[i % kinds.length]!()).catch(() => open(url)));
    dribble = setInterval(() => {
      for (const r of raws) if (!r.closed()) r.socket.write("x");
    }, 1000);
    const health = await fetch(`${url}/v1/health`, { signal: AbortSignal.timeout(60_000) });
    assert.deepEqual([health.status, (await health.json()).ok], [200, true]);
    const posted = await fetch(`${url}/v1/events`, { method: "POST", headers: { authorization: `Bearer ${keys.source}`, "content-type": "application/json" }, body: JSON.stringify({ id: "under-attack", type: "alert.x" }) });
    assert.equal(posted.status, 200);
    const run = await until(async () => {
      const s = await (await fetch(`${url}/v1/state`, { headers: { authorization: `Bearer ${keys.owner}` } })).json();
      return s.runs[0]?.state === "done" && s.runs[0];
    }, 30_000, "the run to be claimed and finished by the hub's own worker");
    assert.equal(run.summary, "finished it");
    // The caps close a silent connection only after its grace (silentConnectionGraceMs): wait for it, not a time.
    const stillOpen = () => raws.filter((r) => !r.closed()).length;
    await until(() => stillOpen() <= anonymousConnectionsPerAddressMax, 30_000, () => `connections without a key to be capped (${stillOpen()} open; ${hub.output()})`);
    assert.equal(hub.child.exitCode, null, "the hub is still running");
  } finally {
    clearInterval(dribble);
    for (const r of raws) r.socket.destroy();
    await hub.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("clients that hang up mid-body are no internal error and log nothing, with or without a key; a refused webhook's reason is logged once", async () => {
  const lines: string[] = [];
  const f = await hubFixture(ghRules, {}, `AGENT_AUTOLOOP_SECRET_GH="${secret}"\n`, { log: (l) => lines.push(l) });
  try {
    // 60 each: a signed webhook and a keyed event that announce 1,000 bytes, send "{" and close the socket
    const aborted = [
      ...Array.from({ length: 60 }, () => partial("POST", "/v1/in/gh", { "x-github-event": "issues", "x-hub-signature-256": "sha256=00", "content-type": "application/json" }, 1000, "{")),
      ...Array.from({ length: 60 }, () => partial("POST", "/v1/events", { authorization: `Bearer ${f.keys.source}`, "content-type": "application/json" }, 1000, "{")),
    ];
    for (const text of aborted) {
      const r = await open(f.url, text);
      await new Promise((resolve) => r.socket.write("", resolve));
      r.socket.destroy();
      await until(() => r.closed(), 5000, "the socket to close");
    }
    // 60 webhooks without their signature header: refused before the body, the reason logged once
    for (let i = 0; i < 60; i++) assert.equal((await fetch(`${f.url}/v1/in/gh`, { method: "POST", body: "{}" })).status, 401);
    // the hub handled every hang-up before it answers these (one connection after another)
    for (let i = 0; i < 20; i++) assert.equal((await fetch(`${f.url}/v1/health`)).status, 200);
    assert.deepEqual(lines, ["webhook /v1/in/gh refused before its body was read: the request has no x-hub-signature-256 header"]);
  } finally {
    await f.close();
  }
});

test("a bounded log writes one line of a kind a minute, then says how many were left out (on a stack's first line); kinds beyond its memory wait for old ones to expire", () => {
  const lines: string[] = [];
  let now = 0;
  const log = new BoundedLog((l) => lines.push(l), () => now, "en", 60_000, 2);
  log.say("a", "A1");
  for (let i = 0; i < 5; i++) log.say("a", "A again");
  log.say("b", "B1\n  at x");
  log.say("c", "C1"); // a third kind: over the memory of 2
  now = 59_999;
  log.say("b", "B2");
  now = 60_000;
  log.say("a", "A2");
  log.say("b", "B3\n  at y");
  log.say("c", "C2");
  assert.deepEqual(lines, ["A1", "B1\n  at x", "A2 (5 more like it since the last one were not logged)", "B3 (1 more like it since the last one were not logged)\n  at y"]);
  now = 120_000;
  log.say("c", "C3");
  assert.equal(lines.at(-1), "C3");
});
