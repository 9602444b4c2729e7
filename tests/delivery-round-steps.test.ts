/**
 * The delivery round's other turns (issue 31; protocol.md 交付插件), `deliverRound` against the fake GitHub without
 * the hub (the ordinary path through the hub is tests/delivery-round.test.ts): failed checks, `deliver-review`,
 * `deliver` withdrawn while the checks run, main moving before the merge (back to sync within the run, at most 3
 * rounds), a draft, a pull request whose head moved, the answer "do not merge", and the last message of each.
 * Time is the test's: sleeping moves it, and the test acts on GitHub at each sleep.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GitHub } from "../plugins/delivery/github.js";
import { deliverRound, inputOf, roundsMax, type RoundInput } from "../plugins/delivery/round.js";
import { roundMessage } from "../plugins/delivery/round-message.js";
import { readMessage } from "../src/worker/receipt.js";
import type { Clock } from "../plugins/delivery/sync.js";
import { fakeGitHubs, type FakeGitHub } from "./github-fake.js";
import { commit, resolve, setBranch, type FileChange } from "./github-fake-git.js";
import { tempDir } from "./helpers.js";

const fake = fakeGitHubs("aa-delivery-steps-", "steps-token");
const root = tempDir("aa-delivery-steps-work-");
after(() => rmSync(root, { recursive: true, force: true }));
const reviewer = join(root, "reviewer.mjs");
writeFileSync(reviewer, `import { readFileSync } from "node:fs";\nif (readFileSync(0, "utf8").includes("FIXME")) { console.log("FIXME left"); process.exit(1); }\n`);
let n = 0;

/** A clock whose sleep moves it at once; `onSleep` runs at each sleep (the nth, from 1). */
function testClock(onSleep: (nth: number) => void = () => {}): Clock {
  let now = 0;
  let count = 0;
  return { now: () => now, sleep: async (ms) => { now += ms; onSleep(++count); } };
}

/** `acme/app` with settings on main, a branch `feature` with one commit, and its pull request labelled `labels`. */
async function setup(labels: string[], opts: { draft?: boolean; ci?: "success" | "failure" | null; files?: Record<string, FileChange>[] } = {}) {
  const f = await fake();
  const settings = { checks: { workflow: "CI", jobs: ["check"] }, review: { command: [process.execPath, reviewer] } };
  const main = f.createRepo("acme/app", { "ops/delivery.json": JSON.stringify(settings) });
  let head = "";
  for (const files of opts.files ?? [{ "src/app.ts": "export const x = 1;\n" }]) head = f.push("acme/app", "feature", files);
  if (opts.ci !== null) ci(f, head, opts.ci ?? "success");
  const pr = f.openPull("acme/app", "feature", { labels, draft: opts.draft });
  const deps = { gh: new GitHub(f.url, "steps-token"), token: "steps-token", objects: join(root, `${++n}.git`), lang: "en" as const, local: true, testLocalHealth: false };
  const input: RoundInput = { repo: "acme/app", number: pr, approved: null, declined: null };
  return { f, main, head, pr, deps, input };
}

/** Records a CI run of `sha` whose job `check` has `conclusion` (null: still running). */
const ci = (f: FakeGitHub, sha: string, conclusion: "success" | "failure" | null) => f.runWorkflow("acme/app", { name: "CI", headSha: sha, headBranch: "feature", jobs: [{ name: "check", conclusion }] });
const statuses = (f: FakeGitHub, sha: string) => f.repo("acme/app").statuses.filter((s) => s.sha === sha).map((s) => `${s.context} ${s.state} ${s.description}`);

