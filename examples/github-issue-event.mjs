#!/usr/bin/env node
// Turns a GitHub `issues` webhook payload into an agent-autoloop event (POST /v1/events body) on stdout.
//   node examples/github-issue-event.mjs < payload.json
//   node examples/github-issue-event.mjs --example opened   # a real payload from @octokit/webhooks-examples
// id: "<issue id>:<action>" (stable, so re-sending is deduplicated), type: "issues.<action>",
// subject: "#<number>", summary: the title, link: the issue's URL.
// Bad input (--help, nothing on stdin, not JSON, not an issues payload) prints the usage and why on stderr, exit 2.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const usage = `usage: node examples/github-issue-event.mjs < payload.json
       node examples/github-issue-event.mjs --example <action>   (opened, closed, labeled, …: a real payload)
Prints the agent-autoloop event of a GitHub "issues" webhook payload as one line of JSON.`;

/** Prints `why` (if any) and the usage on stderr and exits: 0 for --help, 2 for bad input. */
function stop(why, code = 2) {
  process.stderr.write((why ? `${why}\n\n` : "") + usage + "\n");
  process.exit(code);
}

if (process.argv.includes("--help") || process.argv.includes("-h")) stop(null, 0);
const i = process.argv.indexOf("--example");
let payload;
if (i >= 0) {
  const action = process.argv[i + 1] ?? "opened";
  const all = createRequire(import.meta.url)("@octokit/webhooks-examples/api.github.com/index.json");
  payload = all.find((x) => x.name === "issues").examples.find((e) => e.action === action);
  if (!payload) stop(`no issues.${action} example`);
} else {
  if (process.stdin.isTTY) stop("nothing on standard input");
  const text = readFileSync(0, "utf8");
  if (text.trim() === "") stop("nothing on standard input");
  try {
    payload = JSON.parse(text);
  } catch (e) {
    stop(`standard input is not JSON (${e.message})`);
  }
}
const { action, issue } = payload ?? {};
if (typeof action !== "string" || typeof issue?.id !== "number" || typeof issue.number !== "number" || typeof issue.title !== "string" || typeof issue.html_url !== "string") {
  stop("not a GitHub issues payload: it needs action, issue.id, issue.number, issue.title and issue.html_url");
}
const event = {
  id: `${issue.id}:${action}`,
  type: `issues.${action}`,
  subject: `#${issue.number}`,
  summary: [...issue.title].slice(0, 200).join(""),
  link: issue.html_url,
};
process.stdout.write(JSON.stringify(event) + "\n");
