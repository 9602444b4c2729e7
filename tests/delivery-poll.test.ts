/**
 * The delivery plugin's source, `plugins/delivery/poll.ts` (issue 31; protocol.md 交付插件), against the fake GitHub
 * held to GitHub's OpenAPI description: stable event ids from repository + item + label record + current head, no
 * cursor; an unreadable label record counts 0 without stopping the others; what starts nothing; one lane per pull
 * request (the subject); and the command's last message as the hub's worker reads it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { eventId, poll, pollEventsMax } from "../plugins/delivery/poll.js";
import { GitHub } from "../plugins/delivery/github.js";
import { readMessage } from "../src/worker/receipt.js";
import { fakeGitHubs, type FakeGitHub } from "./github-fake.js";
import { engine } from "./helpers.js";

const fake = fakeGitHubs("aa-delivery-poll-", "poll-token");

/** A fake GitHub with `acme/app` (main holds a README) and a client of it. */
async function setup(): Promise<{ f: FakeGitHub; gh: GitHub }> {
  const f = await fake();
  f.createRepo("acme/app", { "README.md": "hi\n" });
  return { f, gh: new GitHub(f.url, "poll-token") };
}

/** The id of the newest `labeled` record of `label` on an item, as the fake holds it. */
const recordOf = (f: FakeGitHub, number: number, label: string) => f.repo("acme/app").events.get(number)!.filter((e) => e.event === "labeled" && e.label === label).at(-1)!.id;

test("a labelled pull request gives one event: repository + item + label record + head; the same state gives the same id", async () => {
  const { f, gh } = await setup();
  const head = f.push("acme/app", "feature", { "a.txt": "a\n" });
  const pr = f.openPull("acme/app", "feature", { labels: ["deliver"] });
  const first = await poll(gh, "acme/app");
  assert.deepEqual(first, {
    events: [{ id: `delivery:acme/app#${pr}:${recordOf(f, pr, "deliver")}:${head}`, type: "delivery.pull_request", subject: `acme/app#${pr}`, summary: `acme/app#${pr} deliver ${head.slice(0, 12)}`, link: `https://github.com/acme/app/issues/${pr}` }],
    unreadable: 0, failed: 0, over: 0,
  });
  assert.deepEqual(await poll(gh, "acme/app"), first, "no cursor: polling again gives the same id, which the hub records once");
  // a new commit is a new event of the same lane
  const head2 = f.push("acme/app", "feature", { "a.txt": "b\n" });
  const second = await poll(gh, "acme/app");
  assert.equal(second.events[0]!.id, `delivery:acme/app#${pr}:${recordOf(f, pr, "deliver")}:${head2}`);
  assert.equal(second.events[0]!.subject, `acme/app#${pr}`);
  // the label taken off and put on again is a new label record
  f.unlabel("acme/app", pr, "deliver");
  f.label("acme/app", pr, "deliver");
  const third = await poll(gh, "acme/app");
  assert.notEqual(recordOf(f, pr, "deliver"), Number(first.events[0]!.id.split(":")[2]));
  assert.equal(third.events[0]!.id, `delivery:acme/app#${pr}:${recordOf(f, pr, "deliver")}:${head2}`);
  // deliver-review added later: its record is the newer one
  f.label("acme/app", pr, "deliver-review");
  const fourth = await poll(gh, "acme/app");
  assert.equal(fourth.events[0]!.id, `delivery:acme/app#${pr}:${recordOf(f, pr, "deliver-review")}:${head2}`);
  assert.equal(fourth.events[0]!.summary, `acme/app#${pr} deliver,deliver-review ${head2.slice(0, 12)}`);
  assert.deepEqual(f.faults, []);
});