test("failed checks: delivery failure, a notice card for that commit, no merge, the label stays", async () => {
  const { f, head, pr, deps, input } = await setup(["deliver"], { ci: "failure" });
  const got = await deliverRound(input, deps);
  assert.deepEqual(got, { kind: "checksFailed", subject: `acme/app#${pr}`, head, jobs: ["check (failure)"] });
  assert.deepEqual(statuses(f, head), ["delivery pending Reviewing this commit", "delivery pending Reviewed; waiting for the full checks", "delivery failure The full checks failed"]);
  assert.deepEqual([f.item("acme/app", pr).pull!.merged, f.item("acme/app", pr).labels], [false, ["deliver"]]);
  const read = readMessage(roundMessage(got, "en"));
  assert.deepEqual([read.outcome, read.summary, read.receipt.notice], ["done", `The full checks failed for acme/app#${pr} at ${head.slice(0, 12)}`, [
    { title: `The full checks failed for acme/app#${pr} at ${head.slice(0, 12)}`, text: "check (failure)", key: `delivery-checks:acme/app#${pr}:${head}` },
  ]]);
  assert.deepEqual(f.faults, []);
});

test("findings: a notice card per commit (a newer commit's findings are a card of their own); deliver-attended's are in the round's message, no card", async () => {
  const { f, head, pr, deps, input } = await setup(["deliver"], { files: [{ "src/app.ts": "// FIXME one\n" }] });
  const first = await deliverRound(input, deps);
  assert.deepEqual(first, { kind: "findings", subject: `acme/app#${pr}`, head, text: "FIXME left", attended: false });
  const next = f.push("acme/app", "feature", { "src/app.ts": "// FIXME two\n" });
  ci(f, next, "success");
  const second = await deliverRound(input, deps);
  assert.deepEqual(second, { kind: "findings", subject: `acme/app#${pr}`, head: next, text: "FIXME left", attended: false });
  const cards = [first, second].map((o) => readMessage(roundMessage(o, "en")).receipt.notice);
  assert.deepEqual(cards, [
    [{ title: `Review found problems in acme/app#${pr} at ${head.slice(0, 12)}`, text: "FIXME left", key: `delivery-review:acme/app#${pr}:${head}` }],
    [{ title: `Review found problems in acme/app#${pr} at ${next.slice(0, 12)}`, text: "FIXME left", key: `delivery-review:acme/app#${pr}:${next}` }],
  ]);

  const attended = await setup(["deliver-attended"], { files: [{ "src/app.ts": "// FIXME three\n" }] });
  const got = await deliverRound(attended.input, attended.deps);
  assert.deepEqual(got, { kind: "findings", subject: `acme/app#${attended.pr}`, head: attended.head, text: "FIXME left", attended: true });
  const read = readMessage(roundMessage(got, "en"));
  assert.deepEqual([read.summary, read.receipt], [`Review found problems in acme/app#${attended.pr} at ${attended.head.slice(0, 12)}`, {}]);
  assert.ok(roundMessage(got, "en").includes("\n\nFIXME left\n"), "the findings in the message");
  assert.deepEqual(statuses(attended.f, attended.head).slice(-2), ["delivery failure Review found problems", "agent-review failure Review found problems"]);
});

test("an octopus merge on the branch, through the fake GitHub: a finding asking for ordinary merges, the reviewer not asked", async () => {
  const { f, main, head, pr, deps, input } = await setup(["deliver"]);
  const dir = f.repo("acme/app").dir;
  // two side branches of main merged at once into the pull request's branch (three parents)
  const a = commit(dir, [main], { "a.txt": "a\n" }, "a");
  const b = commit(dir, [main], { "b.txt": "b\n" }, "b");
  const octopus = commit(dir, [head, a, b], { "a.txt": "a\n", "b.txt": "b\n", "src/app.ts": "// FIXME hidden in the octopus\n" }, "octopus");
  setBranch(dir, "feature", octopus);
  ci(f, octopus, "success");
  const got = await deliverRound(input, deps);
  assert.deepEqual(got, { kind: "findings", subject: `acme/app#${pr}`, head: octopus, text: `commit ${octopus.slice(0, 12)} is an octopus merge of 3 parents, whose changes the review cannot see: make it ordinary merges`, attended: false });
  assert.deepEqual(statuses(f, octopus), ["delivery pending Reviewing this commit", "delivery failure Review found problems", "agent-review failure Review found problems"]);
  assert.equal(f.item("acme/app", pr).pull!.merged, false);
});

