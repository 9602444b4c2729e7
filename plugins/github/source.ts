/**
 * The built-in `github` source adapter (plugins.md 事件插件): checks `X-Hub-Signature-256` (HMAC-SHA256 of the raw
 * body with the source's secret) in constant time, then turns GitHub webhook deliveries into events with stable
 * ids, so a redelivery is recorded once. Only translates: no requests. Only `node:` modules and the plugin SDK.
 *
 * Mapped: issues, issue_comment, pull_request, pull_request_review, push, check_run, workflow_run, release.
 * `ping` and other events give no event. Text the hub would refuse (control and bidi characters, src/kernel/text.ts)
 * is removed from titles and bodies rather than losing the delivery.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { neutralise, Refusal, type SourceArgs, type SourceEvent } from "agent-autoloop/sdk";

/** The header that carries the signature: the hub refuses a delivery without it before reading the body. */
export const signatureHeader = "x-hub-signature-256";
/** An event as mapped, before fields it has no value for are left out. */
interface Event { id: string; type: string; subject?: string; summary?: string; detail?: string; link?: string }

/** Free text of the payload without the characters the hub refuses (src/kernel/text.ts), cut to `max` code points. */
const clip = (s: unknown, max: number, oneLine = false): string | undefined => {
  if (typeof s !== "string" || s === "") return undefined;
  return [...neutralise(s, oneLine)].slice(0, max).join("");
};
const line = (s: unknown, max: number) => clip(s, max, true);
/** Subjects are identifiers: letters, digits and `# . _ : / @ -`; anything else becomes `-`. */
const subject = (s: unknown) => (typeof s === "string" && s !== "" ? [...s.replace(/[^A-Za-z0-9#._:/@-]/g, "-")].slice(0, 100).join("") : undefined);
const link = (s: unknown) => (typeof s === "string" && /^https?:\/\/[!-~]+$/.test(s) && s.length <= 500 ? s : undefined);
const type = (event: string, action: unknown) => (typeof action === "string" && action ? `${event}.${action}` : event).replace(/[^A-Za-z0-9._:/-]/g, "_").slice(0, 64);

/** An event id within the hub's 200-character limit: long ids keep their kind and a SHA-256 of the whole. */
export function stableId(id: string): string {
  if ([...id].length <= 200) return id;
  return `${id.split(":")[0]}:sha256:${createHash("sha256").update(id).digest("hex")}`;
}

/** Verifies the signature of the raw body. @throws Refusal 401 when it is missing or wrong. */
export function verify(headers: Record<string, string>, body: string, secret: string | null): void {
  if (!secret) throw new Refusal(401, "no secret for this source: set AGENT_AUTOLOOP_SECRET_<SOURCE> in secrets.env and restart the hub");
  const got = headers["x-hub-signature-256"] ?? "";
  if (!/^sha256=[0-9a-f]{64}$/.test(got)) throw new Refusal(401, "missing or malformed X-Hub-Signature-256");
  const want = "sha256=" + createHmac("sha256", secret).update(body, "utf8").digest("hex");
  if (!timingSafeEqual(Buffer.from(got), Buffer.from(want))) throw new Refusal(401, "X-Hub-Signature-256 does not match the body");
}

/** A field the event's id or subject is made of: a number (GitHub ids and issue numbers). @throws naming the field. */
function num(v: unknown, field: string): number {
  if (typeof v !== "number" || !Number.isSafeInteger(v)) throw new Error(`${field}: a whole number is required`);
  return v;
}
/** A field the event's id is made of: a non-empty string. @throws naming the field. */
function str(v: unknown, field: string): string {
  if (typeof v !== "string" || v === "") throw new Error(`${field}: a non-empty string is required`);
  return v;
}
/** An object the mapping reads from. @throws naming the field. */
function obj(v: unknown, field: string): any { // eslint-disable-line @typescript-eslint/no-explicit-any
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new Error(`${field}: an object is required`);
  return v;
}

/**
 * Maps one parsed delivery to events. Every field an event's id or subject is made of is checked first, so a
 * payload of the wrong shape is refused instead of becoming an event like `issues:undefined:…` that later
 * deliveries would be taken as duplicates of.
 * @throws Error naming the first missing or mistyped field.
 */
export function toEvents(event: string, body: unknown): Event[] {
  if (!["issues", "issue_comment", "pull_request", "pull_request_review", "push", "check_run", "workflow_run", "release"].includes(event)) return [];
  const p = obj(body, "payload");
  const action = event === "push" ? p.action : str(p.action, "action");
  const t = type(event, action);
  switch (event) {
    case "issues": {
      const i = obj(p.issue, "issue");
      return [{ id: `issues:${num(i.id, "issue.id")}:${action}:${str(i.updated_at, "issue.updated_at")}`, type: t, subject: `#${num(i.number, "issue.number")}`, summary: line(i.title, 200), detail: clip(i.body, 4000), link: link(i.html_url) }];
    }
    case "issue_comment": {
      const c = obj(p.comment, "comment");
      const i = obj(p.issue, "issue");
      return [{ id: `issue_comment:${num(c.id, "comment.id")}:${action}:${str(c.updated_at, "comment.updated_at")}`, type: t, subject: `#${num(i.number, "issue.number")}`, summary: line(i.title, 200), detail: clip(c.body, 4000), link: link(c.html_url) }];
    }
    case "pull_request": {
      const pr = obj(p.pull_request, "pull_request");
      return [{ id: `pull_request:${num(pr.id, "pull_request.id")}:${action}:${str(pr.updated_at, "pull_request.updated_at")}:${pr.head?.sha ?? ""}`, type: t, subject: `#${num(pr.number, "pull_request.number")}`, summary: line(pr.title, 200), detail: clip(pr.body, 4000), link: link(pr.html_url) }];
    }
    case "pull_request_review": {
      const r = obj(p.review, "review");
      const pr = obj(p.pull_request, "pull_request");
      return [{ id: `pull_request_review:${num(r.id, "review.id")}:${action}:${r.submitted_at ?? ""}`, type: t, subject: `#${num(pr.number, "pull_request.number")}`, summary: line(`${r.state}: ${pr.title}`, 200), detail: clip(r.body, 4000), link: link(r.html_url) }];
    }
    case "push": {
      const ref = str(p.ref, "ref");
      const branch = ref.replace(/^refs\/(heads|tags)\//, "");
      const repo = obj(p.repository, "repository");
      return [{ id: `push:${num(repo.id, "repository.id")}:${ref}:${str(p.after, "after")}`, type: t, subject: subject(branch), summary: line(p.head_commit?.message ?? `${Array.isArray(p.commits) ? p.commits.length : 0} commits`, 200), link: link(p.compare) }];
    }
    case "check_run": {
      const c = obj(p.check_run, "check_run");
      const pr = Array.isArray(c.pull_requests) ? c.pull_requests[0]?.number : undefined;
      return [{ id: `check_run:${num(c.id, "check_run.id")}:${action}:${str(c.status, "check_run.status")}:${c.conclusion ?? ""}`, type: t, subject: typeof pr === "number" ? `#${pr}` : subject(typeof c.head_sha === "string" ? c.head_sha.slice(0, 12) : undefined), summary: line(`${c.name}: ${c.conclusion ?? c.status}`, 200), link: link(c.html_url) }];
    }
    case "workflow_run": {
      const w = obj(p.workflow_run, "workflow_run");
      const pr = Array.isArray(w.pull_requests) ? w.pull_requests[0]?.number : undefined;
      return [{ id: `workflow_run:${num(w.id, "workflow_run.id")}:${action}:${w.run_attempt ?? 1}:${str(w.status, "workflow_run.status")}:${w.conclusion ?? ""}`, type: t, subject: typeof pr === "number" ? `#${pr}` : subject(w.head_branch), summary: line(`${w.name}: ${w.conclusion ?? w.status}`, 200), link: link(w.html_url) }];
    }
    default: {
      const r = obj(p.release, "release");
      return [{ id: `release:${num(r.id, "release.id")}:${action}`, type: t, subject: subject(r.tag_name), summary: line(r.name || r.tag_name, 200), detail: clip(r.body, 4000), link: link(r.html_url) }];
    }
  }
}

export default function github({ headers, body, secret }: SourceArgs): SourceEvent[] {
  verify(headers, body, secret);
  const event = headers["x-github-event"];
  if (!event) throw new Refusal(400, "missing X-GitHub-Event");
  let payload: unknown;
  try {
    payload = JSON.parse(body);
  } catch {
    throw new Refusal(400, "the body is not JSON (set the webhook's content type to application/json)");
  }
  try {
    return toEvents(event, payload).map((e) => Object.fromEntries(Object.entries({ ...e, id: stableId(e.id) }).filter(([, v]) => v !== undefined)) as unknown as SourceEvent);
  } catch (e) {
    throw new Refusal(400, `the body is not a valid GitHub "${event}" payload (${(e as Error).message})`);
  }
}
