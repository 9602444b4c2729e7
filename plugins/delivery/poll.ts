/**
 * The delivery plugin's source (protocol.md 交付插件): reads a repository's labelled items and gives one event per
 * item to start delivering, as the last message of a `command` agent run by a cron rule whose `emits` allows source
 * and type `delivery.*` (the hub's polling script pattern, as examples/recipes/website-check). The rule that takes the
 * events splits lanes by their subject, `owner/name#<number>`: one lane per pull request; `parallel` and the
 * worker's capacity bound how many run; a failed run uses the hub's retries and "failed N times" cards.
 *
 * - Labels: `deliver`, `deliver-attended`, `deliver-review` on a pull request; `ask-owner` on an issue.
 * - Event id: repository, item, label record (the id of the newest `labeled` record of one of its delivery labels
 *   still on it) and current head: `delivery:<owner/name>#<number>:<record>:<head SHA>`. The same state gives the
 *   same id, so the hub records it once; no cursor is kept here. A label record that cannot be read counts 0 for that
 *   part, and the other items go on.
 * - Nothing starts for: an item without a delivery label (merged ones too), a closed pull request not merged, a pull
 *   request from a fork, one whose target is not main, a merged one labelled only `deliver-review`, a closed issue.
 *   A merged pull request still labelled `deliver` (or `deliver-attended`) starts one: it is tracked through Ship.
 *
 * Run: `node --import tsx plugins/delivery/poll.ts --repo owner/name`, with `GH_TOKEN` (or `GITHUB_TOKEN`) and, for a
 * GitHub other than api.github.com, `GITHUB_API_URL`. Exit 0 with the receipt; exit 1 with `Not run: …` when the
 * labelled items cannot be listed (the hub retries the run).
 */
import { createHash } from "node:crypto";
import { pathToFileURL } from "node:url";
import { langFromEnv, t, type Lang } from "agent-autoloop/sdk";
import { GitHub, repoArg } from "./github.js";
import { gitHubFromEnv } from "./github-env.js";

/** The labels of a pull request that start a delivery, in the order their label records are looked at. */
export const pullLabels = ["deliver", "deliver-attended", "deliver-review"] as const;
/** The label of an issue that asks the owner. */
export const askLabel = "ask-owner";
/** Labels under which a merged pull request is still followed through Ship and health. */
const trackLabels = ["deliver", "deliver-attended"];
/** Pages of 100 read per label when listing items. */
export const listPagesMax = 3;
/** Pages of 100 read of an item's records when looking for its label record. */
export const recordPagesMax = 10;
/** Events one poll gives (a receipt's part holds at most 50); the rest come at the next poll. */
export const pollEventsMax = 50;
/** The hub's limit on an event id. */
const eventIdMax = 200;

/** An event as the receipt carries it (protocol/schema.json `ReceiptEvent`). */
export interface PollEvent { id: string; type: "delivery.pull_request" | "delivery.issue"; subject: string; summary: string; link?: string }

/** What one poll found: its events and what it could not read. */
export interface PollResult {
  events: PollEvent[];
  /** Items whose label record could not be read (their record part is 0). */
  unreadable: number;
  /** Pull requests that could not be read (no event this time; the next poll tries again). */
  failed: number;
  /** Items beyond `pollEventsMax`. */
  over: number;
}

/** An event id within the hub's limit: a longer one keeps its kind and a SHA-256 of the whole. */
export function eventId(repo: string, number: number, record: number, head: string): string {
  const id = `delivery:${repo}#${number}:${record}:${head}`;
  return id.length <= eventIdMax ? id : `delivery:sha256:${createHash("sha256").update(id).digest("hex")}`;
}

/**
 * The id of the newest `labeled` record of one of `labels` on item `number`, 0 when it cannot be read or there is none.
 */
async function labelRecord(gh: GitHub, repo: string, number: number, labels: string[]): Promise<{ record: number; readable: boolean }> {
  try {
    const { items } = await gh.list(`/repos/${repo}/issues/${number}/events`, recordPagesMax);
    let record = 0;
    for (const e of items) {
      if (e?.event === "labeled" && labels.includes(e.label?.name) && Number.isSafeInteger(e.id) && e.id > record) record = e.id;
    }
    return { record, readable: true };
  } catch {
    return { record: 0, readable: false };
  }
}

/**
 * Reads the labelled items of `repo` (`owner/name`) and makes their events (see the module comment), sorted by number.
 * @throws GitHubError when the labelled items cannot be listed.
 */