test("sync through the round: a branch GitHub cannot update is a failure with a notice card; no synced commit within 15 minutes is Not run for the hub's retry", async () => {
  const conflict = await setup(["deliver"], { files: [{ "src/app.ts": "feature's line\n" }] });
  conflict.f.push("acme/app", "main", { "src/app.ts": "main's line\n" });
  const got = await deliverRound(conflict.input, conflict.deps);
  const reason = `PUT /repos/acme/app/pulls/${conflict.pr}/update-branch: 422 merge conflict between base and head`;
  assert.deepEqual(got, { kind: "conflict", subject: `acme/app#${conflict.pr}`, reason });
  assert.deepEqual(statuses(conflict.f, conflict.head).slice(-1), ["delivery failure Cannot be synced with main; merge main by hand"]);
  assert.deepEqual(readMessage(roundMessage(got, "en")).receipt.notice!.map((c) => [c.text, c.key]), [[reason, `delivery-sync:acme/app#${conflict.pr}`]]);

  const held = await setup(["deliver"]);
  held.f.push("acme/app", "main", { "other.txt": "o\n" });
  held.f.holdSyncs();
  const waited = await deliverRound(held.input, { ...held.deps, clock: testClock() });
  assert.deepEqual(waited, { kind: "notRun", subject: `acme/app#${held.pr}`, error: "no synced commit after 15 minutes" });
  assert.equal(held.f.item("acme/app", held.pr).pull!.merged, false);
});

test("deliver-review: ends after a passing review, the merge-permitting status not written, its labels off with deliver-review last", async () => {
  const { f, head, pr, deps, input } = await setup(["deliver", "deliver-review"]);
  const got = await deliverRound(input, deps);
  assert.deepEqual(got, { kind: "reviewOnly", subject: `acme/app#${pr}`, head });
  assert.deepEqual(statuses(f, head), ["delivery pending Reviewing this commit", "delivery success Reviewed only: not checked, merged or shipped"]);
  assert.deepEqual(f.repo("acme/app").events.get(pr)!.slice(2).map((e) => `${e.event} ${e.label}`), ["unlabeled deliver", "unlabeled deliver-review"]);
  assert.equal(f.item("acme/app", pr).pull!.merged, false);
  assert.equal(readMessage(roundMessage(got, "zh")).summary, `已审查 acme/app#${pr} 的提交 ${head.slice(0, 12)}：没发现问题（只审查：没有检查、合并或上线）`);
});

test("while the checks run: deliver withdrawn ends the round with delivery success saying so; deliver-review added stops before the merge", async () => {
  const withdrawn = await setup(["deliver"], { ci: null });
  const got = await deliverRound(withdrawn.input, { ...withdrawn.deps, clock: testClock(() => withdrawn.f.unlabel("acme/app", withdrawn.pr, "deliver")) });
  assert.deepEqual(got, { kind: "withdrawn", subject: `acme/app#${withdrawn.pr}`, head: withdrawn.head });
  assert.deepEqual(statuses(withdrawn.f, withdrawn.head).slice(-1), ["delivery success Withdrawn: not merged or shipped"]);
  assert.equal(withdrawn.f.item("acme/app", withdrawn.pr).pull!.merged, false);

  assert.deepEqual(withdrawn.f.faults, []);

  // withdrawn, and the checks then fail: still withdrawn (success, no card) — the team no longer asks for a delivery
  const late = await setup(["deliver"], { ci: null });
  const failedAfter = await deliverRound(late.input, { ...late.deps, clock: testClock(() => {
    late.f.unlabel("acme/app", late.pr, "deliver");
    ci(late.f, late.head, "failure");
  }) });
  assert.deepEqual(failedAfter, { kind: "withdrawn", subject: `acme/app#${late.pr}`, head: late.head });
  assert.deepEqual(statuses(late.f, late.head).slice(-1), ["delivery success Withdrawn: not merged or shipped"]);
  assert.deepEqual(readMessage(roundMessage(failedAfter, "en")).receipt, {}, "no card");
  assert.deepEqual(late.f.faults, []);

  const review = await setup(["deliver"], { ci: null });
  const stopped = await deliverRound(review.input, { ...review.deps, clock: testClock(() => review.f.label("acme/app", review.pr, "deliver-review")) });
  assert.equal(stopped.kind, "reviewOnly");
  assert.equal(statuses(review.f, review.head).some((s) => s.startsWith("agent-review")), false, "no merge-permitting review status");
  assert.deepEqual(review.f.item("acme/app", review.pr).labels, []);
  assert.deepEqual(review.f.faults, []);
});

