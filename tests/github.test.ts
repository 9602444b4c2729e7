/**
 * Signed GitHub webhooks in through POST /v1/in/<source> and the built-in `github` adapter, with the real payloads
 * of @octokit/webhooks-examples signed in the test, plus tampered and unsigned ones.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { hubFixture, baseRules, githubExamples, type Fixture, prose } from "./helpers.js";
import type { EventsAccepted, Job } from "../src/protocol/responses.js";

const secret = "It's a Secret to Everybody";
let f: Fixture;
before(async () => {
  const rules = { ...baseRules, sources: { ...baseRules.sources, gh: { name: "GitHub", adapter: "github" } }, rules: [...baseRules.rules, { name: "gh-issues", when: { source: "gh", types: ["issues.*"] }, to: "bot" }] };
  f = await hubFixture(rules, {}, `# webhook secrets\nAGENT_AUTOLOOP_SECRET_GH="${secret}"\n`);
});
after(async () => {
  await f.close();
});

const sign = (body: string, s = secret) => "sha256=" + createHmac("sha256", s).update(body).digest("hex");
async function deliver(event: string, body: string, signature: string | null = sign(body)) {
  const headers: Record<string, string> = { "content-type": "application/json", "x-github-event": event, "x-github-delivery": "d-1" };
  if (signature) headers["x-hub-signature-256"] = signature;
  const res = await fetch(`${f.url}/v1/in/gh`, { method: "POST", headers, body });
  // A refusal's body is `{ error }`: the tests compare it whole.
  return { status: res.status, body: prose(res.status, await res.json()) as EventsAccepted };
}

test("issues.opened becomes the event the rules expect; a redelivery is a duplicate", async () => {
  const payload = githubExamples("issues").find((e) => e.action === "opened")!;
  const issue = payload.issue!;
  const body = JSON.stringify(payload);
  const r = await deliver("issues", body);
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.events.map((e) => [e.duplicate, e.routed]), [[false, ["gh-issues"]]]);
  const again = await deliver("issues", body);
  assert.deepEqual(again.body.events.map((e) => e.duplicate), [true]);
  const st = await f.state();
  assert.equal(st.runs[0]!.rule, "gh-issues");
  const job: Job = (await f.call("GET", "/v1/work?claim=gh1", f.keys.worker)).body.job;
  const ev = job.context.events[0]!;
  assert.deepEqual([ev.source, ev.type, ev.subject, ev.summary, ev.link], ["gh", "issues.opened", `#${issue.number}`, issue.title, issue.html_url]);
  assert.equal(ev.id, `issues:${issue.id}:opened:${issue.updated_at}`);
});

test("every example payload of the eight mapped events is accepted and gives one valid event", async () => {
  const mapped = ["issues", "issue_comment", "pull_request", "pull_request_review", "push", "check_run", "workflow_run", "release"];
  let count = 0;
  for (const name of mapped) {
    for (const payload of githubExamples(name)) {
      const r = await deliver(name, JSON.stringify(payload));
      assert.equal(r.status, 200, `${name}.${payload.action}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.events.length, 1, `${name}.${payload.action}`);
      count++;
    }
  }
  assert.ok(count > 50, `${count} payloads`);
});

test("a push to a very long branch name keeps a stable id within the limit", async () => {
  const push = structuredClone(githubExamples("push")[0]!);
  push.ref = "refs/heads/" + "b".repeat(240);
  const body = JSON.stringify(push);
  const r = await deliver("push", body);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual((await deliver("push", body)).body.events.map((e) => e.duplicate), [true]);
});

test("ping and unmapped events give no event", async () => {
  const ping = githubExamples("ping")[0];
  const r = await deliver("ping", JSON.stringify(ping));
  assert.deepEqual([r.status, r.body], [200, { events: [] }]);
});

test("a signed delivery of the wrong shape is refused with the field named and records nothing (every mapped kind)", async () => {
  const seq = f.seq();
  const cases: [string, unknown, string][] = [
    ["issues", { action: "opened", issue: "notanobject" }, "issue: an object is required"],
    ["issues", { action: "opened", issue: { id: 1, number: "7", updated_at: "2026-11-30T00:00:00Z" } }, "issue.number: a whole number is required"],
    ["issues", { issue: { id: 1, number: 7, updated_at: "x" } }, "action: a non-empty string is required"],
    ["issue_comment", { action: "created", comment: { id: 5, updated_at: "x" }, issue: {} }, "issue.number: a whole number is required"],
    ["pull_request", { action: "opened", pull_request: { id: 2, number: 3 } }, "pull_request.updated_at: a non-empty string is required"],
    ["pull_request_review", { action: "submitted", review: { id: null }, pull_request: { number: 1 } }, "review.id: a whole number is required"],
    ["push", { ref: "refs/heads/main", after: "abc", repository: null }, "repository: an object is required"],
    ["check_run", { action: "completed", check_run: { id: 9 } }, "check_run.status: a non-empty string is required"],
    ["workflow_run", { action: "completed", workflow_run: { id: 1.5, status: "completed" } }, "workflow_run.id: a whole number is required"],
    ["release", { action: "published", release: [] }, "release: an object is required"],
    ["issues", [1, 2], "payload: an object is required"],
  ];
  for (const [event, payload, field] of cases) {
    const body = JSON.stringify(payload);
    const r = await deliver(event, body, sign(body));
    assert.deepEqual([r.status, r.body], [400, { error: `the body is not a valid GitHub "${event}" payload (${field})` }], `${event}: ${body}`);
  }
  assert.equal(f.seq(), seq);
});

test("tampered, unsigned, wrongly signed and malformed deliveries are refused and record nothing", async () => {
  const payload = githubExamples("issues")[0]!;
  const body = JSON.stringify(payload);
  const seq = f.seq();
  const tampered = await deliver("issues", body.replace(payload.issue!.title, "changed"), sign(body));
  assert.deepEqual([tampered.status, tampered.body], [401, { error: "X-Hub-Signature-256 does not match the body" }]);
  const refusedUnread = { error: "not accepted: this address takes only webhooks signed with their source's secret" };
  const unsigned = await deliver("issues", body, null);
  assert.deepEqual([unsigned.status, unsigned.body], [401, refusedUnread], "no signature header: refused before the body");
  const malformed = await deliver("issues", body, "sha1=abc");
  assert.deepEqual([malformed.status, malformed.body], [401, { error: "missing or malformed X-Hub-Signature-256" }]);
  const wrong = await deliver("issues", body, sign(body, "another secret"));
  assert.equal(wrong.status, 401);
  const notJson = await deliver("issues", "not json");
  assert.equal(notJson.status, 400);
  const noEvent = await fetch(`${f.url}/v1/in/gh`, { method: "POST", headers: { "x-hub-signature-256": sign(body) }, body });
  assert.equal(noEvent.status, 400);
  for (const source of ["shop", "nosuch", "constructor"]) {
    const r = await fetch(`${f.url}/v1/in/${source}`, { method: "POST", body });
    assert.deepEqual([r.status, prose(r.status, await r.json())], [401, refusedUnread], "only a declared source with an adapter takes webhooks, and the refusal names none");
  }
  assert.equal(f.seq(), seq);
});
