#!/usr/bin/env node
// The website check of recipe website-check (issue 29): a `command` agent run by the rule's cron, in the recipe's work
// folder. It reads site.json there ({ url, expectStatus, timeoutSeconds }) and the run's context file, and keeps one
// incident per outage: the open notice of this rule titled "Website down: <url>" IS the incident.
//   down, no open incident  → a notice (the incident) + event site.down (an agent may investigate it)
//   down, incident open     → nothing (quiet while failing)
//   up, incident open       → resolve it + event site.recovered
//   up, no incident         → nothing
// A notice the owner closed while the site is still down is no incident: the next check reports again.
// Its last message is the receipt (protocol.md 回执), on stdout.
import { readFileSync } from "node:fs";

const config = JSON.parse(readFileSync("site.json", "utf8"));
const url = String(config.url);
const expectStatus = Number(config.expectStatus ?? 200);
const timeoutMs = 1000 * Number(config.timeoutSeconds ?? 10);
const context = JSON.parse(readFileSync(process.env.AGENT_AUTOLOOP_CONTEXT, "utf8"));
const title = `Website down: ${url}`.slice(0, 200);
const incident = context.open.find((c) => c.title === title);
const now = new Date().toISOString();

let problem = null;
try {
  const res = await fetch(url, { redirect: "follow", signal: AbortSignal.timeout(timeoutMs) });
  await res.arrayBuffer();
  if (res.status !== expectStatus) problem = `answered ${res.status}, expected ${expectStatus}`;
} catch (e) {
  problem = e.name === "TimeoutError" ? `no answer within ${timeoutMs / 1000} s` : `unreachable (${e.cause?.code ?? e.message})`;
}

/** Prints the last message: a first line and, when there is something for the hub to do, the receipt block. */
function finish(line, receipt) {
  const block = receipt ? `\n\`\`\`agent-autoloop\n${JSON.stringify(receipt)}\n\`\`\`` : "";
  process.stdout.write(`${line}${block}\n`);
}

const id = now.replace(/[^0-9]/g, "").slice(0, 14);
if (problem && !incident) {
  finish(`Website down: ${url} ${problem}`, {
    notice: [{ title, text: `${url} ${problem} (checked ${now}). This card closes by itself when it answers again.`, key: "site-down" }],
    events: [{ id: `site-down:${id}`, type: "site.down", subject: "website", summary: `${url} ${problem}`.slice(0, 200) }],
  });
} else if (problem) {
  finish(`Nothing to do: ${url} still down (${problem}); card ${incident.card} is open`);
} else if (incident) {
  finish(`Website back up: ${url}`, {
    resolve: [{ card: incident.card, reason: `${url} answered ${expectStatus} at ${now}` }],
    events: [{ id: `site-recovered:${id}`, type: "site.recovered", subject: "website", summary: `${url} answered ${expectStatus} again` }],
  });
} else {
  finish(`Nothing to do: ${url} answers ${expectStatus}`);
}
