/**
 * The sync step of a delivery round (issue 31; protocol.md 交付插件, 同步) against the fake GitHub: a pull request that
 * lacks main is updated by GitHub and the round waits within the run for the synced commit; after 15 minutes without
 * it the run ends for the hub's retry. Time is the test's: sleeping moves it, nothing waits for real.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { GitHub } from "../plugins/delivery/github.js";
import { sync, syncReadEveryMs, syncWaitMs, type Clock } from "../plugins/delivery/sync.js";
import { fakeGitHubs, type FakeGitHub } from "./github-fake.js";
import { git } from "./github-fake-git.js";

const fake = fakeGitHubs("aa-delivery-sync-", "sync-token");

/** A fake GitHub with `acme/app`: a pull request from `feature` and main moved on after it branched. */
async function setup(moveMain = true): Promise<{ f: FakeGitHub; gh: GitHub; pr: number; head: string; main: string }> {
  const f = await fake();
  let main = f.createRepo("acme/app", { "README.md": "hi\n", "src/a.ts": "a\n" });
  const head = f.push("acme/app", "feature", { "src/b.ts": "b\n" });
  const pr = f.openPull("acme/app", "feature", { labels: ["deliver"] });
  if (moveMain) main = f.push("acme/app", "main", { "src/c.ts": "c\n" });
  return { f, gh: new GitHub(f.url, "sync-token"), pr, head, main };
}

/** A clock whose sleep moves it at once; `onSleep` runs after each sleep with the time now. */
function testClock(onSleep: (now: number) => void = () => {}): Clock & { slept: number[] } {
  let now = 0;
  const slept: number[] = [];
  return { slept, now: () => now, sleep: async (ms) => { slept.push(ms); now += ms; onSleep(now); } };
}

const updates = (f: FakeGitHub) => f.seen.filter((s) => s.template === "/repos/{owner}/{repo}/pulls/{pull_number}/update-branch").length;
const parents = (f: FakeGitHub, sha: string) => git(f.repo("acme/app").dir, ["rev-list", "--parents", "-n", "1", sha]).split(" ").slice(1);

test("a pull request that contains main needs no sync: nothing is asked of GitHub", async () => {
  const { f, gh, pr, head, main } = await setup(false);
  assert.deepEqual(await sync(gh, "acme/app", pr, main, testClock()), { kind: "contained", head });
  assert.equal(updates(f), 0);
  assert.deepEqual(f.faults, []);
});

test("one that lacks main is updated by GitHub; the round waits in the run for the synced commit", async () => {
  const { f, gh, pr, head, main } = await setup();
  f.holdSyncs();
  const clock = testClock((now) => { if (now === 3 * syncReadEveryMs) f.releaseSyncs(); });
  const got = await sync(gh, "acme/app", pr, main, clock);
  const synced = f.headSha("acme/app", pr);
  assert.deepEqual(got, { kind: "synced", head: synced });
  assert.deepEqual(parents(f, synced), [head, main]);
  assert.deepEqual(clock.slept, [syncReadEveryMs, syncReadEveryMs, syncReadEveryMs]);
  assert.equal(updates(f), 1);
  assert.deepEqual(f.seen.find((s) => s.template?.endsWith("/update-branch"))?.body, { expected_head_sha: head });
  assert.deepEqual(f.faults, []);
});

test("no synced commit within 15 minutes ends the round for the hub's retry", async () => {
  const { f, gh, pr, main } = await setup();
  f.holdSyncs();
  const clock = testClock();
  assert.deepEqual(await sync(gh, "acme/app", pr, main, clock), { kind: "timeout", waitedMs: syncWaitMs });
  assert.equal(clock.slept.reduce((a, b) => a + b, 0), 15 * 60_000);
  assert.equal(updates(f), 1, "asked once, never again within the round");
  assert.deepEqual(f.faults, []);
});

test("a lost answer to the update is not sent again: the head read back shows GitHub did it", async () => {
  const { f, gh, pr, head, main } = await setup();
  f.dropResponse("PUT", "/repos/{owner}/{repo}/pulls/{pull_number}/update-branch");
  const got = await sync(gh, "acme/app", pr, main, testClock());
  assert.equal(got.kind, "synced");
  assert.deepEqual(parents(f, (got as { head: string }).head), [head, main]);
  assert.equal(updates(f), 1);
  assert.deepEqual(f.faults, []);
});

test("a conflict GitHub will not merge is reported; a head someone pushed while waiting ends the round", async () => {
  const a = await setup(false);
  a.f.push("acme/app", "feature", { "src/a.ts": "feature's a\n" });
  const main = a.f.push("acme/app", "main", { "src/a.ts": "main's a\n" });
  assert.deepEqual(await sync(a.gh, "acme/app", a.pr, main, testClock()), { kind: "conflict", reason: "PUT /repos/acme/app/pulls/1/update-branch: 422 merge conflict between base and head" });
  assert.deepEqual(a.f.faults, []);

  const b = await setup();
  b.f.holdSyncs();
  let pushed = "";
  const clock = testClock((now) => { if (now === syncReadEveryMs) pushed = b.f.push("acme/app", "feature", { "src/d.ts": "d\n" }); });
  assert.deepEqual(await sync(b.gh, "acme/app", b.pr, b.main, clock), { kind: "moved", head: pushed });
  assert.deepEqual(b.f.faults, []);
});