test("checks that do not finish within the limit, and a head that moves or a target that changes while waiting, end the run for the hub's retry", async () => {
  const slow = await setup(["deliver"], { ci: null });
  const got = await deliverRound(slow.input, { ...slow.deps, checksWaitMs: 60_000, clock: testClock() });
  assert.deepEqual(got, { kind: "notRun", subject: `acme/app#${slow.pr}`, error: "the full checks did not finish within 1 minutes" });
  assert.equal(roundMessage(got, "en"), `Not run: the delivery round of acme/app#${slow.pr} did not finish (the full checks did not finish within 1 minutes)\n`);
  const moved = await setup(["deliver"], { ci: null });
  const gone = await deliverRound(moved.input, { ...moved.deps, clock: testClock(() => moved.f.push("acme/app", "feature", { "src/app.ts": "export const x = 2;\n" })) });
  assert.deepEqual(gone, { kind: "notRun", subject: `acme/app#${moved.pr}`, error: "the pull request's head or target changed" });
  assert.equal(moved.f.item("acme/app", moved.pr).pull!.merged, false);
  // its target changed away from main while waiting (a person edited the pull request's base)
  const retargeted = await setup(["deliver"], { ci: null });
  const away = await deliverRound(retargeted.input, { ...retargeted.deps, clock: testClock(() => {
    retargeted.f.item("acme/app", retargeted.pr).pull!.baseRef = "release";
  }) });
  assert.deepEqual(away, { kind: "notRun", subject: `acme/app#${retargeted.pr}`, error: "the pull request's head or target changed" });
  assert.equal(retargeted.f.item("acme/app", retargeted.pr).pull!.merged, false);
});

test(`main moving before the merge sends the round back to sync within the run, with main's settings read again; after ${roundsMax} rounds the run ends for a retry`, async () => {
  const { f, pr, deps, input } = await setup(["deliver"], { ci: null });
  // each time the checks are waited for: main moves (once, with new settings: the review status renamed), and CI
  // passes on the head the sync made
  let moves = 0;
  const renamed = { checks: { workflow: "CI", jobs: ["check"] }, review: { command: [process.execPath, reviewer], status: "team-review" } };
  const clock = testClock(() => {
    if (moves < 1) {
      f.push("acme/app", "main", { [`main-${++moves}.txt`]: "m\n", "ops/delivery.json": JSON.stringify(renamed) });
    }
    ci(f, f.headSha("acme/app", pr), "success");
  });
  const got = await deliverRound(input, { ...deps, clock });
  assert.equal(got.kind, "merged");
  const head = f.headSha("acme/app", pr);
  // the new round read main's new settings: the review status it wrote is the renamed one
  assert.deepEqual(statuses(f, head).filter((x) => /review /.test(x)), ["team-review success Reviewed: no problems found"]);
  assert.deepEqual(f.item("acme/app", pr).pull!.mergeSha, resolve(f.repo("acme/app").dir, "refs/heads/main"));
  assert.deepEqual(got, { kind: "merged", subject: `acme/app#${pr}`, head, merge: f.item("acme/app", pr).pull!.mergeSha });
  assert.equal(f.seen.filter((s) => s.template === "/repos/{owner}/{repo}/pulls/{pull_number}/update-branch").length, 1, "synced once, within the run");

  const again = await setup(["deliver"], { ci: null });
  const always = testClock(() => {
    again.f.push("acme/app", "main", { [`m-${Math.random()}.txt`]: "m\n" });
    ci(again.f, again.f.headSha("acme/app", again.pr), "success");
  });
  const ended = await deliverRound(again.input, { ...again.deps, clock: always });
  assert.deepEqual(ended, { kind: "notRun", subject: `acme/app#${again.pr}`, error: `main moved before the merge in ${roundsMax} rounds in a row` });
  assert.equal(again.f.item("acme/app", again.pr).pull!.merged, false);
  assert.deepEqual(f.faults, []);
});

