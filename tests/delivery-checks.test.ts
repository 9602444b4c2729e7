/**
 * The full checks of a delivery round (issue 31; protocol.md 交付插件, 完整检查) against the fake GitHub's workflow
 * runs: only the current head's latest pull_request run of the workflow, newer than the one remembered before a draft
 * was turned ready; every named job completed and successful; a skipped job does not count; every matrix leg counts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { GitHub } from "../plugins/delivery/github.js";
import { isLeg, latestRunId, readChecks } from "../plugins/delivery/checks.js";
import { fakeGitHubs, type FakeGitHub } from "./github-fake.js";

const fake = fakeGitHubs("aa-delivery-checks-", "checks-token");

async function setup(): Promise<{ f: FakeGitHub; gh: GitHub; head: string }> {
  const f = await fake();
  f.createRepo("acme/app", { "README.md": "hi\n" });
  const head = f.push("acme/app", "feature", { "a.txt": "a\n" });
  f.openPull("acme/app", "feature", { labels: ["deliver"] });
  return { f, gh: new GitHub(f.url, "checks-token"), head };
}

const matrix = (ubuntu: "success" | "failure" | null, windows: "success" | "failure" | "skipped" | null, lint: "success" | "skipped" | null = "success") => [
  { name: "check (ubuntu-latest)", conclusion: ubuntu }, { name: "check (windows-latest)", conclusion: windows }, { name: "lint", conclusion: lint },
];

test("every leg of a matrix job and every named job must succeed; a skipped job does not count", async () => {
  const { f, gh, head } = await setup();
  const check = () => readChecks(gh, "acme/app", head, "CI", ["check", "lint"]);
  assert.deepEqual(await check(), { kind: "waiting", run: null });
  const running = f.runWorkflow("acme/app", { name: "CI", headSha: head, headBranch: "feature", jobs: matrix("success", null) });
  assert.deepEqual(await check(), { kind: "waiting", run: running });
  const passing = f.runWorkflow("acme/app", { name: "CI", headSha: head, headBranch: "feature", jobs: matrix("success", "success") });
  assert.deepEqual(await check(), { kind: "passed", run: passing });
  const leg = f.runWorkflow("acme/app", { name: "CI", headSha: head, headBranch: "feature", jobs: matrix("success", "failure") });
  assert.deepEqual(await check(), { kind: "failed", run: leg, jobs: [{ name: "check (windows-latest)", conclusion: "failure" }] }, "the latest run counts, not an older passing one");
  const skipped = f.runWorkflow("acme/app", { name: "CI", headSha: head, headBranch: "feature", jobs: matrix("success", "success", "skipped") });
  assert.deepEqual(await check(), { kind: "failed", run: skipped, jobs: [{ name: "lint", conclusion: "skipped" }] });
  const missing = f.runWorkflow("acme/app", { name: "CI", headSha: head, headBranch: "feature", jobs: [{ name: "check (ubuntu-latest)", conclusion: "success" }] });
  assert.deepEqual(await check(), { kind: "failed", run: missing, jobs: [{ name: "lint", conclusion: "missing" }] });
  assert.deepEqual(f.faults, []);
});

test("only the current head's pull_request runs of the named workflow count", async () => {
  const { f, gh, head } = await setup();
  const other = f.push("acme/app", "other", { "b.txt": "b\n" });
  f.runWorkflow("acme/app", { name: "CI", headSha: other, jobs: matrix("success", "success") });
  f.runWorkflow("acme/app", { name: "CI", event: "push", headSha: head, jobs: matrix("success", "success") });
  f.runWorkflow("acme/app", { name: "Nightly", headSha: head, jobs: matrix("success", "success") });
  assert.deepEqual(await readChecks(gh, "acme/app", head, "CI", ["check", "lint"]), { kind: "waiting", run: null });
  assert.deepEqual(f.faults, []);
});

test("a run from before the draft was turned ready is not accepted; a newer one is", async () => {
  const { f, gh, head } = await setup();
  assert.equal(await latestRunId(gh, "acme/app", head, "CI"), 0);
  const draftRun = f.runWorkflow("acme/app", { name: "CI", headSha: head, jobs: matrix("success", "success") });
  const remembered = await latestRunId(gh, "acme/app", head, "CI");
  assert.equal(remembered, draftRun);
  assert.deepEqual(await readChecks(gh, "acme/app", head, "CI", ["check", "lint"], remembered), { kind: "waiting", run: null });
  const ready = f.runWorkflow("acme/app", { name: "CI", headSha: head, jobs: matrix("success", "success") });
  assert.deepEqual(await readChecks(gh, "acme/app", head, "CI", ["check", "lint"], remembered), { kind: "passed", run: ready });
  assert.deepEqual(f.faults, []);
});

test("a leg is the job itself or the job with its matrix values in brackets", () => {
  assert.deepEqual(["check", "check (ubuntu-latest)", "check (node 20, ubuntu)", "checker", "check-lint", "check (x", "lint (check)"].map((j) => isLeg(j, "check")),
    [true, true, true, false, false, false, false]);
});
