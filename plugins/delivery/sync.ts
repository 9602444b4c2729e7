/**
 * The sync step of a delivery round (protocol.md 交付插件, 同步): the pull request must contain the main commit the
 * round reviews against. When it does not, GitHub is asked to update the branch, and the round waits — within the
 * same run — for the synced commit to appear; when none has after 15 minutes the run ends for the hub's retry (its
 * 5-minute-doubling retries; nothing is counted or queued here).
 *
 * Containment is read from GitHub's compare (`behind_by` 0: every commit of main is in the head). A lost answer to
 * the update request is not sent again blindly: the wait reads the head back, which shows whether GitHub did it.
 */
import { GitHub, GitHubError } from "./github.js";

/** How long a round waits for the synced commit, in ms (15 minutes). */
export const syncWaitMs = 15 * 60_000;
/** How often the head is read back while waiting, in ms. */
export const syncReadEveryMs = 10_000;

/** Time as the round sees it; tests give their own. */
export interface Clock {
  /** Milliseconds since some fixed point. */
  now(): number;
  /** Waits `ms` milliseconds. */
  sleep(ms: number): Promise<void>;
}

/** The real clock. */
export const realClock: Clock = { now: () => Date.now(), sleep: (ms) => new Promise((ok) => setTimeout(ok, ms)) };

/**
 * What the sync step found:
 * - `contained`: the head already contains main; `head` is it.
 * - `synced`: GitHub merged main into the branch; `head` is the synced commit.
 * - `moved`: the head changed to a commit that does not contain main (someone pushed): the round ends for a retry.
 * - `conflict`: GitHub refused to update the branch (`reason` is its message): the owner has to merge by hand.
 * - `timeout`: no synced commit within `syncWaitMs`: the run ends for the hub's retry.
 */
export type SyncResult =
  | { kind: "contained" | "synced"; head: string }
  | { kind: "moved"; head: string }
  | { kind: "conflict"; reason: string }
  | { kind: "timeout"; waitedMs: number };

/** Whether commit `head` of `repo` contains commit `main`. @throws GitHubError when GitHub cannot say. */
export async function containsMain(gh: GitHub, repo: string, main: string, head: string): Promise<boolean> {
  const c = await gh.request("GET", `/repos/${repo}/compare/${main}...${head}`);
  if (!Number.isSafeInteger(c?.behind_by)) throw new GitHubError(200, `GET /repos/${repo}/compare: no behind_by in the answer`);
  return c.behind_by === 0;
}

/** The current head SHA of pull request `number`. @throws GitHubError. */
async function headOf(gh: GitHub, repo: string, number: number): Promise<string> {
  const pr = await gh.request("GET", `/repos/${repo}/pulls/${number}`);
  if (typeof pr?.head?.sha !== "string") throw new GitHubError(200, `GET /repos/${repo}/pulls/${number}: no head.sha in the answer`);
  return pr.head.sha;
}

/**
 * Makes pull request `number` of `repo` contain `main` (a SHA), waiting for GitHub within this run (see SyncResult).
 * @throws GitHubError when GitHub cannot be read (the run fails and the hub retries it).
 */
export async function sync(gh: GitHub, repo: string, number: number, main: string, clock: Clock = realClock): Promise<SyncResult> {
  const head = await headOf(gh, repo, number);
  if (await containsMain(gh, repo, main, head)) return { kind: "contained", head };
  const started = clock.now();
  try {
    await gh.request("PUT", `/repos/${repo}/pulls/${number}/update-branch`, { expected_head_sha: head });
  } catch (e) {
    if (!(e instanceof GitHubError)) throw e;
    // 422: GitHub will not merge (a conflict, or the head moved since it was read); no answer: read back below
    if (e.status === 422) {
      const now = await headOf(gh, repo, number);
      if (now !== head) return (await containsMain(gh, repo, main, now)) ? { kind: "synced", head: now } : { kind: "moved", head: now };
      return { kind: "conflict", reason: e.message };
    }
    if (e.status !== null) throw e;
  }
  for (;;) {
    const now = await headOf(gh, repo, number);
    if (now !== head) return (await containsMain(gh, repo, main, now)) ? { kind: "synced", head: now } : { kind: "moved", head: now };
    const waited = clock.now() - started;
    if (waited >= syncWaitMs) return { kind: "timeout", waitedMs: waited };
    await clock.sleep(Math.min(syncReadEveryMs, syncWaitMs - waited));
  }
}