test("nothing starts for an unlabelled pull request; the answer 'do not merge' writes delivery failure on that commit", async () => {
  const draft = await setup([], { draft: true });
  assert.deepEqual(await deliverRound(draft.input, draft.deps), { kind: "nothing", subject: `acme/app#${draft.pr}`, why: "has no delivery label" });
  assert.deepEqual(draft.f.repo("acme/app").statuses, []);

  const declined = await setup(["deliver-attended"]);
  const input = inputOf({ answers: [{ choice: 1, about: `delivery-merge acme/app#${declined.pr} ${declined.head}` }] }, "acme/app")!;
  assert.deepEqual(input, { repo: "acme/app", number: declined.pr, approved: null, declined: declined.head });
  const got = await deliverRound(input, declined.deps);
  assert.equal(roundMessage(got, "en"), `Nothing to do: acme/app#${declined.pr} is not merged: you answered not to merge ${declined.head.slice(0, 12)}\n`);
  assert.deepEqual(statuses(declined.f, declined.head), ["delivery failure Not merged: the owner declined"]);
});

test("the context file: the latest answer to the round's question wins over events; an event of another repository starts nothing", () => {
  const sha = "a".repeat(40);
  assert.deepEqual(inputOf({ events: [{ type: "delivery.pull_request", subject: "acme/app#3" }], answers: [{ choice: 0, about: `delivery-merge acme/app#4 ${sha}` }] }, "acme/app"),
    { repo: "acme/app", number: 4, approved: sha, declined: null });
  assert.deepEqual(inputOf({ events: [{ type: "delivery.pull_request", subject: "acme/app#3" }, { type: "delivery.pull_request", subject: "acme/app#5" }] }, "acme/app"),
    { repo: "acme/app", number: 5, approved: null, declined: null });
  assert.equal(inputOf({ events: [{ type: "delivery.pull_request", subject: "evil/app#3" }] }, "acme/app"), null);
  assert.equal(inputOf({ events: [{ type: "delivery.issue", subject: "acme/app#3" }] }, "acme/app"), null);
  assert.equal(inputOf({ answers: [{ choice: 0, about: "delivery-merge evil/app#4 " + sha }] }, "acme/app"), null);
});

test("a head whose review failed is not synced, reviewed or written again, even when main moved on", async () => {
  const { f, head, pr, deps, input } = await setup(["deliver"]);
  f.repo("acme/app").statuses.push({ id: f.id(), sha: head, context: "agent-review", state: "failure", description: "Review found problems", createdAt: f.now() });
  f.push("acme/app", "main", { "later.txt": "l\n" });
  const before = f.repo("acme/app").statuses.length;
  assert.deepEqual(await deliverRound(input, { ...deps, clock: testClock() }), { kind: "nothing", subject: `acme/app#${pr}`, why: `failed review at ${head.slice(0, 12)}; push a new commit to have it reviewed again` });
  assert.equal(f.seen.filter((s) => s.method !== "GET").length, 0, "no update-branch, no status");
  assert.equal(f.repo("acme/app").statuses.length, before);
  assert.equal(f.headSha("acme/app", pr), head);
  assert.deepEqual(f.faults, []);
});

