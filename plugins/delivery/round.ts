/**
 * The delivery round (protocol.md 交付插件): a `command` agent run by a rule on `delivery.pull_request` events (the
 * poll's, plugins/delivery/poll.ts), one lane per pull request (the rule's lanes split by the event's subject). One
 * run takes one pull request through the steps in order, writing the `delivery` commit status at each stage:
 *
 * 1. reads the pull request: a merged, closed, fork, non-main or unlabelled one starts nothing here (a draft does);
 * 2. reads main's current commit and `ops/delivery.json` there (settings.ts; never the pull request's);
 * 3. syncs (sync.ts): the pull request must contain main;
 * 4. a head whose review status is already failure ends the round at once (a new commit is reviewed afresh); otherwise
 *    reviews: the diff of the branch's own commits (review-diff.ts) to the project's reviewer (reviewer.ts), which
 *    never checks out the pull request — unless every reviewed change touches only ordinary internal docs
 *    (`internalDocs`, judged as the release scope judges them): then the model is not called, and the round's message
 *    says so. Findings write failure to `delivery` and the review status and end the round;
 * 5. `deliver-review`: ends after a passing review (the merge-permitting status is not written);
 * 6. turns a draft ready (ready.ts), remembering the latest check run before that and accepting only newer ones, and
 *    waits for the full checks (checks.ts), reading the labels meanwhile: `deliver` withdrawn ends the round
 *    (`delivery` success, withdrawn), `deliver-review` added stops before the merge;
 * 7. re-reads head, target, main and labels: head changed or target not main ends the run for the hub's retry; main
 *    moved goes back to 2 within the run (at most `roundsMax` rounds); then turns auto-merge off and reads it back
 *    (ready.ts), writes the review status (success) and merges the reviewed SHA (finish.ts);
 * 8. follows the merge through Ship and health (track.ts) — also for a pull request merged by someone else during the
 *    round, or found merged with `deliver` still on (the poll's event for it) — and takes the labels off, `deliver`
 *    last, once it is live. A project without health settings ends at the merge, saying so.
 *
 * `deliver-attended` asks the owner before the merge: the round ends with a question card whose `about` names the
 * pull request and the reviewed SHA; the hub's run for the answer (same lane) finds it in the context file's
 * `answers` and, when the head is still that SHA with its review status success, merges without asking again.
 *
 * The same command takes the `delivery.issue` events of `ask-owner` issues and the answers to their questions
 * (ask-owner.ts).
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { langFromEnv, t, type Lang } from "agent-autoloop/sdk";
import { GitHub, GitHubError, repoArg } from "./github.js";
import { gitHubFromEnv } from "./github-env.js";
import { settingsAt, SettingsError, type DeliverySettings } from "./settings.js";
import { sync, realClock, type Clock } from "./sync.js";
import { reviewDiff } from "./review-diff.js";
import { runReviewer } from "./reviewer.js";
import { codexConfigMax, runCodexReviewer } from "./reviewer-codex.js";
import { latestRunId, readChecks } from "./checks.js";
import { autoMergeOff, turnReady } from "./ready.js";
import { mergeReviewed, removeLabels } from "./finish.js";
import { fetchObjects, fileAt } from "./objects.js";
import { deliveryContext, latestStatus, setStatus, stageText, type StatusState } from "./statuses.js";
import { roundMessage, type RoundOutcome } from "./round-message.js";
import { pullLabels } from "./poll.js";
import { followShip } from "./track.js";
import { docsOnlyChange } from "./project.js";
import { issueInputOf, issueMessage, issueRound } from "./ask-owner.js";

/** Rounds within one run when main keeps moving before the merge. */
export const roundsMax = 3;
/** How long a run waits for the full checks before it ends for the hub's retry, in ms (60 minutes). */
export const checksWaitMs = 60 * 60_000;
/** How often the checks and labels are read while waiting, in ms. */
export const checksReadEveryMs = 15_000;
/** The largest review guide read, in bytes. */
export const guideBytesMax = 65_536;

