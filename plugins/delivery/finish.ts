/**
 * The two writes of a delivery round that must survive a lost answer (protocol.md 交付插件, 自动合并与响应丢失):
 *
 * - merging by the reviewed SHA: an answer that never came is answered by reading whether the pull request merged —
 *   never by a blind second merge;
 * - taking labels off: a removal whose answer failed is read back; the label that marks the round's state goes last —
 *   `deliver` on a merged pull request, `deliver-review` on one not merged — so a retry after a partial removal
 *   finishes the round and never merges a review-only pull request.
 *
 * The rest of the merge step (re-reading head, target, main and labels; turning auto-merge off) comes with the round.
 */
import { GitHub, GitHubError } from "./github.js";

/** What a merge by SHA came to. */
export type MergeResult =
  | { kind: "merged"; sha: string; readBack: boolean }
  | { kind: "headChanged" }
  | { kind: "notMergeable"; reason: string };

/**
 * Merges pull request `number` of `repo` if its head is still `reviewed` (a merge commit).
 * @returns `merged` with the merge commit (`readBack` when the answer was lost and the state read instead),
 *   `headChanged` when GitHub refused because the head moved (409), `notMergeable` (405: closed, draft, conflicts).
 * @throws GitHubError when GitHub cannot be read, or the answer was lost and the pull request is not merged (the
 *   run fails and the hub's retry decides afresh).
 */
export async function mergeReviewed(gh: GitHub, repo: string, number: number, reviewed: string): Promise<MergeResult> {
  try {
    const got = await gh.request("PUT", `/repos/${repo}/pulls/${number}/merge`, { sha: reviewed, merge_method: "merge" });
    if (got?.merged === true && typeof got.sha === "string") return { kind: "merged", sha: got.sha, readBack: false };
    throw new GitHubError(200, `PUT /repos/${repo}/pulls/${number}/merge: the answer says it did not merge`);
  } catch (e) {
    if (!(e instanceof GitHubError)) throw e;
    if (e.status === 409) return { kind: "headChanged" };
    if (e.status === 405) return { kind: "notMergeable", reason: e.message };
    if (e.status !== null && e.status < 500) throw e;
    const pr = await gh.request("GET", `/repos/${repo}/pulls/${number}`);
    if (pr?.merged === true && pr.head?.sha === reviewed && typeof pr.merge_commit_sha === "string") return { kind: "merged", sha: pr.merge_commit_sha, readBack: true };
    throw e;
  }
}

/**
 * Takes `labels` off item `number` of `repo`, `last` (if among them) after all others. A label already gone counts
 * as removed; a removal whose answer failed is read back from the item's labels.
 * @throws GitHubError when a label is still on after its removal failed (the rest are not tried: the last stays on).
 */
export async function removeLabels(gh: GitHub, repo: string, number: number, labels: string[], last: string): Promise<void> {
  const order = [...labels.filter((l) => l !== last), ...labels.filter((l) => l === last)];
  for (const label of order) {
    try {
      await gh.request("DELETE", `/repos/${repo}/issues/${number}/labels/${encodeURIComponent(label)}`);
    } catch (e) {
      if (!(e instanceof GitHubError)) throw e;
      if (e.status === 404) continue;
      const item = await gh.request("GET", `/repos/${repo}/issues/${number}`);
      const on = (Array.isArray(item?.labels) ? item.labels : []).some((l: { name?: unknown } | string) => (typeof l === "string" ? l : l?.name) === label);
      if (on) throw e;
    }
  }
}
