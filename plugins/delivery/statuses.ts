/**
 * The commit statuses a delivery round writes (protocol.md 交付插件): `delivery` at each stage of the round, and the
 * project's review status (`review.status`, default `agent-review`) — failure when the review found problems, success
 * only after the checks passed (the status that permits the merge). The descriptions are GitHub's text for the team
 * reading the pull request, in English as GitHub's own are; the hub's own texts go through the catalog.
 *
 * A review status of `failure` on a commit is the record that it failed review: a round that finds it there (its label
 * still on) ends at once, reviewing nothing and rewriting nothing, until a new commit is pushed.
 */
import { GitHub } from "./github.js";

/** The commit status of the delivery itself. */
export const deliveryContext = "delivery";
/** GitHub's longest status description. */
export const descriptionMax = 140;
/** Pages of 100 statuses read to find a context's latest. */
const statusPagesMax = 3;

/** A state GitHub allows for a commit status. */
export type StatusState = "pending" | "success" | "failure" | "error";

/** The descriptions of each stage (see the module comment). */
export const stageText = {
  reviewing: "Reviewing this commit",
  reviewFailed: "Review found problems",
  waitingChecks: "Reviewed; waiting for the full checks",
  checksFailed: "The full checks failed",
  reviewed: "Reviewed: no problems found",
  reviewOnly: "Reviewed only: not checked, merged or shipped",
  withdrawn: "Withdrawn: not merged or shipped",
  waitingOwner: "Reviewed and checked; waiting for the owner",
  declined: "Not merged: the owner declined",
  notSynced: "Cannot be synced with main; merge main by hand",
  notMergeable: "GitHub refused the merge",
  merged: "Merged",
  waitingShip: "waiting for Ship and the health check",
  mergeOnly: "no health settings: only the merge was done",
  shipped: "Shipped: live version",
} as const;

/**
 * Writes status `state` of `context` on commit `sha` of `repo`, `description` cut to GitHub's limit.
 * @throws GitHubError.
 */
export async function setStatus(gh: GitHub, repo: string, sha: string, context: string, state: StatusState, description: string): Promise<void> {
  await gh.request("POST", `/repos/${repo}/statuses/${sha}`, { state, context, description: description.slice(0, descriptionMax) });
}

/**
 * The state of the latest status of `context` on commit `sha` of `repo`, null when it has none.
 * @throws GitHubError.
 */
export async function latestStatus(gh: GitHub, repo: string, sha: string, context: string): Promise<StatusState | null> {
  // GitHub lists a commit's statuses newest first
  const { items } = await gh.list(`/repos/${repo}/commits/${sha}/statuses`, statusPagesMax);
  const found = items.find((s: { context?: unknown }) => s?.context === context);
  return found && ["pending", "success", "failure", "error"].includes(found.state) ? found.state : null;
}
