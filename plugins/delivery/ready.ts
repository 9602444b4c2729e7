/**
 * The two GraphQL writes of a delivery round (protocol.md 交付插件, 完整检查 and 合并), which GitHub's REST has not:
 *
 * - a draft is turned ready for review (`markPullRequestReadyForReview`) before the full checks are read — the round
 *   remembers the latest check run before it (checks.ts `latestRunId`) and accepts only newer ones;
 * - auto-merge is turned off (`disablePullRequestAutoMerge`) before the merge-permitting review status is written, so
 *   GitHub never merges on its own what the round did not merge by the reviewed SHA.
 *
 * Each is read back (`isDraft`, `autoMergeRequest`): a lost answer, or one that says done while the pull request says
 * otherwise, is settled by what GitHub reads, never by a blind second write.
 */
import { GitHub, GitHubError } from "./github.js";

/** A pull request as the GraphQL reads give it. */
export interface PullNode { id: string; isDraft: boolean; autoMerge: boolean; head: string }

const readQuery = `query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) { pullRequest(number: $number) { id isDraft headRefOid autoMergeRequest { enabledAt } } }
}`;
const readyMutation = `mutation($id: ID!) { markPullRequestReadyForReview(input: { pullRequestId: $id }) { pullRequest { isDraft } } }`;
const autoMergeMutation = `mutation($id: ID!) { disablePullRequestAutoMerge(input: { pullRequestId: $id }) { pullRequest { autoMergeRequest { enabledAt } } } }`;

/** Reads pull request `number` of `repo` (`owner/name`) through GraphQL. @throws GitHubError. */
export async function readPullNode(gh: GitHub, repo: string, number: number): Promise<PullNode> {
  const [owner, name] = repo.split("/");
  const data = await gh.graphql(readQuery, { owner, name, number });
  const p = data?.repository?.pullRequest;
  if (typeof p?.id !== "string" || typeof p.isDraft !== "boolean") throw new GitHubError(200, `POST /graphql: no pull request ${repo}#${number} in the answer`);
  return { id: p.id, isDraft: p.isDraft, autoMerge: p.autoMergeRequest != null, head: String(p.headRefOid ?? "") };
}

/**
 * Runs `mutation` on the pull request unless `done` holds already, then reads it back.
 * @throws GitHubError when GitHub cannot be read, or `done` does not hold after the write (answered or lost).
 */
async function writeUntil(gh: GitHub, repo: string, number: number, mutation: string, done: (p: PullNode) => boolean, what: string): Promise<void> {
  const before = await readPullNode(gh, repo, number);
  if (done(before)) return;
  try {
    await gh.graphql(mutation, { id: before.id });
  } catch (e) {
    // a lost answer or a refusal: what GitHub reads settles it (below)
    if (!(e instanceof GitHubError)) throw e;
  }
  if (!done(await readPullNode(gh, repo, number))) throw new GitHubError(200, `${repo}#${number}: ${what}, read back after the write`);
}

/** Turns draft pull request `number` ready for review (nothing when it is not a draft). @throws GitHubError. */
export function turnReady(gh: GitHub, repo: string, number: number): Promise<void> {
  return writeUntil(gh, repo, number, readyMutation, (p) => !p.isDraft, "still a draft");
}

/** Turns auto-merge off on pull request `number` (nothing when it is off). @throws GitHubError. */
export function autoMergeOff(gh: GitHub, repo: string, number: number): Promise<void> {
  return writeUntil(gh, repo, number, autoMergeMutation, (p) => !p.autoMerge, "auto-merge still on");
}