/**
 * What a run is asked to do: the pull request, and the SHA the owner approved by answering the round's question
 * (null: none) or declined (null: none).
 */
export interface RoundInput { repo: string; number: number; approved: string | null; declined: string | null }

/** What a round needs besides its input. */
export interface RoundDeps {
  gh: GitHub;
  /** The token git fetches with (the client's). */
  token: string;
  /** The bare repository the round keeps objects in. */
  objects: string;
  lang: Lang;
  /** A test's GitHub on 127.0.0.1: local clone URLs allowed. */
  local: boolean;
  testLocalHealth: boolean;
  clock?: Clock;
  /** The checks' time limit (tests give a shorter one). */
  checksWaitMs?: number;
  /** The default Codex reviewer's `-c` overrides (`--codex-config`) and the environment it takes its keys from. */
  codex?: { config: readonly string[]; env: NodeJS.ProcessEnv };
}

/** The pull request as the round reads it. */
interface Pull {
  open: boolean; merged: boolean; draft: boolean; head: string; base: string; fork: boolean; labels: string[]; cloneUrl: string; title: string;
  /** The merge commit of a merged pull request, else null. */
  mergeSha: string | null;
}

/** Reads pull request `number` of `repo`. @throws GitHubError. */
async function readPull(gh: GitHub, repo: string, number: number): Promise<Pull> {
  const p = await gh.request("GET", `/repos/${repo}/pulls/${number}`);
  if (typeof p?.head?.sha !== "string" || typeof p?.base?.ref !== "string") throw new GitHubError(200, `GET /repos/${repo}/pulls/${number}: no head or base in the answer`);
  return {
    open: p.state === "open", merged: p.merged === true, draft: p.draft === true, head: p.head.sha, base: p.base.ref,
    fork: p.head?.repo?.full_name !== p.base?.repo?.full_name, cloneUrl: String(p.base?.repo?.clone_url ?? ""), title: String(p.title ?? ""),
    mergeSha: p.merged === true && typeof p.merge_commit_sha === "string" && /^[0-9a-f]{40}$/.test(p.merge_commit_sha) ? p.merge_commit_sha : null,
    labels: (Array.isArray(p.labels) ? p.labels : []).map((l: { name?: unknown }) => l?.name).filter((l: unknown): l is string => typeof l === "string"),
  };
}

/** main's current commit of `repo`. @throws GitHubError. */
async function mainSha(gh: GitHub, repo: string): Promise<string> {
  const ref = await gh.request("GET", `/repos/${repo}/git/ref/heads/main`);
  if (typeof ref?.object?.sha !== "string") throw new GitHubError(200, `GET /repos/${repo}/git/ref/heads/main: no object.sha in the answer`);
  return ref.object.sha;
}

/** The delivery labels among `labels`. */
const deliveryLabels = (labels: string[]) => pullLabels.filter((l) => labels.includes(l));
/** Whether the labels still ask for a merge (`deliver` or `deliver-attended`). */
const wantsMerge = (labels: string[]) => labels.includes("deliver") || labels.includes("deliver-attended");

/**
 * main's current commit of `repo` and `ops/delivery.json` there (fetched into the round's objects, never the pull
 * request's). @returns them, or `bad` with the settings error naming the field. @throws GitHubError, git errors.
 */
async function mainSettings(deps: RoundDeps, repo: string, cloneUrl: string): Promise<{ kind: "ok"; main: string; settings: DeliverySettings } | { kind: "bad"; main: string; error: string }> {
  const main = await mainSha(deps.gh, repo);
  fetchObjects(deps.objects, cloneUrl, [main], deps.token, deps.local);
  try {
    return { kind: "ok", main, settings: settingsAt(deps.objects, main, { lang: deps.lang, testLocalHealth: deps.testLocalHealth }) };
  } catch (e) {
    if (e instanceof SettingsError) return { kind: "bad", main, error: e.message };
    throw e;
  }
}

