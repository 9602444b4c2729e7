/**
 * Merging by the reviewed SHA and taking labels off (issue 31; protocol.md 交付插件, 自动合并与响应丢失) against the
 * fake GitHub: a lost merge answer is read back, never merged again; a lost or failed label removal is read back; the
 * label that marks the round's state goes last; a label edit by someone else in between does no harm.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { GitHub, GitHubError } from "../plugins/delivery/github.js";
import { mergeReviewed, removeLabels } from "../plugins/delivery/finish.js";
import { fakeGitHubs, type FakeGitHub } from "./github-fake.js";
import { resolve } from "./github-fake-git.js";

const fake = fakeGitHubs("aa-delivery-finish-", "finish-token");

async function setup(labels: string[], draft = false): Promise<{ f: FakeGitHub; gh: GitHub; pr: number; head: string }> {
  const f = await fake();
  f.createRepo("acme/app", { "README.md": "hi\n" });
  const head = f.push("acme/app", "feature", { "a.txt": "a\n" });
  const pr = f.openPull("acme/app", "feature", { labels, draft });
  return { f, gh: new GitHub(f.url, "finish-token"), pr, head };
}

const merges = (f: FakeGitHub) => f.seen.filter((s) => s.template === "/repos/{owner}/{repo}/pulls/{pull_number}/merge").length;
/** The label records after the setup's, as `event label actor`. */
const records = (f: FakeGitHub, pr: number) => f.repo("acme/app").events.get(pr)!.map((e) => `${e.event} ${e.label} ${e.actor}`);

test("a merge by the reviewed SHA makes a merge commit on main", async () => {
  const { f, gh, pr, head } = await setup(["deliver"]);
  const got = await mergeReviewed(gh, "acme/app", pr, head);
  assert.deepEqual(got, { kind: "merged", sha: resolve(f.repo("acme/app").dir, "refs/heads/main"), readBack: false });
  assert.deepEqual(f.seen.find((s) => s.template?.endsWith("/merge"))?.body, { sha: head, merge_method: "merge" });
  assert.deepEqual(f.faults, []);
});

test("a lost merge answer is read back: merged, and never a second merge", async () => {
  const { f, gh, pr, head } = await setup(["deliver"]);
  f.dropResponse("PUT", "/repos/{owner}/{repo}/pulls/{pull_number}/merge");
  const got = await mergeReviewed(gh, "acme/app", pr, head);
  assert.deepEqual(got, { kind: "merged", sha: f.item("acme/app", pr).pull!.mergeSha, readBack: true });
  assert.equal(merges(f), 1);
  assert.deepEqual(f.faults, []);
});

test("a head that moved since the review is not merged; nor is a draft", async () => {
  const a = await setup(["deliver"]);
  a.f.push("acme/app", "feature", { "a.txt": "pushed after the review\n" });
  assert.deepEqual(await mergeReviewed(a.gh, "acme/app", a.pr, a.head), { kind: "headChanged" });
  assert.equal(a.f.item("acme/app", a.pr).pull!.merged, false);
  const b = await setup(["deliver"], true);
  assert.deepEqual(await mergeReviewed(b.gh, "acme/app", b.pr, b.head), { kind: "notMergeable", reason: "PUT /repos/acme/app/pulls/1/merge: 405 Pull Request is not mergeable" });
  assert.deepEqual([...a.f.faults, ...b.f.faults], []);
});

test("labels come off with the state-marking one last: deliver on a merged pull request, deliver-review on one not merged", async () => {
  const a = await setup(["deliver", "deliver-attended"]);
  assert.equal((await mergeReviewed(a.gh, "acme/app", a.pr, a.head)).kind, "merged");
  await removeLabels(a.gh, "acme/app", a.pr, ["deliver", "deliver-attended"], "deliver");
  assert.deepEqual(records(a.f, a.pr), ["labeled deliver alice", "labeled deliver-attended alice", "unlabeled deliver-attended delivery-bot", "unlabeled deliver delivery-bot"]);
  const b = await setup(["deliver-review", "deliver"]);
  await removeLabels(b.gh, "acme/app", b.pr, ["deliver-review", "deliver"], "deliver-review");
  assert.deepEqual(records(b.f, b.pr).slice(2), ["unlabeled deliver delivery-bot", "unlabeled deliver-review delivery-bot"]);
  assert.deepEqual([...a.f.faults, ...b.f.faults], []);
});

test("a lost removal answer is read back; a label someone else took off in between counts as removed", async () => {
  const { f, gh, pr } = await setup(["deliver", "deliver-attended"]);
  f.dropResponse("DELETE", "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}");
  f.afterRequest("DELETE", "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}", () => void f.unlabel("acme/app", pr, "deliver", "bob"));
  await removeLabels(gh, "acme/app", pr, ["deliver", "deliver-attended"], "deliver");
  assert.deepEqual(f.item("acme/app", pr).labels, []);
  assert.deepEqual(records(f, pr).slice(2), ["unlabeled deliver-attended delivery-bot", "unlabeled deliver bob"]);
  assert.equal(f.seen.filter((s) => s.method === "DELETE").length, 2, "each label asked once");
  assert.deepEqual(f.faults, []);
});

test("a removal that failed and left the label on stops there: the last label stays for the retry", async () => {
  const { f, gh, pr } = await setup(["deliver-review", "deliver"]);
  f.refuse("DELETE", "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}", 410);
  await assert.rejects(removeLabels(gh, "acme/app", pr, ["deliver-review", "deliver"], "deliver-review"),
    (e: Error) => e instanceof GitHubError && e.status === 410 && e.message === "DELETE /repos/acme/app/issues/1/labels/deliver: 410 refused by the test");
  assert.deepEqual(f.item("acme/app", pr).labels, ["deliver-review", "deliver"]);
  await removeLabels(gh, "acme/app", pr, ["deliver-review", "deliver"], "deliver-review");
  assert.deepEqual(f.item("acme/app", pr).labels, []);
  assert.deepEqual(f.faults, []);
});
