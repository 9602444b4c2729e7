/**
 * The last message of a delivery round (protocol.md 回执, 交付插件): its first line in the owner's language (the
 * catalog's `delivery.*` texts) and the receipt's cards:
 *
 * - findings: a notice card per commit (its key names the commit, so an open card of an older commit never swallows a
 *   newer commit's findings); `deliver-attended` adds no card — the findings are in the message;
 * - checks failed, a pull request that cannot be synced or merged, settings that cannot be read: a notice card;
 * - `deliver-attended` before the merge: a question card (`about` names the pull request and the reviewed SHA, which
 *   the run of the answer reads back);
 * - a transient failure: `Not run: …` (the command exits 1 and the hub retries).
 */
import { t, neutralise, type Lang } from "agent-autoloop/sdk";

/** What a round came to (plugins/delivery/round.ts). */
export type RoundOutcome = ({
  /** Set when the review did not call the model: the reviewed changes touch only ordinary internal docs. */
  docsOnly?: true;
}) & (
  | { kind: "notRun"; subject: string; error: string }
  | { kind: "nothing"; subject: string; why: string }
  | { kind: "badSettings"; subject: string; main: string; error: string }
  | { kind: "conflict"; subject: string; reason: string }
  | { kind: "findings"; subject: string; head: string; text: string; attended: boolean }
  | { kind: "reviewOnly"; subject: string; head: string }
  | { kind: "checksFailed"; subject: string; head: string; jobs: string[] }
  | { kind: "withdrawn"; subject: string; head: string }
  | { kind: "ask"; subject: string; head: string; title: string }
  | { kind: "notMergeable"; subject: string; head: string; reason: string }
  | { kind: "merged"; subject: string; head: string; merge: string }
  | { kind: "shipped"; subject: string; head: string; merge: string; live: string }
);

/** The longest first line (the hub keeps a summary of 200 characters). */
const lineMax = 200;

/** One line of outside text (an error, a pull request's title) made safe for a card and cut to `max` characters. */
const oneLine = (text: string, max: number) => neutralise(text, true).replace(/\s+/g, " ").trim().slice(0, max);

/** A receipt of one notice card titled `title` (cut to a title's limit) with `text`, one card per `key`. */
const notice = (title: string, text: string, key: string) => ({ notice: [{ title: title.slice(0, lineMax), text, key }] });

/** The receipt of a round's outcome as the command prints it: the first line, then the block when it has cards. */
export function roundMessage(o: RoundOutcome, lang: Lang): string {
  const short = (sha: string) => sha.slice(0, 12);
  let line: string;
  let receipt: Record<string, unknown> | null = null;
  switch (o.kind) {
    case "notRun":
      line = t(lang, "delivery.roundNotRun", { subject: o.subject, error: oneLine(o.error, 300) });
      break;
    case "nothing":
      line = t(lang, "delivery.roundNothing", { subject: o.subject, why: o.why });
      break;
    case "badSettings":
      line = t(lang, "delivery.roundBadSettings", { subject: o.subject });
      receipt = notice(line, t(lang, "delivery.cardBadSettings", { main: short(o.main), error: oneLine(o.error, 1000) }), `delivery-settings:${o.main}`);
      break;
    case "conflict":
      line = t(lang, "delivery.roundConflict", { subject: o.subject });
      receipt = notice(line, oneLine(o.reason, 1000), `delivery-sync:${o.subject}`);
      break;
    case "findings":
      line = t(lang, "delivery.roundFindings", { subject: o.subject, head: short(o.head) });
      if (!o.attended) receipt = notice(line, neutralise(o.text, false), `delivery-review:${o.subject}:${o.head}`);
      else line = `${line}\n\n${neutralise(o.text, false)}`;
      break;
    case "reviewOnly":
      line = t(lang, "delivery.roundReviewOnly", { subject: o.subject, head: short(o.head) });
      break;
    case "checksFailed":
      line = t(lang, "delivery.roundChecksFailed", { subject: o.subject, head: short(o.head) });
      receipt = notice(line, o.jobs.join("\n").slice(0, 3000), `delivery-checks:${o.subject}:${o.head}`);
      break;
    case "withdrawn":
      line = t(lang, "delivery.roundWithdrawn", { subject: o.subject, head: short(o.head) });
      break;
    case "ask":
      line = t(lang, "delivery.roundAsk", { subject: o.subject, head: short(o.head) });
      receipt = { ask: [{
        title: t(lang, "delivery.askTitle", { subject: o.subject }), text: t(lang, "delivery.askText", { head: o.head, title: oneLine(o.title, 300) }),
        options: [t(lang, "delivery.askMerge"), t(lang, "delivery.askKeep")], recommend: 0,
        about: `delivery-merge ${o.subject} ${o.head}`, key: `delivery-merge:${o.subject}:${o.head}`,
      }] };
      break;
    case "notMergeable":
      line = t(lang, "delivery.roundNotMergeable", { subject: o.subject, head: short(o.head) });
      receipt = notice(line, oneLine(o.reason, 1000), `delivery-merge-refused:${o.subject}:${o.head}`);
      break;
    case "merged":
      line = t(lang, "delivery.roundMerged", { subject: o.subject, head: short(o.head), merge: short(o.merge) });
      break;
    case "shipped":
      line = t(lang, "delivery.roundShipped", { subject: o.subject, merge: short(o.merge), live: short(o.live) });
      break;
  }
  if (o.docsOnly) line = `${line}\n\n${t(lang, "delivery.reviewDocsOnly")}`;
  const [first, ...rest] = line.split("\n");
  const head = [first!.slice(0, lineMax), ...rest].join("\n");
  return `${head}\n${receipt ? `\`\`\`agent-autoloop\n${JSON.stringify(receipt)}\n\`\`\`\n` : ""}`;
}
