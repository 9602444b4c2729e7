/**
 * `ask-owner` issues of the delivery plugin (protocol.md 交付插件): an ordinary issue labelled `ask-owner` becomes a
 * question card for the owner through the hub's ordinary receipt `ask` — its readable body only, code blocks and local
 * paths removed — and the label comes off after the answer. The answer stays in the hub (the card's answer): nothing
 * is written to GitHub but the label's removal (no comments).
 *
 * The poll (poll.ts) gives a `delivery.issue` event for an open issue with the label; the round's rule takes it in the
 * issue's own lane (subject `owner/name#<number>`). That run asks; the hub runs the same lane again with the answer in
 * the context file's `answers` (the card's `about` names the issue), and that run removes the label. A card of the
 * same key still open is not asked again (the hub's `ask` key); a label put back after the answer asks anew.
 */
import { t, neutralise, type Lang } from "agent-autoloop/sdk";
import { GitHub } from "./github.js";
import { removeLabels } from "./finish.js";
import { askLabel } from "./poll.js";

/** The longest question text kept of an issue's body, in characters (a card holds 4,000). */
export const questionCharsMax = 3_500;
/** What a question card's `about` starts with; the issue's `owner/name#<number>` follows. */
export const askAboutPrefix = "delivery-ask ";

/** What a run is asked to do for an issue: ask its question, or (`answered`) take the label off after the answer. */
export interface IssueInput { repo: string; number: number; answered: boolean }

/** What an issue's run came to. */
export type IssueOutcome =
  | { kind: "question"; subject: string; title: string; text: string }
  | { kind: "answered"; subject: string }
  | { kind: "nothing"; subject: string; why: string };

/** A fence opening a code block: up to 3 spaces, then 3 or more backticks or tildes. */
const fenceOpen = /^ {0,3}(`{3,}|~{3,})/;
/** A line of an indented code block: 4 spaces or a tab. */
const indented = /^(?: {4}|\t)/;
/** A list item's first line (an indented line after it continues the item, it is no code block). */
const listItem = /^ {0,3}(?:[-*+]|\d{1,9}[.)])\s/;
/**
 * A local path: a `file:` URL, a Windows drive or share path, a home path (`~/…`), or an absolute Unix path not inside
 * a URL or a word (`/home/alice/x`, `/tmp`); its trailing punctuation stays text.
 */
const localPath = /file:\/\/\S*|\b[A-Za-z]:\\\S*|\\\\[\w.$-]+\\\S*|(?<![\w.:/~\\-])~[\w.-]*\/\S*|(?<![\w.:/~\\)\]-])\/[\w.-][^\s]*/g;

/**
 * An issue body made readable for a question card: fenced code blocks (to their closing fence, or the end) and indented
 * code blocks become one `codeLeftOut` line, local paths `pathLeftOut` (both in `lang`); control and bidi characters
 * are removed, blank lines collapsed, and the text cut to `questionCharsMax`.
 */
export function readableBody(body: string, lang: Lang): string {
  const codeMark = t(lang, "delivery.askOwnerCode");
  const out: string[] = [];
  const lines = body.replace(/\r\n?/g, "\n").split("\n");
  let fence: { char: string; length: number } | null = null;
  let inCode = false;
  let inList = false;
  const leftOut = () => {
    if (out[out.length - 1] !== codeMark) out.push(codeMark);
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (fence) {
      const close = new RegExp(`^ {0,3}${fence.char === "`" ? "`" : "~"}{${fence.length},}\\s*$`);
      if (close.test(line)) fence = null;
      continue;
    }
    const open = fenceOpen.exec(line);
    if (open) {
      fence = { char: open[1]![0]!, length: open[1]!.length };
      leftOut();
      inCode = false;
      continue;
    }
    const blank = line.trim() === "";
    // an indented code block starts after a blank line (not within a list item) and goes on while lines stay indented
    if (indented.test(line) && !blank && (inCode || (!inList && (i === 0 || lines[i - 1]!.trim() === "")))) {
      inCode = true;
      leftOut();
      continue;
    }
    if (!blank) {
      inCode = false;
      if (listItem.test(line)) inList = true;
      else if (!indented.test(line) && lines[i - 1]?.trim() === "") inList = false;
    }
    out.push(line.replace(localPath, (p) => {
      const tail = /[)\]}>.,;:!?'"`]+$/.exec(p)?.[0] ?? "";
      return `${t(lang, "delivery.askOwnerPath")}${tail}`;
    }));
  }
  const text = neutralise(out.join("\n"), false).replace(/[ \t]+$/gm, "").replace(/\n{3,}/g, "\n\n").trim();
  const chars = [...text];
  return chars.length <= questionCharsMax ? text : `${chars.slice(0, questionCharsMax - 1).join("")}…`;
}