/**
 * Runs one delivery round for `input` (see the module comment).
 * @returns what it came to; `notRun` for a transient failure (GitHub unreadable, a head that moved, checks not done in
 *   time, main moving more than `roundsMax` times, the reviewer broken), which the hub retries.
 */
export async function deliverRound(input: RoundInput, deps: RoundDeps): Promise<RoundOutcome> {
  const note = { docsOnly: false };
  const outcome = await roundSteps(input, deps, note);
  return note.docsOnly ? { ...outcome, docsOnly: true } : outcome;
}

/** The steps of `deliverRound`; `note.docsOnly` says whether the last review skipped the model (only internal docs). */
async function roundSteps(input: RoundInput, deps: RoundDeps, note: { docsOnly: boolean }): Promise<RoundOutcome> {
  const { gh, lang } = deps;
  const { repo, number } = input;
  const subject = `${repo}#${number}`;
  const clock = deps.clock ?? realClock;
  const status = (sha: string, context: string, state: StatusState, text: string) => setStatus(gh, repo, sha, context, state, text);
  try {
    if (input.declined !== null) {
      await status(input.declined, deliveryContext, "failure", stageText.declined);
      return { kind: "nothing", subject, why: t(lang, "delivery.whyDeclined", { head: input.declined.slice(0, 12) }) };
    }
    const first = await readPull(gh, repo, number);
    if (first.merged) {
      if (!wantsMerge(first.labels) || first.mergeSha === null) return { kind: "nothing", subject, why: t(lang, "delivery.whyMerged") };
      const read = await mainSettings(deps, repo, first.cloneUrl);
      if (read.kind === "bad") return { kind: "badSettings", subject, main: read.main, error: read.error };
      return afterMerge(deps, repo, number, first, first.mergeSha, read.settings, clock);
    }
    if (!first.open) return { kind: "nothing", subject, why: t(lang, "delivery.whyClosed") };
    if (first.fork || first.base !== "main") return { kind: "nothing", subject, why: t(lang, "delivery.whyNotOurs") };
    if (deliveryLabels(first.labels).length === 0) return { kind: "nothing", subject, why: t(lang, "delivery.whyNoLabel") };
    const attended = first.labels.includes("deliver-attended");
    for (let round = 1; round <= roundsMax; round++) {
      const read = await mainSettings(deps, repo, first.cloneUrl);
      if (read.kind === "bad") return { kind: "badSettings", subject, main: read.main, error: read.error };
      const { main, settings } = read;
      // a failed review is the record of its commit: checked before the sync, which would make a new commit of it
      const failedReview = (sha: string) => latestStatus(gh, repo, sha, settings.review.status).then((s) => s === "failure");
      if (round === 1 && (await failedReview(first.head))) return { kind: "nothing", subject, why: t(lang, "delivery.whyFailedReview", { head: first.head.slice(0, 12) }) };
      const synced = await sync(gh, repo, number, main, clock);
      if (synced.kind === "moved") return { kind: "notRun", subject, error: t(lang, "delivery.errHeadMoved", { head: synced.head.slice(0, 12) }) };
      if (synced.kind === "timeout") return { kind: "notRun", subject, error: t(lang, "delivery.errSyncTimeout", { minutes: Math.round(synced.waitedMs / 60_000) }) };
      if (synced.kind === "conflict") {
        await status(first.head, deliveryContext, "failure", stageText.notSynced);
        return { kind: "conflict", subject, reason: synced.reason };
      }
      const head = synced.head;
      const reviewState = await latestStatus(gh, repo, head, settings.review.status);
      if (reviewState === "failure") return { kind: "nothing", subject, why: t(lang, "delivery.whyFailedReview", { head: head.slice(0, 12) }) };
      const approved = input.approved === head && reviewState === "success";
      if (!approved) {
        await status(head, deliveryContext, "pending", stageText.reviewing);
        const verdict = await review(deps, first.cloneUrl, main, head, settings);
        note.docsOnly = verdict.kind === "docsOnly";
        if (verdict.kind === "broken") return { kind: "notRun", subject, error: verdict.reason };
        if (verdict.kind === "findings") {
          await status(head, deliveryContext, "failure", stageText.reviewFailed);
          await status(head, settings.review.status, "failure", stageText.reviewFailed);
          return { kind: "findings", subject, head, text: verdict.text, attended };
        }
      }
      let labels = first.labels;
      if (labels.includes("deliver-review")) return endReviewOnly(deps, repo, number, head, labels);
      // a draft is turned ready first; only check runs newer than the latest before that count
      let after = 0;
      if ((await readPull(gh, repo, number)).draft) {
        after = await latestRunId(gh, repo, head, settings.checks.workflow);
        await turnReady(gh, repo, number);
      }
      await status(head, deliveryContext, "pending", stageText.waitingChecks);
      const started = clock.now();
      for (;;) {
        const now = await readPull(gh, repo, number);
        labels = now.labels;
        // merged by someone else while the round reviewed or waited: followed all the same
        if (now.mergeSha !== null && wantsMerge(labels)) return afterMerge(deps, repo, number, now, now.mergeSha, settings, clock);
        if (now.head !== head || !now.open || now.base !== "main") return { kind: "notRun", subject, error: t(lang, "delivery.errPullChanged") };
        // the labels before the checks: a delivery withdrawn (or turned review-only) while waiting ends so whatever the
        // checks say — a failure after the team took the label off is no card for the owner
        if (!wantsMerge(labels) && !labels.includes("deliver-review")) {
          await status(head, deliveryContext, "success", stageText.withdrawn);
          return { kind: "withdrawn", subject, head };
        }
        if (labels.includes("deliver-review")) return endReviewOnly(deps, repo, number, head, labels);
        const checks = await readChecks(gh, repo, head, settings.checks.workflow, settings.checks.jobs, after);
        if (checks.kind === "failed") {
          await status(head, deliveryContext, "failure", stageText.checksFailed);
          return { kind: "checksFailed", subject, head, jobs: checks.jobs.map((j) => `${j.name} (${j.conclusion})`) };
        }
        if (checks.kind === "passed") break;
        const waited = clock.now() - started;
        const limit = deps.checksWaitMs ?? checksWaitMs;
        if (waited >= limit) return { kind: "notRun", subject, error: t(lang, "delivery.errChecksTimeout", { minutes: Math.round(limit / 60_000) }) };
        await clock.sleep(Math.min(checksReadEveryMs, limit - waited));
      }
      // the merge step: main must still be the commit reviewed against, or the round goes back to sync
      if ((await mainSha(gh, repo)) !== main) continue;
      // auto-merge off (read back) before the status that permits a merge: only the merge by the reviewed SHA below
      await autoMergeOff(gh, repo, number);
      await status(head, settings.review.status, "success", stageText.reviewed);
      if (labels.includes("deliver-attended") && input.approved !== head) {
        await status(head, deliveryContext, "pending", stageText.waitingOwner);
        return { kind: "ask", subject, head, title: first.title };
      }
      const merged = await mergeReviewed(gh, repo, number, head);
      if (merged.kind === "headChanged") return { kind: "notRun", subject, error: t(lang, "delivery.errPullChanged") };
      if (merged.kind === "notMergeable") {
        const now = await readPull(gh, repo, number);
        if (now.mergeSha !== null && wantsMerge(now.labels)) return afterMerge(deps, repo, number, now, now.mergeSha, settings, clock);
        await status(head, deliveryContext, "failure", stageText.notMergeable);
        return { kind: "notMergeable", subject, head, reason: merged.reason };
      }
      return afterMerge(deps, repo, number, { ...first, head, labels }, merged.sha, settings, clock);
    }
    return { kind: "notRun", subject, error: t(lang, "delivery.errMainMoving", { rounds: roundsMax }) };
  } catch (e) {
    // GitHub unreadable, git unable to fetch: the hub retries the run
    return { kind: "notRun", subject, error: (e as Error).message };
  }
}