test("a branch that changes only ordinary internal docs is not given to the reviewer, and the round's message says so; code, an executable doc or an earlier code commit are reviewed", async () => {
  // the test's reviewer finds every FIXME: the docs below have one, so a call of the reviewer would be a finding
  const docs = await setup(["deliver"], { files: [{ "docs/guide.md": "FIXME: explain\n", "README.md": "FIXME\n" }, { "notes/a.md": "FIXME\n" }] });
  const got = await deliverRound(docs.input, docs.deps);
  const merge = docs.f.item("acme/app", docs.pr).pull!.mergeSha!;
  assert.deepEqual(got, { kind: "merged", subject: `acme/app#${docs.pr}`, head: docs.head, merge, docsOnly: true });
  assert.equal(roundMessage(got, "en"), [
    `Merged acme/app#${docs.pr}: reviewed and checked commit ${docs.head.slice(0, 12)}, merge commit ${merge.slice(0, 12)}; the project has no health settings, so only the merge was done, not followed through Ship`,
    "",
    "The review did not call the reviewer: the reviewed changes touch only ordinary internal docs (internalDocs of ops/delivery.json)",
    "",
  ].join("\n"));
  assert.equal(readMessage(roundMessage(got, "zh")).summary, `已合并 acme/app#${docs.pr}：审查并检查过的提交 ${docs.head.slice(0, 12)}，合并提交 ${merge.slice(0, 12)}；项目没有健康设置，只完成了合并，没有跟踪 Ship 和上线`);
  assert.deepEqual(statuses(docs.f, docs.head).slice(0, 3), ["delivery pending Reviewing this commit", "delivery pending Reviewed; waiting for the full checks", "agent-review success Reviewed: no problems found"]);

  const branches: Record<string, FileChange>[][] = [
    [{ "docs/guide.md": "FIXME\n", "src/app.ts": "x\n" }],
    [{ "docs/run.md": { text: "FIXME\n", mode: "100755" as const } }],
    [{ "src/app.ts": "// FIXME\n" }, { "docs/guide.md": "later docs\n" }],
    [{ "docs/link.md": { text: "README.md", mode: "120000" as const } }, { "docs/guide.md": "FIXME\n" }],
  ];
  for (const files of branches) {
    const mixed = await setup(["deliver"], { files });
    const found = await deliverRound(mixed.input, mixed.deps);
    assert.deepEqual(found, { kind: "findings", subject: `acme/app#${mixed.pr}`, head: mixed.head, text: "FIXME left", attended: false }, JSON.stringify(files));
  }
});

/** The requests that wrote something, as `method template` (GraphQL by its operation's first field). */
const writes = (f: FakeGitHub) => f.seen.filter((x) => x.method !== "GET" && !(x.template === "/graphql" && String((x.body as { query: string }).query).startsWith("query")))
  .map((x) => x.template === "/graphql" ? `graphql ${/\{ (\w+)\(/.exec((x.body as { query: string }).query)![1]}` : `${x.method} ${x.template}${x.template!.endsWith("statuses/{sha}") ? ` ${(x.body as { context: string }).context} ${(x.body as { state: string }).state}` : ""}`);

/** Whether a GraphQL request body is a mutation. */
const mutation = (body: unknown) => String((body as { query: string }).query).startsWith("mutation");

test("a draft is turned ready before the checks: the run made while it was a draft does not count, the one after ready_for_review does", async () => {
  const { f, head, pr, deps, input } = await setup(["deliver"], { draft: true, ci: "success" });
  // the project's workflow triggers on ready_for_review: GitHub starts a new run when the draft turns ready
  let readyRun = 0;
  f.afterRequest("POST", "/graphql", ({ body }) => {
    if (String((body as { query: string }).query).includes("markPullRequestReadyForReview")) readyRun = f.runWorkflow("acme/app", { name: "CI", headSha: head, headBranch: "feature", jobs: [{ name: "check", conclusion: null }] });
  }, false);
  const clock = testClock((nth) => {
    // the run of the draft passed long ago; the new one finishes at the second read
    if (nth === 1) f.repo("acme/app").runs.find((r) => r.id === readyRun)!.jobs[0]!.conclusion = "success";
  });
  const got = await deliverRound(input, { ...deps, clock });
  assert.equal(got.kind, "merged");
  assert.equal(f.item("acme/app", pr).pull!.draft, false);
  assert.notEqual(readyRun, 0);
  assert.deepEqual(writes(f), [
    "POST /repos/{owner}/{repo}/statuses/{sha} delivery pending",
    "graphql markPullRequestReadyForReview",
    "POST /repos/{owner}/{repo}/statuses/{sha} delivery pending",
    "POST /repos/{owner}/{repo}/statuses/{sha} agent-review success",
    "PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge",
    "POST /repos/{owner}/{repo}/statuses/{sha} delivery success",
    "DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}",
  ]);
  assert.equal(f.item("acme/app", pr).pull!.mergeSha, resolve(f.repo("acme/app").dir, "refs/heads/main"));
  assert.deepEqual(f.faults, []);

  // a ready answer lost is read back; with no run after ready, the earlier run never counts: the checks time out
  const lost = await setup(["deliver"], { draft: true, ci: "success" });
  lost.f.dropResponse("POST", "/graphql", 1, mutation);
  const waited = await deliverRound(lost.input, { ...lost.deps, checksWaitMs: 60_000, clock: testClock() });
  assert.deepEqual(waited, { kind: "notRun", subject: `acme/app#${lost.pr}`, error: "the full checks did not finish within 1 minutes" });
  assert.equal(lost.f.item("acme/app", lost.pr).pull!.draft, false);
  assert.equal(lost.f.item("acme/app", lost.pr).pull!.merged, false);
  assert.deepEqual(lost.f.faults, []);
});

