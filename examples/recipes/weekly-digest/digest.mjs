#!/usr/bin/env node
// The digest step of recipe weekly-digest (issue 29): a `command` agent in the recipe's work folder, woken by the
// digest.snapshot event the collect step emitted. It uses exactly the snapshot the event names, and only while that
// snapshot is still the latest: an old event (a newer collect ran since) never writes a digest from newer data. When
// events of two collects joined one queued run, the newest of them is the one it uses.
// The digest (digests/<week>.md) lists who submitted, who did not, and — apart, never as "not submitted" — how many
// reports the collecting token could not see. It ends with a for-your-information notice.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";

const context = JSON.parse(readFileSync(process.env.AGENT_AUTOLOOP_CONTEXT, "utf8"));
const event = [...context.events].reverse().find((e) => e.type === "digest.snapshot" && e.id.startsWith("snapshot:"));
if (!event) {
  process.stdout.write("Nothing to do: no snapshot event in this run\n");
  process.exit(0);
}
const id = event.id.slice("snapshot:".length);
const latest = existsSync("snapshots/latest.json") ? JSON.parse(readFileSync("snapshots/latest.json", "utf8")).id : null;
if (id !== latest || !/^[0-9]{4}-W[0-9]{2}-[0-9a-f]{12}$/.test(id)) {
  process.stdout.write(`Nothing to do: snapshot ${id} is not the latest (${latest ?? "none"}); an old event never uses newer data\n`);
  process.exit(0);
}
const { week, members } = JSON.parse(readFileSync(`snapshots/${id}.json`, "utf8"));
const visible = members.filter((m) => m.visible);
const submitted = visible.filter((m) => m.submitted);
const missing = visible.filter((m) => !m.submitted);
const hidden = members.length - visible.length;
const lines = [
  `# Weekly digest ${week}`, "", `From snapshot ${id}.`, "",
  `## Submitted (${submitted.length})`, "", ...submitted.map((m) => `- ${m.name}${m.summary ? `: ${m.summary}` : ""}`), "",
  `## Not submitted (${missing.length})`, "", ...missing.map((m) => `- ${m.name}`), "",
];
if (hidden > 0) lines.push(`## Not visible to you (${hidden})`, "", "Their reports could not be read with this token; they are not counted as not submitted.", "");
mkdirSync("digests", { recursive: true });
writeFileSync(`digests/${week}.md`, lines.join("\n"));
const summary = `${submitted.length} submitted, ${missing.length} not submitted${hidden ? `, ${hidden} not visible` : ""}`;
process.stdout.write(`Weekly digest ${week}: ${summary}\n\`\`\`agent-autoloop\n${JSON.stringify({
  notice: [{ title: `Weekly digest ${week}`, text: `${summary}. The digest: digests/${week}.md in ${process.cwd()}`, key: `weekly-digest-${week}`, fyi: true }],
})}\n\`\`\`\n`);