/**
 * After the merge (`merge`, of `pull`'s head): without health settings, `delivery` success saying only the merge was
 * done; else followed through Ship and health (track.ts), `delivery` success once live. Either way the delivery labels
 * come off, `deliver` last.
 */
async function afterMerge(deps: RoundDeps, repo: string, number: number, pull: Pull, merge: string, settings: DeliverySettings, clock: Clock): Promise<RoundOutcome> {
  const { gh, lang } = deps;
  const subject = `${repo}#${number}`;
  const done = async (text: string) => {
    await setStatus(gh, repo, pull.head, deliveryContext, "success", text);
    const on = deliveryLabels((await readPull(gh, repo, number)).labels);
    await removeLabels(gh, repo, number, on, on.includes("deliver") ? "deliver" : "deliver-attended");
  };
  const merged = `${stageText.merged} as ${merge.slice(0, 12)}`;
  if (settings.health === null) {
    await done(`${merged}; ${stageText.mergeOnly}`);
    return { kind: "merged", subject, head: pull.head, merge };
  }
  await setStatus(gh, repo, pull.head, deliveryContext, "pending", `${merged}; ${stageText.waitingShip}`);
  const followed = await followShip({ ...deps, cloneUrl: pull.cloneUrl, clock }, repo, number, merge, settings);
  if (followed.kind === "untracked") return { kind: "nothing", subject, why: t(lang, "delivery.whyMerged") };
  if (followed.kind === "notRun") return { kind: "notRun", subject, error: followed.error };
  await done(`${stageText.shipped} ${followed.live.slice(0, 12)}`);
  return { kind: "shipped", subject, head: pull.head, merge, live: followed.live };
}