export async function poll(gh: GitHub, repo: string): Promise<PollResult> {
  const byNumber = new Map<number, { number: number; labels: string[]; isPull: boolean; state: string; link?: string }>();
  // open items oldest first; closed ones only under the labels a merged pull request is tracked by, the most recently
  // changed first (a merge changes it), so closed items that never leave their label cannot crowd out new merges
  const lists = [
    ...[...pullLabels, askLabel].map((l) => `labels=${encodeURIComponent(l)}&state=open&sort=created&direction=asc`),
    ...trackLabels.map((l) => `labels=${encodeURIComponent(l)}&state=closed&sort=updated&direction=desc`),
  ];
  for (const query of lists) {
    const { items } = await gh.list(`/repos/${repo}/issues?${query}`, listPagesMax);
    for (const i of items) {
      if (!Number.isSafeInteger(i?.number)) continue;
      const labels = (Array.isArray(i.labels) ? i.labels : []).map((l: { name?: unknown } | string) => (typeof l === "string" ? l : l?.name)).filter((l: unknown): l is string => typeof l === "string");
      byNumber.set(i.number, { number: i.number, labels, isPull: i.pull_request != null, state: String(i.state), link: typeof i.html_url === "string" ? i.html_url : undefined });
    }
  }
  const result: PollResult = { events: [], unreadable: 0, failed: 0, over: 0 };
  for (const item of [...byNumber.values()].sort((a, b) => a.number - b.number)) {
    const subject = `${repo}#${item.number}`;
    let labels: string[];
    let head = "-";
    let type: PollEvent["type"];
    if (item.isPull) {
      labels = pullLabels.filter((l) => item.labels.includes(l));
      if (labels.length === 0) continue;
      let pr;
      try {
        pr = await gh.request("GET", `/repos/${repo}/pulls/${item.number}`);
      } catch {
        result.failed += 1;
        continue;
      }
      if (pr.state !== "open" && !(pr.merged === true && labels.some((l) => trackLabels.includes(l)))) continue;
      if (pr.head?.repo?.full_name !== pr.base?.repo?.full_name || pr.base?.ref !== "main") continue;
      head = String(pr.head.sha);
      type = "delivery.pull_request";
    } else {
      if (!item.labels.includes(askLabel) || item.state !== "open") continue;
      labels = [askLabel];
      type = "delivery.issue";
    }
    if (result.events.length >= pollEventsMax) {
      result.over += 1;
      continue;
    }
    const { record, readable } = await labelRecord(gh, repo, item.number, labels);
    if (!readable) result.unreadable += 1;
    const summary = `${subject} ${labels.join(",")}${head === "-" ? "" : ` ${head.slice(0, 12)}`}`.slice(0, 200);
    const link = item.link && /^https?:\/\/[!-~]+$/.test(item.link) && item.link.length <= 500 ? item.link : undefined;
    result.events.push({ id: eventId(repo, item.number, record, head), type, subject, summary, ...(link ? { link } : {}) });
  }
  return result;
}

/** The last message of a poll run: its first line (in `lang`) and the receipt with the events. */
export function pollMessage(repo: string, r: PollResult, lang: Lang): string {
  if (r.events.length === 0 && r.unreadable === 0 && r.failed === 0) return `${t(lang, "delivery.pollNothing", { repo })}\n`;
  const line = t(lang, "delivery.pollFound", { repo, count: r.events.length, unreadable: r.unreadable, failed: r.failed, over: r.over });
  return `${line}\n\`\`\`agent-autoloop\n${JSON.stringify({ events: r.events })}\n\`\`\`\n`;
}

/** The command: `--repo owner/name`; prints the last message; exit 1 when the items cannot be listed. */
async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const lang = langFromEnv(env);
  const repo = repoArg(argv);
  if (repo === null) {
    process.stderr.write(`${t(lang, "delivery.usage")}\n`);
    return 2;
  }
  try {
    const gh = gitHubFromEnv(env, lang);
    process.stdout.write(pollMessage(repo, await poll(gh, repo), lang));
    return 0;
  } catch (e) {
    process.stdout.write(`${t(lang, "delivery.pollFailed", { repo, error: (e as Error).message.replace(/[\s\u0000-\u001f\u007f-\u009f]+/g, " ").slice(0, 500) })}\n`);
    return 1;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) process.exitCode = await main(process.argv.slice(2), process.env);
