/**
 * The full checks of a delivery round (protocol.md 交付插件, 完整检查), read from GitHub Actions: only the current
 * head's latest `pull_request` run of the project's workflow (`checks.workflow`) counts, and in it every job named in
 * `checks.jobs` must be completed and successful. A matrix job counts by each of its legs (`check (ubuntu-latest)`,
 * `check (windows-latest)`, …): every leg must succeed. A skipped job does not count as passing.
 *
 * A draft is turned ready before the checks are read; the id of the latest run before that is remembered
 * (`latestRunId`) and only newer runs are accepted (the workflow must trigger on `ready_for_review`), so a run made
 * while it was a draft never counts. A named job a finished run does not have is `missing`: it did not pass.
 */
import { GitHub } from "./github.js";

/** Pages of 100 jobs read of a run (runs: the first page of 100, newest first, holds the latest). */
export const checkPagesMax = 5;

/** What the checks say now. */
export type ChecksVerdict =
  | { kind: "passed"; run: number }
  | { kind: "waiting"; run: number | null }
  | { kind: "failed"; run: number; jobs: { name: string; conclusion: string }[] };

/** The workflow runs of `head` for `pull_request` named `workflow`, newest first. */
async function runsOf(gh: GitHub, repo: string, head: string, workflow: string): Promise<{ id: number; name: string; status: string }[]> {
  const got = await gh.request("GET", `/repos/${repo}/actions/runs?event=pull_request&head_sha=${head}&per_page=100`);
  const runs = Array.isArray(got?.workflow_runs) ? got.workflow_runs : [];
  return runs
    .filter((r: { id?: unknown; name?: unknown; head_sha?: unknown; event?: unknown }) => Number.isSafeInteger(r.id) && r.name === workflow && r.head_sha === head && r.event === "pull_request")
    .sort((a: { id: number }, b: { id: number }) => b.id - a.id);
}

/**
 * The id of the latest `workflow` run of `head`, 0 when there is none: remembered before a draft is turned ready.
 * @throws GitHubError.
 */
export async function latestRunId(gh: GitHub, repo: string, head: string, workflow: string): Promise<number> {
  return (await runsOf(gh, repo, head, workflow))[0]?.id ?? 0;
}

/** Whether job `name` is one of the legs of the job named `wanted` (itself, or `wanted (…)` of a matrix). */
export function isLeg(name: string, wanted: string): boolean {
  return name === wanted || (name.startsWith(`${wanted} (`) && name.endsWith(")"));
}

/**
 * The verdict of the checks of `head` in `repo`: `jobs` of `workflow`, accepting only runs newer than `after`.
 * @throws GitHubError when GitHub cannot be read.
 */
export async function readChecks(gh: GitHub, repo: string, head: string, workflow: string, jobs: string[], after = 0): Promise<ChecksVerdict> {
  const run = (await runsOf(gh, repo, head, workflow)).find((r) => r.id > after);
  if (!run) return { kind: "waiting", run: null };
  const { items } = await gh.list(`/repos/${repo}/actions/runs/${run.id}/jobs?filter=latest`, checkPagesMax, "jobs");
  const bad: { name: string; conclusion: string }[] = [];
  let waiting = false;
  for (const wanted of jobs) {
    const legs = items.filter((j: { name?: unknown }) => typeof j.name === "string" && isLeg(j.name, wanted));
    // a run that finished without the job never had it: the job did not pass
    if (legs.length === 0 && run.status === "completed") bad.push({ name: wanted, conclusion: "missing" });
    else if (legs.length === 0) waiting = true;
    for (const leg of legs) {
      if (leg.status !== "completed" || leg.conclusion == null) waiting = true;
      else if (leg.conclusion !== "success") bad.push({ name: String(leg.name), conclusion: String(leg.conclusion) });
    }
  }
  if (bad.length > 0) return { kind: "failed", run: run.id, jobs: bad };
  return waiting ? { kind: "waiting", run: run.id } : { kind: "passed", run: run.id };
}