/** A `deliver-review` round after a passing review: `delivery` success saying so, the labels off, `deliver-review` last. */
async function endReviewOnly(deps: RoundDeps, repo: string, number: number, head: string, labels: string[]): Promise<RoundOutcome> {
  await setStatus(deps.gh, repo, head, deliveryContext, "success", stageText.reviewOnly);
  await removeLabels(deps.gh, repo, number, deliveryLabels(labels), "deliver-review");
  return { kind: "reviewOnly", subject: `${repo}#${number}`, head };
}

/** The review of `head` against `main`: the diff of the branch's own commits to the project's reviewer. */
async function review(deps: RoundDeps, cloneUrl: string, main: string, head: string, settings: DeliverySettings) {
  fetchObjects(deps.objects, cloneUrl, [head], deps.token, deps.local);
  const diff = reviewDiff(deps.objects, main, head);
  const found = diff.findings.map((f) => t(deps.lang, "delivery.findingOctopus", { commit: f.commit.slice(0, 12), parents: f.parents }));
  if (diff.cut) found.push(t(deps.lang, "delivery.findingCut"));
  if (found.length > 0) return { kind: "findings" as const, text: found.join("\n") };
  if (diff.text === "") return { kind: "passed" as const };
  // ordinary internal docs need no model: judged on the reviewed changes alone, as the release scope judges them
  if (diff.changes.every((c) => docsOnlyChange(deps.objects, c.from, c.to, settings.internalDocs).docs)) return { kind: "docsOnly" as const };
  const guide = settings.review.guide === null ? null : fileAt(deps.objects, main, settings.review.guide, guideBytesMax);
  // no reviewer of the project's own: the default Codex reviewer (reviewer-codex.ts)
  if (settings.review.command === null) return runCodexReviewer(diff.text, guide, deps.codex ?? { config: [], env: process.env });
  return runReviewer(settings.review.command, diff.text, guide);
}

