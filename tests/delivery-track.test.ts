/**
 * Following a delivery through Ship and health (issue 31; protocol.md 交付插件, 发布, 后续发布, 跟踪): `deliverRound`
 * against the fake GitHub and a health endpoint on 127.0.0.1 (`--test-local-health`), without the hub. A merge is
 * live only after a successful Ship run that covers it and a health version that contains it (or differs by internal
 * docs only); a failed Ship is "not run" for the hub's retry, a later release completes an older delivery, a finished
 * one never regresses, an unlabelled merged pull request is not followed. Time is the test's: sleeping moves it.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { GitHub } from "../plugins/delivery/github.js";
import { deliverRound, type RoundInput } from "../plugins/delivery/round.js";
import { roundMessage } from "../plugins/delivery/round-message.js";
import { trackReadEveryMs } from "../plugins/delivery/track.js";
import { readMessage } from "../src/worker/receipt.js";
import type { Clock } from "../plugins/delivery/sync.js";
import { fakeGitHubs, type FakeGitHub } from "./github-fake.js";
import { resolve } from "./github-fake-git.js";
import { tempDir } from "./helpers.js";

const fake = fakeGitHubs("aa-delivery-track-", "track-token");
const root = tempDir("aa-delivery-track-work-");
after(() => rmSync(root, { recursive: true, force: true }));
const reviewer = join(root, "reviewer.mjs");
writeFileSync(reviewer, `process.exit(0);\n`);
let n = 0;

/** A health endpoint on 127.0.0.1 serving `{ version }` (null: 503), as `state.version` says at each request. */
async function healthServer() {
  const state: { version: string | null; reads: number } = { version: null, reads: 0 };
  const server: Server = createServer((_req, res) => {
    state.reads++;
    if (state.version === null) res.writeHead(503).end("starting");
    else res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ status: "ok", version: state.version }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  after(() => server.close());
  return { state, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/health` };
}

/** A clock whose sleep moves it at once; `onSleep` runs at each sleep (the nth, from 1). */
function testClock(onSleep: (nth: number) => void | Promise<void> = () => {}): Clock {
  let now = 0;
  let count = 0;
  return { now: () => now, sleep: async (ms) => { now += ms; await onSleep(++count); } };
}

/**
 * `acme/app` with settings on main (health at `healthUrl` unless null, following 5 minutes), the live version main's
 * first commit, a branch `feature` changing code, its CI passed, and its pull request labelled `labels`.
 */
async function setup(labels: string[], healthUrl: string | null) {
  const f = await fake();
  const settings = {
    checks: { workflow: "CI", jobs: ["check"] }, review: { command: [process.execPath, reviewer] }, trackMinutes: 5,
    ...(healthUrl === null ? {} : { health: { url: healthUrl, field: "version" } }),
  };
  const first = f.createRepo("acme/app", { "ops/delivery.json": JSON.stringify(settings), "src/app.ts": "export const x = 0;\n" });
  const head = f.push("acme/app", "feature", { "src/app.ts": "export const x = 1;\n" });
  f.runWorkflow("acme/app", { name: "CI", headSha: head, headBranch: "feature", jobs: [{ name: "check", conclusion: "success" }] });
  const pr = f.openPull("acme/app", "feature", { labels });
  const deps = { gh: new GitHub(f.url, "track-token"), token: "track-token", objects: join(root, `${++n}.git`), lang: "en" as const, local: true, testLocalHealth: true };
  const input: RoundInput = { repo: "acme/app", number: pr, approved: null, declined: null };
  return { f, first, head, pr, deps, input };
}

/** Records a Ship run on a push to main at `sha` whose job ends `conclusion` (null: still running). @returns its id. */
const ship = (f: FakeGitHub, sha: string, conclusion: "success" | "failure" | null) =>
  f.runWorkflow("acme/app", { name: "Ship", event: "push", headSha: sha, headBranch: "main", jobs: [{ name: "release", conclusion }] });
const statuses = (f: FakeGitHub, sha: string) => f.repo("acme/app").statuses.filter((s) => s.sha === sha).map((s) => `${s.context} ${s.state} ${s.description}`);
const labelEvents = (f: FakeGitHub, pr: number) => f.repo("acme/app").events.get(pr)!.filter((e) => e.actor === "delivery-bot").map((e) => `${e.event} ${e.label}`);
const mainOf = (f: FakeGitHub) => resolve(f.repo("acme/app").dir, "refs/heads/main")!;

test("merged, then Ship covers the merge and the health version is it: shipped, delivery success, deliver taken off last", async () => {
  const health = await healthServer();
  const { f, first, head, pr, deps, input } = await setup(["deliver"], health.url);
  health.state.version = first;
  const clock = testClock((nth) => {
    // the first read finds no Ship run; then Ship runs and releases the merge
    if (nth === 1) ship(f, mainOf(f), "success");
    if (nth === 2) health.state.version = mainOf(f);
  });
  const got = await deliverRound(input, { ...deps, clock });
  const merge = f.item("acme/app", pr).pull!.mergeSha!;
  assert.deepEqual(got, { kind: "shipped", subject: `acme/app#${pr}`, head, merge, live: merge });
  assert.deepEqual(statuses(f, head).slice(-2), [`delivery pending Merged as ${merge.slice(0, 12)}; waiting for Ship and the health check`, `delivery success Shipped: live version ${merge.slice(0, 12)}`]);
  assert.deepEqual(labelEvents(f, pr), ["unlabeled deliver"]);
  assert.equal(readMessage(roundMessage(got, "en")).summary, `Shipped acme/app#${pr}: merge commit ${merge.slice(0, 12)} released by Ship, the health endpoint's version ${merge.slice(0, 12)} covers it`);
  assert.equal(readMessage(roundMessage(got, "zh")).summary, `已上线 acme/app#${pr}：合并提交 ${merge.slice(0, 12)} 已由 Ship 发布，健康检查的版本 ${merge.slice(0, 12)} 覆盖了它`);
  assert.deepEqual(f.faults, []);
});

test("a health 200 never covers an unfinished or failed Ship: not run for the hub's retry, the label kept", async () => {
  const health = await healthServer();
  const { f, first, head, pr, deps, input } = await setup(["deliver"], health.url);
  health.state.version = first;
  let run = 0;
  const clock = testClock((nth) => {
    if (nth === 1) {
      // deployed by hand: the health endpoint serves the merge while Ship still runs, then Ship fails
      health.state.version = mainOf(f);
      run = ship(f, mainOf(f), null);
    }
    if (nth === 3) f.repo("acme/app").runs.find((r) => r.id === run)!.jobs[0]!.conclusion = "failure";
  });
  const got = await deliverRound(input, { ...deps, clock });
  const merge = f.item("acme/app", pr).pull!.mergeSha!;
  assert.deepEqual(got, { kind: "notRun", subject: `acme/app#${pr}`, error: `Ship run ${run}, which covers merge commit ${merge.slice(0, 12)}, failed` });
  assert.equal(health.state.reads, 0);
  assert.deepEqual(statuses(f, head).slice(-1), [`delivery pending Merged as ${merge.slice(0, 12)}; waiting for Ship and the health check`]);
  assert.deepEqual(f.item("acme/app", pr).labels, ["deliver"]);
  assert.equal(readMessage(roundMessage(got, "en")).outcome, "failed");
});

test("a later release that covers and is live completes an older delivery; once finished it never regresses", async () => {
  const health = await healthServer();
  const { f, first, head, pr, deps, input } = await setup(["deliver"], health.url);
  health.state.version = first;
  const failed = await deliverRound(input, { ...deps, clock: testClock((nth) => { if (nth === 1) ship(f, mainOf(f), "failure"); }) });
  const merge = f.item("acme/app", pr).pull!.mergeSha!;
  assert.equal(failed.kind, "notRun");
  // the hub's retry: the poll's event for the merged pull request still labelled deliver; a later commit shipped
  const later = f.push("acme/app", "main", { "src/other.ts": "export const y = 2;\n" });
  ship(f, later, "success");
  health.state.version = later.slice(0, 9);
  const done = await deliverRound(input, { ...deps, clock: testClock() });
  assert.deepEqual(done, { kind: "shipped", subject: `acme/app#${pr}`, head, merge, live: later });
  assert.deepEqual(labelEvents(f, pr), ["unlabeled deliver"]);
  // a later failed release and a new round: nothing followed, nothing written
  ship(f, f.push("acme/app", "main", { "src/third.ts": "export const z = 3;\n" }), "failure");
  const before = f.repo("acme/app").statuses.length;
  const again = await deliverRound(input, { ...deps, clock: testClock() });
  assert.deepEqual(again, { kind: "nothing", subject: `acme/app#${pr}`, why: "is merged and no longer labelled for delivery: not followed" });
  assert.equal(f.repo("acme/app").statuses.length, before);
});

test("a live version that does not contain the merge: live when only internal docs differ, else not live in time", async () => {
  const health = await healthServer();
  const { f, head, pr, deps, input } = await setup(["deliver"], health.url);
  // Ship released a commit on a branch off main (not the merge's history): unknown history, a release is needed
  const elsewhere = f.push("acme/app", "hotfix", { "src/app.ts": "export const x = 9;\n" });
  health.state.version = elsewhere;
  const clock = testClock((nth) => { if (nth === 1) ship(f, mainOf(f), "success"); });
  const got = await deliverRound(input, { ...deps, clock });
  const merge = f.item("acme/app", pr).pull!.mergeSha!;
  assert.deepEqual(got, { kind: "notRun", subject: `acme/app#${pr}`, error: `not live after 5 minutes: the live version ${elsewhere.slice(0, 12)} does not contain it (the live version ${elsewhere.slice(0, 12)} is not in the history of ${merge.slice(0, 12)})` });
  assert.ok(health.state.reads >= 5 * 60_000 / trackReadEveryMs, String(health.state.reads));
  // the health endpoint serves the merge's first parent and the merge changed code: not live; a docs-only
  // merge over the live version is live at once
  const docs = await setup(["deliver"], health.url);
  docs.f.push("acme/app", "feature", { "src/app.ts": "export const x = 0;\n", "docs/guide.md": "# Guide\n" });
  const docsHead = docs.f.headSha("acme/app", docs.pr);
  docs.f.runWorkflow("acme/app", { name: "CI", headSha: docsHead, headBranch: "feature", jobs: [{ name: "check", conclusion: "success" }] });
  health.state.version = docs.first;
  const live = await deliverRound(docs.input, { ...docs.deps, clock: testClock((nth) => { if (nth === 1) ship(docs.f, mainOf(docs.f), "success"); }) });
  assert.deepEqual(live, { kind: "shipped", subject: `acme/app#${docs.pr}`, head: docsHead, merge: docs.f.item("acme/app", docs.pr).pull!.mergeSha!, live: docs.first });
  assert.deepEqual(statuses(f, head).slice(-1), [`delivery pending Merged as ${merge.slice(0, 12)}; waiting for Ship and the health check`]);
});

test("merged by someone else while the checks run, and a project without health settings", async () => {
  const health = await healthServer();
  const other = await setup(["deliver"], health.url);
  other.f.repo("acme/app").runs[0]!.jobs[0]!.conclusion = null;
  health.state.version = other.first;
  const clock = testClock(async (nth) => {
    if (nth === 1) {
      // a maintainer merges by hand; Ship releases it
      const res = await fetch(`${other.f.url}/repos/acme/app/pulls/${other.pr}/merge`, { method: "PUT", headers: { authorization: "Bearer track-token", "content-type": "application/json" }, body: "{}" });
      assert.equal(res.status, 200);
    }
    if (nth === 2) {
      ship(other.f, mainOf(other.f), "success");
      health.state.version = mainOf(other.f);
    }
  });
  const got = await deliverRound(other.input, { ...other.deps, clock });
  const merge = other.f.item("acme/app", other.pr).pull!.mergeSha!;
  assert.deepEqual(got, { kind: "shipped", subject: `acme/app#${other.pr}`, head: other.head, merge, live: merge });

  const plain = await setup(["deliver"], null);
  const merged = await deliverRound(plain.input, { ...plain.deps, clock: testClock() });
  const m = plain.f.item("acme/app", plain.pr).pull!.mergeSha!;
  assert.deepEqual(merged, { kind: "merged", subject: `acme/app#${plain.pr}`, head: plain.head, merge: m });
  assert.deepEqual(statuses(plain.f, plain.head).slice(-1), [`delivery success Merged as ${m.slice(0, 12)}; no health settings: only the merge was done`]);
  assert.deepEqual(labelEvents(plain.f, plain.pr), ["unlabeled deliver"]);
  assert.equal(readMessage(roundMessage(merged, "en")).summary, `Merged acme/app#${plain.pr}: reviewed and checked commit ${plain.head.slice(0, 12)}, merge commit ${m.slice(0, 12)}; the project has no health settings, so only the merge was done, not followed through Ship`);
});