/**
 * Runs `input` for issue `input.number` of `input.repo`: the question (the issue open, labelled `ask-owner`, not a pull
 * request), or after the answer the label taken off (already gone counts as off; a failed removal is read back).
 * @throws GitHubError when GitHub cannot be read or the label is still on after its removal failed (the hub retries).
 */
export async function issueRound(gh: GitHub, input: IssueInput, lang: Lang): Promise<IssueOutcome> {
  const { repo, number } = input;
  const subject = `${repo}#${number}`;
  if (input.answered) {
    await removeLabels(gh, repo, number, [askLabel], askLabel);
    return { kind: "answered", subject };
  }
  const issue = await gh.request("GET", `/repos/${repo}/issues/${number}`);
  const labels = (Array.isArray(issue?.labels) ? issue.labels : []).map((l: { name?: unknown } | string) => (typeof l === "string" ? l : l?.name));
  if (issue?.pull_request != null) return { kind: "nothing", subject, why: t(lang, "delivery.whyAskPull") };
  if (issue?.state !== "open") return { kind: "nothing", subject, why: t(lang, "delivery.whyClosedIssue") };
  if (!labels.includes(askLabel)) return { kind: "nothing", subject, why: t(lang, "delivery.whyNoAskLabel") };
  const body = typeof issue.body === "string" ? readableBody(issue.body, lang) : "";
  return { kind: "question", subject, title: neutralise(String(issue.title ?? ""), true).trim(), text: body || t(lang, "delivery.askOwnerNoBody") };
}

/** An answer or event of the run's context file, as far as an issue's run reads it. */
interface Context {
  events?: { type?: unknown; subject?: unknown }[];
  answers?: { about?: unknown }[];
}

/** What the context file asks of this run for an issue of `repo`: the answer to its question first, else its event. */
export function issueInputOf(context: Context, repo: string): IssueInput | null {
  const about = [...(context.answers ?? [])].reverse().map((a) => a.about).find((a): a is string => typeof a === "string" && a.startsWith(askAboutPrefix));
  const m = about === undefined ? null : /^(\S+)#(\d{1,9})$/.exec(about.slice(askAboutPrefix.length));
  if (m && m[1] === repo) return { repo, number: Number(m[2]), answered: true };
  const event = [...(context.events ?? [])].reverse().find((e) => e.type === "delivery.issue" && typeof e.subject === "string");
  const s = typeof event?.subject === "string" ? /^(\S+)#(\d{1,9})$/.exec(event.subject) : null;
  if (!s || s[1] !== repo) return null;
  return { repo, number: Number(s[2]), answered: false };
}

/** The last message of an issue's run: its first line in `lang`, and for a question the receipt's `ask`. */
export function issueMessage(o: IssueOutcome, lang: Lang): string {
  if (o.kind === "nothing") return `${t(lang, "delivery.roundNothing", { subject: o.subject, why: o.why })}\n`;
  if (o.kind === "answered") return `${t(lang, "delivery.roundAnswered", { subject: o.subject })}\n`;
  const title = [...t(lang, "delivery.askOwnerTitle", { subject: o.subject, title: o.title })].slice(0, 200).join("");
  const ask = { title, text: o.text, options: [t(lang, "delivery.askOwnerDone")], recommend: 0, about: `${askAboutPrefix}${o.subject}`, key: `delivery-ask:${o.subject}` };
  const line = [...t(lang, "delivery.roundAskOwner", { subject: o.subject, title: o.title })].slice(0, 200).join("");
  return `${line}\n\`\`\`agent-autoloop\n${JSON.stringify({ ask: [ask] })}\n\`\`\`\n`;
}