test("nothing starts for no label (merged too), closed unmerged, a fork, a target other than main, or only deliver-review once merged", async () => {
  const { f, gh } = await setup();
  f.createRepo("mallory/app", { "README.md": "hi\n" }, "acme/app");
  f.push("mallory/app", "evil", { "a.txt": "evil\n" });
  for (const b of ["plain", "merged-plain", "closed", "release-target", "merged-review", "merged-deliver", "open"]) f.push("acme/app", b, { [`${b}.txt`]: `${b}\n` });
  f.push("acme/app", "release", { "r.txt": "r\n" });
  const plain = f.openPull("acme/app", "plain");
  const mergedPlain = f.openPull("acme/app", "merged-plain");
  const closed = f.openPull("acme/app", "closed", { labels: ["deliver"] });
  const fork = f.openPull("acme/app", "mallory/app:evil", { labels: ["deliver"] });
  const release = f.openPull("acme/app", "release-target", { base: "release", labels: ["deliver"] });
  const mergedReview = f.openPull("acme/app", "merged-review", { labels: ["deliver-review"] });
  const mergedDeliver = f.openPull("acme/app", "merged-deliver", { labels: ["deliver-attended"] });
  const open = f.openPull("acme/app", "open", { labels: ["deliver"] });
  const askOnPull = f.openPull("acme/app", "plain", { labels: ["ask-owner"] });
  f.closeItem("acme/app", closed);
  for (const pr of [mergedPlain, mergedReview, mergedDeliver]) {
    const res = await gh.request("PUT", `/repos/acme/app/pulls/${pr}/merge`, { sha: f.headSha("acme/app", pr) });
    assert.equal(res.merged, true);
  }
  const got = await poll(gh, "acme/app");
  assert.deepEqual(got.events.map((e) => e.subject), [`acme/app#${mergedDeliver}`, `acme/app#${open}`], "a merged pull request still labelled for delivery is followed through Ship");
  assert.equal(got.events[0]!.id, `delivery:acme/app#${mergedDeliver}:${recordOf(f, mergedDeliver, "deliver-attended")}:${f.headSha("acme/app", mergedDeliver)}`);
  assert.deepEqual([plain, fork, release, askOnPull].filter((x) => got.events.some((e) => e.subject === `acme/app#${x}`)), []);
  assert.deepEqual(f.faults, []);
});

test("an item whose label record cannot be read counts 0 for that part; the other items go on", async () => {
  const { f, gh } = await setup();
  const heads = ["one", "two", "three"].map((b) => f.push("acme/app", b, { [`${b}.txt`]: "x\n" }));
  const prs = ["one", "two", "three"].map((b) => f.openPull("acme/app", b, { labels: ["deliver"] }));
  f.repo("acme/app").brokenEvents.add(prs[0]!);
  // the second's answer is lost on the way: also unreadable
  let calls = 0;
  f.afterRequest("GET", "/repos/{owner}/{repo}/issues/{issue_number}/events", () => void calls++, false);
  f.dropResponse("GET", "/repos/{owner}/{repo}/issues/{issue_number}/events", 2);
  const got = await poll(gh, "acme/app");
  assert.deepEqual(got.events.map((e) => e.id), [
    `delivery:acme/app#${prs[0]}:0:${heads[0]}`,
    `delivery:acme/app#${prs[1]}:0:${heads[1]}`,
    `delivery:acme/app#${prs[2]}:${recordOf(f, prs[2]!, "deliver")}:${heads[2]}`,
  ]);
  assert.equal(got.unreadable, 2);
  assert.equal(calls, 3);
  assert.deepEqual(f.faults, []);
});

test("ask-owner on an open issue gives an issue event without a head; a closed issue gives none", async () => {
  const { f, gh } = await setup();
  const asked = f.openIssue("acme/app", "Which database?", "Postgres or SQLite?", ["ask-owner"]);
  const closed = f.openIssue("acme/app", "Old question", "", ["ask-owner"]);
  f.closeItem("acme/app", closed);
  const got = await poll(gh, "acme/app");
  assert.deepEqual(got.events, [{ id: `delivery:acme/app#${asked}:${recordOf(f, asked, "ask-owner")}:-`, type: "delivery.issue", subject: `acme/app#${asked}`, summary: `acme/app#${asked} ask-owner`, link: `https://github.com/acme/app/issues/${asked}` }]);
  assert.deepEqual(f.faults, []);
});

test(`one poll gives at most ${pollEventsMax} events, lowest numbers first; the rest wait for the next`, async () => {
  const { f, gh } = await setup();
  f.push("acme/app", "many", { "m.txt": "m\n" });
  for (let i = 0; i < pollEventsMax + 2; i++) f.openPull("acme/app", "many", { labels: ["deliver"] });
  const got = await poll(gh, "acme/app");
  assert.equal(got.events.length, pollEventsMax);
  assert.equal(got.over, 2);
  assert.equal(got.events.at(-1)!.subject, `acme/app#${pollEventsMax}`);
  assert.deepEqual(f.faults, []);
});

