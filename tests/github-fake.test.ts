/**
 * The fake GitHub of the delivery tests (issue 31), tested on its own: it answers only what GitHub's OpenAPI
 * description has, validates what it answers, keeps objects in real bare git repositories, and makes the hard cases
 * (a lost response, a label edit by someone else, main moving, a held update-branch, matrix and skipped jobs).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { fakeGitHubs, type FakeGitHub } from "./github-fake.js";
import { findOperation, responseFault } from "./github-fake-shapes.js";
import { git, resolve } from "./github-fake-git.js";

const fake = fakeGitHubs("aa-ghfake-", "t0ken");

/** A request as a client makes it. @returns status and parsed body (undefined when empty). */
async function call(f: FakeGitHub, method: string, path: string, body?: unknown, token = "t0ken"): Promise<{ status: number; body: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const res = await fetch(f.url + path, {
    method, headers: { authorization: `Bearer ${token}`, accept: "application/vnd.github+json", ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

test("a request GitHub's description does not have is answered 404 and recorded as a fault; one the fake lacks, 501", async () => {
  const f = await fake();
  f.createRepo("acme/app", { "README.md": "hi\n" });
  assert.equal((await call(f, "GET", "/repos/acme/app/pulls/1/not-a-thing")).status, 404);
  assert.equal((await call(f, "POST", "/repos/acme/app/pulls/1")).status, 404);
  assert.equal((await call(f, "GET", "/repos/acme/app/topics")).status, 501);
  assert.deepEqual(f.faults, [
    "not in GitHub's description: GET /repos/acme/app/pulls/1/not-a-thing",
    "not in GitHub's description: POST /repos/acme/app/pulls/1",
    "GET /repos/{owner}/{repo}/topics: in GitHub's description, not in the fake",
  ]);
  f.faults.splice(0); // seen: the file's check after each test holds the rest to the description
});

test("a request without the token is answered 401; a body the description refuses is a fault and 422", async () => {
  const f = await fake();
  f.createRepo("acme/app", { "README.md": "hi\n" });
  const pr = f.openPull("acme/app", "feature");
  f.push("acme/app", "feature", { "a.txt": "a\n" });
  assert.equal((await call(f, "GET", `/repos/acme/app/pulls/${pr}`, undefined, "wrong")).status, 401);
  assert.equal((await call(f, "POST", `/repos/acme/app/statuses/${f.headSha("acme/app", pr)}`, { state: "fine" })).status, 422);
  assert.equal(f.faults.length, 1);
  assert.match(f.faults[0]!, /^POST \/repos\/\{owner\}\/\{repo\}\/statuses\/\{sha\} request: .*body\/state must be equal to one of the allowed values/);
  f.faults.splice(0); // seen
});

test("answers are validated against the description: a pull request missing its fields is refused", () => {
  const found = findOperation("GET", "/repos/acme/app/pulls/7");
  assert.deepEqual(found?.params, { owner: "acme", repo: "app", pull_number: "7" });
  assert.match(responseFault(found!.operation, 200, { number: 7 }) ?? "", /^GET \/repos\/\{owner\}\/\{repo\}\/pulls\/\{pull_number\} 200: body must have required property '_links'/);
  assert.equal(responseFault(found!.operation, 418, {}), "GET /repos/{owner}/{repo}/pulls/{pull_number}: status 418 is not documented");
  // `literal segments win`: /pulls/comments is its own request, not pull number "comments"
  assert.equal(findOperation("GET", "/repos/acme/app/pulls/comments")?.operation.template, "/repos/{owner}/{repo}/pulls/comments");
});

test("pulls, labelled issues and label records come back whole and valid, with the head read from the bare repository", async () => {
  const f = await fake();
  const main = f.createRepo("acme/app", { "README.md": "hi\n" });
  const head = f.push("acme/app", "feature", { "src/a.ts": "export const a = 1;\n" });
  const pr = f.openPull("acme/app", "feature", { labels: ["deliver"] });
  const issue = f.openIssue("acme/app", "a question", "body", ["ask-owner"]);
  const p = await call(f, "GET", `/repos/acme/app/pulls/${pr}`);
  assert.equal(p.status, 200);
  assert.deepEqual([p.body.head.sha, p.body.base.sha, p.body.base.ref, p.body.head.repo.full_name, p.body.merged], [head, main, "main", "acme/app", false]);
  assert.equal(resolve(f.repo("acme/app").dir, "main"), main);
  const listed = await call(f, "GET", "/repos/acme/app/issues?labels=deliver&state=all&per_page=100");
  assert.deepEqual(listed.body.map((i: { number: number; pull_request?: unknown }) => [i.number, i.pull_request !== undefined]), [[pr, true]]);
  const asked = await call(f, "GET", "/repos/acme/app/issues?labels=ask-owner");
  assert.deepEqual(asked.body.map((i: { number: number }) => i.number), [issue]);
  const second = f.openIssue("acme/app", "another", "", ["ask-owner"]);
  const numbers = async (q: string) => (await call(f, "GET", `/repos/acme/app/issues?labels=ask-owner${q}`)).body.map((i: { number: number }) => i.number);
  assert.deepEqual(await numbers(""), [second, issue], "GitHub's default order: newest created first");
  f.label("acme/app", issue, "bug");
  assert.deepEqual(await numbers("&sort=updated&direction=desc"), [issue, second]);
  assert.deepEqual(await numbers("&sort=created&direction=asc"), [issue, second]);
  const events = await call(f, "GET", `/repos/acme/app/issues/${pr}/events`);
  assert.deepEqual(events.body.map((e: { event: string; label: { name: string } }) => [e.event, e.label.name]), [["labeled", "deliver"]]);
  assert.deepEqual(f.faults, []);
});

test("a dropped response: the merge is applied, the client gets no answer, and reading back shows it merged", async () => {
  const f = await fake();
  const main = f.createRepo("acme/app", { "README.md": "hi\n" });
  const head = f.push("acme/app", "feature", { "a.txt": "a\n" });
  const pr = f.openPull("acme/app", "feature");
  f.dropResponse("PUT", "/repos/{owner}/{repo}/pulls/{pull_number}/merge");
  await assert.rejects(call(f, "PUT", `/repos/acme/app/pulls/${pr}/merge`, { sha: head, merge_method: "merge" }), /fetch failed/);
  const p = await call(f, "GET", `/repos/acme/app/pulls/${pr}`);
  assert.deepEqual([p.body.merged, p.body.state], [true, "closed"]);
  const merged = resolve(f.repo("acme/app").dir, "main")!;
  assert.equal(p.body.merge_commit_sha, merged);
  assert.equal(git(f.repo("acme/app").dir, ["rev-list", "--parents", "-n", "1", merged]), `${merged} ${main} ${head}`);
  const again = await call(f, "PUT", `/repos/acme/app/pulls/${pr}/merge`, { sha: head });
  assert.deepEqual([again.status, again.body.message], [405, "Pull Request is not mergeable"]);
  assert.deepEqual(f.faults, []);
});

test("a merge by a SHA that is no longer the head is refused 409", async () => {
  const f = await fake();
  f.createRepo("acme/app", { "README.md": "hi\n" });
  const old = f.push("acme/app", "feature", { "a.txt": "a\n" });
  const pr = f.openPull("acme/app", "feature");
  f.push("acme/app", "feature", { "a.txt": "b\n" });
  const r = await call(f, "PUT", `/repos/acme/app/pulls/${pr}/merge`, { sha: old });
  assert.deepEqual([r.status, r.body.message], [409, "Head branch was modified. Review and try the merge again."]);
  assert.deepEqual(f.faults, []);
});

test("a label edit by someone else lands between applying a request and its answer; main moves mid-round", async () => {
  const f = await fake();
  const main = f.createRepo("acme/app", { "README.md": "hi\n" });
  f.push("acme/app", "feature", { "a.txt": "a\n" });
  const pr = f.openPull("acme/app", "feature", { labels: ["deliver"] });
  let moved = "";
  f.afterRequest("POST", "/repos/{owner}/{repo}/issues/{issue_number}/labels", () => {
    f.unlabel("acme/app", pr, "deliver", "bob");
    moved = f.push("acme/app", "main", { "b.txt": "b\n" });
  });
  const r = await call(f, "POST", `/repos/acme/app/issues/${pr}/labels`, { labels: ["deliver-review"] });
  assert.deepEqual(r.body.map((l: { name: string }) => l.name), ["deliver", "deliver-review"]);
  assert.deepEqual(f.item("acme/app", pr).labels, ["deliver-review"]);
  const ref = await call(f, "GET", "/repos/acme/app/git/ref/heads/main");
  assert.equal(ref.body.object.sha, moved);
  assert.notEqual(moved, main);
  const events = await call(f, "GET", `/repos/acme/app/issues/${pr}/events`);
  assert.deepEqual(events.body.map((e: { event: string; label: { name: string }; actor: { login: string } }) => `${e.event} ${e.label.name} ${e.actor.login}`),
    ["labeled deliver alice", "labeled deliver-review delivery-bot", "unlabeled deliver bob"]);
  assert.deepEqual(f.faults, []);
});

test("update-branch merges main into the head; held, the synced commit appears only when released", async () => {
  const f = await fake();
  f.createRepo("acme/app", { "README.md": "hi\n" });
  const head = f.push("acme/app", "feature", { "a.txt": "a\n" });
  const pr = f.openPull("acme/app", "feature");
  const main = f.push("acme/app", "main", { "b.txt": "b\n" });
  f.holdSyncs();
  const r = await call(f, "PUT", `/repos/acme/app/pulls/${pr}/update-branch`, { expected_head_sha: head });
  assert.deepEqual([r.status, r.body.message], [202, "Updating pull request branch."]);
  assert.equal(f.headSha("acme/app", pr), head);
  f.releaseSyncs();
  const synced = f.headSha("acme/app", pr);
  assert.equal(git(f.repo("acme/app").dir, ["rev-list", "--parents", "-n", "1", synced]), `${synced} ${head} ${main}`);
  const again = await call(f, "PUT", `/repos/acme/app/pulls/${pr}/update-branch`, {});
  assert.deepEqual([again.status, again.body.message], [422, "There are no new commits on the base branch."]);
  assert.deepEqual(f.faults, []);
});

test("workflow runs with matrix legs and skipped jobs, filtered by head SHA and event", async () => {
  const f = await fake();
  f.createRepo("acme/app", { "README.md": "hi\n" });
  const head = f.push("acme/app", "feature", { "a.txt": "a\n" });
  const run = f.runWorkflow("acme/app", { name: "CI", headSha: head, headBranch: "feature", jobs: [
    { name: "check (ubuntu-latest)", conclusion: "success" }, { name: "check (windows-latest)", conclusion: null }, { name: "deploy-preview", conclusion: "skipped" },
  ] });
  f.runWorkflow("acme/app", { name: "Ship", event: "push", headSha: head, jobs: [{ name: "ship", conclusion: "success" }] });
  const runs = await call(f, "GET", `/repos/acme/app/actions/runs?event=pull_request&head_sha=${head}`);
  assert.deepEqual(runs.body.workflow_runs.map((w: { id: number; name: string; status: string; conclusion: string | null }) => [w.id, w.name, w.status, w.conclusion]), [[run, "CI", "in_progress", null]]);
  const jobs = await call(f, "GET", `/repos/acme/app/actions/runs/${run}/jobs`);
  assert.deepEqual(jobs.body.jobs.map((j: { name: string; status: string; conclusion: string | null }) => [j.name, j.status, j.conclusion]), [
    ["check (ubuntu-latest)", "completed", "success"], ["check (windows-latest)", "in_progress", null], ["deploy-preview", "completed", "skipped"],
  ]);
  assert.deepEqual(f.faults, []);
});
