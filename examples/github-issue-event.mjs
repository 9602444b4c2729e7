#!/usr/bin/env node
// Turns a GitHub `issues` webhook payload into an agent-autoloop event (POST /v1/events body) on stdout.
//   node examples/github-issue-event.mjs < payload.json
//   node examples/github-issue-event.mjs --example opened   # a real payload from @octokit/webhooks-examples
// id: "<issue id>:<action>" (stable, so re-sending is deduplicated), type: "issues.<action>",
// subject: "#<number>", summary: the title, link: the issue's URL.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const i = process.argv.indexOf("--example");
let payload;
if (i >= 0) {
  const action = process.argv[i + 1] ?? "opened";
  const all = createRequire(import.meta.url)("@octokit/webhooks-examples/api.github.com/index.json");
  payload = all.find((x) => x.name === "issues").examples.find((e) => e.action === action);
  if (!payload) throw new Error(`no issues.${action} example`);
} else {
  payload = JSON.parse(readFileSync(0, "utf8"));
}
const { action, issue } = payload;
const event = {
  id: `${issue.id}:${action}`,
  type: `issues.${action}`,
  subject: `#${issue.number}`,
  summary: [...issue.title].slice(0, 200).join(""),
  link: issue.html_url,
};
process.stdout.write(JSON.stringify(event) + "\n");