test("an id over the hub's 200 characters keeps its kind and a SHA-256 of the whole", () => {
  const repo = `${"o".repeat(39)}/${"r".repeat(100)}`;
  const id = eventId(repo, 123456, 99999999999, "f".repeat(40));
  assert.match(id, /^delivery:sha256:[0-9a-f]{64}$/);
  assert.equal(eventId(repo, 123456, 99999999999, "f".repeat(40)), id);
  assert.equal(eventId("acme/app", 1, 2, "abc"), "delivery:acme/app#1:2:abc");
});

/** Runs poll.ts as the `command` agent runs it; its exit code and stdout. */
function runPoll(args: string[], env: Record<string, string>): Promise<{ code: number; out: string; err: string }> {
  return new Promise((ok) => {
    execFile(process.execPath, ["--import", "tsx", join(engine, "plugins/delivery/poll.ts"), ...args], { cwd: engine, env: { PATH: process.env.PATH!, ...env } }, (e, out, err) => {
      ok({ code: e ? (typeof e.code === "number" ? e.code : 1) : 0, out, err });
    });
  });
}

test("the command's last message is what the worker reads: events in the receipt; nothing to do; not run when listing fails", async () => {
  const { f } = await setup();
  const head = f.push("acme/app", "feature", { "a.txt": "a\n" });
  const env = { GITHUB_API_URL: f.url, GH_TOKEN: "poll-token", AGENT_AUTOLOOP_LANG: "en" };
  const empty = await runPoll(["--repo", "acme/app"], env);
  assert.deepEqual([empty.code, empty.out], [0, "Nothing to do: no items to deliver in acme/app\n"]);
  assert.equal(readMessage(empty.out).outcome, "nothing");
  const pr = f.openPull("acme/app", "feature", { labels: ["deliver"] });
  const found = await runPoll(["--repo", "acme/app"], env);
  assert.equal(found.code, 0);
  const read = readMessage(found.out);
  assert.deepEqual([read.outcome, read.receiptError, read.summary], ["done", null, "1 items to deliver in acme/app (0 with an unreadable label record, 0 whose pull request could not be read, 0 over this poll's limit)"]);
  assert.deepEqual(read.receipt.events, [{ id: `delivery:acme/app#${pr}:${recordOf(f, pr, "deliver")}:${head}`, type: "delivery.pull_request", subject: `acme/app#${pr}`, summary: `acme/app#${pr} deliver ${head.slice(0, 12)}`, link: `https://github.com/acme/app/issues/${pr}` }]);
  const zh = await runPoll(["--repo", "acme/app"], { ...env, AGENT_AUTOLOOP_LANG: "zh" });
  assert.equal(readMessage(zh.out).summary, "acme/app 有 1 个待交付事项（读不到标签记录的 0 个，读不到 PR 的 0 个，超出本次上限的 0 个）");
  const denied = await runPoll(["--repo", "acme/app"], { ...env, GH_TOKEN: "wrong" });
  assert.deepEqual([denied.code, denied.out], [1, "Not run: the items to deliver in acme/app could not be read (GET /repos/acme/app/issues?labels=deliver&state=open&sort=created&direction=asc&per_page=100&page=1: 401 Bad credentials)\n"]);
  assert.equal(readMessage(denied.out).outcome, "failed");
  assert.doesNotMatch(denied.out + denied.err, /wrong|poll-token/, "the token never reaches the output");
  const noToken = await runPoll(["--repo", "acme/app"], { GITHUB_API_URL: f.url, AGENT_AUTOLOOP_LANG: "en" });
  assert.deepEqual([noToken.code, noToken.out], [1, "Not run: the items to deliver in acme/app could not be read (no GitHub token: add GH_TOKEN or GITHUB_TOKEN to this agent's env)\n"]);
  const plainHttp = await runPoll(["--repo", "acme/app"], { ...env, GITHUB_API_URL: "http://api.example.com" });
  assert.equal(plainHttp.out, "Not run: the items to deliver in acme/app could not be read (GITHUB_API_URL: https addresses only (http://127.0.0.1 for tests))\n");
  const usage = await runPoll(["--repo", "../etc"], env);
  assert.deepEqual([usage.code, usage.out, usage.err], [2, "", "usage: poll.ts --repo <owner/name> (the token from GH_TOKEN or GITHUB_TOKEN, the address from GITHUB_API_URL)\n"]);
  assert.deepEqual(f.faults, []);
});
