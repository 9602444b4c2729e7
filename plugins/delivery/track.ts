/**
 * Following a merged delivery through Ship and health (protocol.md 交付插件, 发布, 后续发布 and 跟踪): after the round's
 * merge, or for a merged pull request still labelled `deliver` (merged by the round or by someone else), wait within
 * the run for
 *
 * 1. a Ship run that covers the merge commit — a completed, successful run of the project's Ship workflow
 *    (`ship.workflow`) on a push to main whose commit is the merge commit or has it in its history: a later release
 *    completes an older delivery. While no covering run succeeded, a covering run still going is waited for, and
 *    covering runs that all failed end the run as "not run" (the hub retries; a later Ship may cover it);
 * 2. then the live version: the health endpoint's version (project.ts; a short SHA expanded through GitHub) must
 *    contain the merge commit, or differ from it only by ordinary internal docs over the whole diff. A health 200 is
 *    never read before a Ship covered the merge, so it never covers a failed or unfinished Ship.
 *
 * The labels are read at each turn: once `deliver` (or `deliver-attended`) is off, nothing is followed and no status
 * written. After `trackMinutes` without both, the run ends as "not run" for the hub's retry. A project without
 * health settings is not followed: the round says plainly that only the merge was done. The details of what is not
 * live yet come from project.ts in English (shared with the project's Ship action), inside the catalog's sentence.
 */
import { t, type Lang } from "agent-autoloop/sdk";
import { GitHubError, type GitHub } from "./github.js";
import { fetchObjects } from "./objects.js";
import { contains, fullSha, readHealth, releaseScope } from "./project.js";
import type { DeliverySettings } from "./settings.js";
import type { Clock } from "./sync.js";

/** How often Ship and health are read while following, in ms. */
export const trackReadEveryMs = 15_000;
/** Ship runs of main looked at, newest first (two pages of GitHub's 100 are read). */
export const shipRunsMax = 20;

/** What following came to. `live`: the version the health endpoint serves. */
export type TrackResult =
  | { kind: "live"; live: string; why: string }
  | { kind: "untracked" }
  | { kind: "notRun"; error: string };

/** What following needs. */
export interface TrackDeps {
  gh: GitHub;
  token: string;
  /** The round's bare object store (objects.ts). */
  objects: string;
  cloneUrl: string;
  local: boolean;
  testLocalHealth: boolean;
  clock: Clock;
  lang: Lang;
}

/** The state of the Ship runs covering a commit. */
type ShipState = { kind: "shipped"; run: number } | { kind: "going" } | { kind: "failed"; run: number } | { kind: "none" };

/** Whether commit `ancestor` is `commit` or in its history, asked of GitHub (compare: identical or ahead). */
async function covers(gh: GitHub, repo: string, commit: string, ancestor: string): Promise<boolean> {
  if (commit === ancestor) return true;
  try {
    const c = await gh.request("GET", `/repos/${repo}/compare/${ancestor}...${commit}`);
    return c?.status === "identical" || c?.status === "ahead";
  } catch (e) {
    if (e instanceof GitHubError && e.status === 404) return false;
    throw e;
  }
}

/** The Ship runs of `workflow` on pushes to main that cover `merge` (see the module comment). @throws GitHubError. */
async function shipState(gh: GitHub, repo: string, workflow: string, merge: string): Promise<ShipState> {
  const { items } = await gh.list(`/repos/${repo}/actions/runs?branch=main&event=push`, 2, "workflow_runs");
  const runs = items.filter((r: { name?: unknown }) => r?.name === workflow).slice(0, shipRunsMax);
  let going = false;
  let failed: number | null = null;
  for (const r of runs) {
    if (typeof r.head_sha !== "string" || !(await covers(gh, repo, r.head_sha, merge))) continue;
    if (r.status !== "completed") going = true;
    else if (r.conclusion === "success") return { kind: "shipped", run: Number(r.id) };
    else failed ??= Number(r.id);
  }
  if (going) return { kind: "going" };
  return failed === null ? { kind: "none" } : { kind: "failed", run: failed };
}

/**
 * Follows merge commit `merge` of pull request `number` of `repo` (see the module comment); `settings.health` must be
 * set. @returns `live`, `untracked` (its label is off), or `notRun` (Ship failed, GitHub unreadable, not live in time).
 */
export async function followShip(deps: TrackDeps, repo: string, number: number, merge: string, settings: DeliverySettings): Promise<TrackResult> {
  const { gh, clock } = deps;
  const health = settings.health!;
  const limit = settings.trackMinutes * 60_000;
  const started = clock.now();
  let last = "no Ship run covers it yet";
  try {
    for (;;) {
      const item = await gh.request("GET", `/repos/${repo}/issues/${number}`);
      const labels = (Array.isArray(item?.labels) ? item.labels : []).map((l: { name?: unknown }) => l?.name);
      if (!labels.includes("deliver") && !labels.includes("deliver-attended")) return { kind: "untracked" };
      const ship = await shipState(gh, repo, settings.ship.workflow, merge);
      if (ship.kind === "failed") return { kind: "notRun", error: t(deps.lang, "delivery.errShipFailed", { workflow: settings.ship.workflow, run: ship.run, merge: merge.slice(0, 12) }) };
      if (ship.kind === "shipped") {
        const read = await readHealth(health.url, health.field, deps.testLocalHealth);
        const live = read.kind === "version" ? await fullSha(gh, repo, read.sha) : null;
        if (read.kind === "unknown") last = read.why;
        else if (live === null) last = `the live version ${read.sha} is not a commit GitHub knows`;
        else {
          fetchObjects(deps.objects, deps.cloneUrl, [live, merge], deps.token, deps.local);
          if (contains(deps.objects, live, merge)) return { kind: "live", live, why: `the live version ${live.slice(0, 12)} contains ${merge.slice(0, 12)}` };
          const scope = releaseScope(deps.objects, live, merge, settings.internalDocs);
          if (!scope.release) return { kind: "live", live, why: `${scope.why} between the live version ${live.slice(0, 12)} and ${merge.slice(0, 12)}` };
          last = `the live version ${live.slice(0, 12)} does not contain it (${scope.why})`;
        }
      } else if (ship.kind === "going") last = "its Ship run has not finished";
      const waited = clock.now() - started;
      if (waited >= limit) return { kind: "notRun", error: t(deps.lang, "delivery.errNotLive", { minutes: settings.trackMinutes, last }) };
      await clock.sleep(Math.min(trackReadEveryMs, limit - waited));
    }
  } catch (e) {
    return { kind: "notRun", error: (e as Error).message };
  }
}