/** An answer or event of the run's context file, as far as the round reads it. */
interface Context {
  events?: { type?: unknown; subject?: unknown }[];
  answers?: { choice?: unknown; about?: unknown }[];
}

/** What the context file asks of this run: a pull request of `repo`, and an answer to its question if any. */
export function inputOf(context: Context, repo: string): RoundInput | null {
  const answer = [...(context.answers ?? [])].reverse().find((a) => typeof a.about === "string" && a.about.startsWith("delivery-merge "));
  const m = typeof answer?.about === "string" ? /^delivery-merge (\S+)#(\d+) ([0-9a-f]{40})$/.exec(answer.about) : null;
  if (m && m[1] === repo) return { repo, number: Number(m[2]), approved: answer!.choice === 0 ? m[3]! : null, declined: answer!.choice === 0 ? null : m[3]! };
  const event = [...(context.events ?? [])].reverse().find((e) => e.type === "delivery.pull_request" && typeof e.subject === "string");
  const s = typeof event?.subject === "string" ? /^(\S+)#(\d{1,9})$/.exec(event.subject) : null;
  if (!s || s[1] !== repo) return null;
  return { repo, number: Number(s[2]), approved: null, declined: null };
}

/**
 * The values of `--codex-config key=value` in `argv`, in order; null when one has no value, is not `key=value` with a
 * dotted key, or there are more than `codexConfigMax`.
 */
export function codexConfigArgs(argv: readonly string[]): string[] | null {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] !== "--codex-config") continue;
    const v = argv[i + 1];
    if (v === undefined || !/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*=/.test(v)) return null;
    out.push(v);
    i++;
  }
  return out.length > codexConfigMax ? null : out;
}

/**
 * The command: `round.ts --repo owner/name [--test-local-health] [--codex-config key=value]…`, in the rule's working
 * folder (it keeps its git objects there), the context file from `AGENT_AUTOLOOP_CONTEXT`. Prints the last message;
 * exit 1 when not run, 2 for a wrong command line.
 */
async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const lang = langFromEnv(env);
  const repo = repoArg(argv);
  const codexConfig = codexConfigArgs(argv);
  if (repo === null || codexConfig === null) {
    process.stderr.write(`${t(lang, "delivery.roundUsage", { max: codexConfigMax })}\n`);
    return 2;
  }
  let outcome: RoundOutcome;
  try {
    const context = JSON.parse(readFileSync(env.AGENT_AUTOLOOP_CONTEXT ?? "", "utf8")) as Context;
    const issue = issueInputOf(context, repo);
    const asked = inputOf(context, repo);
    if (issue) {
      // an `ask-owner` issue (ask-owner.ts): its own message, nothing of a pull request's round
      const done = await issueRound(gitHubFromEnv(env, lang), issue, lang);
      process.stdout.write(issueMessage(done, lang));
      return 0;
    }
    if (!asked) outcome = { kind: "nothing", subject: repo, why: t(lang, "delivery.whyNoEvent") };
    else {
      const gh = gitHubFromEnv(env, lang);
      const objects = join(process.cwd(), "delivery-objects", `${repo.replace("/", "__")}.git`);
      mkdirSync(objects, { recursive: true });
      const local = /^http:\/\/127\.0\.0\.1[:/]/.test(`${gh.baseUrl}/`);
      outcome = await deliverRound(asked, { gh, token: (env.GH_TOKEN || env.GITHUB_TOKEN)!, objects, lang, local, testLocalHealth: argv.includes("--test-local-health"), codex: { config: codexConfig, env } });
    }
  } catch (e) {
    outcome = { kind: "notRun", subject: repo, error: (e as Error).message };
  }
  process.stdout.write(roundMessage(outcome, lang));
  return outcome.kind === "notRun" ? 1 : 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) process.exitCode = await main(process.argv.slice(2), process.env);