test("auto-merge is turned off and read back before the merge-permitting status; if it stays on, nothing permits or merges", async () => {
  const { f, pr, deps, input } = await setup(["deliver"]);
  f.enableAutoMerge("acme/app", pr);
  f.dropResponse("POST", "/graphql", 1, mutation);
  const got = await deliverRound(input, deps);
  assert.equal(got.kind, "merged");
  assert.equal(f.item("acme/app", pr).pull!.autoMerge, null);
  assert.deepEqual(writes(f).slice(0, 4), [
    "POST /repos/{owner}/{repo}/statuses/{sha} delivery pending",
    "POST /repos/{owner}/{repo}/statuses/{sha} delivery pending",
    "graphql disablePullRequestAutoMerge",
    "POST /repos/{owner}/{repo}/statuses/{sha} agent-review success",
  ]);
  assert.deepEqual(f.faults, []);

  const stuck = await setup(["deliver"]);
  stuck.f.enableAutoMerge("acme/app", stuck.pr);
  stuck.f.refuse("POST", "/graphql", 502, 1, mutation);
  // the refused write is followed by its read back, which finds auto-merge still on
  const ended = await deliverRound(stuck.input, stuck.deps);
  assert.deepEqual(ended, { kind: "notRun", subject: `acme/app#${stuck.pr}`, error: `acme/app#${stuck.pr}: auto-merge still on, read back after the write` });
  assert.equal(stuck.f.item("acme/app", stuck.pr).pull!.merged, false);
  assert.equal(statuses(stuck.f, stuck.head).some((x) => x.startsWith("agent-review")), false);
});

test("the fake's GraphQL takes only what GitHub's schema allows and the fake has: anything else is a fault", async () => {
  const { f, pr } = await setup(["deliver"]);
  const gh = new GitHub(f.url, "steps-token");
  assert.deepEqual(await gh.graphql("query($n: Int!) { repository(owner: \"acme\", name: \"app\") { pullRequest(number: $n) { number isDraft state autoMergeRequest { mergeMethod } } } }", { n: pr }),
    { repository: { pullRequest: { number: pr, isDraft: false, state: "OPEN", autoMergeRequest: null } } });
  await assert.rejects(gh.graphql("query { repository(owner: \"acme\", name: \"app\") { pullRequest(number: 1) { isDrafted } } }", {}), /Cannot query field "isDrafted" on type "PullRequest"/);
  await assert.rejects(gh.graphql("query { repository(owner: \"acme\", name: \"app\") { pullRequest(number: 1) { title } } }", {}), /PullRequest.title is not in the fake/);
  await assert.rejects(gh.graphql("mutation { closePullRequest(input: { pullRequestId: \"x\" }) { clientMutationId } }", {}), /Mutation.closePullRequest is not in the fake/);
  await assert.rejects(gh.graphql("mutation { disablePullRequestAutoMerge(input: { pullRequestId: \"PR_0\" }) { clientMutationId } }", {}), /Could not resolve to a node/);
  assert.equal(f.faults.length, 3);
  assert.match(f.faults[0]!, /^POST \/graphql: refused by GitHub's schema: Cannot query field "isDrafted"/);
  f.faults.splice(0); // seen: the file's check after each test holds the rest to the description
});
