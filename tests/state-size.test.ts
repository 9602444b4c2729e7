/**
 * The console's first load at size (issue 30): `GET /v1/state?cards=N` lists only the newest N open cards and says how
 * many it left out, the channels' waiting counts still count every open card, and long answers and the console's
 * files go gzip'd to a client that takes gzip (and as before to one that does not); the page preloads only the modules
 * of Needs you; a route's answer carries the hub's own time for it; the state reads its runs without their jobs.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { gunzipSync } from "node:zlib";
import { hubFixture, type Fixture } from "./helpers.js";
import { acceptsGzip } from "../src/host/compress.js";
import { staticImports } from "../src/host/console-files.js";
import { answerGzipMinBytes } from "../src/kernel/limits.js";

/** `n` runs of rule alerts, each of whose receipt asks a question (an open card each, for channel ch1). */
async function openCards(f: Fixture, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    await f.call("POST", "/v1/events", f.keys.source, { id: `q${i}`, type: "alert.x", subject: `s${i}` });
    const job = (await f.call("GET", `/v1/work?claim=q${i}&wait=0`, f.keys.worker)).body.job;
    const r = await f.call("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: "done", ask: [{ title: `Question ${i}`, options: ["yes", "no"] }] });
    assert.equal(r.status, 200);
  }
}

/** One GET over node:http with the headers given: status, headers and the raw bytes (nothing decoded). */
function raw(url: string, headers: Record<string, string>): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http.get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    }).on("error", reject);
  });
}

test("GET /v1/state?cards=N lists the newest N open cards, oldest first, and how many it left out; without it, all", async () => {
  const f = await hubFixture();
  try {
    await openCards(f, 7);
    const all = (await f.call("GET", "/v1/state", f.keys.owner)).body;
    assert.deepEqual(all.cards.map((c: { id: number }) => c.id), [1, 2, 3, 4, 5, 6, 7]);
    assert.equal(all.moreCards, 0);
    const some = (await f.call("GET", "/v1/state?cards=3", f.keys.owner)).body;
    assert.deepEqual(some.cards.map((c: { id: number }) => c.id), [5, 6, 7]);
    assert.equal(some.moreCards, 4);
    const none = (await f.call("GET", "/v1/state?cards=0", f.keys.owner)).body;
    assert.deepEqual([none.cards.length, none.moreCards], [0, 7]);
    // The channels' waiting cards count every open card, not only those listed.
    assert.deepEqual(none.channels.map((c: { id: string; waiting: number }) => [c.id, c.waiting]), [["ch1", 7], ["ch2", 7]]);
    const next = (await f.call("GET", "/v1/cards/next", f.keys.channel)).body.card;
    await f.call("POST", `/v1/cards/${next.id}/delivered`, f.keys.channel, { version: next.version, ref: "m1" });
    assert.deepEqual((await f.call("GET", "/v1/state?cards=0", f.keys.owner)).body.channels.map((c: { waiting: number }) => c.waiting), [6, 7]);
    const bad = await f.call("GET", "/v1/state?cards=x", f.keys.owner);
    assert.equal(bad.status, 400);
  } finally {
    await f.close();
  }
});

