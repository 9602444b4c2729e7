/** The owner's controls over real HTTP: exact status codes and texts (protocol.md 暂停、恢复、立即运行). */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { hubFixture, baseRules, type Fixture } from "./helpers.js";

let f: Fixture;
const rules = {
  ...baseRules,
  rules: [...baseRules.rules, { name: "巡检", when: { cron: "0 9 * * *" }, to: "bot" }],
  elsewhere: [{ name: "每周清理", to: "bot", cron: "0 6 * * 0", where: "Claude app" }],
};
before(async () => {
  f = await hubFixture(rules);
});
after(async () => {
  await f.close();
});

const path = (name: string, action: string) => `/v1/rules/${encodeURIComponent(name)}/${action}`;

test("pause, resume and run take URL-encoded names, empty bodies, and answer as specified", async () => {
  const p = await f.call("POST", path("巡检", "pause"), f.keys.owner, { reason: "上游在修", until: "2030-11-07T09:00:00+08:00" });
  assert.equal(p.status, 200);
  assert.deepEqual({ ...p.body, paused: { ...p.body.paused, since: "S" } }, {
    changed: true, rule: "巡检", paused: { by: "owner", reason: "上游在修", since: "S", until: "2030-11-07T01:00:00.000Z" },
  });
  const seq = f.seq();
  const same = await f.call("POST", path("巡检", "pause"), f.keys.owner, { reason: "上游在修", until: "2030-11-07T01:00:00Z" });
  assert.equal(same.body.changed, false);
  assert.equal(f.seq(), seq, "an unchanged pause writes no fact");
  const run = await f.call("POST", path("巡检", "run"), f.keys.owner, undefined, "");
  assert.deepEqual([run.status, run.body], [409, { error: "规则「巡检」暂停中，先恢复再手动运行" }]);
  const st = (await f.call("GET", "/v1/state", f.keys.owner)).body;
  assert.deepEqual(st.pauses.map((x: any) => x.name), ["巡检"]);
  assert.equal(st.lines.find((l: any) => l.name === "巡检").paused.reason, "上游在修");
  const r = await f.call("POST", path("巡检", "resume"), f.keys.owner, undefined, "");
  assert.deepEqual([r.status, r.body], [200, { changed: true, rule: "巡检" }]);
  const again = await f.call("POST", path("巡检", "resume"), f.keys.owner, {});
  assert.deepEqual(again.body, { changed: false, rule: "巡检" });
  const now = await f.call("POST", path("alerts", "run"), f.keys.owner, { subject: "#12", reason: "看一眼" });
  assert.equal(now.status, 200);
  assert.deepEqual(Object.keys(now.body), ["event", "run"]);
  const st2 = (await f.call("GET", "/v1/state", f.keys.owner)).body;
  assert.equal(st2.runs.find((x: any) => x.id === now.body.run).manual, true);
});

test("refusals: unknown rule 404, elsewhere task 400, unknown field 400, bad until 400, not the owner 403", async () => {
  const seq = f.seq();
  const cases: [string, string | null, unknown, number, string | RegExp][] = [
    [path("nope", "pause"), f.keys.owner, {}, 404, "没有这条规则：nope"],
    [path("nope", "run"), f.keys.owner, {}, 404, "没有这条规则：nope"],
    [path("nope", "resume"), f.keys.owner, {}, 404, "没有这条规则：nope"],
    [path("每周清理", "run"), f.keys.owner, {}, 400, /elsewhere task/],
    [path("每周清理", "pause"), f.keys.owner, {}, 400, /elsewhere task/],
    [path("alerts", "pause"), f.keys.owner, { why: "x" }, 400, "why: unknown field"],
    [path("alerts", "run"), f.keys.owner, { subject: "has space" }, 400, /^subject: wrong format/],
    [path("alerts", "pause"), f.keys.owner, { until: "2030-11-07T09:00:00" }, 400, /^until: wrong format/],
    [path("alerts", "pause"), f.keys.owner, { until: "2030-02-30T09:00:00Z" }, 400, /^until: wrong format/],
    [path("alerts", "pause"), f.keys.owner, { until: "2001-01-01T00:00:00Z" }, 400, "until: must be later than now"],
    [path("alerts", "pause"), f.keys.worker, {}, 403, /owner/],
    [path("alerts", "run"), f.keys.source, {}, 403, /owner/],
  ];
  for (const [p, key, body, status, error] of cases) {
    const r = await f.call("POST", p, key, body);
    assert.equal(r.status, status, p);
    if (typeof error === "string") assert.equal(r.body.error, error, p);
    else assert.match(r.body.error, error, p);
  }
  assert.equal(f.seq(), seq);
});