test("a long JSON answer and the console's files go gzip'd to a client that takes gzip, and plain to one that does not", async () => {
  const f = await hubFixture();
  try {
    await openCards(f, 5);
    const auth = { authorization: `Bearer ${f.keys.owner}` };
    const plain = await raw(`${f.url}/v1/state`, auth);
    assert.equal(plain.headers["content-encoding"], undefined);
    assert.equal(plain.headers["content-type"], "application/json");
    assert.ok(plain.body.length >= answerGzipMinBytes);
    const zipped = await raw(`${f.url}/v1/state`, { ...auth, "accept-encoding": "br, gzip;q=0.8" });
    assert.equal(zipped.headers["content-encoding"], "gzip");
    assert.equal(zipped.headers.vary, "accept-encoding");
    const state = JSON.parse(gunzipSync(zipped.body).toString("utf8"));
    assert.equal(state.cards.length, 5);
    assert.ok(zipped.body.length < plain.body.length / 3, `${zipped.body.length} of ${plain.body.length}`);
    // A short answer stays plain: its header would cost more than it saves.
    const health = await raw(`${f.url}/v1/health`, { "accept-encoding": "gzip" });
    assert.equal(health.headers["content-encoding"], undefined);
    const page = await raw(`${f.url}/console/app.js`, { "accept-encoding": "gzip" });
    assert.equal(page.headers["content-encoding"], "gzip");
    assert.equal(page.headers["content-security-policy"]?.includes("frame-ancestors 'none'"), true);
    const same = await raw(`${f.url}/console/app.js`, {});
    assert.equal(gunzipSync(page.body).toString("utf8"), same.body.toString("utf8"));
    assert.equal(same.headers["content-encoding"], undefined);
  } finally {
    await f.close();
  }
});

test("Accept-Encoding: gzip only where named without q=0", () => {
  assert.deepEqual(
    [undefined, "", "gzip", "GZIP", "br, gzip;q=0.5", "gzip;q=0", "gzip; q=0.0", "deflate, br", "*", "x-gzip", "identity"].map(acceptsGzip),
    [false, false, true, true, true, false, false, false, true, true, false],
  );
});

test("the console's page preloads only what Needs you needs: boot.js first, then app.js's static imports; the other views load when shown", async () => {
  const f = await hubFixture();
  try {
    const page = (await raw(`${f.url}/console/`, {})).body.toString("utf8");
    const order = [...page.matchAll(/<(?:script type="module" src|link rel="modulepreload" href)="\/console\/([^"]+)"/g)].map((m) => m[1]);
    assert.deepEqual(order, [
      "boot.js",
      "api.js", "dom.js", "i18n.js", "kernel/states.js", "kernel/text.js", "more.js", "needs.js", "sdk/markdown.js", "ui.js",
      "app.js",
    ]);
    // Each view's module is still served, for when it is shown.
    for (const name of ["runs.js", "events.js", "search.js", "rules.js", "plugins.js", "transcript.js", "kernel/timeline.js"]) {
      assert.equal((await raw(`${f.url}/console/${name}`, {})).status, 200, name);
    }
  } finally {
    await f.close();
  }
});

test("staticImports follows `import … from` and `export … from`, relative to each module's folder, and not import()", () => {
  const files = new Map([
    ["app.js", `import { a } from "./a.js";\nimport {\n  b,\n} from "./sub/b.js";\n/** @param {import("./c.js").C} c */\nconst later = () => import("./d.js");`],
    ["a.js", `export { x } from "./sub/x.js";`],
    ["sub/b.js", `import { y } from "./y.js";`],
    ["sub/y.js", ``],
    ["sub/x.js", ``],
    ["c.js", ``],
    ["d.js", ``],
  ]);
  assert.deepEqual([...staticImports(["app.js"], files)].sort(), ["a.js", "app.js", "sub/b.js", "sub/x.js", "sub/y.js"]);
});

test("a route's answer says the hub's own time for it (Server-Timing); the state's runs carry no job", async () => {
  const f = await hubFixture();
  try {
    await openCards(f, 2);
    const res = await raw(`${f.url}/v1/state`, { authorization: `Bearer ${f.keys.owner}` });
    assert.match(String(res.headers["server-timing"]), /^hub;dur=\d+\.\d$/);
    const state = JSON.parse(res.body.toString("utf8"));
    assert.equal(state.runs.length, 2);
    assert.equal(JSON.stringify(state).includes("\"job\""), false);
    // The rows the state reads: SQLite leaves the job out (a job holds its group's open cards, 110 KB a run at 1,000).
    const row = f.running.hub.store.view.runSummaries("key = ?", 1)[0]!.row;
    assert.equal("job" in row, false);
    assert.equal(row.id, 1);
    assert.notEqual(f.running.hub.store.view.get("runs", 1)!.job, null);
  } finally {
    await f.close();
  }
});
